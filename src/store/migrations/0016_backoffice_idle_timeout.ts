// Migration 0016_backoffice_idle_timeout: when a back-office session was last used, for the idle
// timeout. Its own file so each migration reads on its own; its key is recorded in databases,
// never rename it.
import { type Kysely, type Migration, sql } from 'kysely';

/**
 * 0016: when a back-office session was last used (gateway clock), so one left idle past
 * PAYGATE_BACKOFFICE_IDLE_TIMEOUT_MINUTES ends on whichever instance sees it next (PCI DSS 8.2.8).
 * Kept in the row, not in memory, because every instance sharing the database serves every
 * session. Sessions open at the upgrade count as last used at their sign-in: at worst their
 * person signs in again, never does an idle one live on.
 */
export function backofficeIdleTimeout(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .alterTable('backoffice_sessions')
        .addColumn('last_seen_at_ms', 'bigint', (c) => c.notNull().defaultTo(0))
        .execute();
      await sql`UPDATE backoffice_sessions SET last_seen_at_ms = created_at_ms`.execute(db);
    },
  };
}
