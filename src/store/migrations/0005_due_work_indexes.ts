// Migration 0005_due_work_indexes: the index the due-work sweep's stuck-transaction scan reads.
// Its own file so each migration reads on its own; its key is recorded in databases, never rename it.
import type { Kysely, Migration } from 'kysely';

/**
 * 0005: the due-work sweep looks for transactions still `pending` with no answer
 * (findStuckTransactions); without an index on status it read every transaction on each pass.
 */
export function dueWorkIndexes(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.createIndex('transactions_status_created').on('transactions').columns(['status', 'created_at_ms']).execute();
    },
  };
}
