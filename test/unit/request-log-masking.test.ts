// What the request log keeps of a body (operations/request-log-masking.ts): card numbers masked
// (first 6, last 4), CVVs dropped with their keys, expiry, ciphertexts, secrets, signatures and
// tokens redacted, a PAN in any other field (or as a number) masked, capability tokens cut from
// URLs, and a long body cut to its limit.
import { describe, expect, it } from 'vitest';
import { REQUEST_LOG_BODY_MAX_CHARS } from '../../src/domain/request-log-record.js';
import { maskedBodyJson, maskText } from '../../src/operations/request-log-masking.js';

const PAN = '4000056655665556';

describe('request log masking', () => {
  it('masks card fields, drops CVVs and redacts secrets, signatures and tokens at any depth', () => {
    const masked = JSON.parse(
      maskedBodyJson({
        card_number: PAN,
        cvv: '7391',
        CVV_encrypted: 'abc',
        card_exp: '12/2035',
        card_number_encrypted: 'Zm9v',
        signature: 'f'.repeat(96),
        secret: 'merchant-secret-0123',
        auth_token: 't0k3n',
        nested: { pan: Number(PAN), card_token: 'tok_1', list: [{ cvv: '123', note: `card ${PAN}` }] },
        amount: 1999,
        timestamp: 1764000000,
      })!,
    ) as Record<string, unknown>;
    expect(masked).toEqual({
      card_number: '400005******5556',
      card_exp: '[redacted]',
      card_number_encrypted: '[redacted]',
      signature: '[redacted]',
      secret: '[redacted]',
      auth_token: '[redacted]',
      nested: { pan: '400005******5556', card_token: '[redacted]', list: [{ note: 'card 400005******5556' }] },
      amount: 1999,
      timestamp: 1764000000,
    });
  });

  it('masks a digit run of 12 or more anywhere, grouped or not, and cuts tokens from URLs', () => {
    expect(maskText(`x ${PAN} y`)).toBe('x 400005******5556 y');
    expect(maskText('4000 0566 5566 5556')).toBe('4000 05** **** 5556');
    expect(maskText('order 12345678901')).toBe('order 12345678901'); // 11 digits stay
    expect(maskText('https://pay.example/3ds/AbCdEfGh12345678')).toBe('https://pay.example/3ds/[redacted]');
    expect(maskedBodyJson({ id: 123456789012 })).toBe('{"id":"123456**9012"}');
  });

  it('keeps nothing for an empty body and cuts a long one to its limit', () => {
    expect(maskedBodyJson(null)).toBeNull();
    expect(maskedBodyJson({})).toBeNull();
    const long = maskedBodyJson({ text: 'a'.repeat(REQUEST_LOG_BODY_MAX_CHARS * 2) })!;
    expect(long.length).toBe(REQUEST_LOG_BODY_MAX_CHARS);
    expect(long.endsWith('…')).toBe(true);
  });
});
