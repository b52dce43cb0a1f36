// The store over Kysely. One implementation serves both dialects; the differences are flagged
// by `dialect` right where they occur: row locks and SKIP LOCKED, and on the hot path a
// data-modifying CTE where PostgreSQL saves round trips with it, the connection's rowid where
// SQLite pays more for RETURNING than for the insert.
import { CompiledQuery, type Insertable, type Kysely, type QueryResult, type Transaction, sql } from 'kysely';
import type { DirectSqlite } from './sqlite-driver.js';
import type {
  CardVaultRow, Database, DueActionTable, GatewayRow, NewGatewayRow, NewTransactionRow, ProcessorEventRow, ProcessorEventTable, RoutingRuleRow, NotificationAttemptTable, NotificationRow,
  NotificationTable, StatusChangeTable, TransactionRow,
} from './schema.js';
import { TRANSACTION_COLUMN_DEFAULTS } from './schema.js'; // a value, beside the types above
import type pg from 'pg';
import type { Backlog, Dialect, GatewayPatch, LeaseTimes, MerchantRecord, MerchantSummary, NewMerchant, Store, TransactionPatch, UnitOfWork } from './store.js';
import { migrateToLatest } from './migrations/index.js';
import { GroupCommitter } from './group-commit.js';
import { SqlText } from './sql-text.js';
import { type BackOfficeStore, SqlBackOfficeStore } from './backoffice-store.js';

/** Units of work committed together at most; bounds the latency one batch adds. */
const GROUP_COMMIT_MAX_UNITS = 64;
import type { ExpressionBuilder } from 'kysely';
import type {
  NewSubscriptionRow, SubscriptionChangeTable, SubscriptionPlanRow, SubscriptionPlanTable, SubscriptionPriceTable, SubscriptionRow,
} from './schema.js';
import type { PageRequest, PlanPatch, PlanRecord, SubscriptionFilter, SubscriptionPatch } from './store.js';
import type { CashierCustomerRow, CashierSessionRow, CashierTokenRow, NewCashierSessionRow } from './schema.js';
import type { CashierSessionExpectation, CashierSessionPatch, OrderSummary } from './store.js';

export type Executor = Kysely<Database> | Transaction<Database>;

/** Transaction columns of the idempotency key (unique index transactions_idempotency). */
const TRANSACTION_KEY = ['merchant_id', 'transaction_type', 'order_id'] as const;

/**
 * SQLite: a row as an INSERT of `row` stored it under `trace_id`, without reading it back (the
 * read cost a sale 19 µs, measured). SQLite stores a bound value as given: the row's types are
 * those of its columns (NewTransactionRow), so no affinity converts one.
 */
function insertedTransactionRow(row: NewTransactionRow, trace_id: number): TransactionRow {
  const stored: Record<string, unknown> = Object.assign({}, TRANSACTION_COLUMN_DEFAULTS);
  for (const column in row) {
    const value = row[column as keyof NewTransactionRow];
    if (value !== undefined) stored[column] = value;
  }
  stored.trace_id = trace_id;
  return stored as unknown as TransactionRow;
}

const CARD_KEY = ['merchant_id', 'pin', 'pan_fingerprint', 'card_exp'] as const;
const ORDER_SUMMARY_COLUMNS = ['session_id', 'kind', 'identity_kind', 'identity_value', 'order_status', 'expires_at_ms'] as const satisfies readonly (keyof OrderSummary)[];

/**
 * The statement of leaseNotifications (see there), apart so that a test can read SQLite's plan
 * for it: leasing must read only due rows, however many notifications wait for later resends.
 */
export function leaseNotificationsQuery(text: SqlText, at: LeaseTimes, limit: number, lease_ms: number, owner: string): CompiledQuery {
  const { due_ms, wall_ms } = at;
  // The candidates are a MATERIALIZED CTE, computed once. As a plain `IN (subquery)`,
  // PostgreSQL may plan a nested-loop semi join that rescans the LIMIT … FOR UPDATE SKIP
  // LOCKED subquery for every outer row; each rescan skips the rows this statement already
  // updated and yields the next ones, so far more than `limit` rows got leased.
  // SQLite runs the statement under its one writer, so the candidates are the rows it updates
  // and the outer re-check is left out there: with it, SQLite's planner walked every pending
  // notification (thousands while resends wait) to test each against the candidate list, and
  // leasing slowed down as the outbox grew. The candidates and both in-order checks each have a
  // pending-only index (migration 0008), so no plan reads delivered or waiting rows per candidate.
  const candidates = `select n.id from notifications as n
      where n.state = 'pending' and n.next_attempt_at_ms <= ? and (n.lease_until_ms is null or n.lease_until_ms < ?)
        and not exists (select 1 from notifications as older where older.trace_id = n.trace_id and older.id < n.id and older.state = 'pending')
        and not exists (select 1 from notifications as older where older.subscription_id = n.subscription_id and older.id < n.id and older.state = 'pending')
      order by n.next_attempt_at_ms, n.id limit ?`;
  const update = `update notifications set lease_until_ms = ?, lease_owner = ?, updated_at_ms = ? where id in (select id from candidates)`;
  return text.fixed('lease_notifications',
    `with candidates as materialized (${candidates}) ${update} returning *`,
    `with candidates as materialized (${candidates} for update skip locked) ${update}
       and state = 'pending' and (lease_until_ms is null or lease_until_ms < ?) returning *`,
    text.dialect === 'sqlite'
      ? [due_ms, wall_ms, limit, wall_ms + lease_ms, owner, due_ms]
      : [due_ms, wall_ms, limit, wall_ms + lease_ms, owner, due_ms, wall_ms]);
}

/** A new notification's columns: the resend bound counts from creation unless the caller says otherwise (migration 0007). */
function notificationValues(row: Insertable<NotificationTable>): Insertable<NotificationTable> {
  return { ...row, bound_from_ms: row.bound_from_ms ?? row.created_at_ms };
}

/**
 * PostgreSQL types of the notification columns, for INSERT … SELECT with parameters: there the
 * parameters' types are not taken from the target columns, so each is cast.
 */
const NOTIFICATION_COLUMN_TYPES: Readonly<Record<keyof NotificationTable, 'bigint' | 'integer' | 'text'>> = {
  id: 'bigint', trace_id: 'bigint', kind: 'text', subscription_id: 'text', merchant_id: 'text', url: 'text', payload_json: 'text',
  state: 'text', attempts: 'integer', next_attempt_at_ms: 'bigint', lease_until_ms: 'bigint', lease_owner: 'text', last_error: 'text',
  created_at_ms: 'bigint', updated_at_ms: 'bigint', bound_from_ms: 'bigint',
};

/**
 * The scans of transactions that partial indexes serve (migration 0009), apart so that a test
 * reads their plans. The index's own terms are literals here (status = 'pending',
 * transaction_type = 'payout'): a planner matches a partial index's WHERE against literal terms
 * of the query, never against a parameter.
 */
export const transactionScans = {
  /** Pending with no answer, older than the given time: a request that died before finishing (transactions_pending). */
  stuck: (db: Executor, older_than_ms: number, limit: number) => db.selectFrom('transactions').selectAll()
    .where('status', '=', sql.lit('pending')).where('answer_json', 'is', null).where('created_at_ms', '<', older_than_ms)
    .orderBy('trace_id').limit(limit),
  /** Payouts left `in progress` without a processor reference (transactions_payouts). */
  interruptedPayouts: (db: Executor, older_than_ms: number, limit: number) => db.selectFrom('transactions').selectAll()
    .where('transaction_type', '=', sql.lit('payout')).where('status', '=', 'in progress').where('psp_transaction_id', 'is', null)
    .where('updated_at_ms', '<', older_than_ms)
    .orderBy('trace_id').limit(limit),
  /** A live processor's transaction by its id there (transactions_psp: never the sandbox's). */
  byPspId: (db: Executor, gateway_id: string, psp_transaction_id: string) => db.selectFrom('transactions').selectAll()
    .where('gateway_id', '=', gateway_id).where('psp_transaction_id', '=', psp_transaction_id)
    .where('psp_transaction_id', 'is not', null).where('payment_processor', '<>', sql.lit('sandbox'))
    .orderBy('trace_id').limit(1),
  /** The operator's payout list, a page from after_trace_id on (transactions_payouts). */
  payoutsByStatus: (db: Executor, status: string, after_trace_id: number, limit: number) => db.selectFrom('transactions').selectAll()
    .where('transaction_type', '=', sql.lit('payout')).where('status', '=', status).where('trace_id', '>', after_trace_id)
    .orderBy('trace_id').limit(limit),
};

/** Why a notification was superseded: shown to the operator as its last_error. */
const SUPERSEDED_REASON = 'superseded by a later status of the transaction';

class SqlOps {
  /**
   * `text` holds the SQL of the hot statements (sql-text.ts), shared by the store and its
   * transactions; `touched_notifications` is called after a statement that made a notification due.
   */
  constructor(
    protected readonly db: Executor,
    readonly dialect: Dialect,
    protected readonly text: SqlText,
    private readonly touched_notifications: () => void = () => {},
    /**
     * SQLite only (sqlite-driver.ts DirectSqlite): hot statements skip Kysely's executor. In a
     * transaction every statement goes to the writer the transaction holds; outside one, plain
     * SELECTs run at once (on the idle writer or the reader: sqlite-driver.ts) and writes still
     * queue for the writer through Kysely.
     */
    private readonly direct: { readonly sqlite: DirectSqlite; readonly in_transaction: boolean } | null = null,
  ) {}

  /** Runs hot-path SQL text (sql-text.ts) on this executor: the store, or the open transaction. */
  private async rows<R>(query: CompiledQuery): Promise<R[]> {
    return (await this.execute<R>(query)).rows;
  }

  private async changed(query: CompiledQuery): Promise<number> {
    return Number((await this.execute(query)).numAffectedRows ?? 0n);
  }

  private execute<R>(query: CompiledQuery): Promise<QueryResult<R>> | QueryResult<R> {
    if (this.direct) {
      if (this.direct.in_transaction) return this.direct.sqlite.inTransaction<R>(query);
      if (query.sql.startsWith('select ')) return this.direct.sqlite.read<R>(query);
    }
    return this.db.executeQuery<R>(query);
  }

  async insertMerchant(merchant: NewMerchant): Promise<'created' | 'exists'> {
    const inserted = await this.db.insertInto('merchants')
      .values({ merchant_id: merchant.merchant_id, secret_sealed: merchant.secret_sealed, created_at_ms: merchant.created_at_ms })
      .onConflict((oc) => oc.column('merchant_id').doNothing())
      .returning('merchant_id')
      .executeTakeFirst();
    if (!inserted) return 'exists';
    for (const application_key of merchant.applications) {
      await this.db.insertInto('applications')
        .values({ merchant_id: merchant.merchant_id, application_key, created_at_ms: merchant.created_at_ms }).execute();
    }
    for (const frontend of merchant.frontends) {
      await this.db.insertInto('frontends')
        .values({ merchant_id: merchant.merchant_id, name: frontend.name, currency: frontend.currency, created_at_ms: merchant.created_at_ms })
        .execute();
    }
    for (const gateway of merchant.gateways) await this.db.insertInto('gateways').values(gateway).execute();
    return 'created';
  }

  async getMerchant(merchant_id: string): Promise<MerchantRecord | null> {
    const merchant = await this.db.selectFrom('merchants').selectAll().where('merchant_id', '=', merchant_id).executeTakeFirst();
    if (!merchant) return null;
    const [applications, frontends, gateways, routing_rules] = await Promise.all([
      this.db.selectFrom('applications').select('application_key').where('merchant_id', '=', merchant_id).execute(),
      this.db.selectFrom('frontends').select(['name', 'currency']).where('merchant_id', '=', merchant_id).execute(),
      this.db.selectFrom('gateways').selectAll().where('merchant_id', '=', merchant_id).orderBy('created_at_ms').orderBy('gateway_id').execute(),
      this.db.selectFrom('routing_rules').selectAll().where('merchant_id', '=', merchant_id)
        .orderBy('priority').orderBy('created_at_ms').orderBy('rule_id').execute(),
    ]);
    return {
      merchant_id: merchant.merchant_id,
      secret_sealed: merchant.secret_sealed,
      applications: applications.map((a) => a.application_key),
      frontends,
      gateways,
      routing_rules,
      v13_body_signature_required: Number(merchant.v13_body_signature_required) === 1,
      disabled_at_ms: merchant.disabled_at_ms === null ? null : Number(merchant.disabled_at_ms),
      previous_secret_sealed: merchant.previous_secret_sealed,
      previous_secret_until_ms: merchant.previous_secret_until_ms === null ? null : Number(merchant.previous_secret_until_ms),
    };
  }

  async getDisplayName(merchant_id: string, identity: { readonly kind: 'frontend' | 'application_key'; readonly value: string }): Promise<string | null> {
    const row = identity.kind === 'frontend'
      ? await this.db.selectFrom('frontends').select('display_name').where('merchant_id', '=', merchant_id).where('name', '=', identity.value).executeTakeFirst()
      : await this.db.selectFrom('applications').select('display_name').where('merchant_id', '=', merchant_id).where('application_key', '=', identity.value)
        .executeTakeFirst();
    return row?.display_name ?? null;
  }

  async setDisplayName(
    merchant_id: string, identity: { readonly kind: 'frontend' | 'application_key'; readonly value: string }, display_name: string | null,
  ): Promise<boolean> {
    const result = identity.kind === 'frontend'
      ? await this.db.updateTable('frontends').set({ display_name }).where('merchant_id', '=', merchant_id).where('name', '=', identity.value).executeTakeFirst()
      : await this.db.updateTable('applications').set({ display_name }).where('merchant_id', '=', merchant_id).where('application_key', '=', identity.value)
        .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async setV13BodySignatureRequired(merchant_id: string, required: boolean): Promise<boolean> {
    const result = await this.db.updateTable('merchants').set({ v13_body_signature_required: required ? 1 : 0 })
      .where('merchant_id', '=', merchant_id).executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async rollMerchantSecret(merchant_id: string, new_secret_sealed: string, previous_secret_until_ms: number): Promise<boolean> {
    // The right-hand sides read the row as it was before this UPDATE (both dialects), so the old
    // current secret is what moves to previous_secret_sealed.
    const result = await this.db.updateTable('merchants')
      .set((eb) => ({ previous_secret_sealed: eb.ref('secret_sealed'), secret_sealed: new_secret_sealed, previous_secret_until_ms }))
      .where('merchant_id', '=', merchant_id).executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async setMerchantDisabled(merchant_id: string, disabled_at_ms: number | null): Promise<boolean> {
    const result = await this.db.updateTable('merchants')
      .set({ disabled_at_ms: disabled_at_ms === null ? null : sql<number>`coalesce(disabled_at_ms, ${disabled_at_ms})` })
      .where('merchant_id', '=', merchant_id).executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async listMerchants(after_merchant_id: string, limit: number): Promise<MerchantSummary[]> {
    // Correlated counts: each is a range of the child table's primary key or merchant index, and
    // there are only `limit` of them.
    const rows = await this.db.selectFrom('merchants as m')
      .select((eb) => [
        'm.merchant_id', 'm.created_at_ms', 'm.disabled_at_ms',
        eb.selectFrom('applications as a').select((c) => c.fn.countAll<number>().as('n')).whereRef('a.merchant_id', '=', 'm.merchant_id').as('application_count'),
        eb.selectFrom('frontends as f').select((c) => c.fn.countAll<number>().as('n')).whereRef('f.merchant_id', '=', 'm.merchant_id').as('frontend_count'),
        eb.selectFrom('gateways as g').select((c) => c.fn.countAll<number>().as('n')).whereRef('g.merchant_id', '=', 'm.merchant_id').as('gateway_count'),
      ])
      .where('m.merchant_id', '>', after_merchant_id)
      .orderBy('m.merchant_id').limit(limit).execute();
    // PostgreSQL answers count(*) as int8 text unless parsed; Number() serves both dialects.
    return rows.map((r) => ({
      merchant_id: r.merchant_id,
      created_at_ms: Number(r.created_at_ms),
      disabled_at_ms: r.disabled_at_ms === null ? null : Number(r.disabled_at_ms),
      application_count: Number(r.application_count ?? 0),
      frontend_count: Number(r.frontend_count ?? 0),
      gateway_count: Number(r.gateway_count ?? 0),
    }));
  }

  async countMerchants(): Promise<number> {
    const row = await this.db.selectFrom('merchants').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async listMerchantIds(limit: number): Promise<string[]> {
    return (await this.db.selectFrom('merchants').select('merchant_id').orderBy('merchant_id').limit(limit).execute()).map((r) => r.merchant_id);
  }

  async getGateway(gateway_id: string): Promise<GatewayRow | null> {
    return (await this.db.selectFrom('gateways').selectAll().where('gateway_id', '=', gateway_id).executeTakeFirst()) ?? null;
  }

  async insertGateway(row: NewGatewayRow): Promise<'created' | 'exists'> {
    const inserted = await this.db.insertInto('gateways').values(row)
      .onConflict((oc) => oc.column('gateway_id').doNothing())
      .returning('gateway_id')
      .executeTakeFirst();
    return inserted ? 'created' : 'exists';
  }

  async listGateways(merchant_id: string | null): Promise<GatewayRow[]> {
    let query = this.db.selectFrom('gateways').selectAll().orderBy('created_at_ms').orderBy('gateway_id');
    if (merchant_id !== null) query = query.where('merchant_id', '=', merchant_id);
    return query.execute();
  }

  async updateGateway(gateway_id: string, patch: GatewayPatch): Promise<boolean> {
    const result = await this.db.updateTable('gateways').set(patch).where('gateway_id', '=', gateway_id).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async insertProcessorEvent(row: Insertable<ProcessorEventTable>): Promise<boolean> {
    const inserted = await this.db.insertInto('processor_events').values(row)
      .onConflict((oc) => oc.columns(['gateway_id', 'event_id']).doNothing())
      .returning('event_id')
      .executeTakeFirst();
    return inserted !== undefined;
  }

  async listProcessorEvents(gateway_id: string, limit: number): Promise<ProcessorEventRow[]> {
    return this.db.selectFrom('processor_events').selectAll().where('gateway_id', '=', gateway_id)
      .orderBy('received_at_ms').orderBy('event_id').limit(limit).execute();
  }

  async insertRoutingRule(row: RoutingRuleRow): Promise<void> {
    await this.db.insertInto('routing_rules').values(row).execute();
  }

  async deleteRoutingRule(merchant_id: string, rule_id: string): Promise<boolean> {
    const result = await this.db.deleteFrom('routing_rules').where('merchant_id', '=', merchant_id).where('rule_id', '=', rule_id).executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }

  async replaceBinRanges(rows: readonly { readonly prefix: string; readonly country: string }[]): Promise<void> {
    await this.db.deleteFrom('bin_ranges').execute();
    // In slices: a statement's parameters are bounded (SQLite 32,766, PostgreSQL 65,535).
    for (let at = 0; at < rows.length; at += 1000) await this.db.insertInto('bin_ranges').values(rows.slice(at, at + 1000)).execute();
  }

  async findBinCountry(prefixes: readonly string[]): Promise<string | null> {
    if (prefixes.length === 0) return null;
    const rows = await this.db.selectFrom('bin_ranges').select(['prefix', 'country']).where('prefix', 'in', [...prefixes]).execute();
    return rows.sort((a, b) => b.prefix.length - a.prefix.length)[0]?.country ?? null;
  }

  async countBinRanges(): Promise<number> {
    const row = await this.db.selectFrom('bin_ranges').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async setGatewayHoldPayouts(gateway_id: string, hold_payouts: boolean): Promise<boolean> {
    const result = await this.db.updateTable('gateways').set({ hold_payouts: hold_payouts ? 1 : 0 })
      .where('gateway_id', '=', gateway_id).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /**
   * SQLite: an INSERT's new rowid without RETURNING, which costs SQLite more than the insert
   * itself (47 µs against 16 for a transaction row, measured); null when nothing was inserted.
   */
  private async insertedRowid(query: CompiledQuery): Promise<number | null> {
    const result = await this.execute(query);
    return Number(result.numAffectedRows ?? 0n) === 1 && result.insertId !== undefined ? Number(result.insertId) : null;
  }

  async insertTransactionIfAbsent(row: NewTransactionRow): Promise<number | null> {
    if (this.dialect === 'sqlite') return this.insertedRowid(this.text.insert('transactions', row, { conflict_columns: TRANSACTION_KEY }));
    const [inserted] = await this.rows<{ trace_id: number }>(
      this.text.insert('transactions', row, { conflict_columns: TRANSACTION_KEY, returning: 'trace_id' }));
    return inserted ? Number(inserted.trace_id) : null;
  }

  async reserveTransaction(row: NewTransactionRow): Promise<TransactionRow | null> {
    if (this.dialect === 'sqlite') {
      // The rowid of the insert (see insertedRowid) and the row as the insert wrote it: one
      // statement, so atomic also outside a transaction.
      const trace_id = await this.insertedRowid(this.text.insert('transactions', row, { conflict_columns: TRANSACTION_KEY }));
      return trace_id === null ? null : insertedTransactionRow(row, trace_id);
    }
    const [inserted] = await this.rows<TransactionRow>(this.text.insert('transactions', row, { conflict_columns: TRANSACTION_KEY, returning: '*' }));
    return inserted ?? null;
  }

  async reserveTransactionWithChange(row: NewTransactionRow, reason: string): Promise<TransactionRow | null> {
    if (this.dialect === 'postgres') {
      // One statement, atomic by itself; PostgreSQL runs the status_changes INSERT for the row the
      // first INSERT returns, and for none when the key was taken.
      const insert = this.text.insert('transactions', row, { conflict_columns: TRANSACTION_KEY, returning: '*' });
      const [reserved] = await this.rows<TransactionRow>(CompiledQuery.raw(
        `with reserved as (${insert.sql}), first_change as (insert into status_changes (trace_id, from_status, to_status, reason, at_ms) `
        + `select trace_id, '', status, $${insert.parameters.length + 1}::text, created_at_ms from reserved) select * from reserved`,
        [...insert.parameters, reason]));
      return reserved ?? null;
    }
    const reserved = await this.reserveTransaction(row);
    if (reserved) {
      await this.insertStatusChange({ trace_id: reserved.trace_id, from_status: '', to_status: reserved.status, reason, at_ms: reserved.created_at_ms });
    }
    return reserved;
  }

  async findTransactionByKey(merchant_id: string, transaction_type: string, order_id: string): Promise<TransactionRow | null> {
    const [row] = await this.rows<TransactionRow>(this.text.selectAll('transactions', { merchant_id, transaction_type, order_id }));
    return row ?? null;
  }

  async getTransaction(trace_id: number): Promise<TransactionRow | null> {
    const [row] = await this.rows<TransactionRow>(this.text.selectAll('transactions', { trace_id }));
    return row ?? null;
  }

  async lockTransaction(trace_id: number): Promise<TransactionRow | null> {
    let query = this.db.selectFrom('transactions').selectAll().where('trace_id', '=', trace_id);
    if (this.dialect === 'postgres') query = query.forUpdate();
    return (await query.executeTakeFirst()) ?? null;
  }

  async findTransactionByChallenge(challenge_token_hash: string): Promise<TransactionRow | null> {
    return (await this.db.selectFrom('transactions').selectAll()
      .where('challenge_token_hash', '=', challenge_token_hash).executeTakeFirst()) ?? null;
  }

  async findTransactionByPspId(gateway_id: string, psp_transaction_id: string): Promise<TransactionRow | null> {
    return (await transactionScans.byPspId(this.db, gateway_id, psp_transaction_id).executeTakeFirst()) ?? null;
  }

  async latestCascadeAttempt(root_trace_id: number): Promise<TransactionRow | null> {
    return (await this.db.selectFrom('transactions').selectAll().where('cascade_root', '=', root_trace_id).where('cascade_root', 'is not', null)
      .orderBy('cascade_level', 'desc').limit(1).executeTakeFirst()) ?? null;
  }

  async listPayoutsByStatus(status: string, after_trace_id: number, limit: number): Promise<TransactionRow[]> {
    return transactionScans.payoutsByStatus(this.db, status, after_trace_id, limit).execute();
  }

  async updateTransactionIfStatus(trace_id: number, from_status: string, patch: TransactionPatch): Promise<boolean> {
    return (await this.changed(this.text.update('transactions', patch, { trace_id, status: from_status }))) === 1;
  }

  async changeTransactionStatus(
    trace_id: number, from_status: string, patch: TransactionPatch & { status: string }, reason: string, at_ms: number,
    notification: Insertable<NotificationTable> | null = null,
  ): Promise<boolean> {
    const update = this.text.update('transactions', patch, { trace_id, status: from_status });
    if (this.dialect === 'postgres') {
      // One round trip: the status row, and the notification if any, are written only for the
      // row the UPDATE changed.
      const n = update.parameters.length;
      const parameters: unknown[] = [...update.parameters, from_status, reason, at_ms];
      let notify = '';
      if (notification) {
        const values = notificationValues(notification);
        const columns = Object.keys(values).filter((column) => values[column as keyof typeof values] !== undefined) as (keyof typeof values)[];
        // The cast table doubles as the list of column names that may be written into the SQL text.
        for (const column of columns) if (!Object.hasOwn(NOTIFICATION_COLUMN_TYPES, column)) throw new Error(`unknown notification column ${column}`);
        const placeholders = columns.map((column, index) => `$${parameters.length + index + 1}::${NOTIFICATION_COLUMN_TYPES[column]}`);
        parameters.push(...columns.map((column) => values[column]));
        notify = `, notified as (insert into notifications (${columns.map((column) => `"${column}"`).join(', ')}) `
          + `select ${placeholders.join(', ')} from changed)`
          // The new notification carries the transaction's current state: older ones not yet sent
          // (and not being sent) are superseded (docs/notifications.md §5). Same snapshot: the new
          // row is not among them.
          + `, superseded as (update notifications set state = 'superseded', last_error = '${SUPERSEDED_REASON}', updated_at_ms = $${parameters.length + 1}::bigint `
          + 'where trace_id = (select trace_id from changed) and state = \'pending\' and lease_owner is null)';
        parameters.push(at_ms);
      }
      const recorded = await this.rows<{ trace_id: number }>(CompiledQuery.raw(
        `with changed as (${update.sql} returning trace_id, status), recorded as (insert into status_changes (trace_id, from_status, to_status, reason, at_ms) `
        + `select trace_id, $${n + 1}::text, status, $${n + 2}::text, $${n + 3}::bigint from changed returning trace_id)${notify} `
        + 'select trace_id from recorded',
        parameters));
      if (recorded.length !== 1) return false;
      if (notification) this.touched_notifications();
      return true;
    }
    if ((await this.changed(update)) !== 1) return false;
    await this.insertStatusChange({ trace_id, from_status, to_status: patch.status, reason, at_ms });
    if (notification) {
      // SQLite (PostgreSQL returned above): as the superseded CTE there.
      await this.changed(CompiledQuery.raw(
        'update notifications set state = \'superseded\', last_error = ?, updated_at_ms = ? where trace_id = ? and state = \'pending\' and lease_owner is null',
        [SUPERSEDED_REASON, at_ms, trace_id]));
      await this.insertNotification(notification);
    }
    return true;
  }

  async supersedeIfNewer(notification_id: number, now_ms: number): Promise<boolean> {
    const result = await this.db.updateTable('notifications')
      .set({ state: 'superseded', last_error: SUPERSEDED_REASON, updated_at_ms: now_ms })
      .where('id', '=', notification_id).where('state', '=', 'pending').where('lease_owner', 'is', null).where('trace_id', 'is not', null)
      .where((eb) => eb.exists(eb.selectFrom('notifications as newer').select('newer.id')
        .whereRef('newer.trace_id', '=', 'notifications.trace_id').where('newer.id', '>', notification_id)))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async updateTransaction(trace_id: number, patch: TransactionPatch): Promise<void> {
    await this.changed(this.text.update('transactions', patch, { trace_id }));
  }

  async reserveRefund(sale_trace_id: number, amount_minor: number): Promise<boolean> {
    const result = await this.db.updateTable('transactions')
      .set((eb) => ({ refund_reserved_minor: eb('refund_reserved_minor', '+', amount_minor) }))
      .where('trace_id', '=', sale_trace_id)
      .where((eb) => eb(eb('refund_reserved_minor', '+', amount_minor), '<=', eb.ref('amount_minor')))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async releaseRefund(sale_trace_id: number, amount_minor: number): Promise<void> {
    await this.db.updateTable('transactions')
      .set((eb) => ({ refund_reserved_minor: eb('refund_reserved_minor', '-', amount_minor) }))
      .where('trace_id', '=', sale_trace_id).execute();
  }

  async insertStatusChange(row: Insertable<StatusChangeTable>): Promise<void> {
    await this.changed(this.text.insert('status_changes', row));
  }

  async listStatusChanges(trace_id: number) {
    return this.db.selectFrom('status_changes').select(['from_status', 'to_status', 'reason', 'at_ms'])
      .where('trace_id', '=', trace_id).orderBy('id').execute();
  }

  async insertDueAction(row: Insertable<DueActionTable>): Promise<void> {
    await this.db.insertInto('due_actions').values(row)
      .onConflict((oc) => oc.columns(['trace_id', 'kind']).doNothing()).execute();
  }

  async claimDueActions(now_ms: number, limit: number) {
    let query = this.db.selectFrom('due_actions').selectAll()
      .where('done', '=', 0).where('due_at_ms', '<=', now_ms).orderBy('due_at_ms').limit(limit);
    if (this.dialect === 'postgres') query = query.forUpdate().skipLocked();
    return query.execute();
  }

  async markDueActionDone(id: number): Promise<void> {
    await this.db.updateTable('due_actions').set({ done: 1 }).where('id', '=', id).execute();
  }

  async deferDueAction(id: number, due_at_ms: number): Promise<void> {
    await this.db.updateTable('due_actions').set((eb) => ({ due_at_ms, attempts: eb('attempts', '+', 1) })).where('id', '=', id).execute();
  }

  async findStuckTransactions(older_than_ms: number, limit: number): Promise<TransactionRow[]> {
    let query = transactionScans.stuck(this.db, older_than_ms, limit);
    if (this.dialect === 'postgres') query = query.forUpdate().skipLocked();
    return query.execute();
  }

  async findInterruptedPayouts(older_than_ms: number, limit: number): Promise<TransactionRow[]> {
    return transactionScans.interruptedPayouts(this.db, older_than_ms, limit).execute();
  }

  async insertNotification(row: Insertable<NotificationTable>): Promise<number> {
    const values = notificationValues(row);
    let id: number | null;
    if (this.dialect === 'sqlite') id = await this.insertedRowid(this.text.insert('notifications', values));
    else id = (await this.rows<{ id: number }>(this.text.insert('notifications', values, { returning: 'id' })))[0]?.id ?? null;
    if (id === null) throw new Error('notification insert returned no id');
    this.touched_notifications();
    return Number(id);
  }

  async listNotifications(trace_id: number): Promise<NotificationRow[]> {
    return this.db.selectFrom('notifications').selectAll().where('trace_id', '=', trace_id).orderBy('id').execute();
  }

  async listSubscriptionEvents(subscription_id: string): Promise<NotificationRow[]> {
    return this.db.selectFrom('notifications').selectAll()
      .where('kind', '=', 'subscription_event').where('subscription_id', '=', subscription_id).orderBy('id').execute();
  }

  async getNotification(id: number): Promise<NotificationRow | null> {
    return (await this.db.selectFrom('notifications').selectAll().where('id', '=', id).executeTakeFirst()) ?? null;
  }

  async leaseNotifications(at: LeaseTimes, limit: number, lease_ms: number, owner: string): Promise<NotificationRow[]> {
    // Due on the gateway clock, leased on the wall clock (LeaseTimes): a sandbox clock jump makes
    // resends due but never ends a lease early.
    // One statement: UPDATE … WHERE id IN (due, unleased candidates) RETURNING. The candidates
    // skip any notification with an older one of the same transaction still pending (in-order
    // delivery). On PostgreSQL the candidates are locked with SKIP LOCKED, so instances leasing at
    // the same moment take disjoint sets, and the outer condition re-checks the lease on the
    // locked row, so a notification is leased to one owner at a time.
    const query = leaseNotificationsQuery(this.text, at, limit, lease_ms, owner);
    const leased = await this.rows<NotificationRow>(query);
    return leased.sort((a, b) => a.next_attempt_at_ms - b.next_attempt_at_ms || a.id - b.id);
  }

  async finishNotificationAttempt(
    notification_id: number,
    owner: string,
    patch: Pick<NotificationRow, 'state' | 'next_attempt_at_ms' | 'last_error'> & { attempts: number },
    attempt: Insertable<NotificationAttemptTable>,
    now_ms: number,
  ): Promise<boolean> {
    const update = this.text.update('notifications',
      { state: patch.state, next_attempt_at_ms: patch.next_attempt_at_ms, last_error: patch.last_error, attempts: patch.attempts, lease_until_ms: null, lease_owner: null, updated_at_ms: now_ms },
      { id: notification_id, lease_owner: owner });
    if (this.dialect === 'postgres') {
      // One statement, atomic by itself: the attempt is recorded only for the row the UPDATE changed.
      const n = update.parameters.length;
      const recorded = await this.rows<{ notification_id: number }>(CompiledQuery.raw(
        `with finished as (${update.sql} returning id) insert into notification_attempts `
        + '(notification_id, attempt_no, started_at_ms, duration_ms, http_status, reply_excerpt, outcome, reason) '
        + `select id, $${n + 1}::integer, $${n + 2}::bigint, $${n + 3}::integer, $${n + 4}::integer, $${n + 5}::text, $${n + 6}::text, $${n + 7}::text `
        + 'from finished returning notification_id',
        [...update.parameters, attempt.attempt_no, attempt.started_at_ms, attempt.duration_ms, attempt.http_status ?? null,
          attempt.reply_excerpt ?? null, attempt.outcome, attempt.reason]));
      return recorded.length === 1;
    }
    if ((await this.changed(update)) !== 1) return false;
    await this.changed(this.text.insert('notification_attempts', attempt));
    return true;
  }

  async listNotificationAttempts(notification_id: number) {
    return this.db.selectFrom('notification_attempts')
      .select(['notification_id', 'attempt_no', 'started_at_ms', 'duration_ms', 'http_status', 'reply_excerpt', 'outcome', 'reason'])
      .where('notification_id', '=', notification_id).orderBy('attempt_no').execute();
  }

  async rescheduleNotification(id: number, next_attempt_at_ms: number, now_ms: number, lease_now_ms?: number): Promise<boolean> {
    // One conditional UPDATE: the lease is checked on the row it changes, so an attempt leased
    // in between (any instance) makes this change nothing rather than be overwritten. Clearing
    // the ended lease's owner means an attempt that outlived its lease cannot record over this.
    const result = await this.db.updateTable('notifications')
      .set({ state: 'pending', next_attempt_at_ms, bound_from_ms: now_ms, lease_until_ms: null, lease_owner: null, updated_at_ms: now_ms })
      .where('id', '=', id)
      .where((eb) => (lease_now_ms === undefined
        ? eb('lease_owner', 'is', null)
        : eb.or([eb('lease_until_ms', 'is', null), eb('lease_until_ms', '<', lease_now_ms)])))
      .executeTakeFirst();
    const changed = Number(result.numUpdatedRows) === 1;
    if (changed) this.touched_notifications();
    return changed;
  }

  async insertCardIfAbsent(row: CardVaultRow): Promise<void> {
    await this.changed(this.text.insert('card_vault', row, { conflict_columns: CARD_KEY }));
  }

  async findCard(merchant_id: string, pin: string, pan_fingerprint: string, card_exp: string): Promise<CardVaultRow | null> {
    const [row] = await this.rows<CardVaultRow>(this.text.selectAll('card_vault', { merchant_id, pin, pan_fingerprint, card_exp }));
    return row ?? null;
  }

  async getCard(merchant_id: string, card_token: string): Promise<CardVaultRow | null> {
    const [row] = await this.rows<CardVaultRow>(this.text.selectAll('card_vault', { merchant_id, card_token }));
    return row ?? null;
  }

  async getSandboxOffset(): Promise<number> {
    const row = await this.db.selectFrom('sandbox_clock').select('offset_ms').where('id', '=', 1).executeTakeFirst();
    return row ? Number(row.offset_ms) : 0;
  }

  async setSandboxOffset(offset_ms: number): Promise<void> {
    await this.db.insertInto('sandbox_clock').values({ id: 1, offset_ms })
      .onConflict((oc) => oc.column('id').doUpdateSet({ offset_ms })).execute();
  }

  // Subscription plans and subscriptions (issue 6)

  async insertPlan(plan: Insertable<SubscriptionPlanTable>, prices: readonly Insertable<SubscriptionPriceTable>[]): Promise<void> {
    await this.db.insertInto('subscription_plans').values(plan).execute();
    if (prices.length > 0) await this.db.insertInto('subscription_prices').values([...prices]).execute();
  }

  private async withPrices(plans: SubscriptionPlanRow[]): Promise<PlanRecord[]> {
    if (plans.length === 0) return [];
    const prices = await this.db.selectFrom('subscription_prices').selectAll()
      .where('plan_id', 'in', plans.map((p) => p.plan_id)).orderBy('position').execute();
    return plans.map((plan) => ({ plan, prices: prices.filter((p) => p.plan_id === plan.plan_id) }));
  }

  async getPlan(merchant_id: string, plan_id: string): Promise<PlanRecord | null> {
    const plan = await this.db.selectFrom('subscription_plans').selectAll()
      .where('merchant_id', '=', merchant_id).where('plan_id', '=', plan_id).executeTakeFirst();
    if (!plan) return null;
    return (await this.withPrices([plan]))[0] ?? null;
  }

  async listPlans(merchant_id: string, page: PageRequest): Promise<{ plans: PlanRecord[]; total: number }> {
    const visible = this.db.selectFrom('subscription_plans').where('merchant_id', '=', merchant_id).where('status', '!=', 'deleted');
    const [rows, count] = await Promise.all([
      visible.selectAll().orderBy('created_at_ms').orderBy('plan_id').offset(page.offset).limit(page.limit).execute(),
      visible.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { plans: await this.withPrices(rows), total: Number(count.n) };
  }

  async updatePlan(merchant_id: string, plan_id: string, patch: PlanPatch): Promise<boolean> {
    const result = await this.db.updateTable('subscription_plans').set(patch)
      .where('merchant_id', '=', merchant_id).where('plan_id', '=', plan_id).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async insertSubscription(row: NewSubscriptionRow): Promise<boolean> {
    const inserted = await this.db.insertInto('subscriptions').values(row)
      // The conflict target names the partial index by its columns and predicate; the predicate
      // must be the literal of the index (a bound parameter would match no index).
      .onConflict((oc) => oc.columns(['merchant_id', 'cid', 'plan_id', 'price_id', 'card_token']).where('status', '=', sql.lit('active')).doNothing())
      .executeTakeFirst();
    return Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  async findActiveSubscription(key: Pick<NewSubscriptionRow, 'merchant_id' | 'cid' | 'plan_id' | 'price_id' | 'card_token'>): Promise<SubscriptionRow | null> {
    return (await this.db.selectFrom('subscriptions').selectAll()
      .where('merchant_id', '=', key.merchant_id).where('cid', '=', key.cid).where('plan_id', '=', key.plan_id)
      .where('price_id', '=', key.price_id).where('card_token', '=', key.card_token).where('status', '=', 'active')
      .executeTakeFirst()) ?? null;
  }

  async getSubscription(merchant_id: string, subscription_id: string): Promise<SubscriptionRow | null> {
    return (await this.db.selectFrom('subscriptions').selectAll()
      .where('merchant_id', '=', merchant_id).where('subscription_id', '=', subscription_id).executeTakeFirst()) ?? null;
  }

  async lockSubscription(subscription_id: string): Promise<SubscriptionRow | null> {
    let query = this.db.selectFrom('subscriptions').selectAll().where('subscription_id', '=', subscription_id);
    if (this.dialect === 'postgres') query = query.forUpdate();
    return (await query.executeTakeFirst()) ?? null;
  }

  async listSubscriptions(merchant_id: string, filter: SubscriptionFilter, page: PageRequest): Promise<{ subscriptions: SubscriptionRow[]; total: number }> {
    let selected = this.db.selectFrom('subscriptions').where('merchant_id', '=', merchant_id);
    if (filter.plan_id !== undefined) selected = selected.where('plan_id', '=', filter.plan_id);
    if (filter.cid !== undefined) selected = selected.where('cid', '=', filter.cid);
    if (filter.status !== undefined) selected = selected.where('status', '=', filter.status);
    const [subscriptions, count] = await Promise.all([
      selected.selectAll().orderBy('created_at_ms', 'desc').orderBy('subscription_id').offset(page.offset).limit(page.limit).execute(),
      selected.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { subscriptions, total: Number(count.n) };
  }

  async updateSubscriptionIfVersion(subscription_id: string, version: number, patch: SubscriptionPatch): Promise<boolean> {
    const result = await this.db.updateTable('subscriptions').set({ ...patch, version: version + 1 })
      .where('subscription_id', '=', subscription_id).where('version', '=', version).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async insertSubscriptionChange(row: Insertable<SubscriptionChangeTable>): Promise<void> {
    await this.db.insertInto('subscription_changes').values(row).execute();
  }

  async listSubscriptionChanges(subscription_id: string) {
    return this.db.selectFrom('subscription_changes').select(['from_status', 'to_status', 'event', 'reason', 'at_ms'])
      .where('subscription_id', '=', subscription_id).orderBy('id').execute();
  }

  async claimDueSubscriptions(at: LeaseTimes, limit: number, lease_until_ms: number, owner: string): Promise<SubscriptionRow[]> {
    const unclaimed = (eb: ExpressionBuilder<Database, 'subscriptions'>) => eb.or([eb('lease_until_ms', 'is', null), eb('lease_until_ms', '<=', at.wall_ms)]);
    let candidates = this.db.selectFrom('subscriptions').select('subscription_id')
      .where('status', '=', 'active').where('next_charge_at_ms', '<=', at.due_ms).where(unclaimed)
      .where(merchantEnabled)
      .orderBy('next_charge_at_ms').limit(limit);
    if (this.dialect === 'postgres') candidates = candidates.forUpdate().skipLocked();
    const ids = (await candidates.execute()).map((r) => r.subscription_id);
    if (ids.length === 0) return [];
    await this.db.updateTable('subscriptions').set({ lease_until_ms, lease_owner: owner })
      .where('subscription_id', 'in', ids).where(unclaimed).execute();
    return this.db.selectFrom('subscriptions').selectAll()
      .where('subscription_id', 'in', ids).where('lease_owner', '=', owner).where('lease_until_ms', '=', lease_until_ms)
      .orderBy('next_charge_at_ms').execute();
  }

  async setSubscriptionLease(subscription_id: string, owner: string, lease_until_ms: number | null): Promise<void> {
    await this.db.updateTable('subscriptions').set({ lease_until_ms, lease_owner: lease_until_ms === null ? null : owner })
      .where('subscription_id', '=', subscription_id).where('lease_owner', '=', owner).execute();
  }

  async countDueSubscriptions(now_ms: number): Promise<number> {
    const row = await this.db.selectFrom('subscriptions').select((eb) => eb.fn.countAll<number>().as('n'))
      .where('status', '=', 'active').where('next_charge_at_ms', '<=', now_ms).where(merchantEnabled).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  // Hosted cashier (issue 5)

  async insertCashierSession(row: NewCashierSessionRow): Promise<'created' | 'exists'> {
    const inserted = await this.db.insertInto('cashier_sessions').values(row)
      .onConflict((oc) => oc.columns(['merchant_id', 'order_id']).doNothing())
      .returning('session_id')
      .executeTakeFirst();
    return inserted ? 'created' : 'exists';
  }

  async getCashierSession(session_id: string): Promise<CashierSessionRow | null> {
    const [row] = await this.rows<CashierSessionRow>(this.text.selectAll('cashier_sessions', { session_id }));
    return row ?? null;
  }

  async lockCashierSession(session_id: string): Promise<CashierSessionRow | null> {
    let query = this.db.selectFrom('cashier_sessions').selectAll().where('session_id', '=', session_id);
    if (this.dialect === 'postgres') query = query.forUpdate();
    return (await query.executeTakeFirst()) ?? null;
  }

  async findCashierSessionByOrder(merchant_id: string, order_id: string): Promise<CashierSessionRow | null> {
    const [row] = await this.rows<CashierSessionRow>(this.text.selectAll('cashier_sessions', { merchant_id, order_id }));
    return row ?? null;
  }

  async findOrderSummary(merchant_id: string, order_id: string): Promise<OrderSummary | null> {
    const [row] = await this.rows<OrderSummary>(this.text.select('cashier_sessions', ORDER_SUMMARY_COLUMNS, { merchant_id, order_id }));
    return row ?? null;
  }

  async findCashierSessionByAuthToken(auth_token_hash: string): Promise<CashierSessionRow | null> {
    return (await this.db.selectFrom('cashier_sessions').selectAll().where('auth_token_hash', '=', auth_token_hash).executeTakeFirst()) ?? null;
  }

  async updateCashierSessionIf(session_id: string, expected: CashierSessionExpectation, patch: CashierSessionPatch): Promise<boolean> {
    let query = this.db.updateTable('cashier_sessions').set(patch).where('session_id', '=', session_id);
    if (expected.order_status !== undefined) {
      query = expected.order_status === null ? query.where('order_status', 'is', null) : query.where('order_status', '=', expected.order_status);
    }
    if (expected.attempts !== undefined) query = query.where('attempts', '=', expected.attempts);
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async insertCashierToken(row: CashierTokenRow): Promise<void> {
    await this.db.insertInto('cashier_tokens').values(row).execute();
  }

  async findCashierToken(token_hash: string): Promise<CashierTokenRow | null> {
    return (await this.db.selectFrom('cashier_tokens').selectAll().where('token_hash', '=', token_hash).executeTakeFirst()) ?? null;
  }

  async useCashierToken(token_hash: string, now_ms: number): Promise<boolean> {
    const result = await this.db.updateTable('cashier_tokens').set({ used_at_ms: now_ms })
      .where('token_hash', '=', token_hash).where('used_at_ms', 'is', null).where('expires_at_ms', '>', now_ms)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async listCashierTransactions(session_id: string): Promise<TransactionRow[]> {
    return this.rows<TransactionRow>(this.text.selectAll('transactions', { cashier_session_id: session_id }, 'trace_id'));
  }

  async claimExpiredOrders(now_ms: number, limit: number): Promise<CashierSessionRow[]> {
    let query = this.db.selectFrom('cashier_sessions').selectAll()
      .where('order_status', '=', 'pending').where('expires_at_ms', '<=', now_ms).orderBy('expires_at_ms').limit(limit);
    if (this.dialect === 'postgres') query = query.forUpdate().skipLocked();
    return query.execute();
  }

  async getCashierCustomer(merchant_id: string, pin: string): Promise<CashierCustomerRow | null> {
    return (await this.db.selectFrom('cashier_customers').selectAll()
      .where('merchant_id', '=', merchant_id).where('pin', '=', pin).executeTakeFirst()) ?? null;
  }

  async upsertCashierCustomer(row: CashierCustomerRow): Promise<void> {
    await this.db.insertInto('cashier_customers').values(row)
      .onConflict((oc) => oc.columns(['merchant_id', 'pin']).doUpdateSet({ profile_sealed: row.profile_sealed, updated_at_ms: row.updated_at_ms }))
      .execute();
  }

  async getFrameOrigins(merchant_id: string, application_key: string): Promise<string[] | null> {
    const row = await this.db.selectFrom('applications').select('frame_origins')
      .where('merchant_id', '=', merchant_id).where('application_key', '=', application_key).executeTakeFirst();
    if (!row) return null;
    return row.frame_origins.split(' ').filter((origin) => origin !== '');
  }

  async setFrameOrigins(merchant_id: string, application_key: string, origins: readonly string[]): Promise<boolean> {
    const result = await this.db.updateTable('applications').set({ frame_origins: origins.join(' ') })
      .where('merchant_id', '=', merchant_id).where('application_key', '=', application_key).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }
}

/** Listeners told when a notification became due; each failure is contained. */
class NotificationSignal {
  private readonly listeners = new Set<() => void>();
  readonly fire = (): void => {
    for (const listener of this.listeners) {
      try {
        listener();
      } catch {
        // A listener only nudges a worker; its failure must not fail the write that committed.
      }
    }
  };
  add(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/**
 * A subscription whose merchant is not disabled: a disabled merchant's renewals are held, neither
 * claimed nor counted as due work, until it is enabled again (docs/subscriptions.md §5.6).
 */
function merchantEnabled(eb: ExpressionBuilder<Database, 'subscriptions'>) {
  return eb.not(eb.exists(eb.selectFrom('merchants').select('merchants.merchant_id')
    .whereRef('merchants.merchant_id', '=', 'subscriptions.merchant_id').where('merchants.disabled_at_ms', 'is not', null)));
}

export class SqlStore extends SqlOps implements Store {
  private readonly signal: NotificationSignal;
  /** SQLite only: one writer, so transactions are committed in groups (store/group-commit.ts). */
  private readonly group: GroupCommitter<Database> | null;
  private readonly direct_in_transaction: { readonly sqlite: DirectSqlite; readonly in_transaction: true } | null;
  /** PostgreSQL: the pool, read for /metrics (poolUse). */
  private readonly pool: pg.Pool | null;
  declare readonly merchants: UnitOfWork['merchants'];
  declare readonly transactions: UnitOfWork['transactions'];
  declare readonly cards: UnitOfWork['cards'];
  declare readonly notifications: UnitOfWork['notifications'];
  declare readonly subscriptions: UnitOfWork['subscriptions'];
  declare readonly cashier: UnitOfWork['cashier'];
  declare readonly sandboxClock: UnitOfWork['sandboxClock'];
  declare readonly backoffice: BackOfficeStore;

  constructor(
    private readonly root: Kysely<Database>,
    dialect: Dialect,
    options: { readonly group_commit?: boolean; readonly direct?: DirectSqlite; readonly pool?: pg.Pool } = {},
    private readonly on_close: () => Promise<void> = async () => {},
  ) {
    const signal = new NotificationSignal();
    // Outside a transaction a statement commits by itself, so the signal fires at once.
    super(root, dialect, new SqlText(dialect), signal.fire, options.direct ? { sqlite: options.direct, in_transaction: false } : null);
    this.signal = signal;
    this.pool = options.pool ?? null;
    Object.assign(this, unitOfWork(this, new SqlBackOfficeStore(root)));
    this.direct_in_transaction = options.direct ? { sqlite: options.direct, in_transaction: true } : null;
    // PostgreSQL commits concurrent transactions on its own connections and groups their WAL flushes itself.
    const direct = options.direct;
    if (dialect === 'sqlite' && (options.group_commit ?? true) && !direct) throw new Error('SQLite group commit needs the direct connection');
    this.group = dialect === 'sqlite' && (options.group_commit ?? true) && direct
      ? new GroupCommitter(root, GROUP_COMMIT_MAX_UNITS, (command) => {
        direct.inTransaction(CompiledQuery.raw(command));
      })
      : null;
  }

  /** SQLite group commit: batches and units committed so far (null when off or on PostgreSQL); for benchmarks. */
  groupCommitStats(): { readonly batches: number; readonly units: number } | null {
    return this.group ? { ...this.group.stats } : null;
  }

  onNotificationCommitted(listener: () => void): () => void {
    return this.signal.add(listener);
  }

  async migrate(): Promise<void> {
    await migrateToLatest(this.root as unknown as Kysely<unknown>, this.dialect);
  }

  async backlog(now_ms: number): Promise<Backlog> {
    const [pending, due, actions] = await Promise.all([
      this.db.selectFrom('notifications').select((eb) => eb.fn.countAll<number>().as('n')).where('state', '=', 'pending').executeTakeFirstOrThrow(),
      this.db.selectFrom('notifications').select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min<number>('next_attempt_at_ms').as('oldest')])
        .where('state', '=', 'pending').where('next_attempt_at_ms', '<=', now_ms).executeTakeFirstOrThrow(),
      this.db.selectFrom('due_actions').select((eb) => eb.fn.countAll<number>().as('n')).where('done', '=', 0).where('due_at_ms', '<=', now_ms)
        .executeTakeFirstOrThrow(),
    ]);
    return {
      notifications_pending: Number(pending.n),
      notifications_due: Number(due.n),
      oldest_due_notification_ms: due.oldest === null || due.oldest === undefined ? null : Number(due.oldest),
      due_actions: Number(actions.n),
    };
  }

  poolUse(): { readonly total: number; readonly idle: number; readonly waiting: number } | null {
    return this.pool === null ? null : { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount };
  }

  async ping(): Promise<void> {
    await sql`select 1`.execute(this.root);
  }

  async close(): Promise<void> {
    await this.root.destroy();
    await this.on_close();
  }

  // Atomic on their own (store.ts): one statement on PostgreSQL, a transaction here on SQLite.
  override async reserveTransactionWithChange(row: NewTransactionRow, reason: string): Promise<TransactionRow | null> {
    if (this.dialect === 'postgres') return super.reserveTransactionWithChange(row, reason);
    return this.transaction((tx) => tx.transactions.reserveWithChange(row, reason));
  }

  override async finishNotificationAttempt(...args: Parameters<SqlOps['finishNotificationAttempt']>): Promise<boolean> {
    if (this.dialect === 'postgres') return super.finishNotificationAttempt(...args);
    return this.transaction((tx) => tx.notifications.finishAttempt(...args));
  }

  // On SQLite a lease joins the next group commit instead of committing alone: alone, each lease
  // was a COMMIT with its own fsync on the event loop (about as many as all the sales' group
  // commits together in the notification-lag benchmark). A lease lost to a crash costs nothing:
  // the notification stays pending and unleased, and is leased again.
  override async leaseNotifications(...args: Parameters<SqlOps['leaseNotifications']>): Promise<NotificationRow[]> {
    if (this.dialect === 'postgres') return super.leaseNotifications(...args);
    return this.transaction((tx) => tx.notifications.lease(...args));
  }

  async transaction<T>(work: (tx: UnitOfWork) => Promise<T>): Promise<T> {
    // Inside a transaction the signal waits for the commit: a rolled-back notification never fires it.
    let touched = false;
    const run = (trx: Transaction<Database>) => work(unitOfWork(new SqlOps(trx, this.dialect, this.text, () => {
      touched = true;
    }, this.direct_in_transaction), new SqlBackOfficeStore(trx)));
    const result = this.group ? await this.group.run(run) : await this.root.transaction().execute(run);
    if (touched) this.signal.fire();
    return result;
  }
}

/**
 * The aggregates over one executor's flat operations (the store's, or an open transaction's),
 * with the back office's queries of other aggregates moved to them.
 */
function unitOfWork(ops: SqlOps, bo: SqlBackOfficeStore): UnitOfWork {
  return {
    merchants: {
      insert: ops.insertMerchant.bind(ops),
      get: ops.getMerchant.bind(ops),
      count: ops.countMerchants.bind(ops),
      listIds: ops.listMerchantIds.bind(ops),
      list: ops.listMerchants.bind(ops),
      rollSecret: ops.rollMerchantSecret.bind(ops),
      setDisabled: ops.setMerchantDisabled.bind(ops),
      getGateway: ops.getGateway.bind(ops),
      insertGateway: ops.insertGateway.bind(ops),
      listGateways: ops.listGateways.bind(ops),
      updateGateway: ops.updateGateway.bind(ops),
      insertProcessorEvent: ops.insertProcessorEvent.bind(ops),
      listProcessorEvents: ops.listProcessorEvents.bind(ops),
      insertRoutingRule: ops.insertRoutingRule.bind(ops),
      deleteRoutingRule: ops.deleteRoutingRule.bind(ops),
      replaceBinRanges: ops.replaceBinRanges.bind(ops),
      findBinCountry: ops.findBinCountry.bind(ops),
      countBinRanges: ops.countBinRanges.bind(ops),
      setGatewayHoldPayouts: ops.setGatewayHoldPayouts.bind(ops),
      getFrameOrigins: ops.getFrameOrigins.bind(ops),
      setFrameOrigins: ops.setFrameOrigins.bind(ops),
      getDisplayName: ops.getDisplayName.bind(ops),
      setDisplayName: ops.setDisplayName.bind(ops),
      setV13BodySignatureRequired: ops.setV13BodySignatureRequired.bind(ops),
      listProcessorEventsOf: bo.listProcessorEventsOf.bind(bo),
      listGatewayProcessorEvents: bo.listGatewayProcessorEvents.bind(bo),
    },
    transactions: {
      insertIfAbsent: ops.insertTransactionIfAbsent.bind(ops),
      reserve: ops.reserveTransaction.bind(ops),
      reserveWithChange: ops.reserveTransactionWithChange.bind(ops),
      findByKey: ops.findTransactionByKey.bind(ops),
      get: ops.getTransaction.bind(ops),
      lock: ops.lockTransaction.bind(ops),
      findByChallenge: ops.findTransactionByChallenge.bind(ops),
      findByPspId: ops.findTransactionByPspId.bind(ops),
      latestCascadeAttempt: ops.latestCascadeAttempt.bind(ops),
      listPayoutsByStatus: ops.listPayoutsByStatus.bind(ops),
      updateIfStatus: ops.updateTransactionIfStatus.bind(ops),
      update: ops.updateTransaction.bind(ops),
      changeStatus: ops.changeTransactionStatus.bind(ops),
      reserveRefund: ops.reserveRefund.bind(ops),
      releaseRefund: ops.releaseRefund.bind(ops),
      insertStatusChange: ops.insertStatusChange.bind(ops),
      listStatusChanges: ops.listStatusChanges.bind(ops),
      insertDueAction: ops.insertDueAction.bind(ops),
      claimDueActions: ops.claimDueActions.bind(ops),
      markDueActionDone: ops.markDueActionDone.bind(ops),
      deferDueAction: ops.deferDueAction.bind(ops),
      findStuck: ops.findStuckTransactions.bind(ops),
      findInterruptedPayouts: ops.findInterruptedPayouts.bind(ops),
      search: bo.searchTransactions.bind(bo),
      listRefundsOf: bo.listRefundsOf.bind(bo),
      listCascade: bo.listCascade.bind(bo),
      activitySince: bo.activitySince.bind(bo),
      countByStatus: bo.countTransactions.bind(bo),
    },
    notifications: {
      insert: ops.insertNotification.bind(ops),
      supersedeIfNewer: ops.supersedeIfNewer.bind(ops),
      listOfTransaction: ops.listNotifications.bind(ops),
      listOfSubscription: ops.listSubscriptionEvents.bind(ops),
      lease: ops.leaseNotifications.bind(ops),
      finishAttempt: ops.finishNotificationAttempt.bind(ops),
      listAttempts: ops.listNotificationAttempts.bind(ops),
      get: ops.getNotification.bind(ops),
      reschedule: ops.rescheduleNotification.bind(ops),
      countUnacknowledged: bo.countUnacknowledgedNotifications.bind(bo),
    },
    cards: {
      insertIfAbsent: ops.insertCardIfAbsent.bind(ops),
      find: ops.findCard.bind(ops),
      get: ops.getCard.bind(ops),
    },
    sandboxClock: {
      getOffset: ops.getSandboxOffset.bind(ops),
      setOffset: ops.setSandboxOffset.bind(ops),
    },
    subscriptions: {
      insertPlan: ops.insertPlan.bind(ops),
      getPlan: ops.getPlan.bind(ops),
      listPlans: ops.listPlans.bind(ops),
      updatePlan: ops.updatePlan.bind(ops),
      insert: ops.insertSubscription.bind(ops),
      findActive: ops.findActiveSubscription.bind(ops),
      get: ops.getSubscription.bind(ops),
      lock: ops.lockSubscription.bind(ops),
      list: ops.listSubscriptions.bind(ops),
      updateIfVersion: ops.updateSubscriptionIfVersion.bind(ops),
      insertChange: ops.insertSubscriptionChange.bind(ops),
      listChanges: ops.listSubscriptionChanges.bind(ops),
      claimDue: ops.claimDueSubscriptions.bind(ops),
      setLease: ops.setSubscriptionLease.bind(ops),
      countDue: ops.countDueSubscriptions.bind(ops),
      listAll: bo.listSubscriptions.bind(bo),
      getAny: bo.getSubscription.bind(bo),
      listAllPlans: bo.listPlans.bind(bo),
    },
    cashier: {
      insertSession: ops.insertCashierSession.bind(ops),
      getSession: ops.getCashierSession.bind(ops),
      lockSession: ops.lockCashierSession.bind(ops),
      findSessionByOrder: ops.findCashierSessionByOrder.bind(ops),
      findOrderSummary: ops.findOrderSummary.bind(ops),
      findSessionByAuthToken: ops.findCashierSessionByAuthToken.bind(ops),
      updateSessionIf: ops.updateCashierSessionIf.bind(ops),
      insertToken: ops.insertCashierToken.bind(ops),
      findToken: ops.findCashierToken.bind(ops),
      useToken: ops.useCashierToken.bind(ops),
      listTransactions: ops.listCashierTransactions.bind(ops),
      claimExpiredOrders: ops.claimExpiredOrders.bind(ops),
      getCustomer: ops.getCashierCustomer.bind(ops),
      upsertCustomer: ops.upsertCashierCustomer.bind(ops),
    },
    backoffice: bo,
  };
}
