// The SDK's signatures and card encryption hold to the spec's vectors (test/vectors/vectors.json,
// docs/security.md §3), and agree with the gateway's own code on any message, since the SDK carries
// a separate implementation (it must not import the gateway's).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  answerAuthentication,
  bodyHeaderSignature,
  bodySigningString,
  encryptCardField,
  requestAuthentication,
  signBody,
  verifyBody,
} from '@paygate/sdk';
import { loadVectors } from '../../../test/support/vectors.js';
import { signBody as gatewaySignBody } from '../../../src/domain/signing.js';
import { decryptCardField } from '../../../src/domain/card-encryption.js';

const vectors = loadVectors();

describe('SDK signing', () => {
  it('body signature: the vector of decisions.md §1', () => {
    const { message, secret, signing_string, signature } = vectors.body_signature;
    expect(bodySigningString(message, secret)).toBe(signing_string);
    expect(signBody(message, secret)).toBe(signature);
    expect(verifyBody({ ...message, signature }, secret)).toBe(true);
    expect(verifyBody({ ...message, signature: signature.toUpperCase() }, secret)).toBe(false);
    expect(verifyBody({ ...message, amount: 2000, signature }, secret)).toBe(false);
    expect(verifyBody({ ...message }, secret)).toBe(false);
  });

  it('v1.3 headers: the vector of decisions.md §2 and the Gt-Body-Signature of docs/security.md §3', () => {
    const { merchant_id, application_key, timestamp, secret, signature } = vectors.header_signature;
    expect(requestAuthentication(merchant_id, application_key, timestamp, secret)).toBe(signature);
    const body = '{"merchant_id":"demo-merchant","application_key":"demo-app","timestamp":1763740800,"name":"Gold"}';
    expect(bodyHeaderSignature('PUT', '/api/v1.3/subscription-plan/plan_1', body, 'demo-secret')).toBe(
      '03dff1be9df70f8195f3f90e0466b32546455780cb0e2085b4340302209e81f9be15d2d1a0f1d397623d4d4020930f9e',
    );
    expect(answerAuthentication(0, 1763740800, 'demo-secret')).toMatch(/^[0-9a-f]{96}$/);
  });

  it('card encryption: the vector of decisions.md §3', () => {
    const { secret, timestamp, fields } = vectors.card_encryption;
    for (const field of fields) expect(encryptCardField(field.plain, secret, timestamp), field.name).toBe(field.encrypted);
  });

  it('agrees with the gateway on any flat message, key order and Unicode included', () => {
    const value = fc.oneof(fc.string({ unit: 'grapheme' }), fc.integer(), fc.boolean(), fc.constant(null));
    fc.assert(
      fc.property(fc.dictionary(fc.string({ unit: 'grapheme', minLength: 1 }), value), fc.string({ minLength: 1 }), (message, secret) => {
        expect(signBody(message, secret)).toBe(gatewaySignBody(message, secret));
      }),
      { numRuns: 300 },
    );
  });

  it('what it encrypts, the gateway decrypts, for any secret and timestamp', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[0-9]{12,19}$/),
        fc.string({ minLength: 1, maxLength: 64 }),
        fc.integer({ min: 0, max: 99_999_999_999 }),
        (pan, secret, timestamp) => {
          expect(decryptCardField(encryptCardField(pan, secret, timestamp), secret, timestamp)).toEqual({ ok: true, value: pan });
        },
      ),
      { numRuns: 200 },
    );
  });
});
