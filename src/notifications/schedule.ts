// When a notification is tried again, and when the gateway gives up (decisions.md §8, issue 4).
// Pure: the times come from the gateway clock through the caller.

export type NotificationState = 'pending' | 'delivered' | 'refused' | 'failed';

export interface RetrySchedule {
  /** PAYGATE_NOTIFY_RETRY_SECONDS: the n-th resend waits retry_seconds[min(n-1, length-1)] seconds. */
  readonly retry_seconds: readonly number[];
  /** PAYGATE_NOTIFY_MAX_AGE_SECONDS: no attempt is made later than this after the notification was created. */
  readonly max_age_seconds: number;
}

/** Seconds the n-th resend (n ≥ 1) waits after the attempt before it. */
export function resendDelaySeconds(n: number, schedule: RetrySchedule): number {
  const list = schedule.retry_seconds;
  if (list.length === 0) return 300;
  return list[Math.min(Math.max(n, 1) - 1, list.length - 1)]!;
}

export type AfterFailure =
  | { readonly state: 'pending'; readonly next_attempt_at_ms: number }
  | { readonly state: 'failed' };

/**
 * After the `attempts`-th attempt failed at `now_ms`: the next attempt, or 'failed' once the
 * bound is reached. The last attempt is made at the bound itself rather than skipped, so a
 * schedule step longer than what remains still gives the merchant one more chance.
 */
export function afterFailure(created_at_ms: number, attempts: number, now_ms: number, schedule: RetrySchedule, delay_ms?: number): AfterFailure {
  const deadline_ms = created_at_ms + schedule.max_age_seconds * 1000;
  if (now_ms >= deadline_ms) return { state: 'failed' };
  const wait_ms = delay_ms ?? resendDelaySeconds(attempts, schedule) * 1000;
  return { state: 'pending', next_attempt_at_ms: Math.min(now_ms + wait_ms, deadline_ms) };
}
