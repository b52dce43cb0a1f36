// Every difference between the two databases in the store's Kysely code, one named function each
// with its reason; the modules (sql/*.ts) call these and never test the dialect themselves.
// Elsewhere, and only named here:
//   - bind placeholders, `?` on SQLite and `$n` on PostgreSQL: sql-text.ts (SqlText.placeholder,
//     and SqlText.fixed for a statement written by hand for each);
//   - the auto-increment id column (bigserial against integer autoincrement): migrations/columns.ts
//     autoId, and a few migrations' own branches;
//   - SQLite's two connections and its hot statements run straight on them (sqlite-driver.ts,
//     routed by SqlContext.execute in context.ts); PostgreSQL's pool (open.ts, Store.poolUse);
//   - PostgreSQL answers int8 as text unless parsed: open.ts parses it for the pool, and counts are
//     read through Number() on both;
//   - PostgreSQL's casts of the parameters of INSERT … SELECT in the data-modifying CTEs
//     (sql/transactions.ts NOTIFICATION_COLUMN_TYPES and the `::type` in those statements).
import type { CompiledQuery } from 'kysely';
import type { SqlText } from '../sql-text.js';
import type { Dialect } from '../store.js';
import type { Autocommit, SqlContext } from './context.js';

/**
 * A row read to be changed in this transaction. PostgreSQL: FOR UPDATE, so a concurrent
 * transaction changing the same row waits for this one's commit. SQLite has no row locks and
 * needs none: its transactions are already serialized (one writer).
 */
export function lockForUpdate<Q extends { forUpdate(): Q }>(dialect: Dialect, query: Q): Q {
  return dialect === 'postgres' ? query.forUpdate() : query;
}

/**
 * Work claimed by a worker (due actions, stuck transactions, renewals, expired orders).
 * PostgreSQL: FOR UPDATE SKIP LOCKED, so instances sharing the database claim disjoint sets
 * without waiting for each other. SQLite: serialized by its one writer, nothing to skip.
 */
export function claimSkippingLocked<Q extends { forUpdate(): Q; skipLocked(): Q }>(dialect: Dialect, query: Q): Q {
  return dialect === 'postgres' ? query.forUpdate().skipLocked() : query;
}

/**
 * PostgreSQL runs INSERT and UPDATE inside WITH (data-modifying CTEs): a step of several writes
 * that depend on each other (reserve and its first status change, a status change with its
 * history row and notification, an attempt's end and its record) is one statement, one round
 * trip and atomic by itself. SQLite's WITH holds only SELECTs: there the step is several
 * statements, in the caller's transaction or one of its own (sqliteOwnTransaction).
 */
export function hasDataModifyingCtes(dialect: Dialect): boolean {
  return dialect === 'postgres';
}

/**
 * SQLite, outside a transaction: the store's function that runs a step in a transaction of its
 * own, for a step of several statements that must be atomic also outside one (reserveWithChange,
 * finishAttempt: one statement on PostgreSQL, hasDataModifyingCtes) and for the notification
 * lease, which then joins the next group commit instead of committing alone (alone, each lease
 * was a COMMIT with its own fsync on the event loop). Null inside a transaction (atomic already)
 * and on PostgreSQL.
 */
export function sqliteOwnTransaction(ctx: SqlContext): Autocommit['transaction'] | null {
  return ctx.dialect === 'sqlite' && ctx.autocommit !== null ? ctx.autocommit.transaction : null;
}

/**
 * SQLite: an INSERT's new rowid without RETURNING, which costs SQLite more than the insert
 * itself (47 µs against 16 for a transaction row, measured); null when nothing was inserted.
 */
async function insertedRowid(ctx: SqlContext, query: CompiledQuery): Promise<number | null> {
  const result = await ctx.execute(query);
  return Number(result.numAffectedRows ?? 0n) === 1 && result.insertId !== undefined ? Number(result.insertId) : null;
}

/**
 * INSERT of `row` (ON CONFLICT (conflict_columns) DO NOTHING when given) answering the new row's
 * id, or null when nothing was inserted: RETURNING on PostgreSQL, the connection's rowid on
 * SQLite (insertedRowid).
 */
export async function insertReturningId(
  ctx: SqlContext,
  table: string,
  row: Readonly<Record<string, unknown>>,
  id_column: string,
  conflict_columns?: readonly string[],
): Promise<number | null> {
  if (ctx.dialect === 'sqlite') return insertedRowid(ctx, ctx.text.insert(table, row, conflict_columns ? { conflict_columns } : {}));
  const [inserted] = await ctx.rows<Record<string, unknown>>(
    ctx.text.insert(table, row, conflict_columns ? { conflict_columns, returning: id_column } : { returning: id_column }),
  );
  return inserted ? Number(inserted[id_column]) : null;
}

/**
 * INSERT … ON CONFLICT DO NOTHING answering the row as stored, or null when the key was taken.
 * PostgreSQL: RETURNING * (no second round trip). SQLite, where RETURNING costs more than the
 * insert: the rowid of the insert (insertedRowid) and the row as the insert wrote it
 * (`as_written`, from the columns' defaults). One statement on both, so atomic also outside a
 * transaction.
 */
export async function insertReturningRow<R>(
  ctx: SqlContext,
  table: string,
  row: Readonly<Record<string, unknown>>,
  conflict_columns: readonly string[],
  as_written: (id: number) => R,
): Promise<R | null> {
  if (ctx.dialect === 'sqlite') {
    const id = await insertedRowid(ctx, ctx.text.insert(table, row, { conflict_columns }));
    return id === null ? null : as_written(id);
  }
  const [inserted] = await ctx.rows<R>(ctx.text.insert(table, row, { conflict_columns, returning: '*' }));
  return inserted ?? null;
}

/**
 * The notification lease statement (sql/notifications.ts leaseNotificationsQuery) from its
 * candidates and its UPDATE, `parameters` being theirs. PostgreSQL: the candidates are locked
 * with SKIP LOCKED, so instances leasing at the same moment take disjoint sets, and the UPDATE
 * re-checks the lease on the locked row (one more parameter, wall_ms), so a notification is
 * leased to one owner at a time. SQLite runs the statement under its one writer, so the
 * candidates are the rows it updates and the re-check is left out: with it, SQLite's planner
 * walked every pending notification to test each against the candidate list.
 */
export function leaseStatement(text: SqlText, candidates: string, update: string, parameters: unknown[], wall_ms: number): CompiledQuery {
  return text.fixed(
    'lease_notifications',
    `with candidates as materialized (${candidates}) ${update} returning *`,
    `with candidates as materialized (${candidates} for update skip locked) ${update}
       and state = 'pending' and (lease_until_ms is null or lease_until_ms < ?) returning *`,
    text.dialect === 'sqlite' ? parameters : [...parameters, wall_ms],
  );
}

/**
 * SQLite has one writer and every COMMIT waits for the disk (synchronous=FULL): concurrent
 * transactions are committed in groups (group-commit.ts), on by default. PostgreSQL commits
 * concurrent transactions on its own connections and groups their WAL flushes itself.
 */
export function commitsInGroups(dialect: Dialect, requested: boolean): boolean {
  return dialect === 'sqlite' && requested;
}
