// A refund (spec §4.1 variant C). The original must be an approved sale of the same merchant
// in the same currency; the sale's refund reservation (a conditional update under the sale's
// row lock, backed by a CHECK constraint) keeps approved and in-flight refunds within its amount.
import { isPayment } from '../domain/transaction-state.js';
import { type CardData, formatExpiry } from '../domain/cards.js';
import type { Merchant } from '../domain/merchants.js';
import type { OperationDeps } from './deps.js';
import { answerForExisting, finish, requestRow, reserve, type TransactionAnswer } from './lifecycle.js';
import { panFingerprint } from './card-vault.js';
import type { Identity } from './sale.js';
import type { TransactionRow } from '../domain/transaction-record.js';

export interface RefundInput {
  readonly merchant: Merchant;
  readonly identity: Identity;
  readonly api_version: string;
  readonly order_id: string;
  readonly reference_id: number;
  readonly amount_minor: number;
  readonly currency: string;
  /** The card the sale was paid with; null for a sale paid from an e-wallet (payment_method paypal), which has none. */
  readonly card: CardData | null;
  readonly pin: string;
  readonly return_url: string | null;
  readonly notification_url: string | null;
  readonly request_fingerprint: string;
}

export type RefundRefusal =
  | 'not_approved'
  | 'currency_mismatch'
  | 'card_mismatch'
  | 'expiry_mismatch'
  | 'exceeds_sale'
  | 'not_a_sale'
  /** A refund without card fields of a sale that was paid by card: the card is asked for, as always. */
  | 'card_required';

export type RefundOutcome =
  | {
      readonly kind: 'processed';
      readonly answer: TransactionAnswer;
      readonly replayed: boolean;
      /** The answer is this request's own commit, on disk before the refund returned (as for a sale: SaleOutcome). */
      readonly own_commit: boolean;
    }
  | { readonly kind: 'duplicate_order' }
  | { readonly kind: 'in_progress' }
  /** No such transaction for this merchant: the same answer whether it is absent or another merchant's. */
  | { readonly kind: 'reference_not_found' }
  | { readonly kind: 'refused'; readonly reason: RefundRefusal; readonly remaining_minor?: number }
  /** The sale's connector does not run here (a sandbox sale on a live instance). */
  | { readonly kind: 'no_processor' };

export async function processRefund(deps: OperationDeps, input: RefundInput): Promise<RefundOutcome> {
  const merchant_id = input.merchant.merchant_id;
  // A retry of an existing refund is answered from its key first, whatever the sale looks like now.
  const existing = await deps.store.transactions.findByKey(merchant_id, 'refund', input.order_id);
  if (existing) {
    const answer = await answerForExisting(deps, existing, input.request_fingerprint);
    return answer.kind === 'replay' ? { kind: 'processed', answer: answer.answer, replayed: true, own_commit: false } : answer;
  }
  const sale = await deps.store.transactions.get(input.reference_id);
  if (!sale || sale.merchant_id !== merchant_id) return { kind: 'reference_not_found' };
  // A sale, or an authorization once captured (decisions §16): both took the money.
  if (!isPayment(sale.transaction_type)) return { kind: 'refused', reason: 'not_a_sale' };
  if (input.card === null) {
    // An e-wallet sale has no card to check; a card sale keeps its card check.
    if (sale.card_fingerprint !== null) return { kind: 'refused', reason: 'card_required' };
  } else {
    if (sale.card_fingerprint !== panFingerprint(deps.sealer, input.card.pan)) return { kind: 'refused', reason: 'card_mismatch' };
    if (sale.card_exp !== formatExpiry(input.card.expiry)) return { kind: 'refused', reason: 'expiry_mismatch' };
  }
  if (sale.currency !== input.currency) return { kind: 'refused', reason: 'currency_mismatch' };
  return refundSale(deps, input, sale);
}

/** A refund's request without the card checks: the API checks the card first, the back office's signed-in staff need not. */
export type RefundOfSale = Omit<RefundInput, 'card' | 'reference_id'>;

/**
 * Refunds `sale` (an approved sale of input.merchant, in input.currency, as the caller checked):
 * the reservation under the sale's row lock, the processor's refund with the refund's order_id
 * as its idempotency key, and the answer.
 */
export async function refundSale(deps: OperationDeps, input: RefundOfSale, sale: TransactionRow): Promise<RefundOutcome> {
  // The sale's own gateway refunds it, enabled or not: a disabled gateway still settles what it took.
  const found = await deps.connectors.forGatewayId(deps.store, sale.gateway_id);
  if (!found) return { kind: 'no_processor' };
  const connector = found.connector;

  const now_ms = deps.clock.now_ms();
  let refusal: RefundOutcome | null = null;
  const reservation = await reserve(
    deps,
    requestRow(
      input,
      {
        transaction_type: 'refund',
        gateway_id: sale.gateway_id,
        payment_processor: sale.payment_processor,
        payment_method: sale.payment_method,
        created_at_ms: now_ms,
      },
      {
        card_masked: sale.card_masked,
        card_brand: sale.card_brand,
        card_exp: sale.card_exp,
        card_fingerprint: sale.card_fingerprint,
        reference_id: sale.trace_id,
      },
    ),
    {
      prepare: async (tx) => {
        const locked = await tx.transactions.lock(sale.trace_id);
        if (!locked || locked.status !== 'approved') {
          refusal = { kind: 'refused', reason: 'not_approved' };
          return null;
        }
        if (!(await tx.transactions.reserveRefund(sale.trace_id, input.amount_minor))) {
          refusal = { kind: 'refused', reason: 'exceeds_sale', remaining_minor: locked.amount_minor - locked.refund_reserved_minor };
          return null;
        }
        return {};
      },
    },
  );
  if (reservation.kind === 'refused_by_guard') return refusal ?? { kind: 'refused', reason: 'not_approved' };
  if (reservation.kind === 'replay') return { kind: 'processed', answer: reservation.answer, replayed: true, own_commit: false };
  if (reservation.kind !== 'reserved') return reservation;

  const result = await connector.refund({
    trace_id: reservation.row.trace_id,
    reference: input.order_id,
    sale_trace_id: sale.trace_id,
    sale_psp_transaction_id: sale.psp_transaction_id,
    amount_minor: input.amount_minor,
    currency: input.currency,
  });
  // finish() commits the change it answers with, and hears of it once that commit is on disk.
  const answer = await finish(deps, reservation.row, result, connector);
  return { kind: 'processed', answer, replayed: false, own_commit: true };
}
