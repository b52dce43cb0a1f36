// The store over Kysely, for both databases: the aggregates' modules (sql/*.ts, one per
// aggregate) composed over the root executor and, for each transaction, over that transaction,
// plus what belongs to the store as a whole (transactions and their group commit, migrations,
// ping, backlog, the pool, the notification signal). Every difference between SQLite and
// PostgreSQL is named in sql/dialect.ts.
import { CompiledQuery, type Kysely, type Transaction, sql } from 'kysely';
import type pg from 'pg';
import { randomTraceIds, type TraceIdSource } from '../domain/trace-id.js';
import type { Database } from './schema.js';
import type { DirectSqlite } from './sqlite-driver.js';
import type { Backlog, CommitLease, Dialect, InsertLease, Store, UnitOfWork } from './store.js';
import { migrateToLatest } from './migrations/index.js';
import { GroupCommitter } from './group-commit.js';
import { SqlText } from './sql-text.js';
import { KnownCards } from './known-cards.js';
import { type Autocommit, type DirectRoute, SqlContext } from './sql/context.js';
import { commitsInGroups } from './sql/dialect.js';
import { SqlAuthorizationStore } from './sql/authorizations.js';
import { SqlBackOfficeStore } from './sql/backoffice.js';
import { SqlDisputeStore } from './sql/disputes.js';
import { SqlCardStore } from './sql/cards.js';
import { SqlCashierStore } from './sql/cashier.js';
import { SqlMerchantStore } from './sql/merchants.js';
import { SqlNotificationStore } from './sql/notifications.js';
import { SqlSandboxAdminStore } from './sql/sandbox-admin.js';
import { SqlInstanceStore } from './sql/instance.js';
import { SqlSandboxClockStore } from './sql/sandbox-clock.js';
import { SqlSubscriptionStore } from './sql/subscriptions.js';
import { SqlTransactionStore } from './sql/transactions.js';
import { SqlRequestLogStore } from './sql/request-log.js';
import { SqlMasterKeyStore } from './sql/master-keys.js';
import { HeldBatches } from './sql/held-batches.js';
import { type HeldWriter, runHoldingWrites, writeHeldSqlite } from './sql/held-writes.js';

// Read by tests from here (the plans of the lease and of the partial-index scans).
export type { Executor } from './sql/context.js';
export { leaseNotificationsQuery } from './sql/notifications.js';
export { transactionScans } from './sql/transactions.js';

/** What opening a store may choose besides its database (open.ts). */
export interface StoreOptions {
  /** Where new trace_ids come from; the CSPRNG of domain/trace-id.ts unless a test gives another. */
  readonly trace_ids?: TraceIdSource;
}

/** Units of work committed together at most; bounds the latency one batch adds. */
const GROUP_COMMIT_MAX_UNITS = 64;

/**
 * The aggregates over one context (the store's, or an open transaction's). Built for every
 * transaction, twice per sale: twelve plain objects over the shared context, nothing bound per method.
 */
class SqlUnitOfWork implements UnitOfWork {
  readonly merchants: SqlMerchantStore;
  readonly transactions: SqlTransactionStore;
  readonly cards: SqlCardStore;
  readonly notifications: SqlNotificationStore;
  readonly subscriptions: SqlSubscriptionStore;
  readonly cashier: SqlCashierStore;
  readonly backoffice: SqlBackOfficeStore;
  readonly sandboxClock: SqlSandboxClockStore;
  readonly sandboxAdmin: SqlSandboxAdminStore;
  readonly instance: SqlInstanceStore;
  readonly authorizations: SqlAuthorizationStore;
  readonly disputes: SqlDisputeStore;
  readonly requestLog: SqlRequestLogStore;
  readonly masterKeys: SqlMasterKeyStore;

  constructor(ctx: SqlContext) {
    this.merchants = new SqlMerchantStore(ctx);
    this.notifications = new SqlNotificationStore(ctx);
    this.transactions = new SqlTransactionStore(ctx, this.notifications);
    this.cards = new SqlCardStore(ctx);
    this.subscriptions = new SqlSubscriptionStore(ctx);
    this.cashier = new SqlCashierStore(ctx);
    this.backoffice = new SqlBackOfficeStore(ctx.db);
    this.sandboxClock = new SqlSandboxClockStore(ctx);
    this.sandboxAdmin = new SqlSandboxAdminStore(ctx);
    this.instance = new SqlInstanceStore(ctx);
    this.authorizations = new SqlAuthorizationStore(ctx);
    this.disputes = new SqlDisputeStore(ctx);
    this.requestLog = new SqlRequestLogStore(ctx);
    this.masterKeys = new SqlMasterKeyStore(ctx);
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

/** The one callback the delivery worker registers for a kind of lease (leaseWithCommits, leaseOnInsert). */
class Registered<T> {
  value: T | null = null;
  constructor(private readonly what: string) {}
  /** Registers `value`, or throws when one is registered already; returns the function that removes it. */
  register(value: T): () => void {
    if (this.value) throw new Error(`a lease is already registered with the ${this.what}`);
    this.value = value;
    return () => {
      if (this.value === value) this.value = null;
    };
  }
}

export class SqlStore implements Store {
  readonly merchants: UnitOfWork['merchants'];
  readonly transactions: UnitOfWork['transactions'];
  readonly cards: UnitOfWork['cards'];
  readonly notifications: UnitOfWork['notifications'];
  readonly subscriptions: UnitOfWork['subscriptions'];
  readonly cashier: UnitOfWork['cashier'];
  readonly backoffice: UnitOfWork['backoffice'];
  readonly sandboxClock: UnitOfWork['sandboxClock'];
  readonly sandboxAdmin: UnitOfWork['sandboxAdmin'];
  readonly instance: UnitOfWork['instance'];
  readonly authorizations: UnitOfWork['authorizations'];
  readonly disputes: UnitOfWork['disputes'];
  readonly requestLog: UnitOfWork['requestLog'];
  readonly masterKeys: UnitOfWork['masterKeys'];
  private readonly signal = new NotificationSignal();
  /** The hot statements' SQL text (sql-text.ts), shared by the store and its transactions. */
  private readonly text: SqlText;
  /** SQLite only: one writer, so transactions are committed in groups (store/group-commit.ts). */
  private readonly group: GroupCommitter<Database> | null;
  private readonly direct_in_transaction: DirectRoute | null;
  /** PostgreSQL: the pool, read for /metrics (poolUse). */
  private readonly pool: pg.Pool | null;
  /** New transactions' trace_ids (domain/trace-id.ts); a test gives its own to make draws collide. */
  private readonly trace_ids: TraceIdSource;
  readonly holdWrites: Store['holdWrites'];
  readonly durable: Store['durable'];
  /** Card tokens seen committed (known-cards.ts): a card seen before skips the vault's statement. */
  private readonly known_cards = new KnownCards();
  /** Group commit: the delivery worker's lease at the end of a batch (leaseWithCommits), if one is registered. */
  private readonly commit_lease = new Registered<(tx: UnitOfWork) => Promise<CommitLease>>('commits');
  /** Group commit: the units of the batch under way that made a notification due, for its end (endBatch). */
  private touched_in_batch: SqlContext[] = [];
  readonly leaseWithCommits: Store['leaseWithCommits'];
  /** PostgreSQL: the delivery worker's claim of a slot for a held sale's notification (leaseOnInsert), if one is registered. */
  private readonly insert_lease = new Registered<() => InsertLease | null>('inserts');
  readonly leaseOnInsert: Store['leaseOnInsert'];
  /** PostgreSQL: held sales written together (sql/held-batches.ts); its stats are read by tests and benchmarks. */
  readonly held_batches: HeldBatches | null;

  constructor(
    private readonly root: Kysely<Database>,
    readonly dialect: Dialect,
    options: StoreOptions & {
      readonly group_commit?: boolean;
      readonly direct?: DirectSqlite;
      readonly pool?: pg.Pool;
      /** SQLite: resolves once every commit so far is on disk (store/wal-sync.ts); see Store.durable. */
      readonly durable?: () => Promise<void> | null;
    } = {},
    private readonly on_close: () => Promise<void> = async () => {},
  ) {
    this.text = new SqlText(dialect);
    this.durable = options.durable ?? (() => null);
    this.pool = options.pool ?? null;
    this.trace_ids = options.trace_ids ?? randomTraceIds;
    const direct = options.direct;
    this.direct_in_transaction = direct ? { sqlite: direct, in_transaction: true } : null;
    // Outside a transaction a statement commits by itself, so the signal fires at once; a step
    // that must be atomic on SQLite runs in a transaction of its own (sql/dialect.ts).
    const autocommit: Autocommit = { transaction: (work) => this.transaction(work), notificationCommitted: this.signal.fire };
    const root_context = new SqlContext(
      root,
      dialect,
      this.text,
      direct ? { sqlite: direct, in_transaction: false } : null,
      autocommit,
      this.trace_ids,
      this.known_cards,
    );
    const uow = new SqlUnitOfWork(root_context);
    this.merchants = uow.merchants;
    this.transactions = uow.transactions;
    this.cards = uow.cards;
    this.notifications = uow.notifications;
    this.subscriptions = uow.subscriptions;
    this.cashier = uow.cashier;
    this.backoffice = uow.backoffice;
    this.sandboxClock = uow.sandboxClock;
    this.sandboxAdmin = uow.sandboxAdmin;
    this.instance = uow.instance;
    this.authorizations = uow.authorizations;
    this.disputes = uow.disputes;
    this.requestLog = uow.requestLog;
    this.masterKeys = uow.masterKeys;
    // PostgreSQL writes what held units hold in one statement, with the held units that arrive
    // while this instance's are in flight (sql/held-batches.ts); SQLite in one unit of the group
    // commit (sql/held-writes.ts).
    const claimLease = () => this.insert_lease.value?.() ?? null;
    this.held_batches = dialect === 'postgres' ? new HeldBatches(root_context, claimLease) : null;
    const held_batches = this.held_batches;
    const write: HeldWriter = held_batches
      ? { write: (held) => held_batches.write(held), holds_cards: false }
      : { write: (held, card) => this.transactionIn((ctx) => writeHeldSqlite(ctx, held, card)), holds_cards: true };
    this.holdWrites = (work) => runHoldingWrites(root_context, uow, work, write);
    this.leaseOnInsert = dialect === 'postgres' ? (claim) => this.insert_lease.register(claim) : null;
    const group_commit = commitsInGroups(dialect, options.group_commit ?? true);
    if (group_commit && !direct) throw new Error('SQLite group commit needs the direct connection');
    this.group =
      group_commit && direct
        ? new GroupCommitter(
            root,
            GROUP_COMMIT_MAX_UNITS,
            (command) => {
              direct.inTransaction(CompiledQuery.raw(command));
            },
            (trx) => this.endBatch(trx),
          )
        : null;
    this.leaseWithCommits = this.group ? (lease) => this.commit_lease.register(lease) : null;
  }

  /**
   * The end of a group-commit batch: when one of its units made a notification due, the registered
   * lease runs here, in the batch's transaction. Having seen every due notification, it spares
   * those units' listeners (transaction(), below) a wake that would find nothing.
   */
  private async endBatch(trx: Transaction<Database>): Promise<((committed: boolean) => void) | null> {
    const touched = this.touched_in_batch;
    if (touched.length === 0) return null;
    this.touched_in_batch = [];
    const lease = this.commit_lease.value;
    if (lease === null) return null;
    const ctx = new SqlContext(trx, this.dialect, this.text, this.direct_in_transaction, null, this.trace_ids, this.known_cards);
    const leased = await lease(new SqlUnitOfWork(ctx));
    if (leased.saw_all_due) for (const unit of touched) unit.notifications_touched = false;
    return leased.ended;
  }

  get groups_commits(): boolean {
    return this.group !== null;
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
      this.root
        .selectFrom('notifications')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('state', '=', 'pending')
        .executeTakeFirstOrThrow(),
      this.root
        .selectFrom('notifications')
        .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min<number>('next_attempt_at_ms').as('oldest')])
        .where('state', '=', 'pending')
        .where('next_attempt_at_ms', '<=', now_ms)
        .executeTakeFirstOrThrow(),
      this.root
        .selectFrom('due_actions')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('done', '=', 0)
        .where('due_at_ms', '<=', now_ms)
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

  transaction<T>(work: (tx: UnitOfWork) => Promise<T>): Promise<T> {
    return this.transactionIn((ctx) => work(new SqlUnitOfWork(ctx)));
  }

  /** transaction(), `work` given the transaction's SQL context. */
  private async transactionIn<T>(work: (ctx: SqlContext) => Promise<T>): Promise<T> {
    // Inside a transaction the signal waits for the commit: a rolled-back notification never fires it.
    let in_transaction: SqlContext | null = null;
    const run = (trx: Transaction<Database>) => {
      in_transaction = new SqlContext(trx, this.dialect, this.text, this.direct_in_transaction, null, this.trace_ids, this.known_cards);
      return work(in_transaction);
    };
    // Group commit: a unit that made a notification due is made known to its batch's end (endBatch).
    const run_in_batch = async (trx: Transaction<Database>) => {
      const value = await run(trx);
      const unit = in_transaction as SqlContext | null;
      if (unit?.notifications_touched) this.touched_in_batch.push(unit);
      return value;
    };
    const result = this.group ? await this.group.run(run_in_batch) : await this.root.transaction().execute(run);
    const committed = in_transaction as SqlContext | null;
    if (committed?.notifications_touched) this.signal.fire();
    for (const [key, token] of committed?.cards_learned ?? []) this.known_cards.learn(key, token);
    return result;
  }
}
