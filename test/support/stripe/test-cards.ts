// What Stripe's test mode does with a test card, as its documentation says, for the fake
// processor (fake.ts). Pure tables and functions, no state. Where the documentation is silent,
// the choice made is marked CHOSEN. Pages relied on (also listed in test/psp-specs/stripe/SOURCE.md):
// [testing]  https://docs.stripe.com/testing.md (read in a copy of the page as Markdown, 2025):
//            "Simulate a declined payment" (card, error code, decline code), "Trigger an error
//            with invalid data", "Simulate an asynchronous refund", "Test 3D Secure
//            authentication" (Authentication and setup; Support and availability), the brand and
//            country cards.
// [codes]    https://docs.stripe.com/error-codes.md and https://docs.stripe.com/declines/codes.md
//            (codes; the customer-facing messages are those Stripe's API returns for them)
// [offsess]  https://support.stripe.com/questions/manual-confirmation-for-off-session-payments-requiring-strong-customer-authentication-sca
//            (an off-session payment that needs authentication fails, the PaymentIntent goes back
//            to requires_payment_method with the authentication_required code)
import { luhnValid } from '../fake-processor/card-number.js';

/** A decline as Stripe reports it: a card_error with a code, maybe a decline code, a message. */
export interface Decline {
  readonly code: string;
  readonly decline_code: string | null;
  readonly message: string;
  /** The card field at fault (card_error `param`), when Stripe names one. */
  readonly param: string | null;
}

/** What 3-D Secure means for a card [testing "Support and availability"]. */
export type ThreeDsSupport = 'required' | 'supported' | 'not_supported' | 'frictionless' | 'unenrolled';

export type RefundBehaviour =
  /** Refunds succeed at once and stay so (every card but the two below) [testing]. */
  | 'instant'
  /** 4000000000007726: the refund starts `pending`, later `succeeded` (refund.updated). */
  | 'pending_then_succeeded'
  /** 4000000000005126: the refund starts `succeeded`, later `failed` (refund.failed), failure_reason expired_or_canceled_card. */
  | 'succeeded_then_failed';

export interface TestCard {
  readonly number: string;
  readonly description: string;
  /** On-session (the customer is there): approve, decline, or ask for authentication. */
  readonly on_session: 'approve' | Decline | 'authenticate';
  /** After the customer completes authentication (only for on_session 'authenticate'). */
  readonly after_authentication: 'approve' | Decline;
  /** off_session=true (a merchant-initiated charge; nobody can authenticate). */
  readonly off_session: 'approve' | Decline;
  readonly three_ds: ThreeDsSupport;
  readonly refund: RefundBehaviour;
  readonly country: string;
  readonly funding: 'credit' | 'debit' | 'prepaid';
}

const msg = {
  declined: 'Your card was declined.',
  insufficient: 'Your card has insufficient funds.',
  expired: 'Your card has expired.',
  incorrect_cvc: "Your card's security code is incorrect.",
  processing: 'An error occurred while processing your card. Try again in a little bit.',
  incorrect_number: 'Your card number is incorrect.',
  velocity: 'Your card was declined for making repeated attempts too frequently or exceeding its amount limit.',
  authentication: 'Your card was declined. This transaction requires authentication.',
  live_card:
    'Your card was declined. Your request was in test mode, but used a non test (live) card. For a list of valid test cards, visit: https://stripe.com/docs/testing.',
} as const;

function decline(code: string, decline_code: string | null, message: string, param: string | null = null): Decline {
  return { code, decline_code, message, param };
}

export const DECLINES = {
  generic: decline('card_declined', 'generic_decline', msg.declined),
  insufficient_funds: decline('card_declined', 'insufficient_funds', msg.insufficient),
  lost_card: decline('card_declined', 'lost_card', msg.declined),
  stolen_card: decline('card_declined', 'stolen_card', msg.declined),
  expired_card: decline('expired_card', null, msg.expired, 'exp_month'),
  incorrect_cvc: decline('incorrect_cvc', null, msg.incorrect_cvc, 'cvc'),
  processing_error: decline('processing_error', null, msg.processing),
  incorrect_number: decline('incorrect_number', null, msg.incorrect_number, 'number'),
  velocity: decline('card_declined', 'card_velocity_exceeded', msg.velocity),
  /** [offsess] [codes]: an off-session payment the card needs authentication for. */
  authentication_required: decline('authentication_required', 'authentication_required', msg.authentication),
  /** CHOSEN from Stripe's behaviour (not on the testing page): test mode refuses a number that is no test card. */
  live_card: decline('card_declined', 'test_mode_live_card', msg.live_card),
} as const;

/** The customer failed (or the page was told to fail) 3-D Secure: last_payment_error of the PaymentIntent [codes]. */
export const AUTHENTICATION_FAILURE = {
  type: 'invalid_request_error',
  code: 'payment_intent_authentication_failure',
  message:
    'The provided PaymentMethod has failed authentication. You can provide payment_method_data or a new PaymentMethod to attempt to fulfill this PaymentIntent again.',
} as const;

function card(number: string, description: string, rest: Partial<Omit<TestCard, 'number' | 'description'>> = {}): TestCard {
  return {
    number,
    description,
    on_session: 'approve',
    after_authentication: 'approve',
    off_session: rest.on_session === undefined || rest.on_session === 'authenticate' ? 'approve' : rest.on_session,
    three_ds: 'unenrolled',
    refund: 'instant',
    country: 'US',
    funding: 'credit',
    ...rest,
  };
}

/** The test cards the fake knows, by number. Any other number is declined as a live card (CHOSEN). */
export const TEST_CARDS: ReadonlyMap<string, TestCard> = new Map(
  [
    // Brands [testing "Simulate a payment by card brand"]: all succeed.
    card('4242424242424242', 'Visa', { three_ds: 'unenrolled' }),
    card('4000056655665556', 'Visa (debit)', { funding: 'debit' }),
    card('5555555555554444', 'Mastercard'),
    card('2223003122003222', 'Mastercard (2-series)'),
    card('5200828282828210', 'Mastercard (debit)', { funding: 'debit' }),
    card('5105105105105100', 'Mastercard (prepaid)', { funding: 'prepaid' }),
    card('378282246310005', 'American Express', { three_ds: 'not_supported' }),
    card('371449635398431', 'American Express'),
    card('6011111111111117', 'Discover'),
    card('6011000990139424', 'Discover'),
    card('3056930009020004', 'Diners Club'),
    card('36227206271667', 'Diners Club (14-digit card)'),
    card('3566002020360505', 'JCB', { country: 'JP' }),
    card('6200000000000005', 'UnionPay', { country: 'CN' }),
    // Countries [testing "Simulate a payment by country"] (a few): succeed without authentication.
    card('4000008260000000', 'United Kingdom (GB) Visa', { country: 'GB' }),
    card('4000002760000016', 'Germany (DE) Visa', { country: 'DE' }),
    card('4000002500000003', 'France (FR) Visa', { country: 'FR' }),
    card('4000003720000005', 'Ireland (IE) Visa', { country: 'IE' }),
    card('4000005280000002', 'Netherlands (NL) Visa', { country: 'NL' }),
    card('4000007240000007', 'Spain (ES) Visa', { country: 'ES' }),
    card('4000003800000008', 'Italy (IT) Visa', { country: 'IT' }),
    // Declines [testing "Simulate a declined payment"].
    card('4000000000000002', 'Generic decline', { on_session: DECLINES.generic }),
    card('4000000000009995', 'Insufficient funds decline', { on_session: DECLINES.insufficient_funds }),
    card('4000000000009987', 'Lost card decline', { on_session: DECLINES.lost_card }),
    card('4000000000009979', 'Stolen card decline', { on_session: DECLINES.stolen_card }),
    card('4000000000000069', 'Expired card decline', { on_session: DECLINES.expired_card }),
    card('4000000000000127', 'Incorrect CVC decline', { on_session: DECLINES.incorrect_cvc }),
    card('4000000000000119', 'Processing error decline', { on_session: DECLINES.processing_error }),
    card('4242424242424241', 'Incorrect number decline', { on_session: DECLINES.incorrect_number }),
    card('4000000000006975', 'Exceeding velocity limit decline', { on_session: DECLINES.velocity }),
    // Refunds [testing "Simulate an asynchronous refund"].
    card('4000000000007726', 'Asynchronous refund success', { refund: 'pending_then_succeeded' }),
    card('4000000000005126', 'Asynchronous refund failure', { refund: 'succeeded_then_failed' }),
    // 3-D Secure [testing "Authentication and setup", "Support and availability"]. The fake has
    // no saved cards, so "unless set up" cards always need authentication off-session.
    card('4000000000003220', '3DS Required, OK (IE)', {
      on_session: 'authenticate',
      off_session: DECLINES.authentication_required,
      three_ds: 'required',
      country: 'IE',
    }),
    card('4000008400000027', '3DS Required, OK (US)', {
      on_session: 'authenticate',
      off_session: DECLINES.authentication_required,
      three_ds: 'required',
    }),
    card('4000002760003184', 'Always authenticate', {
      on_session: 'authenticate',
      off_session: DECLINES.authentication_required,
      three_ds: 'required',
      country: 'DE',
    }),
    card('4000002500003155', 'Authenticate unless set up', {
      on_session: 'authenticate',
      off_session: DECLINES.authentication_required,
      three_ds: 'required',
      country: 'FR',
    }),
    card('4000003800000446', 'Already set up (off-session succeeds)', {
      on_session: 'authenticate',
      off_session: 'approve',
      three_ds: 'required',
      country: 'IT',
    }),
    // CHOSEN: off-session, "declined with insufficient_funds … even after … previously set up".
    card('4000008260003178', 'Authentication, then insufficient funds', {
      on_session: 'authenticate',
      after_authentication: DECLINES.insufficient_funds,
      off_session: DECLINES.insufficient_funds,
      three_ds: 'required',
      country: 'GB',
    }),
    // CHOSEN: the decline after authentication is a generic one (the page says "card_declined failure code").
    card('4000008400001629', '3DS Required, declined after authentication', {
      on_session: 'authenticate',
      after_authentication: DECLINES.generic,
      off_session: DECLINES.authentication_required,
      three_ds: 'required',
    }),
    card('4000000000003055', '3DS Supported, not required', { three_ds: 'supported' }),
    // CHOSEN: a frictionless authentication needs no customer, so an off-session payment succeeds too.
    card('4000000032200000', '3DS frictionless flow', { three_ds: 'frictionless' }),
  ].map((c) => [c.number, c]),
);

/** The card the fake answers for a number (a declining "live card" for numbers that are no test card). */
export function testCardFor(number: string): TestCard {
  return TEST_CARDS.get(number) ?? card(number, 'not a test card', { on_session: DECLINES.live_card });
}

/** The Luhn check the fake applies to card numbers (incorrect_number when it fails). */
export { luhnValid };

/** The card brand as Stripe names it (payment_method.card.brand). */
export function brandOf(number: string): string {
  if (/^4/.test(number)) return 'visa';
  if (/^(5[1-5]|2(2[2-9][1-9]|2[3-9]\d|[3-6]\d\d|7[01]\d|720))/.test(number)) return 'mastercard';
  if (/^3[47]/.test(number)) return 'amex';
  if (/^(6011|65|64[4-9])/.test(number)) return 'discover';
  if (/^(36|30[0-5]|38|39)/.test(number)) return 'diners';
  if (/^35/.test(number)) return 'jcb';
  if (/^62/.test(number)) return 'unionpay';
  return 'unknown';
}

/**
 * Errors of card data Stripe refuses before any payment attempt [testing "Trigger an error with
 * invalid data"]: a number failing the Luhn check, a month outside 1–12, a year in the past, a CVC
 * that is not 3 or 4 digits. Null when the data is acceptable.
 */
export function invalidCardData(
  input: { readonly number: string; readonly exp_month: number; readonly exp_year: number; readonly cvc: string | null },
  now: Date = new Date(),
): Decline | null {
  if (!luhnValid(input.number)) return DECLINES.incorrect_number;
  if (!Number.isInteger(input.exp_month) || input.exp_month < 1 || input.exp_month > 12)
    return decline('invalid_expiry_month', null, "Your card's expiration month is invalid.", 'exp_month');
  // Two-digit years are read as 20xx, as Stripe does.
  const year = input.exp_year < 100 ? 2000 + input.exp_year : input.exp_year;
  if (!Number.isInteger(year) || year < now.getUTCFullYear() || year > now.getUTCFullYear() + 50)
    return decline('invalid_expiry_year', null, "Your card's expiration year is invalid.", 'exp_year');
  if (year === now.getUTCFullYear() && input.exp_month < now.getUTCMonth() + 1)
    return decline('invalid_expiry_month', null, "Your card's expiration month is invalid.", 'exp_month');
  if (input.cvc !== null && !/^\d{3,4}$/.test(input.cvc))
    return decline('invalid_cvc', null, "Your card's security code is invalid.", 'cvc');
  return null;
}

/** Stripe's documentation page for an error code, as error objects carry it in doc_url. */
export function docUrl(code: string): string {
  return `https://stripe.com/docs/error-codes/${code.replace(/_/g, '-')}`;
}

/** A charge's outcome.seller_message for a decline [codes]. */
export function sellerMessage(d: Decline): string {
  const reason = d.decline_code ?? d.code;
  return reason === 'generic_decline' || reason === 'card_declined'
    ? 'The bank did not return any further details with this decline.'
    : `The bank returned the decline code \`${reason}\`.`;
}

/** Smallest amounts Stripe charges, in minor units, for a few currencies (https://docs.stripe.com/currencies#minimum-and-maximum-charge-amounts). */
export const MINIMUM_AMOUNTS: Readonly<Record<string, number>> = {
  usd: 50,
  eur: 50,
  gbp: 30,
  cad: 50,
  aud: 50,
  chf: 50,
  jpy: 50,
  sek: 300,
  nok: 300,
  dkk: 250,
  pln: 200,
  czk: 1500,
  hkd: 400,
  sgd: 50,
  nzd: 50,
  mxn: 1000,
};
/** "The amount value supports up to eight digits" (the description, POST /v1/payment_intents amount). */
export const MAXIMUM_AMOUNT = 99_999_999;
/** Currencies with no minor unit (https://docs.stripe.com/currencies#zero-decimal), for amounts in messages. */
export const ZERO_DECIMAL_CURRENCIES: ReadonlySet<string> = new Set([
  'bif',
  'clp',
  'djf',
  'gnf',
  'jpy',
  'kmf',
  'krw',
  'mga',
  'pyg',
  'rwf',
  'ugx',
  'vnd',
  'vuv',
  'xaf',
  'xof',
  'xpf',
]);

/** An amount as Stripe's messages show it: "$20.00" for usd, "20.00 EUR" otherwise (CHOSEN for non-usd). */
export function formatAmount(amount: number, currency: string): string {
  const major = ZERO_DECIMAL_CURRENCIES.has(currency) ? String(amount) : (amount / 100).toFixed(2);
  return currency === 'usd' ? `$${major}` : `${major} ${currency.toUpperCase()}`;
}
