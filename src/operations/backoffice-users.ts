// Back-office users (docs/backoffice.md): created by `paygate user create` or by an operator's
// page, signed in with a password hashed by argon2id (@node-rs/argon2, its recommended
// parameters), locked out after repeated failures (domain/backoffice-access.ts SIGN_IN_LOCKOUT).
// The CLI and the pages are two doors to these same functions.
import { randomBytes } from 'node:crypto';
import { hash, verify } from '@node-rs/argon2';
import type { Clock } from '../domain/clock.js';
import {
  type BackOfficeRole,
  normalizeEmail,
  PASSWORD_MAX_CHARS,
  passwordProblem,
  SIGN_IN_LOCKOUT,
  type Viewer,
} from '../domain/backoffice-access.js';
import type { Store } from '../store/store.js';
import type { BackofficeUserRow } from '../domain/backoffice-record.js';

export interface UserDeps {
  readonly store: Store;
  /** The gateway clock: lock-outs count on it, so a sandbox test can move past one. */
  readonly clock: Clock;
}

export interface NewUserInput {
  readonly email: string;
  readonly password: string;
  readonly role: string;
  readonly merchant_id: string | null;
}

export type CreateUserOutcome =
  | { readonly kind: 'created'; readonly user: Viewer }
  | { readonly kind: 'exists' }
  | { readonly kind: 'merchant_not_found' }
  /** `field` names what is wrong (email, password, role, merchant_id), never echoing a password. */
  | { readonly kind: 'invalid'; readonly field: string; readonly reason: string };

/** A user as an operator lists them: never the password's hash. */
export type UserView = Readonly<Pick<BackofficeUserRow, 'user_id' | 'email' | 'role' | 'merchant_id' | 'created_at_ms' | 'disabled_at_ms'>>;

/** The users (of one merchant, or all with null), `limit` at most, without their password hashes. */
export async function listUserViews(deps: Pick<UserDeps, 'store'>, merchant_id: string | null, limit: number): Promise<UserView[]> {
  return (await deps.store.backoffice.listUsers(merchant_id, limit)).map((u) => ({
    user_id: u.user_id,
    email: u.email,
    role: u.role,
    merchant_id: u.merchant_id,
    created_at_ms: u.created_at_ms,
    disabled_at_ms: u.disabled_at_ms,
  }));
}

export async function createUser(deps: UserDeps, input: NewUserInput): Promise<CreateUserOutcome> {
  const email = normalizeEmail(input.email);
  if (email === null) return { kind: 'invalid', field: 'email', reason: 'an e-mail address' };
  const password_problem = passwordProblem(input.password);
  if (password_problem !== null) return { kind: 'invalid', field: 'password', reason: password_problem };
  if (input.role !== 'operator' && input.role !== 'merchant') return { kind: 'invalid', field: 'role', reason: 'operator or merchant' };
  const role: BackOfficeRole = input.role;
  if (role === 'merchant' && (input.merchant_id === null || input.merchant_id === '')) {
    return { kind: 'invalid', field: 'merchant_id', reason: 'a merchant user belongs to one merchant' };
  }
  if (role === 'operator' && input.merchant_id !== null && input.merchant_id !== '') {
    return { kind: 'invalid', field: 'merchant_id', reason: 'an operator belongs to no merchant' };
  }
  const merchant_id = role === 'merchant' ? input.merchant_id : null;
  if (merchant_id !== null && (await deps.store.merchants.get(merchant_id)) === null) return { kind: 'merchant_not_found' };
  if ((await deps.store.backoffice.findUserByEmail(email)) !== null) return { kind: 'exists' };
  const user_id = `usr_${randomBytes(12).toString('hex')}`;
  const created = await deps.store.backoffice.insertUser({
    user_id,
    email,
    password_hash: await hash(input.password),
    role,
    merchant_id,
    created_at_ms: deps.clock.now_ms(),
  });
  if (created === 'exists') return { kind: 'exists' };
  return { kind: 'created', user: { user_id, email, role, merchant_id } };
}

export type SignInOutcome =
  | { readonly kind: 'signed_in'; readonly user: Viewer }
  /** Wrong e-mail, wrong password or a disabled user: one answer for all three. */
  | { readonly kind: 'refused'; readonly email: string | null; readonly locked_now: boolean }
  | { readonly kind: 'locked'; readonly email: string; readonly retry_after_s: number };

/** A hash verified when the e-mail is unknown, so that a wrong e-mail takes as long as a wrong password. */
let decoy_hash: Promise<string> | null = null;

export async function signIn(deps: UserDeps, email_text: string, password: string, address: string): Promise<SignInOutcome> {
  const email = normalizeEmail(email_text);
  if (email === null || password.length === 0 || [...password].length > PASSWORD_MAX_CHARS) {
    return { kind: 'refused', email, locked_now: false };
  }
  const now_ms = deps.clock.now_ms();
  const locked_until_ms = await deps.store.backoffice.signInLockedUntil(email, now_ms);
  if (locked_until_ms !== null) return { kind: 'locked', email, retry_after_s: Math.max(1, Math.ceil((locked_until_ms - now_ms) / 1000)) };
  const user = await deps.store.backoffice.findUserByEmail(email);
  decoy_hash ??= hash(randomBytes(16).toString('hex'));
  const valid = await verify(user?.password_hash ?? (await decoy_hash), password);
  if (user !== null && valid && user.disabled_at_ms === null) {
    await deps.store.backoffice.clearSignInFailures(email);
    return { kind: 'signed_in', user: viewerOf(user) };
  }
  await deps.store.backoffice.recordSignInFailure(email, address, now_ms);
  const failures = await deps.store.backoffice.countSignInFailures(email, now_ms - SIGN_IN_LOCKOUT.window_ms);
  const locked_now = failures >= SIGN_IN_LOCKOUT.failures;
  if (locked_now) {
    await deps.store.backoffice.lockSignIn(email, now_ms + SIGN_IN_LOCKOUT.lock_ms);
    await deps.store.backoffice.clearSignInFailures(email);
  }
  return { kind: 'refused', email, locked_now };
}

export function viewerOf(user: BackofficeUserRow): Viewer {
  return { user_id: user.user_id, email: user.email, role: user.role as BackOfficeRole, merchant_id: user.merchant_id };
}

/** The user a session names, while it exists and is not disabled. */
export async function activeUser(store: Store, user_id: string): Promise<Viewer | null> {
  const user = await store.backoffice.getUser(user_id);
  return user === null || user.disabled_at_ms !== null ? null : viewerOf(user);
}

export type SetUserDisabledOutcome =
  | { readonly kind: 'not_found' }
  /** An operator cannot disable themself: another operator must. */
  | { readonly kind: 'self' }
  | { readonly kind: 'done'; readonly user: BackofficeUserRow };

/** Disables (its sessions end at their next request) or enables a user, by an operator other than that user. */
export async function setUserDisabled(
  deps: Pick<UserDeps, 'store' | 'clock'>,
  by: Viewer,
  user_id: string,
  disabled: boolean,
): Promise<SetUserDisabledOutcome> {
  const user = await deps.store.backoffice.getUser(user_id);
  if (user === null) return { kind: 'not_found' };
  if (user.user_id === by.user_id) return { kind: 'self' };
  await deps.store.backoffice.setUserDisabled(user_id, disabled ? deps.clock.now_ms() : null);
  return { kind: 'done', user };
}
