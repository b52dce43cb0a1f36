// Migration 0026_sqlite_one_trace_index (issue 29, item 1): a SQLite notification is written into
// one index on its trace_id instead of two. Its own file so each migration reads on its own; its
// key is recorded in databases, never rename it once released.
import { type Kysely, type Migration, sql } from 'kysely';
import type { Dialect } from '../store.js';

/**
 * 0026, SQLite only (PostgreSQL keeps its schema; the key is recorded there all the same): drops
 * notifications_pending_trace (trace_id, id) WHERE state = 'pending' (migration 0008).
 *
 * On SQLite notifications_trace (trace_id) holds the same order: an index entry ends with the
 * rowid, which is `id` (INTEGER PRIMARY KEY). So the in-order check of a lease (an older pending
 * notification of the same transaction?) and the supersede of a status change are one probe of
 * notifications_trace, reading the state of the transaction's older notifications (a few at most)
 * from their rows. Since trace_ids are drawn at random (migration 0024), each entry lands on a
 * random page of its index: the pending index cost every sale an insert and every delivery a
 * delete on pages of their own, about 25 µs of a sale's statements (a micro-benchmark of the
 * sale's writes: bench/RESULTS.md, thirty-third session).
 *
 * PostgreSQL keeps it: there the pending-only index is what keeps the check's plan a probe when
 * the table's statistics lag (docs/decisions.md), and an index on trace_id alone is not in id order.
 */
export function sqliteOneTraceIndex(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (dialect !== 'sqlite') return;
      await sql`DROP INDEX notifications_pending_trace`.execute(db);
    },
  };
}
