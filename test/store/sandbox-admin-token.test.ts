// The sandbox's own admin token in the store (migration 0020), on a real SQLite file and a real
// PostgreSQL database: none until made, made once (a second writer keeps the first one's token, as
// two instances starting together do), kept sealed, and read back the same by every reader.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Sealer } from '../../src/crypto/sealer.js';
import { ensureSandboxAdminToken, readSandboxAdminToken } from '../../src/operations/sandbox-admin-token.js';
import type { Store } from '../../src/store/store.js';
import { openTestStore, type TestStore } from '../support/store-fixture.js';
import { storeKinds } from '../support/stores.js';

describe.each(storeKinds())('sandbox admin token on %s', (kind) => {
  let handle: TestStore;
  let store: Store;
  const sealer = new Sealer(Buffer.alloc(32, 7));
  beforeAll(async () => {
    handle = await openTestStore(kind);
    store = handle.store;
  });
  afterAll(async () => {
    await handle?.cleanup();
  });

  it('is absent until made; the first insert wins and a second one changes nothing', async () => {
    expect(await store.sandboxAdmin.getAdminToken()).toBeNull();
    expect(await store.sandboxAdmin.insertAdminToken('sealed-first', 1)).toBe(true);
    expect(await store.sandboxAdmin.insertAdminToken('sealed-second', 2)).toBe(false);
    expect(await store.sandboxAdmin.getAdminToken()).toBe('sealed-first');
  });

  it('ensure: made once and sealed, then found by every later start; processes racing agree on one token', async () => {
    const fresh = await openTestStore(kind);
    try {
      const deps = { store: fresh.store, sealer };
      const racing = await Promise.all([
        ensureSandboxAdminToken(deps, 1),
        ensureSandboxAdminToken(deps, 1),
        ensureSandboxAdminToken(deps, 1),
      ]);
      expect(new Set(racing.map((r) => r.token)).size).toBe(1);
      expect(racing.filter((r) => r.created)).toHaveLength(1);
      const token = racing[0]!.token;
      expect(token).toMatch(/^sbx_adm_[A-Za-z0-9_-]{43}$/);
      const sealed = await fresh.store.sandboxAdmin.getAdminToken();
      expect(sealed).not.toContain(token);
      expect(sealed).not.toContain(token.slice(8));
      expect(await ensureSandboxAdminToken(deps, 2)).toEqual({ token, created: false });
      expect(await readSandboxAdminToken(deps)).toBe(token);
      // Sealed with this master key: another key cannot open it.
      await expect(readSandboxAdminToken({ store: fresh.store, sealer: new Sealer(Buffer.alloc(32, 8)) })).rejects.toThrow();
    } finally {
      await fresh.cleanup();
    }
  });
});
