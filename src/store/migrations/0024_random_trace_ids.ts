// Migration 0024_random_trace_ids (issue 30 item 7): new transactions get trace_ids drawn at
// random (domain/trace-id.ts), so the lists that went "newest first" by trace_id go by
// (created_at_ms, trace_id) and need indexes in that order. Its own file so each migration reads
// on its own; its key is recorded in databases, never rename it once released. (0023 is left to
// another change under way at the same time.)
import { type Kysely, type Migration, sql } from 'kysely';
import { RANDOM_TRACE_ID_MIN } from '../../domain/trace-id.js';

/**
 * 0024: existing rows keep their trace_ids (nothing is renumbered: merchants hold them). The
 * migration refuses a database holding a trace_id at or above RANDOM_TRACE_ID_MIN (10^9), where
 * drawn ids could meet sequential ones; no release numbered that far.
 *
 * Indexes, each replacing one that ordered by trace_id alone:
 * - transactions_merchant_created (merchant_id, created_at_ms, trace_id), for transactions_merchant_trace:
 *   a merchant's search, newest first;
 * - transactions_created_trace (created_at_ms, trace_id), for transactions_created: the operators'
 *   search over every merchant, and the overview's sums since a day (its prefix);
 * - transactions_payouts_created (status, created_at_ms, trace_id) WHERE transaction_type = 'payout',
 *   for transactions_payouts: the operator's payout list, oldest first, and the interrupted payouts;
 * - transactions_pending_created (created_at_ms, trace_id) WHERE status = 'pending', for
 *   transactions_pending: the stuck-transaction sweep, oldest first.
 *
 * The column's own default stays (bigserial on PostgreSQL, the rowid on SQLite, which cannot drop
 * it without rebuilding the table): the store names every new row's trace_id, and the sequence,
 * below 10^9, never reaches a drawn id.
 */
export function randomTraceIds(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const { rows } = await sql<{ highest: number | string | null }>`select max(trace_id) as highest from transactions`.execute(db);
      const highest = Number(rows[0]?.highest ?? 0);
      if (highest >= RANDOM_TRACE_ID_MIN) {
        throw new Error(
          `transactions hold trace_id ${highest}, at or above ${RANDOM_TRACE_ID_MIN} where random trace_ids start: ` +
            'this database was not numbered by paygate; ask before migrating it',
        );
      }
      await sql`DROP INDEX transactions_merchant_trace`.execute(db);
      await sql`CREATE INDEX transactions_merchant_created ON transactions (merchant_id, created_at_ms, trace_id)`.execute(db);
      await sql`DROP INDEX transactions_created`.execute(db);
      await sql`CREATE INDEX transactions_created_trace ON transactions (created_at_ms, trace_id)`.execute(db);
      await sql`DROP INDEX transactions_payouts`.execute(db);
      await sql`CREATE INDEX transactions_payouts_created ON transactions (status, created_at_ms, trace_id)
        WHERE transaction_type = 'payout'`.execute(db);
      await sql`DROP INDEX transactions_pending`.execute(db);
      await sql`CREATE INDEX transactions_pending_created ON transactions (created_at_ms, trace_id) WHERE status = 'pending'`.execute(db);
    },
  };
}
