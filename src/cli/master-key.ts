// `paygate master-key rotate / status / retire` (docs/production.md, "Master-key rotation"):
// the command side of operations/master-key-rotation.ts. It prints key ids, never a key. With
// --json, stdout holds one JSON object (what a script reads); progress goes to stderr.
//
// The embedded store (SQLite) serves one gateway, which holds the key it started with: its
// rotation runs with that gateway stopped (the data folder's lock says whether one runs), takes
// seconds for thousands of values, and may be killed and run again. With a key file, rotate writes
// the new key as the file and keeps the old one beside it (`.previous`) until retire deletes it
// (crypto/key-files.ts). With PAYGATE_MASTER_KEY the operator gives the keys (the new one as
// PAYGATE_MASTER_KEY, the old one as PAYGATE_MASTER_KEY_PREVIOUS): the command never makes one.
//
// Exit codes: 0 done (rotate: no value left under another key; retire: the old key may go);
// 1 a key does not fit the store, or a value opens with no key given; 2 bad options; 3 values
// remain under another key (run rotate again); 75 a gateway runs on the embedded store.
import { parseArgs } from 'node:util';
import type { Config } from '../config.js';
import { beginKeyFileRotation, previousKeyPath, retirePreviousKeyFile } from '../crypto/key-files.js';
import { type Sealer, UnknownMasterKey } from '../crypto/sealer.js';
import { MasterKeyRefused } from '../operations/master-key.js';
import {
  type MasterKeyStatus,
  masterKeyStatus,
  type RotationReport,
  RotationFailed,
  rotateMasterKey,
} from '../operations/master-key-rotation.js';
import { sealerFor } from '../store-and-keys.js';
import { DataFolderInUse, type InstanceLock, lockDataFolder } from '../store/instance-lock.js';
import type { RotationProgress, Store } from '../store/store.js';
import { openCliStore } from './store-session.js';
import { unknownCommand } from './usage.js';

const BATCH_DEFAULT = 500;
const BATCH_MAX = 10_000;
const PAUSE_MAX_MS = 60_000;
/** Passes at most: each one ends with a count; a value left after these is reported (exit 3). */
const MAX_PASSES = 5;
/** A progress line at most this often (and when a table is done). */
const PROGRESS_EVERY_MS = 1_000;

function say(line: string): void {
  process.stderr.write(`paygate: ${line}\n`);
}

function wholeNumber(raw: string | undefined, name: string, fallback: number, min: number, max: number): number | string {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  return /^\d+$/.test(raw) && n >= min && n <= max ? n : `${name} must be a whole number from ${min} to ${max}`;
}

/** The embedded store's gateway must be stopped: it holds the key it started with. */
function lockEmbedded(config: Config): InstanceLock | null | 'in_use' {
  if (config.database_url !== null) return null;
  try {
    return lockDataFolder(config.data_dir);
  } catch (error) {
    if (!(error instanceof DataFolderInUse)) throw error;
    say(
      `a gateway is running on the data folder ${config.data_dir}: the embedded store serves one gateway, which holds the master key it started with, so the key is rotated with it stopped. Stop it, run paygate master-key rotate, start it again (docs/production.md, "Master-key rotation")`,
    );
    return 'in_use';
  }
}

/** Runs `work` on the configured store with its Sealer; a key that does not fit is said, exit 1. */
async function withStore(config: Config, work: (store: Store, sealer: Sealer) => Promise<number>): Promise<number> {
  const { store } = await openCliStore(config);
  try {
    return await work(store, await sealerFor(config, store));
  } catch (error) {
    if (error instanceof MasterKeyRefused || error instanceof RotationFailed || error instanceof UnknownMasterKey) {
      say(error.message);
      return 1;
    }
    throw error;
  } finally {
    await store.close();
  }
}

function keysLine(status: Pick<MasterKeyStatus, 'by_key'>): string {
  return status.by_key.length === 0
    ? 'no sealed values'
    : status.by_key.map((k) => `${k.values} under ${k.key_id === 'v1' ? 'the first key (v1)' : k.key_id}`).join(', ');
}

async function rotate(config: Config, argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { 'batch-size': { type: 'string' }, 'pause-ms': { type: 'string' }, json: { type: 'boolean' } },
    strict: true,
  });
  const batch_size = wholeNumber(values['batch-size'], '--batch-size', BATCH_DEFAULT, 1, BATCH_MAX);
  const pause_ms = wholeNumber(values['pause-ms'], '--pause-ms', 0, 0, PAUSE_MAX_MS);
  for (const problem of [batch_size, pause_ms]) {
    if (typeof problem === 'string') {
      say(problem);
      return 2;
    }
  }
  const lock = lockEmbedded(config);
  if (lock === 'in_use') return 75;
  try {
    if (config.master_key === null) {
      // The key file's own check first: the keys as they are must fit the store before a new one is made.
      const checked = await withStore(config, async () => 0);
      if (checked !== 0) return checked;
      if (beginKeyFileRotation(config.master_key_file).created) {
        say(
          `a new master key is in ${config.master_key_file}; the old one is kept in ${previousKeyPath(config.master_key_file)} until paygate master-key retire`,
        );
      }
    } else if (config.master_key_previous === null) {
      say('PAYGATE_MASTER_KEY_PREVIOUS is not set: values are re-sealed under PAYGATE_MASTER_KEY, and any under another key stop the run');
    }
    let last_said_ms = 0;
    const on_batch = (progress: RotationProgress): void => {
      if (!progress.done && Date.now() - last_said_ms < PROGRESS_EVERY_MS) return;
      last_said_ms = Date.now();
      say(`${progress.table}: ${progress.resealed} re-sealed${progress.done ? ', done' : ' so far'}`);
    };
    return await withStore(config, async (store, sealer) => {
      say(`re-sealing every sealed value under master key ${sealer.keyIds().current}`);
      const report: RotationReport = await rotateMasterKey(
        { store, sealer, now_ms: () => Date.now(), sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)) },
        {
          batch_size: batch_size as number,
          pause_ms: pause_ms as number,
          // The embedded store's gateway is stopped (the lock); on PostgreSQL every instance reads the switch within its period.
          settle_ms: config.database_url === null ? 0 : 2 * config.key_refresh_ms,
          max_passes: MAX_PASSES,
          on_batch,
        },
      );
      if (values.json) process.stdout.write(`${JSON.stringify(report)}\n`);
      else {
        process.stdout.write(
          `master key ${report.key_id}: ${report.resealed} values re-sealed by this run; ${report.remaining} remain under another key (${keysLine(report)})\n`,
        );
      }
      if (report.remaining > 0) {
        say(
          `${report.remaining} values are still under another key (written meanwhile by an instance without the switch?): run paygate master-key rotate again`,
        );
        return 3;
      }
      say(
        config.master_key === null
          ? 'done: start the gateway, then run paygate master-key retire to delete the old key file'
          : 'done: remove PAYGATE_MASTER_KEY_PREVIOUS from every instance and restart them one at a time (paygate master-key retire checks first)',
      );
      return 0;
    });
  } finally {
    if (lock !== null) lock.release();
  }
}

function printStatus(status: MasterKeyStatus, json: boolean, extra: Record<string, unknown> = {}): void {
  if (json) {
    // Without the last key done: a card_token is not for a log.
    const progress = status.progress.map(({ after: _after, ...rest }) => rest);
    process.stdout.write(`${JSON.stringify({ ...status, progress, ...extra })}\n`);
    return;
  }
  const progress = status.progress.map((p) => `${p.table} ${p.resealed}${p.done ? ' done' : ' in progress'} (to ${p.target_key_id})`);
  process.stdout.write(
    [
      `this process: master key ${status.key_id}${status.previous_key_id === null ? '' : `, previous ${status.previous_key_id}`}`,
      `the store seals under: ${status.sealing_key_id ?? 'none yet'}`,
      `sealed values: ${keysLine(status)}`,
      `not under ${status.key_id}: ${status.remaining}`,
      ...(progress.length > 0 ? [`rotation: ${progress.join(', ')}`] : []),
    ].join('\n') + '\n',
  );
}

async function status(config: Config, argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { json: { type: 'boolean' } }, strict: true });
  return withStore(config, async (store, sealer) => {
    printStatus(await masterKeyStatus({ store, sealer }), values.json === true);
    return 0;
  });
}

async function retire(config: Config, argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { json: { type: 'boolean' } }, strict: true });
  return withStore(config, async (store, sealer) => {
    const now = await masterKeyStatus({ store, sealer });
    const complete = now.remaining === 0 && now.sealing_key_id === now.key_id && now.fingerprint_key_id === now.key_id;
    if (!complete) {
      printStatus(now, values.json === true, { retired: false });
      say(
        `values remain under another key than ${now.key_id}, or the store does not seal under it yet: run paygate master-key rotate first; nothing was retired`,
      );
      return 3;
    }
    const deleted = config.master_key === null ? retirePreviousKeyFile(config.master_key_file) : false;
    printStatus(now, values.json === true, { retired: true, previous_key_file_deleted: deleted });
    say(
      config.master_key === null
        ? deleted
          ? `every value is under master key ${now.key_id}: ${previousKeyPath(config.master_key_file)} deleted`
          : `every value is under master key ${now.key_id}; there was no ${previousKeyPath(config.master_key_file)} to delete`
        : `every value is under master key ${now.key_id}: remove PAYGATE_MASTER_KEY_PREVIOUS from every instance and restart them one at a time`,
    );
    return 0;
  });
}

export async function masterKeyCommand(config: Config, sub: string | undefined, argv: string[]): Promise<number> {
  if (sub === 'rotate') return rotate(config, argv);
  if (sub === 'status') return status(config, argv);
  if (sub === 'retire') return retire(config, argv);
  return unknownCommand(['master-key', sub]);
}
