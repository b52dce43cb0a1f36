// The only place an order's status (order_status of a cashier order, spec §3.3) is written:
// every change is checked against domain/order-state.ts's table and written with compare-and-set,
// inside the caller's database transaction, so a transaction's status change and the order's
// move commit together.
import { isOrderSession, nextOrderStatus, CLOSED_ORDER_STATUSES, type OrderEvent, orderEventOf } from '../domain/order-state.js';
import type { CashierSessionRow } from '../domain/cashier-record.js';
import type { TransactionRow } from '../domain/transaction-record.js';
import type { UnitOfWork } from '../store/store.js';

export type OrderChangeOutcome =
  | { readonly kind: 'changed'; readonly session: CashierSessionRow }
  /** The table has no such move from the current status: nothing changes. */
  | { readonly kind: 'unchanged'; readonly session: CashierSessionRow }
  /** Someone else changed the order first; the caller re-reads and decides. */
  | { readonly kind: 'stale' };

export async function applyOrderEvent(
  tx: UnitOfWork,
  session: CashierSessionRow,
  event: OrderEvent,
  now_ms: number,
): Promise<OrderChangeOutcome> {
  if (!isOrderSession(session)) return { kind: 'unchanged', session };
  const to = nextOrderStatus(session, event, now_ms);
  if (to === null) return { kind: 'unchanged', session };
  const closed_at_ms = CLOSED_ORDER_STATUSES.has(to) ? (session.closed_at_ms ?? now_ms) : null;
  const patch = { order_status: to, closed_at_ms, updated_at_ms: now_ms };
  const changed = await tx.cashier.updateSessionIf(session.session_id, { order_status: session.order_status }, patch);
  if (!changed) return { kind: 'stale' };
  return { kind: 'changed', session: { ...session, ...patch } };
}

/**
 * Called by transitions/transaction.ts changeStatus, in its database transaction, when a transaction
 * made in a cashier session changed status: the order follows.
 */
export async function orderFollowsTransaction(tx: UnitOfWork, row: TransactionRow, now_ms: number): Promise<void> {
  if (!row.cashier_session_id) return;
  const event = orderEventOf(row.status);
  if (event === null) return;
  const session = await tx.cashier.lockSession(row.cashier_session_id);
  if (!session || !isOrderSession(session)) return;
  if ((event === 'transaction_failed' || event === 'transaction_cancelled') && session.order_status === 'authorized') {
    // Only the failure or void of the authorized transaction reopens or closes the order, not an unrelated attempt's.
    const others = await tx.cashier.listTransactions(session.session_id);
    if (others.some((t) => t.trace_id !== row.trace_id && t.status === 'authorized')) return;
  }
  // The session row is locked (PostgreSQL) or the transaction serialized (SQLite): the compare-and-set cannot go stale here.
  const outcome = await applyOrderEvent(tx, session, event, now_ms);
  if (outcome.kind === 'stale') throw new Error(`order of session ${session.session_id} changed under a lock`);
}

/** The time limit: a pending order past its expiry is closed as rejected. Used by due work and find-order. */
export async function expireOrder(tx: UnitOfWork, session: CashierSessionRow, now_ms: number): Promise<OrderChangeOutcome> {
  return applyOrderEvent(tx, session, 'time_limit', now_ms);
}
