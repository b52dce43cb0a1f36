// The hosted cashier aggregate over Kysely (cashier-store.ts): sessions and the orders they carry,
// their one-time tokens and the customers the cashier remembers. find-order's read is one
// statement of fixed text (sql-text.ts): the session's summary and the order's leading transaction.
import type { CashierCustomerRow, CashierSessionRow, CashierTokenRow, NewCashierSessionRow, TransactionRow } from '../schema.js';
import type { CashierSessionExpectation, CashierSessionPatch, CashierStore, OrderRead, OrderSummary } from '../cashier-store.js';
import { ATTEMPT_FAILED_STATUSES } from '../../domain/order-state.js';
import type { Executor, SqlContext } from './context.js';
import { claimSkippingLocked, lockForUpdate } from './dialect.js';

const ORDER_SUMMARY_COLUMNS = [
  'session_id',
  'kind',
  'identity_kind',
  'identity_value',
  'order_status',
  'expires_at_ms',
] as const satisfies readonly (keyof OrderSummary)[];

const FAILED_LIST = ATTEMPT_FAILED_STATUSES.map((status) => `'${status}'`).join(', ');

/**
 * find-order's one statement (cashier-store.ts findOrderRead): the summary's columns under an s_
 * prefix, so that no column of the transaction's row shadows them, and the leading transaction's
 * row, joined only when the order is not pending. Newest first, as listTransactions orders them:
 * rows of one millisecond go by their first status change's id.
 */
const ORDER_READ_SQL =
  `select ${ORDER_SUMMARY_COLUMNS.map((column) => `s.${column} as s_${column}`).join(', ')}, t.* ` +
  'from cashier_sessions s left join transactions t on s.order_status <> ' +
  "'pending' and t.trace_id = (select l.trace_id from transactions l where l.cashier_session_id = s.session_id " +
  `order by case when l.status in (${FAILED_LIST}) then 1 else 0 end, l.created_at_ms desc, ` +
  'coalesce((select min(c.id) from status_changes c where c.trace_id = l.trace_id), 0) desc, l.trace_id desc limit 1) ' +
  'where s.merchant_id = ? and s.order_id = ?';

export class SqlCashierStore implements CashierStore {
  private readonly db: Executor;

  constructor(private readonly ctx: SqlContext) {
    this.db = ctx.db;
  }

  async insertSession(row: NewCashierSessionRow): Promise<'created' | 'exists'> {
    const inserted = await this.db
      .insertInto('cashier_sessions')
      .values(row)
      .onConflict((oc) => oc.columns(['merchant_id', 'order_id']).doNothing())
      .returning('session_id')
      .executeTakeFirst();
    return inserted ? 'created' : 'exists';
  }

  async getSession(session_id: string): Promise<CashierSessionRow | null> {
    const [row] = await this.ctx.rows<CashierSessionRow>(this.ctx.text.selectAll('cashier_sessions', { session_id }));
    return row ?? null;
  }

  async lockSession(session_id: string): Promise<CashierSessionRow | null> {
    const query = lockForUpdate(this.ctx.dialect, this.db.selectFrom('cashier_sessions').selectAll().where('session_id', '=', session_id));
    return (await query.executeTakeFirst()) ?? null;
  }

  async findSessionByOrder(merchant_id: string, order_id: string): Promise<CashierSessionRow | null> {
    const [row] = await this.ctx.rows<CashierSessionRow>(this.ctx.text.selectAll('cashier_sessions', { merchant_id, order_id }));
    return row ?? null;
  }

  async findOrderRead(merchant_id: string, order_id: string): Promise<OrderRead | null> {
    const [row] = await this.ctx.rows<Record<string, unknown>>(
      this.ctx.text.fixed('cashier_order_read', ORDER_READ_SQL, null, [merchant_id, order_id]),
    );
    if (row === undefined) return null;
    const summary = {} as Record<string, unknown>;
    for (const column of ORDER_SUMMARY_COLUMNS) {
      summary[column] = row[`s_${column}`];
      delete row[`s_${column}`];
    }
    return { summary: summary as OrderSummary, leading: row.trace_id === null ? null : (row as TransactionRow) };
  }

  async findSessionByAuthToken(auth_token_hash: string): Promise<CashierSessionRow | null> {
    return (
      (await this.db.selectFrom('cashier_sessions').selectAll().where('auth_token_hash', '=', auth_token_hash).executeTakeFirst()) ?? null
    );
  }

  async updateSessionIf(session_id: string, expected: CashierSessionExpectation, patch: CashierSessionPatch): Promise<boolean> {
    let query = this.db.updateTable('cashier_sessions').set(patch).where('session_id', '=', session_id);
    if (expected.order_status !== undefined) {
      query =
        expected.order_status === null ? query.where('order_status', 'is', null) : query.where('order_status', '=', expected.order_status);
    }
    if (expected.attempts !== undefined) query = query.where('attempts', '=', expected.attempts);
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async insertToken(row: CashierTokenRow): Promise<void> {
    await this.db.insertInto('cashier_tokens').values(row).execute();
  }

  async findToken(token_hash: string): Promise<CashierTokenRow | null> {
    return (await this.db.selectFrom('cashier_tokens').selectAll().where('token_hash', '=', token_hash).executeTakeFirst()) ?? null;
  }

  async useToken(token_hash: string, now_ms: number): Promise<boolean> {
    const result = await this.db
      .updateTable('cashier_tokens')
      .set({ used_at_ms: now_ms })
      .where('token_hash', '=', token_hash)
      .where('used_at_ms', 'is', null)
      .where('expires_at_ms', '>', now_ms)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async listTransactions(session_id: string): Promise<TransactionRow[]> {
    // Oldest first, exactly: trace_ids are drawn at random, and a declined attempt and the cascade
    // attempt that follows it may share a millisecond, so rows of one millisecond go by their
    // first status change, whose id the database hands out in order in the row's own insert.
    return this.ctx.rows<TransactionRow>(
      this.ctx.text.fixed(
        'cashier_session_transactions',
        'select t.* from transactions t where t.cashier_session_id = ? order by t.created_at_ms, ' +
          'coalesce((select min(s.id) from status_changes s where s.trace_id = t.trace_id), 0), t.trace_id',
        null,
        [session_id],
      ),
    );
  }

  async claimExpiredOrders(now_ms: number, limit: number): Promise<CashierSessionRow[]> {
    return claimSkippingLocked(
      this.ctx.dialect,
      this.db
        .selectFrom('cashier_sessions')
        .selectAll()
        .where('order_status', '=', 'pending')
        .where('expires_at_ms', '<=', now_ms)
        .orderBy('expires_at_ms')
        .limit(limit),
    ).execute();
  }

  async getCustomer(merchant_id: string, pin: string): Promise<CashierCustomerRow | null> {
    return (
      (await this.db
        .selectFrom('cashier_customers')
        .selectAll()
        .where('merchant_id', '=', merchant_id)
        .where('pin', '=', pin)
        .executeTakeFirst()) ?? null
    );
  }

  async upsertCustomer(row: CashierCustomerRow): Promise<void> {
    await this.db
      .insertInto('cashier_customers')
      .values(row)
      .onConflict((oc) =>
        oc.columns(['merchant_id', 'pin']).doUpdateSet({ profile_sealed: row.profile_sealed, updated_at_ms: row.updated_at_ms }),
      )
      .execute();
  }
}
