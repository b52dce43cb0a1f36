// What the hosted cashier says about the sandbox, per language: the name of its e-wallet, and
// under the payment form how to reach each outcome (decisions.md §7: CVV 333 asks for 3-D
// Secure, 000 is declined; a payout of 1400 minor units is declined). Live connectors say none of it.
import type { CashierTexts } from '../connector.js';
import { formatAmount } from '../../domain/money.js';

/** The sandbox's declining payout amount (decisions.md §7). */
const DECLINED_PAYOUT_MINOR = 1400;

const TEXTS: Readonly<Record<string, { ewallet: string; card: string; payout: (amount: string) => string }>> = {
  en: {
    ewallet: 'Sandbox e-wallet',
    card: 'Sandbox: CVV 333 asks for 3-D Secure, 000 is declined, any other CVV is approved. Test card: 4111 1111 1111 1111.',
    payout: (amount) => `Sandbox: an amount of ${amount} is declined, anything else is approved.`,
  },
  de: {
    ewallet: 'Sandbox-E-Wallet',
    card: 'Sandbox: CVV 333 verlangt 3-D Secure, 000 wird abgelehnt, jede andere CVV genehmigt. Testkarte: 4111 1111 1111 1111.',
    payout: (amount) => `Sandbox: Ein Betrag von ${amount} wird abgelehnt, jeder andere genehmigt.`,
  },
  es: {
    ewallet: 'Monedero electrónico (sandbox)',
    card: 'Sandbox: el CVV 333 pide 3-D Secure, 000 se rechaza, cualquier otro CVV se aprueba. Tarjeta de prueba: 4111 1111 1111 1111.',
    payout: (amount) => `Sandbox: un importe de ${amount} se rechaza, cualquier otro se aprueba.`,
  },
};

function textsOf(language: string) {
  return TEXTS[language] ?? TEXTS.en!;
}

export const SANDBOX_CASHIER_TEXTS: CashierTexts = {
  ewallet_label: (language) => textsOf(language).ewallet,
  form_note: (kind, language, currency) =>
    kind === 'card' ? textsOf(language).card : textsOf(language).payout(formatAmount(DECLINED_PAYOUT_MINOR, currency)),
};
