// Card data encryption of spec §5.3, used by the encrypted payout: AES-256-CBC, the key is
// the merchant secret left-padded with "0" to 32 characters, the IV is the request timestamp
// left-padded with "0" to 16 characters.
import { createCipheriv, createDecipheriv } from 'node:crypto';
import { CardData, parseExpiry } from './cards.js';

export type DecryptResult = { ok: true; value: string } | { ok: false };

const BASE64_PATTERN = /^[A-Za-z0-9+/]+={0,2}$/;

function keyFor(secret: string): Buffer {
  // Padding to 32 characters gives at least 32 bytes; a longer secret is cut to 32 bytes,
  // as the OpenSSL-based merchant libraries of this API do.
  return Buffer.from(secret.padStart(32, '0'), 'utf8').subarray(0, 32);
}

function ivFor(timestamp: number): Buffer {
  return Buffer.from(String(timestamp).padStart(16, '0').slice(-16), 'utf8');
}

export function encryptCardField(plain: string, secret: string, timestamp: number): string {
  const cipher = createCipheriv('aes-256-cbc', keyFor(secret), ivFor(timestamp));
  return Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]).toString('base64');
}

/**
 * Every failure (bad base64, wrong length, bad padding, non-text result) is the same
 * { ok: false } so callers cannot tell them apart and neither can an attacker (no padding oracle).
 */
export function decryptCardField(encoded: string, secret: string, timestamp: number): DecryptResult {
  if (encoded.length === 0 || encoded.length > 256 || !BASE64_PATTERN.test(encoded)) return { ok: false };
  const raw = Buffer.from(encoded, 'base64');
  if (raw.length === 0 || raw.length % 16 !== 0) return { ok: false };
  try {
    const decipher = createDecipheriv('aes-256-cbc', keyFor(secret), ivFor(timestamp));
    const plain = Buffer.concat([decipher.update(raw), decipher.final()]).toString('utf8');
    if (!/^[\x20-\x7e]{1,32}$/.test(plain)) return { ok: false };
    return { ok: true, value: plain };
  } catch {
    return { ok: false };
  }
}

/** The card fields of an encrypted payout (spec §4.1 variant D), each one ciphertext. */
export interface EncryptedCard {
  readonly card_number: string;
  readonly card_exp: string;
  readonly cvv: string | null;
}

const PAN_PATTERN = /^[0-9]{12,19}$/;
const EXPIRY_PATTERN = /^(0[1-9]|1[0-2])\/([0-9]{2}|[0-9]{4})$/;
const CVV_PATTERN = /^[0-9]{3,4}$/;

/**
 * Opens an encrypted payout's card into a CardData, or null. Null is the only failure, whatever
 * the cause (bad base64, wrong length, bad padding, wrong key or timestamp, or a plaintext that
 * is not a card number, MM/YYYY expiry or CVV), so callers answer every cause alike. Every
 * field is decrypted before any is judged. The decrypted text lives only in the CardData.
 */
export function openEncryptedCard(fields: EncryptedCard, secret: string, timestamp: number): CardData | null {
  const pan = decryptCardField(fields.card_number, secret, timestamp);
  const exp = decryptCardField(fields.card_exp, secret, timestamp);
  const cvv = fields.cvv === null ? null : decryptCardField(fields.cvv, secret, timestamp);
  let readable = pan.ok && exp.ok && (cvv === null || cvv.ok);
  readable = readable && pan.ok && PAN_PATTERN.test(pan.value);
  readable = readable && exp.ok && EXPIRY_PATTERN.test(exp.value);
  readable = readable && (cvv === null || (cvv.ok && CVV_PATTERN.test(cvv.value)));
  if (!readable || !pan.ok || !exp.ok) return null;
  const expiry = parseExpiry(exp.value);
  if (!expiry) return null;
  return new CardData(pan.value, expiry, cvv !== null && cvv.ok ? cvv.value : null);
}
