// The only place a transaction's status is written. Every change is checked against the
// transition tables of domain/transaction-state.ts, written with compare-and-set (so two racing
// changes cannot both win), recorded in status_changes, and records its merchant notification,
// all inside the caller's database transaction: the notification exists if and only if the
// change committed. A refund that fails gives its amount back to the sale, and a transaction
// made in a cashier order moves the order along (transitions/order.ts), in the same transaction.
import { isTransitionAllowed, REFUND_RELEASING, type TransactionStatus } from '../domain/transaction-state.js';
import { buildNotificationPayload } from '../notifications/payload.js';
import { newNotificationRow } from '../notifications/schedule.js';
import type { TransactionRow } from '../domain/transaction-record.js';
import type { UnitOfWork, TransactionPatch } from '../store/store.js';
import { orderFollowsTransaction } from './order.js';

export interface StatusChange {
  readonly to: TransactionStatus;
  /** Why, for the audit trail: "processor answered", "3-D Secure approved by customer", ... */
  readonly reason: string;
  /** Other columns that change together with the status (error details, PSP id, ...). */
  readonly patch?: TransactionPatch;
  /**
   * false only for an attempt the cascade tries again on another gateway (operations/lifecycle.ts
   * cascadeTo): the merchant is notified of the attempt that ends the order, not of each failure.
   */
  readonly notify?: boolean;
  /**
   * The amount the notification names when it is not the transaction's: a chargeback of part of
   * a payment notifies the disputed amount (decisions §16); charge_amount follows in proportion.
   */
  readonly notified_amount_minor?: number;
}

export type StatusChangeOutcome =
  | { readonly kind: 'changed'; readonly row: TransactionRow }
  | { readonly kind: 'not_allowed'; readonly from: TransactionStatus }
  /** Someone else changed the status first; the caller re-reads and decides. */
  | { readonly kind: 'stale' };

export async function changeStatus(
  tx: UnitOfWork,
  row: TransactionRow,
  change: StatusChange,
  now_ms: number,
): Promise<StatusChangeOutcome> {
  if (!isTransitionAllowed(row.transaction_type, row.status, change.to)) return { kind: 'not_allowed', from: row.status };
  const patch: TransactionPatch & { status: TransactionStatus } = { ...change.patch, status: change.to, updated_at_ms: now_ms };
  const updated: TransactionRow = { ...row, ...patch };
  // The merchant's notification describes the row as changed; it is written by the same store
  // call as the compare-and-set and its status_changes row (one round trip on PostgreSQL), and
  // only if the compare-and-set won.
  const notification =
    updated.notification_url && change.notify !== false
      ? newNotificationRow(
          { trace_id: row.trace_id, merchant_id: row.merchant_id, url: updated.notification_url },
          buildNotificationPayload(notified(updated, change.notified_amount_minor), Math.floor(now_ms / 1000)),
          now_ms,
        )
      : null;
  const changed = await tx.transactions.changeStatus(row.trace_id, row.status, patch, change.reason, now_ms, notification);
  if (!changed) return { kind: 'stale' };
  // A refund that fails gives its reservation back to the sale, in the same transaction.
  if (row.transaction_type === 'refund' && row.reference_id !== null && REFUND_RELEASING.has(change.to)) {
    await tx.transactions.releaseRefund(row.reference_id, row.amount_minor);
  }
  // A transaction made in a cashier order moves the order along, in this same database transaction.
  if (updated.cashier_session_id) await orderFollowsTransaction(tx, updated, now_ms);
  return { kind: 'changed', row: updated };
}

/**
 * Whether changeStatus writes nothing but the row, its status_changes row and its notification
 * (one atomic store call, so it may run outside a database transaction): not when a failed refund
 * gives its amount back to the sale, nor when a cashier order follows the transaction.
 */
export function statusChangeIsOneWrite(row: TransactionRow, to: TransactionStatus): boolean {
  if (row.transaction_type === 'refund' && row.reference_id !== null && REFUND_RELEASING.has(to)) return false;
  return !row.cashier_session_id;
}

/** The row as its notification describes it: with another amount when the change names one. */
function notified(row: TransactionRow, amount_minor: number | undefined): TransactionRow {
  if (amount_minor === undefined || amount_minor === row.amount_minor) return row;
  const charge_amount_minor =
    row.charge_currency === row.currency ? amount_minor : Math.round((row.charge_amount_minor * amount_minor) / row.amount_minor);
  return { ...row, amount_minor, charge_amount_minor };
}
