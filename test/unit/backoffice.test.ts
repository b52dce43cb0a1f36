// The back office's pure rules: the overview's figures, the search form, the CSV cell rule, the
// amounts a person types, chart scales and the access rules.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { maySee, merchantScope, normalizeEmail, passwordProblem, type Viewer } from '../../src/domain/backoffice-access.js';
import { formatAmount, parseMajorAmount } from '../../src/domain/money.js';
import { computeOverview, OVERVIEW_DAYS } from '../../src/domain/overview.js';
import { parseTransactionSearch, searchQuery } from '../../src/domain/transaction-search.js';
import { csvField } from '../../src/http/backoffice/transactions.js';
import { niceCeiling } from '../../src/pages/backoffice/charts.js';
import type { ActivityRow } from '../../src/domain/overview.js';
import type { TransactionStatus, TransactionType } from '../../src/domain/transaction-state.js';

const row = (
  day: number,
  transaction_type: TransactionType,
  status: TransactionStatus,
  currency: string,
  count: number,
  amount_minor: number,
): ActivityRow => ({ day, transaction_type, status, currency, count, amount_minor });

describe('overview figures', () => {
  const today = 20_000;
  it('sums approved sales per currency, today and over the period, and counts declines and rejections in the rate', () => {
    const overview = computeOverview(
      [
        row(today, 'sale', 'approved', 'USD', 2, 3000),
        row(today, 'sale', 'approved', 'EUR', 1, 500),
        row(today, 'sale', 'declined', 'USD', 1, 999),
        row(today, 'sale', 'rejected', 'USD', 1, 100),
        row(today, 'sale', 'error', 'USD', 4, 400),
        row(today - 3, 'sale', 'approved', 'USD', 3, 6000),
        row(today - 3, 'refund', 'approved', 'USD', 1, 250),
        row(today - 3, 'sale', 'pending', 'USD', 5, 5000),
        row(today - OVERVIEW_DAYS, 'sale', 'approved', 'USD', 9, 9999),
      ],
      today,
    );
    expect(overview.days.length).toBe(OVERVIEW_DAYS);
    expect(overview.days.at(-1)).toBe(today);
    expect(overview.today_volume).toEqual([
      { currency: 'USD', amount_minor: 3000, count: 2 },
      { currency: 'EUR', amount_minor: 500, count: 1 },
    ]);
    expect(overview.period_volume).toEqual([
      { currency: 'USD', amount_minor: 9000, count: 5 },
      { currency: 'EUR', amount_minor: 500, count: 1 },
    ]);
    expect(overview.today_approval_rate).toBeCloseTo(3 / 5);
    expect(overview.approval_rate).toBeCloseTo(6 / 8);
    expect(overview.period_refunds).toEqual([{ currency: 'USD', amount_minor: 250, count: 1 }]);
    expect(overview.volume_by_day.USD![OVERVIEW_DAYS - 4]).toBe(6000);
    expect(overview.declined_by_day.at(-1)).toBe(2);
  });
  it('has no rate when nothing finished', () => {
    expect(computeOverview([row(today, 'sale', 'pending', 'USD', 1, 1)], today).approval_rate).toBeNull();
  });
});

describe('transactions search form', () => {
  it('reads every field and names the wrong one', () => {
    const parsed = parseTransactionSearch({
      trace_id: '12',
      order_id: ' o-1 ',
      pin: 'p',
      status: 'approved',
      type: 'sale',
      gateway: 'g',
      merchant: 'm',
      from: '2026-11-01',
      to: '2026-11-02',
      currency: 'usd',
      amount_min: '1',
      amount_max: '2.00',
      before: '1800000000000.50',
    });
    expect(parsed).toMatchObject({
      ok: true,
      before: { created_at_ms: 1_800_000_000_000, trace_id: 50 },
      merchant: 'm',
      search: {
        trace_id: 12,
        order_id: 'o-1',
        pin: 'p',
        status: 'approved',
        transaction_type: 'sale',
        gateway_id: 'g',
        created_from_ms: Date.UTC(2026, 10, 1),
        created_before_ms: Date.UTC(2026, 10, 3),
        currency: 'USD',
        amount_min_minor: 100,
        amount_max_minor: 200,
      },
    });
    for (const [query, field] of [
      [{ trace_id: '0' }, 'trace_id'],
      [{ status: 'paid' }, 'status'],
      [{ from: '2026-02-30' }, 'from'],
      [{ to: '24/11/2026' }, 'to'],
      [{ from: '2026-11-03', to: '2026-11-02' }, 'to'],
      [{ amount_min: '1.5' }, 'currency'],
      [{ currency: 'US', amount_min: '1.5' }, 'currency'],
      [{ currency: 'USD', amount_min: '1.505' }, 'amount_min'],
      [{ currency: 'JPY', amount_min: '1.5' }, 'amount_min'],
      [{ currency: 'USD', amount_min: '5', amount_max: '4' }, 'amount_max'],
      [{ order_id: 'a\u0000b' }, 'order_id'],
      [{ pin: 'x'.repeat(129) }, 'pin'],
      [{ before: 'x' }, 'before'],
      // A page key is created_at_ms.trace_id: a bare trace_id (the key before trace_ids were random) is not one.
      [{ before: '9' }, 'before'],
      [{ before: '1800000000000.0' }, 'before'],
    ] as const) {
      expect(parseTransactionSearch(query)).toMatchObject({ ok: false, field });
    }
  });
  it('writes back a query string that parses to the same search', () => {
    const parsed = parseTransactionSearch({ order_id: 'a&b=c', status: 'in progress', currency: 'EUR', amount_max: '7.25' });
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    const before = { created_at_ms: 1_800_000_000_000, trace_id: 1_234_567_890 };
    const query = searchQuery(parsed.values, before);
    expect(new URLSearchParams(query).get('before')).toBe('1800000000000.1234567890');
    const again = parseTransactionSearch(Object.fromEntries(new URLSearchParams(query)));
    expect(again).toMatchObject({ ok: true, search: parsed.search, before });
  });
});

describe('CSV cells', () => {
  /** The RFC 4180 reading of one cell. */
  const read = (cell: string) => (cell.startsWith('"') ? cell.slice(1, -1).replace(/""/g, '"') : cell);
  it('round-trips any text, and a cell a spreadsheet would run as a formula starts with an apostrophe', () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        const cell = csvField(text);
        const formula = /^[=+\-@\t\r]/.test(text);
        expect(read(cell)).toBe(formula ? `'${text}` : text);
        if (!cell.startsWith('"')) expect(/[",\r\n]/.test(cell)).toBe(false);
      }),
    );
    expect(csvField(-12)).toBe('-12');
    expect(csvField(null)).toBe('');
  });
});

describe('amounts typed in a page', () => {
  it('reads back what formatAmount writes, in each exponent', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 40 }), fc.constantFrom('USD', 'JPY', 'BHD'), (minor, currency) => {
        expect(parseMajorAmount(formatAmount(minor, currency).split(' ')[0]!, currency)).toBe(minor);
      }),
    );
  });
  it('refuses more decimals than the currency has, zero, signs and separators', () => {
    for (const [text, currency] of [
      ['1.001', 'USD'],
      ['1.5', 'JPY'],
      ['0', 'USD'],
      ['0.00', 'USD'],
      ['-1', 'USD'],
      ['1,000.00', 'USD'],
      ['', 'USD'],
      ['1e3', 'USD'],
    ]) {
      expect([text, parseMajorAmount(text!, currency!)]).toEqual([text, null]);
    }
    expect(parseMajorAmount('12.5', 'USD')).toBe(1250);
  });
});

describe('chart scale', () => {
  it('is 1, 2 or 5 times a power of ten, at least the value', () => {
    fc.assert(
      fc.property(fc.double({ min: 0.001, max: 1e12, noNaN: true }), (value) => {
        const top = niceCeiling(value);
        expect(top).toBeGreaterThanOrEqual(value);
        expect(top / 10 ** Math.floor(Math.log10(top) + 1e-9)).toSatisfy((m: number) => [1, 2, 5].some((n) => Math.abs(m - n) < 1e-9));
      }),
    );
    expect(niceCeiling(0)).toBe(1);
  });
});

describe('access rules', () => {
  const operator: Viewer = { user_id: 'u1', email: 'o@x', role: 'operator', merchant_id: null };
  const staff: Viewer = { user_id: 'u2', email: 's@x', role: 'merchant', merchant_id: 'shop-a' };
  it('keeps a merchant user to its merchant and lets an operator see every one', () => {
    expect(merchantScope(operator)).toBeNull();
    expect(merchantScope(staff)).toBe('shop-a');
    expect(maySee(staff, 'shop-a')).toBe(true);
    expect(maySee(staff, 'shop-b')).toBe(false);
    expect(maySee(operator, 'shop-b')).toBe(true);
  });
  it('normalizes e-mails and counts passwords in characters', () => {
    expect(normalizeEmail(' Ops@Example.COM ')).toBe('ops@example.com');
    expect(normalizeEmail('no-at-sign')).toBeNull();
    expect(passwordProblem('é'.repeat(12))).toBeNull();
    expect(passwordProblem('x'.repeat(11))).toBe('at least 12 characters');
    expect(passwordProblem('x'.repeat(257))).toBe('at most 256 characters');
  });
});
