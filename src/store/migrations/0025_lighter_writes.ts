// Migration 0025_lighter_writes (issue 29, item 2): PostgreSQL writes less for every sale and
// every notification attempt. Its own file so each migration reads on its own; its key is
// recorded in databases, never rename it once released.
import { type Kysely, type Migration, sql } from 'kysely';
import type { Dialect } from '../store.js';

/**
 * 0025, PostgreSQL only (SQLite keeps its schema; the key is recorded there all the same):
 *
 * - notifications get fillfactor 60, so that a lease (lease_until_ms, lease_owner, updated_at_ms:
 *   no indexed column, nor one an index's WHERE reads) finds room for the row's new version on its
 *   own page and is a HOT update: no entry in any of the table's six indexes. Filled to the brim,
 *   the page of a notification just inserted was often full by the time it was leased (50 sales at
 *   once fill pages before their leases come), and the lease wrote a new entry into the primary
 *   key, notifications_trace and both pending indexes. Measured over 5 000 sales from 50
 *   clients: 30% of the leases HOT at the default fillfactor, 90% at 70, nearly all at 60; at 60
 *   a sale writes 8-12% less WAL (npm run bench:statements, bench/STATEMENTS.md). The cost: the
 *   table's pages hold 60% of what they could, so its heap takes up to two thirds more room.
 *   Only pages written from now on keep the room; existing ones stay as they are (no rewrite).
 *   The new index is built reading transactions once, holding its writes meanwhile
 *   (docs/scale-out.md §3).
 * - challenge_token_hash's uniqueness moves from a constraint, whose index held an entry for the
 *   NULL of every transaction that never had a 3-D Secure challenge (every sale but a challenged
 *   one), to a unique index of the set values alone: one index entry fewer per transaction. A NULL
 *   was never unique-checked, so what may be stored is the same; findByChallenge (`= $1`) implies
 *   NOT NULL, so its plan reads the new index.
 */
export function lighterWrites(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (dialect !== 'postgres') return;
      await sql`ALTER TABLE notifications SET (fillfactor = 60)`.execute(db);
      await sql`ALTER TABLE transactions DROP CONSTRAINT transactions_challenge_token_hash_key`.execute(db);
      await sql`CREATE UNIQUE INDEX transactions_challenge_token_hash ON transactions (challenge_token_hash) WHERE challenge_token_hash IS NOT NULL`.execute(
        db,
      );
    },
  };
}
