// One gateway process per embedded database. SQLite has one writer, and this gateway keeps
// per-process state about it (group commit, the notification signal): a second gateway on the
// same data folder would contend for the file and miss the first one's wake-ups, silently. So a
// gateway holds an exclusive lock on a small SQLite file beside the database for as long as it
// runs. The operating system drops the lock when the process ends in any way (kill -9
// included), so a crash never leaves a stale lock behind. CLI commands (merchant create, …)
// take no lock: they are short and SQLite serialises their writes with the gateway's.
import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';

export class DataFolderInUse extends Error {}

export interface InstanceLock {
  release(): void;
}

export const LOCK_FILE = 'gateway.lock';

export function lockDataFolder(data_dir: string): InstanceLock {
  fs.mkdirSync(data_dir, { recursive: true, mode: 0o700 });
  const db = new BetterSqlite3(path.join(data_dir, LOCK_FILE));
  try {
    db.pragma('busy_timeout = 0');
    // Exclusive locking mode keeps the lock of the first write until the connection closes.
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
    db.exec('CREATE TABLE IF NOT EXISTS holder (pid INTEGER NOT NULL, since_ms INTEGER NOT NULL)');
    db.exec('DELETE FROM holder');
    db.prepare('INSERT INTO holder (pid, since_ms) VALUES (?, ?)').run(process.pid, Date.now());
    db.exec('COMMIT');
  } catch (error) {
    db.close();
    if ((error as { code?: string }).code === 'SQLITE_BUSY' || (error as { code?: string }).code === 'SQLITE_LOCKED') {
      throw new DataFolderInUse(
        `another paygate gateway is already running on the data folder ${data_dir}: the embedded SQLite store serves one process. Stop it first, or use DATABASE_URL (PostgreSQL) to run several instances`,
      );
    }
    throw error;
  }
  return {
    release() {
      if (db.open) db.close();
    },
  };
}
