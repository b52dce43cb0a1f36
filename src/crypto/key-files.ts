// The master key files of the embedded store during a rotation (docs/production.md, "Master-key
// rotation"): `master.key` holds the current key, `master.key.previous` the one being replaced
// until it is retired, and `master.key.new` the new key for the instant between its creation and
// its move into place. Every step is a write of a new file or an atomic rename, so a run killed
// anywhere leaves `master.key` holding one whole key, and the next run finishes what was begun.
// No function here returns, logs or prints a key's text.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { readKeyFile } from './sealer.js';

export function previousKeyPath(key_path: string): string {
  return `${key_path}.previous`;
}

function newKeyPath(key_path: string): string {
  return `${key_path}.new`;
}

/** Writes a key file of its own (0600), durably; an existing file is left as it is. */
function writeKeyFile(file: string, key: Buffer): void {
  const fd = fs.openSync(file, 'wx', 0o600);
  try {
    fs.writeSync(fd, `${key.toString('hex')}\n`);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

function syncDirectory(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Makes `key_path` hold a new random key and `master.key.previous` the old one. Idempotent: a
 * rotation already begun is finished (a `.new` still to move) or left as it is (`.previous`
 * there, no `.new`). Returns whether this call made the new key.
 */
export function beginKeyFileRotation(key_path: string): { readonly created: boolean } {
  const previous_path = previousKeyPath(key_path);
  const new_path = newKeyPath(key_path);
  const dir = path.dirname(key_path);
  if (readKeyFile(key_path) === null) throw new Error(`${key_path} does not exist: there is no key to rotate`);
  let created = false;
  if (readKeyFile(previous_path) === null) {
    if (readKeyFile(new_path) === null) {
      writeKeyFile(new_path, randomBytes(32));
      created = true;
    }
    // The old key kept beside, whole, before the current file is replaced.
    const staging = `${previous_path}.tmp`;
    fs.rmSync(staging, { force: true });
    writeKeyFile(staging, readKeyFile(key_path)!);
    fs.renameSync(staging, previous_path);
    syncDirectory(dir);
  }
  // A `.new` here was not moved yet (a rename removes it): master.key still holds the old key.
  if (readKeyFile(new_path) !== null) {
    fs.renameSync(new_path, key_path);
    syncDirectory(dir);
  }
  return { created };
}

/** Deletes `master.key.previous` (the rotation's end); false when there was none. */
export function retirePreviousKeyFile(key_path: string): boolean {
  const previous_path = previousKeyPath(key_path);
  if (!fs.existsSync(previous_path)) return false;
  fs.rmSync(previous_path);
  syncDirectory(path.dirname(key_path));
  return true;
}
