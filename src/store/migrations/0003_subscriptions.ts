// Migration 0003_subscriptions: plans, prices, subscriptions and their history, and the outbox's
// subscription events (with the SQLite table rebuild that needs, kept here as only it uses it).
// Its own file so each migration reads on its own; its key is recorded in databases, never rename it.
import { type Kysely, type Migration, sql } from 'kysely';
import type { Dialect } from '../store.js';
import { autoId } from './columns.js';

/**
 * Subscriptions (issue 6): plans with one price per currency, subscriptions, their status
 * history; and the notifications outbox learns a second kind of row, the subscription event
 * (trace_id becomes nullable, `kind` and `subscription_id` are added, a CHECK ties them).
 */
export function subscriptions(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('subscription_plans')
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
      await db.schema
        .createIndex('subscription_plans_merchant')
        .on('subscription_plans')
        .columns(['merchant_id', 'status', 'created_at_ms'])
        .execute();

      await db.schema
        .createTable('subscription_prices')
        .addColumn('price_id', 'text', (c) => c.primaryKey())
        .addColumn('plan_id', 'text', (c) => c.notNull().references('subscription_plans.plan_id'))
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('amount_minor', 'bigint', (c) => c.notNull().check(sql`amount_minor > 0`))
        .addColumn('position', 'integer', (c) => c.notNull())
        // Spec §2.7 and §8: each currency at most once in a plan. The database refuses a second.
        .addUniqueConstraint('subscription_prices_one_per_currency', ['plan_id', 'currency'])
        .execute();

      await db.schema
        .createTable('subscriptions')
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

      await db.schema
        .createTable('subscription_changes')
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
        await db.schema
          .alterTable('notifications')
          .addColumn('kind', 'text', (c) => c.notNull().defaultTo('transaction'))
          .execute();
        await db.schema
          .alterTable('notifications')
          .addColumn('subscription_id', 'text', (c) => c.references('subscriptions.subscription_id'))
          .execute();
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
  const indexes = await sql<{
    sql: string;
  }>`SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'notifications' AND sql IS NOT NULL`.execute(db);
  const columns = await sql<{ name: string }>`SELECT name FROM pragma_table_info('notifications')`.execute(db);
  const column_list = columns.rows.map((c) => `"${c.name}"`).join(', ');
  const closing = nullable.lastIndexOf(')');
  const rebuilt =
    `${nullable.slice(0, closing).replace(/^create table "?notifications"?/i, 'CREATE TABLE "notifications_0004"')}, ` +
    `"kind" text not null default 'transaction', "subscription_id" text references "subscriptions" ("subscription_id"), ` +
    `constraint "notifications_subject" check (`;
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
