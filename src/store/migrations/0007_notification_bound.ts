// Migration 0007_notification_bound: where a notification's resend bound counts from. Its own
// file so each migration reads on its own; its key is recorded in databases, never rename it.
import { type Kysely, type Migration, sql } from 'kysely';

/**
 * 0007: notifications.bound_from_ms, where the resend bound counts from: the creation time, and
 * again the time of an operator's manual resend, so a resend of a notification older than the
 * bound gets a whole schedule instead of one attempt (docs/notifications.md §4, §8). Existing
 * rows get their creation time.
 */
export function notificationBound(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('notifications').addColumn('bound_from_ms', 'bigint').execute();
      await sql`UPDATE notifications SET bound_from_ms = created_at_ms`.execute(db);
    },
  };
}
