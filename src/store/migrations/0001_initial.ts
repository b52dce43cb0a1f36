// Migration 0001_initial: the first schema (merchants, applications, frontends, gateways,
// transactions and their history, notifications and attempts, due actions, the card vault, the
// sandbox clock). Its own file so each migration reads on its own; its key is recorded in every
// database's migration table, so neither the key nor what it does may change once released.
import { type Kysely, type Migration, sql } from 'kysely';
import type { Dialect } from '../store.js';
import { autoId } from './columns.js';

export function initial(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      const id = (name: string) => (table: ReturnType<typeof db.schema.createTable>) =>
        table.addColumn(name, autoId(dialect), (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()));

      await db.schema
        .createTable('merchants')
        .addColumn('merchant_id', 'text', (c) => c.primaryKey())
        .addColumn('secret_sealed', 'text', (c) => c.notNull())
        .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('applications')
        .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.merchant_id'))
        .addColumn('application_key', 'text', (c) => c.notNull())
        .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('applications_pk', ['merchant_id', 'application_key'])
        .execute();
      await db.schema
        .createTable('frontends')
        .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.merchant_id'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('frontends_pk', ['merchant_id', 'name'])
        .execute();
      await db.schema
        .createTable('gateways')
        .addColumn('gateway_id', 'text', (c) => c.primaryKey())
        .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.merchant_id'))
        .addColumn('processor', 'text', (c) => c.notNull())
        .addColumn('currencies', 'text', (c) => c.notNull())
        .addColumn('mit_enabled', 'integer', (c) => c.notNull())
        .addColumn('hold_payouts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('gateways_merchant').on('gateways').column('merchant_id').execute();

      await id('trace_id')(db.schema.createTable('transactions'))
        .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.merchant_id'))
        .addColumn('transaction_type', 'text', (c) => c.notNull())
        .addColumn('order_id', 'text', (c) => c.notNull())
        .addColumn('request_fingerprint', 'text', (c) => c.notNull())
        .addColumn('api_version', 'text', (c) => c.notNull())
        .addColumn('identity_kind', 'text', (c) => c.notNull())
        .addColumn('identity_value', 'text', (c) => c.notNull())
        .addColumn('gateway_id', 'text', (c) => c.notNull())
        .addColumn('payment_processor', 'text', (c) => c.notNull())
        .addColumn('payment_method', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('amount_minor', 'bigint', (c) => c.notNull().check(sql`amount_minor > 0`))
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('charge_amount_minor', 'bigint', (c) => c.notNull())
        .addColumn('charge_currency', 'text', (c) => c.notNull())
        .addColumn('pin', 'text', (c) => c.notNull())
        .addColumn('card_masked', 'text')
        .addColumn('card_brand', 'text')
        .addColumn('card_exp', 'text')
        .addColumn('card_fingerprint', 'text')
        .addColumn('card_token', 'text')
        .addColumn('reference_id', 'bigint')
        .addColumn('refund_reserved_minor', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('return_url', 'text')
        .addColumn('notification_url', 'text')
        .addColumn('psp_transaction_id', 'text')
        .addColumn('error_code', 'text')
        .addColumn('error_details', 'text')
        .addColumn('description', 'text')
        .addColumn('redirect_url', 'text')
        .addColumn('challenge_token_hash', 'text', (c) => c.unique())
        .addColumn('challenge_expires_at_ms', 'bigint')
        .addColumn('challenge_mode', 'text')
        .addColumn('answer_json', 'text')
        .addColumn('variables_json', 'text')
        .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
        .addColumn('updated_at_ms', 'bigint', (c) => c.notNull())
        // Idempotency key (decisions.md §6): the database, not the code, refuses a second row.
        .addUniqueConstraint('transactions_idempotency', ['merchant_id', 'transaction_type', 'order_id'])
        // Refund limit: approved and in-flight refunds of a sale never exceed it.
        .addCheckConstraint('transactions_refund_limit', sql`refund_reserved_minor >= 0 AND refund_reserved_minor <= amount_minor`)
        .execute();
      await db.schema.createIndex('transactions_reference').on('transactions').column('reference_id').execute();

      await id('id')(db.schema.createTable('status_changes'))
        .addColumn('trace_id', 'bigint', (c) => c.notNull().references('transactions.trace_id'))
        .addColumn('from_status', 'text', (c) => c.notNull())
        .addColumn('to_status', 'text', (c) => c.notNull())
        .addColumn('reason', 'text', (c) => c.notNull())
        .addColumn('at_ms', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('status_changes_trace').on('status_changes').column('trace_id').execute();

      await id('id')(db.schema.createTable('notifications'))
        .addColumn('trace_id', 'bigint', (c) => c.notNull().references('transactions.trace_id'))
        .addColumn('merchant_id', 'text', (c) => c.notNull())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('payload_json', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('next_attempt_at_ms', 'bigint', (c) => c.notNull())
        .addColumn('lease_until_ms', 'bigint')
        .addColumn('lease_owner', 'text')
        .addColumn('last_error', 'text')
        .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
        .addColumn('updated_at_ms', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('notifications_due').on('notifications').columns(['state', 'next_attempt_at_ms']).execute();
      await db.schema.createIndex('notifications_trace').on('notifications').column('trace_id').execute();

      await id('id')(db.schema.createTable('notification_attempts'))
        .addColumn('notification_id', 'bigint', (c) => c.notNull().references('notifications.id'))
        .addColumn('attempt_no', 'integer', (c) => c.notNull())
        .addColumn('started_at_ms', 'bigint', (c) => c.notNull())
        .addColumn('duration_ms', 'integer', (c) => c.notNull())
        .addColumn('http_status', 'integer')
        .addColumn('reply_excerpt', 'text')
        .addColumn('outcome', 'text', (c) => c.notNull())
        .addColumn('reason', 'text', (c) => c.notNull())
        .addUniqueConstraint('notification_attempts_once', ['notification_id', 'attempt_no'])
        .execute();

      await id('id')(db.schema.createTable('due_actions'))
        .addColumn('trace_id', 'bigint', (c) => c.notNull().references('transactions.trace_id'))
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('due_at_ms', 'bigint', (c) => c.notNull())
        .addColumn('expected_status', 'text', (c) => c.notNull())
        .addColumn('to_status', 'text', (c) => c.notNull())
        .addColumn('error_code', 'text')
        .addColumn('error_details', 'text')
        .addColumn('done', 'integer', (c) => c.notNull().defaultTo(0))
        .addUniqueConstraint('due_actions_once', ['trace_id', 'kind'])
        .execute();
      await db.schema.createIndex('due_actions_due').on('due_actions').columns(['done', 'due_at_ms']).execute();

      await db.schema
        .createTable('card_vault')
        .addColumn('card_token', 'text', (c) => c.primaryKey())
        .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.merchant_id'))
        .addColumn('pin', 'text', (c) => c.notNull())
        .addColumn('pan_sealed', 'text', (c) => c.notNull())
        .addColumn('pan_fingerprint', 'text', (c) => c.notNull())
        .addColumn('card_masked', 'text', (c) => c.notNull())
        .addColumn('card_exp', 'text', (c) => c.notNull())
        .addColumn('card_brand', 'text')
        .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
        .addUniqueConstraint('card_vault_once', ['merchant_id', 'pin', 'pan_fingerprint', 'card_exp'])
        .execute();

      await db.schema
        .createTable('sandbox_clock')
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('offset_ms', 'bigint', (c) => c.notNull())
        .execute();
    },
  };
}
