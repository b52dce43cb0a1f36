// Reads every sealed value a store holds (the tables of store/master-key-store.ts SEALED_TABLES)
// and a master-key rotation's progress, from the test's own connection to the store, and runs
// `paygate master-key …` as an operator does, for test/api/master-key-rotation.test.ts.
import { type ChildProcess, spawn } from 'node:child_process';
import { type Sealer, sealedKeyId } from '../../src/crypto/sealer.js';
import { purposeOf } from '../../src/operations/sealed-purposes.js';
import { SEALED_TABLE_NAMES } from '../../src/store/master-key-store.js';
import { openStore } from '../../src/store/open.js';
import type { SealedRow, SealedTable, Store } from '../../src/store/store.js';
import { CLI_ENTRY } from './build.js';

export interface SealedValue {
  readonly table: SealedTable;
  readonly column: string;
  readonly row: SealedRow;
  readonly sealed: string;
  readonly key_id: string | null;
}

export function openTestStore(store_env: Record<string, string>): Store {
  return openStore({ database_url: store_env.DATABASE_URL ?? null, data_dir: store_env.PAYGATE_DATA_DIR ?? '', pg_pool_max: 2 });
}

/** Every sealed value of every table, with the key id it names ('v1' before key ids). */
export async function sealedValues(store: Store): Promise<SealedValue[]> {
  const values: SealedValue[] = [];
  for (const table of SEALED_TABLE_NAMES) {
    let after: SealedRow['key'] | null = null;
    for (;;) {
      const rows = await store.masterKeys.sealedBatch(table, after, 1000);
      for (const row of rows) {
        for (const [column, sealed] of Object.entries(row.values)) {
          if (sealed !== null) values.push({ table, column, row, sealed, key_id: sealedKeyId(sealed) });
        }
      }
      if (rows.length < 1000) break;
      after = rows.at(-1)!.key;
    }
  }
  return values;
}

/** The values that do not open with `sealer` (none, when the store is consistent for it). */
export function unopened(values: readonly SealedValue[], sealer: Sealer): SealedValue[] {
  return values.filter((v) => {
    try {
      sealer.open(v.sealed, purposeOf(v.table, v.column, v.row));
      return false;
    } catch {
      return true;
    }
  });
}

export interface CliRun {
  readonly child: ChildProcess;
  output(): { stdout: string; stderr: string };
  /** Resolves with the exit code (null when killed by a signal). */
  readonly exited: Promise<number | null>;
}

/** `paygate ARGS` in its own process, with `env` on top of this one's. */
export function runCli(args: readonly string[], env: Record<string, string>): CliRun {
  const child = spawn(process.execPath, [CLI_ENTRY, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => ({ stdout, stderr }), exited };
}
