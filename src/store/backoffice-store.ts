// What the back office keeps of its own (issue 15, docs/backoffice.md): its users, their sessions,
// failed sign-ins and the audit log. Part of the one store (Store.backoffice), apart from the
// payment paths so that those stay short to read; its Kysely implementation is sql/backoffice.ts.
// The searches, sums and processor webhook events its pages show are the other aggregates' own
// (transactions.search, merchants.listProcessorEventsOf, …). Every list is bounded by its caller's
// limit, and one that pages does so by a key (keyset), never by an offset.
import type { Insertable } from 'kysely';
import type { AuditLogRow, AuditLogTable, BackofficeUserRow } from './schema.js';

// The transactions search and the overview's sums moved to their aggregate; named here still for
// the code that imports them from this file.
export type { ActivityRow, TransactionSearch } from './transaction-store.js';

export interface NewUserRow {
  readonly user_id: string;
  readonly email: string;
  readonly password_hash: string;
  readonly role: 'operator' | 'merchant';
  readonly merchant_id: string | null;
  readonly created_at_ms: number;
}

export interface BackOfficeStore {
  insertUser(row: NewUserRow): Promise<'created' | 'exists'>;
  findUserByEmail(email: string): Promise<BackofficeUserRow | null>;
  getUser(user_id: string): Promise<BackofficeUserRow | null>;
  /** Oldest first, at most `limit`; only one merchant's users when merchant_id is given. */
  listUsers(merchant_id: string | null, limit: number): Promise<BackofficeUserRow[]>;
  /** Disables (a time) or enables (null) a user; a disabled user's sessions are deleted with it. False when no such user. */
  setUserDisabled(user_id: string, disabled_at_ms: number | null): Promise<boolean>;

  /** Saving is a use of the session: last seen at now_ms. */
  saveSession(session_hash: string, user_id: string, data_json: string, expires_at_ms: number, now_ms: number): Promise<void>;
  /** The session's data while it has not expired at now_ms; null otherwise. Idle or not: the caller decides (it knows the time-out). */
  getSession(session_hash: string, now_ms: number): Promise<{ user_id: string; data_json: string; last_seen_at_ms: number } | null>;
  /**
   * Records a use at now_ms, unless the session was last seen before idle_since_ms (already idle)
   * or is gone: an instance that read it a moment earlier cannot bring an ended session back.
   * False when nothing was written.
   */
  touchSession(session_hash: string, now_ms: number, idle_since_ms: number): Promise<boolean>;
  /**
   * Deletes the session if it was last seen before idle_since_ms. True for the one caller that
   * deleted it, so that several instances seeing it at once record its end once.
   */
  endIdleSession(session_hash: string, idle_since_ms: number): Promise<boolean>;
  deleteSession(session_hash: string): Promise<void>;
  /** Sessions expired before now_ms, at most `limit` at a time; how many went. */
  deleteExpiredSessions(now_ms: number, limit: number): Promise<number>;

  recordSignInFailure(email: string, address: string, at_ms: number): Promise<void>;
  /** Failures for this e-mail at or after since_ms. */
  countSignInFailures(email: string, since_ms: number): Promise<number>;
  clearSignInFailures(email: string): Promise<void>;
  /** Until when this e-mail is refused at sign-in; null when it is not (or no longer) locked at now_ms. */
  signInLockedUntil(email: string, now_ms: number): Promise<number | null>;
  lockSignIn(email: string, until_ms: number): Promise<void>;

  insertAudit(row: Insertable<AuditLogTable>): Promise<void>;
  /** Newest first, from below `before_id`; one merchant's lines when merchant_id is given. */
  listAudit(merchant_id: string | null, before_id: number | null, limit: number): Promise<AuditLogRow[]>;
}
