// The customer's side of a sandbox challenge (the 3-D Secure and e-wallet pages): look it up by
// its token, and approve or decline it through the state machine before its time-out. An
// operation, not the connector's: the sandbox connector only decides that a challenge is needed
// (connectors/sandbox/connector.ts); its pages (http/routes/sandbox.ts) call these to finish it.
import { changeStatus, type StatusChange } from '../transitions/transaction.js';
import type { TransactionRow } from '../domain/transaction-record.js';
import { sessionFrameOrigins } from './cashier-session.js';
import type { OperationDeps } from './deps.js';
import { challengeTokenHash } from './lifecycle.js';

export interface ChallengeView {
  readonly row: TransactionRow;
  readonly merchant_id: string;
  /** open: buttons work; waiting: the issuer never answers (sandbox 588/713); closed: already final or expired. */
  readonly state: 'open' | 'waiting' | 'closed';
}

/** card: the 3-D Secure page of a sale; wallet: the e-wallet page of a direct payout. A token opens only its own page. */
export type ChallengeKind = 'card' | 'wallet';

export async function findChallenge(deps: OperationDeps, token: string, kind: ChallengeKind = 'card'): Promise<ChallengeView | null> {
  if (token.length === 0 || token.length > 64) return null;
  const row = await deps.store.transactions.findByChallenge(challengeTokenHash(token));
  if (!row || (row.payment_method === 'ewallet') !== (kind === 'wallet')) return null;
  const expired = row.challenge_expires_at_ms !== null && deps.clock.now_ms() >= row.challenge_expires_at_ms;
  const state = row.status !== 'pending_async' || expired ? 'closed' : row.challenge_mode === 'unresponsive' ? 'waiting' : 'open';
  return { row, merchant_id: row.merchant_id, state };
}

export type ChallengeOutcome =
  | { readonly kind: 'completed'; readonly row: TransactionRow }
  /** Already finished (by the customer, the time-out or a second click): nothing changes. */
  | { readonly kind: 'closed'; readonly row: TransactionRow }
  | { readonly kind: 'not_found' };

export type ChallengeAction = 'approve' | 'decline' | 'confirm' | 'cancel';

/** What each button does: 3-D Secure Approve / Decline, wallet Confirm / Cancel. */
const CHALLENGE_ACTIONS: Readonly<Record<ChallengeAction, { kind: ChallengeKind; change: StatusChange }>> = {
  approve: {
    kind: 'card',
    change: { to: 'approved', reason: 'challenge approved by customer', patch: { error_code: '0', error_details: '[TEST] Approved' } },
  },
  decline: {
    kind: 'card',
    change: {
      to: 'rejected',
      reason: 'challenge declined by customer',
      patch: { error_code: '1', error_details: '[TEST] Declined by the customer at 3-D Secure' },
    },
  },
  confirm: {
    kind: 'wallet',
    change: {
      to: 'approved',
      reason: 'confirmed by customer in the e-wallet',
      patch: { error_code: '0', error_details: '[TEST] Payout confirmed in the sandbox e-wallet' },
    },
  },
  cancel: {
    kind: 'wallet',
    change: {
      to: 'cancelled',
      reason: 'cancelled by customer in the e-wallet',
      patch: { error_code: '1', error_details: '[TEST] Payout cancelled by the customer in the sandbox e-wallet' },
    },
  },
};

/** The wallet's words for a deposit (a sale paid from the wallet) rather than a payout. */
function forTransaction(row: TransactionRow, change: StatusChange): StatusChange {
  // An authorization approved at 3-D Secure is `authorized` (domain/transaction-state.ts statusForResult).
  if (row.transaction_type === 'authorize' && change.to === 'approved') {
    return { ...change, to: 'authorized', patch: { ...change.patch, error_details: '[TEST] Authorized' } };
  }
  if (row.transaction_type !== 'sale' || !change.patch?.error_details) return change;
  return { ...change, patch: { ...change.patch, error_details: change.patch.error_details.replace('Payout', 'Payment') } };
}

export async function completeChallenge(deps: OperationDeps, token: string, action: ChallengeAction): Promise<ChallengeOutcome> {
  const { kind, change } = CHALLENGE_ACTIONS[action];
  const view = await findChallenge(deps, token, kind);
  if (!view) return { kind: 'not_found' };
  if (view.state !== 'open') return { kind: 'closed', row: view.row };
  const now_ms = deps.clock.now_ms();
  return deps.store.transaction(async (tx) => {
    const row = await tx.transactions.lock(view.row.trace_id);
    if (!row) return { kind: 'not_found' } as const;
    // Re-checked under the lock: the time-out may have fallen due since the page was read.
    if (row.challenge_expires_at_ms !== null && deps.clock.now_ms() >= row.challenge_expires_at_ms) return { kind: 'closed', row } as const;
    const outcome = await changeStatus(tx, row, forTransaction(row, change), now_ms);
    // The stored answer stays the original (pending_async) one: a replay repeats what was answered.
    if (outcome.kind !== 'changed') return { kind: 'closed', row } as const;
    return { kind: 'completed', row: outcome.row } as const;
  });
}

/**
 * Who may frame a challenge page: nobody (frame-ancestors 'none', X-Frame-Options DENY), so no
 * site can hide Approve or Confirm under its own page (clickjacking); except a payment made in
 * an init-pay-in cashier session, whose 3-D Secure or wallet page opens inside the merchant's
 * iframe: that page may be framed by the same configured origins as the cashier's own pages
 * (docs/cashier.md §9).
 */
export async function challengeFrameOrigins(deps: OperationDeps, row: TransactionRow): Promise<readonly string[] | null> {
  const session_id = row.cashier_session_id;
  if (!session_id) return null;
  return sessionFrameOrigins(deps, await deps.store.cashier.getSession(session_id));
}
