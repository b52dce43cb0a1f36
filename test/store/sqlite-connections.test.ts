// The embedded store's two connections get the settings the store's promises rest on: WAL and
// synchronous=FULL on the writer (a status-0 answer survives power loss), a read-only reader, and
// the page cache PAYGATE_SQLITE_CACHE_MB sets on both (the memory soak of issue 29 found the
// default caches filling over minutes: bounded, but it looked like growth).
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
});
