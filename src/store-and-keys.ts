// What every process that opens the gateway's store needs, and nothing of the HTTP edge: the
// configured store, and the master keys and the Sealer over it. The gateway (main.ts), a cluster's
// primary (cluster.ts) and each CLI command (cli/) open the store the same way through here; kept
// apart from main.ts so that a command such as `paygate merchant list` does not load the whole
// HTTP application to read one table.
import path from 'node:path';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { previousKeyPath } from './crypto/key-files.js';
import { loadOrCreateKeyFile, readKeyFile, type Sealer } from './crypto/sealer.js';
import { loadSealer, type MasterKeys } from './operations/master-key.js';
import { openStore } from './store/open.js';
import type { Store } from './store/store.js';
import type { FileSyncer } from './store/wal-sync.js';

/**
 * The master keys this process was given: PAYGATE_MASTER_KEY (with PAYGATE_MASTER_KEY_PREVIOUS
 * during a rotation), or the key file, created on first use (with `<file>.previous` beside it
 * during a rotation: crypto/key-files.ts).
 */
export function masterKeysFor(config: Config): MasterKeys {
  if (config.master_key) return { current: config.master_key, previous: config.master_key_previous };
  const current = loadOrCreateKeyFile(config.data_dir, config.master_key_file);
  return { current, previous: readKeyFile(previousKeyPath(config.master_key_file)) };
}

/** The Sealer of a process on `store` (migrated): its keys, and the store's sealing key and fingerprint key. */
export function sealerFor(config: Config, store: Store): Promise<Sealer> {
  return loadSealer({ store }, masterKeysFor(config), Date.now());
}

/** Live mode with the embedded store's key file in the data folder: whoever copies the folder has the key too. */
export function keyBesideDatabase(config: Config): boolean {
  return config.master_key === null && config.database_url === null && path.dirname(config.master_key_file) === config.data_dir;
}

/** The store the configuration names (PostgreSQL by DATABASE_URL, else SQLite in the data folder), not yet migrated. */
export function openConfiguredStore(config: Config, logger?: Logger, file_syncer?: FileSyncer): Store {
  return openStore({
    ...(file_syncer ? { file_syncer } : {}),
    database_url: config.database_url,
    data_dir: config.data_dir,
    pg_pool_max: config.limits.pg_pool_max,
    group_commit: config.group_commit,
    sqlite_cache_mb: config.limits.sqlite_cache_mb,
    on_idle_error: (error) => logger?.warn({ err: error }, 'idle database connection lost; the pool replaces it'),
    on_checkpoint_failure: (error) =>
      logger?.warn({ err: error }, 'the WAL checkpoint thread failed; the writer checkpoints on the event loop again (docs/production.md)'),
  });
}
