// What the hosted cashier says about PayPal: the e-wallet method is named PayPal, and the form asks
// no wallet account (the buyer logs in on PayPal's own approval page, where the gateway sends
// them); a line under the form says so. Per language, English for any other.
import type { CashierTexts } from '../connector.js';

const TEXTS: Readonly<Record<string, string>> = {
  en: "You approve the payment on PayPal's own page, then come back here.",
  de: 'Sie bestätigen die Zahlung auf der Seite von PayPal und kommen dann hierher zurück.',
  es: 'Aprueba el pago en la página de PayPal y vuelve aquí después.',
};

export const PAYPAL_CASHIER_TEXTS: CashierTexts = {
  ewallet_label: () => 'PayPal',
  form_note: (_kind, language) => TEXTS[language] ?? TEXTS.en!,
  wallet_account_asked: false,
};
