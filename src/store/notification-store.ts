// The notifications outbox: signed notifications written in the same database transaction as the
// status change they tell of, leased to the delivery worker, and their delivery attempts.
import type { Insertable } from 'kysely';
import type { NotificationAttemptTable, NotificationRow, NotificationTable } from './schema.js';

/** The two clocks of a notification lease round (notifications.lease, subscriptions.claimDue). */
export interface LeaseTimes {
  /** Gateway clock (sandbox-movable): a notification is due once next_attempt_at_ms ≤ due_ms. */
  readonly due_ms: number;
  /** Real wall clock: a lease is live while lease_until_ms ≥ wall_ms; a new one ends at wall_ms + lease_ms. */
  readonly wall_ms: number;
}

/**
 * How one attempt of finishAttempts ended: the patch written, the notification superseded (the
 * attempt recorded either way), or nothing written. `finished_with_next`: the patch written took
 * the notification out of `pending` while a later one of its transaction or subscription is
 * pending, which in-order delivery held back until now (the delivery worker leases again at once).
 */
export type FinishOutcome = 'finished' | 'finished_with_next' | 'superseded' | 'lease_lost';

/** Attempts one finishAttempts call records, at most: the delivery worker's batch (notifications/finish-batch.ts). */
export const FINISH_BATCH_MAX = 100;

/** One ended attempt: its record (which names the notification), the notification's new state, and the lease it was sent under. */
export interface AttemptFinish {
  readonly owner: string;
  readonly patch: Pick<NotificationRow, 'state' | 'next_attempt_at_ms' | 'last_error'> & { readonly attempts: number };
  readonly attempt: Insertable<NotificationAttemptTable> & { readonly notification_id: number };
}

export interface NotificationStore {
  insert(row: Insertable<NotificationTable>): Promise<number>;
  listOfTransaction(trace_id: number): Promise<NotificationRow[]>;
  /** The event notifications of a subscription, oldest first (issue 6). */
  listOfSubscription(subscription_id: string): Promise<NotificationRow[]>;
  /**
   * Leases due notifications to one owner; no other owner gets them until the lease ends.
   * A notification is not leased while an older one (lower id) of the same trace_id is still
   * 'pending', so the notifications of one transaction reach the merchant in order.
   * Due times are compared with `at.due_ms` (gateway clock), leases with `at.wall_ms` (real
   * wall clock): moving the sandbox clock never ends a lease held by an attempt in flight.
   */
  lease(at: LeaseTimes, limit: number, lease_ms: number, owner: string): Promise<NotificationRow[]>;
  /**
   * Ends attempts: each notification's new state (only while its `owner` still holds the lease)
   * and the attempt's record, atomically, also outside a transaction (one statement on
   * PostgreSQL however many attempts, one transaction on SQLite). A transaction notification
   * left pending by its patch that has a newer notification of its transaction is superseded
   * instead (never sent again), in the same step: no statement of its own on every failed attempt.
   * One outcome per attempt, in order: 'lease_lost', and nothing written for it, when its lease
   * was lost; 'finished_with_next' when a later notification it held back is still pending. At most FINISH_BATCH_MAX attempts a call, each notification at most once.
   */
  finishAttempts(finishes: readonly AttemptFinish[], now_ms: number): Promise<FinishOutcome[]>;
  listAttempts(notification_id: number): Promise<Insertable<NotificationAttemptTable>[]>;
  get(id: number): Promise<NotificationRow | null>;
  /**
   * The operator's manual resend: makes the notification `pending`, due at next_attempt_at_ms,
   * with a fresh resend bound from now_ms (bound_from_ms), and drops any lease that has ended, so
   * an attempt cut off earlier can no longer record over it. Never while an attempt may be in
   * flight: with `lease_now_ms` (real wall clock), not while a lease lasts (lease_until_ms ≥
   * lease_now_ms); without it, not while any lease is held. False when there is no such
   * notification or it is in flight (tell them apart with getNotification).
   */
  reschedule(id: number, next_attempt_at_ms: number, now_ms: number, lease_now_ms?: number): Promise<boolean>;
  /** Notifications the merchant has not acknowledged: still pending, or given up (failed, undeliverable). */
  countUnacknowledged(merchant_id: string | null): Promise<number>;
}
