// Migration 0014_merchant_credentials: a merchant's rolled secret with its grace, and disabling
// a merchant. Its own file so each migration reads on its own; its key is recorded in databases,
// never rename it.
import type { Kysely, Migration } from 'kysely';

/**
 * 0014: a merchant's secret rolled with a grace for the old one (the old one kept sealed until
 * previous_secret_until_ms, gateway clock), and a merchant the operator disabled (its signed calls
 * are answered as an unknown merchant's). docs/security.md §5.
 */
export function merchantCredentials(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      // One column per statement: SQLite's ALTER TABLE adds one at a time.
      await db.schema.alterTable('merchants').addColumn('disabled_at_ms', 'bigint').execute();
      await db.schema.alterTable('merchants').addColumn('previous_secret_sealed', 'text').execute();
      await db.schema.alterTable('merchants').addColumn('previous_secret_until_ms', 'bigint').execute();
    },
  };
}
