// The customer's side of a challenge (the sandbox 3-D Secure and wallet pages): look it up by
// its token, and approve or decline it through the state machine before its time-out.
import { changeStatus } from '../domain/transaction-state.js';
import type { TransactionRow } from '../store/schema.js';
import type { OperationDeps } from './deps.js';
import { challengeTokenHash } from './lifecycle.js';

export interface ChallengeView {
  readonly row: TransactionRow;
  readonly merchant_id: string;
  /** open: buttons work; waiting: the issuer never answers (sandbox 588/713); closed: already final or expired. */
  readonly state: 'open' | 'waiting' | 'closed';
}

export async function findChallenge(deps: OperationDeps, token: string): Promise<ChallengeView | null> {
  if (token.length === 0 || token.length > 64) return null;
  const row = await deps.store.findTransactionByChallenge(challengeTokenHash(token));
  if (!row) return null;
  const expired = row.challenge_expires_at_ms !== null && deps.clock.now_ms() >= row.challenge_expires_at_ms;
  const state = row.status !== 'pending_async' || expired ? 'closed' : row.challenge_mode === 'unresponsive' ? 'waiting' : 'open';
  return { row, merchant_id: row.merchant_id, state };
}

export type ChallengeOutcome =
  | { readonly kind: 'completed'; readonly row: TransactionRow }
  /** Already finished (by the customer, the time-out or a second click): nothing changes. */
  | { readonly kind: 'closed'; readonly row: TransactionRow }
  | { readonly kind: 'not_found' };

export async function completeChallenge(deps: OperationDeps, token: string, action: 'approve' | 'decline'): Promise<ChallengeOutcome> {
  const view = await findChallenge(deps, token);
  if (!view) return { kind: 'not_found' };
  if (view.state !== 'open') return { kind: 'closed', row: view.row };
  const now_ms = deps.clock.now_ms();
  return deps.store.transaction(async (tx) => {
    const row = await tx.lockTransaction(view.row.trace_id);
    if (!row) return { kind: 'not_found' } as const;
    const approve = action === 'approve';
    const outcome = await changeStatus(tx, row, {
      to: approve ? 'approved' : 'rejected',
      reason: approve ? 'challenge approved by customer' : 'challenge declined by customer',
      patch: {
        error_code: approve ? '0' : '1',
        error_details: approve ? '[TEST] Approved' : '[TEST] Declined by the customer at 3-D Secure',
      },
    }, now_ms);
    // The stored answer stays the original (pending_async) one: a replay repeats what was answered.
    if (outcome.kind !== 'changed') return { kind: 'closed', row } as const;
    return { kind: 'completed', row: outcome.row } as const;
  });
}
