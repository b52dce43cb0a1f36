// Every difference between the two databases in the store's Kysely code, one named function each
// with its reason; the modules (sql/*.ts) call these and never test the dialect themselves.
// Elsewhere, and only named here:
//   - bind placeholders, `?` on SQLite and `$n` on PostgreSQL: sql-text.ts (SqlText.placeholder,
//     and SqlText.fixed for a statement written by hand for each);
//   - the auto-increment id column (bigserial against integer autoincrement): migrations/columns.ts
//     autoId, and a few migrations' own branches;
//   - SQLite's two connections and its hot statements run straight on them (sqlite-driver.ts,
//     routed by SqlContext.execute in context.ts); PostgreSQL's pool (open.ts, Store.poolUse);
//   - a LIMIT given as a parameter: `? + 0` on SQLite (boundLimit below; sqlite-driver.ts does the
//     same for Kysely's LIMITs);
//   - PostgreSQL answers int8 as text unless parsed: open.ts parses it for the pool, and counts are
//     read through Number() on both;
//   - PostgreSQL's casts of the parameters of INSERT … SELECT in the data-modifying CTEs
//     (sql/transactions.ts NOTIFICATION_COLUMN_TYPES and the `::type` in those statements);
//   - a new transaction's drawn trace_id taken (insertUnlessKeyTaken, insertedOrKeyHolder): a
//     failed statement on SQLite; on PostgreSQL, where a failed statement ends the transaction
//     around it, no row answered.
import { CompiledQuery } from 'kysely';
import type { SqlText } from '../sql-text.js';
import type { Dialect } from '../store.js';
import type { Autocommit, SqlContext } from './context.js';

/**
 * A LIMIT given as a bound parameter, in SQL written by hand: `? + 0` on SQLite, which plans a
 * statement with a bare `limit ?` anew at every run (sqlite-driver.ts SqliteCompilerKeepingPlans).
 */
export function boundLimit(dialect: Dialect): string {
  return dialect === 'sqlite' ? '? + 0' : '?';
}

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
 * finishAttempts: one statement on PostgreSQL, hasDataModifyingCtes) and for the notification
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

/** A try of an insert under a drawn id (sql/fresh-trace-id.ts) whose id was taken: draw again. */
export const ID_TAKEN: unique symbol = Symbol('id taken');

/** SQLite: the error of an INSERT whose primary key is taken (better-sqlite3's extended result code). */
function isPrimaryKeyTaken(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/**
 * PostgreSQL: the end of a statement whose CTE `inserted` is an INSERT … ON CONFLICT DO NOTHING
 * RETURNING *: the row inserted, or else the row holding the key (`key_columns` equal to the
 * parameters from `$first_parameter` on, then the drawn id), or no row when the insert hit
 * another unique key (the id). Both reads are the one statement's, so a key taken and an id taken
 * are told apart without a second round trip. A holder with the drawn id itself is left out, so
 * a row answered with the drawn id is always the one inserted (that holder is found on the next
 * draw). A twin inserting the same key concurrently commits after this statement's snapshot: then
 * neither row is seen, the caller draws again, and its next statement sees the twin.
 */
export function insertedOrKeyHolder(table: string, key_columns: readonly string[], id_column: string, first_parameter: number): string {
  const condition = key_columns.map((column, i) => `"${column}" = $${first_parameter + i}`).join(' and ');
  return (
    `select * from inserted union all select * from "${table}" where ${condition} ` +
    `and "${id_column}" <> $${first_parameter + key_columns.length} and not exists (select 1 from inserted)`
  );
}

/**
 * INSERT of `row`, whose id column (`id_column`) is set, unless the unique key `key_columns` is
 * taken. Answers the row as stored, null when the key was taken, ID_TAKEN when the id was. One
 * statement on both stores, so atomic also outside a transaction.
 * SQLite: ON CONFLICT on the key; a taken id fails the statement (SQLITE_CONSTRAINT_PRIMARYKEY),
 * which undoes that statement alone, never the transaction (or the group commit) around it. No
 * RETURNING, which costs SQLite more than the insert (47 µs against 16 for a transaction row,
 * measured): the row is as the insert wrote it (`as_written`, from the columns' defaults).
 * PostgreSQL: a failed statement aborts the transaction around it, so ON CONFLICT DO NOTHING on
 * any key, RETURNING *, and the key's holder read in the same statement (insertedOrKeyHolder).
 */
export async function insertUnlessKeyTaken<R>(
  ctx: SqlContext,
  table: string,
  row: Readonly<Record<string, unknown>>,
  id_column: string,
  key_columns: readonly string[],
  as_written: () => R,
): Promise<R | null | typeof ID_TAKEN> {
  if (ctx.dialect === 'sqlite') {
    try {
      return (await ctx.changed(ctx.text.insert(table, row, { conflict_columns: key_columns }))) === 1 ? as_written() : null;
    } catch (error) {
      if (isPrimaryKeyTaken(error)) return ID_TAKEN;
      throw error;
    }
  }
  const insert = ctx.text.insert(table, row, { conflict_columns: 'any', returning: '*' });
  const [found] = await ctx.rows<Record<string, unknown>>(
    CompiledQuery.raw(
      `with inserted as (${insert.sql}) ${insertedOrKeyHolder(table, key_columns, id_column, insert.parameters.length + 1)}`,
      [...insert.parameters, ...key_columns.map((column) => row[column]), row[id_column]],
    ),
  );
  if (found === undefined) return ID_TAKEN;
  return Number(found[id_column]) === row[id_column] ? (found as R) : null;
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
 * SQLite has one writer and every commit waits for the disk (wal-sync.ts): concurrent
 * transactions are committed in groups (group-commit.ts), on by default. PostgreSQL commits
 * concurrent transactions on its own connections and groups their WAL flushes itself.
 */
export function commitsInGroups(dialect: Dialect, requested: boolean): boolean {
  return dialect === 'sqlite' && requested;
}
