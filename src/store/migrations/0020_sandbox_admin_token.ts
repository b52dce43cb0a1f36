// Migration 0020_sandbox_admin_token: the admin token a sandbox creates for itself on first start
// when the operator set none (issue 28), so the sandbox clock and triggers work out of the box.
// Its own file so each migration reads on its own; its key is recorded in databases, never rename
// it once released.
import { type Kysely, type Migration, sql } from 'kysely';

/**
 * 0020: sandbox_admin_token, at most one row (id 1): the token sealed with the master key (never
 * in clear), so every instance on the database admits the same token and `paygate trigger` on the
 * gateway's machine can use it. Live mode never writes it.
 */
export function sandboxAdminToken(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('sandbox_admin_token')
        .addColumn('id', 'integer', (c) => c.primaryKey().check(sql`id = 1`))
        .addColumn('token_sealed', 'text', (c) => c.notNull())
        .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
        .execute();
    },
  };
}
