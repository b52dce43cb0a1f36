// The embedded store's two connections get the settings the store's promises rest on: WAL and
// synchronous=FULL on the writer (a status-0 answer survives power loss), a read-only reader, and
// the page cache PAYGATE_SQLITE_CACHE_MB sets on both (the memory soak of issue 29 found the
// default caches filling over minutes: bounded, but it looked like growth), and a savepoint's undo
// pages kept in memory, not in a temp file made on the event loop for every group-commit batch.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqliteConnections } from '../../src/store/open.js';

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) fs.rmSync(folder, { recursive: true, force: true });
});

function connections(options: { cache_mb?: number } = {}) {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-sqlite-'));
  folders.push(folder);
  return openSqliteConnections(path.join(folder, 'paygate.sqlite'), options);
}

describe('openSqliteConnections', () => {
  it('opens the writer in WAL with synchronous=FULL and the reader query-only', () => {
    const { writer, reader } = connections();
    expect(writer.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(writer.pragma('synchronous', { simple: true })).toBe(2);
    expect(writer.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(reader.pragma('query_only', { simple: true })).toBe(1);
    expect(() => reader.exec('CREATE TABLE t (x)')).toThrow(/readonly|query_only/i);
    writer.close();
    reader.close();
  });

  it('sets the page cache of both connections in MB when asked, and leaves better-sqlite3 its 16 MB otherwise', () => {
    const small = connections({ cache_mb: 2 });
    expect(small.writer.pragma('cache_size', { simple: true })).toBe(-2048);
    expect(small.reader.pragma('cache_size', { simple: true })).toBe(-2048);
    const unset = connections();
    expect(unset.writer.pragma('cache_size', { simple: true })).toBe(-16000);
    expect(unset.reader.pragma('cache_size', { simple: true })).toBe(-16000);
    for (const db of [small.writer, small.reader, unset.writer, unset.reader]) db.close();
  });

  // Group commit runs each unit in a savepoint (store/group-commit.ts). SQLite keeps a savepoint's
  // undo pages in a statement journal, and with its default temp_store that journal spills past
  // 64 KB into a file it creates and unlinks in /var/tmp: file-system work on the event loop, for
  // about one sale in five in issue 29's benchmark. The open descriptors say where the journal is.
  it.skipIf(!fs.existsSync('/proc/self/fd'))('keeps a savepoint journal of hundreds of pages in memory, not in a temp file', () => {
    const { writer, reader } = connections();
    const sqliteTempFiles = () =>
      fs
        .readdirSync('/proc/self/fd')
        .map((fd) => {
          try {
            return fs.readlinkSync(`/proc/self/fd/${fd}`);
          } catch {
            return ''; // closed since it was listed (the listing's own descriptor)
          }
        })
        .filter((target) => target.includes('etilqs_'));
    writer.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)');
    writer.exec('BEGIN');
    const insert = writer.prepare('INSERT INTO t (v) VALUES (?)');
    for (let i = 0; i < 2000; i++) insert.run('x'.repeat(200));
    writer.exec('SAVEPOINT unit');
    // Every row changes: the journal holds the original of each of some hundred pages (over 400 KB).
    expect(writer.prepare("UPDATE t SET v = v || 'y'").run().changes).toBe(2000);
    expect(sqliteTempFiles()).toEqual([]);
    writer.exec('ROLLBACK TO unit');
    writer.exec('RELEASE unit');
    writer.exec('COMMIT');
    // The rollback to the savepoint restored every row from the journal in memory.
    expect(writer.prepare("SELECT count(*) AS n FROM t WHERE v LIKE '%y'").get()).toEqual({ n: 0 });
    expect(writer.pragma('temp_store', { simple: true })).toBe(2);
    writer.close();
    reader.close();
  });
});
