// `paygate master-key rotate / status / retire` (docs/production.md, "Master-key rotation"):
// every sealed value of the store (SEALED_TABLES: merchants' secrets, processors' credentials,
// vaulted cards, payees, cashier customers, the sandbox's admin token) re-sealed under this
// process's current master key, while the gateways keep serving.
//
// The switch first (operations/master-key.ts): the store says new values are sealed under the new
// key, and every running instance follows within PAYGATE_KEY_REFRESH_MS. Then each table is read
// by primary key a batch at a time; each batch is one transaction that re-seals what is not yet
// under the new key (written back only where the value is still the one read) and records the
// last key done, so a run killed anywhere leaves every value under one of the two keys and the
// next run goes on from that key. A value an instance sealed under the old key before it read
// the switch is found by the count that ends each pass, and re-sealed by another pass.
import { type Sealer, sealedKeyId } from '../crypto/sealer.js';
import { SEALED_TABLE_NAMES, type SealedCount, type SealedTable } from '../store/master-key-store.js';
import type { RotationProgress, Store } from '../store/store.js';
import { switchSealingKey } from './master-key.js';
import { purposeOf } from './sealed-purposes.js';

export interface RotationDeps {
  readonly store: Store;
  readonly sealer: Sealer;
  readonly now_ms: () => number;
  readonly sleep: (ms: number) => Promise<void>;
}

export interface RotationOptions {
  /** Rows read (and re-sealed) per transaction. */
  readonly batch_size: number;
  /** Pause between batches, to spare a loaded database. */
  readonly pause_ms: number;
  /** How long after the switch every instance seals under the new key: PAYGATE_KEY_REFRESH_MS twice. */
  readonly settle_ms: number;
  /** Passes at most (each one ends with a count of what remains). */
  readonly max_passes: number;
  /** Told after each committed batch. */
  readonly on_batch?: (progress: RotationProgress) => void;
}

export interface KeyCount {
  readonly key_id: string;
  readonly values: number;
}

export interface RotationReport {
  readonly key_id: string;
  readonly previous_key_id: string | null;
  /** This run switched the store's sealing key (false: an earlier run had). */
  readonly switched: boolean;
  /** Values this run re-sealed. */
  readonly resealed: number;
  /** Values not under key_id when the run ended: 0 once the rotation is complete. */
  readonly remaining: number;
  readonly by_key: readonly KeyCount[];
  readonly passes: number;
}

/** A value that opens with none of the keys given: the run stops there, naming where. */
export class RotationFailed extends Error {}

function byKey(counts: readonly SealedCount[]): KeyCount[] {
  const totals = new Map<string, number>();
  for (const c of counts) totals.set(c.key_id, (totals.get(c.key_id) ?? 0) + c.count);
  return [...totals].map(([key_id, values]) => ({ key_id, values })).sort((a, b) => b.values - a.values);
}

function fresh(table: SealedTable, target: string, now_ms: number, resealed = 0): RotationProgress {
  return { table, target_key_id: target, after: null, resealed, done: false, updated_at_ms: now_ms };
}

/** One table, from its recorded progress to its end; returns the values re-sealed by this call. */
async function resealTable(deps: RotationDeps, table: SealedTable, options: RotationOptions): Promise<number> {
  const target = deps.sealer.sealingKeyId();
  const recorded = (await deps.store.masterKeys.rotationProgress()).find((p) => p.table === table);
  let progress = recorded !== undefined && recorded.target_key_id === target ? recorded : fresh(table, target, deps.now_ms());
  let resealed = 0;
  while (!progress.done) {
    const before = progress;
    const next = await deps.store.transaction(async (tx) => {
      const rows = await tx.masterKeys.sealedBatch(table, before.after, options.batch_size);
      let n = 0;
      for (const row of rows) {
        for (const [column, sealed] of Object.entries(row.values)) {
          if (sealed === null) continue;
          let again: string | null;
          try {
            again = deps.sealer.reseal(sealed, purposeOf(table, column, row));
          } catch (error) {
            throw new RotationFailed(`${table}.${column}: ${error instanceof Error ? error.message : String(error)}`);
          }
          // Changed meanwhile (a secret rolled): the new value is sealed by its writer; the count sees it.
          if (again !== null && (await tx.masterKeys.replaceSealed(table, row.key, column, sealed, again))) n += 1;
        }
      }
      const saved: RotationProgress = {
        table,
        target_key_id: target,
        after: rows.at(-1)?.key ?? before.after,
        resealed: before.resealed + n,
        done: rows.length < options.batch_size,
        updated_at_ms: deps.now_ms(),
      };
      await tx.masterKeys.saveRotationProgress(saved);
      return { saved, n };
    });
    progress = next.saved;
    resealed += next.n;
    options.on_batch?.(progress);
    if (!progress.done && options.pause_ms > 0) await deps.sleep(options.pause_ms);
  }
  return resealed;
}

/** The whole rotation, or what is left of it: switch, passes over every table, the count. */
export async function rotateMasterKey(deps: RotationDeps, options: RotationOptions): Promise<RotationReport> {
  const { current, previous } = deps.sealer.keyIds();
  const switched = await switchSealingKey(deps, deps.now_ms());
  let resealed = 0;
  let passes = 0;
  let counts: SealedCount[];
  for (;;) {
    passes += 1;
    for (const table of SEALED_TABLE_NAMES) resealed += await resealTable(deps, table, options);
    // An instance reads the switch within PAYGATE_KEY_REFRESH_MS: count once every one has.
    const state = await deps.store.masterKeys.state();
    const settled_at_ms = (state?.updated_at_ms ?? 0) + options.settle_ms;
    if (deps.now_ms() < settled_at_ms) await deps.sleep(settled_at_ms - deps.now_ms());
    counts = await deps.store.masterKeys.countSealed();
    const behind = new Set(counts.filter((c) => c.key_id !== current && c.count > 0).map((c) => c.table));
    if (behind.size === 0 || passes >= options.max_passes) break;
    // Another pass over the tables that still hold values under another key.
    for (const table of behind) {
      const recorded = (await deps.store.masterKeys.rotationProgress()).find((p) => p.table === table);
      await deps.store.masterKeys.saveRotationProgress(fresh(table, current, deps.now_ms(), recorded?.resealed ?? 0));
    }
  }
  const by_key = byKey(counts);
  return {
    key_id: current,
    previous_key_id: previous,
    switched,
    resealed,
    remaining: by_key.filter((k) => k.key_id !== current).reduce((sum, k) => sum + k.values, 0),
    by_key,
    passes,
  };
}

export interface MasterKeyStatus {
  /** The key the store seals new values under. */
  readonly sealing_key_id: string | null;
  /** The key the store's fingerprint key is sealed under ('v1' never: it is written v2). */
  readonly fingerprint_key_id: string | null;
  readonly key_id: string;
  readonly previous_key_id: string | null;
  readonly by_key: readonly KeyCount[];
  /** Values not under this process's current key. */
  readonly remaining: number;
  readonly progress: readonly RotationProgress[];
}

/** Where the store stands: which key seals, how many values each key sealed, the rotation's progress. */
export async function masterKeyStatus(deps: { readonly store: Store; readonly sealer: Sealer }): Promise<MasterKeyStatus> {
  const { current, previous } = deps.sealer.keyIds();
  const state = await deps.store.masterKeys.state();
  const by_key = byKey(await deps.store.masterKeys.countSealed());
  return {
    sealing_key_id: state?.sealing_key_id ?? null,
    fingerprint_key_id: state === null ? null : sealedKeyId(state.fingerprint_key_sealed),
    key_id: current,
    previous_key_id: previous,
    by_key,
    remaining: by_key.filter((k) => k.key_id !== current).reduce((sum, k) => sum + k.values, 0),
    progress: await deps.store.masterKeys.rotationProgress(),
  };
}
