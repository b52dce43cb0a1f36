// The gateway's signatures and card encryption, as a merchant computes them (decisions.md §1-§3,
// docs/signing.md, spec §5.3): the body signature of every v1.1/1.2 call, answer, notification and
// reply; the v1.3 Gt-Authentication headers and Gt-Body-Signature; AES-256-CBC card fields of the
// encrypted payout. Written here on node:crypto alone, so that the SDK carries no code of the
// gateway's: its tests hold it to the spec's vectors and to a real gateway.
import { createCipheriv, createHash, timingSafeEqual } from 'node:crypto';

/** A value a body-signed message may hold: flat, never an object or array. */
export type FlatValue = string | number | boolean | null | undefined;

const SIGNATURE_PATTERN = /^[0-9a-f]{96}$/;

/** Ascending code-point order of keys (decisions.md §1); JavaScript's `<` compares UTF-16 units instead. */
function compareCodePoints(a: string, b: string): number {
  const x = Array.from(a, (ch) => ch.codePointAt(0)!);
  const y = Array.from(b, (ch) => ch.codePointAt(0)!);
  for (let i = 0; i < Math.min(x.length, y.length); i += 1) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
}

function signingText(key: string, value: unknown): string {
  if (value === null || value === undefined || value === false) return '';
  if (value === true) return '1';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  throw new TypeError(`field ${key} cannot be signed: a body-signed message holds only strings, numbers, booleans and null`);
}

/** What a body signature covers: the values in their keys' code-point order, no separators, then the secret. */
export function bodySigningString(message: Readonly<Record<string, unknown>>, secret: string): string {
  const keys = Object.keys(message)
    .filter((key) => key !== 'signature')
    .sort(compareCodePoints);
  return keys.map((key) => signingText(key, message[key])).join('') + secret;
}

export function sha384Hex(text: string): string {
  return createHash('sha384').update(text, 'utf8').digest('hex');
}

/** decisions.md §1: the `signature` of a body. */
export function signBody(message: Readonly<Record<string, unknown>>, secret: string): string {
  return sha384Hex(bodySigningString(message, secret));
}

/** Constant-time; anything that is not 96 lowercase hex characters is refused before comparing. */
export function signaturesEqual(expected_hex: string, given: unknown): boolean {
  if (typeof given !== 'string' || !SIGNATURE_PATTERN.test(given)) return false;
  return timingSafeEqual(Buffer.from(expected_hex, 'hex'), Buffer.from(given, 'hex'));
}

/** True when the message's own `signature` is the body signature of its other fields with `secret`. */
export function verifyBody(message: Readonly<Record<string, unknown>>, secret: string): boolean {
  try {
    return signaturesEqual(signBody(message, secret), message.signature);
  } catch {
    // A nested value cannot have been signed by the body rule.
    return false;
  }
}

/** decisions.md §2: a header signature, the parts joined with no separator, then the secret. */
export function signHeader(parts: readonly (string | number)[], secret: string): string {
  return sha384Hex(parts.map(String).join('') + secret);
}

/** Gt-Authentication of a v1.3 request: merchant_id + application_key + timestamp + secret. */
export function requestAuthentication(merchant_id: string, application_key: string, timestamp: number, secret: string): string {
  return signHeader([merchant_id, application_key, timestamp], secret);
}

/** Gt-Authentication of a v1.3 answer (and of a reply to a subscription event): status + timestamp + secret. */
export function answerAuthentication(status: number, timestamp: number, secret: string): string {
  return signHeader([status, timestamp], secret);
}

/** Gt-Body-Signature (docs/security.md §3): method + path + body as sent (a GET: its query string) + secret. */
export function bodyHeaderSignature(method: string, path: string, body: string, secret: string): string {
  return signHeader([method, path, body], secret);
}

/** Gt-Authentication of a subscription event notification (decisions.md §2). */
export function subscriptionEventAuthentication(event: Readonly<Record<string, unknown>>, secret: string): string {
  const part = (name: string) => {
    const value = event[name];
    return typeof value === 'string' || typeof value === 'number' ? value : '';
  };
  return signHeader(
    [
      part('event'),
      part('merchant_id'),
      part('application_key'),
      part('cid'),
      part('plan_id'),
      part('subscription_id'),
      part('subscription_status'),
      part('timestamp'),
    ],
    secret,
  );
}

/**
 * spec §5.3: AES-256-CBC (PKCS#7 padding), base64. The key is the secret left-padded with "0" to
 * 32 characters (its first 32 bytes when longer); the IV the request's timestamp left-padded with
 * "0" to 16 characters. So a card is encrypted afresh for every request's timestamp.
 */
export function encryptCardField(plain: string, secret: string, timestamp: number): string {
  const key = Buffer.from(secret.padStart(32, '0'), 'utf8').subarray(0, 32);
  const iv = Buffer.from(String(timestamp).padStart(16, '0').slice(-16), 'utf8');
  const cipher = createCipheriv('aes-256-cbc', key, iv);
  return Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]).toString('base64');
}
