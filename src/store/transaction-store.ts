// The transactions aggregate: a transaction, its status history (status_changes) and its due
// actions (expiries, settlements, processor look-ups), and the searches the back office runs
// over them. Status changes go through the state machine (transitions/transaction.ts), which
// uses changeStatus / updateIfStatus as its compare-and-set.
import type { Insertable } from 'kysely';
import type {
  DueActionRow,
  DueActionTable,
  NewTransactionRow,
  NotificationTable,
  StatusChangeRow,
  StatusChangeTable,
  TransactionRow,
} from './schema.js';
import type { ActivityRow } from '../domain/overview.js';
import type { TransactionPageKey, TransactionSearch } from '../domain/transaction-search.js';
import type { TransactionStatus, TransactionType } from '../domain/transaction-state.js';

export type { ActivityRow, TransactionPageKey, TransactionSearch };

export type TransactionPatch = Partial<Omit<TransactionRow, 'trace_id' | 'merchant_id' | 'transaction_type' | 'order_id'>>;

/** What reserveOrHolder did: the row inserted, or the key's holder (a replay, a duplicate or a request in flight). */
export type ReserveOrHolder =
  { readonly kind: 'inserted'; readonly row: TransactionRow } | { readonly kind: 'taken'; readonly holder: TransactionRow | null };

export interface TransactionStore {
  /** Inserts unless the idempotency key exists; null means another row holds the key. */
  insertIfAbsent(row: NewTransactionRow): Promise<number | null>;
  /**
   * insertTransactionIfAbsent answering the inserted row as stored: RETURNING on PostgreSQL (no
   * second round trip); on SQLite, where RETURNING costs more than the insert, the row as the
   * insert wrote it with the columns' defaults (schema.ts TRANSACTION_COLUMN_DEFAULTS). One
   * statement on both, so atomic also outside a transaction.
   */
  reserve(row: NewTransactionRow): Promise<TransactionRow | null>;
  /**
   * reserveTransaction and the row's first status change ('' → its status, at created_at_ms) as
   * one atomic step, also outside a transaction: on PostgreSQL one statement (a data-modifying
   * CTE, one round trip instead of BEGIN, two INSERTs and COMMIT), on SQLite one transaction.
   */
  reserveWithChange(row: NewTransactionRow, reason: string): Promise<TransactionRow | null>;
  /**
   * reserveWithChange for a request with nothing to check first, answering the row that holds the
   * idempotency key when it is taken (null if that row could not be read): on PostgreSQL the one
   * statement answers either (no look-up before it: one round trip a sale saved), on SQLite the key
   * is looked up first, so a replay writes nothing (a write waits for the writer and its fsync),
   * except inside a transaction, which holds the writer already.
   */
  reserveOrHolder(row: NewTransactionRow, reason: string): Promise<ReserveOrHolder>;
  findByKey(merchant_id: string, transaction_type: TransactionType, order_id: string): Promise<TransactionRow | null>;
  get(trace_id: number): Promise<TransactionRow | null>;
  /** Row lock (FOR UPDATE) on PostgreSQL; SQLite transactions are already serialized. */
  lock(trace_id: number): Promise<TransactionRow | null>;
  findByChallenge(challenge_token_hash: string): Promise<TransactionRow | null>;
  /** A live processor's transaction by its id there (webhooks); never a sandbox one (transactions_psp). */
  findByPspId(gateway_id: string, psp_transaction_id: string): Promise<TransactionRow | null>;
  /** The latest cascade attempt of a merchant's request (its highest cascade_level), or null. */
  latestCascadeAttempt(root_trace_id: number): Promise<TransactionRow | null>;
  /** Oldest first (by created_at_ms, then trace_id), from after `after` on (null: from the oldest). */
  listPayoutsByStatus(status: TransactionStatus, after: TransactionPageKey | null, limit: number): Promise<TransactionRow[]>;
  /** Changes the row only if its status is still `from_status`: the state machine's compare-and-set. */
  updateIfStatus(trace_id: number, from_status: TransactionStatus, patch: TransactionPatch): Promise<boolean>;
  update(trace_id: number, patch: TransactionPatch): Promise<void>;
  /**
   * updateTransactionIfStatus to `patch.status` and, only if it changed the row, the status_changes
   * row from `from_status` with `reason` at `at_ms` and the `notification` (if any) of the change:
   * one statement on PostgreSQL (a data-modifying CTE), two or three on SQLite. Atomic on its
   * own: in the caller's transaction (the state machine's), or outside one in a transaction of
   * its own on SQLite; false when the status was no longer `from_status`, and then nothing is
   * written.
   */
  changeStatus(
    trace_id: number,
    from_status: TransactionStatus,
    patch: TransactionPatch & { status: TransactionStatus },
    reason: string,
    at_ms: number,
    notification?: Insertable<NotificationTable> | null,
  ): Promise<boolean>;
  /** Adds to a sale's refund reservation only while it stays within the sale amount. */
  reserveRefund(sale_trace_id: number, amount_minor: number): Promise<boolean>;
  releaseRefund(sale_trace_id: number, amount_minor: number): Promise<void>;
  insertStatusChange(row: Insertable<StatusChangeTable>): Promise<void>;
  listStatusChanges(trace_id: number): Promise<Pick<StatusChangeRow, 'from_status' | 'to_status' | 'reason' | 'at_ms'>[]>;
  insertDueAction(row: Insertable<DueActionTable>): Promise<void>;
  /** Due actions not yet done; on PostgreSQL locked with SKIP LOCKED so instances share the work. */
  claimDueActions(now_ms: number, limit: number): Promise<DueActionRow[]>;
  markDueActionDone(id: number): Promise<void>;
  /**
   * Moves a due action to due_at_ms and counts one more attempt: a processor_lookup is put off
   * like a lease while the processor is asked outside any transaction, then again when it
   * must ask later.
   */
  deferDueAction(id: number, due_at_ms: number): Promise<void>;
  /** Transactions reserved but never finished (the process died during the processor call). */
  findStuck(older_than_ms: number, limit: number): Promise<TransactionRow[]>;
  /** Payouts `in progress` since before `older_than_ms` with no processor answer recorded (no psp_transaction_id). */
  findInterruptedPayouts(older_than_ms: number, limit: number): Promise<TransactionRow[]>;
  /**
   * Newest first (by created_at_ms, then trace_id: trace_ids are drawn at random), from below
   * `before` (null: from the newest), at most `limit`.
   */
  search(search: TransactionSearch, before: TransactionPageKey | null, limit: number): Promise<TransactionRow[]>;
  /** The refunds of a sale (reference_id), oldest first (created_at_ms, then trace_id), at most `limit`. */
  listRefundsOf(sale_trace_id: number, limit: number): Promise<TransactionRow[]>;
  /** Every attempt of a cascade: the merchant's request (root) and its retries, by level. */
  listCascade(root_trace_id: number, limit: number): Promise<TransactionRow[]>;
  /** Sums per day, type, status and currency of the transactions created since `since_ms`. */
  activitySince(merchant_id: string | null, since_ms: number): Promise<ActivityRow[]>;
  /** Transactions of one type in one status (payouts waiting for a decision). */
  countByStatus(merchant_id: string | null, transaction_type: TransactionType, status: TransactionStatus): Promise<number>;
}
