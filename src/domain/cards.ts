// Card rules: Luhn, expiry, brand, and masking. A PAN only ever leaves this process masked
// (first 6, asterisks, last 4) except sealed by the vault.

export function luhnValid(pan: string): boolean {
  if (!/^\d{12,19}$/.test(pan)) return false;
  let sum = 0;
  let double = false;
  for (let i = pan.length - 1; i >= 0; i -= 1) {
    let digit = pan.charCodeAt(i) - 48;
    if (double) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
    double = !double;
  }
  return sum % 10 === 0;
}

export function maskPan(pan: string): string {
  if (pan.length < 10) return '*'.repeat(pan.length);
  return pan.slice(0, 6) + '*'.repeat(pan.length - 10) + pan.slice(-4);
}

export interface CardExpiry {
  readonly month: number;
  readonly year: number;
}

/** MM/YYYY as the spec writes it; MM/YY is accepted too because card forms send it. */
export function parseExpiry(text: string): CardExpiry | null {
  const match = /^(\d{2})\/(\d{2}|\d{4})$/.exec(text);
  if (!match) return null;
  const month = Number(match[1]);
  const year = match[2]!.length === 2 ? 2000 + Number(match[2]) : Number(match[2]);
  if (month < 1 || month > 12) return null;
  return { month, year };
}

export function formatExpiry(expiry: CardExpiry): string {
  return `${String(expiry.month).padStart(2, '0')}/${expiry.year}`;
}

/** A card is valid through the last day of its expiry month (UTC). */
export function expiryInFuture(expiry: CardExpiry, now_ms: number): boolean {
  const first_of_next_month_ms = Date.UTC(expiry.year, expiry.month, 1);
  return now_ms < first_of_next_month_ms;
}

export const CARD_BRANDS = ['AMEX', 'DinersClub', 'Discover', 'Electron', 'JCB', 'Maestro', 'MasterCard', 'Mir', 'VISA'] as const;
export type CardBrand = (typeof CARD_BRANDS)[number];

const BRAND_RULES: readonly [RegExp, CardBrand][] = [
  [/^(4026|417500|4508|4844|4913|4917)/, 'Electron'],
  [/^4/, 'VISA'],
  [/^(5[1-5]|222[1-9]|22[3-9]|2[3-6]|27[01]|2720)/, 'MasterCard'],
  [/^3[47]/, 'AMEX'],
  [/^(36|30[0-5]|309|38|39)/, 'DinersClub'],
  [/^(6011|65|64[4-9])/, 'Discover'],
  [/^35(2[89]|[3-8])/, 'JCB'],
  [/^220[0-4]/, 'Mir'],
  [/^(5018|5020|5038|56|57|58|6304|6759|676[1-3])/, 'Maestro'],
];

export function cardBrand(pan: string): CardBrand | null {
  for (const [pattern, brand] of BRAND_RULES) if (pattern.test(pan)) return brand;
  return null;
}

/**
 * Card data held in memory during one request. toJSON and inspect are masked, so an
 * accidental log line or JSON.stringify never prints the PAN or CVV.
 */
export class CardData {
  readonly #pan: string;
  readonly #cvv: string | null;
  constructor(
    pan: string,
    readonly expiry: CardExpiry,
    cvv: string | null,
  ) {
    this.#pan = pan;
    this.#cvv = cvv;
  }
  get pan(): string {
    return this.#pan;
  }
  get cvv(): string | null {
    return this.#cvv;
  }
  get masked(): string {
    return maskPan(this.#pan);
  }
  toJSON(): string {
    return this.masked;
  }
  toString(): string {
    return this.masked;
  }
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `CardData(${this.masked})`;
  }
}
