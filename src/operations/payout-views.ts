// Payouts as the back office and the operator API read them (docs/payouts.md): those waiting for
// a decision, a page of payouts by status, one payout's status history. Decisions themselves are
// operations/payout-review.ts.
import { maySee, type Viewer } from '../domain/backoffice-access.js';
import type { TransactionRow } from '../domain/transaction-record.js';
import type { TransactionPageKey } from '../domain/transaction-search.js';
import type { TransactionStatus } from '../domain/transaction-state.js';
import type { OperationDeps } from './deps.js';

type ReadDeps = Pick<OperationDeps, 'store'>;

const TRACE_ID = /^[1-9][0-9]{0,14}$/;

/** Payouts `requested` (a gateway that holds payouts), newest first, of one merchant or (null) all, with their gateways' labels. */
export async function waitingPayouts(
  deps: ReadDeps,
  merchant_id: string | null,
  limit: number,
): Promise<{ readonly rows: TransactionRow[]; readonly gateway_labels: ReadonlyMap<string, string> }> {
  const rows = await deps.store.transactions.search({ merchant_id, transaction_type: 'payout', status: 'requested' }, null, limit);
  return { rows, gateway_labels: await deps.store.merchants.gatewayLabels([...new Set(rows.map((r) => r.gateway_id))]) };
}

/** The payout a path names (its trace_id as typed), if this viewer may see it; else null. */
export async function visiblePayout(deps: ReadDeps, viewer: Viewer, trace_id: string): Promise<TransactionRow | null> {
  const row = TRACE_ID.test(trace_id) ? await deps.store.transactions.get(Number(trace_id)) : null;
  return row === null || row.transaction_type !== 'payout' || !maySee(viewer, row.merchant_id) ? null : row;
}

/**
 * A page of payouts in one status, oldest first, after the payout `after_trace_id` (null: from
 * the first). trace_ids are drawn at random (domain/trace-id.ts), so the list goes by creation
 * time and then trace_id; the caller still names the last payout it saw by its trace_id, whose
 * creation time is read here. `unknown_after` when that is no payout's.
 */
export async function payoutsByStatus(
  deps: ReadDeps,
  status: TransactionStatus,
  after_trace_id: number | null,
  limit: number,
): Promise<{ readonly kind: 'page'; readonly rows: TransactionRow[] } | { readonly kind: 'unknown_after' }> {
  let after: TransactionPageKey | null = null;
  if (after_trace_id !== null) {
    const last = await deps.store.transactions.get(after_trace_id);
    if (last === null || last.transaction_type !== 'payout') return { kind: 'unknown_after' };
    after = last;
  }
  return { kind: 'page', rows: await deps.store.transactions.listPayoutsByStatus(status, after, limit) };
}

/** A transaction's status history, oldest first. */
export function statusHistory(
  deps: ReadDeps,
  trace_id: number,
): Promise<{ from_status: string; to_status: string; reason: string; at_ms: number }[]> {
  return deps.store.transactions.listStatusChanges(trace_id);
}
