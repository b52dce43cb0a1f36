// Migration 0016 (the back office's idle time-out) on a database an older release left behind:
// built with the migrations up to 0015 and holding an open session. After migrating, the session
// counts as last used at its sign-in (the safe guess: it can only end sooner), the store reads it
// with its last use, and a new session is written with one.
import type { Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { migrateTo } from '../../src/store/migrations/index.js';
import { SqlBackOfficeStore } from '../../src/store/sql/backoffice.js';
import { databaseAt } from '../support/old-database.js';
import { storeKinds } from '../support/stores.js';

const T0 = 1_800_000_000_000;

describe.each(storeKinds())('migration 0016 on %s', (kind) => {
  it('gives every open session its sign-in as its last use, and the store reads and writes it', async () => {
    const db = await databaseAt(kind, '0015_backoffice');
    await db
      .insertInto('backoffice_users')
      .values({
        user_id: 'usr-0016',
        email: 'old@example.com',
        password_hash: 'x',
        role: 'operator',
        merchant_id: null,
        created_at_ms: T0,
        disabled_at_ms: null,
      })
      .execute();
    // The row as 0015 knew it, without a last use.
    await (db as unknown as Kysely<Record<string, Record<string, unknown>>>)
      .insertInto('backoffice_sessions')
      .values({ session_hash: 'h-old', user_id: 'usr-0016', data_json: '{}', expires_at_ms: T0 + 8 * 3600_000, created_at_ms: T0 })
      .execute();

    await migrateTo(db as unknown as Kysely<unknown>, kind, '0016_backoffice_idle_timeout');
    const store = new SqlBackOfficeStore(db);
    expect(await store.getSession('h-old', T0 + 60_000)).toEqual({ user_id: 'usr-0016', data_json: '{}', last_seen_at_ms: T0 });
    await store.saveSession('h-new', 'usr-0016', '{}', T0 + 9 * 3600_000, T0 + 3600_000);
    expect((await store.getSession('h-new', T0 + 3600_000))?.last_seen_at_ms).toBe(T0 + 3600_000);
  });
});
