// Payouts as the back office and the operator API read them (docs/payouts.md): those waiting for
// a decision, a page of payouts by status, one payout's status history. Decisions themselves are
// operations/payout-review.ts.
import { maySee, type Viewer } from '../domain/backoffice-access.js';
import type { TransactionRow } from '../domain/transaction-record.js';
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

/** A page of payouts in one status, by trace_id after `after_trace_id`. */
export function payoutsByStatus(
  deps: ReadDeps,
  status: TransactionStatus,
  after_trace_id: number,
  limit: number,
): Promise<TransactionRow[]> {
  return deps.store.transactions.listPayoutsByStatus(status, after_trace_id, limit);
}

/** A transaction's status history, oldest first. */
export function statusHistory(
  deps: ReadDeps,
  trace_id: number,
): Promise<{ from_status: string; to_status: string; reason: string; at_ms: number }[]> {
  return deps.store.transactions.listStatusChanges(trace_id);
}
