// The embedded store's WAL checkpoints run on a thread of their own (store/wal-checkpoint.ts), not
// inside the writer's COMMITs on the event loop: what lands in the database file itself (the WAL
// left aside) shows who copied it there, and when.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/store/open.js';
import { WalCheckpointer } from '../../src/store/wal-checkpoint.js';

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) fs.rmSync(folder, { recursive: true, force: true });
});
function folder(): string {
  const made = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-wal-checkpoint-'));
  folders.push(made);
  return made;
}

/** The sandbox clock's offset as the database file alone holds it: a copy without its WAL, opened read-only. */
function offsetInDatabaseFile(file: string): number | null {
  const copy = path.join(folder(), 'copy.sqlite');
  fs.copyFileSync(file, copy);
  const db = new BetterSqlite3(copy, { readonly: true });
  try {
    const row = db.prepare('select offset_ms from sandbox_clock where id = 1').get() as { offset_ms: number } | undefined;
    return row === undefined ? null : Number(row.offset_ms);
  } catch {
    return null; // the table itself not yet copied back
  } finally {
    db.close();
  }
}

async function eventually<T>(read: () => T, wanted: T, within_ms: number): Promise<T> {
  const until = Date.now() + within_ms;
  let seen = read();
  while (seen !== wanted && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    seen = read();
  }
  return seen;
}

describe('the embedded store', () => {
  it('leaves checkpoints out of its COMMITs and has its thread copy every commit back into the database file', async () => {
    const file = path.join(folder(), 'paygate.sqlite');
    const store = openSqliteStore(file, { checkpoint_interval_ms: 25 });
    try {
      await store.migrate();
      // Each commit is a few pages, far from SQLite's own 1000-page threshold (switched off for the
      // writer besides): only the thread can have put them in the file.
      for (const offset_ms of [2_000, 3_000, 4_000]) {
        await store.sandboxClock.setOffset(offset_ms);
        expect(await eventually(() => offsetInDatabaseFile(file), offset_ms, 5_000)).toBe(offset_ms);
      }
    } finally {
      await store.close();
    }
  });

  it('makes no checkpoint inside its COMMITs, however long the WAL grows', async () => {
    const file = path.join(folder(), 'paygate.sqlite');
    // The thread starts at the first commit but waits an hour before its first checkpoint.
    const store = openSqliteStore(file, { checkpoint_interval_ms: 3_600_000 });
    try {
      await store.migrate();
      const before = offsetInDatabaseFile(file);
      // 1500 commits append at least 1500 pages to the WAL: past SQLite's own threshold (1000),
      // at which a writer left at its default would have copied them back in one of these COMMITs.
      for (let offset_ms = 1; offset_ms <= 1_500; offset_ms++) await store.sandboxClock.setOffset(offset_ms);
      expect(fs.statSync(`${file}-wal`).size).toBeGreaterThan(1_000 * 4_096);
      expect(offsetInDatabaseFile(file)).toBe(before);
      expect(await store.sandboxClock.getOffset()).toBe(1_500);
    } finally {
      await store.close();
    }
    expect(offsetInDatabaseFile(file)).toBe(1_500);
  });

  it('stops its checkpoint thread before its last connection closes, which leaves everything in the file and no WAL', async () => {
    const file = path.join(folder(), 'paygate.sqlite');
    const writing = openSqliteStore(file, { checkpoint_interval_ms: 25 });
    await writing.migrate();
    await writing.sandboxClock.setOffset(5_000);
    await writing.close();
    // Closed by its last connection, the database holds everything and its WAL is gone.
    expect(fs.existsSync(`${file}-wal`)).toBe(false);
    expect(offsetInDatabaseFile(file)).toBe(5_000);

    const reading = openSqliteStore(file, { checkpoint_interval_ms: 25 });
    try {
      expect(await reading.sandboxClock.getOffset()).toBe(5_000);
    } finally {
      await reading.close();
    }
  });
});

describe('WalCheckpointer', () => {
  it('tells of a thread that cannot checkpoint once, and runs nothing more', async () => {
    const failures: Error[] = [];
    const checkpointer = new WalCheckpointer(path.join(folder(), 'missing', 'paygate.sqlite'), {
      interval_ms: 10,
      on_failure: (error) => failures.push(error),
    });
    expect(checkpointer.running).toBe(false);
    checkpointer.notice();
    expect(checkpointer.running).toBe(true);
    for (let i = 0; i < 250 && failures.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(failures).toHaveLength(1);
    expect(failures[0]!.message).toMatch(/unable to open database file|does not exist/i);
    expect(checkpointer.running).toBe(false);
    checkpointer.notice();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(failures).toHaveLength(1);
    expect(checkpointer.stats.runs).toBe(0);
    await checkpointer.close();
  });

  it('checkpoints on its interval once noticed, and close ends its thread', async () => {
    const file = path.join(folder(), 'paygate.sqlite');
    const db = new BetterSqlite3(file);
    db.pragma('journal_mode = WAL');
    db.pragma('wal_autocheckpoint = 0');
    db.exec('create table t (v integer)');
    db.prepare('insert into t values (?)').run(42);
    const failures: Error[] = [];
    const checkpointer = new WalCheckpointer(file, { interval_ms: 10, on_failure: (error) => failures.push(error) });
    checkpointer.notice();
    try {
      for (let i = 0; i < 250 && checkpointer.stats.complete === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(checkpointer.stats.complete).toBeGreaterThan(0);
      const copy = path.join(folder(), 'copy.sqlite');
      fs.copyFileSync(file, copy);
      const copied = new BetterSqlite3(copy, { readonly: true });
      expect(copied.prepare('select v from t').get()).toEqual({ v: 42 });
      copied.close();
    } finally {
      await checkpointer.close();
      db.close();
    }
    const runs = checkpointer.stats.runs;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(checkpointer.stats.runs).toBe(runs);
    expect(failures).toEqual([]);
  });
});
