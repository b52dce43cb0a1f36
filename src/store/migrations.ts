// Schema migrations, run at start on both stores. Kysely's Migrator takes a lock, so several
// instances starting together on one PostgreSQL apply each migration once.
import { type Kysely, type Migration, type MigrationProvider, Migrator, sql } from 'kysely';
import type { Dialect } from './store.js';

function autoId(dialect: Dialect) {
  return dialect === 'postgres' ? ('bigserial' as const) : ('integer' as const);
}

function initial(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      const id = (name: string) => (table: ReturnType<typeof db.schema.createTable>) =>
        table.addColumn(name, autoId(dialect), (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()));

      await db.schema.createTable('merchants')
        .addColumn('merchant_id', 'text', (c) => c.primaryKey())
        .addColumn('secret_sealed', 'text', (c) => c.notNull())
        .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createTable('applications')
        .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.merchant_id'))
        .addColumn('application_key', 'text', (c) => c.notNull())
        .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('applications_pk', ['merchant_id', 'application_key'])
        .execute();
      await db.schema.createTable('frontends')
        .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.merchant_id'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('frontends_pk', ['merchant_id', 'name'])
        .execute();
      await db.schema.createTable('gateways')
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

      await db.schema.createTable('card_vault')
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

      await db.schema.createTable('sandbox_clock')
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('offset_ms', 'bigint', (c) => c.notNull())
        .execute();
    },
  };
}

/** Payouts: the direct payout's data_ fields, and the index the operator's payout list reads. */
function payouts(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('transactions').addColumn('data_json', 'text').execute();
      await db.schema.createIndex('transactions_type_status').on('transactions').columns(['transaction_type', 'status', 'trace_id']).execute();
    },
  };
}

/**
 * Subscriptions (issue 6): plans with one price per currency, subscriptions, their status
 * history; and the notifications outbox learns a second kind of row, the subscription event
 * (trace_id becomes nullable, `kind` and `subscription_id` are added, a CHECK ties them).
 */
function subscriptions(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.createTable('subscription_plans')
        .addColumn('plan_id', 'text', (c) => c.primaryKey())
        .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.merchant_id'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('billing_cycle', 'text', (c) => c.notNull())
        .addColumn('trial_period', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('trial_period_cycle', 'text', (c) => c.notNull())
        .addColumn('expiration_cycles', 'integer')
        .addColumn('retries_number', 'integer', (c) => c.notNull())
        .addColumn('retries_delay_days', 'integer', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
        .addColumn('updated_at_ms', 'bigint', (c) => c.notNull())
        .addCheckConstraint('subscription_plans_status', sql`status IN ('active', 'inactive', 'deleted')`)
        .execute();
      await db.schema.createIndex('subscription_plans_merchant').on('subscription_plans')
        .columns(['merchant_id', 'status', 'created_at_ms']).execute();

      await db.schema.createTable('subscription_prices')
        .addColumn('price_id', 'text', (c) => c.primaryKey())
        .addColumn('plan_id', 'text', (c) => c.notNull().references('subscription_plans.plan_id'))
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('amount_minor', 'bigint', (c) => c.notNull().check(sql`amount_minor > 0`))
        .addColumn('position', 'integer', (c) => c.notNull())
        // Spec §2.7 and §8: each currency at most once in a plan. The database refuses a second.
        .addUniqueConstraint('subscription_prices_one_per_currency', ['plan_id', 'currency'])
        .execute();

      await db.schema.createTable('subscriptions')
        .addColumn('subscription_id', 'text', (c) => c.primaryKey())
        .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.merchant_id'))
        .addColumn('application_key', 'text', (c) => c.notNull())
        .addColumn('plan_id', 'text', (c) => c.notNull().references('subscription_plans.plan_id'))
        .addColumn('price_id', 'text', (c) => c.notNull().references('subscription_prices.price_id'))
        .addColumn('cid', 'text', (c) => c.notNull())
        .addColumn('card_token', 'text', (c) => c.notNull().references('card_vault.card_token'))
        .addColumn('amount_minor', 'bigint', (c) => c.notNull().check(sql`amount_minor > 0`))
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('notification_url', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('billing_cycle', 'text', (c) => c.notNull())
        .addColumn('anchor_at_ms', 'bigint', (c) => c.notNull())
        .addColumn('expiration_cycles', 'integer')
        .addColumn('retries_number', 'integer', (c) => c.notNull())
        .addColumn('retries_delay_days', 'integer', (c) => c.notNull())
        .addColumn('cycles_charged', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('attempt', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('next_charge_at_ms', 'bigint')
        .addColumn('lease_until_ms', 'bigint')
        .addColumn('lease_owner', 'text')
        .addColumn('last_trace_id', 'bigint')
        .addColumn('last_error', 'text')
        .addColumn('version', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
        .addColumn('updated_at_ms', 'bigint', (c) => c.notNull())
        .addColumn('ended_at_ms', 'bigint')
        .addCheckConstraint('subscriptions_status', sql`status IN ('active', 'inactive', 'expired', 'canceled')`)
        // Only an active subscription is ever due.
        .addCheckConstraint('subscriptions_due_only_active', sql`next_charge_at_ms IS NULL OR status = 'active'`)
        .execute();
      await db.schema.createIndex('subscriptions_due').on('subscriptions').columns(['status', 'next_charge_at_ms']).execute();
      await db.schema.createIndex('subscriptions_merchant').on('subscriptions').columns(['merchant_id', 'created_at_ms']).execute();

      await db.schema.createTable('subscription_changes')
        .addColumn('id', autoId(dialect), (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()))
        .addColumn('subscription_id', 'text', (c) => c.notNull().references('subscriptions.subscription_id'))
        .addColumn('from_status', 'text', (c) => c.notNull())
        .addColumn('to_status', 'text', (c) => c.notNull())
        .addColumn('event', 'text', (c) => c.notNull())
        .addColumn('reason', 'text', (c) => c.notNull())
        .addColumn('at_ms', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('subscription_changes_subscription').on('subscription_changes').column('subscription_id').execute();

      // The outbox: a row is a transaction notification (trace_id) or a subscription event (subscription_id).
      const subject_check = sql`(kind = 'transaction' AND trace_id IS NOT NULL) OR (kind = 'subscription_event' AND subscription_id IS NOT NULL)`;
      if (dialect === 'postgres') {
        await sql`ALTER TABLE notifications ALTER COLUMN trace_id DROP NOT NULL`.execute(db);
        await db.schema.alterTable('notifications').addColumn('kind', 'text', (c) => c.notNull().defaultTo('transaction')).execute();
        await db.schema.alterTable('notifications')
          .addColumn('subscription_id', 'text', (c) => c.references('subscriptions.subscription_id')).execute();
        await sql`ALTER TABLE notifications ADD CONSTRAINT notifications_subject CHECK (${subject_check})`.execute(db);
      } else {
        await rebuildSqliteNotifications(db, subject_check);
      }
      await db.schema.createIndex('notifications_subscription').on('notifications').column('subscription_id').execute();
    },
  };
}

/**
 * SQLite cannot drop a NOT NULL: the table is rebuilt as SQLite documents (new table, copy,
 * drop, rename, indexes again), with foreign keys off meanwhile. It starts from the table's
 * CREATE statement as it stands, so columns added by earlier migrations are kept.
 */
async function rebuildSqliteNotifications(db: Kysely<unknown>, subject_check: ReturnType<typeof sql>): Promise<void> {
  const table = await sql<{ sql: string }>`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'notifications'`.execute(db);
  const create = table.rows[0]?.sql;
  const nullable = create?.replace(/"trace_id" bigint not null/i, '"trace_id" bigint');
  if (!create || !nullable || nullable === create) throw new Error('notifications table: trace_id NOT NULL column definition not found');
  const indexes = await sql<{ sql: string }>`SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'notifications' AND sql IS NOT NULL`.execute(db);
  const columns = await sql<{ name: string }>`SELECT name FROM pragma_table_info('notifications')`.execute(db);
  const column_list = columns.rows.map((c) => `"${c.name}"`).join(', ');
  const closing = nullable.lastIndexOf(')');
  const rebuilt = `${nullable.slice(0, closing).replace(/^create table "?notifications"?/i, 'CREATE TABLE "notifications_0004"')}, `
    + `"kind" text not null default 'transaction', "subscription_id" text references "subscriptions" ("subscription_id"), `
    + `constraint "notifications_subject" check (`;
  await sql`PRAGMA foreign_keys = OFF`.execute(db);
  try {
    await sql`BEGIN`.execute(db);
    try {
      await sql`${sql.raw(rebuilt)}${subject_check}))`.execute(db);
      await sql.raw(`INSERT INTO "notifications_0004" (${column_list}) SELECT ${column_list} FROM "notifications"`).execute(db);
      await sql`DROP TABLE "notifications"`.execute(db);
      await sql`ALTER TABLE "notifications_0004" RENAME TO "notifications"`.execute(db);
      for (const index of indexes.rows) await sql.raw(index.sql).execute(db);
      const broken = await sql`PRAGMA foreign_key_check`.execute(db);
      if (broken.rows.length > 0) throw new Error('foreign keys broken by the notifications rebuild');
      await sql`COMMIT`.execute(db);
    } catch (error) {
      await sql`ROLLBACK`.execute(db);
      throw error;
    }
  } finally {
    await sql`PRAGMA foreign_keys = ON`.execute(db);
  }
}

/**
 * The hosted cashier (issue 5, docs/cashier.md): sessions (orders among them), their login and
 * browser tokens, customers' one-time registrations, per-application frame origins, and the
 * link from a transaction to the session it was made in.
 */
function cashier(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('applications').addColumn('frame_origins', 'text', (c) => c.notNull().defaultTo('')).execute();

      await db.schema.createTable('cashier_sessions')
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
        .addCheckConstraint('cashier_sessions_order', sql`(kind IN ('checkout', 'pay_out_order')) = (order_id IS NOT NULL AND order_status IS NOT NULL)`)
        .addCheckConstraint('cashier_sessions_order_status', sql`order_status IS NULL OR order_status IN ('pending', 'authorized', 'approved', 'rejected')`)
        // Idempotency of init-checkout / init-pay-out-order, and find-order's key: one order per order_id and merchant.
        .addUniqueConstraint('cashier_sessions_order_id', ['merchant_id', 'order_id'])
        .execute();
      await db.schema.createIndex('cashier_sessions_due').on('cashier_sessions').columns(['order_status', 'expires_at_ms']).execute();

      await db.schema.createTable('cashier_tokens')
        .addColumn('token_hash', 'text', (c) => c.primaryKey())
        .addColumn('session_id', 'text', (c) => c.notNull().references('cashier_sessions.session_id'))
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('expires_at_ms', 'bigint', (c) => c.notNull())
        .addColumn('used_at_ms', 'bigint')
        .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
        .addCheckConstraint('cashier_tokens_kind', sql`kind IN ('login', 'browser')`)
        .execute();
      await db.schema.createIndex('cashier_tokens_session').on('cashier_tokens').column('session_id').execute();

      await db.schema.createTable('cashier_customers')
        .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.merchant_id'))
        .addColumn('pin', 'text', (c) => c.notNull())
        .addColumn('profile_sealed', 'text', (c) => c.notNull())
        .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
        .addColumn('updated_at_ms', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('cashier_customers_pk', ['merchant_id', 'pin'])
        .execute();

      await db.schema.alterTable('transactions').addColumn('cashier_session_id', 'text', (c) => c.references('cashier_sessions.session_id')).execute();
      await db.schema.alterTable('transactions').addColumn('cashier_order_id', 'text').execute();
      await db.schema.alterTable('transactions').addColumn('cashier_auth_token', 'text').execute();
      await db.schema.createIndex('transactions_cashier_session').on('transactions').column('cashier_session_id').execute();
    },
  };
}

/**
 * 0005: the due-work sweep looks for transactions still `pending` with no answer
 * (findStuckTransactions); without an index on status it read every transaction on each pass.
 */
function dueWorkIndexes(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.createIndex('transactions_status_created').on('transactions').columns(['status', 'created_at_ms']).execute();
    },
  };
}

/**
 * 0006: one active subscription per customer, plan price and card (merchant_id, cid, plan_id,
 * price_id, card_token), so a retried create cannot start a second series of charges; enforced
 * by the database for concurrent requests and several instances. Inactive, cancelled and expired
 * subscriptions are outside the index.
 */
function oneActiveSubscription(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      // A database from before this index may hold such duplicates: the oldest of each set stays
      // active, the later ones become inactive (not charged, still readable and cancellable), so
      // the index can be created and the gateway starts.
      await sql`UPDATE subscriptions SET status = 'inactive', next_charge_at_ms = NULL
        WHERE status = 'active' AND EXISTS (
          SELECT 1 FROM subscriptions older
          WHERE older.status = 'active' AND older.merchant_id = subscriptions.merchant_id AND older.cid = subscriptions.cid
            AND older.plan_id = subscriptions.plan_id AND older.price_id = subscriptions.price_id
            AND older.card_token = subscriptions.card_token
            AND (older.created_at_ms < subscriptions.created_at_ms
              OR (older.created_at_ms = subscriptions.created_at_ms AND older.subscription_id < subscriptions.subscription_id)))`.execute(db);
      await sql`CREATE UNIQUE INDEX subscriptions_one_active ON subscriptions (merchant_id, cid, plan_id, price_id, card_token) WHERE status = 'active'`.execute(db);
    },
  };
}

/**
 * 0007: notifications.bound_from_ms, where the resend bound counts from: the creation time, and
 * again the time of an operator's manual resend, so a resend of a notification older than the
 * bound gets a whole schedule instead of one attempt (docs/notifications.md §4, §8). Existing
 * rows get their creation time.
 */
function notificationBound(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('notifications').addColumn('bound_from_ms', 'bigint').execute();
      await sql`UPDATE notifications SET bound_from_ms = created_at_ms`.execute(db);
    },
  };
}

/**
 * 0008: the notification lease reads pending notifications only. The lease takes the due ones in
 * order and skips any with an older pending notification of the same transaction or subscription
 * (in-order delivery). With notifications_due on (state, next_attempt_at_ms) over every row and
 * the per-transaction check left to notifications_trace, PostgreSQL planned the check as a
 * BitmapAnd with `state = 'pending'`: every pending notification read once per due candidate.
 * With thousands of resends waiting and a backlog of due ones, a lease took 400 ms and 45,000
 * buffer reads (measured in the sale benchmark), so the backlog grew while leasing slowed. These
 * partial indexes hold pending rows only, so each check is one short index probe and the due
 * scan is in the lease's order, whatever the planner's row estimates; delivered and failed
 * notifications leave them.
 */
function pendingNotificationIndexes(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await sql`DROP INDEX notifications_due`.execute(db);
      await sql`CREATE INDEX notifications_pending_due ON notifications (next_attempt_at_ms, id) WHERE state = 'pending'`.execute(db);
      await sql`CREATE INDEX notifications_pending_trace ON notifications (trace_id, id)
        WHERE state = 'pending' AND trace_id IS NOT NULL`.execute(db);
      await sql`CREATE INDEX notifications_pending_subscription ON notifications (subscription_id, id)
        WHERE state = 'pending' AND subscription_id IS NOT NULL`.execute(db);
    },
  };
}

/**
 * 0009: indexes of transactions and notifications hold only the rows their queries look for. A
 * sale wrote an entry into six indexes of transactions and its status change rewrote two of
 * them, though most of those entries could never be asked for: the NULL reference_id (set on
 * refunds only) and cashier_session_id (cashier only), and every finished sale under its status,
 * where only pending transactions (findStuckTransactions) and payouts (the operator's payout
 * lists, findInterruptedPayouts) are ever looked up by status; likewise the NULL subscription_id
 * of every transaction notification. Now a sale's insert writes three index entries fewer, its
 * notification one fewer, and its status change removes one entry instead of rewriting two: the
 * store's work for a sale took 136–156 µs instead of 163–204, 410,000 instructions instead of
 * 439,000 (measured). The sweeps read in-flight rows only, however many transactions finished.
 * The scans that use these indexes write their partial terms as literals (status = 'pending',
 * transaction_type = 'payout'): a planner matches an index's WHERE against literal terms only.
 */
function sparseIndexes(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await sql`DROP INDEX transactions_reference`.execute(db);
      await sql`CREATE INDEX transactions_reference ON transactions (reference_id) WHERE reference_id IS NOT NULL`.execute(db);
      await sql`DROP INDEX transactions_cashier_session`.execute(db);
      await sql`CREATE INDEX transactions_cashier_session ON transactions (cashier_session_id) WHERE cashier_session_id IS NOT NULL`.execute(db);
      await sql`DROP INDEX transactions_type_status`.execute(db);
      await sql`CREATE INDEX transactions_payouts ON transactions (status, trace_id) WHERE transaction_type = 'payout'`.execute(db);
      await sql`DROP INDEX transactions_status_created`.execute(db);
      await sql`CREATE INDEX transactions_pending ON transactions (trace_id) WHERE status = 'pending'`.execute(db);
      await sql`DROP INDEX notifications_subscription`.execute(db);
      await sql`CREATE INDEX notifications_subscription ON notifications (subscription_id) WHERE subscription_id IS NOT NULL`.execute(db);
    },
  };
}

/**
 * 0010: gateways are configured, not built in (decisions.md §13, docs/connectors.md). A gateway
 * names its connector (the column was `processor`), keeps its settings sealed, can be disabled,
 * and records when its settings last changed. Webhook events applied are kept by the processor's
 * event id so a replay changes nothing. A due processor_lookup counts its attempts. A payout keeps
 * its customer sealed for a connector's card payout after an operator's release. Webhooks find a
 * live processor's transaction by its id there: that index leaves the sandbox's out, so a
 * sandbox sale writes no entry into it.
 */
function connectors(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('gateways').renameColumn('processor', 'connector').execute();
      await db.schema.alterTable('gateways').addColumn('settings_sealed', 'text').execute();
      await db.schema.alterTable('gateways').addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1)).execute();
      await db.schema.alterTable('gateways').addColumn('updated_at_ms', 'bigint').execute();
      await sql`UPDATE gateways SET updated_at_ms = created_at_ms`.execute(db);
      await db.schema.createTable('processor_events')
        .addColumn('gateway_id', 'text', (c) => c.notNull().references('gateways.gateway_id'))
        .addColumn('event_id', 'text', (c) => c.notNull())
        .addColumn('event_type', 'text', (c) => c.notNull())
        .addColumn('trace_id', 'bigint')
        .addColumn('outcome', 'text', (c) => c.notNull())
        .addColumn('received_at_ms', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('processor_events_pk', ['gateway_id', 'event_id'])
        .execute();
      await db.schema.alterTable('due_actions').addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await db.schema.alterTable('transactions').addColumn('customer_sealed', 'text').execute();
      await sql`CREATE INDEX transactions_psp ON transactions (gateway_id, psp_transaction_id)
        WHERE psp_transaction_id IS NOT NULL AND payment_processor <> 'sandbox'`.execute(db);
    },
  };
}

/**
 * 0011: routing rules per merchant and the BIN table their card-country conditions read
 * (docs/connectors.md §9), and cascade attempts: a retry of a merchant's sale on another gateway
 * is its own transaction, tied to the first by cascade_root (partial index: only retries have one).
 */
function routing(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.createTable('routing_rules')
        .addColumn('rule_id', 'text', (c) => c.primaryKey())
        .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.merchant_id'))
        .addColumn('gateway_id', 'text', (c) => c.notNull().references('gateways.gateway_id'))
        .addColumn('priority', 'integer', (c) => c.notNull())
        .addColumn('currencies', 'text')
        .addColumn('amount_min_minor', 'bigint')
        .addColumn('amount_max_minor', 'bigint')
        .addColumn('card_brands', 'text')
        .addColumn('bin_countries', 'text')
        .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
        .addCheckConstraint('routing_rules_amounts', sql`amount_min_minor IS NULL OR amount_max_minor IS NULL OR amount_min_minor <= amount_max_minor`)
        .execute();
      await db.schema.createIndex('routing_rules_merchant').on('routing_rules').columns(['merchant_id', 'priority']).execute();
      await db.schema.createTable('bin_ranges')
        .addColumn('prefix', 'text', (c) => c.primaryKey())
        .addColumn('country', 'text', (c) => c.notNull())
        .execute();
      await db.schema.alterTable('transactions').addColumn('cascade_level', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await db.schema.alterTable('transactions').addColumn('cascade_root', 'bigint').execute();
      await sql`CREATE INDEX transactions_cascade ON transactions (cascade_root, cascade_level) WHERE cascade_root IS NOT NULL`.execute(db);
    },
  };
}

/** Issue 18: a merchant may require v1.3 requests to carry the body's signature too (docs/security.md §3). */
function v13BodySignature(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('merchants').addColumn('v13_body_signature_required', 'integer', (c) => c.notNull().defaultTo(0)).execute();
    },
  };
}

/** Issue 19: the shop's name per frontend and application, shown by the cashier instead of the merchant_id. */
function displayNames(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('frontends').addColumn('display_name', 'text').execute();
      await db.schema.alterTable('applications').addColumn('display_name', 'text').execute();
    },
  };
}

/**
 * 0014: a merchant's secret rolled with a grace for the old one (the old one kept sealed until
 * previous_secret_until_ms, gateway clock), and a merchant the operator disabled (its signed calls
 * are answered as an unknown merchant's). docs/security.md §5.
 */
function merchantCredentials(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      // One column per statement: SQLite's ALTER TABLE adds one at a time.
      await db.schema.alterTable('merchants').addColumn('disabled_at_ms', 'bigint').execute();
      await db.schema.alterTable('merchants').addColumn('previous_secret_sealed', 'text').execute();
      await db.schema.alterTable('merchants').addColumn('previous_secret_until_ms', 'bigint').execute();
    },
  };
}

/**
 * Issue 15: the back office's users, sessions, failed sign-ins and audit log, and the indexes its
 * pages read through: a merchant's transactions newest first (keyset by trace_id) and the last
 * 30 days by time (the overview).
 */
function backoffice(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      const id = (table: ReturnType<typeof db.schema.createTable>) =>
        table.addColumn('id', autoId(dialect), (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()));
      await db.schema.createTable('backoffice_users')
        .addColumn('user_id', 'text', (c) => c.primaryKey())
        .addColumn('email', 'text', (c) => c.notNull().unique())
        .addColumn('password_hash', 'text', (c) => c.notNull())
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('merchant_id', 'text', (c) => c.references('merchants.merchant_id'))
        .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
        .addColumn('disabled_at_ms', 'bigint')
        .addCheckConstraint('backoffice_users_role', sql`(role = 'operator' AND merchant_id IS NULL) OR (role = 'merchant' AND merchant_id IS NOT NULL)`)
        .execute();
      await db.schema.createTable('backoffice_sessions')
        .addColumn('session_hash', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('backoffice_users.user_id'))
        .addColumn('data_json', 'text', (c) => c.notNull())
        .addColumn('expires_at_ms', 'bigint', (c) => c.notNull())
        .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('backoffice_sessions_expiry').on('backoffice_sessions').column('expires_at_ms').execute();
      await id(db.schema.createTable('backoffice_sign_in_failures'))
        .addColumn('email', 'text', (c) => c.notNull())
        .addColumn('address', 'text', (c) => c.notNull())
        .addColumn('at_ms', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('backoffice_sign_in_failures_email').on('backoffice_sign_in_failures').columns(['email', 'at_ms']).execute();
      await db.schema.createTable('backoffice_sign_in_locks')
        .addColumn('email', 'text', (c) => c.primaryKey())
        .addColumn('until_ms', 'bigint', (c) => c.notNull())
        .execute();
      await id(db.schema.createTable('audit_log'))
        .addColumn('at_ms', 'bigint', (c) => c.notNull())
        .addColumn('user_id', 'text')
        .addColumn('email', 'text', (c) => c.notNull())
        .addColumn('role', 'text')
        .addColumn('merchant_id', 'text')
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('target', 'text')
        .addColumn('address', 'text', (c) => c.notNull())
        .addColumn('outcome', 'text', (c) => c.notNull())
        .addColumn('detail', 'text')
        .execute();
      await db.schema.createIndex('audit_log_merchant').on('audit_log').columns(['merchant_id', 'id']).execute();
      await db.schema.createIndex('transactions_merchant_trace').on('transactions').columns(['merchant_id', 'trace_id']).execute();
      await db.schema.createIndex('transactions_created').on('transactions').column('created_at_ms').execute();
    },
  };
}

/**
 * 0016: when a back-office session was last used (gateway clock), so one left idle past
 * PAYGATE_BACKOFFICE_IDLE_TIMEOUT_MINUTES ends on whichever instance sees it next (PCI DSS 8.2.8).
 * Kept in the row, not in memory, because every instance sharing the database serves every
 * session. Sessions open at the upgrade count as last used at their sign-in: at worst their
 * person signs in again, never does an idle one live on.
 */
function backofficeIdleTimeout(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('backoffice_sessions').addColumn('last_seen_at_ms', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
      await sql`UPDATE backoffice_sessions SET last_seen_at_ms = created_at_ms`.execute(db);
    },
  };
}

/**
 * 0017: the back office lists processor webhook events newest first, a transaction's and a
 * gateway's (all, or of one outcome), 50 at most. The table's key (gateway_id, event_id) serves
 * none of them: without these each list would read and sort every event of its gateway, and a
 * transaction's would read the whole table. Each index ends with (received_at_ms, event_id), the
 * lists' order, so a list reads its 50 rows and stops. The transaction's is partial: an
 * unmatched event has no trace_id and is never listed by one.
 */
function processorEventLists(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await sql`CREATE INDEX processor_events_trace ON processor_events (trace_id, received_at_ms, event_id)
        WHERE trace_id IS NOT NULL`.execute(db);
      await db.schema.createIndex('processor_events_gateway').on('processor_events')
        .columns(['gateway_id', 'received_at_ms', 'event_id']).execute();
      await db.schema.createIndex('processor_events_gateway_outcome').on('processor_events')
        .columns(['gateway_id', 'outcome', 'received_at_ms', 'event_id']).execute();
    },
  };
}

class InlineMigrations implements MigrationProvider {
  constructor(private readonly dialect: Dialect) {}
  async getMigrations(): Promise<Record<string, Migration>> {
    return {
      '0001_initial': initial(this.dialect), '0002_payouts': payouts(), '0003_subscriptions': subscriptions(this.dialect),
      '0004_cashier': cashier(), '0005_due_work_indexes': dueWorkIndexes(),
      '0006_one_active_subscription': oneActiveSubscription(), '0007_notification_bound': notificationBound(),
      '0008_pending_notification_indexes': pendingNotificationIndexes(), '0009_sparse_indexes': sparseIndexes(),
      '0010_connectors': connectors(), '0011_routing': routing(), '0012_v13_body_signature': v13BodySignature(),
      '0013_display_names': displayNames(), '0014_merchant_credentials': merchantCredentials(),
      '0015_backoffice': backoffice(this.dialect), '0016_backoffice_idle_timeout': backofficeIdleTimeout(),
      '0017_processor_event_lists': processorEventLists(),
    };
  }
}

export async function migrateToLatest(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await migrateTo(db, dialect, null);
}

/** Up to and including `target` (null: the latest); tests use it to build a database as an older release left it. */
export async function migrateTo(db: Kysely<unknown>, dialect: Dialect, target: string | null): Promise<void> {
  const migrator = new Migrator({ db, provider: new InlineMigrations(dialect) });
  const { error, results } = target === null ? await migrator.migrateToLatest() : await migrator.migrateTo(target);
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`migration ${failed?.migrationName ?? '?'} failed: ${(error as Error).message ?? String(error)}`);
  }
}
