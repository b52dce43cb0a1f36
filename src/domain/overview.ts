// The back office's overview figures (docs/backoffice.md), computed from the day-by-day sums the
// store gives (store/transaction-store.ts activitySince): pure arithmetic, so that a test checks
// every figure against transactions it made. Volume is what approved sales took, per currency
// (currencies are never added together); the approval rate counts sales that reached a final
// approved, declined or rejected status, not those still pending or in error.
import type { TransactionStatus, TransactionType } from './transaction-state.js';

/** One day's transactions of one type, status and currency (the overview's sums). */
export interface ActivityRow {
  /** Days since the epoch (UTC). */
  readonly day: number;
  readonly transaction_type: TransactionType;
  readonly status: TransactionStatus;
  readonly currency: string;
  readonly count: number;
  readonly amount_minor: number;
}

export const OVERVIEW_DAYS = 30;
/** A sale's final refusals (the issuer's or the processor's); `error` is a failure to process, left out of the rate. */
const NOT_APPROVED: ReadonlySet<string> = new Set(['declined', 'rejected']);
export const DAY_MS = 86_400_000;

export interface CurrencyFigure {
  readonly currency: string;
  readonly amount_minor: number;
  readonly count: number;
}

export interface Overview {
  /** The days shown, oldest first (days since the epoch, UTC); the last is today. */
  readonly days: readonly number[];
  readonly today_volume: readonly CurrencyFigure[];
  /** Approved sales over the period, per currency, the largest count first. */
  readonly period_volume: readonly CurrencyFigure[];
  /** Per currency (same order as period_volume), the approved sales' amount each day. */
  readonly volume_by_day: Readonly<Record<string, readonly number[]>>;
  readonly approved_by_day: readonly number[];
  /** Sales declined or rejected each day. */
  readonly declined_by_day: readonly number[];
  /** Approved sales / (approved + declined + rejected) over the period; null when none finished. */
  readonly approval_rate: number | null;
  readonly today_approval_rate: number | null;
  readonly period_refunds: readonly CurrencyFigure[];
}

function add(map: Map<string, { amount_minor: number; count: number }>, currency: string, amount_minor: number, count: number): void {
  const entry = map.get(currency) ?? { amount_minor: 0, count: 0 };
  entry.amount_minor += amount_minor;
  entry.count += count;
  map.set(currency, entry);
}

function figures(map: Map<string, { amount_minor: number; count: number }>): CurrencyFigure[] {
  return [...map.entries()]
    .map(([currency, v]) => ({ currency, ...v }))
    .sort((a, b) => b.count - a.count || a.currency.localeCompare(b.currency));
}

function rate(approved: number, declined: number): number | null {
  return approved + declined === 0 ? null : approved / (approved + declined);
}

/** The overview of the OVERVIEW_DAYS days that end with `today` (a day number), from the store's sums since the first of them. */
export function computeOverview(rows: readonly ActivityRow[], today: number): Overview {
  const first = today - OVERVIEW_DAYS + 1;
  const days = Array.from({ length: OVERVIEW_DAYS }, (_, i) => first + i);
  const today_volume = new Map<string, { amount_minor: number; count: number }>();
  const period_volume = new Map<string, { amount_minor: number; count: number }>();
  const refunds = new Map<string, { amount_minor: number; count: number }>();
  const volume_by_day: Record<string, number[]> = {};
  const approved_by_day = days.map(() => 0);
  const declined_by_day = days.map(() => 0);
  for (const row of rows) {
    const index = row.day - first;
    if (index < 0 || index >= OVERVIEW_DAYS) continue;
    if (row.transaction_type === 'refund' && row.status === 'approved') add(refunds, row.currency, row.amount_minor, row.count);
    if (row.transaction_type !== 'sale') continue;
    if (row.status === 'approved') {
      approved_by_day[index]! += row.count;
      add(period_volume, row.currency, row.amount_minor, row.count);
      if (row.day === today) add(today_volume, row.currency, row.amount_minor, row.count);
      (volume_by_day[row.currency] ??= days.map(() => 0))[index]! += row.amount_minor;
    } else if (NOT_APPROVED.has(row.status)) {
      declined_by_day[index]! += row.count;
    }
  }
  const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);
  return {
    days,
    today_volume: figures(today_volume),
    period_volume: figures(period_volume),
    volume_by_day,
    approved_by_day,
    declined_by_day,
    approval_rate: rate(sum(approved_by_day), sum(declined_by_day)),
    today_approval_rate: rate(approved_by_day[OVERVIEW_DAYS - 1]!, declined_by_day[OVERVIEW_DAYS - 1]!),
    period_refunds: figures(refunds),
  };
}
