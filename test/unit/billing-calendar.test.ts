// The billing calendar: month ends, leap years, trials, and the property that the n-th charge
// date is computed from the anchor, so it never drifts from the anchor's day.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  addMonthsAnchored,
  BILLING_CYCLES,
  chargeDueAt,
  DAY_MS,
  daysInMonth,
  firstChargeAt,
  nextChargeAfter,
  retryDueAt,
} from '../../src/domain/billing-calendar.js';
import { attemptInSeries, nextSeriesAttempt } from '../../src/operations/subscription-renewal.js';

const MONTHS = { monthly: 1, every_3_months: 3, every_6_months: 6, yearly: 12 } as const;
// 1970..2200, any time of day.
const anchorArb = fc.integer({ min: 0, max: Date.UTC(2200, 0, 1) });
const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();

describe('monthly charges around month ends', () => {
  it('Jan 31 → Feb 28 → Mar 31 → Apr 30 (anchored on the original day, not the previous charge)', () => {
    const anchor = at('2025-01-31T10:15:00.000Z');
    expect([0, 1, 2, 3, 4].map((n) => iso(chargeDueAt(anchor, n, 'monthly')))).toEqual([
      '2025-01-31T10:15:00.000Z',
      '2025-02-28T10:15:00.000Z',
      '2025-03-31T10:15:00.000Z',
      '2025-04-30T10:15:00.000Z',
      '2025-05-31T10:15:00.000Z',
    ]);
  });

  it('gives Feb 29 in a leap year', () => {
    expect(iso(chargeDueAt(at('2028-01-31T00:00:00.000Z'), 1, 'monthly'))).toBe('2028-02-29T00:00:00.000Z');
    expect(iso(chargeDueAt(at('2028-02-29T08:00:00.000Z'), 1, 'yearly'))).toBe('2029-02-28T08:00:00.000Z');
    expect(iso(chargeDueAt(at('2028-02-29T08:00:00.000Z'), 4, 'yearly'))).toBe('2032-02-29T08:00:00.000Z');
  });

  it('crosses the year end', () => {
    expect(iso(chargeDueAt(at('2025-11-30T00:00:00.000Z'), 3, 'monthly'))).toBe('2026-02-28T00:00:00.000Z');
    expect(iso(chargeDueAt(at('2025-08-31T00:00:00.000Z'), 2, 'every_3_months'))).toBe('2026-02-28T00:00:00.000Z');
    expect(iso(chargeDueAt(at('2025-08-31T00:00:00.000Z'), 1, 'every_6_months'))).toBe('2026-02-28T00:00:00.000Z');
  });

  it('counts weeks as 7 days', () => {
    expect(chargeDueAt(at('2025-01-01T00:00:00.000Z'), 3, 'weekly')).toBe(at('2025-01-22T00:00:00.000Z'));
  });

  it('refuses a negative or fractional index', () => {
    expect(() => chargeDueAt(0, -1, 'monthly')).toThrow(RangeError);
    expect(() => chargeDueAt(0, 1.5, 'monthly')).toThrow(RangeError);
  });
});

describe('trials and retries', () => {
  it('a trial of days or months delays the first charge; no trial charges at once', () => {
    const created = at('2025-01-31T12:00:00.000Z');
    expect(firstChargeAt(created, 0, 'days')).toBe(created);
    expect(firstChargeAt(created, 14, 'days')).toBe(created + 14 * DAY_MS);
    expect(iso(firstChargeAt(created, 1, 'months'))).toBe('2025-02-28T12:00:00.000Z');
  });

  it('a retry waits retries_delay_days', () => {
    expect(retryDueAt(1000, 3)).toBe(1000 + 3 * DAY_MS);
  });
});

describe('the next charge after a late one (docs/subscriptions.md §5.2)', () => {
  it('is the next anchor date when the charge was made on time', () => {
    const anchor = at('2025-01-31T10:00:00.000Z');
    expect(iso(nextChargeAfter(anchor, 'monthly', anchor))).toBe('2025-02-28T10:00:00.000Z');
    expect(iso(nextChargeAfter(anchor, 'monthly', at('2025-02-28T10:00:05.000Z')))).toBe('2025-03-31T10:00:00.000Z');
    expect(iso(nextChargeAfter(anchor, 'every_3_months', anchor))).toBe('2025-04-30T10:00:00.000Z');
    expect(iso(nextChargeAfter(anchor, 'every_6_months', at('2025-04-30T10:00:00.000Z')))).toBe('2025-07-31T10:00:00.000Z');
    expect(iso(nextChargeAfter(anchor, 'yearly', anchor))).toBe('2026-01-31T10:00:00.000Z');
  });

  it('a weekly charge recovered after its retries outlasted the week: the next is the boundary after the recovery, not at once', () => {
    const anchor = at('2025-03-03T09:00:00.000Z');
    // First try on day 0, three retries every 3 days: approved on day 9. Day 7 has passed; day 14 is next.
    const recovered = anchor + 9 * DAY_MS + 1234;
    expect(iso(nextChargeAfter(anchor, 'weekly', recovered))).toBe('2025-03-17T09:00:00.000Z');
    // Exactly on a boundary: that boundary has been charged; the next is a week later.
    expect(nextChargeAfter(anchor, 'weekly', anchor + 14 * DAY_MS)).toBe(anchor + 21 * DAY_MS);
  });

  it('a monthly charge recovered after the next date passed skips to the date after it', () => {
    const anchor = at('2025-01-31T00:00:00.000Z');
    expect(iso(nextChargeAfter(anchor, 'monthly', at('2025-03-02T00:00:00.000Z')))).toBe('2025-03-31T00:00:00.000Z');
    expect(iso(nextChargeAfter(anchor, 'every_3_months', at('2025-05-01T00:00:00.000Z')))).toBe('2025-07-31T00:00:00.000Z');
  });

  it('property: the smallest anchor date (index ≥ 1) strictly after the given time', () => {
    fc.assert(
      fc.property(anchorArb, fc.integer({ min: 0, max: 6 * 366 * DAY_MS }), fc.constantFrom(...BILLING_CYCLES), (anchor, later, cycle) => {
        const after = anchor + later;
        const next = nextChargeAfter(anchor, cycle, after);
        expect(next).toBeGreaterThan(after);
        let k = 1;
        while (chargeDueAt(anchor, k, cycle) !== next) {
          // Every earlier date of the series is not after `after`.
          expect(chargeDueAt(anchor, k, cycle)).toBeLessThanOrEqual(after);
          k += 1;
          expect(k).toBeLessThan(2000);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('attempt numbers across a reactivation', () => {
  it('a series is retries_number + 1 attempts; activation starts the next series, never reusing an attempt number', () => {
    // retries_number 2: attempts 0, 1, 2 (deactivated with attempt 3); reactivated: 3, 4, 5.
    expect([0, 1, 2, 3, 4, 5].map((attempt) => attemptInSeries({ attempt, retries_number: 2 }))).toEqual([0, 1, 2, 0, 1, 2]);
    expect(nextSeriesAttempt({ attempt: 3, retries_number: 2 })).toBe(3);
    expect(nextSeriesAttempt({ attempt: 0, retries_number: 2 })).toBe(0);
    // An inactive one left mid-series (by migration 0006) starts a whole new series.
    expect(nextSeriesAttempt({ attempt: 1, retries_number: 2 })).toBe(3);
    expect(nextSeriesAttempt({ attempt: 1, retries_number: 0 })).toBe(1);
    expect(attemptInSeries({ attempt: 7, retries_number: 0 })).toBe(0);
  });
});

describe('properties', () => {
  it("the n-th monthly-type charge falls on the anchor day (or the month's last day), same time of day, n cycles later", () => {
    fc.assert(
      fc.property(
        anchorArb,
        fc.integer({ min: 0, max: 600 }),
        fc.constantFrom('monthly', 'every_3_months', 'every_6_months', 'yearly' as const),
        (anchor, n, cycle) => {
          const a = new Date(anchor);
          const due = new Date(chargeDueAt(anchor, n, cycle));
          const months = a.getUTCMonth() + n * MONTHS[cycle];
          expect(due.getUTCFullYear()).toBe(a.getUTCFullYear() + Math.floor(months / 12));
          expect(due.getUTCMonth()).toBe(months % 12);
          expect(due.getUTCDate()).toBe(Math.min(a.getUTCDate(), daysInMonth(due.getUTCFullYear(), due.getUTCMonth())));
          expect(due.getTime() % DAY_MS).toBe(anchor % DAY_MS);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('never drifts: a short month on the way does not pull later charges off the anchor day', () => {
    fc.assert(
      fc.property(anchorArb, fc.integer({ min: 1, max: 240 }), (anchor, n) => {
        // Stepping charge by charge from the previous date would drift (Jan 31 → Feb 28 → Mar 28);
        // the anchor-based date returns to the anchor day whenever the month has it.
        const day = new Date(anchor).getUTCDate();
        const due = new Date(chargeDueAt(anchor, n, 'monthly'));
        if (daysInMonth(due.getUTCFullYear(), due.getUTCMonth()) >= day) expect(due.getUTCDate()).toBe(day);
      }),
      { numRuns: 2000 },
    );
  });

  it('charge dates strictly increase, one cycle apart at most 31 days per month', () => {
    fc.assert(
      fc.property(anchorArb, fc.integer({ min: 0, max: 300 }), fc.constantFrom(...BILLING_CYCLES), (anchor, n, cycle) => {
        const here = chargeDueAt(anchor, n, cycle);
        const next = chargeDueAt(anchor, n + 1, cycle);
        expect(next).toBeGreaterThan(here);
        const months = cycle === 'weekly' ? 0 : MONTHS[cycle];
        const gap_days = (next - here) / DAY_MS;
        if (cycle === 'weekly') expect(gap_days).toBe(7);
        else {
          expect(gap_days).toBeGreaterThanOrEqual(months * 28 - 3);
          expect(gap_days).toBeLessThanOrEqual(months * 31 + 3);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('addMonthsAnchored(x, 0) is x', () => {
    fc.assert(
      fc.property(anchorArb, (anchor) => {
        expect(addMonthsAnchored(anchor, 0)).toBe(anchor);
      }),
    );
  });
});
