// A fresh, empty database of either kind reached with a plain Kysely connection (no store, no
// migrations yet), for tests that build a database as an older release left it (migrateTo):
// databaseAt does both.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { CompiledQuery, Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { onTestFinished } from 'vitest';
import { migrateTo } from '../../src/store/migrations/index.js';
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

/**
 * In a test: a fresh database of `kind` with the migrations up to and including `migration`, as
 * a release of that time left it; closed (and removed) when the test finishes.
 */
export async function databaseAt(kind: StoreKind, migration: string): Promise<Kysely<Database>> {
  const opened = await freshDatabase(kind);
  onTestFinished(() => opened.close());
  await migrateTo(opened.db as unknown as Kysely<unknown>, kind, migration);
  return opened.db;
}

/** The migrations' own indexes of `table` by name, sorted: not those behind constraints (primary and unique keys). */
export async function indexNames(db: Kysely<Database>, kind: StoreKind, table: string): Promise<string[]> {
  const rows =
    kind === 'sqlite'
      ? await sql<{
          name: string;
        }>`select name from sqlite_master where type = 'index' and tbl_name = ${table} and sql is not null`.execute(db)
      : await sql<{ name: string }>`select indexname as name from pg_indexes
        where tablename = ${table} and indexname not in (select conname from pg_constraint)`.execute(db);
  return rows.rows.map((row) => row.name).sort();
}

/** The plan of `query` as text lines; on PostgreSQL with sequential scans priced out, so it shows whether an index can serve the query at all. */
export async function queryPlan(db: Kysely<Database>, kind: StoreKind, query: CompiledQuery): Promise<string[]> {
  if (kind === 'sqlite') {
    const rows = await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters]));
    return rows.rows.map((row) => row.detail);
  }
  return db.transaction().execute(async (tx) => {
    await sql`set local enable_seqscan = off`.execute(tx);
    const rows = await tx.executeQuery<{ 'QUERY PLAN': string }>(CompiledQuery.raw(`explain ${query.sql}`, [...query.parameters]));
    return rows.rows.map((row) => row['QUERY PLAN']);
  });
}
