// Sandbox help for a merchant's developer whose body signature does not verify (decisions.md
// §15, issue 19): the string the gateway hashed, with the secret left out and card fields
// masked (in the description, or in error_details when it does not fit there), and the likely
// mistake when one of the usual ones explains the signature received.
// Pure: the route pipeline decides when to use it (sandbox only).
import { createHmac } from 'node:crypto';
import { bodySigningString, sha384Hex } from './signing.js';

/** The description's limit (spec: varchar(256)). */
export const DESCRIPTION_MAX = 256;

/** A unix time above this is in milliseconds (10^11 seconds is the year 5138). */
export const MILLISECOND_TIMESTAMP_FLOOR = 100_000_000_000;

export type SignatureMistake = 'uppercase_hex' | 'keys_not_sorted' | 'hmac' | 'millisecond_timestamp';

/** Short enough that "Invalid signature (…)" fits the 75 characters of init-* answers. */
const MISTAKE_TEXT: Readonly<Record<SignatureMistake, string>> = {
  uppercase_hex: 'likely mistake: upper-case hex; use lower-case',
  keys_not_sorted: 'likely mistake: values not in sorted key order',
  hmac: 'likely mistake: HMAC; use plain SHA-384 + secret',
  millisecond_timestamp: 'likely mistake: timestamp in milliseconds',
};

/** Card fields whose values never appear in an answer: masked in the string shown. */
const CARD_FIELDS = new Set(['card_number', 'card_exp', 'cvv', 'card_number_encrypted', 'card_exp_encrypted', 'cvv_encrypted']);

function maskedValue(key: string, value: string): string {
  if (key === 'card_number' && /^[0-9]{12,19}$/.test(value))
    return `${value.slice(0, 6)}${'*'.repeat(value.length - 10)}${value.slice(-4)}`;
  return '*'.repeat(Math.min(value.length, 8));
}

/** Which of the usual mistakes produces exactly the signature given, if any. */
export function signatureMistake(message: Readonly<Record<string, unknown>>, secret: string): SignatureMistake | null {
  const given = message.signature;
  const timestamp = message.timestamp;
  if (typeof given === 'string') {
    const expected = sha384Hex(bodySigningString(message, secret));
    if (given !== expected && given.toLowerCase() === expected) return 'uppercase_hex';
    const unsorted = Object.keys(message)
      .filter((key) => key !== 'signature')
      .map((key) =>
        message[key] === null || message[key] === undefined || message[key] === false
          ? ''
          : message[key] === true
            ? '1'
            : String(message[key]),
      )
      .join('');
    if (given.toLowerCase() === sha384Hex(unsorted + secret)) return 'keys_not_sorted';
    const string_without_secret = bodySigningString(message, '');
    if (given.toLowerCase() === createHmac('sha384', secret).update(string_without_secret, 'utf8').digest('hex')) return 'hmac';
  }
  if (typeof timestamp === 'number' && timestamp >= MILLISECOND_TIMESTAMP_FLOOR) return 'millisecond_timestamp';
  return null;
}

/** The string the gateway hashed, the secret left out and card values masked; null when it would show the secret anyway. */
export function shownSigningString(message: Readonly<Record<string, unknown>>, secret: string): string | null {
  const masked: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(message))
    masked[key] = CARD_FIELDS.has(key) && typeof value === 'string' ? maskedValue(key, value) : value;
  const shown = bodySigningString(masked, '');
  return shown.includes(secret) ? null : shown;
}

/** Where the help is given: the description's limit, and whether the answer may carry error_details (not on init-* and find-order). */
export interface HelpLimits {
  readonly description_max?: number;
  readonly error_details?: boolean;
}

export interface SignatureHelp {
  readonly description: string;
  /** The string hashed (secret left out, card values masked), when the description cannot hold it beside its words. */
  readonly error_details: string | null;
}

/**
 * The sandbox's answer to an invalid body signature: the likely mistake in the description, and
 * the string hashed (when it fits DESCRIPTION_MAX, the limit of error_details too) after it in
 * the description when both fit there, else alone in error_details.
 */
export function invalidSignatureHelp(message: Readonly<Record<string, unknown>>, secret: string, limits: HelpLimits = {}): SignatureHelp {
  const max = limits.description_max ?? DESCRIPTION_MAX;
  let description = 'Invalid signature';
  const mistake = signatureMistake(message, secret);
  if (mistake !== null) description += ` (${MISTAKE_TEXT[mistake]})`;
  const shown = shownSigningString(message, secret);
  const with_string = shown === null ? null : `${description}. Signed here: sha384hex of "${shown}" + secret`;
  if (with_string !== null && with_string.length <= max) return { description: with_string, error_details: null };
  const details = shown !== null && shown.length <= DESCRIPTION_MAX && limits.error_details !== false ? shown : null;
  return { description: description.length <= max ? description : 'Invalid signature', error_details: details };
}
