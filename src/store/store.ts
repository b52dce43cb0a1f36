// The one interface domain code sees. Two implementations sit behind it (SQLite and
// PostgreSQL, both through Kysely in sql-store.ts); nothing outside store/ writes SQL.
import type {
  CardVaultRow, DueActionRow, GatewayRow, NewTransactionRow, NotificationRow, TransactionRow,
} from './schema.js';
import type { Insertable } from 'kysely';
import type { DueActionTable, NotificationAttemptTable, NotificationTable, StatusChangeTable } from './schema.js';

export type Dialect = 'sqlite' | 'postgres';

export interface MerchantRecord {
  readonly merchant_id: string;
  readonly secret_sealed: string;
  readonly applications: readonly string[];
  readonly frontends: readonly { readonly name: string; readonly currency: string }[];
  readonly gateways: readonly GatewayRow[];
}

export interface NewMerchant {
  readonly merchant_id: string;
  readonly secret_sealed: string;
  readonly applications: readonly string[];
  readonly frontends: readonly { readonly name: string; readonly currency: string }[];
  readonly gateways: readonly Omit<GatewayRow, 'merchant_id' | 'created_at_ms'>[];
  readonly created_at_ms: number;
}

export type TransactionPatch = Partial<Omit<TransactionRow, 'trace_id' | 'merchant_id' | 'transaction_type' | 'order_id'>>;

/** Operations available both inside a database transaction and outside one (autocommit). */
export interface StoreOps {
  // Merchants
  insertMerchant(merchant: NewMerchant): Promise<'created' | 'exists'>;
  getMerchant(merchant_id: string): Promise<MerchantRecord | null>;
  countMerchants(): Promise<number>;

  // Transactions
  /** Inserts unless the idempotency key exists; null means another row holds the key. */
  insertTransactionIfAbsent(row: NewTransactionRow): Promise<number | null>;
  findTransactionByKey(merchant_id: string, transaction_type: string, order_id: string): Promise<TransactionRow | null>;
  getTransaction(trace_id: number): Promise<TransactionRow | null>;
  /** Row lock (FOR UPDATE) on PostgreSQL; SQLite transactions are already serialized. */
  lockTransaction(trace_id: number): Promise<TransactionRow | null>;
  findTransactionByChallenge(challenge_token_hash: string): Promise<TransactionRow | null>;
  /** Changes the row only if its status is still `from_status`: the state machine's compare-and-set. */
  updateTransactionIfStatus(trace_id: number, from_status: string, patch: TransactionPatch): Promise<boolean>;
  updateTransaction(trace_id: number, patch: TransactionPatch): Promise<void>;
  /** Adds to a sale's refund reservation only while it stays within the sale amount. */
  reserveRefund(sale_trace_id: number, amount_minor: number): Promise<boolean>;
  releaseRefund(sale_trace_id: number, amount_minor: number): Promise<void>;
  insertStatusChange(row: Insertable<StatusChangeTable>): Promise<void>;
  listStatusChanges(trace_id: number): Promise<{ from_status: string; to_status: string; reason: string; at_ms: number }[]>;

  // Due work (asynchronous outcomes and time-outs), found from the database after any restart
  insertDueAction(row: Insertable<DueActionTable>): Promise<void>;
  /** Due actions not yet done; on PostgreSQL locked with SKIP LOCKED so instances share the work. */
  claimDueActions(now_ms: number, limit: number): Promise<DueActionRow[]>;
  markDueActionDone(id: number): Promise<void>;
  /** Transactions reserved but never finished (the process died during the processor call). */
  findStuckTransactions(older_than_ms: number, limit: number): Promise<TransactionRow[]>;

  // Notifications outbox
  insertNotification(row: Insertable<NotificationTable>): Promise<number>;
  listNotifications(trace_id: number): Promise<NotificationRow[]>;
  /** Leases due notifications to one owner; no other owner gets them until the lease ends. */
  leaseNotifications(now_ms: number, limit: number, lease_ms: number, owner: string): Promise<NotificationRow[]>;
  finishNotificationAttempt(
    notification_id: number,
    owner: string,
    patch: Pick<NotificationRow, 'state' | 'next_attempt_at_ms' | 'last_error'> & { attempts: number },
    attempt: Insertable<NotificationAttemptTable>,
    now_ms: number,
  ): Promise<boolean>;
  listNotificationAttempts(notification_id: number): Promise<Insertable<NotificationAttemptTable>[]>;
  getNotification(id: number): Promise<NotificationRow | null>;
  rescheduleNotification(id: number, next_attempt_at_ms: number, now_ms: number): Promise<boolean>;

  // Card vault
  insertCardIfAbsent(row: CardVaultRow): Promise<void>;
  findCard(merchant_id: string, pin: string, pan_fingerprint: string, card_exp: string): Promise<CardVaultRow | null>;
  getCard(merchant_id: string, card_token: string): Promise<CardVaultRow | null>;

  // Sandbox clock, shared by instances on one database
  getSandboxOffset(): Promise<number>;
  setSandboxOffset(offset_ms: number): Promise<void>;
}

export interface Store extends StoreOps {
  readonly dialect: Dialect;
  migrate(): Promise<void>;
  /** Throws when the database cannot be reached. */
  ping(): Promise<void>;
  close(): Promise<void>;
  /** Runs `work` in one database transaction: all of it commits durably, or none of it. */
  transaction<T>(work: (tx: StoreOps) => Promise<T>): Promise<T>;
}
