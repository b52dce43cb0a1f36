// Who may see what in the back office (docs/backoffice.md): pure rules, no I/O. An operator sees
// every merchant; a merchant's staff member sees its own merchant only, and anything of another
// merchant is answered exactly as if it did not exist (decisions.md §14), so the pages ask here
// and show "not found" on false, never "forbidden".

export type BackOfficeRole = 'operator' | 'merchant';
export const BACKOFFICE_ROLES: readonly BackOfficeRole[] = ['operator', 'merchant'];

/** The signed-in person a page is rendered for. */
export interface Viewer {
  readonly user_id: string;
  readonly email: string;
  readonly role: BackOfficeRole;
  /** The merchant of a merchant user; null for an operator. */
  readonly merchant_id: string | null;
}

/** The merchant whose data a query is limited to: null means every merchant (an operator). */
export function merchantScope(viewer: Viewer): string | null {
  return viewer.role === 'operator' ? null : viewer.merchant_id;
}

/** True when the viewer may see a record of this merchant. */
export function maySee(viewer: Viewer, merchant_id: string): boolean {
  return viewer.role === 'operator' || viewer.merchant_id === merchant_id;
}

export function isOperator(viewer: Viewer): boolean {
  return viewer.role === 'operator';
}

/** decisions.md §14: at least 12 characters; an upper bound keeps hashing cheap for a flood of long guesses. */
export const PASSWORD_MIN_CHARS = 12;
export const PASSWORD_MAX_CHARS = 256;
export const EMAIL_MAX_CHARS = 254;

/** An e-mail as users are keyed by it: trimmed and lower-cased; null when it does not look like one. */
export function normalizeEmail(text: string): string | null {
  const email = text.trim().toLowerCase();
  if (email.length < 3 || email.length > EMAIL_MAX_CHARS) return null;
  return /^[^\s@\u0000-\u001f\u007f]+@[^\s@\u0000-\u001f\u007f]+$/.test(email) ? email : null;
}

/** Why a password is not acceptable, or null. Counted in code points, like every text limit. */
export function passwordProblem(password: string): string | null {
  const length = [...password].length;
  if (length < PASSWORD_MIN_CHARS) return `at least ${PASSWORD_MIN_CHARS} characters`;
  if (length > PASSWORD_MAX_CHARS) return `at most ${PASSWORD_MAX_CHARS} characters`;
  return null;
}

/**
 * Sign-in lock-out (decisions.md §14): the failure that makes `failures` within `window_ms` for one
 * e-mail locks that e-mail for `lock_ms`; while locked, attempts are refused unchecked and not counted.
 */
export const SIGN_IN_LOCKOUT = { failures: 10, window_ms: 15 * 60_000, lock_ms: 15 * 60_000 } as const;
