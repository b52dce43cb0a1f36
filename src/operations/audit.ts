// The back office's audit log (docs/backoffice.md): every action a person takes there, and every
// sign-in attempt, as one line of who, what, when, from which address and what came of it.
// Written after the action it records, with its outcome; never a password, secret or card number.
import type { AuditOutcome } from '../domain/backoffice-record.js';
import type { Clock } from '../domain/clock.js';
import type { Viewer } from '../domain/backoffice-access.js';
import type { Store } from '../store/store.js';

/** A detail longer than this is cut: the log says what happened, the records hold the data. */
const DETAIL_MAX_CHARS = 300;

/** Who acts in the back office and from which address: what every action's audit line records of its author. */
export interface Actor {
  readonly viewer: Viewer;
  readonly address: string;
}

export interface AuditEntry {
  readonly action: string;
  readonly target?: string | null;
  /** The merchant whose data the action touched. */
  readonly merchant_id?: string | null;
  readonly outcome: AuditOutcome;
  readonly detail?: string | null;
}

export async function recordAudit(
  deps: { readonly store: Store; readonly clock: Clock },
  actor: Viewer | { readonly email: string },
  address: string,
  entry: AuditEntry,
): Promise<void> {
  const viewer = 'user_id' in actor ? actor : null;
  const detail = entry.detail ?? null;
  await deps.store.backoffice.insertAudit({
    at_ms: deps.clock.now_ms(),
    user_id: viewer?.user_id ?? null,
    email: actor.email,
    role: viewer?.role ?? null,
    merchant_id: entry.merchant_id ?? viewer?.merchant_id ?? null,
    action: entry.action,
    target: entry.target ?? null,
    address,
    outcome: entry.outcome,
    detail: detail === null ? null : [...detail].slice(0, DETAIL_MAX_CHARS).join(''),
  });
}
