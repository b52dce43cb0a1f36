// A refund started by a person in the back office (docs/backoffice.md): the same refund as the
// API's (operations/refund.ts refundSale: the sale's refund reservation, the processor's refund
// under an idempotency key, the merchant's notification), without the card checks the API makes
// of an anonymous caller. Its order_id is made from the form's one-time key, so a form sent twice
// (a double click, a reload) replays the first refund instead of making a second.
import type { OperationDeps } from './deps.js';
import { answerForExisting } from './lifecycle.js';
import { refundSale, type RefundOutcome } from './refund.js';
import type { TransactionRow } from '../domain/transaction-record.js';

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
    return answer.kind === 'replay' ? { kind: 'processed', answer: answer.answer, replayed: true } : answer;
  }
  if (sale.transaction_type !== 'sale') return { kind: 'refused', reason: 'not_a_sale' };
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
