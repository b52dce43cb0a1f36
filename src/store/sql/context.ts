// What every Kysely module of the store (sql/*.ts, one per aggregate) works over: the executor (the
// root Kysely or an open transaction), the dialect, the SQL text of the hot statements, and on
// SQLite the direct connection. One context is built for the store and one per transaction
// (sql-store.ts); the aggregates are plain objects over it, so a unit of work costs a handful of
// allocations on the path of every sale.
import type { CompiledQuery, Kysely, QueryResult, Transaction } from 'kysely';
import type { TraceIdSource } from '../../domain/trace-id.js';
import type { Database } from '../schema.js';
import type { KnownCards } from '../known-cards.js';
import type { DirectSqlite } from '../sqlite-driver.js';
import type { SqlText } from '../sql-text.js';
import type { Dialect, UnitOfWork } from '../store.js';

export type Executor = Kysely<Database> | Transaction<Database>;

/**
 * SQLite only (sqlite-driver.ts DirectSqlite): hot statements skip Kysely's executor. In a
 * transaction every statement goes to the writer the transaction holds; outside one, plain
 * SELECTs run at once (on the idle writer or the reader: sqlite-driver.ts) and writes still
 * queue for the writer through Kysely.
 */
export interface DirectRoute {
  readonly sqlite: DirectSqlite;
  readonly in_transaction: boolean;
}

/** The store's side of the context outside any transaction (autocommit); absent inside one. */
export interface Autocommit {
  /** Store.transaction: runs `work` in a database transaction of its own. */
  readonly transaction: <T>(work: (tx: UnitOfWork) => Promise<T>) => Promise<T>;
  /** Outside a transaction a statement commits by itself, so the listeners are told at once. */
  readonly notificationCommitted: () => void;
}

export class SqlContext {
  /** In a transaction: a statement made a notification due; the store tells the listeners once it commits. */
  notifications_touched = false;
  /** In a transaction: card tokens met (key, token), for the store's KnownCards once it commits. */
  readonly cards_learned: Array<readonly [key: string, token: string]> = [];

  /**
   * `text` holds the SQL of the hot statements (sql-text.ts), shared by the store and its
   * transactions; `trace_ids` draws new transactions' trace_ids (sql/fresh-trace-id.ts);
   * `known_cards` holds the card tokens the store has seen committed (known-cards.ts).
   */
  constructor(
    readonly db: Executor,
    readonly dialect: Dialect,
    readonly text: SqlText,
    readonly direct: DirectRoute | null,
    readonly autocommit: Autocommit | null,
    readonly trace_ids: TraceIdSource,
    readonly known_cards: KnownCards,
  ) {}

  /** Called with a card token read or written: learned at once outside a transaction, else at its commit. */
  metCard(key: string, token: string): void {
    if (this.autocommit) this.known_cards.learn(key, token);
    else this.cards_learned.push([key, token]);
  }

  /** Called after a statement that made a notification due. */
  touchedNotifications(): void {
    if (this.autocommit) this.autocommit.notificationCommitted();
    else this.notifications_touched = true;
  }

  /** Runs hot-path SQL text (sql-text.ts) on this executor: the store, or the open transaction. */
  async rows<R>(query: CompiledQuery): Promise<R[]> {
    return (await this.execute<R>(query)).rows;
  }

  async changed(query: CompiledQuery): Promise<number> {
    return Number((await this.execute(query)).numAffectedRows ?? 0n);
  }

  execute<R>(query: CompiledQuery): Promise<QueryResult<R>> | QueryResult<R> {
    if (this.direct) {
      if (this.direct.in_transaction) return this.direct.sqlite.inTransaction<R>(query);
      if (query.sql.startsWith('select ')) return this.direct.sqlite.read<R>(query);
    }
    return this.db.executeQuery<R>(query);
  }
}
