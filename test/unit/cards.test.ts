// Card rules: Luhn, masking (decisions.md §12), expiry, brand, and that card data never
// print in clear.
import util from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CardData, cardBrand, expiryInFuture, formatExpiry, luhnValid, maskPan, parseExpiry } from '../../src/domain/cards.js';

/** The Luhn check digit to append to `payload`, computed from the definition. */
function checkDigit(payload: string): string {
  let sum = 0;
  const digits = [...payload].reverse().map(Number);
  digits.forEach((d, i) => {
    // The check digit will sit at position 0 from the right, so payload's rightmost digit is doubled.
    if (i % 2 === 0) sum += d * 2 > 9 ? d * 2 - 9 : d * 2;
    else sum += d;
  });
  return String((10 - (sum % 10)) % 10);
}

const digits = (min: number, max: number) => fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: min, maxLength: max });

describe('luhnValid', () => {
  it.each([
    '4111111111111111',
    '4012888888881881',
    '5555555555554444',
    '5105105105105100',
    '2221000000000009',
    '378282246310005',
    '371449635398431',
    '6011111111111117',
    '3530111333300000',
    '4222222222222',
  ])('accepts the valid number %s', (pan) => {
    expect(luhnValid(pan)).toBe(true);
  });

  it.each(['4111111111111112', '4111111111111121', '5555555555554443', '378282246310006', '1234567812345678'])(
    'refuses the invalid number %s',
    (pan) => {
      expect(luhnValid(pan)).toBe(false);
    },
  );

  it.each([
    ['too short (11 digits)', '00000000000'],
    ['too long (20 digits)', '41111111111111111116'],
    ['spaces', '4111 1111 1111 1111'],
    ['dashes', '4111-1111-1111-1111'],
    ['letters', '411111111111111a'],
    ['empty', ''],
    ['a sign', '+4111111111111111'],
    ['full-width digits', '４１１１１１１１１１１１１１１１'],
  ])('refuses %s', (_name, pan) => {
    expect(luhnValid(pan)).toBe(false);
  });

  it('appending the right check digit always gives a valid number', () => {
    fc.assert(
      fc.property(digits(11, 18), (payload) => {
        expect(luhnValid(payload + checkDigit(payload))).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('any other check digit gives an invalid number', () => {
    fc.assert(
      fc.property(digits(11, 18), fc.integer({ min: 1, max: 9 }), (payload, shift) => {
        const wrong = String((Number(checkDigit(payload)) + shift) % 10);
        expect(luhnValid(payload + wrong)).toBe(false);
      }),
      { numRuns: 500 },
    );
  });

  it('changing any one digit of a valid number makes it invalid', () => {
    fc.assert(
      fc.property(digits(11, 18), fc.nat(), fc.integer({ min: 1, max: 9 }), (payload, at, shift) => {
        const valid = payload + checkDigit(payload);
        const i = at % valid.length;
        const changed = valid.slice(0, i) + String((Number(valid[i]) + shift) % 10) + valid.slice(i + 1);
        expect(luhnValid(changed)).toBe(false);
      }),
      { numRuns: 500 },
    );
  });
});

describe('maskPan', () => {
  it('shows the first 6, asterisks, and the last 4', () => {
    expect(maskPan('4111111111111111')).toBe('411111******1111');
    expect(maskPan('378282246310005')).toBe('378282*****0005');
    expect(maskPan('4000123456789010123')).toBe('400012*********0123');
    expect(maskPan('401288888888')).toBe('401288**8888');
  });

  it('keeps the length and never shows the middle digits', () => {
    fc.assert(
      fc.property(digits(12, 19), (pan) => {
        const masked = maskPan(pan);
        expect(masked).toHaveLength(pan.length);
        expect(masked).toBe(pan.slice(0, 6) + '*'.repeat(pan.length - 10) + pan.slice(-4));
      }),
    );
  });

  it('hides a value too short to mask sensibly entirely', () => {
    expect(maskPan('123456789')).toBe('*********');
  });
});

describe('parseExpiry', () => {
  it.each([
    ['12/2030', { month: 12, year: 2030 }],
    ['01/2031', { month: 1, year: 2031 }],
    ['06/34', { month: 6, year: 2034 }],
    ['12/30', { month: 12, year: 2030 }],
  ])('reads %s', (text, expected) => {
    expect(parseExpiry(text)).toEqual(expected);
  });

  it.each(['00/2030', '13/2030', '99/30', '00/30', '1/2030', '12/203', '12-2030', '12/2030 ', '', 'ab/cdef', '12/20300'])(
    'refuses %j',
    (text) => {
      expect(parseExpiry(text)).toBeNull();
    },
  );

  it('formats back as MM/YYYY', () => {
    expect(formatExpiry(parseExpiry('06/34')!)).toBe('06/2034');
    expect(formatExpiry({ month: 12, year: 2030 })).toBe('12/2030');
  });
});

describe('expiryInFuture', () => {
  it('a card is valid through the last millisecond of its month (UTC)', () => {
    expect(expiryInFuture({ month: 12, year: 2030 }, Date.UTC(2030, 11, 31, 23, 59, 59, 999))).toBe(true);
    expect(expiryInFuture({ month: 12, year: 2030 }, Date.UTC(2031, 0, 1))).toBe(false);
    expect(expiryInFuture({ month: 1, year: 2030 }, Date.UTC(2030, 0, 1))).toBe(true);
    expect(expiryInFuture({ month: 1, year: 2030 }, Date.UTC(2030, 0, 31, 23, 59, 59, 999))).toBe(true);
    expect(expiryInFuture({ month: 1, year: 2030 }, Date.UTC(2030, 1, 1))).toBe(false);
  });

  it('handles February in leap and common years', () => {
    expect(expiryInFuture({ month: 2, year: 2028 }, Date.UTC(2028, 1, 29, 12))).toBe(true);
    expect(expiryInFuture({ month: 2, year: 2028 }, Date.UTC(2028, 2, 1))).toBe(false);
    expect(expiryInFuture({ month: 2, year: 2029 }, Date.UTC(2029, 1, 28, 23, 59, 59, 999))).toBe(true);
    expect(expiryInFuture({ month: 2, year: 2029 }, Date.UTC(2029, 2, 1))).toBe(false);
  });

  it('a past expiry is not in the future', () => {
    expect(expiryInFuture({ month: 12, year: 2020 }, Date.UTC(2025, 5, 1))).toBe(false);
    expect(expiryInFuture({ month: 5, year: 2025 }, Date.UTC(2025, 5, 1))).toBe(false);
    expect(expiryInFuture({ month: 6, year: 2025 }, Date.UTC(2025, 5, 1))).toBe(true);
  });
});

describe('cardBrand', () => {
  it.each([
    ['4111111111111111', 'VISA'],
    ['4012888888881881', 'VISA'],
    ['5555555555554444', 'MasterCard'],
    ['5105105105105100', 'MasterCard'],
    ['2221000000000009', 'MasterCard'],
    ['2720990000000007', 'MasterCard'],
    ['378282246310005', 'AMEX'],
    ['371449635398431', 'AMEX'],
    ['341111111111111', 'AMEX'],
  ])('%s is %s', (pan, brand) => {
    expect(cardBrand(pan)).toBe(brand);
  });

  it('does not call an unknown prefix VISA, MasterCard or AMEX', () => {
    expect(cardBrand('9999999999999995')).toBeNull();
    expect(cardBrand('1234567812345670')).toBeNull();
    expect(cardBrand('2721000000000000')).not.toBe('MasterCard');
    expect(cardBrand('330000000000000')).not.toBe('AMEX');
  });
});

describe('CardData never prints the PAN or CVV', () => {
  const PAN = '4111111111111111';
  const CVV = '987';
  const card = new CardData(PAN, { month: 12, year: 2030 }, CVV);

  function assertClean(text: string): void {
    expect(text).not.toContain(PAN);
    expect(text).not.toContain(CVV);
    expect(text).not.toContain(PAN.slice(6, 12));
  }

  it('still gives the code that needs them the clear values', () => {
    expect(card.pan).toBe(PAN);
    expect(card.cvv).toBe(CVV);
    expect(card.masked).toBe('411111******1111');
  });

  it('JSON.stringify shows the masked number only', () => {
    const text = JSON.stringify(card);
    assertClean(text);
    expect(text).toBe('"411111******1111"');
    const nested = JSON.stringify({ request: { card, amount: 1999 }, cards: [card] });
    assertClean(nested);
    expect(nested).toContain('411111******1111');
  });

  it('util.inspect shows the masked number only, however deep and however asked', () => {
    for (const text of [
      util.inspect(card),
      util.inspect({ request: { card } }, { depth: 10 }),
      util.inspect(card, { showHidden: true, depth: Infinity }),
      util.inspect([card], { getters: true }),
      util.format('%o %O %s %j', card, card, card, card),
      String(card),
      `${card}`,
    ]) {
      assertClean(text);
      expect(text).toContain('411111******1111');
    }
  });

  it('spreading or listing its keys does not reveal them either', () => {
    assertClean(JSON.stringify({ ...card }));
    assertClean(JSON.stringify(Object.keys(card)));
    assertClean(util.inspect(Object.entries(card)));
  });

  it('a card without a CVV (payout) also prints masked', () => {
    const payout = new CardData(PAN, { month: 12, year: 2030 }, null);
    assertClean(util.inspect(payout));
    assertClean(JSON.stringify(payout));
  });
});
