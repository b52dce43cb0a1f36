// The sandbox's triggers (decisions §16): `POST /sandbox/transactions/{trace_id}/chargeback` and
// `/reversal` make the processor's side of a dispute or of a refund made outside the gateway
// happen now, to an approved payment of any merchant, so a merchant's developer can see the
// notification their code must handle without waiting for CVV 259's minute or a real processor.
// They go through the same operations as a processor's webhook (payment-events.ts).
import { randomBytes } from 'node:crypto';
import { isPayment, type TransactionStatus } from '../domain/transaction-state.js';
import type { OperationDeps } from './deps.js';
import { applyDispute, applyOutsideRefund, outsideRefundOrderId } from './payment-events.js';

export type SandboxTrigger = 'chargeback' | 'reversal';

export type TriggerOutcome =
  | {
      readonly kind: 'done';
      readonly trace_id: number;
      readonly transaction_status: TransactionStatus;
      /** A reversal of part of the payment: the refund transaction recorded for it. */
      readonly refund_trace_id: number | null;
    }
  | { readonly kind: 'not_found' }
  /** Not an approved payment (a sale, or a captured authorization): nothing changed. */
  | { readonly kind: 'not_approved'; readonly transaction_type: string; readonly status: TransactionStatus }
  /** More than the payment, or than remains refundable of it. */
  | { readonly kind: 'invalid_amount'; readonly max_minor: number };

export async function runSandboxTrigger(
  deps: Pick<OperationDeps, 'store' | 'clock'>,
  trigger: SandboxTrigger,
  trace_id: number,
  amount_minor: number | null,
): Promise<TriggerOutcome> {
  const now_ms = deps.clock.now_ms();
  return deps.store.transaction(async (tx): Promise<TriggerOutcome> => {
    const row = await tx.transactions.lock(trace_id);
    if (!row) return { kind: 'not_found' };
    if (!isPayment(row.transaction_type) || row.status !== 'approved') {
      return { kind: 'not_approved', transaction_type: row.transaction_type, status: row.status };
    }
    const max_minor = trigger === 'chargeback' ? row.amount_minor : row.amount_minor - row.refund_reserved_minor;
    const amount = amount_minor ?? max_minor;
    if (amount < 1 || amount > max_minor) return { kind: 'invalid_amount', max_minor };
    if (trigger === 'chargeback') {
      await applyDispute(
        tx,
        row,
        {
          gateway_id: row.gateway_id,
          psp_dispute_id: `sbx_dsp_${randomBytes(8).toString('hex')}`,
          stage: 'evidence_required',
          amount_minor: amount,
          currency: row.currency,
          reason: '[TEST] Chargeback made by the sandbox trigger',
          evidence_due_at_ms: now_ms + 7 * 86_400_000,
        },
        'sandbox trigger',
        now_ms,
      );
      return { kind: 'done', trace_id, transaction_status: 'chargeback', refund_trace_id: null };
    }
    const psp_refund_id = `sbx_rfd_${randomBytes(8).toString('hex')}`;
    const outcome = await applyOutsideRefund(tx, row, { psp_refund_id, amount_minor: amount, source: 'sandbox trigger' }, now_ms);
    if (outcome === 'exceeds') return { kind: 'invalid_amount', max_minor };
    const after = (await tx.transactions.get(trace_id)) ?? row;
    const refund =
      after.status === 'reversed' ? null : await tx.transactions.findByKey(row.merchant_id, 'refund', outsideRefundOrderId(psp_refund_id));
    return { kind: 'done', trace_id, transaction_status: after.status, refund_trace_id: refund?.trace_id ?? null };
  });
}
