// Group commit on the embedded store: concurrent units share commits, a failing unit is rolled
// back alone, and every caller is answered only after its writes are committed.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { GroupCommitter, type SavepointCommand } from '../../src/store/group-commit.js';
import { openSqliteStore } from '../../src/store/open.js';
import type { SqlStore } from '../../src/store/sql-store.js';

interface Db {
  items: { id: number; note: string };
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

function tempFile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-group-'));
  cleanups.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
  return path.join(dir, 'db.sqlite');
}

async function openKysely(file: string): Promise<{ db: Kysely<Db>; savepoint: SavepointCommand }> {
  const database = new BetterSqlite3(file);
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = FULL');
  const db = new Kysely<Db>({ dialect: new SqliteDialect({ database }) });
  await sql`create table if not exists items (id integer primary key, note text not null unique)`.execute(db);
  cleanups.unshift(async () => db.destroy());
  // Kysely's SqliteDialect has this one connection: savepoint commands go straight to it.
  return { db, savepoint: (command) => database.exec(command) };
}

describe('GroupCommitter', () => {
  it('commits concurrent units in fewer transactions, rolling back only the failing one', async () => {
    const file = tempFile();
    const { db, savepoint } = await openKysely(file);
    const group = new GroupCommitter(db, 64, savepoint);
    const units = Array.from({ length: 60 }, (_, i) =>
      group.run(async (trx) => {
        await trx
          .insertInto('items')
          .values({ id: i, note: `n${i}` })
          .execute();
        if (i === 17) throw new Error('unit 17 fails after writing');
        return i;
      }),
    );
    const results = await Promise.allSettled(units);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(59);
    expect(results[17]).toMatchObject({ status: 'rejected' });
    expect(group.stats.units).toBe(60);
    expect(group.stats.batches).toBeLessThan(60);

    // Read through a separate connection: what was answered is on disk.
    const reader = new BetterSqlite3(file, { readonly: true });
    const ids = (reader.prepare('select id from items order by id').all() as { id: number }[]).map((r) => r.id);
    reader.close();
    expect(ids).toHaveLength(59);
    expect(ids).not.toContain(17);
  });

  it('a constraint violation in one unit leaves the others of its batch committed', async () => {
    const { db, savepoint } = await openKysely(tempFile());
    const group = new GroupCommitter(db, 64, savepoint);
    const results = await Promise.allSettled(
      ['a', 'b', 'a', 'c'].map((note) =>
        group.run((trx) =>
          trx
            .insertInto('items')
            .values({ note } as never)
            .execute(),
        ),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    const notes = (await db.selectFrom('items').select('note').orderBy('note').execute()).map((r) => r.note);
    expect(notes).toEqual(['a', 'b', 'c']);
  });

  it('runs its end once per batch, after the units and in their transaction; an end that fails is undone alone', async () => {
    const file = tempFile();
    const { db, savepoint } = await openKysely(file);
    const told: boolean[] = [];
    let seen_by_end: string[] = [];
    let fail_end = false;
    const group = new GroupCommitter<Db>(db, 64, savepoint, async (trx) => {
      seen_by_end = (await trx.selectFrom('items').select('note').orderBy('note').execute()).map((r) => r.note);
      await trx
        .insertInto('items')
        .values({ note: `end after ${seen_by_end.length}` } as never)
        .execute();
      if (fail_end) throw new Error('the end fails after writing');
      return (committed) => told.push(committed);
    });
    const insert = (note: string) =>
      group.run((trx) =>
        trx
          .insertInto('items')
          .values({ note } as never)
          .execute(),
      );
    await Promise.all([insert('a'), insert('b')]);
    // One batch: the end saw both units' writes, wrote its own row with them, and was told of the commit.
    expect(group.stats.batches).toBe(1);
    expect(seen_by_end).toEqual(['a', 'b']);
    expect(told).toEqual([true]);

    fail_end = true;
    await insert('c');
    // The end's row is rolled back to its savepoint; the unit's row is committed.
    const reader = new BetterSqlite3(file, { readonly: true });
    const notes = (reader.prepare('select note from items order by note').all() as { note: string }[]).map((r) => r.note);
    reader.close();
    expect(notes).toEqual(['a', 'b', 'c', 'end after 2']);
    expect(told).toEqual([true]);
  });

  it('tells the end that its batch did not commit when the COMMIT fails', async () => {
    const { db, savepoint } = await openKysely(tempFile());
    await sql`create table guarded (id integer primary key, parent integer references items(id) deferrable initially deferred)`.execute(db);
    await sql`pragma foreign_keys = on`.execute(db);
    const told: boolean[] = [];
    const group = new GroupCommitter<Db>(db, 64, savepoint, async () => (committed) => told.push(committed));
    // A deferred foreign key is checked at COMMIT: the batch's COMMIT fails.
    await expect(group.run((trx) => sql`insert into guarded (id, parent) values (1, 999)`.execute(trx))).rejects.toThrow(/FOREIGN KEY/);
    expect(told).toEqual([false]);
  });

  it('the SQLite store uses it: concurrent store transactions all commit', async () => {
    const file = tempFile();
    const store = openSqliteStore(file);
    cleanups.unshift(() => store.close());
    await store.migrate();
    const outcomes = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        store.transaction((tx) =>
          tx.merchants.insert({
            merchant_id: `m${i}`,
            secret_sealed: 'x',
            applications: [],
            frontends: [],
            gateways: [],
            created_at_ms: 1,
          }),
        ),
      ),
    );
    expect(outcomes.every((o) => o === 'created')).toBe(true);
    expect(await store.merchants.count()).toBe(30);
    await expect(
      store.transaction(async (tx) => {
        await tx.merchants.insert({
          merchant_id: 'rolled-back',
          secret_sealed: 'x',
          applications: [],
          frontends: [],
          gateways: [],
          created_at_ms: 1,
        });
        throw new Error('fail after write');
      }),
    ).rejects.toThrow('fail after write');
    expect(await store.merchants.get('rolled-back')).toBeNull();
  });

  it('a notification lease outside a transaction joins a group commit instead of committing (and syncing) alone', async () => {
    const store = openSqliteStore(tempFile()) as SqlStore;
    cleanups.unshift(() => store.close());
    await store.migrate();
    const before = store.groupCommitStats()!;
    // Two leases and a transaction issued together: one batch of three units, one COMMIT.
    const [first, second] = await Promise.all([
      store.notifications.lease({ due_ms: 1, wall_ms: 1 }, 8, 60_000, 'owner-a'),
      store.notifications.lease({ due_ms: 1, wall_ms: 1 }, 8, 60_000, 'owner-b'),
      store.transaction(async () => undefined),
    ]);
    expect([first, second]).toEqual([[], []]);
    const after = store.groupCommitStats()!;
    expect(after.units - before.units).toBe(3);
    expect(after.batches - before.batches).toBe(1);
  });
});
