// The back office's users and its audit log, as the gateway keeps them: records its operations
// and pages pass around. Defined here, so the domain depends on nothing; store/schema.ts builds
// its tables from them. Times are unix milliseconds.
// Object types, not interfaces, as Kysely's rows are: a record is also a Readonly<Record<string, unknown>>.
import type { BackOfficeRole } from './backoffice-access.js';

/** A person who signs in to the back office (migration 0015, docs/backoffice.md). */
export type BackofficeUserRow = {
  user_id: string;
  /** Lower-cased; unique. */
  email: string;
  /** argon2id, PHC string (@node-rs/argon2). */
  password_hash: string;
  /** operator (every merchant) or merchant (its merchant_id only): a CHECK ties the two columns. */
  role: BackOfficeRole;
  merchant_id: string | null;
  created_at_ms: number;
  /** Set once disabled: the user can no longer sign in and its sessions end at their next request. */
  disabled_at_ms: number | null;
};

/** done, refused, failed: what came of an audited action. */
export type AuditOutcome = 'done' | 'refused' | 'failed';

/** Who did what, when and from where in the back office; operators read it (docs/backoffice.md). */
export type AuditLogRow = {
  id: number;
  at_ms: number;
  /** null for an attempt by nobody known (a failed sign-in with an unknown e-mail). */
  user_id: string | null;
  email: string;
  role: BackOfficeRole | null;
  /** The merchant whose data the action touched, if any: a merchant's staff see only their own merchant's lines. */
  merchant_id: string | null;
  action: string;
  /** What it acted on (a trace_id, a user's e-mail, a gateway id), or null. */
  target: string | null;
  address: string;
  /** done, refused, failed: what came of it. */
  outcome: AuditOutcome;
  /** A short account, never a secret, a password or a card number. */
  detail: string | null;
};
