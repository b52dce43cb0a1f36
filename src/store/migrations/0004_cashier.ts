// Migration 0004_cashier: the hosted cashier's sessions, tokens, customers and frame origins.
// Its own file so each migration reads on its own; its key is recorded in databases, never rename it.
import { type Kysely, type Migration, sql } from 'kysely';

/**
 * The hosted cashier (issue 5, docs/cashier.md): sessions (orders among them), their login and
 * browser tokens, customers' one-time registrations, per-application frame origins, and the
 * link from a transaction to the session it was made in.
 */
export function cashier(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .alterTable('applications')
        .addColumn('frame_origins', 'text', (c) => c.notNull().defaultTo(''))
        .execute();

      await db.schema
        .createTable('cashier_sessions')
        .addColumn('session_id', 'text', (c) => c.primaryKey())
        .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.merchant_id'))
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('identity_kind', 'text', (c) => c.notNull())
        .addColumn('identity_value', 'text', (c) => c.notNull())
        .addColumn('api_version', 'text', (c) => c.notNull())
        .addColumn('order_id', 'text')
        .addColumn('request_fingerprint', 'text', (c) => c.notNull())
        .addColumn('auth_token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('amount_minor', 'bigint')
        .addColumn('balance_minor', 'bigint')
        .addColumn('pin', 'text', (c) => c.notNull())
        .addColumn('country', 'text', (c) => c.notNull())
        .addColumn('customer_sealed', 'text', (c) => c.notNull())
        .addColumn('locale', 'text')
        .addColumn('payment_method', 'text')
        .addColumn('gateway_id', 'text')
        .addColumn('profile', 'integer')
        .addColumn('return_url', 'text', (c) => c.notNull())
        .addColumn('notification_url', 'text', (c) => c.notNull())
        .addColumn('validation_url', 'text')
        .addColumn('variables_json', 'text')
        .addColumn('order_status', 'text')
        .addColumn('expires_at_ms', 'bigint', (c) => c.notNull())
        .addColumn('closed_at_ms', 'bigint')
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('claim_until_ms', 'bigint')
        .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
        .addColumn('updated_at_ms', 'bigint', (c) => c.notNull())
        .addCheckConstraint('cashier_sessions_kind', sql`kind IN ('pay_in', 'checkout', 'pay_out', 'pay_out_order')`)
        // An order (checkout, pay_out_order) has an order_id and an order_status; other sessions have neither.
        .addCheckConstraint(
          'cashier_sessions_order',
          sql`(kind IN ('checkout', 'pay_out_order')) = (order_id IS NOT NULL AND order_status IS NOT NULL)`,
        )
        .addCheckConstraint(
          'cashier_sessions_order_status',
          sql`order_status IS NULL OR order_status IN ('pending', 'authorized', 'approved', 'rejected')`,
        )
        // Idempotency of init-checkout / init-pay-out-order, and find-order's key: one order per order_id and merchant.
        .addUniqueConstraint('cashier_sessions_order_id', ['merchant_id', 'order_id'])
        .execute();
      await db.schema.createIndex('cashier_sessions_due').on('cashier_sessions').columns(['order_status', 'expires_at_ms']).execute();

      await db.schema
        .createTable('cashier_tokens')
        .addColumn('token_hash', 'text', (c) => c.primaryKey())
        .addColumn('session_id', 'text', (c) => c.notNull().references('cashier_sessions.session_id'))
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('expires_at_ms', 'bigint', (c) => c.notNull())
        .addColumn('used_at_ms', 'bigint')
        .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
        .addCheckConstraint('cashier_tokens_kind', sql`kind IN ('login', 'browser')`)
        .execute();
      await db.schema.createIndex('cashier_tokens_session').on('cashier_tokens').column('session_id').execute();

      await db.schema
        .createTable('cashier_customers')
        .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.merchant_id'))
        .addColumn('pin', 'text', (c) => c.notNull())
        .addColumn('profile_sealed', 'text', (c) => c.notNull())
        .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
        .addColumn('updated_at_ms', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('cashier_customers_pk', ['merchant_id', 'pin'])
        .execute();

      await db.schema
        .alterTable('transactions')
        .addColumn('cashier_session_id', 'text', (c) => c.references('cashier_sessions.session_id'))
        .execute();
      await db.schema.alterTable('transactions').addColumn('cashier_order_id', 'text').execute();
      await db.schema.alterTable('transactions').addColumn('cashier_auth_token', 'text').execute();
      await db.schema.createIndex('transactions_cashier_session').on('transactions').column('cashier_session_id').execute();
    },
  };
}
