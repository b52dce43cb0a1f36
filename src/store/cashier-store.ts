// The hosted cashier aggregate: sessions (and the orders they carry), their one-time tokens and
// the customers the cashier remembers.
import type { CashierCustomerRow, CashierSessionRow, CashierTokenRow, NewCashierSessionRow, TransactionRow } from './schema.js';

export type OrderSummary = Pick<
  CashierSessionRow,
  'session_id' | 'kind' | 'identity_kind' | 'identity_value' | 'order_status' | 'expires_at_ms'
>;

export type OrderRead = {
  readonly summary: OrderSummary;
  /** Null for a pending order, and for a closed one without transactions. */
  readonly leading: TransactionRow | null;
};

export type CashierSessionPatch = Partial<
  Pick<CashierSessionRow, 'order_status' | 'closed_at_ms' | 'attempts' | 'claim_until_ms' | 'updated_at_ms'>
>;

export type CashierSessionExpectation = Partial<Pick<CashierSessionRow, 'order_status' | 'attempts'>>;

export interface CashierStore {
  /** 'exists' when the merchant already has a session with this order_id (order sessions). */
  insertSession(row: NewCashierSessionRow): Promise<'created' | 'exists'>;
  getSession(session_id: string): Promise<CashierSessionRow | null>;
  /** Row lock (FOR UPDATE) on PostgreSQL; SQLite transactions are already serialized. */
  lockSession(session_id: string): Promise<CashierSessionRow | null>;
  findSessionByOrder(merchant_id: string, order_id: string): Promise<CashierSessionRow | null>;
  /**
   * What find-order answers from, in one statement: the session's columns it decides on (half the
   * cost of the whole row on SQLite) and, unless the order is pending, its leading transaction:
   * the newest that did not fail (declined, rejected, error, cancelled), else the newest. A
   * pending order reads none: the merchant polling it is answered "still open" from the summary.
   */
  findOrderRead(merchant_id: string, order_id: string): Promise<OrderRead | null>;
  findSessionByAuthToken(auth_token_hash: string): Promise<CashierSessionRow | null>;
  /** Compare-and-set: changes the row only while every `expected` column still has its value. */
  updateSessionIf(session_id: string, expected: CashierSessionExpectation, patch: CashierSessionPatch): Promise<boolean>;
  insertToken(row: CashierTokenRow): Promise<void>;
  findToken(token_hash: string): Promise<CashierTokenRow | null>;
  /** Marks a one-time token used; false when it was used already or has expired. */
  useToken(token_hash: string, now_ms: number): Promise<boolean>;
  /** The session's transactions, oldest first (by created_at_ms, then the order they were inserted in). */
  listTransactions(session_id: string): Promise<TransactionRow[]>;
  /** Orders still pending whose time limit has passed; on PostgreSQL locked with SKIP LOCKED. */
  claimExpiredOrders(now_ms: number, limit: number): Promise<CashierSessionRow[]>;
  getCustomer(merchant_id: string, pin: string): Promise<CashierCustomerRow | null>;
  upsertCustomer(row: CashierCustomerRow): Promise<void>;
}
