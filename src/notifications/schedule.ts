// When a notification is tried again, and when the gateway gives up (decisions.md §8, issue 4);
// and the row a new notification starts as. Pure: the times come from the gateway clock through the caller.
import type { Insertable } from 'kysely';
import type { NotificationTable } from '../store/schema.js';

/** A notification's states, with their table (docs/notifications.md §5): the domain's, beside its record. */
export type { NotificationState } from '../domain/notification-record.js';

export interface RetrySchedule {
  /** PAYGATE_NOTIFY_RETRY_SECONDS: the n-th resend waits retry_seconds[min(n-1, length-1)] seconds. */
  readonly retry_seconds: readonly number[];
  /** PAYGATE_NOTIFY_MAX_AGE_SECONDS: no attempt is made later than this after the bound's start (boundFrom). */
  readonly max_age_seconds: number;
}

/** Seconds the n-th resend (n ≥ 1) waits after the attempt before it. */
export function resendDelaySeconds(n: number, schedule: RetrySchedule): number {
  const list = schedule.retry_seconds;
  if (list.length === 0) return 300;
  return list[Math.min(Math.max(n, 1) - 1, list.length - 1)]!;
}

/**
 * Where the bound counts from: the notification's creation, or the operator's last manual resend
 * (bound_from_ms, migration 0007), which so gets a whole bound of its own.
 */
export function boundFrom(row: { readonly bound_from_ms: number | null; readonly created_at_ms: number }): number {
  return row.bound_from_ms ?? row.created_at_ms;
}

export type AfterFailure = { readonly state: 'pending'; readonly next_attempt_at_ms: number } | { readonly state: 'failed' };

/**
 * After the `attempts`-th attempt failed at `now_ms`: the next attempt, or 'failed' once the
 * bound (counted from `bound_from_ms`, see boundFrom) is reached. The last attempt is made at the
 * bound itself rather than skipped, so a schedule step longer than what remains still gives the
 * merchant one more chance. All times are on the gateway clock.
 */
export function afterFailure(
  bound_from_ms: number,
  attempts: number,
  now_ms: number,
  schedule: RetrySchedule,
  delay_ms?: number,
): AfterFailure {
  const deadline_ms = bound_from_ms + schedule.max_age_seconds * 1000;
  if (now_ms >= deadline_ms) return { state: 'failed' };
  const wait_ms = delay_ms ?? resendDelaySeconds(attempts, schedule) * 1000;
  return { state: 'pending', next_attempt_at_ms: Math.min(now_ms + wait_ms, deadline_ms) };
}

/** Who a new notification is about and where it goes; the rest of its outbox row is the same for every kind. */
export type NotificationSubject = Pick<Insertable<NotificationTable>, 'kind' | 'trace_id' | 'subscription_id' | 'merchant_id' | 'url'>;

/** A new notification's outbox row: pending, due at once, never tried, unleased. */
export function newNotificationRow(subject: NotificationSubject, payload: object, now_ms: number): Insertable<NotificationTable> {
  return {
    ...subject,
    payload_json: JSON.stringify(payload),
    state: 'pending',
    next_attempt_at_ms: now_ms,
    lease_until_ms: null,
    lease_owner: null,
    last_error: null,
    created_at_ms: now_ms,
    updated_at_ms: now_ms,
  };
}
