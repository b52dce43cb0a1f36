// Migration 0010_connectors: configured gateways (connector, sealed settings, enabled), applied
// webhook events, and the live-processor lookup index. Its own file so each migration reads on
// its own; its key is recorded in databases, never rename it.
import { type Kysely, type Migration, sql } from 'kysely';

/**
 * 0010: gateways are configured, not built in (decisions.md §13, docs/connectors.md). A gateway
 * names its connector (the column was `processor`), keeps its settings sealed, can be disabled,
 * and records when its settings last changed. Webhook events applied are kept by the processor's
 * event id so a replay changes nothing. A due processor_lookup counts its attempts. A payout keeps
 * its customer sealed for a connector's card payout after an operator's release. Webhooks find a
 * live processor's transaction by its id there: that index leaves the sandbox's out, so a
 * sandbox sale writes no entry into it.
 */
export function connectors(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('gateways').renameColumn('processor', 'connector').execute();
      await db.schema.alterTable('gateways').addColumn('settings_sealed', 'text').execute();
      await db.schema
        .alterTable('gateways')
        .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
        .execute();
      await db.schema.alterTable('gateways').addColumn('updated_at_ms', 'bigint').execute();
      await sql`UPDATE gateways SET updated_at_ms = created_at_ms`.execute(db);
      await db.schema
        .createTable('processor_events')
        .addColumn('gateway_id', 'text', (c) => c.notNull().references('gateways.gateway_id'))
        .addColumn('event_id', 'text', (c) => c.notNull())
        .addColumn('event_type', 'text', (c) => c.notNull())
        .addColumn('trace_id', 'bigint')
        .addColumn('outcome', 'text', (c) => c.notNull())
        .addColumn('received_at_ms', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('processor_events_pk', ['gateway_id', 'event_id'])
        .execute();
      await db.schema
        .alterTable('due_actions')
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.alterTable('transactions').addColumn('customer_sealed', 'text').execute();
      await sql`CREATE INDEX transactions_psp ON transactions (gateway_id, psp_transaction_id)
        WHERE psp_transaction_id IS NOT NULL AND payment_processor <> 'sandbox'`.execute(db);
    },
  };
}
