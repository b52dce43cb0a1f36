// The Kysely driver of the embedded store. Kysely's own SqliteDriver has one connection behind a
// mutex, held from BEGIN to COMMIT: while a transaction waits between two of its statements,
// every other query of the process (a merchant lookup, an idempotency look-up, /healthz) waits
// too, so under load the whole gateway runs one request at a time. This driver keeps two
// connections to the same file (WAL mode):
//
//   - the writer: every transaction, and every statement that is not a plain SELECT, behind the
//     mutex (one writer, as SQLite requires; a transaction holds it from BEGIN to COMMIT);
//   - the reader (query_only): plain SELECTs outside a transaction while a transaction is open
//     on the writer, without waiting. WAL gives each one the last committed state, never a
//     transaction's uncommitted writes.
//
// A plain SELECT outside a transaction goes to the writer itself when no transaction is open on
// it (it then holds exactly the committed state): SQLite drops a connection's whole page cache
// when another connection has committed since its last read, so under a stream of commits every
// read on the reader starts from a cold cache (about 24 µs a key look-up against 14 µs on the
// writer, whose cache stays warm: measured). better-sqlite3 runs each statement to its end, so
// nothing can open a transaction in between.
//
// Inside a transaction every statement, SELECTs included, goes to the writer, so a transaction
// reads its own writes. A COMMIT, and a write outside a transaction, returns to its caller only
// once wal-sync.ts has the WAL on disk; the writer is free for the next transaction meanwhile. One
// that changed nothing waits only for what it may have read (`synced`).
// better-sqlite3 is synchronous, so a statement runs to its end on the event loop; prepared
// statements are cached per connection by their SQL text, and a LIMIT is compiled so that SQLite
// keeps their plans (SqliteCompilerKeepingPlans).
import type BetterSqlite3 from 'better-sqlite3';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type LimitNode,
  type QueryCompiler,
  type QueryResult,
  RawNode,
  SelectQueryNode,
  SqliteDialect,
  SqliteQueryCompiler,
  ValueNode,
} from 'kysely';
import type { WalSync } from './wal-sync.js';

const STATEMENT_CACHE_SIZE = 500;
/**
 * Longer SQL is prepared for each use, not kept: a prepared statement's native memory grows with its
 * text (an INSERT of 500 rows holds about 0.5 MB), and 500 such statements in the cache would hold
 * hundreds of MB. The store's own statements are all far shorter; only a statement whose text
 * grows with its data (a list of values) comes near.
 */
const STATEMENT_CACHED_MAX_CHARS = 8_192;

class StatementCache {
  private readonly statements = new Map<string, BetterSqlite3.Statement>();
  /**
   * Set by the first statement that changed the database since `wrote` was last cleared (at BEGIN,
   * and before a write outside a transaction): a transaction that changed nothing has nothing of
   * its own to sync.
   */
  wrote = false;
  constructor(readonly db: BetterSqlite3.Database) {}

  get(sql_text: string): BetterSqlite3.Statement {
    let statement = this.statements.get(sql_text);
    if (statement === undefined) {
      statement = this.db.prepare(sql_text);
      if (sql_text.length > STATEMENT_CACHED_MAX_CHARS) return statement;
      // Bounded: generated SQL has few shapes, but a run-away set must not grow memory for ever.
      if (this.statements.size >= STATEMENT_CACHE_SIZE) this.statements.delete(this.statements.keys().next().value!);
      this.statements.set(sql_text, statement);
    }
    return statement;
  }

  /** Statements kept prepared now (tests). */
  get size(): number {
    return this.statements.size;
  }
}

/** A statement that changes rows only when it reports changing some (DDL, say, reports none): those are never taken as changing nothing. */
const ROW_CHANGES_ONLY = /^(insert|update|delete|replace)\b/i;

function run<R>(cache: StatementCache, query: CompiledQuery): QueryResult<R> {
  const statement = cache.get(query.sql);
  if (statement.reader) {
    const rows = statement.all(query.parameters) as R[];
    // A write with RETURNING returns one row per row it changed (SQLite's triggers run per row too).
    if (!statement.readonly && rows.length > 0) cache.wrote = true;
    return { rows };
  }
  const { changes, lastInsertRowid } = statement.run(query.parameters);
  if (!statement.readonly && (changes > 0 || !ROW_CHANGES_ONLY.test(query.sql))) cache.wrote = true;
  return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
}

/** A SELECT built by Kysely, or SQL text that is one (store/sql-text.ts): it may go to the reader. */
function isPlainSelect(query: CompiledQuery): boolean {
  return SelectQueryNode.is(query.query) || (RawNode.is(query.query) && query.sql.startsWith('select '));
}

/** A plain SELECT outside any transaction: on the writer while it has none open (warm cache), else on the reader. */
function read<R>(writer: StatementCache, reader: StatementCache, query: CompiledQuery): QueryResult<R> {
  return run<R>(writer.db.inTransaction ? reader : writer, query);
}

class Mutex {
  private tail: Promise<void> = Promise.resolve();
  /** Resolves with the function that releases the lock, once every earlier holder released it. */
  lock(): Promise<() => void> {
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const previous = this.tail;
    this.tail = previous.then(() => held);
    return previous.then(() => release);
  }
}

/** One per acquireConnection: a transaction marks its own, so its statements go to the writer. */
class RoutingConnection implements DatabaseConnection {
  /** Set between BEGIN and COMMIT/ROLLBACK: the writer's lock is held by this connection. */
  release_writer: (() => void) | null = null;
  constructor(private readonly driver: TwoConnectionSqliteDriver) {}

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.driver.execute<R>(this, query);
  }

  // eslint-disable-next-line require-yield -- Kysely's DatabaseConnection asks for an async generator; paygate never streams, so this one only throws
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not used by paygate');
  }
}

/**
 * The same two connections without Kysely's executor in between, for the store's hot statements
 * (store/sql-text.ts): a statement through Kysely costs about 6 µs, straight about 2 µs (measured).
 */
export interface DirectSqlite {
  /** A statement of the transaction that holds the writer now; throws when none is open. */
  inTransaction<R>(query: CompiledQuery): QueryResult<R>;
  /** A plain SELECT outside any transaction (never waits, sees committed data only; see read()). */
  read<R>(query: CompiledQuery): QueryResult<R>;
}

export class TwoConnectionSqliteDriver implements Driver {
  private readonly writer_lock = new Mutex();

  constructor(
    private readonly writer: StatementCache,
    private readonly reader: StatementCache,
    /**
     * When the writer runs with synchronous=NORMAL: makes each commit durable before the caller
     * hears of it (store/wal-sync.ts). Null keeps SQLite's own sync at COMMIT (synchronous=FULL).
     */
    private readonly wal_sync: WalSync | null = null,
  ) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return new RoutingConnection(this);
  }

  async execute<R>(connection: RoutingConnection, query: CompiledQuery): Promise<QueryResult<R>> {
    if (connection.release_writer) return run<R>(this.writer, query);
    if (isPlainSelect(query)) return read<R>(this.writer, this.reader, query);
    // A write outside a transaction waits until no transaction is open on the writer.
    const release = await this.writer_lock.lock();
    let result: QueryResult<R>;
    let wrote: boolean;
    try {
      this.writer.wrote = false;
      result = run<R>(this.writer, query);
      wrote = this.writer.wrote;
    } finally {
      release();
    }
    // It committed by itself. The writer is free for the next transaction meanwhile: the fsync
    // that makes this one durable covers whatever commits before it starts, too.
    await this.synced(wrote);
    return result;
  }

  /**
   * After a COMMIT: a transaction that changed something is acknowledged once an fsync begun after
   * it has ended (WalSync.committed). One that changed nothing (a lease that found nothing due, a
   * poll) has no frames of its own to sync: it waits only until what it may have read is on disk,
   * and when that already is, for nothing, so an empty poll costs no fsync.
   */
  private async synced(wrote: boolean): Promise<void> {
    if (!this.wal_sync) return;
    if (wrote) await this.wal_sync.committed();
    else await this.wal_sync.durable();
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    const routed = connection as RoutingConnection;
    const release = await this.writer_lock.lock();
    try {
      run(this.writer, CompiledQuery.raw('begin'));
      this.writer.wrote = false;
    } catch (error) {
      release();
      throw error;
    }
    routed.release_writer = release;
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    // Read before COMMIT: once the writer is released, the next transaction's BEGIN clears it.
    const wrote = this.writer.wrote;
    await this.end(connection as RoutingConnection, 'commit');
    // Committed and visible; the caller hears of it once it is on disk (the writer is free meanwhile).
    await this.synced(wrote);
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await this.end(connection as RoutingConnection, 'rollback');
  }

  private async end(connection: RoutingConnection, command: 'commit' | 'rollback'): Promise<void> {
    const release = connection.release_writer;
    if (!release) throw new Error(`${command} outside a transaction`);
    try {
      run(this.writer, CompiledQuery.raw(command));
    } catch (error) {
      // A failed COMMIT leaves the transaction open in SQLite: roll it back before letting go.
      if (command === 'commit' && this.writer.db.inTransaction) {
        try {
          run(this.writer, CompiledQuery.raw('rollback'));
        } catch {
          // Nothing more can be done; the error below is the one that matters.
        }
      }
      throw error;
    } finally {
      if (!this.writer.db.inTransaction) {
        connection.release_writer = null;
        release();
      }
    }
  }

  async savepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await this.inTransaction(connection, `savepoint "${name}"`, compile);
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await this.inTransaction(connection, `rollback to "${name}"`, compile);
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await this.inTransaction(connection, `release "${name}"`, compile);
  }

  private async inTransaction(connection: DatabaseConnection, command: string, _compile: QueryCompiler['compileQuery']): Promise<void> {
    if (!(connection as RoutingConnection).release_writer) throw new Error(`${command} outside a transaction`);
    if (!/^[a-z ]+ "[A-Za-z0-9_]+"$/.test(command)) throw new Error(`unexpected savepoint command ${command}`);
    run(this.writer, CompiledQuery.raw(command));
  }

  async releaseConnection(): Promise<void> {}

  async destroy(): Promise<void> {
    await this.wal_sync?.close();
    this.reader.db.close();
    this.writer.db.close();
  }
}

/**
 * Kysely's SQLite compiler, but a LIMIT given as a bound parameter is written `limit ? + 0`. The
 * SQLite better-sqlite3 ships (3.53) reads a bare `limit ?`'s value while it plans, and so marks
 * the prepared statement to be planned anew whenever that parameter is bound again: every run of
 * a cached statement with one was compiled afresh. Measured on that build: the
 * notification lease's candidates 35 µs a run against 4, a look-up by key with `limit ?` 16 µs
 * against 6.5. SQLite never reads an expression's value at planning, and the store's plans are
 * index-driven either way (test/store/hot-path.test.ts). SQL written by hand: sql/dialect.ts boundLimit.
 */
class SqliteCompilerKeepingPlans extends SqliteQueryCompiler {
  protected override visitLimit(node: LimitNode): void {
    this.append('limit ');
    this.visitNode(node.limit);
    if (ValueNode.is(node.limit) && node.limit.immediate !== true) this.append(' + 0');
  }
}

/** SqliteDialect with the two-connection driver above. */
export class TwoConnectionSqliteDialect extends SqliteDialect {
  private readonly writer: StatementCache;
  private readonly reader: StatementCache;

  constructor(
    writer: BetterSqlite3.Database,
    reader: BetterSqlite3.Database,
    private readonly wal_sync: WalSync | null = null,
  ) {
    super({ database: writer });
    this.writer = new StatementCache(writer);
    this.reader = new StatementCache(reader);
  }

  override createDriver(): Driver {
    return new TwoConnectionSqliteDriver(this.writer, this.reader, this.wal_sync);
  }

  override createQueryCompiler(): QueryCompiler {
    return new SqliteCompilerKeepingPlans();
  }

  /** The statements the two connections keep prepared now: a bound the tests hold the store to. */
  preparedStatements(): number {
    return this.writer.size + this.reader.size;
  }

  /**
   * Direct access to the same connections and prepared statements. Only a transaction's own
   * statements may use the writer: the transaction holds the writer's lock from BEGIN to COMMIT,
   * so nothing else runs on it meanwhile (every SQLite transaction goes through the driver's
   * beginTransaction, group commit included).
   */
  direct(): DirectSqlite {
    const { writer, reader } = this;
    return {
      inTransaction<R>(query: CompiledQuery): QueryResult<R> {
        if (!writer.db.inTransaction) throw new Error('a transaction statement with no transaction open on the writer');
        return run<R>(writer, query);
      },
      read<R>(query: CompiledQuery): QueryResult<R> {
        if (!isPlainSelect(query)) throw new Error('only a plain SELECT may go to the reader');
        return read<R>(writer, reader, query);
      },
    };
  }
}
