// Message signatures (decisions.md §1 and §2). Pure functions: the HTTP hook, the answer
// signer, the notification sender and tests all use these, so there is one definition.
import { createHash, timingSafeEqual } from 'node:crypto';

export type FlatValue = string | number | boolean | null | undefined;
export type FlatMessage = Readonly<Record<string, FlatValue>>;

const SIGNATURE_PATTERN = /^[0-9a-f]{96}$/;

/** The text a body signature covers: values in code-point order of their keys, no separators. */
export function bodySigningString(message: Readonly<Record<string, unknown>>, secret: string): string {
  const keys = Object.keys(message)
    .filter((key) => key !== 'signature')
    .sort(compareCodePoints);
  let text = '';
  for (const key of keys) text += signingText(message[key], key);
  return text + secret;
}

/**
 * Ascending code-point order, as §1 says (and as UTF-8 byte order, PHP's ksort or Python's
 * sorted give). JavaScript's `<` compares UTF-16 code units, which puts a character above
 * U+FFFF before one in U+E000..U+FFFF.
 */
function compareCodePoints(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i += 1) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x - y;
    if (x > 0xffff) i += 1;
  }
  return a.length - b.length;
}

function signingText(value: unknown, key: string): string {
  if (value === null || value === undefined || value === false) return '';
  if (value === true) return '1';
  if (typeof value === 'string') return value;
  // Integers as decimal digits; a non-integer number signs as JSON wrote it, and field
  // validation then refuses it by name, so a merchant learns the field, not "bad signature".
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  throw new TypeError(`field ${key} cannot be signed: only strings, numbers, booleans and null are allowed`);
}

export function sha384Hex(text: string): string {
  return createHash('sha384').update(text, 'utf8').digest('hex');
}

export function signBody(message: Readonly<Record<string, unknown>>, secret: string): string {
  return sha384Hex(bodySigningString(message, secret));
}

/** Constant-time comparison; anything that is not 96 lowercase hex is refused before comparing. */
export function signaturesEqual(expected_hex: string, given: unknown): boolean {
  if (typeof given !== 'string' || !SIGNATURE_PATTERN.test(given)) return false;
  return timingSafeEqual(Buffer.from(expected_hex, 'hex'), Buffer.from(given, 'hex'));
}

export function verifyBody(message: Readonly<Record<string, unknown>>, secret: string): boolean {
  return signaturesEqual(signBody(message, secret), message.signature);
}

/**
 * The first of `secrets` (in their order) that `given` is the signature of, by `sign`, or null.
 * Every secret is compared whichever matches, so the time taken does not tell which one did
 * (a merchant's current and previous secret during a roll's grace, docs/security.md §5).
 */
export function matchingSecret(secrets: readonly string[], sign: (secret: string) => string, given: unknown): string | null {
  let found: string | null = null;
  for (const secret of secrets) {
    if (signaturesEqual(sign(secret), given) && found === null) found = secret;
  }
  return found;
}

/** matchingSecret for a body signature (decisions.md §1). */
export function bodySecret(message: Readonly<Record<string, unknown>>, secrets: readonly string[]): string | null {
  return matchingSecret(secrets, (secret) => signBody(message, secret), message.signature);
}

/** Adds timestamp-independent signature to a message we send; the signature field is last. */
export function withBodySignature<T extends Record<string, unknown>>(message: T, secret: string): T & { signature: string } {
  return { ...message, signature: signBody(message, secret) };
}

/** v1.3 header signature: the parts concatenated in the given order, then the secret. */
export function signHeader(parts: readonly (string | number)[], secret: string): string {
  return sha384Hex(parts.map(String).join('') + secret);
}
