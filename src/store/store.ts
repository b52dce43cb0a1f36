// The one interface domain code sees: the store's aggregates (one interface each, in the
// *-store.ts files beside this one) composed as a unit of work, and the store-level operations.
// Two databases sit behind it (SQLite and PostgreSQL), both through the Kysely modules of sql/
// composed in sql-store.ts; nothing outside store/ writes SQL.
import type { AuthorizationStore } from './authorization-store.js';
import type { BackOfficeStore } from './backoffice-store.js';
import type { DisputeStore } from './dispute-store.js';
import type { InstanceStore } from './instance-store.js';
import type { CardStore } from './card-store.js';
import type { CashierStore } from './cashier-store.js';
import type { MasterKeyStore } from './master-key-store.js';
import type { MerchantStore } from './merchant-store.js';
import type { NotificationStore } from './notification-store.js';
import type { SandboxAdminStore } from './sandbox-admin-store.js';
import type { SandboxClockStore } from './sandbox-clock-store.js';
import type { SubscriptionStore } from './subscription-store.js';
import type { TransactionStore } from './transaction-store.js';
import type { RequestLogStore } from './request-log-store.js';
import type { NotificationRow } from '../domain/notification-record.js';

// The aggregates' own types live with their interfaces; named here too for the code that imports them from the store.
export type { GatewayPatch, MerchantRecord, MerchantSummary, NewMerchant } from './merchant-store.js';
export type { TransactionPatch } from './transaction-store.js';
export type { LeaseTimes } from './notification-store.js';
export type { PageRequest, PlanPatch, PlanRecord, SubscriptionFilter, SubscriptionPatch } from './subscription-store.js';
export type { AuthorizationActionPatch, NewAuthorizationAction } from './authorization-store.js';
export type { DisputeFilter, DisputePatch } from './dispute-store.js';
export type { InstanceRecord } from './instance-store.js';
export type { MasterKeyState, RotationProgress, RowKey, SealedCount, SealedRow, SealedTable } from './master-key-store.js';
export type { NewRequestLogRow } from './request-log-store.js';
export type { CashierSessionExpectation, CashierSessionPatch, OrderRead, OrderSummary } from './cashier-store.js';

export type Dialect = 'sqlite' | 'postgres';

export interface Backlog {
  /** Notifications not yet delivered, refused or failed. */
  readonly notifications_pending: number;
  /** Of those, the ones due now. */
  readonly notifications_due: number;
  /** When the longest-waiting due notification fell due; null when none is due. */
  readonly oldest_due_notification_ms: number | null;
  /** Due actions (expiries, settlements, processor lookups) whose time has come and that are not done. */
  readonly due_actions: number;
}

/**
 * The store's aggregates, each behind its own interface, usable both inside a database
 * transaction (`store.transaction((tx) => tx.transactions.reserve(...))`) and outside one
 * (autocommit).
 */
export interface UnitOfWork {
  readonly merchants: MerchantStore;
  readonly transactions: TransactionStore;
  readonly cards: CardStore;
  readonly notifications: NotificationStore;
  readonly subscriptions: SubscriptionStore;
  readonly cashier: CashierStore;
  /** The back office's users, sessions, sign-in failures and audit log (store/backoffice-store.ts). */
  readonly backoffice: BackOfficeStore;
  readonly sandboxClock: SandboxClockStore;
  /** The admin token a sandbox made for itself when the operator set none (issue 28). */
  readonly sandboxAdmin: SandboxAdminStore;
  /** What the instance that last started recorded: its public URL and mode, for the CLI (issue 30). */
  readonly instance: InstanceStore;
  /** The capture or void of each authorization, and the authorizations the expiry voids (decisions §16). */
  readonly authorizations: AuthorizationStore;
  /** Disputes (chargebacks) of payments, as their processors reported them. */
  readonly disputes: DisputeStore;
  /** The API requests and their masked answers, for the back office's Request log (issue 28). */
  readonly requestLog: RequestLogStore;
  /** Which master key seals, the sealed columns read and re-sealed, a rotation's progress (migration 0023). */
  readonly masterKeys: MasterKeyStore;
}

export interface Store extends UnitOfWork {
  readonly dialect: Dialect;
  /**
   * True when transactions commit in groups (SQLite, store/group-commit.ts): every atomic call
   * made outside a transaction is then a commit unit of its own, so work that may share one
   * transaction costs less in one. False on PostgreSQL, where a transaction costs a BEGIN and a
   * COMMIT round trip more than the single-statement calls it would hold.
   */
  readonly groups_commits: boolean;
  migrate(): Promise<void>;
  /** Throws when the database cannot be reached. */
  ping(): Promise<void>;
  /** Work waiting, for /metrics: read from the pending-only indexes, never a scan of the tables. */
  backlog(now_ms: number): Promise<Backlog>;
  /** Connections of the pool (PostgreSQL); null for the embedded store, which has two fixed connections. */
  poolUse(): { readonly total: number; readonly idle: number; readonly waiting: number } | null;
  close(): Promise<void>;
  /**
   * Resolves once everything committed so far is on disk; null when it already is. A write's own
   * promise settles only once it is durable, but a read may see a commit a moment before its
   * fsync ends (SQLite, store/wal-sync.ts): an answer built from reads waits for this before it
   * leaves (http/app.ts). Always null on PostgreSQL, whose commits are durable when visible.
   */
  readonly durable: () => Promise<void> | null;
  /** Runs `work` in one database transaction: all of it commits durably, or none of it. */
  transaction<T>(work: (tx: UnitOfWork) => Promise<T>): Promise<T>;
  /**
   * Null inside a transaction: runs `work` against a unit of work that holds the one new
   * transaction it reserves, with its status changes and their notifications, and writes all of
   * it when `work` ends, in one commit (PostgreSQL: one statement; SQLite: one unit of the group
   * commit): the row is written once, in its final status, not inserted and then updated
   * (sql/held-writes.ts). Reads go to the store. Any other write, and a key or trace_id
   * found taken at the end, throw WritesNotHeld with nothing of the transaction written; the
   * caller then does the work the usual way. On PostgreSQL the card vault writes at once
   * (idempotent, and a vaulted card beside no sale is harmless: lifecycle.ts finish); SQLite holds
   * a new card too, which a card stored meanwhile makes throw WritesNotHeld.
   */
  readonly holdWrites: (<T>(work: (uow: UnitOfWork) => Promise<T>) => Promise<T>) | null;
  /**
   * Calls `listener` once a notification written (notifications.insert, or with a status change)
   * or rescheduled (notifications.reschedule) through this store is committed: after the enclosing transaction
   * commits, or at once outside one. The delivery worker uses it to send without waiting for
   * its poll. Returns the function that removes the listener.
   */
  onNotificationCommitted(listener: () => void): () => void;
  /**
   * SQLite with group commit (null elsewhere, and inside a transaction): runs `lease` at the end of
   * every batch one of whose units wrote or rescheduled a notification, in the batch's transaction
   * just before its COMMIT (store/group-commit.ts), so that the delivery worker leases what the
   * batch made due without a transaction of its own. When the lease saw every due notification
   * (CommitLease.saw_all_due), the batch's units do not call onNotificationCommitted's listeners:
   * a round started by them would find nothing more. One lease at a time; returns the function
   * that removes it.
   */
  readonly leaseWithCommits: ((lease: (tx: UnitOfWork) => Promise<CommitLease>) => () => void) | null;
  /**
   * PostgreSQL (null on SQLite, whose leases join the batch's commit instead): a held sale's
   * notification (holdWrites) is written already leased when `claim` answers a lease, so that
   * the delivery worker sends it once the sale's one statement has committed, with no lease
   * statement and no update of its row of its own. `claim` takes a free slot or answers null
   * (the notification is then written unleased and the listeners woken, as any other). One
   * claim at a time; returns the function that removes it.
   */
  readonly leaseOnInsert: ((claim: () => InsertLease | null) => () => void) | null;
}

/** A lease a new notification is written with (Store.leaseOnInsert). */
export interface InsertLease {
  readonly owner: string;
  /** Real wall clock, as every lease (notification-store.ts LeaseTimes). */
  readonly lease_until_ms: number;
  /**
   * Told the notification as committed, leased to `owner` (to be sent now), or null when the
   * write failed or wrote nothing (the slot is free again; whatever was committed leased, if
   * anything, is sent by any instance once its lease ends, as after a crash).
   */
  readonly ended: (row: NotificationRow | null) => void;
}

/** What a lease at the end of a group-commit batch did (Store.leaseWithCommits). */
export interface CommitLease {
  /** It asked for more notifications than were due, so it saw all there were. */
  readonly saw_all_due: boolean;
  /** Told whether the batch then committed durably (what was leased may be sent) or not (nothing was leased). */
  readonly ended: (committed: boolean) => void;
}

/**
 * What a unit of work of Store.holdWrites throws at a write it cannot hold, and at its end when the
 * transaction's key or trace_id was taken: nothing of the held transaction was written.
 */
export class WritesNotHeld extends Error {
  constructor(what: string) {
    super(`not held: ${what}`);
    this.name = 'WritesNotHeld';
  }
}

/**
 * `store` as seen from inside its open transaction `tx`: every aggregate is tx's, and
 * transaction() runs its work in tx, so code written against the store (operations) joins the
 * transaction instead of opening its own. The rest (health, backlog, listeners) is the store's.
 */
export function storeWithin(store: Store, tx: UnitOfWork): Store {
  return {
    merchants: tx.merchants,
    transactions: tx.transactions,
    cards: tx.cards,
    notifications: tx.notifications,
    subscriptions: tx.subscriptions,
    cashier: tx.cashier,
    backoffice: tx.backoffice,
    sandboxClock: tx.sandboxClock,
    sandboxAdmin: tx.sandboxAdmin,
    instance: tx.instance,
    authorizations: tx.authorizations,
    disputes: tx.disputes,
    requestLog: tx.requestLog,
    masterKeys: tx.masterKeys,
    dialect: store.dialect,
    groups_commits: store.groups_commits,
    migrate: () => store.migrate(),
    ping: () => store.ping(),
    backlog: (now_ms) => store.backlog(now_ms),
    poolUse: () => store.poolUse(),
    close: () => store.close(),
    durable: () => store.durable(),
    transaction: (work) => work(tx),
    holdWrites: null,
    onNotificationCommitted: (listener) => store.onNotificationCommitted(listener),
    leaseWithCommits: null,
    leaseOnInsert: null,
  };
}
