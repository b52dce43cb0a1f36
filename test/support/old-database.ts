// A fresh, empty database of either kind reached with a plain Kysely connection (no store, no
// migrations yet), for tests that build a database as an older release left it (migrateTo).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import type { Database } from '../../src/store/schema.js';
import { createTestDatabase } from './postgres.js';
import type { StoreKind } from './stores.js';

export interface OldDatabase {
  readonly db: Kysely<Database>;
  close(): Promise<void>;
}

/** A fresh, empty database of `kind`, reached with a plain Kysely connection (no store, no migrations yet). */
export async function freshDatabase(kind: StoreKind): Promise<OldDatabase> {
  if (kind === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-old-db-'));
    const sqlite = new BetterSqlite3(path.join(dir, 'paygate.sqlite'));
    sqlite.pragma('foreign_keys = ON');
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
    return {
      db,
      async close() {
        await db.destroy();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const database = await createTestDatabase();
  const pool = new pg.Pool({ connectionString: database.url, max: 2 });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    async close() {
      await db.destroy();
      await database.drop();
    },
  };
}
