// When a subscription is charged. Every date is computed from the subscription's anchor (the
// moment of its first charge), never from the previous charge, so dates cannot drift: a
// monthly subscription anchored on January 31 is charged on February 28 (29 in leap years),
// March 31, April 30, ... Calendar arithmetic is in UTC and keeps the anchor's time of day.
export const BILLING_CYCLES = ['weekly', 'monthly', 'every_3_months', 'every_6_months', 'yearly'] as const;
export type BillingCycle = (typeof BILLING_CYCLES)[number];

export const TRIAL_UNITS = ['days', 'months'] as const;
export type TrialUnit = (typeof TRIAL_UNITS)[number];

export const DAY_MS = 86_400_000;

const MONTHS_PER_CYCLE: Readonly<Record<Exclude<BillingCycle, 'weekly'>, number>> = {
  monthly: 1,
  every_3_months: 3,
  every_6_months: 6,
  yearly: 12,
};

export function daysInMonth(year: number, month_index: number): number {
  return new Date(Date.UTC(year, month_index + 1, 0)).getUTCDate();
}

/** `months` calendar months after `from_ms`, on the same day (or the month's last day) and time of day. */
export function addMonthsAnchored(from_ms: number, months: number): number {
  const from = new Date(from_ms);
  const year = from.getUTCFullYear();
  const month = from.getUTCMonth();
  const day = from.getUTCDate();
  const time_of_day_ms = from_ms - Date.UTC(year, month, day);
  const total = month + months;
  const target_year = year + Math.floor(total / 12);
  const target_month = ((total % 12) + 12) % 12;
  const target_day = Math.min(day, daysInMonth(target_year, target_month));
  return Date.UTC(target_year, target_month, target_day) + time_of_day_ms;
}

/** Due time of the charge with 0-based index `index` (index 0 is the anchor itself). */
export function chargeDueAt(anchor_ms: number, index: number, cycle: BillingCycle): number {
  if (!Number.isSafeInteger(index) || index < 0) throw new RangeError(`charge index must be a whole number >= 0, got ${index}`);
  if (cycle === 'weekly') return anchor_ms + index * 7 * DAY_MS;
  return addMonthsAnchored(anchor_ms, index * MONTHS_PER_CYCLE[cycle]);
}

/** The first charge: at creation, or when the trial ends. */
export function firstChargeAt(created_ms: number, trial_period: number, unit: TrialUnit): number {
  if (trial_period <= 0) return created_ms;
  return unit === 'days' ? created_ms + trial_period * DAY_MS : addMonthsAnchored(created_ms, trial_period);
}

/** When a failed charge is tried again. */
export function retryDueAt(failed_at_ms: number, retries_delay_days: number): number {
  return failed_at_ms + retries_delay_days * DAY_MS;
}

/**
 * The first charge date of the anchor's series strictly after `after_ms` (never the anchor
 * itself: index 1 at the earliest). A charge made late (a retry that recovered after the next
 * date had passed, or a gateway that was stopped) covers the period it was made in; the next one
 * is at the following anchor date, so two charges never come back to back and a period that
 * passed without a charge is not billed afterwards (docs/subscriptions.md §5.2).
 */
export function nextChargeAfter(anchor_ms: number, cycle: BillingCycle, after_ms: number): number {
  // An estimate of the index, then exact steps (at most a couple) either way.
  let index: number;
  if (cycle === 'weekly') {
    index = Math.floor((after_ms - anchor_ms) / (7 * DAY_MS));
  } else {
    const from = new Date(anchor_ms);
    const to = new Date(after_ms);
    const months = (to.getUTCFullYear() - from.getUTCFullYear()) * 12 + (to.getUTCMonth() - from.getUTCMonth());
    index = Math.floor(months / MONTHS_PER_CYCLE[cycle]);
  }
  index = Math.max(1, index);
  while (index > 1 && chargeDueAt(anchor_ms, index - 1, cycle) > after_ms) index -= 1;
  while (chargeDueAt(anchor_ms, index, cycle) <= after_ms) index += 1;
  return chargeDueAt(anchor_ms, index, cycle);
}
