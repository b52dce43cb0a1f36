// Opens the store the configuration names: the embedded SQLite file by default,
// PostgreSQL when DATABASE_URL is set.
import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.js';
import { prepareStatements } from './pg-prepared.js';
import { SqlStore, type StoreOptions } from './sql-store.js';
import { TwoConnectionSqliteDialect } from './sqlite-driver.js';
import type { Store } from './store.js';
import { WalCheckpointer } from './wal-checkpoint.js';
import { type FileSyncer, fsyncThread, WalSync } from './wal-sync.js';

export interface SqliteStoreOptions extends StoreOptions {
  /**
   * Commit concurrent transactions together (store/group-commit.ts); on by default. Off only to
   * measure what it brings (PAYGATE_GROUP_COMMIT=off): every transaction then commits alone.
   */
  readonly group_commit?: boolean;
  /**
   * The page cache of each of the two connections, in MB (PAYGATE_SQLITE_CACHE_MB). It fills as
   * the file's pages are read and then stays: memory the process holds by design, not a leak.
   * Unset, better-sqlite3's default stands (cache_size -16000, about 16 MB).
   */
  readonly cache_mb?: number;
  /** What flushes the WAL after each commit (store/wal-sync.ts); a thread of its own unless a test gives another. */
  readonly file_syncer?: FileSyncer;
  /** How often the checkpoint thread copies the WAL back (store/wal-checkpoint.ts); its default unless a test sets it. */
  readonly checkpoint_interval_ms?: number;
  /** Told when the checkpoint thread has failed and the writer checkpoints on the event loop again. */
  readonly on_checkpoint_failure?: (error: Error) => void;
}

/** The embedded store's two connections to one file, each with the settings the store relies on. */
export function openSqliteConnections(
  file_path: string,
  options: Pick<SqliteStoreOptions, 'cache_mb'> = {},
): { writer: BetterSqlite3.Database; reader: BetterSqlite3.Database } {
  fs.mkdirSync(path.dirname(file_path), { recursive: true, mode: 0o700 });
  const cache_size = options.cache_mb === undefined ? null : `cache_size = -${Math.round(options.cache_mb * 1024)}`;
  const writer = new BetterSqlite3(file_path);
  // WAL for concurrent readers; synchronous=FULL so a committed transaction survives power loss,
  // which is what a status-0 answer promises (openSqliteStore hands that sync to wal-sync.ts).
  writer.pragma('journal_mode = WAL');
  writer.pragma('synchronous = FULL');
  writer.pragma('foreign_keys = ON');
  writer.pragma('busy_timeout = 5000');
  // Group commit wraps each unit in a savepoint (store/group-commit.ts), whose undo pages SQLite
  // keeps in a statement journal; with temp files on disk (its default) the journal spills past
  // 64 KB into a new file in /var/tmp, created, written and unlinked on the event loop about once
  // every five sales. In memory it holds one unit's pages, emptied when the unit's savepoint is
  // released (bench/RESULTS.md, thirty-fifth session).
  writer.pragma('temp_store = MEMORY');
  if (cache_size !== null) writer.pragma(cache_size);
  // The second connection serves plain SELECTs outside transactions (store/sqlite-driver.ts);
  // query_only makes a write sent to it by mistake fail instead of competing with the writer.
  const reader = new BetterSqlite3(file_path);
  reader.pragma('busy_timeout = 5000');
  reader.pragma('query_only = ON');
  if (cache_size !== null) reader.pragma(cache_size);
  return { writer, reader };
}

export function openSqliteStore(file_path: string, options: SqliteStoreOptions = {}): Store {
  const { writer, reader } = openSqliteConnections(file_path, options);
  // Every write of the store goes through its driver, which makes each commit durable before its
  // caller hears of it (store/wal-sync.ts): the fsync SQLite would do at COMMIT under FULL, done
  // on a thread of its own instead of on the event loop. What FULL adds over NORMAL in WAL mode
  // is exactly that sync; checkpoints are synced by SQLite either way.
  // Checkpoints, too, leave the event loop (store/wal-checkpoint.ts): the writer makes none of its
  // own unless the checkpoint thread fails, when SQLite's default (every 1000 pages) comes back.
  const checkpointer = new WalCheckpointer(file_path, {
    ...(options.checkpoint_interval_ms !== undefined ? { interval_ms: options.checkpoint_interval_ms } : {}),
    on_failure: (error) => {
      if (writer.open) writer.pragma('wal_autocheckpoint = 1000');
      options.on_checkpoint_failure?.(error);
    },
  });
  const wal_sync = new WalSync(`${file_path}-wal`, options.file_syncer ?? fsyncThread(), checkpointer);
  writer.pragma('synchronous = NORMAL');
  writer.pragma('wal_autocheckpoint = 0');
  const dialect = new TwoConnectionSqliteDialect(writer, reader, wal_sync);
  return new SqlStore(new Kysely<Database>({ dialect }), 'sqlite', {
    group_commit: options.group_commit ?? true,
    direct: dialect.direct(),
    durable: () => wal_sync.durable(),
    ...(options.trace_ids ? { trace_ids: options.trace_ids } : {}),
  });
}

const INT8_OID = 20;

export function openPostgresStore(
  connection_string: string,
  pool_max: number,
  on_idle_error?: (error: Error) => void,
  options: StoreOptions = {},
): Store {
  const pool = new pg.Pool({
    connectionString: connection_string,
    max: pool_max,
    connectionTimeoutMillis: 10_000,
    idleTimeoutMillis: 30_000,
    // Per-pool type parsing (no global mutation): int8 as a number. Amounts are capped at 2^53-1.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID
          ? (value: string) => Number(value)
          : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
    },
  });
  // An idle connection cut by the server (restart, admin kill) emits 'error' on the pool;
  // unhandled it would crash the process. The pool drops that client and opens another.
  pool.on('error', (error) => on_idle_error?.(error));
  // A connection cut while checked out emits 'error' on its client, where the pool keeps no
  // listener; the query in flight fails on its own (500, status -1), the process must not.
  pool.on('connect', (client) => {
    client.on('error', (error) => on_idle_error?.(error));
    // Each connection prepares the statements it runs once, instead of PostgreSQL planning them anew every time.
    prepareStatements(client);
  });
  return new SqlStore(new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }), 'postgres', {
    group_commit: false,
    pool,
    ...(options.trace_ids ? { trace_ids: options.trace_ids } : {}),
  });
}

export function openStore(options: {
  database_url: string | null;
  data_dir: string;
  pg_pool_max: number;
  on_idle_error?: (error: Error) => void;
  group_commit?: boolean;
  sqlite_cache_mb?: number;
  file_syncer?: FileSyncer;
  on_checkpoint_failure?: (error: Error) => void;
}): Store {
  if (options.database_url) return openPostgresStore(options.database_url, options.pg_pool_max, options.on_idle_error);
  return openSqliteStore(path.join(options.data_dir, 'paygate.sqlite'), {
    group_commit: options.group_commit ?? true,
    ...(options.sqlite_cache_mb !== undefined ? { cache_mb: options.sqlite_cache_mb } : {}),
    ...(options.file_syncer ? { file_syncer: options.file_syncer } : {}),
    ...(options.on_checkpoint_failure ? { on_checkpoint_failure: options.on_checkpoint_failure } : {}),
  });
}
