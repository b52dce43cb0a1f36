// Migration 0023_master_key_rotation: what a master-key rotation keeps in the store (issue 30
// item 4; docs/security.md §1, docs/production.md "Master-key rotation"). Its own file so each
// migration reads on its own; its key is recorded in databases, never rename it once released.
import { type Kysely, type Migration, sql } from 'kysely';

/**
 * 0023: master_key_state, at most one row (id 1): the fingerprint key sealed under the current
 * master key (so fingerprints stored before a rotation still match after it), and the id of the
 * key every instance seals new values under, which the rotation switches. Written by the first
 * process of this release that opens the database (operations/master-key.ts).
 *
 * master_key_rotation: one row per table of sealed values, the rotation's progress through it
 * (the key it re-seals under, the last primary key done, how many it re-sealed), written in the
 * transaction of each batch so a killed run resumes where it stopped.
 */
export function masterKeyRotation(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('master_key_state')
        .addColumn('id', 'integer', (c) => c.primaryKey().check(sql`id = 1`))
        .addColumn('fingerprint_key_sealed', 'text', (c) => c.notNull())
        .addColumn('sealing_key_id', 'text', (c) => c.notNull())
        .addColumn('updated_at_ms', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('master_key_rotation')
        .addColumn('table_name', 'text', (c) => c.primaryKey())
        .addColumn('target_key_id', 'text', (c) => c.notNull())
        .addColumn('after_key', 'text')
        .addColumn('resealed', 'bigint', (c) => c.notNull())
        .addColumn('done', 'integer', (c) => c.notNull())
        .addColumn('updated_at_ms', 'bigint', (c) => c.notNull())
        .execute();
    },
  };
}
