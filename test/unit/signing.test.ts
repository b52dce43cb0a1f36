// Body and header signatures (decisions.md §1, §2): the spec's vectors, the refusals, and
// properties over random flat messages checked against an independent reading of the rule.
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bodySigningString, signBody, signHeader, signaturesEqual, verifyBody, withBodySignature } from '../../src/domain/signing.js';
import { loadVectors } from '../support/vectors.js';

const vectors = loadVectors();
const body = vectors.body_signature;
const header = vectors.header_signature;

type Flat = Record<string, string | number | boolean | null>;

/** Keys in ascending code-point order (not UTF-16 code-unit order). */
function compareCodePoints(a: string, b: string): number {
  const x = Array.from(a, (c) => c.codePointAt(0)!);
  const y = Array.from(b, (c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(x.length, y.length); i += 1) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
}

/** decisions.md §1 step 3, written from the text, independent of the implementation. */
function valueText(value: string | number | boolean | null | undefined): string {
  if (value === null || value === undefined || value === false) return '';
  if (value === true) return '1';
  if (typeof value === 'number') return value.toString(10);
  return value;
}

function referenceSigningString(message: Flat, secret: string): string {
  const keys = Object.keys(message)
    .filter((k) => k !== 'signature')
    .sort(compareCodePoints);
  return keys.map((k) => valueText(message[k])).join('') + secret;
}

const keyArb = fc.string({ unit: 'binary', maxLength: 12 }).filter((k) => k !== 'signature');
const valueArb: fc.Arbitrary<string | number | boolean | null> = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.maxSafeInteger(),
  fc.boolean(),
  fc.constant(null),
);
const messageArb = fc.dictionary(keyArb, valueArb, { maxKeys: 12, noNullPrototype: true });
const secretArb = fc.string({ minLength: 1, maxLength: 40 });

describe('body signature vector (decisions.md §1)', () => {
  it('signs the documented string', () => {
    expect(bodySigningString(body.message, body.secret)).toBe(body.signing_string);
  });

  it('gives the documented signature, which is SHA-384 hex of that string', () => {
    expect(signBody(body.message, body.secret)).toBe(body.signature);
    expect(createHash('sha384').update(body.signing_string, 'utf8').digest('hex')).toBe(body.signature);
    expect(body.signature).toMatch(/^[0-9a-f]{96}$/);
  });

  it('ignores an existing signature field when signing', () => {
    expect(signBody({ ...body.message, signature: 'anything' }, body.secret)).toBe(body.signature);
    expect(withBodySignature(body.message, body.secret).signature).toBe(body.signature);
  });
});

describe('header signature vector (decisions.md §2)', () => {
  it('gives the documented Gt-Authentication value', () => {
    expect(signHeader([header.merchant_id, header.application_key, header.timestamp], header.secret)).toBe(header.signature);
  });

  it('is the concatenation in the given order, then the secret', () => {
    const text = `${header.merchant_id}${header.application_key}${header.timestamp}${header.secret}`;
    expect(createHash('sha384').update(text).digest('hex')).toBe(header.signature);
    expect(signHeader([header.application_key, header.merchant_id, header.timestamp], header.secret)).not.toBe(header.signature);
  });
});

describe('verifyBody', () => {
  const good = { ...body.message, signature: body.signature };

  it('accepts the right signature', () => {
    expect(verifyBody(good, body.secret)).toBe(true);
  });

  it('refuses the right signature under another secret', () => {
    expect(verifyBody(good, 'other-secret')).toBe(false);
  });

  it('refuses a changed field', () => {
    expect(verifyBody({ ...good, amount: 2000 }, body.secret)).toBe(false);
    expect(verifyBody({ ...good, order_id: 'order-1002' }, body.secret)).toBe(false);
    expect(verifyBody({ ...good, variable1: 'x' }, body.secret)).toBe(false);
  });

  it('refuses the signature in uppercase', () => {
    expect(verifyBody({ ...good, signature: body.signature.toUpperCase() }, body.secret)).toBe(false);
  });

  it('refuses a 95- or 97-character signature', () => {
    expect(verifyBody({ ...good, signature: body.signature.slice(0, 95) }, body.secret)).toBe(false);
    expect(verifyBody({ ...good, signature: `${body.signature}0` }, body.secret)).toBe(false);
  });

  it('refuses a 96-character signature that is not hex', () => {
    const not_hex = `${body.signature.slice(0, 95)}g`;
    expect(not_hex).toHaveLength(96);
    expect(verifyBody({ ...good, signature: not_hex }, body.secret)).toBe(false);
    expect(verifyBody({ ...good, signature: ` ${body.signature.slice(1)}` }, body.secret)).toBe(false);
  });

  it('refuses a signature that is not a string', () => {
    for (const signature of [null, undefined, 0, 1, true, [body.signature], { value: body.signature }]) {
      expect(verifyBody({ ...good, signature }, body.secret)).toBe(false);
    }
    const { signature: _omitted, ...unsigned } = good;
    expect(verifyBody(unsigned, body.secret)).toBe(false);
  });

  it('signaturesEqual refuses malformed input before comparing (no throw on odd lengths)', () => {
    expect(signaturesEqual(body.signature, body.signature)).toBe(true);
    expect(signaturesEqual(body.signature, 'abc')).toBe(false);
    expect(signaturesEqual(body.signature, '')).toBe(false);
  });
});

describe('signing rules', () => {
  it('refuses nested objects and arrays', () => {
    expect(() => signBody({ a: { b: 1 } }, 's')).toThrow(/field a/);
    expect(() => signBody({ a: [1] }, 's')).toThrow(/field a/);
  });

  it('writes true as 1 and integers as decimal digits', () => {
    expect(bodySigningString({ b: true, a: 42, c: -7 }, 'S')).toBe('421-7S');
  });

  it('sorts keys by code point, not by UTF-16 code unit', () => {
    // U+FFFF sorts before U+10000 by code point; in UTF-16, U+10000 starts with 0xD800 < 0xFFFF.
    expect(bodySigningString({ '\u{10000}': 'astral', '\uffff': 'bmp' }, '')).toBe('bmpastral');
    expect(bodySigningString({ b: '3', B: '1', a: '2' }, '')).toBe('123'); // B < a < b
  });
});

describe('signing properties', () => {
  it('matches the rule of decisions.md §1 for random flat messages', () => {
    fc.assert(
      fc.property(messageArb, secretArb, (message, secret) => {
        expect(bodySigningString(message, secret)).toBe(referenceSigningString(message, secret));
      }),
      { numRuns: 300 },
    );
  });

  it('sign then verify is true', () => {
    fc.assert(
      fc.property(messageArb, secretArb, (message, secret) => {
        expect(verifyBody({ ...message, signature: signBody(message, secret) }, secret)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('changing any one value to one with a different signing text makes verification fail', () => {
    const arb = messageArb
      .filter((m) => Object.keys(m).length > 0)
      .chain((message) => fc.tuple(fc.constant(message), fc.constantFrom(...Object.keys(message)), valueArb, secretArb));
    fc.assert(
      fc.property(arb, ([message, key, replacement, secret]) => {
        fc.pre(valueText(replacement) !== valueText(message[key]));
        const signed = { ...message, signature: signBody(message, secret) };
        expect(verifyBody({ ...signed, [key]: replacement }, secret)).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('key order does not matter', () => {
    const arb = messageArb.chain((message) =>
      fc.tuple(
        fc.constant(message),
        fc.shuffledSubarray(Object.keys(message), {
          minLength: Object.keys(message).length,
        }),
        secretArb,
      ),
    );
    fc.assert(
      fc.property(arb, ([message, order, secret]) => {
        const reordered: Flat = {};
        // defineProperty, not assignment: a key "__proto__" must stay an own field, as in `message`.
        for (const key of order)
          Object.defineProperty(reordered, key, { value: message[key], enumerable: true, writable: true, configurable: true });
        // (JavaScript puts integer-like keys first whatever the insertion order, so the key order
        // of `reordered` is not asserted; what matters is that the signature ignores it.)
        expect(signBody(reordered, secret)).toBe(signBody(message, secret));
      }),
      { numRuns: 200 },
    );
  });

  it('null, false and absent fields add nothing', () => {
    const arb = fc
      .tuple(messageArb, keyArb, fc.constantFrom(null, false, undefined), secretArb)
      .filter(([message, key]) => !Object.prototype.hasOwnProperty.call(message, key));
    fc.assert(
      fc.property(arb, ([message, key, nothing, secret]) => {
        const extended: Record<string, unknown> = { ...message, [key]: nothing };
        expect(bodySigningString(extended, secret)).toBe(bodySigningString(message, secret));
        expect(signBody(extended, secret)).toBe(signBody(message, secret));
      }),
      { numRuns: 200 },
    );
  });
});
