// The notifications outbox over Kysely (notification-store.ts): notifications written with the
// status change they tell of, leased to the delivery worker, and their attempts. The lease and
// an attempt's end are on the path of every notification: hot SQL text (sql-text.ts), and on
// PostgreSQL an attempt's end is one statement (sql/dialect.ts).
import { CompiledQuery, type Insertable } from 'kysely';
import type { NotificationRow, NotificationTable } from '../schema.js';
import type { SqlText } from '../sql-text.js';
import {
  type AttemptFinish,
  FINISH_BATCH_MAX,
  type FinishOutcome,
  type LeaseTimes,
  type NotificationStore,
} from '../notification-store.js';
import type { Executor, SqlContext } from './context.js';
import { boundLimit, hasDataModifyingCtes, insertReturningId, leaseStatement, sqliteOwnTransaction } from './dialect.js';

/** Why a notification was superseded: shown to the operator as its last_error. */
export const SUPERSEDED_REASON = 'superseded by a later status of the transaction';

/** A new notification's columns: the resend bound counts from creation unless the caller says otherwise (migration 0007). */
export function notificationValues(row: Insertable<NotificationTable>): Insertable<NotificationTable> {
  return { ...row, bound_from_ms: row.bound_from_ms ?? row.created_at_ms };
}

/** In an UPDATE of notifications: the row tells of a transaction that has a newer notification (it is superseded if left pending). */
const HAS_NEWER_OF_TRANSACTION = `(notifications.trace_id is not null and exists (select 1 from notifications as newer
    where newer.trace_id = notifications.trace_id and newer.id > notifications.id))`;

/**
 * About the notification row `notifications`: a later notification of its transaction or
 * subscription is pending, which in-order delivery holds back while this one is pending (the
 * lease's own checks, turned around; both have a pending-only index, migration 0008).
 */
const HAS_NEWER_PENDING = `(exists (select 1 from notifications as newer where newer.trace_id = notifications.trace_id
      and newer.id > notifications.id and newer.state = 'pending')
    or exists (select 1 from notifications as newer where newer.subscription_id = notifications.subscription_id
      and newer.id > notifications.id and newer.state = 'pending'))`;

/**
 * PostgreSQL types of the notification columns, for INSERT … SELECT with parameters: there the
 * parameters' types are not taken from the target columns, so each is cast.
 */
const NOTIFICATION_COLUMN_TYPES: Readonly<Record<keyof NotificationTable, 'bigint' | 'integer' | 'text'>> = {
  id: 'bigint',
  trace_id: 'bigint',
  kind: 'text',
  subscription_id: 'text',
  merchant_id: 'text',
  url: 'text',
  payload_json: 'text',
  state: 'text',
  attempts: 'integer',
  next_attempt_at_ms: 'bigint',
  lease_until_ms: 'bigint',
  lease_owner: 'text',
  last_error: 'text',
  created_at_ms: 'bigint',
  updated_at_ms: 'bigint',
  bound_from_ms: 'bigint',
};

/**
 * PostgreSQL: `insert into notifications … select … from <source>`, for a data-modifying CTE that
 * writes the notification only when the CTE named `source` answered a row (the status change or
 * the new transaction it tells of). Its values are appended to `parameters`, each placeholder cast.
 */
export function notificationInsertFrom(source: string, notification: Insertable<NotificationTable>, parameters: unknown[]): string {
  const values = notificationValues(notification);
  const columns = Object.keys(values).filter((column) => values[column as keyof typeof values] !== undefined) as (keyof typeof values)[];
  // The cast table doubles as the list of column names that may be written into the SQL text.
  for (const column of columns)
    if (!Object.hasOwn(NOTIFICATION_COLUMN_TYPES, column)) throw new Error(`unknown notification column ${column}`);
  const placeholders = columns.map((column, index) => `$${parameters.length + index + 1}::${NOTIFICATION_COLUMN_TYPES[column]}`);
  parameters.push(...columns.map((column) => values[column]));
  return `insert into notifications (${columns.map((column) => `"${column}"`).join(', ')}) select ${placeholders.join(', ')} from ${source}`;
}

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
  // and the outer re-check is left out there (sql/dialect.ts leaseStatement): with it, SQLite's
  // planner walked every pending notification (thousands while resends wait) to test each
  // against the candidate list, and leasing slowed down as the outbox grew. The candidates and
  // both in-order checks each have a pending-only index (migration 0008), so no plan reads
  // delivered or waiting rows per candidate.
  const candidates = `select n.id from notifications as n
      where n.state = 'pending' and n.next_attempt_at_ms <= ? and (n.lease_until_ms is null or n.lease_until_ms < ?)
        and not exists (select 1 from notifications as older where older.trace_id = n.trace_id and older.id < n.id and older.state = 'pending')
        and not exists (select 1 from notifications as older where older.subscription_id = n.subscription_id and older.id < n.id and older.state = 'pending')
      order by n.next_attempt_at_ms, n.id limit ${boundLimit(text.dialect)}`;
  const update = `update notifications set lease_until_ms = ?, lease_owner = ?, updated_at_ms = ? where id in (select id from candidates)`;
  return leaseStatement(text, candidates, update, [due_ms, wall_ms, limit, wall_ms + lease_ms, owner, due_ms], wall_ms);
}

export class SqlNotificationStore implements NotificationStore {
  private readonly db: Executor;

  constructor(private readonly ctx: SqlContext) {
    this.db = ctx.db;
  }

  async insert(row: Insertable<NotificationTable>): Promise<number> {
    const id = await insertReturningId(this.ctx, 'notifications', notificationValues(row), 'id');
    if (id === null) throw new Error('notification insert returned no id');
    this.ctx.touchedNotifications();
    return id;
  }

  async listOfTransaction(trace_id: number): Promise<NotificationRow[]> {
    return this.db.selectFrom('notifications').selectAll().where('trace_id', '=', trace_id).orderBy('id').execute();
  }

  async listOfSubscription(subscription_id: string): Promise<NotificationRow[]> {
    return this.db
      .selectFrom('notifications')
      .selectAll()
      .where('kind', '=', 'subscription_event')
      .where('subscription_id', '=', subscription_id)
      .orderBy('id')
      .execute();
  }

  async get(id: number): Promise<NotificationRow | null> {
    return (await this.db.selectFrom('notifications').selectAll().where('id', '=', id).executeTakeFirst()) ?? null;
  }

  async lease(at: LeaseTimes, limit: number, lease_ms: number, owner: string): Promise<NotificationRow[]> {
    // On SQLite a lease joins the next group commit instead of committing alone (sql/dialect.ts
    // sqliteOwnTransaction). A lease lost to a crash costs nothing: the notification stays
    // pending and unleased, and is leased again.
    const own_transaction = sqliteOwnTransaction(this.ctx);
    if (own_transaction) return own_transaction((tx) => tx.notifications.lease(at, limit, lease_ms, owner));
    // Due on the gateway clock, leased on the wall clock (LeaseTimes): a sandbox clock jump makes
    // resends due but never ends a lease early.
    // One statement: UPDATE … WHERE id IN (due, unleased candidates) RETURNING. The candidates
    // skip any notification with an older one of the same transaction still pending (in-order
    // delivery). On PostgreSQL the candidates are locked with SKIP LOCKED, so instances leasing at
    // the same moment take disjoint sets, and the outer condition re-checks the lease on the
    // locked row, so a notification is leased to one owner at a time.
    const query = leaseNotificationsQuery(this.ctx.text, at, limit, lease_ms, owner);
    const leased = await this.ctx.rows<NotificationRow>(query);
    return leased.sort((a, b) => a.next_attempt_at_ms - b.next_attempt_at_ms || a.id - b.id);
  }

  async finishAttempts(finishes: readonly AttemptFinish[], now_ms: number): Promise<FinishOutcome[]> {
    if (finishes.length > FINISH_BATCH_MAX) throw new Error(`finishAttempts: ${finishes.length} attempts, at most ${FINISH_BATCH_MAX}`);
    if (new Set(finishes.map((f) => f.attempt.notification_id)).size !== finishes.length)
      throw new Error('finishAttempts: a notification named twice');
    if (finishes.length === 0) return [];
    // Atomic on its own (notification-store.ts): one statement on PostgreSQL, a transaction on SQLite.
    const own_transaction = sqliteOwnTransaction(this.ctx);
    if (own_transaction) return own_transaction((tx) => tx.notifications.finishAttempts(finishes, now_ms));
    if (hasDataModifyingCtes(this.ctx.dialect)) return this.finishOnPostgres(finishes, now_ms);
    const outcomes: FinishOutcome[] = [];
    for (const finish of finishes) outcomes.push(await this.finishOnSqlite(finish, now_ms));
    return outcomes;
  }

  /**
   * PostgreSQL: every attempt in one statement, atomic by itself, whose text is the same however
   * many attempts it carries (one prepared statement): the attempts come in as one array per
   * column, the UPDATE changes the rows whose lease their owner still holds, and an attempt is
   * recorded only for a row the UPDATE changed. Left pending, a notification is superseded if a
   * newer one of its transaction exists (§5 of docs/notifications.md), decided in the same UPDATE.
   */
  private async finishOnPostgres(finishes: readonly AttemptFinish[], now_ms: number): Promise<FinishOutcome[]> {
    const column = <T>(pick: (finish: AttemptFinish) => T) => finishes.map(pick);
    const supersede = `(ended.state = 'pending' and ${HAS_NEWER_OF_TRANSACTION})`;
    const finished = await this.ctx.rows<{ id: string | number; state: string; next_waiting: boolean }>(
      CompiledQuery.raw(
        `with ended as (select * from unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::integer[],
            $7::integer[], $8::bigint[], $9::integer[], $10::integer[], $11::text[], $12::text[], $13::text[])
            as e(id, owner, state, last_error, next_attempt_at_ms, attempts, attempt_no, started_at_ms, duration_ms, http_status, reply_excerpt, outcome, reason)),
          finished as (update notifications set state = case when ${supersede} then 'superseded' else ended.state end,
            last_error = case when ${supersede} then $14 else ended.last_error end, next_attempt_at_ms = ended.next_attempt_at_ms,
            attempts = ended.attempts, lease_until_ms = null, lease_owner = null, updated_at_ms = $15
            from ended where notifications.id = ended.id and notifications.lease_owner = ended.owner
            returning notifications.id, notifications.state, (notifications.state <> 'pending' and ${HAS_NEWER_PENDING}) as next_waiting),
          recorded as (insert into notification_attempts
            (notification_id, attempt_no, started_at_ms, duration_ms, http_status, reply_excerpt, outcome, reason)
            select ended.id, ended.attempt_no, ended.started_at_ms, ended.duration_ms, ended.http_status, ended.reply_excerpt, ended.outcome, ended.reason
            from ended join finished on finished.id = ended.id returning notification_id)
        select finished.id, finished.state, finished.next_waiting from finished join recorded on recorded.notification_id = finished.id`,
        [
          column((f) => f.attempt.notification_id),
          column((f) => f.owner),
          column((f) => f.patch.state),
          column((f) => f.patch.last_error),
          column((f) => f.patch.next_attempt_at_ms),
          column((f) => f.patch.attempts),
          column((f) => f.attempt.attempt_no),
          column((f) => f.attempt.started_at_ms),
          column((f) => f.attempt.duration_ms),
          column((f) => f.attempt.http_status ?? null),
          column((f) => f.attempt.reply_excerpt ?? null),
          column((f) => f.attempt.outcome),
          column((f) => f.attempt.reason),
          SUPERSEDED_REASON,
          now_ms,
        ],
      ),
    );
    const row_of = new Map(finished.map((row) => [Number(row.id), row]));
    return finishes.map((finish) => {
      const row = row_of.get(finish.attempt.notification_id);
      if (row === undefined) return 'lease_lost';
      if (row.state === 'superseded' && finish.patch.state === 'pending') return 'superseded';
      return row.next_waiting ? 'finished_with_next' : 'finished';
    });
  }

  /** SQLite, in the caller's transaction: one attempt's UPDATE, its record, and the state the UPDATE chose. */
  private async finishOnSqlite(finish: AttemptFinish, now_ms: number): Promise<FinishOutcome> {
    const { patch, attempt } = finish;
    const may_supersede = patch.state === 'pending';
    const state = may_supersede ? `case when ${HAS_NEWER_OF_TRANSACTION} then 'superseded' else ? end` : '?';
    const last_error = may_supersede ? `case when ${HAS_NEWER_OF_TRANSACTION} then ? else ? end` : '?';
    const update_sql = `update notifications set state = ${state}, last_error = ${last_error}, next_attempt_at_ms = ?, attempts = ?,
        lease_until_ms = null, lease_owner = null, updated_at_ms = ? where id = ? and lease_owner = ?`;
    const update_parameters = [
      patch.state,
      ...(may_supersede ? [SUPERSEDED_REASON] : []),
      patch.last_error,
      patch.next_attempt_at_ms,
      patch.attempts,
      now_ms,
      attempt.notification_id,
      finish.owner,
    ];
    if ((await this.ctx.changed(CompiledQuery.raw(update_sql, update_parameters))) !== 1) return 'lease_lost';
    await this.ctx.changed(this.ctx.text.insert('notification_attempts', attempt));
    if (!may_supersede) {
      // Out of pending: does a later notification it held back wait? (A look-up by primary key and two pending-only index probes.)
      const waiting = await this.ctx.rows<{ next_waiting: number }>(
        CompiledQuery.raw(`select ${HAS_NEWER_PENDING} as next_waiting from notifications where id = ?`, [attempt.notification_id]),
      );
      return waiting[0]?.next_waiting ? 'finished_with_next' : 'finished';
    }
    // The state the UPDATE chose (a look-up by primary key, cheaper than RETURNING).
    const [row] = await this.ctx.rows<{ state: string }>(
      CompiledQuery.raw('select state from notifications where id = ?', [attempt.notification_id]),
    );
    return row?.state === 'superseded' ? 'superseded' : 'finished';
  }

  async listAttempts(notification_id: number) {
    return this.db
      .selectFrom('notification_attempts')
      .select(['notification_id', 'attempt_no', 'started_at_ms', 'duration_ms', 'http_status', 'reply_excerpt', 'outcome', 'reason'])
      .where('notification_id', '=', notification_id)
      .orderBy('attempt_no')
      .execute();
  }

  async reschedule(id: number, next_attempt_at_ms: number, now_ms: number, lease_now_ms?: number): Promise<boolean> {
    // One conditional UPDATE: the lease is checked on the row it changes, so an attempt leased
    // in between (any instance) makes this change nothing rather than be overwritten. Clearing
    // the ended lease's owner means an attempt that outlived its lease cannot record over this.
    const result = await this.db
      .updateTable('notifications')
      .set({ state: 'pending', next_attempt_at_ms, bound_from_ms: now_ms, lease_until_ms: null, lease_owner: null, updated_at_ms: now_ms })
      .where('id', '=', id)
      .where((eb) =>
        lease_now_ms === undefined
          ? eb('lease_owner', 'is', null)
          : eb.or([eb('lease_until_ms', 'is', null), eb('lease_until_ms', '<', lease_now_ms)]),
      )
      .executeTakeFirst();
    const changed = Number(result.numUpdatedRows) === 1;
    if (changed) this.ctx.touchedNotifications();
    return changed;
  }

  async countUnacknowledged(merchant_id: string | null): Promise<number> {
    let query = this.db
      .selectFrom('notifications')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('state', 'in', ['pending', 'failed']);
    if (merchant_id !== null) query = query.where('merchant_id', '=', merchant_id);
    return Number((await query.executeTakeFirstOrThrow()).n);
  }
}
