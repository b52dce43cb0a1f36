// The cashier's HTML forms, read and checked. Registration fields use the very rules of the
// session call (fields.ts: the dictionary, and CASHIER_FIELDS where init-* differs), so what a
// customer may type is what a merchant may send. Errors are collected for every field at once,
// as text keys for the page to show next to each field.
import { CardData, expiryInFuture, luhnValid, parseExpiry } from '../domain/cards.js';
import { minorUnitExponent } from '../domain/money.js';
import type { CustomerData, CustomerField } from '../operations/cashier-session.js';
import type { PaymentChoice } from '../operations/cashier-payment.js';
import type { FieldErrors } from '../pages/cashier/pages.js';
import type { TextKey } from '../pages/cashier/text.js';
import { bodySchema, CASHIER_FIELDS } from './fields.js';
import { BIC_PATTERN, EMAIL_PATTERN, normalizeIban, validIban } from '../domain/payee.js';

type Check = (value: string) => boolean;

function checkOf(schema: { parse(body: Readonly<Record<string, unknown>>): { ok: boolean } }, name: string): Check {
  return (value) => schema.parse({ [name]: value }).ok;
}

const CUSTOMER_CHECKS: Readonly<Record<CustomerField, Check>> = {
  first_name: checkOf(bodySchema({ first_name: 'required' }), 'first_name'),
  last_name: checkOf(bodySchema({ last_name: 'required' }), 'last_name'),
  dob: checkOf(bodySchema({ dob: 'required' }), 'dob'),
  email: checkOf(bodySchema({ email: 'required' }), 'email'),
  phone: checkOf(bodySchema({ phone: 'required' }), 'phone'),
  address: checkOf(bodySchema({ address: 'required' }), 'address'),
  city: checkOf(bodySchema({ city: 'required' }), 'city'),
  state: checkOf(bodySchema({}, { state: CASHIER_FIELDS.state }), 'state'),
  zip: checkOf(bodySchema({ zip: 'required' }), 'zip'),
};
/** init-pay-in takes a phone of at least 9 digits (spec §2.1). */
const PHONE_PAY_IN = checkOf(bodySchema({}, { phone: CASHIER_FIELDS.phone_pay_in }), 'phone');

export type FormResult<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly errors: FieldErrors; readonly values: Record<string, string> };

function text(form: Readonly<Record<string, unknown>>, name: string): string {
  const value = form[name];
  return typeof value === 'string' ? value.trim() : '';
}

/** The registration form: each asked field is required (state is optional), checked by the session call's rules. */
export function readRegistration(
  form: Readonly<Record<string, unknown>>,
  asked: readonly CustomerField[],
  session_kind: string,
): FormResult<CustomerData> {
  const values: Record<string, string> = {};
  const errors: Record<string, TextKey> = {};
  for (const field of asked) {
    let value = text(form, field);
    if (field === 'phone') value = value.replace(/[\s()+.-]/g, '');
    values[field] = value;
    if (value === '') {
      if (field !== 'state') errors[field] = 'required';
      continue;
    }
    const check = field === 'phone' && session_kind === 'pay_in' ? PHONE_PAY_IN : CUSTOMER_CHECKS[field];
    if (!check(value)) errors[field] = 'invalid';
  }
  if (Object.keys(errors).length > 0) return { ok: false, errors, values };
  const entered: CustomerData = {};
  for (const [field, value] of Object.entries(values)) if (value !== '') entered[field as CustomerField] = value;
  return { ok: true, value: entered };
}

/** "25", "25.5", "25.50", "25,50" in the currency's own minor unit; null when it is not an amount. */
export function parseAmount(text_value: string, currency: string): number | null {
  const exponent = minorUnitExponent(currency);
  const match = /^(\d{1,15})(?:[.,](\d+))?$/.exec(text_value.replace(/\s/g, ''));
  if (!match) return null;
  const fraction = match[2] ?? '';
  if (fraction.length > exponent) return null;
  const minor = Number(match[1]) * 10 ** exponent + Number(fraction.padEnd(exponent, '0') || '0');
  return Number.isSafeInteger(minor) && minor > 0 ? minor : null;
}

export interface PaymentForm {
  readonly amount_minor: number;
  readonly choice: PaymentChoice;
}

export interface PaymentFormRules {
  readonly currency: string;
  /** The order's exact amount; null when the customer types one. */
  readonly fixed_amount_minor: number | null;
  /** Withdrawals: at most this much. */
  readonly max_minor: number | null;
  readonly method: string;
  /** A sale needs the CVV; a payout does not ask for it. */
  readonly payout: boolean;
  /** false: a deposit's wallet account is given on the wallet's own page, not in this form (CashierTexts.wallet_account_asked). */
  readonly wallet_account_asked: boolean;
  readonly now_ms: number;
}

export function readPaymentForm(form: Readonly<Record<string, unknown>>, rules: PaymentFormRules): FormResult<PaymentForm> {
  const errors: Record<string, TextKey> = {};
  // Only the amount and the payee's fields are written back into the form; card data never are.
  const values: Record<string, string> = {};
  let amount_minor = rules.fixed_amount_minor;
  if (amount_minor === null) {
    const typed = text(form, 'amount');
    values.amount = typed.slice(0, 20);
    const parsed = typed === '' ? null : parseAmount(typed, rules.currency);
    if (typed === '') errors.amount = 'required';
    else if (parsed === null) errors.amount = 'invalid_amount';
    else if (rules.max_minor !== null && parsed > rules.max_minor) errors.amount = 'over_balance';
    amount_minor = parsed;
  }
  let choice: PaymentChoice | null = null;
  if (rules.method === 'ewallet' && !rules.wallet_account_asked && !rules.payout) {
    choice = { method: 'ewallet', wallet_id: '' };
  } else if (rules.method === 'paypal') {
    // A payout to a PayPal account: the e-mail its owner logs in with.
    const email = text(form, 'paypal_email');
    values.paypal_email = email.slice(0, 127);
    if (email === '') errors.paypal_email = 'required';
    else if (email.length > 127 || !EMAIL_PATTERN.test(email)) errors.paypal_email = 'invalid_email';
    else choice = { method: 'paypal', payee: { method: 'paypal', email } };
  } else if (rules.method === 'bank_account') {
    // A payout to a bank account: the IBAN as typed (spaces allowed), its holder, the BIC if the customer knows it.
    const iban = normalizeIban(text(form, 'iban'));
    const owner_name = text(form, 'owner_name').trim();
    const bic = text(form, 'bic').replace(/\s/g, '').toUpperCase();
    values.iban = iban.slice(0, 34);
    values.owner_name = owner_name.slice(0, 70);
    values.bic = bic.slice(0, 11);
    if (iban === '') errors.iban = 'required';
    else if (!validIban(iban)) errors.iban = 'invalid_iban';
    if (owner_name === '') errors.owner_name = 'required';
    else if (owner_name.length > 70) errors.owner_name = 'invalid';
    if (bic !== '' && !BIC_PATTERN.test(bic)) errors.bic = 'invalid_bic';
    if (errors.iban === undefined && errors.owner_name === undefined && errors.bic === undefined)
      choice = { method: 'bank_account', payee: { method: 'bank_account', iban, owner_name, bic: bic === '' ? null : bic } };
  } else if (rules.method === 'ewallet') {
    const wallet_id = text(form, 'wallet_id');
    values.wallet_id = wallet_id.slice(0, 34);
    if (wallet_id === '') errors.wallet_id = 'required';
    else if (!/^[A-Za-z0-9]{1,34}$/.test(wallet_id)) errors.wallet_id = 'invalid_wallet';
    else choice = { method: 'ewallet', wallet_id };
  } else {
    const pan = text(form, 'card_number').replace(/[\s-]/g, '');
    const exp_text = text(form, 'card_exp').replace(/\s/g, '');
    const expiry = parseExpiry(/^\d{4}$/.test(exp_text) ? `${exp_text.slice(0, 2)}/${exp_text.slice(2)}` : exp_text);
    const cvv = text(form, 'cvv');
    if (pan === '') errors.card_number = 'required';
    else if (!/^\d{12,19}$/.test(pan) || !luhnValid(pan)) errors.card_number = 'invalid_card_number';
    if (exp_text === '') errors.card_exp = 'required';
    else if (!expiry || !expiryInFuture(expiry, rules.now_ms)) errors.card_exp = 'invalid_card_exp';
    if (!rules.payout) {
      if (cvv === '') errors.cvv = 'required';
      else if (!/^\d{3,4}$/.test(cvv)) errors.cvv = 'invalid_cvv';
    }
    if (Object.keys(errors).length === 0 && expiry) choice = { method: 'card', card: new CardData(pan, expiry, rules.payout ? null : cvv) };
  }
  if (Object.keys(errors).length > 0 || choice === null || amount_minor === null) return { ok: false, errors, values };
  return { ok: true, value: { amount_minor, choice } };
}
