// Migration 0015_backoffice: the back office's users, sessions, sign-in failures and locks,
// audit log, and the indexes its pages read. Its own file so each migration reads on its own;
// its key is recorded in databases, never rename it.
import { type Kysely, type Migration, sql } from 'kysely';
import type { Dialect } from '../store.js';
import { autoId } from './columns.js';

/**
 * Issue 15: the back office's users, sessions, failed sign-ins and audit log, and the indexes its
 * pages read through: a merchant's transactions newest first (keyset by trace_id) and the last
 * 30 days by time (the overview).
 */
export function backoffice(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      const id = (table: ReturnType<typeof db.schema.createTable>) =>
        table.addColumn('id', autoId(dialect), (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()));
      await db.schema
        .createTable('backoffice_users')
        .addColumn('user_id', 'text', (c) => c.primaryKey())
        .addColumn('email', 'text', (c) => c.notNull().unique())
        .addColumn('password_hash', 'text', (c) => c.notNull())
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('merchant_id', 'text', (c) => c.references('merchants.merchant_id'))
        .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
        .addColumn('disabled_at_ms', 'bigint')
        .addCheckConstraint(
          'backoffice_users_role',
          sql`(role = 'operator' AND merchant_id IS NULL) OR (role = 'merchant' AND merchant_id IS NOT NULL)`,
        )
        .execute();
      await db.schema
        .createTable('backoffice_sessions')
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
      await db.schema
        .createIndex('backoffice_sign_in_failures_email')
        .on('backoffice_sign_in_failures')
        .columns(['email', 'at_ms'])
        .execute();
      await db.schema
        .createTable('backoffice_sign_in_locks')
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
