// Encryption at rest of secrets and card numbers with the operator's master key.
// AES-256-GCM with a random 96-bit IV; the purpose is bound as associated data so a
// ciphertext of one kind (a merchant secret) can never be opened as another (a PAN).
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const FORMAT_PREFIX = 'v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class Sealer {
  private readonly encryption_key: Buffer;
  private readonly fingerprint_key: Buffer;

  constructor(master_key: Buffer) {
    if (master_key.length !== 32) throw new Error('master key must be 32 bytes');
    // Separate subkeys so the fingerprint key never doubles as an encryption key.
    this.encryption_key = Buffer.from(hkdfSync('sha256', master_key, Buffer.alloc(0), 'paygate/seal/v1', 32));
    this.fingerprint_key = Buffer.from(hkdfSync('sha256', master_key, Buffer.alloc(0), 'paygate/fingerprint/v1', 32));
  }

  seal(plaintext: string, purpose: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.encryption_key, iv);
    cipher.setAAD(Buffer.from(purpose, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return FORMAT_PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
  }

  /** Throws on tampering or a wrong key: sealed data is ours, so failure is a fault, not input. */
  open(sealed: string, purpose: string): string {
    if (!sealed.startsWith(FORMAT_PREFIX)) throw new Error('unknown sealed format');
    const raw = Buffer.from(sealed.slice(FORMAT_PREFIX.length), 'base64');
    if (raw.length < IV_BYTES + TAG_BYTES) throw new Error('sealed value too short');
    const iv = raw.subarray(0, IV_BYTES);
    const tag = raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES);
    // A fixed tag length: GCM would otherwise accept a truncated (weaker) tag.
    const decipher = createDecipheriv('aes-256-gcm', this.encryption_key, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(purpose, 'utf8'));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  }

  /** Keyed fingerprint: compares card data and request content without keeping them in clear. */
  fingerprint(value: string, purpose: string): string {
    return createHmac('sha256', this.fingerprint_key).update(purpose).update('\0').update(value).digest('hex');
  }
}

/**
 * The embedded default keeps its master key in a file beside the database, created once
 * with owner-only permissions. An explicit key (PAYGATE_MASTER_KEY) always wins.
 */
export function loadOrCreateKeyFile(data_dir: string, key_path = path.join(data_dir, 'master.key')): Buffer {
  fs.mkdirSync(path.dirname(key_path), { recursive: true, mode: 0o700 });
  try {
    const hex = fs.readFileSync(key_path, 'utf8').trim();
    if (!/^[0-9a-f]{64}$/.test(hex)) throw new Error(`${key_path} does not hold a 64-hex-character key`);
    return Buffer.from(hex, 'hex');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
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
