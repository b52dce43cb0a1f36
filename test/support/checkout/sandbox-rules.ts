// What Checkout.com's sandbox does with a test card or amount, as its documentation says, for the
// fake processor (fake.ts). Pure functions and tables, no state. Where the documentation is
// silent, the choice made is marked CHOSEN. Pages relied on (also listed in
// test/psp-specs/checkout.com/SOURCE.md):
// [cards]    https://www.checkout.com/docs/developer-resources/testing/test-cards (versions of
//            2023-07 and 2024-07; card numbers of the 30041/30043 rows and of the payout, 3DS and
//            non-3DS cards read from a transcription of the same page, as the stored copies of the
//            page lost those cells)
// [amounts]  https://www.checkout.com/docs/previous/testing/response-code-testing ("Response code
//            testing": amounts like xxx05 trigger response codes; amounts read from transcriptions
//            of that table, since the stored copy lost the amount column)
// [codes]    https://www.checkout.com/docs/resources/codes/response-codes and
//            https://support.checkout.com/hc/en-us/articles/24416729620626 (response texts)
// [3ds]      the sandbox challenge simulator: password "Checkout1!", a password field and a
//            "Continue" button (form#form, input#password, #txtButton), as public end-to-end tests
//            against the sandbox drive it; Visa/Mastercard test cards "default to 3DS 2.0
//            authentication" when 3DS is requested (https://checkoutdocs.readme.io/docs/testing)
import { createHash } from 'node:crypto';
import { luhnValid } from '../fake-processor/card-number.js';

/** The password the sandbox's 3-D Secure challenge accepts [3ds]. */
export const SANDBOX_3DS_PASSWORD = 'Checkout1!';

export const APPROVED = '10000';

/** response_code → response_summary [codes]. */
export const RESPONSE_SUMMARIES: Readonly<Record<string, string>> = {
  '10000': 'Approved',
  '20001': 'Refer to card issuer',
  '20005': 'Declined - Do not honour',
  '20012': 'Invalid transaction',
  '20014': 'Invalid card number',
  '20051': 'Insufficient funds',
  '20054': 'Expired card',
  '20057': 'Transaction not permitted to cardholder',
  '20059': 'Suspected fraud',
  '20061': 'Activity amount limit exceeded',
  '20062': 'Restricted card',
  '20063': 'Security violation',
  '20068': 'Response received too late / timeout',
  '20078': 'Blocked, first use - transaction from new cardholder, card not properly unblocked',
  '20087': 'Bad track data',
  '200N7': 'Decline for CVV2 failure',
  '200R1': 'Issuer initiated a stop payment (revocation order) for this authorization',
  '200R3': 'Issuer initiated a stop payment (revocation order) for all authorizations',
  '20150': 'Card not 3D Secure (3DS) enabled',
  '20151': 'Cardholder failed 3DS authentication',
  '20152': 'Initial 3DS transaction not completed within 15 minutes',
  '20154': '3DS authentication required',
  '30015': 'No such issuer',
  '30033': 'Expired card - Pick up',
  '30041': 'Lost card - Pick up',
  '30043': 'Stolen card - Pick up',
  '40101': 'Risk blocked transaction',
  '40108': 'Gateway reject - Post code failed',
};

export function summaryOf(code: string): string {
  return RESPONSE_SUMMARIES[code] ?? 'Declined';
}

/** Card numbers that answer a response code whatever the amount [cards]. */
export const DECLINE_CARDS: Readonly<Record<string, string>> = {
  '4111111111111129': '20001',
  '4024007103573027': '20012',
  '4485381577182090': '20014',
  '4544249167673670': '20051',
  '4724117215951699': '20054',
  '4897453568485113': '20059',
  '4556294593757189': '20061',
  '4818924250131070': '20062',
  '4556253752712245': '20063',
  '4095254802642505': '20068',
  '4532819413487978': '20078',
  '4734868958733862': '200N7',
  '4567361325981788': '200R3',
  '4500622868341387': '20154',
  '4024007162185267': '30015',
  '4941202060999329': '30041',
  '4658620059821613': '30041',
  '4539253655711767': '30043',
  '4745820750643143': '30043',
};

/** Amounts that trigger a response code: the last two digits ("xxx05") [amounts]. */
const AMOUNT_SUFFIX_CODES: Readonly<Record<string, string>> = {
  '05': '20005',
  '12': '20012',
  '14': '20014',
  '51': '20051',
  '54': '20087',
  '62': '20062',
  '63': '20063',
  '33': '30033',
};

/**
 * Whole amounts that trigger a response code [amounts]. CHOSEN: of that table only the rows whose
 * amount is unambiguous and not a common round test amount are honoured; 150, 5000, 5029 and 6900
 * (3DS enrolment and malfunction codes) are left out, so 50.00 stays an approved amount here.
 * 6510–6540 (20154, "3DS authentication required") apply only to a payment without 3-D Secure.
 */
const AMOUNT_EXACT_CODES: Readonly<Record<number, string>> = {
  9998: '20068',
  4001: '40101',
  4008: '40108',
  2011: '200R1',
  2013: '200R3',
};
const AMOUNTS_REQUIRING_3DS: readonly number[] = [6510, 6520, 6530, 6540];

/** Payout destination cards [cards, "Card payouts" table]; any other card is paid. */
export const PAYOUT_DECLINE_CARDS: Readonly<Record<string, string>> = {
  '4818192525595285': '20005',
  '4558473893020179': '20005',
  '4811553373235190': '20005',
  '4610179846730147': '20005',
  '4818192160565981': '20057',
  '4975992266555193': '20057',
  '4815649658513826': '20057',
  '4610174464118832': '20057',
};

/** How a card behaves when 3-D Secure is requested (or, for the forced ones, always) [cards]. */
export type ThreeDsBehaviour =
  /** The default for test cards: a challenge; the password decides. */
  | 'challenge'
  /** Documented "challenge, authentication successful" cards. CHOSEN: challenged even when the request did not ask for 3DS, as a risk rule would. */
  | 'challenge_forced'
  /** Documented "challenge, authentication rejected" cards: the challenge fails whatever the password. */
  | 'challenge_rejected'
  /** Documented "frictionless, authentication successful" cards: authenticated without a page. */
  | 'frictionless'
  /** Documented "card not enrolled" and non-3DS cards: 20150 unless `attempt_n3d` is true. */
  | 'not_enrolled';

const THREE_DS_CARDS: Readonly<Record<string, ThreeDsBehaviour>> = {
  '4010061700000021': 'challenge_forced',
  '5385308360135181': 'challenge_forced',
  '372688581899681': 'challenge_forced',
  '4150561000000019': 'challenge_rejected',
  '375982239796002': 'challenge_rejected',
  '4485040371536584': 'frictionless',
  '5588686116426417': 'frictionless',
  '345678901234564': 'frictionless',
  '4484070000035519': 'not_enrolled',
  '378282246310005': 'not_enrolled',
  '3530111333300000': 'not_enrolled',
  '5352151570003404': 'not_enrolled',
  '4532432452900131': 'not_enrolled',
};

export function threeDsBehaviour(number: string): ThreeDsBehaviour {
  return THREE_DS_CARDS[number] ?? 'challenge';
}

/**
 * The response code of an authorization: a decline card wins, then the amount table (when
 * `amount_triggers` is on), else approved. `three_ds_done`: the payment was authenticated, so
 * the "3DS authentication required" amounts no longer apply.
 */
export function authorizationCode(
  number: string,
  amount: number,
  options: { readonly amount_triggers: boolean; readonly three_ds_done: boolean },
): string {
  const by_card = DECLINE_CARDS[number];
  if (by_card) return by_card;
  if (options.amount_triggers) {
    const by_amount = amountCode(amount);
    if (by_amount) return by_amount;
    if (!options.three_ds_done && AMOUNTS_REQUIRING_3DS.includes(amount)) return '20154';
  }
  return APPROVED;
}

/** The amount table alone (also used, CHOSEN, for payouts and refunds: an amount ending in 05 is declined with 20005). */
export function amountCode(amount: number): string | null {
  const exact = AMOUNT_EXACT_CODES[amount];
  if (exact) return exact;
  return AMOUNT_SUFFIX_CODES[String(amount % 100).padStart(2, '0')] ?? null;
}

/** A payout's outcome: the documented payout decline cards, then (CHOSEN) the amount table's xx05 → 20005. */
export function payoutCode(number: string, amount: number, options: { readonly amount_triggers: boolean }): string {
  const by_card = PAYOUT_DECLINE_CARDS[number];
  if (by_card) return by_card;
  if (options.amount_triggers && amount % 100 === 5) return '20005';
  return APPROVED;
}

/** CHOSEN (the documentation names no way to decline a refund in the sandbox): a refund of an amount ending in 05. */
export function refundCode(amount: number): string {
  return amount % 100 === 5 ? '20005' : APPROVED;
}

/** The Luhn check the fake applies to card numbers (card_number_invalid when it fails). */
export { luhnValid };

export function schemeOf(number: string): string {
  if (/^4/.test(number)) return 'Visa';
  if (/^(5[1-5]|2[2-7])/.test(number)) return 'Mastercard';
  if (/^3[47]/.test(number)) return 'American Express';
  if (/^3(0|6|8)/.test(number)) return 'Diners Club International';
  if (/^35/.test(number)) return 'JCB';
  if (/^6/.test(number)) return 'Discover';
  return 'Unknown';
}

/** Like the sandbox's: uppercase hex of a hash of the number (the real one is keyed; this one needs not be). */
export function fingerprintOf(number: string): string {
  return createHash('sha256').update(`paygate-fake-checkout:${number}`).digest('hex').toUpperCase();
}
