// Currencies the gateway knows and their minor-unit exponent (ISO 4217). Amounts are always
// integers in the currency's own minor unit: 1999 USD is 19.99, 1999 JPY is 1999 yen,
// 1999 BHD is 1.999 dinar. Nothing is ever multiplied by 100 here.
const EXPONENTS: Readonly<Record<string, number>> = {
  USD: 2,
  EUR: 2,
  GBP: 2,
  CAD: 2,
  AUD: 2,
  NZD: 2,
  CHF: 2,
  SEK: 2,
  NOK: 2,
  DKK: 2,
  PLN: 2,
  CZK: 2,
  HUF: 2,
  RON: 2,
  BGN: 2,
  TRY: 2,
  BRL: 2,
  MXN: 2,
  ARS: 2,
  COP: 2,
  PEN: 2,
  INR: 2,
  CNY: 2,
  HKD: 2,
  SGD: 2,
  MYR: 2,
  THB: 2,
  PHP: 2,
  IDR: 2,
  ZAR: 2,
  NGN: 2,
  KES: 2,
  EGP: 2,
  MAD: 2,
  AED: 2,
  SAR: 2,
  QAR: 2,
  ILS: 2,
  UAH: 2,
  KZT: 2,
  GEL: 2,
  RUB: 2,
  TWD: 2,
  JPY: 0,
  KRW: 0,
  VND: 0,
  CLP: 0,
  ISK: 0,
  UGX: 0,
  XAF: 0,
  XOF: 0,
  PYG: 0,
  BHD: 3,
  IQD: 3,
  JOD: 3,
  KWD: 3,
  LYD: 3,
  OMR: 3,
  TND: 3,
};

export function isKnownCurrency(code: string): boolean {
  return Object.prototype.hasOwnProperty.call(EXPONENTS, code);
}

export function minorUnitExponent(code: string): number {
  const exponent = EXPONENTS[code];
  if (exponent === undefined) throw new Error(`unknown currency ${code}`);
  return exponent;
}

/** For pages: 1999 USD -> "19.99 USD", 1999 BHD -> "1.999 BHD". */
export function formatAmount(amount_minor: number, currency: string): string {
  const exponent = minorUnitExponent(currency);
  if (exponent === 0) return `${amount_minor} ${currency}`;
  const text = String(amount_minor).padStart(exponent + 1, '0');
  return `${text.slice(0, -exponent)}.${text.slice(-exponent)} ${currency}`;
}

/**
 * What a person types into a page ("12.5", "12.50", "1,999.00" is refused): a decimal in the
 * currency's major unit with at most its exponent's decimals, as minor units; null when it is not
 * one, or not above zero, or above Number.MAX_SAFE_INTEGER minor units.
 */
export function parseMajorAmount(text: string, currency: string): number | null {
  const exponent = minorUnitExponent(currency);
  const match = /^\s*([0-9]{1,16})(?:\.([0-9]+))?\s*$/.exec(text);
  if (match === null) return null;
  const fraction = match[2] ?? '';
  if (fraction.length > exponent) return null;
  const minor = Number(match[1]! + fraction.padEnd(exponent, '0'));
  return Number.isSafeInteger(minor) && minor > 0 ? minor : null;
}
