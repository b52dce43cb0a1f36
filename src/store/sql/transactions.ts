// The transactions aggregate over Kysely (transaction-store.ts): a transaction, its status
// history and due actions, and the back office's searches over them. Reserve, key look-ups and
// the status change are on the path of every sale: hot SQL text (sql-text.ts), and on
// PostgreSQL data-modifying CTEs that save round trips (sql/dialect.ts).
import { CompiledQuery, type Insertable, sql } from 'kysely';
import type { DueActionTable, NewTransactionRow, NotificationTable, StatusChangeTable, TransactionRow } from '../schema.js';
import { TRANSACTION_COLUMN_DEFAULTS } from '../schema.js'; // a value, beside the types above
import type {
  ActivityRow,
  ReserveOrHolder,
  TransactionPageKey,
  TransactionPatch,
  TransactionSearch,
  TransactionStore,
} from '../transaction-store.js';
import type { TransactionStatus, TransactionType } from '../../domain/transaction-state.js';
import type { Executor, SqlContext } from './context.js';
import {
  claimSkippingLocked,
  hasDataModifyingCtes,
  ID_TAKEN,
  insertedOrKeyHolder,
  insertUnlessKeyTaken,
  lockForUpdate,
  sqliteOwnTransaction,
} from './dialect.js';
import { withFreshTraceId } from './fresh-trace-id.js';
import { notificationInsertFrom, type SqlNotificationStore, SUPERSEDED_REASON } from './notifications.js';

/** Transaction columns of the idempotency key (unique index transactions_idempotency). */
const TRANSACTION_KEY = ['merchant_id', 'transaction_type', 'order_id'] as const;

const DAY_MS = 86_400_000;

/**
 * A row as an INSERT of `row` stores it under `trace_id`, without reading it back: on SQLite (the
 * read cost a sale 19 µs, measured), which stores a bound value as given, so the row's types are
 * those of its columns (NewTransactionRow); and for the held writes of sql/held-writes.ts.
 */
export function insertedTransactionRow(row: NewTransactionRow, trace_id: number): TransactionRow {
  const stored: Record<string, unknown> = Object.assign({}, TRANSACTION_COLUMN_DEFAULTS);
  for (const column in row) {
    const value = row[column as keyof NewTransactionRow];
    if (value !== undefined) stored[column] = value;
  }
  stored.trace_id = trace_id;
  return stored as unknown as TransactionRow;
}

/**
 * The scans of transactions that partial indexes serve (migration 0009), apart so that a test
 * reads their plans. The index's own terms are literals here (status = 'pending',
 * transaction_type = 'payout'): a planner matches a partial index's WHERE against literal terms
 * of the query, never against a parameter.
 */
export const transactionScans = {
  /** Pending with no answer, older than the given time, oldest first: a request that died before finishing (transactions_pending_created). */
  stuck: (db: Executor, older_than_ms: number, limit: number) =>
    db
      .selectFrom('transactions')
      .selectAll()
      .where('status', '=', sql.lit('pending'))
      .where('answer_json', 'is', null)
      .where('created_at_ms', '<', older_than_ms)
      .orderBy('created_at_ms')
      .orderBy('trace_id')
      .limit(limit),
  /** Payouts left `in progress` without a processor reference, oldest first (transactions_payouts_created). */
  interruptedPayouts: (db: Executor, older_than_ms: number, limit: number) =>
    db
      .selectFrom('transactions')
      .selectAll()
      .where('transaction_type', '=', sql.lit('payout'))
      .where('status', '=', 'in progress')
      .where('psp_transaction_id', 'is', null)
      .where('updated_at_ms', '<', older_than_ms)
      .orderBy('created_at_ms')
      .orderBy('trace_id')
      .limit(limit),
  /** A live processor's transaction by its id there (transactions_psp: never the sandbox's). */
  byPspId: (db: Executor, gateway_id: string, psp_transaction_id: string) =>
    db
      .selectFrom('transactions')
      .selectAll()
      .where('gateway_id', '=', gateway_id)
      .where('psp_transaction_id', '=', psp_transaction_id)
      .where('psp_transaction_id', 'is not', null)
      .where('payment_processor', '<>', sql.lit('sandbox'))
      .orderBy('created_at_ms')
      .orderBy('trace_id')
      .limit(1),
  /** The operator's payout list, oldest first, a page from after `after` on (null: the first) (transactions_payouts_created). */
  payoutsByStatus: (db: Executor, status: TransactionStatus, after: TransactionPageKey | null, limit: number) => {
    let query = db.selectFrom('transactions').selectAll().where('transaction_type', '=', sql.lit('payout')).where('status', '=', status);
    if (after !== null)
      query = query.where((eb) => eb(eb.refTuple('created_at_ms', 'trace_id'), '>', eb.tuple(after.created_at_ms, after.trace_id)));
    return query.orderBy('created_at_ms').orderBy('trace_id').limit(limit);
  },
  /**
   * The back office's search, newest first, a page from below `before` on (null: the newest). trace_ids are
   * drawn at random (domain/trace-id.ts): newest first is by creation time, the trace_id only telling
   * apart rows of one millisecond (transactions_merchant_created, transactions_created_trace).
   */
  search: (db: Executor, search: TransactionSearch, before: TransactionPageKey | null, limit: number) => {
    let query = db.selectFrom('transactions').selectAll();
    if (search.merchant_id !== null) query = query.where('merchant_id', '=', search.merchant_id);
    if (before !== null)
      query = query.where((eb) => eb(eb.refTuple('created_at_ms', 'trace_id'), '<', eb.tuple(before.created_at_ms, before.trace_id)));
    if (search.trace_id !== undefined) query = query.where('trace_id', '=', search.trace_id);
    if (search.order_id !== undefined) {
      const order_id = search.order_id;
      query = query.where((eb) => eb.or([eb('order_id', '=', order_id), eb('cashier_order_id', '=', order_id)]));
    }
    if (search.pin !== undefined) query = query.where('pin', '=', search.pin);
    if (search.status !== undefined) query = query.where('status', '=', search.status);
    if (search.transaction_type !== undefined) query = query.where('transaction_type', '=', search.transaction_type);
    if (search.gateway_id !== undefined) query = query.where('gateway_id', '=', search.gateway_id);
    if (search.created_from_ms !== undefined) query = query.where('created_at_ms', '>=', search.created_from_ms);
    if (search.created_before_ms !== undefined) query = query.where('created_at_ms', '<', search.created_before_ms);
    if (search.currency !== undefined) query = query.where('currency', '=', search.currency);
    if (search.amount_min_minor !== undefined) query = query.where('amount_minor', '>=', search.amount_min_minor);
    if (search.amount_max_minor !== undefined) query = query.where('amount_minor', '<=', search.amount_max_minor);
    return query.orderBy('created_at_ms', 'desc').orderBy('trace_id', 'desc').limit(limit);
  },
};

export class SqlTransactionStore implements TransactionStore {
  private readonly db: Executor;

  /** `notifications` is the same unit of work's: a status change may write its notification. */
  constructor(
    private readonly ctx: SqlContext,
    private readonly notifications: SqlNotificationStore,
  ) {
    this.db = ctx.db;
  }

  async insertIfAbsent(row: NewTransactionRow): Promise<number | null> {
    return (await this.reserve(row))?.trace_id ?? null;
  }

  async reserve(row: NewTransactionRow): Promise<TransactionRow | null> {
    return withFreshTraceId(this.ctx.trace_ids, (trace_id) =>
      insertUnlessKeyTaken(this.ctx, 'transactions', { ...row, trace_id }, 'trace_id', TRANSACTION_KEY, () =>
        insertedTransactionRow(row, trace_id),
      ),
    );
  }

  async reserveWithChange(row: NewTransactionRow, reason: string): Promise<TransactionRow | null> {
    // Atomic on its own (transaction-store.ts): one statement on PostgreSQL, a transaction on SQLite.
    const own_transaction = sqliteOwnTransaction(this.ctx);
    if (own_transaction) return own_transaction((tx) => tx.transactions.reserveWithChange(row, reason));
    if (hasDataModifyingCtes(this.ctx.dialect)) {
      const outcome = await this.reserveInOneStatement(row, reason);
      return outcome?.kind === 'inserted' ? outcome.row : null;
    }
    const reserved = await this.reserve(row);
    if (reserved) {
      await this.insertStatusChange({
        trace_id: reserved.trace_id,
        from_status: '',
        to_status: reserved.status,
        reason,
        at_ms: reserved.created_at_ms,
      });
    }
    return reserved;
  }

  async reserveOrHolder(row: NewTransactionRow, reason: string): Promise<ReserveOrHolder> {
    if (hasDataModifyingCtes(this.ctx.dialect)) {
      return (await this.reserveInOneStatement(row, reason)) ?? { kind: 'taken', holder: null };
    }
    // SQLite outside a transaction: the key is looked up first, so that a replay writes nothing (a
    // write waits for the writer and its fsync). Inside one the writer is held already, and the
    // insert itself tells whether the key is taken (ON CONFLICT DO NOTHING): the in-process sale
    // (operations/sale.ts) looked the key up before its transaction, and a second look-up cost
    // each sale a statement (issue 29).
    if (sqliteOwnTransaction(this.ctx)) {
      const holder = await this.findByKey(row.merchant_id, row.transaction_type, row.order_id);
      if (holder) return { kind: 'taken', holder };
    }
    const inserted = await this.reserveWithChange(row, reason);
    if (inserted) return { kind: 'inserted', row: inserted };
    return { kind: 'taken', holder: await this.findByKey(row.merchant_id, row.transaction_type, row.order_id) };
  }

  /**
   * PostgreSQL: one statement per draw, atomic by itself; it runs the status_changes INSERT for
   * the row the first INSERT returns, and for none when the key or the drawn id was taken, and
   * answers the row inserted or the key's holder (dialect.ts insertedOrKeyHolder).
   */
  private async reserveInOneStatement(row: NewTransactionRow, reason: string): Promise<ReserveOrHolder | null> {
    return withFreshTraceId(this.ctx.trace_ids, async (trace_id): Promise<ReserveOrHolder | typeof ID_TAKEN> => {
      const insert = this.ctx.text.insert('transactions', { ...row, trace_id }, { conflict_columns: 'any', returning: '*' });
      const n = insert.parameters.length;
      const [found] = await this.ctx.rows<TransactionRow>(
        CompiledQuery.raw(
          `with inserted as (${insert.sql}), first_change as (insert into status_changes (trace_id, from_status, to_status, reason, at_ms) ` +
            `select trace_id, '', status, $${n + 1}::text, created_at_ms from inserted) ${insertedOrKeyHolder('transactions', TRANSACTION_KEY, 'trace_id', n + 2)}`,
          [...insert.parameters, reason, ...TRANSACTION_KEY.map((column) => row[column]), trace_id],
        ),
      );
      if (found === undefined) return ID_TAKEN;
      return Number(found.trace_id) === trace_id ? { kind: 'inserted', row: found } : { kind: 'taken', holder: found };
    });
  }

  async findByKey(merchant_id: string, transaction_type: string, order_id: string): Promise<TransactionRow | null> {
    const [row] = await this.ctx.rows<TransactionRow>(this.ctx.text.selectAll('transactions', { merchant_id, transaction_type, order_id }));
    return row ?? null;
  }

  async get(trace_id: number): Promise<TransactionRow | null> {
    const [row] = await this.ctx.rows<TransactionRow>(this.ctx.text.selectAll('transactions', { trace_id }));
    return row ?? null;
  }

  async lock(trace_id: number): Promise<TransactionRow | null> {
    const query = lockForUpdate(this.ctx.dialect, this.db.selectFrom('transactions').selectAll().where('trace_id', '=', trace_id));
    return (await query.executeTakeFirst()) ?? null;
  }

  async findByChallenge(challenge_token_hash: string): Promise<TransactionRow | null> {
    return (
      (await this.db.selectFrom('transactions').selectAll().where('challenge_token_hash', '=', challenge_token_hash).executeTakeFirst()) ??
      null
    );
  }

  async findByPspId(gateway_id: string, psp_transaction_id: string): Promise<TransactionRow | null> {
    return (await transactionScans.byPspId(this.db, gateway_id, psp_transaction_id).executeTakeFirst()) ?? null;
  }

  async latestCascadeAttempt(root_trace_id: number): Promise<TransactionRow | null> {
    return (
      (await this.db
        .selectFrom('transactions')
        .selectAll()
        .where('cascade_root', '=', root_trace_id)
        .where('cascade_root', 'is not', null)
        .orderBy('cascade_level', 'desc')
        .limit(1)
        .executeTakeFirst()) ?? null
    );
  }

  async listPayoutsByStatus(status: TransactionStatus, after: TransactionPageKey | null, limit: number): Promise<TransactionRow[]> {
    return transactionScans.payoutsByStatus(this.db, status, after, limit).execute();
  }

  async updateIfStatus(trace_id: number, from_status: TransactionStatus, patch: TransactionPatch): Promise<boolean> {
    return (await this.ctx.changed(this.ctx.text.update('transactions', patch, { trace_id, status: from_status }))) === 1;
  }

  async update(trace_id: number, patch: TransactionPatch): Promise<void> {
    await this.ctx.changed(this.ctx.text.update('transactions', patch, { trace_id }));
  }

  async changeStatus(
    trace_id: number,
    from_status: TransactionStatus,
    patch: TransactionPatch & { status: TransactionStatus },
    reason: string,
    at_ms: number,
    notification: Insertable<NotificationTable> | null = null,
  ): Promise<boolean> {
    // Atomic on its own (transaction-store.ts): outside a transaction, SQLite's statements run in one of their own.
    const own_transaction = sqliteOwnTransaction(this.ctx);
    if (own_transaction)
      return own_transaction((tx) => tx.transactions.changeStatus(trace_id, from_status, patch, reason, at_ms, notification));
    const update = this.ctx.text.update('transactions', patch, { trace_id, status: from_status });
    if (hasDataModifyingCtes(this.ctx.dialect)) {
      // One round trip: the status row, and the notification if any, are written only for the
      // row the UPDATE changed.
      const n = update.parameters.length;
      const parameters: unknown[] = [...update.parameters, from_status, reason, at_ms];
      let notify = '';
      if (notification) {
        notify =
          `, notified as (${notificationInsertFrom('changed', notification, parameters)})` +
          // The new notification carries the transaction's current state: older ones not yet sent
          // (and not being sent) are superseded (docs/notifications.md §5). Same snapshot: the new
          // row is not among them.
          `, superseded as (update notifications set state = 'superseded', last_error = '${SUPERSEDED_REASON}', updated_at_ms = $${parameters.length + 1}::bigint ` +
          "where trace_id = (select trace_id from changed) and state = 'pending' and lease_owner is null)";
        parameters.push(at_ms);
      }
      const recorded = await this.ctx.rows<{ trace_id: number }>(
        CompiledQuery.raw(
          `with changed as (${update.sql} returning trace_id, status), recorded as (insert into status_changes (trace_id, from_status, to_status, reason, at_ms) ` +
            `select trace_id, $${n + 1}::text, status, $${n + 2}::text, $${n + 3}::bigint from changed returning trace_id)${notify} ` +
            'select trace_id from recorded',
          parameters,
        ),
      );
      if (recorded.length !== 1) return false;
      if (notification) this.ctx.touchedNotifications();
      return true;
    }
    if ((await this.ctx.changed(update)) !== 1) return false;
    await this.insertStatusChange({ trace_id, from_status, to_status: patch.status, reason, at_ms });
    if (notification) {
      // SQLite (PostgreSQL returned above): as the superseded CTE there.
      await this.ctx.changed(
        CompiledQuery.raw(
          "update notifications set state = 'superseded', last_error = ?, updated_at_ms = ? where trace_id = ? and state = 'pending' and lease_owner is null",
          [SUPERSEDED_REASON, at_ms, trace_id],
        ),
      );
      await this.notifications.insert(notification);
    }
    return true;
  }

  async reserveRefund(sale_trace_id: number, amount_minor: number): Promise<boolean> {
    const result = await this.db
      .updateTable('transactions')
      .set((eb) => ({ refund_reserved_minor: eb('refund_reserved_minor', '+', amount_minor) }))
      .where('trace_id', '=', sale_trace_id)
      .where((eb) => eb(eb('refund_reserved_minor', '+', amount_minor), '<=', eb.ref('amount_minor')))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async releaseRefund(sale_trace_id: number, amount_minor: number): Promise<void> {
    await this.db
      .updateTable('transactions')
      .set((eb) => ({ refund_reserved_minor: eb('refund_reserved_minor', '-', amount_minor) }))
      .where('trace_id', '=', sale_trace_id)
      .execute();
  }

  async insertStatusChange(row: Insertable<StatusChangeTable>): Promise<void> {
    await this.ctx.changed(this.ctx.text.insert('status_changes', row));
  }

  async listStatusChanges(trace_id: number) {
    return this.db
      .selectFrom('status_changes')
      .select(['from_status', 'to_status', 'reason', 'at_ms'])
      .where('trace_id', '=', trace_id)
      .orderBy('id')
      .execute();
  }

  async insertDueAction(row: Insertable<DueActionTable>): Promise<void> {
    await this.db
      .insertInto('due_actions')
      .values(row)
      .onConflict((oc) => oc.columns(['trace_id', 'kind']).doNothing())
      .execute();
  }

  async claimDueActions(now_ms: number, limit: number) {
    return claimSkippingLocked(
      this.ctx.dialect,
      this.db
        .selectFrom('due_actions')
        .selectAll()
        .where('done', '=', 0)
        .where('due_at_ms', '<=', now_ms)
        .orderBy('due_at_ms')
        .limit(limit),
    ).execute();
  }

  async markDueActionDone(id: number): Promise<void> {
    await this.db.updateTable('due_actions').set({ done: 1 }).where('id', '=', id).execute();
  }

  async deferDueAction(id: number, due_at_ms: number): Promise<void> {
    await this.db
      .updateTable('due_actions')
      .set((eb) => ({ due_at_ms, attempts: eb('attempts', '+', 1) }))
      .where('id', '=', id)
      .execute();
  }

  async findStuck(older_than_ms: number, limit: number): Promise<TransactionRow[]> {
    return claimSkippingLocked(this.ctx.dialect, transactionScans.stuck(this.db, older_than_ms, limit)).execute();
  }

  async findInterruptedPayouts(older_than_ms: number, limit: number): Promise<TransactionRow[]> {
    return transactionScans.interruptedPayouts(this.db, older_than_ms, limit).execute();
  }

  async search(search: TransactionSearch, before: TransactionPageKey | null, limit: number): Promise<TransactionRow[]> {
    return transactionScans.search(this.db, search, before, limit).execute();
  }

  async listRefundsOf(sale_trace_id: number, limit: number): Promise<TransactionRow[]> {
    return this.db
      .selectFrom('transactions')
      .selectAll()
      .where('reference_id', '=', sale_trace_id)
      .where('transaction_type', '=', 'refund')
      .orderBy('created_at_ms')
      .orderBy('trace_id')
      .limit(limit)
      .execute();
  }

  async listCascade(root_trace_id: number, limit: number): Promise<TransactionRow[]> {
    return this.db
      .selectFrom('transactions')
      .selectAll()
      .where((eb) => eb.or([eb('trace_id', '=', root_trace_id), eb('cascade_root', '=', root_trace_id)]))
      .orderBy('cascade_level')
      .limit(limit)
      .execute();
  }

  async activitySince(merchant_id: string | null, since_ms: number): Promise<ActivityRow[]> {
    // Integer division on both databases (bigint / integer): the UTC day of each transaction.
    const day = sql<number>`created_at_ms / ${sql.lit(DAY_MS)}`;
    let query = this.db
      .selectFrom('transactions')
      .select([
        day.as('day'),
        'transaction_type',
        'status',
        'currency',
        (eb) => eb.fn.countAll<number>().as('count'),
        (eb) => eb.fn.sum<number>('amount_minor').as('amount_minor'),
      ])
      .where('created_at_ms', '>=', since_ms);
    if (merchant_id !== null) query = query.where('merchant_id', '=', merchant_id);
    const rows = await query.groupBy([day, 'transaction_type', 'status', 'currency']).execute();
    return rows.map((r) => ({
      day: Number(r.day),
      transaction_type: r.transaction_type,
      status: r.status,
      currency: r.currency,
      count: Number(r.count),
      amount_minor: Number(r.amount_minor),
    }));
  }

  async countByStatus(merchant_id: string | null, transaction_type: TransactionType, status: TransactionStatus): Promise<number> {
    let query = this.db
      .selectFrom('transactions')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('transaction_type', '=', transaction_type)
      .where('status', '=', status);
    if (merchant_id !== null) query = query.where('merchant_id', '=', merchant_id);
    return Number((await query.executeTakeFirstOrThrow()).n);
  }
}
