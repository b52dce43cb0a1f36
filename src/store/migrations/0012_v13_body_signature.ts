// Migration 0012_v13_body_signature: a merchant's choice to require signed v1.3 bodies. Its own
// file so each migration reads on its own; its key is recorded in databases, never rename it.
import type { Kysely, Migration } from 'kysely';

/** Issue 18: a merchant may require v1.3 requests to carry the body's signature too (docs/security.md §3). */
export function v13BodySignature(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .alterTable('merchants')
        .addColumn('v13_body_signature_required', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
    },
  };
}
