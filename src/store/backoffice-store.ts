// What the back office reads and writes (issue 15, docs/backoffice.md): its users, their sessions,
// failed sign-ins, the audit log, and the searches, sums and processor webhook events its pages
// show. Part of the one store (Store.backoffice), apart from the payment paths so that those stay
// short to read; the same Kysely code serves SQLite and PostgreSQL. Every list is bounded by its
// caller's limit, and one that pages does so by a key (keyset), never by an offset.
import { type Kysely, sql } from 'kysely';
import type {
  AuditLogRow, AuditLogTable, BackofficeUserRow, Database, ProcessorEventOutcome, ProcessorEventRow, SubscriptionPlanRow, SubscriptionRow,
  TransactionRow,
} from './schema.js';
import type { Insertable } from 'kysely';

/** A transactions search; every field left out matches any transaction. */
export interface TransactionSearch {
  /** null: every merchant's (an operator). */
  readonly merchant_id: string | null;
  readonly trace_id?: number | undefined;
  /** The merchant's order_id: a cashier transaction's own order_id or its session's. */
  readonly order_id?: string | undefined;
  readonly pin?: string | undefined;
  readonly status?: string | undefined;
  readonly transaction_type?: string | undefined;
  readonly gateway_id?: string | undefined;
  /** Created at or after. */
  readonly created_from_ms?: number | undefined;
  /** Created before. */
  readonly created_before_ms?: number | undefined;
  readonly amount_min_minor?: number | undefined;
  readonly amount_max_minor?: number | undefined;
}

/** One day's transactions of one type, status and currency (the overview's sums). */
export interface ActivityRow {
  /** Days since the epoch (UTC). */
  readonly day: number;
  readonly transaction_type: string;
  readonly status: string;
  readonly currency: string;
  readonly count: number;
  readonly amount_minor: number;
}

export interface NewUserRow {
  readonly user_id: string;
  readonly email: string;
  readonly password_hash: string;
  readonly role: 'operator' | 'merchant';
  readonly merchant_id: string | null;
  readonly created_at_ms: number;
}

export interface BackOfficeStore {

  insertUser(row: NewUserRow): Promise<'created' | 'exists'>;
  findUserByEmail(email: string): Promise<BackofficeUserRow | null>;
  getUser(user_id: string): Promise<BackofficeUserRow | null>;
  /** Oldest first, at most `limit`; only one merchant's users when merchant_id is given. */
  listUsers(merchant_id: string | null, limit: number): Promise<BackofficeUserRow[]>;
  /** Disables (a time) or enables (null) a user; a disabled user's sessions are deleted with it. False when no such user. */
  setUserDisabled(user_id: string, disabled_at_ms: number | null): Promise<boolean>;

  /** Saving is a use of the session: last seen at now_ms. */
  saveSession(session_hash: string, user_id: string, data_json: string, expires_at_ms: number, now_ms: number): Promise<void>;
  /** The session's data while it has not expired at now_ms; null otherwise. Idle or not: the caller decides (it knows the time-out). */
  getSession(session_hash: string, now_ms: number): Promise<{ user_id: string; data_json: string; last_seen_at_ms: number } | null>;
  /**
   * Records a use at now_ms, unless the session was last seen before idle_since_ms (already idle)
   * or is gone: an instance that read it a moment earlier cannot bring an ended session back.
   * False when nothing was written.
   */
  touchSession(session_hash: string, now_ms: number, idle_since_ms: number): Promise<boolean>;
  /**
   * Deletes the session if it was last seen before idle_since_ms. True for the one caller that
   * deleted it, so that several instances seeing it at once record its end once.
   */
  endIdleSession(session_hash: string, idle_since_ms: number): Promise<boolean>;
  deleteSession(session_hash: string): Promise<void>;
  /** Sessions expired before now_ms, at most `limit` at a time; how many went. */
  deleteExpiredSessions(now_ms: number, limit: number): Promise<number>;

  recordSignInFailure(email: string, address: string, at_ms: number): Promise<void>;
  /** Failures for this e-mail at or after since_ms. */
  countSignInFailures(email: string, since_ms: number): Promise<number>;
  clearSignInFailures(email: string): Promise<void>;
  /** Until when this e-mail is refused at sign-in; null when it is not (or no longer) locked at now_ms. */
  signInLockedUntil(email: string, now_ms: number): Promise<number | null>;
  lockSignIn(email: string, until_ms: number): Promise<void>;

  insertAudit(row: Insertable<AuditLogTable>): Promise<void>;
  /** Newest first, from below `before_id`; one merchant's lines when merchant_id is given. */
  listAudit(merchant_id: string | null, before_id: number | null, limit: number): Promise<AuditLogRow[]>;
}

const DAY_MS = 86_400_000;

/**
 * The lists of processor events, apart so that a test reads their plans (migration 0017): each
 * walks its index from the newest end and stops at `limit`, however many events the gateway
 * has. event_id breaks ties of the same millisecond, so the order is the same on both databases.
 */
export const processorEventLists = {
  /** processor_events_trace, a partial index: the term on trace_id being set lets both planners use it. */
  ofTransaction: (db: Kysely<Database>, trace_id: number, limit: number) => db.selectFrom('processor_events').selectAll()
    .where('trace_id', '=', trace_id).where('trace_id', 'is not', null)
    .orderBy('received_at_ms', 'desc').orderBy('event_id', 'desc').limit(limit),
  /** processor_events_gateway, or processor_events_gateway_outcome for one outcome (an unmatched one is rare among many). */
  ofGateway: (db: Kysely<Database>, gateway_id: string, outcome: ProcessorEventOutcome | null, limit: number) => {
    let query = db.selectFrom('processor_events').selectAll().where('gateway_id', '=', gateway_id);
    if (outcome !== null) query = query.where('outcome', '=', outcome);
    return query.orderBy('received_at_ms', 'desc').orderBy('event_id', 'desc').limit(limit);
  },
};

export class SqlBackOfficeStore implements BackOfficeStore {
  constructor(private readonly db: Kysely<Database>) {}

  async searchTransactions(search: TransactionSearch, before_trace_id: number | null, limit: number): Promise<TransactionRow[]> {
    let query = this.db.selectFrom('transactions').selectAll();
    if (search.merchant_id !== null) query = query.where('merchant_id', '=', search.merchant_id);
    if (before_trace_id !== null) query = query.where('trace_id', '<', before_trace_id);
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
    if (search.amount_min_minor !== undefined) query = query.where('amount_minor', '>=', search.amount_min_minor);
    if (search.amount_max_minor !== undefined) query = query.where('amount_minor', '<=', search.amount_max_minor);
    return query.orderBy('trace_id', 'desc').limit(limit).execute();
  }

  async listRefundsOf(sale_trace_id: number, limit: number): Promise<TransactionRow[]> {
    return this.db.selectFrom('transactions').selectAll().where('reference_id', '=', sale_trace_id).where('transaction_type', '=', 'refund')
      .orderBy('trace_id').limit(limit).execute();
  }

  async listCascade(root_trace_id: number, limit: number): Promise<TransactionRow[]> {
    return this.db.selectFrom('transactions').selectAll()
      .where((eb) => eb.or([eb('trace_id', '=', root_trace_id), eb('cascade_root', '=', root_trace_id)]))
      .orderBy('cascade_level').limit(limit).execute();
  }

  async activitySince(merchant_id: string | null, since_ms: number): Promise<ActivityRow[]> {
    // Integer division on both databases (bigint / integer): the UTC day of each transaction.
    const day = sql<number>`created_at_ms / ${sql.lit(DAY_MS)}`;
    let query = this.db.selectFrom('transactions')
      .select([
        day.as('day'), 'transaction_type', 'status', 'currency',
        (eb) => eb.fn.countAll<number>().as('count'),
        (eb) => eb.fn.sum<number>('amount_minor').as('amount_minor'),
      ])
      .where('created_at_ms', '>=', since_ms);
    if (merchant_id !== null) query = query.where('merchant_id', '=', merchant_id);
    const rows = await query.groupBy([day, 'transaction_type', 'status', 'currency']).execute();
    return rows.map((r) => ({
      day: Number(r.day), transaction_type: r.transaction_type, status: r.status, currency: r.currency,
      count: Number(r.count), amount_minor: Number(r.amount_minor),
    }));
  }

  async countTransactions(merchant_id: string | null, transaction_type: string, status: string): Promise<number> {
    let query = this.db.selectFrom('transactions').select((eb) => eb.fn.countAll<number>().as('n'))
      .where('transaction_type', '=', transaction_type).where('status', '=', status);
    if (merchant_id !== null) query = query.where('merchant_id', '=', merchant_id);
    return Number((await query.executeTakeFirstOrThrow()).n);
  }

  async countUnacknowledgedNotifications(merchant_id: string | null): Promise<number> {
    let query = this.db.selectFrom('notifications').select((eb) => eb.fn.countAll<number>().as('n'))
      .where('state', 'in', ['pending', 'failed']);
    if (merchant_id !== null) query = query.where('merchant_id', '=', merchant_id);
    return Number((await query.executeTakeFirstOrThrow()).n);
  }

  async listSubscriptions(merchant_id: string | null, limit: number): Promise<SubscriptionRow[]> {
    let query = this.db.selectFrom('subscriptions').selectAll();
    if (merchant_id !== null) query = query.where('merchant_id', '=', merchant_id);
    return query.orderBy('created_at_ms', 'desc').orderBy('subscription_id', 'desc').limit(limit).execute();
  }

  async getSubscription(subscription_id: string): Promise<SubscriptionRow | null> {
    return (await this.db.selectFrom('subscriptions').selectAll().where('subscription_id', '=', subscription_id).executeTakeFirst()) ?? null;
  }

  async listPlans(merchant_id: string | null, limit: number): Promise<SubscriptionPlanRow[]> {
    let query = this.db.selectFrom('subscription_plans').selectAll().where('status', '<>', 'deleted');
    if (merchant_id !== null) query = query.where('merchant_id', '=', merchant_id);
    return query.orderBy('created_at_ms', 'desc').orderBy('plan_id', 'desc').limit(limit).execute();
  }

  async listProcessorEventsOf(trace_id: number, limit: number): Promise<ProcessorEventRow[]> {
    return processorEventLists.ofTransaction(this.db, trace_id, limit).execute();
  }

  async listGatewayProcessorEvents(gateway_id: string, outcome: ProcessorEventOutcome | null, limit: number): Promise<ProcessorEventRow[]> {
    return processorEventLists.ofGateway(this.db, gateway_id, outcome, limit).execute();
  }

  async insertUser(row: NewUserRow): Promise<'created' | 'exists'> {
    const inserted = await this.db.insertInto('backoffice_users').values({ ...row, disabled_at_ms: null })
      .onConflict((oc) => oc.column('email').doNothing()).executeTakeFirst();
    return Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1 ? 'created' : 'exists';
  }

  async findUserByEmail(email: string): Promise<BackofficeUserRow | null> {
    return (await this.db.selectFrom('backoffice_users').selectAll().where('email', '=', email).executeTakeFirst()) ?? null;
  }

  async getUser(user_id: string): Promise<BackofficeUserRow | null> {
    return (await this.db.selectFrom('backoffice_users').selectAll().where('user_id', '=', user_id).executeTakeFirst()) ?? null;
  }

  async listUsers(merchant_id: string | null, limit: number): Promise<BackofficeUserRow[]> {
    let query = this.db.selectFrom('backoffice_users').selectAll();
    if (merchant_id !== null) query = query.where('merchant_id', '=', merchant_id);
    return query.orderBy('created_at_ms').orderBy('user_id').limit(limit).execute();
  }

  async setUserDisabled(user_id: string, disabled_at_ms: number | null): Promise<boolean> {
    // Two statements, no transaction of its own (SQLite's writer is the store's, group-committed):
    // every request reads its user anyway and refuses a disabled one, sessions or not.
    const updated = await this.db.updateTable('backoffice_users').set({ disabled_at_ms }).where('user_id', '=', user_id).executeTakeFirst();
    if (disabled_at_ms !== null) await this.db.deleteFrom('backoffice_sessions').where('user_id', '=', user_id).execute();
    return Number(updated.numUpdatedRows) === 1;
  }

  async saveSession(session_hash: string, user_id: string, data_json: string, expires_at_ms: number, now_ms: number): Promise<void> {
    await this.db.insertInto('backoffice_sessions')
      .values({ session_hash, user_id, data_json, expires_at_ms, created_at_ms: now_ms, last_seen_at_ms: now_ms })
      .onConflict((oc) => oc.column('session_hash').doUpdateSet({ data_json, expires_at_ms, last_seen_at_ms: now_ms }))
      .execute();
  }

  async getSession(session_hash: string, now_ms: number): Promise<{ user_id: string; data_json: string; last_seen_at_ms: number } | null> {
    const row = await this.db.selectFrom('backoffice_sessions').select(['user_id', 'data_json', 'last_seen_at_ms'])
      .where('session_hash', '=', session_hash).where('expires_at_ms', '>', now_ms).executeTakeFirst();
    // PostgreSQL answers a bigint as text.
    return row === undefined ? null : { user_id: row.user_id, data_json: row.data_json, last_seen_at_ms: Number(row.last_seen_at_ms) };
  }

  async touchSession(session_hash: string, now_ms: number, idle_since_ms: number): Promise<boolean> {
    const updated = await this.db.updateTable('backoffice_sessions').set({ last_seen_at_ms: now_ms })
      .where('session_hash', '=', session_hash).where('last_seen_at_ms', '>=', idle_since_ms).executeTakeFirst();
    return Number(updated.numUpdatedRows) === 1;
  }

  async endIdleSession(session_hash: string, idle_since_ms: number): Promise<boolean> {
    const deleted = await this.db.deleteFrom('backoffice_sessions')
      .where('session_hash', '=', session_hash).where('last_seen_at_ms', '<', idle_since_ms).executeTakeFirst();
    return Number(deleted.numDeletedRows) === 1;
  }

  async deleteSession(session_hash: string): Promise<void> {
    await this.db.deleteFrom('backoffice_sessions').where('session_hash', '=', session_hash).execute();
  }

  async deleteExpiredSessions(now_ms: number, limit: number): Promise<number> {
    const expired = this.db.selectFrom('backoffice_sessions').select('session_hash').where('expires_at_ms', '<=', now_ms).limit(limit);
    const deleted = await this.db.deleteFrom('backoffice_sessions').where('session_hash', 'in', expired).executeTakeFirst();
    return Number(deleted.numDeletedRows);
  }

  async recordSignInFailure(email: string, address: string, at_ms: number): Promise<void> {
    await this.db.insertInto('backoffice_sign_in_failures').values({ email, address, at_ms }).execute();
  }

  async countSignInFailures(email: string, since_ms: number): Promise<number> {
    const row = await this.db.selectFrom('backoffice_sign_in_failures').select((eb) => eb.fn.countAll<number>().as('n'))
      .where('email', '=', email).where('at_ms', '>=', since_ms).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async clearSignInFailures(email: string): Promise<void> {
    await this.db.deleteFrom('backoffice_sign_in_failures').where('email', '=', email).execute();
  }

  async signInLockedUntil(email: string, now_ms: number): Promise<number | null> {
    const row = await this.db.selectFrom('backoffice_sign_in_locks').select('until_ms').where('email', '=', email)
      .where('until_ms', '>', now_ms).executeTakeFirst();
    return row === undefined ? null : Number(row.until_ms);
  }

  async lockSignIn(email: string, until_ms: number): Promise<void> {
    await this.db.insertInto('backoffice_sign_in_locks').values({ email, until_ms })
      .onConflict((oc) => oc.column('email').doUpdateSet({ until_ms })).execute();
  }

  async insertAudit(row: Insertable<AuditLogTable>): Promise<void> {
    await this.db.insertInto('audit_log').values(row).execute();
  }

  async listAudit(merchant_id: string | null, before_id: number | null, limit: number): Promise<AuditLogRow[]> {
    let query = this.db.selectFrom('audit_log').selectAll();
    if (merchant_id !== null) query = query.where('merchant_id', '=', merchant_id);
    if (before_id !== null) query = query.where('id', '<', before_id);
    return query.orderBy('id', 'desc').limit(limit).execute();
  }
}
