// Migration 0002_payouts: the payout's data_ fields and the operator's payout-list index. Its own
// file so each migration reads on its own; its key is recorded in databases, never rename it.
import type { Kysely, Migration } from 'kysely';

/** Payouts: the direct payout's data_ fields, and the index the operator's payout list reads. */
export function payouts(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('transactions').addColumn('data_json', 'text').execute();
      await db.schema
        .createIndex('transactions_type_status')
        .on('transactions')
        .columns(['transaction_type', 'status', 'trace_id'])
        .execute();
    },
  };
}
