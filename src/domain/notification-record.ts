// A merchant notification in the outbox and its delivery attempts, as the gateway keeps them:
// records the state machines write, the delivery worker leases and the operator pages show.
// Defined here, so the domain depends on nothing; store/schema.ts builds its tables from them.
// Times are unix milliseconds.
// Object types, not interfaces, as Kysely's rows are: a record is also a Readonly<Record<string, unknown>>.

/** 'transaction' (signed in the body, decisions.md §1) or 'subscription_event' (Gt-Authentication header, §2). */
export type NotificationKind = 'transaction' | 'subscription_event';

/**
 * A notification's states (docs/notifications.md §5):
 *
 *   from      event                                              to
 *   pending   merchant acknowledged (status 0)                   delivered
 *   pending   merchant refused (status > 0)                      refused
 *   pending   resend bound reached / destination not allowed     failed
 *   pending   a later status of its transaction is written       superseded  (not being sent then;
 *             (or is there when its attempt fails)                           one being sent finishes first)
 *   pending   attempt failed otherwise                           pending (due again later)
 *   any       operator resend                                    pending
 */
export type NotificationState = 'pending' | 'delivered' | 'refused' | 'failed' | 'superseded';

/**
 * delivered: acknowledged; refused: the merchant answered with a positive status; retry: try
 * again later; undeliverable: it can never be delivered as addressed (the URL's destination is
 * not allowed), so it fails at once instead of being resent until the resend bound.
 */
export type AttemptOutcome = 'delivered' | 'refused' | 'retry' | 'undeliverable';

export type NotificationRow = {
  id: number;
  /** The transaction notified; null for a subscription event (migration 0003_subscriptions). */
  trace_id: number | null;
  /** 'transaction' (signed in the body, decisions.md §1) or 'subscription_event' (Gt-Authentication header, §2). */
  kind: NotificationKind;
  /** The subscription of a subscription event; null for a transaction notification. */
  subscription_id: string | null;
  merchant_id: string;
  url: string;
  /** The unsigned body, timestamp included; signed at each send so every resend is identical. */
  payload_json: string;
  state: NotificationState;
  attempts: number;
  next_attempt_at_ms: number;
  lease_until_ms: number | null;
  lease_owner: string | null;
  last_error: string | null;
  created_at_ms: number;
  updated_at_ms: number;
  /**
   * Gateway clock: the resend bound (PAYGATE_NOTIFY_MAX_AGE_SECONDS) counts from here. Set at
   * creation and again by an operator's manual resend, which so gets a whole bound of its own
   * (migration 0007_notification_bound). null only on a row written without it by hand; read
   * as created_at_ms then (boundFrom in notifications/schedule.ts).
   */
  bound_from_ms: number | null;
};

export type NotificationAttemptRow = {
  id: number;
  notification_id: number;
  attempt_no: number;
  started_at_ms: number;
  duration_ms: number;
  http_status: number | null;
  reply_excerpt: string | null;
  outcome: AttemptOutcome;
  reason: string;
};
