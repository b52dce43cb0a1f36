// Migration 0018_authorizations: what the life of a payment after its authorization needs
// (decisions §16): the capture or void of each authorization, the disputes (chargebacks) of
// payments, and the cashier order's transaction_type. Its own file so each migration reads on its
// own; its key is recorded in databases, never rename it.
import { type Kysely, type Migration, sql } from 'kysely';

/**
 * 0018:
 * - authorization_actions: one row per authorization captured or voided (its trace_id is the
 *   key, so an authorization is captured or voided once, however often and by whomever it is
 *   asked). The unsettled ones (requested, accepted) are found by a partial index.
 * - disputes: one row per dispute at the processor (gateway, its dispute id); a payment's
 *   disputes and the open ones by deadline are read by their indexes.
 * - transactions_authorized: the authorizations still `authorized`, oldest first, for the expiry
 *   that voids them (PAYGATE_AUTHORIZATION_TTL_HOURS); partial, so sales cost it nothing.
 * - cashier_sessions.transaction_type: init-checkout's optional `sale` or `authorize`.
 */
export function authorizations(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('authorization_actions')
        .addColumn('trace_id', 'bigint', (c) => c.primaryKey().references('transactions.trace_id'))
        .addColumn('action', 'text', (c) => c.notNull().check(sql`action IN ('capture', 'void')`))
        .addColumn('authorized_minor', 'bigint', (c) => c.notNull().check(sql`authorized_minor > 0`))
        .addColumn('amount_minor', 'bigint', (c) => c.notNull().check(sql`amount_minor > 0`))
        .addColumn('state', 'text', (c) => c.notNull().check(sql`state IN ('requested', 'accepted', 'done')`))
        .addColumn('origin', 'text', (c) => c.notNull().check(sql`origin IN ('merchant', 'agent', 'expiry', 'processor')`))
        .addColumn('agent', 'text')
        .addColumn('idempotency_key', 'text', (c) => c.notNull())
        .addColumn('psp_action_id', 'text')
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('requested_at_ms', 'bigint', (c) => c.notNull())
        .addColumn('updated_at_ms', 'bigint', (c) => c.notNull())
        .addCheckConstraint('authorization_actions_amount', sql`amount_minor <= authorized_minor`)
        .execute();
      await sql`CREATE INDEX authorization_actions_unsettled ON authorization_actions (updated_at_ms)
        WHERE state <> 'done'`.execute(db);

      await db.schema
        .createTable('disputes')
        .addColumn('gateway_id', 'text', (c) => c.notNull())
        .addColumn('psp_dispute_id', 'text', (c) => c.notNull())
        .addColumn('trace_id', 'bigint', (c) => c.notNull().references('transactions.trace_id'))
        .addColumn('merchant_id', 'text', (c) => c.notNull())
        .addColumn('stage', 'text', (c) => c.notNull())
        .addColumn('amount_minor', 'bigint', (c) => c.notNull().check(sql`amount_minor > 0`))
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('reason', 'text')
        .addColumn('evidence_due_at_ms', 'bigint')
        .addColumn('opened_at_ms', 'bigint', (c) => c.notNull())
        .addColumn('updated_at_ms', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('disputes_pk', ['gateway_id', 'psp_dispute_id'])
        .execute();
      await db.schema.createIndex('disputes_trace').on('disputes').columns(['trace_id', 'opened_at_ms']).execute();
      await db.schema.createIndex('disputes_merchant').on('disputes').columns(['merchant_id', 'stage', 'evidence_due_at_ms']).execute();
      await db.schema.createIndex('disputes_stage').on('disputes').columns(['stage', 'evidence_due_at_ms']).execute();

      await sql`CREATE INDEX transactions_authorized ON transactions (created_at_ms)
        WHERE transaction_type = 'authorize' AND status = 'authorized'`.execute(db);

      await db.schema
        .alterTable('cashier_sessions')
        .addColumn('transaction_type', 'text', (c) => c.notNull().defaultTo('sale'))
        .execute();
    },
  };
}
