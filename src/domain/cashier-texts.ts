// What a connector adds to the hosted cashier's own texts (the sandbox's test hints): declared in the
// domain because connectors give it and the cashier's pages show it, and neither imports the other.
/** What the hosted cashier shows for a connector besides its own texts (the sandbox's test hints). */
export interface CashierTexts {
  /** The name of the e-wallet method. */
  ewallet_label(language: string): string;
  /** A line under the payment form (card payments, or payouts): how to reach each outcome. */
  form_note(kind: 'card' | 'payout', language: string, currency: string): string;
  /**
   * false: the customer logs in on the wallet's own page (PayPal's approval), so the cashier asks
   * no wallet account for a deposit; absent or true: the form asks for it (the sandbox's wallet).
   */
  readonly wallet_account_asked?: boolean;
}
