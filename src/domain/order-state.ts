// order_status (spec §3.3) of an order: a cashier session opened by init-checkout or
// init-pay-out-order (spec §2.4, docs/cashier.md). The only place an order's status changes.
// Every change is checked against the table below and written with compare-and-set, inside the
// caller's database transaction (a transaction's status change and the order's move together).
//
//   from        | trigger                                              | condition                | to         | also
//   ------------+------------------------------------------------------+--------------------------+------------+----------------------------------
//   pending     | a transaction of the order becomes authorized        |                          | authorized | capture expected
//   pending     | a transaction of the order becomes approved          |                          | approved   | order closed: no further attempt
//   pending     | time limit (15 min after init) reached               | found by due work or     | rejected   | order closed: no further attempt
//               |                                                      | by find-order            |            |
//   authorized  | the authorized transaction becomes approved          |                          | approved   | order closed
//   authorized  | the authorized transaction fails                     | before the time limit    | pending    | the customer may try again
//   authorized  | the authorized transaction fails                     | after the time limit     | rejected   | order closed
//   rejected    | a transaction still in flight at the time limit      | (spec §4.7: it may reach | approved   | late result; the money moved, so
//               | becomes approved                                     | its final status later)  |            | the order says so
//   approved    | (none)                                               |                          |            | final
//
// A failed attempt (declined, rejected, error, cancelled) while the order is pending changes
// nothing: the customer is offered another try until the order closes. An authorized order is
// not closed by the time limit: its capture is still expected.
import type { CashierSessionRow, TransactionRow } from '../store/schema.js';
import type { StoreOps } from '../store/store.js';

export type OrderStatus = 'pending' | 'authorized' | 'approved' | 'rejected';
export type OrderEvent = 'transaction_authorized' | 'transaction_approved' | 'transaction_failed' | 'time_limit';

interface OrderRule {
  readonly from: OrderStatus;
  readonly event: OrderEvent;
  /** When present, the rule applies only if it holds ("before/after the time limit"). */
  readonly when?: (session: CashierSessionRow, now_ms: number) => boolean;
  readonly to: OrderStatus;
}

const before_limit = (session: CashierSessionRow, now_ms: number) => now_ms < session.expires_at_ms;
const after_limit = (session: CashierSessionRow, now_ms: number) => now_ms >= session.expires_at_ms;

/** The table above, as data: the first rule matching (from, event, condition) wins. */
export const ORDER_RULES: readonly OrderRule[] = [
  { from: 'pending', event: 'transaction_authorized', to: 'authorized' },
  { from: 'pending', event: 'transaction_approved', to: 'approved' },
  { from: 'pending', event: 'time_limit', when: after_limit, to: 'rejected' },
  { from: 'authorized', event: 'transaction_approved', to: 'approved' },
  { from: 'authorized', event: 'transaction_failed', when: before_limit, to: 'pending' },
  { from: 'authorized', event: 'transaction_failed', when: after_limit, to: 'rejected' },
  { from: 'rejected', event: 'transaction_approved', to: 'approved' },
];

/** Closed orders take no further attempt. */
export const CLOSED_ORDER_STATUSES: ReadonlySet<string> = new Set(['approved', 'rejected']);

/** Transaction statuses that end an attempt without moving money. */
const FAILED_TRANSACTION: ReadonlySet<string> = new Set(['declined', 'rejected', 'error', 'cancelled']);

export function isOrderSession(session: Pick<CashierSessionRow, 'kind'>): boolean {
  return session.kind === 'checkout' || session.kind === 'pay_out_order';
}

/** The status an event leads to from the session's current status, or null when the table has no such move. */
export function nextOrderStatus(session: CashierSessionRow, event: OrderEvent, now_ms: number): OrderStatus | null {
  const rule = ORDER_RULES.find((r) => r.from === session.order_status && r.event === event && (r.when === undefined || r.when(session, now_ms)));
  return rule ? rule.to : null;
}

export type OrderChangeOutcome =
  | { readonly kind: 'changed'; readonly session: CashierSessionRow }
  /** The table has no such move from the current status: nothing changes. */
  | { readonly kind: 'unchanged'; readonly session: CashierSessionRow }
  /** Someone else changed the order first; the caller re-reads and decides. */
  | { readonly kind: 'stale' };

export async function applyOrderEvent(tx: StoreOps, session: CashierSessionRow, event: OrderEvent, now_ms: number): Promise<OrderChangeOutcome> {
  if (!isOrderSession(session)) return { kind: 'unchanged', session };
  const to = nextOrderStatus(session, event, now_ms);
  if (to === null) return { kind: 'unchanged', session };
  const closed_at_ms = CLOSED_ORDER_STATUSES.has(to) ? (session.closed_at_ms ?? now_ms) : null;
  const patch = { order_status: to, closed_at_ms, updated_at_ms: now_ms };
  const changed = await tx.updateCashierSessionIf(session.session_id, { order_status: session.order_status }, patch);
  if (!changed) return { kind: 'stale' };
  return { kind: 'changed', session: { ...session, ...patch } };
}

function eventOf(status: string): OrderEvent | null {
  if (status === 'approved') return 'transaction_approved';
  if (status === 'authorized') return 'transaction_authorized';
  if (FAILED_TRANSACTION.has(status)) return 'transaction_failed';
  return null;
}

/**
 * Called by transaction-state.ts changeStatus, in its database transaction, when a transaction
 * made in a cashier session changed status: the order follows.
 */
export async function orderFollowsTransaction(tx: StoreOps, row: TransactionRow, now_ms: number): Promise<void> {
  if (!row.cashier_session_id) return;
  const event = eventOf(row.status);
  if (event === null) return;
  const session = await tx.lockCashierSession(row.cashier_session_id);
  if (!session || !isOrderSession(session)) return;
  if (event === 'transaction_failed' && session.order_status === 'authorized') {
    // Only the failure of the authorized transaction reopens or closes the order, not an unrelated attempt's.
    const others = await tx.listCashierTransactions(session.session_id);
    if (others.some((t) => t.trace_id !== row.trace_id && t.status === 'authorized')) return;
  }
  // The session row is locked (PostgreSQL) or the transaction serialized (SQLite): the compare-and-set cannot go stale here.
  const outcome = await applyOrderEvent(tx, session, event, now_ms);
  if (outcome.kind === 'stale') throw new Error(`order of session ${session.session_id} changed under a lock`);
}

/** The time limit: a pending order past its expiry is closed as rejected. Used by due work and find-order. */
export async function expireOrder(tx: StoreOps, session: CashierSessionRow, now_ms: number): Promise<OrderChangeOutcome> {
  return applyOrderEvent(tx, session, 'time_limit', now_ms);
}
