// Migration 0013_display_names: the shop's name per frontend and application. Its own file so
// each migration reads on its own; its key is recorded in databases, never rename it.
import type { Kysely, Migration } from 'kysely';

/** Issue 19: the shop's name per frontend and application, shown by the cashier instead of the merchant_id. */
export function displayNames(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('frontends').addColumn('display_name', 'text').execute();
      await db.schema.alterTable('applications').addColumn('display_name', 'text').execute();
    },
  };
}
