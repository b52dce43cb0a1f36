// find-order (spec §4.7): where an order opened by init-checkout (or its payout twin,
// init-pay-out-order) stands. A pending order past its time limit is closed here, through the
// order state machine, so the answer never waits for the due-work pass.
//
//   order                                   | answer
//   ----------------------------------------+-------------------------------------------------------------
//   absent, another merchant's, other frontend | status 1 Order not found
//   pending (open)                          | status 3 Order is still open
//   rejected (time limit), no transaction   | status 4 Order timed out with no transactions
//   rejected, with transactions             | status 0, the latest transaction that did not fail; if every
//                                           |   one failed (declined, rejected, error, cancelled), the latest failed one
//   authorized, approved                    | status 0, the latest transaction that did not fail
import { ATTEMPT_FAILED_STATUSES, isOrderSession } from '../domain/order-state.js';
import { expireOrder } from '../transitions/order.js';
import { buildNotificationPayload } from '../notifications/payload.js';
import type { CashierSessionRow } from '../domain/cashier-record.js';
import type { TransactionRow } from '../domain/transaction-record.js';
import type { OrderRead } from '../store/store.js';
import type { OperationDeps } from './deps.js';

export type FindOrderOutcome =
  | { readonly kind: 'found'; readonly fields: Record<string, string | number | null> }
  | { readonly kind: 'not_found' }
  | { readonly kind: 'open' }
  | { readonly kind: 'timed_out_empty' };

/**
 * The fields a found order answers besides the envelope: spec §4.7's list, plus frontend (the
 * identity the order was opened with, in the place of §4.7's application_key) and variable3 (as
 * in its notifications). An allow-list, so what the notification payload carries beyond it
 * (card_token of decisions §9, psp_additional_details) never reaches find-order.
 */
export const FIND_ORDER_FIELDS: readonly string[] = [
  'order_status',
  'transaction_type',
  'transaction_status',
  'transaction_id',
  'trace_id',
  'order_id',
  'application_key',
  'frontend',
  'pin',
  'amount',
  'currency',
  'charge_amount',
  'charge_currency',
  'payment_method',
  'payment_processor',
  'gateway',
  'created_by',
  'edited_by',
  'auth_token',
  'merchant_id',
  'card_number',
  'card_type',
  'card_exp',
  'account_identifier',
  'cascade_level',
  'is_cascade',
  'error_code',
  'error_details',
  'reference_id',
  'variable1',
  'variable2',
  'variable3',
];

/** "declined" in spec §4.7's rule: every status that ends an attempt without moving money. */
const FAILED: ReadonlySet<string> = new Set(ATTEMPT_FAILED_STATUSES);

/**
 * The transaction whose details answer for the order, by spec §4.7's rule, from the order's
 * leading transaction as the store reads it (cashier-store.ts findOrderRead: the newest that did
 * not fail, else the newest): a failed one answers only for a closed (timed-out) order.
 */
export function orderTransaction(session: Pick<CashierSessionRow, 'order_status'>, leading: TransactionRow | null): TransactionRow | null {
  if (leading === null) return null;
  return !FAILED.has(leading.status) || session.order_status === 'rejected' ? leading : null;
}

export async function findOrder(deps: OperationDeps, merchant_id: string, frontend: string, order_id: string): Promise<FindOrderOutcome> {
  let read: OrderRead | null = await deps.store.cashier.findOrderRead(merchant_id, order_id);
  if (!read) return { kind: 'not_found' };
  const { summary } = read;
  if (!isOrderSession(summary) || summary.identity_kind !== 'frontend' || summary.identity_value !== frontend) return { kind: 'not_found' };
  const now_ms = deps.clock.now_ms();
  if (summary.order_status === 'pending' && now_ms >= summary.expires_at_ms) {
    const id = summary.session_id;
    const closed = await deps.store.transaction(async (tx) => {
      const locked = await tx.cashier.lockSession(id);
      if (!locked) return false;
      await expireOrder(tx, locked, now_ms);
      return true;
    });
    if (!closed) return { kind: 'not_found' };
    // Closed here or by someone else meanwhile: read the order again, now with its transaction.
    read = await deps.store.cashier.findOrderRead(merchant_id, order_id);
    if (!read) return { kind: 'not_found' };
  }
  const { order_status } = read.summary;
  if (order_status === 'pending') return { kind: 'open' };
  const chosen = orderTransaction(read.summary, read.leading);
  if (!chosen) return order_status === 'rejected' ? { kind: 'timed_out_empty' } : { kind: 'open' };
  const payload: Record<string, string | number | null> = { order_status, ...buildNotificationPayload(chosen, 0) };
  const fields: Record<string, string | number | null> = {};
  for (const name of FIND_ORDER_FIELDS) if (payload[name] !== undefined) fields[name] = payload[name]!;
  return { kind: 'found', fields };
}
