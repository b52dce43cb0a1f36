// Encryption at rest of secrets and card numbers with the operator's master key.
// AES-256-GCM with a random 96-bit IV; the purpose is bound as associated data so a
// ciphertext of one kind (a merchant secret) can never be opened as another (a PAN).
//
// A sealed value names the key that sealed it, `v2:<key id>:<iv|tag|body base64>`, so a process
// may hold two master keys while they are rotated (docs/security.md §1: the current one, which
// seals, and the previous one, which only opens) and open every value with the right one. A
// value sealed before key ids (`v1:<base64>`) is opened by trying the keys it holds: the GCM tag
// says which one sealed it. A value sealed under a key this process was not given fails with
// UnknownMasterKey, which names the key id (never a key), rather than anything being guessed.
//
// The fingerprint key (keyed HMACs compared with stored fingerprints: idempotency, card matching,
// tokens of the cashier and the back office) must outlive a rotation, since the fingerprinted
// inputs are not kept. It is derived once from the database's first master key and kept in the
// store sealed under the current one (operations/master-key.ts); a Sealer is given it.
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const V1_PREFIX = 'v1:';
const V2 = /^v2:([0-9a-f]{16}):([A-Za-z0-9+/=]*)$/;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;

/** A sealed value under a key this process does not hold: a configuration fault, said clearly. */
export class UnknownMasterKey extends Error {
  constructor(readonly key_id: string) {
    super(
      `a sealed value is under master key ${key_id}, which this process was not given: set that key as PAYGATE_MASTER_KEY or PAYGATE_MASTER_KEY_PREVIOUS (docs/security.md §1)`,
    );
  }
}

function subkey(master_key: Buffer, info: string, bytes: number): Buffer {
  return Buffer.from(hkdfSync('sha256', master_key, Buffer.alloc(0), info, bytes));
}

function checkKey(master_key: Buffer): void {
  if (master_key.length !== KEY_BYTES) throw new Error('master key must be 32 bytes');
}

/** A master key's public name: 16 hex characters derived from it (not reversible), shown and stored, never the key. */
export function keyIdOf(master_key: Buffer): string {
  checkKey(master_key);
  return subkey(master_key, 'paygate/key-id/v1', 8).toString('hex');
}

/** The fingerprint key as every release derived it from a master key; kept unchanged across rotations. */
export function fingerprintKeyOf(master_key: Buffer): Buffer {
  checkKey(master_key);
  return subkey(master_key, 'paygate/fingerprint/v1', 32);
}

/** What a sealed value says of its key: the key id (v2), 'v1' (sealed before key ids), or null (not a sealed value). */
export function sealedKeyId(sealed: string): string | 'v1' | null {
  if (sealed.startsWith(V1_PREFIX)) return 'v1';
  const match = V2.exec(sealed);
  return match ? match[1]! : null;
}

export interface SealerKeys {
  /** The key new values are sealed under once the store says so (the rotation's new key). */
  readonly current: Buffer;
  /** During a rotation, the key being replaced: opens, never seals. */
  readonly previous?: Buffer | null;
  /** The store's fingerprint key; by default derived from `current` (a fresh database, a unit test). */
  readonly fingerprint_key?: Buffer;
  /** The key id to seal under (the store's choice, operations/master-key.ts); by default `current`'s. */
  readonly sealing_key_id?: string;
}

export class Sealer {
  /** Key id → its encryption subkey, the current key first. */
  private readonly keys = new Map<string, Buffer>();
  private readonly fingerprint_key: Buffer;
  private readonly current_id: string;
  private readonly previous_id: string | null;
  private sealing_id: string;

  constructor(keys: Buffer | SealerKeys) {
    const given: SealerKeys = Buffer.isBuffer(keys) ? { current: keys } : keys;
    checkKey(given.current);
    this.current_id = keyIdOf(given.current);
    // Separate subkeys so the fingerprint key never doubles as an encryption key.
    this.keys.set(this.current_id, subkey(given.current, 'paygate/seal/v1', 32));
    const previous = given.previous ?? null;
    this.previous_id = previous === null ? null : keyIdOf(previous);
    if (previous !== null && this.previous_id !== this.current_id) {
      this.keys.set(this.previous_id!, subkey(previous, 'paygate/seal/v1', 32));
    }
    this.fingerprint_key = given.fingerprint_key ?? fingerprintKeyOf(given.current);
    if (this.fingerprint_key.length !== 32) throw new Error('fingerprint key must be 32 bytes');
    this.sealing_id = this.current_id;
    this.useSealingKey(given.sealing_key_id ?? this.current_id);
  }

  /** The key ids this process holds: the current one, and the previous one during a rotation. */
  keyIds(): { readonly current: string; readonly previous: string | null } {
    return { current: this.current_id, previous: this.previous_id === this.current_id ? null : this.previous_id };
  }

  sealingKeyId(): string {
    return this.sealing_id;
  }

  holds(key_id: string): boolean {
    return this.keys.has(key_id);
  }

  /** Seal new values under `key_id` from now on; throws UnknownMasterKey when this process does not hold it. */
  useSealingKey(key_id: string): void {
    if (!this.keys.has(key_id)) throw new UnknownMasterKey(key_id);
    this.sealing_id = key_id;
  }

  seal(plaintext: string, purpose: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.keys.get(this.sealing_id)!, iv);
    cipher.setAAD(Buffer.from(purpose, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `v2:${this.sealing_id}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
  }

  /** Throws on tampering or a wrong key: sealed data is ours, so failure is a fault, not input. */
  open(sealed: string, purpose: string): string {
    const match = V2.exec(sealed);
    if (match) {
      const key = this.keys.get(match[1]!);
      if (key === undefined) throw new UnknownMasterKey(match[1]!);
      return openWith(key, Buffer.from(match[2]!, 'base64'), purpose);
    }
    if (!sealed.startsWith(V1_PREFIX)) throw new Error('unknown sealed format');
    const raw = Buffer.from(sealed.slice(V1_PREFIX.length), 'base64');
    // Sealed before key ids: by the key in use then, which is one of ours if we were given it.
    let failure: unknown = null;
    for (const key of this.keys.values()) {
      try {
        return openWith(key, raw, purpose);
      } catch (error) {
        failure ??= error;
      }
    }
    throw failure instanceof Error && /too short/.test(failure.message)
      ? failure
      : new Error('a sealed value (v1) opens with none of the master keys this process was given');
  }

  /**
   * The value sealed under the sealing key: null when it already is, else opened (with whichever
   * key sealed it) and sealed again. For the rotation (operations/master-key-rotation.ts).
   */
  reseal(sealed: string, purpose: string): string | null {
    if (sealedKeyId(sealed) === this.sealing_id) return null;
    return this.seal(this.open(sealed, purpose), purpose);
  }

  /** Keyed fingerprint: compares card data and request content without keeping them in clear. */
  fingerprint(value: string, purpose: string): string {
    return createHmac('sha256', this.fingerprint_key).update(purpose).update('\0').update(value).digest('hex');
  }

  /** The fingerprint key, to be kept sealed in the store (operations/master-key.ts); never logged or printed. */
  fingerprintKey(): Buffer {
    return Buffer.from(this.fingerprint_key);
  }
}

function openWith(key: Buffer, raw: Buffer, purpose: string): string {
  if (raw.length < IV_BYTES + TAG_BYTES) throw new Error('sealed value too short');
  const iv = raw.subarray(0, IV_BYTES);
  const tag = raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES);
  // A fixed tag length: GCM would otherwise accept a truncated (weaker) tag.
  const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  decipher.setAAD(Buffer.from(purpose, 'utf8'));
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
}

/** Reads a key file: 64 hex characters (and a newline); null when it does not exist. */
export function readKeyFile(key_path: string): Buffer | null {
  let text: string;
  try {
    text = fs.readFileSync(key_path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  const hex = text.trim();
  if (!/^[0-9a-f]{64}$/.test(hex)) throw new Error(`${key_path} does not hold a 64-hex-character key`);
  return Buffer.from(hex, 'hex');
}

/**
 * The embedded default keeps its master key in a file beside the database, created once
 * with owner-only permissions. An explicit key (PAYGATE_MASTER_KEY) always wins.
 */
export function loadOrCreateKeyFile(data_dir: string, key_path = path.join(data_dir, 'master.key')): Buffer {
  fs.mkdirSync(path.dirname(key_path), { recursive: true, mode: 0o700 });
  const existing = readKeyFile(key_path);
  if (existing !== null) return existing;
  const key = randomBytes(32);
  // 'wx' fails if another process created it in between; then read theirs.
  try {
    fs.writeFileSync(key_path, key.toString('hex') + '\n', { mode: 0o600, flag: 'wx' });
    return key;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return loadOrCreateKeyFile(data_dir, key_path);
    throw error;
  }
}
