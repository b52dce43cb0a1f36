// What was sent to a merchant, as the operator API and the back office show it (docs/backoffice.md,
// docs/notifications.md): a transaction's or a subscription's notifications, each with its
// delivery attempts, and a manual resend. Reads only, apart from the resend's reschedule.
import { redactUrl } from '../logging.js';
import { SUBSCRIPTION_EVENT_KIND } from '../notifications/subscription-event.js';
import type { NotificationRow } from '../domain/notification-record.js';
import type { OperationDeps } from './deps.js';

type ReadDeps = Pick<OperationDeps, 'store'>;

/** One delivery attempt as recorded. */
export type NotificationAttempt = Awaited<ReturnType<OperationDeps['store']['notifications']['listAttempts']>>[number];

export interface NotificationWithAttempts {
  readonly notification: NotificationRow;
  readonly attempts: readonly NotificationAttempt[];
}

/** A notification as the back office shows it: its URL without secrets, what it reports, every attempt. */
export interface ShownNotification {
  readonly id: number;
  /** A transaction's status, or a subscription event and its status. */
  readonly reports: string;
  readonly state: NotificationRow['state'];
  readonly url: string;
  readonly attempts: number;
  readonly next_attempt_at_ms: number;
  readonly attempt_list: readonly NotificationAttempt[];
}

/**
 * Each row with its attempts. The row was read first; with `recorded_only`, an attempt recorded
 * since (it commits with its row update) is left out, so the view never shows an attempt whose
 * effect on the row it does not show.
 */
export async function withAttempts(
  deps: ReadDeps,
  rows: readonly NotificationRow[],
  recorded_only: boolean,
): Promise<NotificationWithAttempts[]> {
  const out: NotificationWithAttempts[] = [];
  for (const notification of rows) {
    const attempts = await deps.store.notifications.listAttempts(notification.id);
    out.push({ notification, attempts: recorded_only ? attempts.filter((a) => a.attempt_no <= notification.attempts) : attempts });
  }
  return out;
}

/** The back office's view of notifications (every attempt, URL redacted). */
export async function shownNotifications(deps: ReadDeps, rows: readonly NotificationRow[]): Promise<ShownNotification[]> {
  const attempts = await Promise.all(rows.map((n) => deps.store.notifications.listAttempts(n.id)));
  return rows.map((n, i) => {
    const body = JSON.parse(n.payload_json) as Record<string, unknown>;
    const reports =
      n.kind === SUBSCRIPTION_EVENT_KIND
        ? `${String(body.event ?? '')} (${String(body.subscription_status ?? '')})`
        : String(body.transaction_status ?? '');
    return {
      id: n.id,
      reports,
      state: n.state,
      url: redactUrl(n.url),
      attempts: n.attempts,
      next_attempt_at_ms: n.next_attempt_at_ms,
      attempt_list: attempts[i]!,
    };
  });
}

/** A transaction's notifications with their recorded attempts; null when there is no such transaction. */
export async function transactionNotifications(
  deps: ReadDeps,
  trace_id: number,
): Promise<{ readonly transaction_status: string; readonly notifications: NotificationWithAttempts[] } | null> {
  const transaction = await deps.store.transactions.get(trace_id);
  if (!transaction) return null;
  return {
    transaction_status: transaction.status,
    notifications: await withAttempts(deps, await deps.store.notifications.listOfTransaction(trace_id), true),
  };
}

/** A subscription's event notifications with their recorded attempts; [] when none (no such subscription). */
export async function subscriptionNotifications(deps: ReadDeps, subscription_id: string): Promise<NotificationWithAttempts[]> {
  return withAttempts(deps, await deps.store.notifications.listOfSubscription(subscription_id), true);
}

export type ResendOutcome =
  | { readonly kind: 'not_found' }
  /** Scheduled now; the row as it is after. */
  | { readonly kind: 'scheduled'; readonly notification: NotificationRow }
  /** Refused: an instance holds a live lease (an attempt in flight). */
  | { readonly kind: 'in_flight'; readonly notification: NotificationRow };

/**
 * Sends a notification again now, same content (the stored body is untouched, so the merchant
 * gets the same content and signature again). Refused while an instance holds a live lease: the
 * attempt in flight would record its own outcome over the resend (or the merchant would get two
 * sends at once). `may_see` keeps another merchant's notification unknown to a merchant's staff.
 */
export async function resendNotification(
  deps: Pick<OperationDeps, 'store' | 'clock' | 'wall_clock'>,
  id: number,
  may_see: (merchant_id: string) => boolean = () => true,
): Promise<ResendOutcome> {
  const found = await deps.store.notifications.get(id);
  if (!found || !may_see(found.merchant_id)) return { kind: 'not_found' };
  const now_ms = deps.clock.now_ms();
  // Leases are on the wall clock, whatever the sandbox clock says.
  const scheduled = await deps.store.notifications.reschedule(id, now_ms, now_ms, deps.wall_clock.now_ms());
  const notification = (await deps.store.notifications.get(id)) ?? found;
  return { kind: scheduled ? 'scheduled' : 'in_flight', notification };
}
