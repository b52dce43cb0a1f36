// A transaction's statuses and the moves between them (spec §3.1), as pure data and rules. The
// one place that writes a status change is transitions/transaction.ts (changeStatus), which
// checks every change against these tables.
//
// Deposits (sale, refund), spec §3.1:
//
//   from            | to
//   ----------------+-------------------------------------------------------------
//   pending         | pending_async, authorized, approved, declined, rejected, error
//   pending_async   | approved, declined, rejected, cancelled, error
//   authorized      | approved, rejected, cancelled, error
//   approved        | chargeback, reversed, cancelled
//   declined, rejected, error, chargeback, reversed, cancelled: final
//
// Authorizations (transaction_type authorize, decisions §16): the processor's approval is
// `authorized` (funds held), the capture `approved`, the void (by the merchant, an agent or the
// expiry) `cancelled`; a captured authorization then lives like a sale:
//
//   from            | to
//   ----------------+-------------------------------------------------------------
//   pending         | pending_async, authorized, declined, rejected, error
//   pending_async   | authorized, declined, rejected, cancelled, error
//   authorized      | approved (captured), cancelled (voided), rejected, error
//   approved        | chargeback, reversed
//   declined, rejected, error, chargeback, reversed, cancelled: final
//
// Payouts, spec §3.1 (requested waits for an operator when the gateway holds payouts):
//
//   from            | to
//   ----------------+-------------------------------------------------------------
//   pending         | requested, pending_async, in progress, approved, declined, rejected, cancelled, error
//   requested       | authorized, rejected, cancelled
//   pending_async   | approved, rejected, cancelled, error
//   authorized      | in progress, approved, rejected, cancelled, error
//   in progress     | approved, rejected, error
//   approved        | reversed
//   declined, rejected, reversed, cancelled, error: final
//
// Every transaction is born `pending` (the idempotency reservation) before its processor is asked.

/** What a transaction is (spec §4): a deposit (a sale, an authorization, or a refund of either) or a payout. */
export const TRANSACTION_TYPES = ['sale', 'authorize', 'refund', 'payout'] as const;
export type TransactionType = (typeof TRANSACTION_TYPES)[number];

export type DepositStatus =
  'pending' | 'pending_async' | 'authorized' | 'approved' | 'declined' | 'rejected' | 'chargeback' | 'reversed' | 'cancelled' | 'error';
export type PayoutStatus =
  | 'pending'
  | 'requested'
  | 'pending_async'
  | 'authorized'
  | 'in progress'
  | 'approved'
  | 'declined'
  | 'rejected'
  | 'reversed'
  | 'cancelled'
  | 'error';
export type TransactionStatus = DepositStatus | PayoutStatus;

export function isTransactionStatus(value: string): value is TransactionStatus {
  return (TRANSACTION_STATUSES as readonly string[]).includes(value);
}

export function isTransactionType(value: string): value is TransactionType {
  return (TRANSACTION_TYPES as readonly string[]).includes(value);
}

export const DEPOSIT_TRANSITIONS: Readonly<Record<DepositStatus, readonly DepositStatus[]>> = {
  pending: ['pending_async', 'authorized', 'approved', 'declined', 'rejected', 'error'],
  pending_async: ['approved', 'declined', 'rejected', 'cancelled', 'error'],
  authorized: ['approved', 'rejected', 'cancelled', 'error'],
  approved: ['chargeback', 'reversed', 'cancelled'],
  declined: [],
  rejected: [],
  error: [],
  chargeback: [],
  reversed: [],
  cancelled: [],
};

export const PAYOUT_TRANSITIONS: Readonly<Record<PayoutStatus, readonly PayoutStatus[]>> = {
  pending: ['requested', 'pending_async', 'in progress', 'approved', 'declined', 'rejected', 'cancelled', 'error'],
  requested: ['authorized', 'rejected', 'cancelled'],
  pending_async: ['approved', 'rejected', 'cancelled', 'error'],
  authorized: ['in progress', 'approved', 'rejected', 'cancelled', 'error'],
  'in progress': ['approved', 'rejected', 'error'],
  approved: ['reversed'],
  declined: [],
  rejected: [],
  reversed: [],
  cancelled: [],
  error: [],
};

export const AUTHORIZE_TRANSITIONS: Readonly<Record<DepositStatus, readonly DepositStatus[]>> = {
  pending: ['pending_async', 'authorized', 'declined', 'rejected', 'error'],
  pending_async: ['authorized', 'declined', 'rejected', 'cancelled', 'error'],
  authorized: ['approved', 'cancelled', 'rejected', 'error'],
  approved: ['chargeback', 'reversed'],
  declined: [],
  rejected: [],
  error: [],
  chargeback: [],
  reversed: [],
  cancelled: [],
};

/**
 * The status a processor's final result gives a transaction: its approval is `authorized` for an
 * authorization (the funds are held, not taken) and `approved` for everything else. Every path
 * that applies a processor's result (its answer, a webhook, a lookup, a challenge, due work)
 * goes through here; the tables refuse an authorization moved straight to `approved`.
 */
export function statusForResult(transaction_type: TransactionType, result: 'approved' | 'rejected' | 'error'): TransactionStatus {
  if (result === 'approved') return transaction_type === 'authorize' ? 'authorized' : 'approved';
  return result;
}

/** A payment that took money: a sale, or an authorization once captured (refunds, chargebacks and reversals apply to these). */
export function isPayment(transaction_type: TransactionType): boolean {
  return transaction_type === 'sale' || transaction_type === 'authorize';
}

/** A card kept for later charges is named once its payment holds the money: an approved sale, an authorization authorized or captured. */
export function cardTokenShown(row: { readonly transaction_type: TransactionType; readonly status: TransactionStatus }): boolean {
  if (row.transaction_type === 'sale') return row.status === 'approved';
  return row.transaction_type === 'authorize' && (row.status === 'authorized' || row.status === 'approved');
}

/**
 * Every status of either table (their keys: each table is a Record over its status union, so no
 * status is left out), sorted; for reading a status that comes from outside (a query string, a
 * test's read) and for the notification schema.
 */
export const TRANSACTION_STATUSES: readonly TransactionStatus[] = [
  ...new Set([...Object.keys(DEPOSIT_TRANSITIONS), ...Object.keys(PAYOUT_TRANSITIONS)]),
].sort() as TransactionStatus[];

export const FINAL_STATUSES: ReadonlySet<string> = new Set<TransactionStatus>([
  'approved',
  'declined',
  'rejected',
  'chargeback',
  'reversed',
  'cancelled',
  'error',
]);

/** A refund reaching one of these gives its amount back to the sale's refund reservation. */
export const REFUND_RELEASING: ReadonlySet<string> = new Set<TransactionStatus>(['declined', 'rejected', 'error', 'cancelled', 'reversed']);

/** Takes any text, so that it also guards a status read from outside: an unknown one is never allowed. */
export function isTransitionAllowed(transaction_type: string, from: string, to: string): boolean {
  const table: Readonly<Record<string, readonly string[]>> =
    transaction_type === 'payout' ? PAYOUT_TRANSITIONS : transaction_type === 'authorize' ? AUTHORIZE_TRANSITIONS : DEPOSIT_TRANSITIONS;
  // Own keys only: a status named like an Object.prototype member ("constructor") is unknown, not a crash.
  return Object.prototype.hasOwnProperty.call(table, from) && table[from]!.includes(to);
}
