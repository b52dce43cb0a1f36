// Migration 0008_pending_notification_indexes: partial indexes of pending notifications for the
// lease. Its own file so each migration reads on its own; its key is recorded in databases,
// never rename it.
import { type Kysely, type Migration, sql } from 'kysely';

/**
 * 0008: the notification lease reads pending notifications only. The lease takes the due ones in
 * order and skips any with an older pending notification of the same transaction or subscription
 * (in-order delivery). With notifications_due on (state, next_attempt_at_ms) over every row and
 * the per-transaction check left to notifications_trace, PostgreSQL planned the check as a
 * BitmapAnd with `state = 'pending'`: every pending notification read once per due candidate.
 * With thousands of resends waiting and a backlog of due ones, a lease took 400 ms and 45,000
 * buffer reads (measured in the sale benchmark), so the backlog grew while leasing slowed. These
 * partial indexes hold pending rows only, so each check is one short index probe and the due
 * scan is in the lease's order, whatever the planner's row estimates; delivered and failed
 * notifications leave them.
 */
export function pendingNotificationIndexes(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await sql`DROP INDEX notifications_due`.execute(db);
      await sql`CREATE INDEX notifications_pending_due ON notifications (next_attempt_at_ms, id) WHERE state = 'pending'`.execute(db);
      await sql`CREATE INDEX notifications_pending_trace ON notifications (trace_id, id)
        WHERE state = 'pending' AND trace_id IS NOT NULL`.execute(db);
      await sql`CREATE INDEX notifications_pending_subscription ON notifications (subscription_id, id)
        WHERE state = 'pending' AND subscription_id IS NOT NULL`.execute(db);
    },
  };
}
