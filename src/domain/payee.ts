// Who a direct payout from the hosted cashier pays, as the customer types it (issue 27: "the payout
// session offers PayPal or bank accounts"): an e-wallet id (the sandbox's wallet), a PayPal
// account's e-mail, or a bank account (IBAN, holder, optional BIC). A connector turns a payee into
// its own data_ fields (Connector.direct.payee), so the cashier never knows a processor's field
// names, and the API's direct payouts keep sending data_ fields as before.

/** The direct payout methods the cashier offers, in the order it lists them. */
export const CASHIER_PAYOUT_METHODS = ['paypal', 'bank_account', 'ewallet'] as const;
export type CashierPayoutMethod = (typeof CASHIER_PAYOUT_METHODS)[number];

export type CashierPayee =
  | { readonly method: 'ewallet'; readonly wallet_id: string }
  | { readonly method: 'paypal'; readonly email: string }
  | { readonly method: 'bank_account'; readonly iban: string; readonly owner_name: string; readonly bic: string | null };

/** What the cashier knows of the customer that a processor may also want with a payout (Adyen: e-mail, date of birth). */
export interface PayeeHolder {
  readonly email: string | null;
  /** YYYY-MM-DD, as the API takes dob. */
  readonly dob: string | null;
  /** The session's country, ISO 3166-1 alpha-2. */
  readonly country: string;
}

/** What a connector that makes direct payouts says of payees: the methods it pays to and the data_ fields of one. */
export interface PayeeMapping {
  readonly methods: readonly CashierPayoutMethod[];
  /** The data_ fields of a payout to `payee` (a method of `methods`), checked afterwards by the connector's own `check`. */
  data(payee: CashierPayee, holder: PayeeHolder): Record<string, string>;
}

export const IBAN_PATTERN = /^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$/;

/** An IBAN: country, check digits, up to 30 letters and digits; its check digits must verify (ISO 13616 mod 97). */
export function validIban(iban: string): boolean {
  if (!IBAN_PATTERN.test(iban)) return false;
  const moved = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const c of moved) {
    const digits = c >= 'A' ? String(c.charCodeAt(0) - 55) : c;
    for (const d of digits) remainder = (remainder * 10 + Number(d)) % 97;
  }
  return remainder === 1;
}

/** A typed IBAN as a customer writes it ("nl91 abna 0417 1643 00") in its electronic form. */
export function normalizeIban(typed: string): string {
  return typed.replace(/[\s-]/g, '').toUpperCase();
}

export const BIC_PATTERN = /^[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?$/;
/** A plain e-mail address check: something@something.tld, no spaces; the processor has the last word. */
export const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
