// Asking the processor what it knows of a payment after its answer (decisions §16): refunds made
// outside the gateway (its dashboard, its support) that no webhook reported become a reversal or
// a recorded refund, and an authorization captured or voided at the processor is settled as
// such. Run by the operator (POST /operator/transactions/{trace_id}/reconcile), for a payment
// whose books may disagree with the processor's; a lookup never moves money, so asking is safe.
import { isPayment, type TransactionStatus } from '../domain/transaction-state.js';
import type { OperationDeps } from './deps.js';
import { completeAction } from './authorization.js';
import { applyOutsideRefund } from './payment-events.js';
import { lookupRequestOf } from './processor-lookup.js';

/** Refunds of one payment read at most: a payment refunded in more parts than this is beyond a lookup's reconciliation. */
const REFUNDS_MAX = 100;

export type ReconcileOutcome =
  | {
      readonly kind: 'reconciled';
      readonly transaction_status: TransactionStatus;
      /** What changed, in words, one line each; empty when the books already agreed. */
      readonly applied: readonly string[];
    }
  | { readonly kind: 'not_found' }
  /** Not a payment the processor holds (a refund, a payout, a payment not approved or authorized). */
  | { readonly kind: 'not_a_payment'; readonly transaction_type: string; readonly status: TransactionStatus }
  | { readonly kind: 'no_processor' }
  | { readonly kind: 'unavailable'; readonly reason: string };

export async function reconcilePayment(deps: OperationDeps, trace_id: number): Promise<ReconcileOutcome> {
  const row = await deps.store.transactions.get(trace_id);
  if (!row) return { kind: 'not_found' };
  if (!isPayment(row.transaction_type) || (row.status !== 'approved' && row.status !== 'authorized')) {
    return { kind: 'not_a_payment', transaction_type: row.transaction_type, status: row.status };
  }
  const found = await deps.connectors.forGatewayId(deps.store, row.gateway_id);
  if (!found) return { kind: 'no_processor' };
  const lookup = await found.connector.lookup(lookupRequestOf(row, null));
  if (lookup.kind === 'not_found') return { kind: 'unavailable', reason: 'the processor has no record of this payment' };
  if (lookup.kind === 'unavailable') return { kind: 'unavailable', reason: lookup.reason };
  const payment = lookup.payment;
  const ours = new Set(
    (await deps.store.transactions.listRefundsOf(trace_id, REFUNDS_MAX)).map((r) => r.psp_transaction_id).filter((id) => id !== null),
  );
  const now_ms = deps.clock.now_ms();
  const applied: string[] = [];
  await deps.store.transaction(async (tx) => {
    const locked = await tx.transactions.lock(trace_id);
    if (!locked) return;
    if (
      locked.transaction_type === 'authorize' &&
      locked.status === 'authorized' &&
      (payment?.hold === 'captured' || payment?.hold === 'voided')
    ) {
      const captured_minor = payment.hold === 'captured' ? (payment.captured_minor ?? locked.amount_minor) : null;
      const action = await tx.authorizations.getAction(trace_id);
      if ((await completeAction(tx, locked, action, captured_minor, null, 'reconciled by lookup', now_ms)) === 'applied') {
        applied.push(payment.hold === 'captured' ? `captured ${captured_minor ?? ''} at the processor` : 'voided at the processor');
      }
    }
    for (const refund of (payment?.refunds ?? []).slice(0, REFUNDS_MAX)) {
      // One of the gateway's own refunds (by its metadata, or its id at the processor) is never counted again.
      if (refund.trace_id !== null || ours.has(refund.psp_refund_id)) continue;
      const current = await tx.transactions.get(trace_id);
      if (!current) break;
      const outcome = await applyOutsideRefund(
        tx,
        current,
        { psp_refund_id: refund.psp_refund_id, amount_minor: refund.amount_minor, source: 'lookup' },
        now_ms,
      );
      if (outcome === 'applied') applied.push(`refund ${refund.psp_refund_id} of ${refund.amount_minor} made outside the gateway`);
      if (outcome === 'exceeds') {
        deps.logger.error(
          { trace_id, psp_refund_id: refund.psp_refund_id, amount_minor: refund.amount_minor },
          'processor refund made outside the gateway exceeds what remains refundable; left to the operator',
        );
      }
    }
  });
  const after = (await deps.store.transactions.get(trace_id)) ?? row;
  if (applied.length > 0) deps.logger.info({ trace_id, applied }, 'payment reconciled with its processor');
  return { kind: 'reconciled', transaction_status: after.status, applied };
}
