// Opens the store the configuration names: the embedded SQLite file by default,
// PostgreSQL when DATABASE_URL is set.
import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.js';
import { SqlStore } from './sql-store.js';
import type { Store } from './store.js';

export function openSqliteStore(file_path: string): Store {
  fs.mkdirSync(path.dirname(file_path), { recursive: true, mode: 0o700 });
  const database = new BetterSqlite3(file_path);
  // WAL for concurrent readers; synchronous=FULL so a committed transaction survives power loss,
  // which is what a status-0 answer promises.
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = FULL');
  database.pragma('foreign_keys = ON');
  database.pragma('busy_timeout = 5000');
  return new SqlStore(new Kysely<Database>({ dialect: new SqliteDialect({ database }) }), 'sqlite');
}

const INT8_OID = 20;

export function openPostgresStore(connection_string: string, pool_max: number, on_idle_error?: (error: Error) => void): Store {
  const pool = new pg.Pool({
    connectionString: connection_string,
    max: pool_max,
    connectionTimeoutMillis: 10_000,
    idleTimeoutMillis: 30_000,
    // Per-pool type parsing (no global mutation): int8 as a number. Amounts are capped at 2^53-1.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
    },
  });
  // An idle connection cut by the server (restart, admin kill) emits 'error' on the pool;
  // unhandled it would crash the process. The pool drops that client and opens another.
  pool.on('error', (error) => on_idle_error?.(error));
  return new SqlStore(new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }), 'postgres');
}

export function openStore(options: {
  database_url: string | null; data_dir: string; pg_pool_max: number; on_idle_error?: (error: Error) => void;
}): Store {
  if (options.database_url) return openPostgresStore(options.database_url, options.pg_pool_max, options.on_idle_error);
  return openSqliteStore(path.join(options.data_dir, 'paygate.sqlite'));
}
