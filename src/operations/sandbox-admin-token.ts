// The sandbox's own admin token (issue 28): a sandbox started without PAYGATE_ADMIN_TOKEN makes one
// on first start, keeps it sealed in the store and announces it once, like the demo merchant's
// secret, so POST /sandbox/clock, the triggers and the operator API work out of the box. Sealed,
// not only hashed: every instance on the database admits the same token, and `paygate trigger` on
// the gateway's machine (which holds the master key) can call the gateway with it. Live mode never
// makes one: the operator sets PAYGATE_ADMIN_TOKEN, or the operator API stays closed.
import { randomBytes } from 'node:crypto';
import type { Sealer } from '../crypto/sealer.js';
import type { Store } from '../store/store.js';

/** What the sealed token is bound to (also for the master-key rotation). */
export const SANDBOX_TOKEN_PURPOSE = 'sandbox-admin-token';
const TOKEN_PURPOSE = SANDBOX_TOKEN_PURPOSE;

/** 32 random bytes, base64url (43 characters): well above PAYGATE_ADMIN_TOKEN's 16-character floor. */
function newAdminToken(): string {
  return `sbx_adm_${randomBytes(32).toString('base64url')}`;
}

export interface SandboxAdminToken {
  readonly token: string;
  /** Made by this call (announce it); false when it was in the store already. */
  readonly created: boolean;
}

/** The store's token, made now when there is none. Two processes racing keep the first one's. */
export async function ensureSandboxAdminToken(
  deps: { readonly store: Store; readonly sealer: Sealer },
  now_ms: number,
): Promise<SandboxAdminToken> {
  const existing = await readSandboxAdminToken(deps);
  if (existing !== null) return { token: existing, created: false };
  const token = newAdminToken();
  if (await deps.store.sandboxAdmin.insertAdminToken(deps.sealer.seal(token, TOKEN_PURPOSE), now_ms)) return { token, created: true };
  const winner = await readSandboxAdminToken(deps);
  if (winner === null) throw new Error('the sandbox admin token was neither stored nor found');
  return { token: winner, created: false };
}

/** The token a sandbox made for itself, or null (none yet, or live mode's database). */
export async function readSandboxAdminToken(deps: { readonly store: Store; readonly sealer: Sealer }): Promise<string | null> {
  const sealed = await deps.store.sandboxAdmin.getAdminToken();
  return sealed === null ? null : deps.sealer.open(sealed, TOKEN_PURPOSE);
}
