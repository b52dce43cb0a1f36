// Migration 0021_gateway_labels: a gateway's label, the name an operator reads instead of its
// 32-hex id (issue 30), and the record of the instance that last started on the database (its
// public URL and mode), which the CLI builds webhook_url from and names beside its own mode.
// Its own file so each migration reads on its own; its key is recorded in databases, never rename
// it once released. Numbered after 0020_sandbox_admin_token: Kysely refuses a database whose
// executed migrations are not a prefix of the sorted list, so a new key must sort last.
import { type Kysely, type Migration, sql } from 'kysely';

/**
 * 0021: gateways.label, every existing gateway named "<connector> <first 8 of its id>" (unique in
 * practice, and says what it is); instance_record, at most one row (id 1), written by each
 * instance as it starts.
 */
export function gatewayLabels(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      // NOT NULL needs a default on SQLite's ADD COLUMN; every row is named just after, and the
      // gateway writes a label with every new row.
      await db.schema
        .alterTable('gateways')
        .addColumn('label', 'text', (c) => c.notNull().defaultTo(''))
        .execute();
      await sql`UPDATE gateways SET label = connector || ' ' || substr(gateway_id, 1, 8)`.execute(db);
      await db.schema
        .createTable('instance_record')
        .addColumn('id', 'integer', (c) => c.primaryKey().check(sql`id = 1`))
        .addColumn('public_url', 'text', (c) => c.notNull())
        .addColumn('public_url_configured', 'integer', (c) => c.notNull())
        .addColumn('environment', 'text', (c) => c.notNull())
        .addColumn('started_at_ms', 'bigint', (c) => c.notNull())
        .execute();
    },
  };
}
