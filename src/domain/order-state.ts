// order_status (spec §3.3) of an order: a cashier session opened by init-checkout or
// init-pay-out-order (spec §2.4, docs/cashier.md). The table below as data, and the pure rules
// that read it; transitions/order.ts, the only place an order's status is written, checks every
// change against it.
//
//   from        | trigger                                              | condition                | to         | also
//   ------------+------------------------------------------------------+--------------------------+------------+----------------------------------
//   pending     | a transaction of the order becomes authorized        |                          | authorized | capture expected
//   pending     | a transaction of the order becomes approved          |                          | approved   | order closed: no further attempt
//   pending     | time limit (15 min after init) reached               | found by due work or     | rejected   | order closed: no further attempt
//               |                                                      | by find-order            |            |
//   authorized  | the authorized transaction becomes approved          |                          | approved   | order closed
//   authorized  | the authorized transaction is voided (cancelled)     |                          | rejected   | order closed: the merchant,
//               |                                                      |                          |            | an agent or the expiry decided
//   authorized  | the authorized transaction fails                     | before the time limit    | pending    | the customer may try again
//   authorized  | the authorized transaction fails                     | after the time limit     | rejected   | order closed
//   rejected    | a transaction still in flight at the time limit      | (spec §4.7: it may reach | approved   | late result; the money moved, so
//               | becomes approved                                     | its final status later)  |            | the order says so
//   approved    | (none)                                               |                          |            | final
//
// A failed attempt (declined, rejected, error, cancelled) while the order is pending changes
// nothing: the customer is offered another try until the order closes. An authorized order is
// not closed by the time limit: its capture is still expected. A void is not a failed attempt
// but a decision on the order (decisions §16: "a voided one counts as not approved"), so it
// closes the order at once; reopening it would let the customer pay again for an order the
// merchant has just cancelled.
import type { CashierSessionRow } from './cashier-record.js';
import type { TransactionStatus } from './transaction-state.js';

export type OrderStatus = 'pending' | 'authorized' | 'approved' | 'rejected';
export type OrderEvent = 'transaction_authorized' | 'transaction_approved' | 'transaction_cancelled' | 'transaction_failed' | 'time_limit';

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
  { from: 'authorized', event: 'transaction_cancelled', to: 'rejected' },
  { from: 'authorized', event: 'transaction_failed', when: before_limit, to: 'pending' },
  { from: 'authorized', event: 'transaction_failed', when: after_limit, to: 'rejected' },
  { from: 'rejected', event: 'transaction_approved', to: 'approved' },
];

/** Closed orders take no further attempt. */
export const CLOSED_ORDER_STATUSES: ReadonlySet<string> = new Set(['approved', 'rejected']);

/**
 * Spec §4.7's "declined": every status that ends an attempt without moving money. find-order
 * answers with the newest transaction not in it, else (a closed order) the newest.
 */
export const ATTEMPT_FAILED_STATUSES = ['declined', 'rejected', 'error', 'cancelled'] as const;

/** Transaction statuses that end an attempt without moving money (cancelled is its own event: below). */
const FAILED_TRANSACTION_STATUSES: ReadonlySet<string> = new Set(ATTEMPT_FAILED_STATUSES.filter((status) => status !== 'cancelled'));

export function isOrderSession(session: Pick<CashierSessionRow, 'kind'>): boolean {
  return session.kind === 'checkout' || session.kind === 'pay_out_order';
}

/** The status an event leads to from the session's current status, or null when the table has no such move. */
export function nextOrderStatus(session: CashierSessionRow, event: OrderEvent, now_ms: number): OrderStatus | null {
  const rule = ORDER_RULES.find(
    (r) => r.from === session.order_status && r.event === event && (r.when === undefined || r.when(session, now_ms)),
  );
  return rule ? rule.to : null;
}

/** The order event a transaction's new status is, if any. */
export function orderEventOf(status: TransactionStatus): OrderEvent | null {
  if (status === 'approved') return 'transaction_approved';
  if (status === 'authorized') return 'transaction_authorized';
  // From authorized, cancelled is a void; from pending_async, a customer who gave up a redirect:
  // a failed attempt, which the table's pending rows ignore like any other.
  if (status === 'cancelled') return 'transaction_cancelled';
  if (FAILED_TRANSACTION_STATUSES.has(status)) return 'transaction_failed';
  return null;
}
