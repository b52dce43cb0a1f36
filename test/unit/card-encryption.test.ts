// Card field encryption of spec §5.3 (decisions.md §3): the vector both ways, one and the
// same answer for every kind of decryption failure, and a round trip for card-like text.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decryptCardField, encryptCardField } from '../../src/domain/card-encryption.js';
import { loadVectors } from '../support/vectors.js';

const { secret, timestamp, fields } = loadVectors().card_encryption;
const pan = fields.find((f) => f.name === 'card_number')!;
const exp = fields.find((f) => f.name === 'card_exp')!;
const FAILURE = { ok: false };

function flipByte(encoded: string, index: number): string {
  const raw = Buffer.from(encoded, 'base64');
  raw[index] = raw[index]! ^ 0x01;
  return raw.toString('base64');
}

describe('card encryption vector (decisions.md §3)', () => {
  it('has both fields', () => {
    expect(pan.plain).toBe('4111111111111111');
    expect(exp.plain).toBe('12/2030');
  });

  it.each(fields)('encrypts $name to the documented base64', ({ plain, encrypted }) => {
    expect(encryptCardField(plain, secret, timestamp)).toBe(encrypted);
  });

  it.each(fields)('decrypts $name back', ({ plain, encrypted }) => {
    expect(decryptCardField(encrypted, secret, timestamp)).toEqual({ ok: true, value: plain });
  });
});

describe('decryption failures all look the same', () => {
  const other_block_length = encryptCardField('1234567890123456789012345678901', secret, timestamp); // 32 bytes
  const cases: [string, () => ReturnType<typeof decryptCardField>][] = [
    ['a flipped byte in the last block', () => decryptCardField(flipByte(pan.encrypted, 31), secret, timestamp)],
    ['a flipped byte in the first block', () => decryptCardField(flipByte(pan.encrypted, 3), secret, timestamp)],
    ['a flipped byte in a one-block value', () => decryptCardField(flipByte(exp.encrypted, 15), secret, timestamp)],
    [
      'a truncated ciphertext (one block of two)',
      () => decryptCardField(Buffer.from(pan.encrypted, 'base64').subarray(0, 16).toString('base64'), secret, timestamp),
    ],
    ['a truncated base64 text', () => decryptCardField(pan.encrypted.slice(0, 20), secret, timestamp)],
    ['text that is not base64', () => decryptCardField('not base64 at all!', secret, timestamp)],
    [
      'base64 with characters outside the alphabet',
      () => decryptCardField(`${exp.encrypted.slice(0, 10)}*${exp.encrypted.slice(11)}`, secret, timestamp),
    ],
    ['a length that is not a multiple of 16 bytes', () => decryptCardField(Buffer.alloc(15, 7).toString('base64'), secret, timestamp)],
    ['a 17-byte value', () => decryptCardField(Buffer.alloc(17, 7).toString('base64'), secret, timestamp)],
    ['an over-long value', () => decryptCardField('A'.repeat(260), secret, timestamp)],
    ['an empty value', () => decryptCardField('', secret, timestamp)],
    ['the wrong key (another secret)', () => decryptCardField(exp.encrypted, 'other-secret', timestamp)],
    ['the wrong key for a two-block value', () => decryptCardField(pan.encrypted, 'other-secret', timestamp)],
    ['the wrong timestamp (the IV)', () => decryptCardField(exp.encrypted, secret, timestamp + 1)],
    ['an all-zero block', () => decryptCardField(Buffer.alloc(16).toString('base64'), secret, timestamp)],
  ];

  it.each(cases)('%s gives { ok: false }', (_name, attempt) => {
    const result = attempt();
    expect(result).toStrictEqual(FAILURE);
    expect(JSON.stringify(result)).toBe('{"ok":false}');
    expect(Object.keys(result)).toEqual(['ok']);
  });

  it('the control value decrypts, so the failures above are about the tampering', () => {
    expect(decryptCardField(other_block_length, secret, timestamp)).toEqual({ ok: true, value: '1234567890123456789012345678901' });
  });

  it('a wrong timestamp never gives back the original card number', () => {
    // CBC with the timestamp as IV: a wrong IV only garbles the first block, so for a two-block
    // PAN the padding still checks and a different 16-digit text comes out. It is never the
    // original; the card rules (Luhn) then refuse it.
    for (const offset of [1, -1, 60, 3600]) {
      const result = decryptCardField(pan.encrypted, secret, timestamp + offset);
      if (result.ok) expect(result.value).not.toBe(pan.plain);
    }
  });
});

describe('round trip', () => {
  const cardLike = fc.oneof(
    fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: 12, maxLength: 19 }),
    fc.tuple(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 2000, max: 2099 })).map(([m, y]) => `${String(m).padStart(2, '0')}/${y}`),
    fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: 3, maxLength: 4 }),
    fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 32 }).filter((s) => /^[\x20-\x7e]+$/.test(s)),
  );

  it('decrypt(encrypt(x)) is x for random card-like strings, secrets and timestamps', () => {
    fc.assert(
      fc.property(
        cardLike,
        fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 40 }),
        fc.integer({ min: 0, max: 4_102_444_800 }),
        (plain, key, ts) => {
          const encrypted = encryptCardField(plain, key, ts);
          expect(encrypted).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
          expect(Buffer.from(encrypted, 'base64').length % 16).toBe(0);
          expect(decryptCardField(encrypted, key, ts)).toEqual({ ok: true, value: plain });
        },
      ),
      { numRuns: 300 },
    );
  });
});
