// A refund started by a person in the back office (docs/backoffice.md): the same refund as the
// API's (operations/refund.ts refundSale: the sale's refund reservation, the processor's refund
// under an idempotency key, the merchant's notification), without the card checks the API makes
// of an anonymous caller. Its order_id is made from the form's one-time key, so a form sent twice
// (a double click, a reload) replays the first refund instead of making a second.
// refundInBackOffice is the back office's one call: the refund, its audit line and, when the page
// is drawn again, the transaction's detail.
import { isPayment } from '../domain/transaction-state.js';
import { money } from '../domain/backoffice-format.js';
import { type Actor, recordAudit } from './audit.js';
import type { OperationDeps } from './deps.js';
import { answerForExisting } from './lifecycle.js';
import { refundSale, type RefundOutcome } from './refund.js';
import type { TransactionRow } from '../domain/transaction-record.js';
import { freshTransactionDetail, type TransactionDetail, transactionDetail } from './transaction-views.js';

/** The form's key: 16 to 64 letters, digits, - or _ (the page makes 32 hex digits). */
export const REFUND_KEY = /^[A-Za-z0-9_-]{16,64}$/;

export type BackOfficeRefundOutcome = RefundOutcome | { readonly kind: 'merchant_not_found' };

export async function refundFromBackOffice(
  deps: OperationDeps,
  sale: TransactionRow,
  amount_minor: number,
  refund_key: string,
): Promise<BackOfficeRefundOutcome> {
  const order_id = `bo-${sale.trace_id}-${refund_key}`;
  const request_fingerprint = deps.sealer.fingerprint(JSON.stringify(['backoffice-refund', sale.trace_id, amount_minor]), 'request');
  const existing = await deps.store.transactions.findByKey(sale.merchant_id, 'refund', order_id);
  if (existing) {
    const answer = await answerForExisting(deps, existing, request_fingerprint);
    return answer.kind === 'replay' ? { kind: 'processed', answer: answer.answer, replayed: true, own_commit: false } : answer;
  }
  // A sale, or an authorization once captured (decisions §16): both took the money.
  if (!isPayment(sale.transaction_type)) return { kind: 'refused', reason: 'not_a_sale' };
  if (sale.status !== 'approved') return { kind: 'refused', reason: 'not_approved' };
  const merchant = await deps.merchants.find(sale.merchant_id);
  if (merchant === null) return { kind: 'merchant_not_found' };
  return refundSale(
    deps,
    {
      merchant,
      identity: { kind: sale.identity_kind as 'frontend' | 'application_key', value: sale.identity_value },
      api_version: sale.api_version,
      order_id,
      amount_minor,
      currency: sale.currency,
      pin: sale.pin,
      return_url: null,
      // The merchant hears of the refund where it hears of the sale.
      notification_url: sale.notification_url,
      request_fingerprint,
    },
    sale,
  );
}

/**
 * What the back office's refund form came to: processed (the page redirects), or the sale's
 * detail to draw again with the problem: the amount or key refused before anything was asked
 * (invalid), the refund refused (its detail read afresh), still in progress, or not made here.
 */
export type BackOfficeRefundResult =
  | { readonly kind: 'processed' }
  | { readonly kind: 'invalid'; readonly detail: TransactionDetail }
  | { readonly kind: 'refused'; readonly reason: string; readonly detail: TransactionDetail }
  | { readonly kind: 'in_progress'; readonly detail: TransactionDetail }
  | { readonly kind: 'failed'; readonly detail: TransactionDetail };

/**
 * A refund of `sale` from the back office's form, with its audit line (written after the refund,
 * with its outcome; none while it is still in progress). amount_minor is null when the form's
 * amount could not be read in the sale's currency.
 */
export async function refundInBackOffice(
  deps: OperationDeps,
  actor: Actor,
  sale: TransactionRow,
  amount_minor: number | null,
  refund_key: string,
): Promise<BackOfficeRefundResult> {
  const audit = (outcome: 'done' | 'refused' | 'failed', detail: string) =>
    recordAudit(deps, actor.viewer, actor.address, {
      action: 'refund',
      target: String(sale.trace_id),
      merchant_id: sale.merchant_id,
      outcome,
      detail,
    });
  if (amount_minor === null || !REFUND_KEY.test(refund_key)) {
    await audit('refused', 'invalid amount');
    return { kind: 'invalid', detail: await transactionDetail(deps, sale) };
  }
  const outcome = await refundFromBackOffice(deps, sale, amount_minor, refund_key);
  const described = money(amount_minor, sale.currency);
  switch (outcome.kind) {
    case 'processed':
      await audit(
        'done',
        `${described}: refund ${String(outcome.answer.trace_id ?? '')} ${String(outcome.answer.transaction_status ?? '')}${outcome.replayed ? ' (form sent again: same refund)' : ''}`,
      );
      return { kind: 'processed' };
    case 'refused':
      await audit('refused', `${described}: ${outcome.reason}`);
      return { kind: 'refused', reason: outcome.reason, detail: await freshTransactionDetail(deps, sale) };
    case 'in_progress':
      return { kind: 'in_progress', detail: await transactionDetail(deps, sale) };
    default:
      await audit('failed', `${described}: ${outcome.kind}`);
      return { kind: 'failed', detail: await transactionDetail(deps, sale) };
  }
}
