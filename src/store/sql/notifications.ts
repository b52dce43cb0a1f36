// The notifications outbox over Kysely (notification-store.ts): notifications written with the
// status change they tell of, leased to the delivery worker, and their attempts. The lease and
// an attempt's end are on the path of every notification: hot SQL text (sql-text.ts), and on
// PostgreSQL an attempt's end is one statement (sql/dialect.ts).
import { CompiledQuery, type Insertable } from 'kysely';
import type { NotificationAttemptTable, NotificationRow, NotificationTable } from '../schema.js';
import type { SqlText } from '../sql-text.js';
import type { FinishOutcome, LeaseTimes, NotificationStore } from '../notification-store.js';
import type { Executor, SqlContext } from './context.js';
import { hasDataModifyingCtes, insertReturningId, leaseStatement, sqliteOwnTransaction } from './dialect.js';

/** Why a notification was superseded: shown to the operator as its last_error. */
export const SUPERSEDED_REASON = 'superseded by a later status of the transaction';

/** A new notification's columns: the resend bound counts from creation unless the caller says otherwise (migration 0007). */
export function notificationValues(row: Insertable<NotificationTable>): Insertable<NotificationTable> {
  return { ...row, bound_from_ms: row.bound_from_ms ?? row.created_at_ms };
}

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
      order by n.next_attempt_at_ms, n.id limit ?`;
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

  async finishAttempt(
    notification_id: number,
    owner: string,
    patch: Pick<NotificationRow, 'state' | 'next_attempt_at_ms' | 'last_error'> & { attempts: number },
    attempt: Insertable<NotificationAttemptTable>,
    now_ms: number,
  ): Promise<FinishOutcome> {
    // Atomic on its own (notification-store.ts): one statement on PostgreSQL, a transaction on SQLite.
    const own_transaction = sqliteOwnTransaction(this.ctx);
    if (own_transaction) return own_transaction((tx) => tx.notifications.finishAttempt(notification_id, owner, patch, attempt, now_ms));
    // Left pending, it is superseded if a newer notification of its transaction exists (§5 of
    // docs/notifications.md): decided in the same UPDATE, not by a statement of its own.
    const may_supersede = patch.state === 'pending';
    const newer = `(notifications.trace_id is not null and exists (select 1 from notifications as newer
        where newer.trace_id = notifications.trace_id and newer.id > notifications.id))`;
    const state = may_supersede ? `case when ${newer} then 'superseded' else ? end` : '?';
    const last_error = may_supersede ? `case when ${newer} then ? else ? end` : '?';
    const update_sql = `update notifications set state = ${state}, last_error = ${last_error}, next_attempt_at_ms = ?, attempts = ?,
        lease_until_ms = null, lease_owner = null, updated_at_ms = ? where id = ? and lease_owner = ?`;
    const update_parameters = [
      patch.state,
      ...(may_supersede ? [SUPERSEDED_REASON] : []),
      patch.last_error,
      patch.next_attempt_at_ms,
      patch.attempts,
      now_ms,
      notification_id,
      owner,
    ];
    if (hasDataModifyingCtes(this.ctx.dialect)) {
      // One statement, atomic by itself: the attempt is recorded only for the row the UPDATE changed.
      let n = 0;
      const numbered = update_sql.replace(/\?/g, () => `$${++n}`);
      const recorded = await this.ctx.rows<{ state: string }>(
        CompiledQuery.raw(
          `with finished as (${numbered} returning id, state), recorded as (insert into notification_attempts ` +
            '(notification_id, attempt_no, started_at_ms, duration_ms, http_status, reply_excerpt, outcome, reason) ' +
            `select id, $${n + 1}::integer, $${n + 2}::bigint, $${n + 3}::integer, $${n + 4}::integer, $${n + 5}::text, $${n + 6}::text, $${n + 7}::text ` +
            'from finished returning notification_id) select finished.state from finished join recorded on recorded.notification_id = finished.id',
          [
            ...update_parameters,
            attempt.attempt_no,
            attempt.started_at_ms,
            attempt.duration_ms,
            attempt.http_status ?? null,
            attempt.reply_excerpt ?? null,
            attempt.outcome,
            attempt.reason,
          ],
        ),
      );
      if (recorded.length !== 1) return 'lease_lost';
      return recorded[0]!.state === 'superseded' && may_supersede ? 'superseded' : 'finished';
    }
    if ((await this.ctx.changed(CompiledQuery.raw(update_sql, update_parameters))) !== 1) return 'lease_lost';
    await this.ctx.changed(this.ctx.text.insert('notification_attempts', attempt));
    if (!may_supersede) return 'finished';
    // SQLite, in this transaction: the state the UPDATE chose (a look-up by primary key, cheaper than RETURNING).
    const [row] = await this.ctx.rows<{ state: string }>(
      CompiledQuery.raw('select state from notifications where id = ?', [notification_id]),
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
