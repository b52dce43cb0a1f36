// Encryption at rest (merchant secrets, vaulted PANs) and keyed fingerprints.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { fingerprintKeyOf, keyIdOf, Sealer, loadOrCreateKeyFile, sealedKeyId, UnknownMasterKey } from '../../src/crypto/sealer.js';

const KEY_A = Buffer.alloc(32, 0xa1);
const KEY_B = Buffer.alloc(32, 0xb2);
const PAN = '4111111111111111';

/** iv | tag | body of a v2 sealed value. */
function bodyOf(sealed: string): Buffer {
  return Buffer.from(sealed.split(':')[2]!, 'base64');
}

/** A value as releases before key ids sealed it: `v1:` and the same iv | tag | body. */
function asV1(sealed: string): string {
  return `v1:${bodyOf(sealed).toString('base64')}`;
}

describe('Sealer', () => {
  const sealer = new Sealer(KEY_A);

  it('refuses a master key that is not 32 bytes', () => {
    expect(() => new Sealer(Buffer.alloc(31))).toThrow(/32 bytes/);
    expect(() => new Sealer(Buffer.alloc(33))).toThrow(/32 bytes/);
  });

  it('seal then open gives the text back; the sealed value names its key by id, never the key', () => {
    const sealed = sealer.seal(PAN, 'pan');
    expect(sealed.startsWith(`v2:${keyIdOf(KEY_A)}:`)).toBe(true);
    expect(keyIdOf(KEY_A)).toMatch(/^[0-9a-f]{16}$/);
    expect(sealed).not.toContain(KEY_A.toString('hex').slice(0, 16));
    expect(sealed).not.toContain(PAN);
    expect(sealer.open(sealed, 'pan')).toBe(PAN);
  });

  it('round trips any text, including empty and non-ASCII', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), fc.string({ maxLength: 30 }), (text, purpose) => {
        expect(sealer.open(sealer.seal(text, purpose), purpose)).toBe(text);
      }),
      { numRuns: 200 },
    );
  });

  it('another sealer with the same master key opens it (a restart, another instance)', () => {
    expect(new Sealer(Buffer.from(KEY_A)).open(sealer.seal('s3cret', 'merchant-secret:m1'), 'merchant-secret:m1')).toBe('s3cret');
  });

  it('a different purpose does not open', () => {
    const sealed = sealer.seal('s3cret', 'merchant-secret:m1');
    expect(() => sealer.open(sealed, 'merchant-secret:m2')).toThrow();
    expect(() => sealer.open(sealed, 'pan')).toThrow();
  });

  it('a different master key does not open', () => {
    expect(() => new Sealer(KEY_B).open(sealer.seal('s3cret', 'p'), 'p')).toThrow();
  });

  it('a tampered ciphertext does not open, wherever the change is', () => {
    const sealed = sealer.seal(PAN, 'pan');
    const raw = bodyOf(sealed);
    for (let i = 0; i < raw.length; i += 1) {
      const tampered = Buffer.from(raw);
      tampered[i] = tampered[i]! ^ 0x80;
      expect(() => sealer.open(`v2:${keyIdOf(KEY_A)}:${tampered.toString('base64')}`, 'pan'), `byte ${i}`).toThrow();
    }
    for (let i = 0; i < raw.length; i += 1) {
      const tampered = Buffer.from(raw);
      tampered[i] = tampered[i]! ^ 0x80;
      expect(() => sealer.open(`v1:${tampered.toString('base64')}`, 'pan'), `byte ${i}`).toThrow();
    }
    expect(() => sealer.open(`v1:${raw.subarray(0, raw.length - 1).toString('base64')}`, 'pan')).toThrow();
    expect(() => sealer.open(`v2:${raw.toString('base64')}`, 'pan')).toThrow(/format/);
    expect(() => sealer.open('', 'pan')).toThrow();
  });

  it('refuses a sealed value whose authentication tag was cut short', () => {
    const sealer = new Sealer(Buffer.alloc(32, 7));
    const raw = bodyOf(sealer.seal('4111111111111111', 'pan'));
    // IV (12) + first 8 bytes of the tag, no body: GCM would accept an 8-byte tag if asked to.
    const short_tag = `v1:${raw.subarray(0, 20).toString('base64')}`;
    expect(() => sealer.open(short_tag, 'pan')).toThrow();
    const iv_tag_cut = `v1:${Buffer.concat([raw.subarray(0, 24), raw.subarray(28)]).toString('base64')}`;
    expect(() => sealer.open(iv_tag_cut, 'pan')).toThrow();
  });

  it('two seals of the same text differ (random IV)', () => {
    const seals = new Set(Array.from({ length: 50 }, () => sealer.seal(PAN, 'pan')));
    expect(seals.size).toBe(50);
  });

  it('fingerprint is stable, keyed, and depends on purpose and value', () => {
    const a = sealer.fingerprint(PAN, 'pan');
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(sealer.fingerprint(PAN, 'pan')).toBe(a);
    expect(new Sealer(Buffer.from(KEY_A)).fingerprint(PAN, 'pan')).toBe(a);
    expect(new Sealer(KEY_B).fingerprint(PAN, 'pan')).not.toBe(a);
    expect(sealer.fingerprint(PAN, 'request')).not.toBe(a);
    expect(sealer.fingerprint('4111111111111112', 'pan')).not.toBe(a);
    expect(a).not.toContain(PAN);
  });

  it('fingerprint keeps purpose and value apart (no ambiguity at the boundary)', () => {
    expect(sealer.fingerprint('bc', 'a')).not.toBe(sealer.fingerprint('c', 'ab'));
  });
});

describe('Sealer with two master keys (a rotation)', () => {
  const old_only = new Sealer(KEY_A);
  const both = new Sealer({ current: KEY_B, previous: KEY_A, fingerprint_key: fingerprintKeyOf(KEY_A) });

  it('opens values of either key, v1 and v2, and seals under the sealing key it was told', () => {
    const under_old = old_only.seal('s3cret', 'p');
    expect(both.open(under_old, 'p')).toBe('s3cret');
    expect(both.open(asV1(under_old), 'p')).toBe('s3cret');
    // By default a Sealer seals under its current key.
    expect(sealedKeyId(both.seal('x', 'p'))).toBe(keyIdOf(KEY_B));
    const during_roll = new Sealer({ current: KEY_B, previous: KEY_A, sealing_key_id: keyIdOf(KEY_A) });
    expect(sealedKeyId(during_roll.seal('x', 'p'))).toBe(keyIdOf(KEY_A));
    during_roll.useSealingKey(keyIdOf(KEY_B));
    expect(sealedKeyId(during_roll.seal('x', 'p'))).toBe(keyIdOf(KEY_B));
  });

  it('reseal moves a value to the sealing key, and leaves one already there', () => {
    const under_old = old_only.seal('s3cret', 'p');
    const moved = both.reseal(under_old, 'p')!;
    expect(sealedKeyId(moved)).toBe(keyIdOf(KEY_B));
    expect(new Sealer(KEY_B).open(moved, 'p')).toBe('s3cret');
    expect(both.reseal(moved, 'p')).toBeNull();
    expect(sealedKeyId(both.reseal(asV1(under_old), 'p')!)).toBe(keyIdOf(KEY_B));
  });

  it('a value under a key it was not given fails naming that key id, never opening as something else', () => {
    const new_only = new Sealer(KEY_B);
    const error = (() => {
      try {
        new_only.open(old_only.seal('s3cret', 'p'), 'p');
        return null;
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(UnknownMasterKey);
    expect((error as Error).message).toContain(keyIdOf(KEY_A));
    expect((error as Error).message).not.toContain(KEY_A.toString('hex'));
    expect(() => new_only.open(asV1(old_only.seal('s3cret', 'p')), 'p')).toThrow(/none of the master keys/);
    expect(() => new_only.useSealingKey(keyIdOf(KEY_A))).toThrow(UnknownMasterKey);
  });

  it('the fingerprint key it is given is used, so fingerprints match across keys', () => {
    expect(both.fingerprint(PAN, 'pan')).toBe(old_only.fingerprint(PAN, 'pan'));
    expect(new Sealer(KEY_B).fingerprint(PAN, 'pan')).not.toBe(old_only.fingerprint(PAN, 'pan'));
  });
});

describe('loadOrCreateKeyFile', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-sealer-'));
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  it('creates a 0600 key file once and reads the same key back', () => {
    const dir = path.join(root, 'data');
    const key = loadOrCreateKeyFile(dir);
    expect(key).toHaveLength(32);
    const file = path.join(dir, 'master.key');
    const stat = fs.statSync(file);
    expect(stat.mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(file, 'utf8').trim()).toBe(key.toString('hex'));
    const mtime = stat.mtimeMs;

    const again = loadOrCreateKeyFile(dir);
    expect(again.equals(key)).toBe(true);
    expect(fs.statSync(file).mtimeMs).toBe(mtime);
    expect(fs.readdirSync(dir)).toEqual(['master.key']);
  });

  it('two directories get two different keys', () => {
    expect(loadOrCreateKeyFile(path.join(root, 'one')).equals(loadOrCreateKeyFile(path.join(root, 'two')))).toBe(false);
  });

  it('refuses a key file that does not hold 64 hex characters rather than replacing it', () => {
    const dir = path.join(root, 'bad');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'master.key'), 'not a key\n');
    expect(() => loadOrCreateKeyFile(dir)).toThrow(/64-hex/);
    expect(fs.readFileSync(path.join(dir, 'master.key'), 'utf8')).toBe('not a key\n');
  });
});
