// The Sealer a process works with, built from the master keys it was given and what the store
// says (migration 0023, docs/security.md §1): which key new values are sealed under (the
// rotation switches it; a running gateway reads it again every PAYGATE_KEY_REFRESH_MS) and the
// fingerprint key, kept sealed in the store so that every fingerprint stored before a rotation
// (idempotency keys' request fingerprints, card fingerprints, cashier and back-office tokens)
// still matches after it: those inputs are not kept, so a new fingerprint key could never be
// applied to them. The first process of this release on a database derives the fingerprint key
// from the key its existing values are sealed under, exactly as every earlier release did.
//
// A process that does not hold the key the store seals under, or that cannot open the store's
// fingerprint key, is refused at start with the key ids involved (never a key), rather than
// starting and failing on every sealed value, or sealing under a key the others cannot open.
import { fingerprintKeyOf, keyIdOf, Sealer, sealedKeyId, UnknownMasterKey } from '../crypto/sealer.js';
import { SEALED_TABLE_NAMES, type SealedRow, type SealedTable } from '../store/master-key-store.js';
import type { Store } from '../store/store.js';
import { purposeOf } from './sealed-purposes.js';

const FINGERPRINT_KEY_PURPOSE = 'master-key-state/fingerprint-key';

export interface MasterKeys {
  /** PAYGATE_MASTER_KEY or the key file: seals once the store says so. */
  readonly current: Buffer;
  /** PAYGATE_MASTER_KEY_PREVIOUS or `master.key.previous`, during a rotation: opens only. */
  readonly previous: Buffer | null;
}

/** This process's keys do not fit the store: said at start, with what to do. */
export class MasterKeyRefused extends Error {}

function describe(keys: MasterKeys): string {
  const ids = [keyIdOf(keys.current), ...(keys.previous === null ? [] : [keyIdOf(keys.previous)])];
  return `this process holds master key${ids.length > 1 ? 's' : ''} ${ids.join(' and ')}`;
}

/** The first sealed value in the store, with what it is sealed for; null when the store holds none. */
async function sampleSealed(store: Store): Promise<{ readonly sealed: string; readonly purpose: string; readonly where: string } | null> {
  for (const table of SEALED_TABLE_NAMES) {
    const row: SealedRow | null = await store.masterKeys.firstSealed(table);
    if (row === null) continue;
    for (const [column, sealed] of Object.entries(row.values)) {
      if (sealed !== null) return { sealed, purpose: purposeOf(table as SealedTable, column, row), where: `${table}.${column}` };
    }
  }
  return null;
}

function opens(key: Buffer, sealed: string, purpose: string): boolean {
  try {
    new Sealer(key).open(sealed, purpose);
    return true;
  } catch {
    return false;
  }
}

/**
 * The key this store's values were sealed under before it kept a master-key state: the one of
 * ours that opens a sample of them (the previous one first: during a roll it is the old key),
 * the current one when the store holds nothing sealed.
 */
async function originalKey(store: Store, keys: MasterKeys): Promise<Buffer> {
  const sample = await sampleSealed(store);
  if (sample === null) return keys.current;
  const candidates = keys.previous === null ? [keys.current] : [keys.previous, keys.current];
  const id = sealedKeyId(sample.sealed);
  for (const key of candidates) {
    if ((id === 'v1' || id === keyIdOf(key)) && opens(key, sample.sealed, sample.purpose)) return key;
  }
  throw new MasterKeyRefused(
    `the store's sealed values do not open with the master key given (${describe(keys)}; ${sample.where} is sealed under ${id === 'v1' ? 'another key' : `key ${id}`}): is this the key of this database? (docs/security.md §1)`,
  );
}

/** The Sealer for this process: the store's sealing key and fingerprint key, opened with `keys`. */
export async function loadSealer(deps: { readonly store: Store }, keys: MasterKeys, now_ms: number): Promise<Sealer> {
  let state = await deps.store.masterKeys.state();
  if (state === null) {
    const origin = await originalKey(deps.store, keys);
    const first = new Sealer({ current: origin });
    // Sealed under the original key, which every instance holds (during a roll, the old one).
    await deps.store.masterKeys.insertState({
      fingerprint_key_sealed: first.seal(fingerprintKeyOf(origin).toString('base64'), FINGERPRINT_KEY_PURPOSE),
      sealing_key_id: keyIdOf(origin),
      updated_at_ms: now_ms,
    });
    state = await deps.store.masterKeys.state();
    if (state === null) throw new Error('the master-key state was neither stored nor found');
  }
  const ring = new Sealer({ current: keys.current, previous: keys.previous });
  if (!ring.holds(state.sealing_key_id)) {
    throw new MasterKeyRefused(
      `the store seals under master key ${state.sealing_key_id}, which this process was not given (${describe(keys)}): give it that key as PAYGATE_MASTER_KEY (docs/production.md, "Master-key rotation")`,
    );
  }
  let fingerprint_key: Buffer;
  try {
    fingerprint_key = Buffer.from(ring.open(state.fingerprint_key_sealed, FINGERPRINT_KEY_PURPOSE), 'base64');
  } catch (error) {
    const id = error instanceof UnknownMasterKey ? error.key_id : sealedKeyId(state.fingerprint_key_sealed);
    throw new MasterKeyRefused(
      `the store's fingerprint key is sealed under master key ${id}, which this process was not given (${describe(keys)}): give it that key as PAYGATE_MASTER_KEY_PREVIOUS until the rotation ends (docs/production.md, "Master-key rotation")`,
    );
  }
  return new Sealer({ current: keys.current, previous: keys.previous, fingerprint_key, sealing_key_id: state.sealing_key_id });
}

export type SealingKeyRefresh =
  | { readonly kind: 'same' }
  | { readonly kind: 'switched'; readonly key_id: string }
  /** The store seals under a key this process does not hold: it keeps its own, and says so. */
  | { readonly kind: 'not_held'; readonly key_id: string };

/** Reads which key the store seals under and follows it (a rotation's switch reaches running instances this way). */
export async function refreshSealingKey(deps: { readonly store: Store; readonly sealer: Sealer }): Promise<SealingKeyRefresh> {
  const state = await deps.store.masterKeys.state();
  if (state === null || state.sealing_key_id === deps.sealer.sealingKeyId()) return { kind: 'same' };
  if (!deps.sealer.holds(state.sealing_key_id)) return { kind: 'not_held', key_id: state.sealing_key_id };
  deps.sealer.useSealingKey(state.sealing_key_id);
  return { kind: 'switched', key_id: state.sealing_key_id };
}

/**
 * The rotation's switch: from now on every instance seals under this process's current key, and
 * the fingerprint key is sealed under it too. Idempotent; false when the store already said so.
 */
export async function switchSealingKey(deps: { readonly store: Store; readonly sealer: Sealer }, now_ms: number): Promise<boolean> {
  const target = deps.sealer.keyIds().current;
  deps.sealer.useSealingKey(target);
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const state = await deps.store.masterKeys.state();
    if (state === null) throw new Error('the master-key state is missing: open the store with loadSealer first');
    if (state.sealing_key_id === target && sealedKeyId(state.fingerprint_key_sealed) === target) return false;
    const replaced = await deps.store.masterKeys.replaceState(state.fingerprint_key_sealed, {
      fingerprint_key_sealed: deps.sealer.seal(deps.sealer.fingerprintKey().toString('base64'), FINGERPRINT_KEY_PURPOSE),
      sealing_key_id: target,
      updated_at_ms: now_ms,
    });
    if (replaced) return true;
    // Another rotate run switched it meanwhile: read it again.
  }
  throw new Error('the master-key state changed under every attempt to switch it');
}
