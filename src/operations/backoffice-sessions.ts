// The back office's sessions in the store (decisions.md §14, docs/backoffice.md): what the
// back-office plugin's @fastify/session store and its idle time-out read and write. Sessions are
// kept by the sha256 of their id, so a copy of the table opens no session. Times are the gateway
// clock's, like every other expiry (the sandbox clock moves them in tests).
import { createHash } from 'node:crypto';
import type { Viewer } from '../domain/backoffice-access.js';
import { recordAudit } from './audit.js';
import { activeUser, signIn, type SignInOutcome } from './backoffice-users.js';
import type { OperationDeps } from './deps.js';

/** A session lasts this long from sign-in, whatever happens in it; then its person signs in again. */
export const SESSION_MS = 8 * 3600_000;
/**
 * A session's last use is written at most this often (a tenth of the idle time-out when that is
 * shorter), not at every request: a page is several requests, and writing each would turn every
 * back-office read into a database write (SQLite has one writer). The row then lags the real
 * last use by less than this, so a session ends after at least the time-out less this without a
 * request, and never later than the time-out: the error is on the side that signs out early.
 */
const LAST_SEEN_WRITE_EVERY_MS = 60_000;
/** Expired sessions removed per sign-in, so the table never grows past the live ones by much. */
const EXPIRED_SESSIONS_SWEEP = 100;

type SessionDeps = Pick<OperationDeps, 'store' | 'clock'>;

/** What @fastify/session hands over: its person, the sign-in time, its cookie and the last use read with it. */
export interface SessionData {
  readonly user_id?: string;
  readonly signed_in_at_ms?: number;
  readonly last_seen_at_ms?: number;
}

function hashOf(session_id: string): string {
  return createHash('sha256').update(session_id).digest('hex');
}

/** Saves a signed-in session; one without a user is never saved (saveUninitialized off). */
export async function saveSession(deps: SessionDeps, session_id: string, data: SessionData): Promise<void> {
  if (typeof data.user_id !== 'string') return;
  const now_ms = deps.clock.now_ms();
  // The row's own column holds the last use; a copy in data_json would only go stale.
  const { last_seen_at_ms: _last_seen_at_ms, ...kept } = data;
  const expires_at_ms = (data.signed_in_at_ms ?? now_ms) + SESSION_MS;
  await deps.store.backoffice.saveSession(hashOf(session_id), data.user_id, JSON.stringify(kept), expires_at_ms, now_ms);
}

/** A live session's data with its last use, or null. */
export async function getSession(deps: SessionDeps, session_id: string): Promise<Record<string, unknown> | null> {
  const row = await deps.store.backoffice.getSession(hashOf(session_id), deps.clock.now_ms());
  return row === null ? null : { ...JSON.parse(row.data_json), last_seen_at_ms: row.last_seen_at_ms };
}

export async function deleteSession(deps: Pick<OperationDeps, 'store'>, session_id: string): Promise<void> {
  await deps.store.backoffice.deleteSession(hashOf(session_id));
}

/** Sweeps a few expired sessions (at a sign-in). */
export async function sweepExpiredSessions(deps: SessionDeps): Promise<void> {
  await deps.store.backoffice.deleteExpiredSessions(deps.clock.now_ms(), EXPIRED_SESSIONS_SWEEP);
}

/** The signed-in person a session names, while the user exists and is not disabled. */
export function sessionViewer(deps: Pick<OperationDeps, 'store'>, user_id: string): Promise<Viewer | null> {
  return activeUser(deps.store, user_id);
}

/**
 * A sign-in attempt with its audit line (every attempt is audited but one without a readable
 * e-mail). The line is written before the caller starts the session: it records the password's
 * check, and what it records is the same either way.
 */
export async function signInToBackOffice(deps: OperationDeps, email: string, password: string, address: string): Promise<SignInOutcome> {
  const outcome = await signIn(deps, email, password, address);
  switch (outcome.kind) {
    case 'signed_in':
      await recordAudit(deps, outcome.user, address, { action: 'sign_in', outcome: 'done' });
      break;
    case 'locked':
      await recordAudit(deps, { email: outcome.email }, address, {
        action: 'sign_in',
        outcome: 'refused',
        detail: 'account locked',
      });
      break;
    case 'refused':
      if (outcome.email !== null) {
        await recordAudit(deps, { email: outcome.email }, address, {
          action: 'sign_in',
          outcome: 'refused',
          detail: outcome.locked_now ? 'wrong e-mail or password; account now locked' : 'wrong e-mail or password',
        });
      }
      break;
  }
  return outcome;
}

/** The sign-out of a session's person, audited while the user is still active; the caller then ends the session. */
export async function signOutOfBackOffice(deps: SessionDeps, user_id: string | null, address: string): Promise<void> {
  const user = user_id === null ? null : await sessionViewer(deps, user_id);
  if (user !== null) await recordAudit(deps, user, address, { action: 'sign_out', outcome: 'done' });
}

/** The idle time-out in whole minutes, as the setting gives it and people read it. */
export function idleTimeoutMinutes(deps: Pick<OperationDeps, 'config'>): number {
  return deps.config.limits.backoffice_idle_timeout_ms / 60_000;
}

/**
 * The idle time-out (PCI DSS 8.2.8): a signed-in session last seen longer ago than
 * PAYGATE_BACKOFFICE_IDLE_TIMEOUT_MINUTES is deleted and its end goes to the audit log. A session
 * still in use gets its last use written when the row's is LAST_SEEN_WRITE_EVERY_MS old. Both
 * live in the row, so whichever instance sees the session next applies them. True when the
 * session is over (the caller then carries on with a fresh, empty one).
 */
export async function endSessionIfIdle(
  deps: OperationDeps,
  session_id: string,
  user_id: string,
  last_seen_at_ms: number,
  address: string,
): Promise<boolean> {
  const now_ms = deps.clock.now_ms();
  const idle_timeout_ms = deps.config.limits.backoffice_idle_timeout_ms;
  const idle_since_ms = now_ms - idle_timeout_ms;
  const session_hash = hashOf(session_id);
  if (last_seen_at_ms >= idle_since_ms) {
    // Nothing is written to a session another request has just ended; this request then goes on
    // like one that started just before a sign-out, so the answer is not looked at.
    if (now_ms - last_seen_at_ms >= Math.min(LAST_SEEN_WRITE_EVERY_MS, idle_timeout_ms / 10)) {
      await deps.store.backoffice.touchSession(session_hash, now_ms, idle_since_ms);
    }
    return false;
  }
  // Only the request that deleted the row records the end: two instances seeing it at once write one line.
  if (await deps.store.backoffice.endIdleSession(session_hash, idle_since_ms)) {
    const user = await activeUser(deps.store, user_id);
    if (user !== null) {
      await recordAudit(deps, user, address, {
        action: 'sign_out',
        outcome: 'done',
        detail: `after ${idleTimeoutMinutes(deps)} minutes without activity`,
      });
    }
  }
  return true;
}
