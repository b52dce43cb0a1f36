// The one interface domain code sees. Two implementations sit behind it (SQLite and
// PostgreSQL, both through Kysely in sql-store.ts); nothing outside store/ writes SQL.
import type {
  CardVaultRow, DueActionRow, GatewayRow, NewGatewayRow, NewTransactionRow, NotificationRow, ProcessorEventRow, ProcessorEventTable,
  RoutingRuleRow, TransactionRow,
} from './schema.js';
import type { Insertable } from 'kysely';
import type { DueActionTable, NotificationAttemptTable, NotificationTable, StatusChangeTable } from './schema.js';

import type {
  NewSubscriptionRow, SubscriptionChangeTable, SubscriptionPlanRow, SubscriptionPlanTable, SubscriptionPriceRow, SubscriptionPriceTable, SubscriptionRow,
} from './schema.js';

import type { CashierCustomerRow, CashierSessionRow, CashierTokenRow, NewCashierSessionRow } from './schema.js';

import type { BackOfficeStore } from './backoffice-store.js';

export type Dialect = 'sqlite' | 'postgres';

/** The two clocks of a notification lease round (leaseNotifications). */
export interface LeaseTimes {
  /** Gateway clock (sandbox-movable): a notification is due once next_attempt_at_ms ≤ due_ms. */
  readonly due_ms: number;
  /** Real wall clock: a lease is live while lease_until_ms ≥ wall_ms; a new one ends at wall_ms + lease_ms. */
  readonly wall_ms: number;
}

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

export interface MerchantRecord {
  readonly merchant_id: string;
  readonly secret_sealed: string;
  readonly applications: readonly string[];
  readonly frontends: readonly { readonly name: string; readonly currency: string }[];
  readonly gateways: readonly GatewayRow[];
  /** Its routing rules, by priority then creation. */
  readonly routing_rules: readonly RoutingRuleRow[];
  /** Its v1.3 requests must carry Gt-Body-Signature. */
  readonly v13_body_signature_required: boolean;
  /** When an operator disabled it (gateway clock); null while enabled. */
  readonly disabled_at_ms: number | null;
  /** The secret before the last roll, sealed; null when it was never rolled. */
  readonly previous_secret_sealed: string | null;
  /** Gateway clock: the previous secret is accepted before this time; null when there is none. */
  readonly previous_secret_until_ms: number | null;
}

/** A merchant as a list page shows it (listMerchants). */
export interface MerchantSummary {
  readonly merchant_id: string;
  readonly created_at_ms: number;
  readonly disabled_at_ms: number | null;
  readonly application_count: number;
  readonly frontend_count: number;
  readonly gateway_count: number;
}

export interface NewMerchant {
  readonly merchant_id: string;
  readonly secret_sealed: string;
  readonly applications: readonly string[];
  readonly frontends: readonly { readonly name: string; readonly currency: string }[];
  readonly gateways: readonly NewGatewayRow[];
  readonly created_at_ms: number;
}

export type GatewayPatch = Partial<Pick<GatewayRow, 'enabled' | 'settings_sealed' | 'currencies'>> & { readonly updated_at_ms: number };

/** A plan with its prices in the merchant's order. */
export interface PlanRecord {
  readonly plan: SubscriptionPlanRow;
  readonly prices: readonly SubscriptionPriceRow[];
}

export interface PageRequest {
  readonly offset: number;
  readonly limit: number;
}

export interface SubscriptionFilter {
  readonly plan_id?: string | undefined;
  readonly cid?: string | undefined;
  readonly status?: string | undefined;
}

export type PlanPatch = Partial<Pick<SubscriptionPlanRow, 'name' | 'description' | 'status' | 'updated_at_ms'>>;
export type SubscriptionPatch = Partial<Omit<SubscriptionRow, 'subscription_id' | 'merchant_id' | 'version'>>;

export type TransactionPatch = Partial<Omit<TransactionRow, 'trace_id' | 'merchant_id' | 'transaction_type' | 'order_id'>>;

/** Operations available both inside a database transaction and outside one (autocommit). */
export interface StoreOps {
  // Merchants
  insertMerchant(merchant: NewMerchant): Promise<'created' | 'exists'>;
  getMerchant(merchant_id: string): Promise<MerchantRecord | null>;
  countMerchants(): Promise<number>;
  /** The first `limit` merchant ids in order. */
  listMerchantIds(limit: number): Promise<string[]>;
  /**
   * A page of merchants by merchant_id: the first `limit` after `after_merchant_id` ('' for the
   * first page), with their applications, frontends and gateways counted (index look-ups, no scan).
   */
  listMerchants(after_merchant_id: string, limit: number): Promise<MerchantSummary[]>;
  /**
   * The merchant's current sealed secret becomes its previous one, accepted until
   * previous_secret_until_ms, and `new_secret_sealed` the current one: one statement, so a
   * concurrent roll cannot lose a secret in between. Only one previous secret is kept: rolling
   * again drops the older one. False when there is no such merchant.
   */
  rollMerchantSecret(merchant_id: string, new_secret_sealed: string, previous_secret_until_ms: number): Promise<boolean>;
  /**
   * Disables the merchant since disabled_at_ms (an earlier time of a merchant already disabled is
   * kept), or with null enables it. False when there is no such merchant.
   */
  setMerchantDisabled(merchant_id: string, disabled_at_ms: number | null): Promise<boolean>;
  getGateway(gateway_id: string): Promise<GatewayRow | null>;
  /** 'exists' when the gateway_id is taken; the merchant must exist (a foreign key). */
  insertGateway(row: NewGatewayRow): Promise<'created' | 'exists'>;
  /** One merchant's gateways, or every gateway (null), oldest first. */
  listGateways(merchant_id: string | null): Promise<GatewayRow[]>;
  /** False when there is no such gateway. */
  updateGateway(gateway_id: string, patch: GatewayPatch): Promise<boolean>;
  /** Records a processor's webhook event; false when this gateway already has an event of that id (a replay). */
  insertProcessorEvent(row: Insertable<ProcessorEventTable>): Promise<boolean>;
  /** A gateway's webhook events, oldest first, at most `limit`. */
  listProcessorEvents(gateway_id: string, limit: number): Promise<ProcessorEventRow[]>;

  // Routing (migration 0011)
  insertRoutingRule(row: RoutingRuleRow): Promise<void>;
  /** False when the merchant has no such rule. */
  deleteRoutingRule(merchant_id: string, rule_id: string): Promise<boolean>;
  /** Replaces the whole BIN table (the operator's load) in one step. */
  replaceBinRanges(rows: readonly { readonly prefix: string; readonly country: string }[]): Promise<void>;
  /** The country of the longest of these prefixes in the BIN table, or null. */
  findBinCountry(prefixes: readonly string[]): Promise<string | null>;
  countBinRanges(): Promise<number>;
  /** Operator setting: payouts through this gateway wait in `requested` for approval. False when no such gateway. */
  setGatewayHoldPayouts(gateway_id: string, hold_payouts: boolean): Promise<boolean>;

  // Transactions
  /** Inserts unless the idempotency key exists; null means another row holds the key. */
  insertTransactionIfAbsent(row: NewTransactionRow): Promise<number | null>;
  /**
   * insertTransactionIfAbsent answering the inserted row as stored: RETURNING on PostgreSQL (no
   * second round trip); on SQLite, where RETURNING costs more than the insert, the row as the
   * insert wrote it with the columns' defaults (schema.ts TRANSACTION_COLUMN_DEFAULTS). One
   * statement on both, so atomic also outside a transaction.
   */
  reserveTransaction(row: NewTransactionRow): Promise<TransactionRow | null>;
  /**
   * reserveTransaction and the row's first status change ('' → its status, at created_at_ms) as
   * one atomic step, also outside a transaction: on PostgreSQL one statement (a data-modifying
   * CTE, one round trip instead of BEGIN, two INSERTs and COMMIT), on SQLite one transaction.
   */
  reserveTransactionWithChange(row: NewTransactionRow, reason: string): Promise<TransactionRow | null>;
  findTransactionByKey(merchant_id: string, transaction_type: string, order_id: string): Promise<TransactionRow | null>;
  getTransaction(trace_id: number): Promise<TransactionRow | null>;
  /** Row lock (FOR UPDATE) on PostgreSQL; SQLite transactions are already serialized. */
  lockTransaction(trace_id: number): Promise<TransactionRow | null>;
  findTransactionByChallenge(challenge_token_hash: string): Promise<TransactionRow | null>;
  /** A live processor's transaction by its id there (webhooks); never a sandbox one (transactions_psp). */
  findTransactionByPspId(gateway_id: string, psp_transaction_id: string): Promise<TransactionRow | null>;
  /** The latest cascade attempt of a merchant's request (its highest cascade_level), or null. */
  latestCascadeAttempt(root_trace_id: number): Promise<TransactionRow | null>;
  /** Oldest first, from after_trace_id on (the operator's payout list pages by trace_id). */
  listPayoutsByStatus(status: string, after_trace_id: number, limit: number): Promise<TransactionRow[]>;
  /** Changes the row only if its status is still `from_status`: the state machine's compare-and-set. */
  updateTransactionIfStatus(trace_id: number, from_status: string, patch: TransactionPatch): Promise<boolean>;
  updateTransaction(trace_id: number, patch: TransactionPatch): Promise<void>;
  /**
   * updateTransactionIfStatus to `patch.status` and, only if it changed the row, the status_changes
   * row from `from_status` with `reason` at `at_ms` and the `notification` (if any) of the change:
   * one statement on PostgreSQL (a data-modifying CTE), two or three on SQLite. Meant for a
   * transaction (the state machine's); false when the status was no longer `from_status`, and
   * then nothing is written.
   */
  changeTransactionStatus(
    trace_id: number, from_status: string, patch: TransactionPatch & { status: string }, reason: string, at_ms: number,
    notification?: Insertable<NotificationTable> | null,
  ): Promise<boolean>;
  /** Adds to a sale's refund reservation only while it stays within the sale amount. */
  reserveRefund(sale_trace_id: number, amount_minor: number): Promise<boolean>;
  releaseRefund(sale_trace_id: number, amount_minor: number): Promise<void>;
  insertStatusChange(row: Insertable<StatusChangeTable>): Promise<void>;
  listStatusChanges(trace_id: number): Promise<{ from_status: string; to_status: string; reason: string; at_ms: number }[]>;

  // Due work (asynchronous outcomes and time-outs), found from the database after any restart
  insertDueAction(row: Insertable<DueActionTable>): Promise<void>;
  /** Due actions not yet done; on PostgreSQL locked with SKIP LOCKED so instances share the work. */
  claimDueActions(now_ms: number, limit: number): Promise<DueActionRow[]>;
  markDueActionDone(id: number): Promise<void>;
  /**
   * Moves a due action to due_at_ms and counts one more attempt: a processor_lookup is put off
   * like a lease while the processor is asked outside any transaction, then again when it
   * must ask later.
   */
  deferDueAction(id: number, due_at_ms: number): Promise<void>;
  /** Transactions reserved but never finished (the process died during the processor call). */
  findStuckTransactions(older_than_ms: number, limit: number): Promise<TransactionRow[]>;
  /** Payouts `in progress` since before `older_than_ms` with no processor answer recorded (no psp_transaction_id). */
  findInterruptedPayouts(older_than_ms: number, limit: number): Promise<TransactionRow[]>;

  // Notifications outbox
  insertNotification(row: Insertable<NotificationTable>): Promise<number>;
  /**
   * A transaction notification still pending after a failed attempt, with a newer notification of
   * its transaction: superseded (never sent again). True when it was.
   */
  supersedeIfNewer(notification_id: number, now_ms: number): Promise<boolean>;
  listNotifications(trace_id: number): Promise<NotificationRow[]>;
  /** The event notifications of a subscription, oldest first (issue 6). */
  listSubscriptionEvents(subscription_id: string): Promise<NotificationRow[]>;
  /**
   * Leases due notifications to one owner; no other owner gets them until the lease ends.
   * A notification is not leased while an older one (lower id) of the same trace_id is still
   * 'pending', so the notifications of one transaction reach the merchant in order.
   * Due times are compared with `at.due_ms` (gateway clock), leases with `at.wall_ms` (real
   * wall clock): moving the sandbox clock never ends a lease held by an attempt in flight.
   */
  leaseNotifications(at: LeaseTimes, limit: number, lease_ms: number, owner: string): Promise<NotificationRow[]>;
  /**
   * Ends an attempt: the notification's new state (only while `owner` still holds the lease) and
   * the attempt's record, atomically, also outside a transaction (one statement on PostgreSQL,
   * one transaction on SQLite). False, and nothing written, when the lease was lost.
   */
  finishNotificationAttempt(
    notification_id: number,
    owner: string,
    patch: Pick<NotificationRow, 'state' | 'next_attempt_at_ms' | 'last_error'> & { attempts: number },
    attempt: Insertable<NotificationAttemptTable>,
    now_ms: number,
  ): Promise<boolean>;
  listNotificationAttempts(notification_id: number): Promise<Insertable<NotificationAttemptTable>[]>;
  getNotification(id: number): Promise<NotificationRow | null>;
  /**
   * The operator's manual resend: makes the notification `pending`, due at next_attempt_at_ms,
   * with a fresh resend bound from now_ms (bound_from_ms), and drops any lease that has ended, so
   * an attempt cut off earlier can no longer record over it. Never while an attempt may be in
   * flight: with `lease_now_ms` (real wall clock), not while a lease lasts (lease_until_ms ≥
   * lease_now_ms); without it, not while any lease is held. False when there is no such
   * notification or it is in flight (tell them apart with getNotification).
   */
  rescheduleNotification(id: number, next_attempt_at_ms: number, now_ms: number, lease_now_ms?: number): Promise<boolean>;

  // Card vault
  insertCardIfAbsent(row: CardVaultRow): Promise<void>;
  findCard(merchant_id: string, pin: string, pan_fingerprint: string, card_exp: string): Promise<CardVaultRow | null>;
  getCard(merchant_id: string, card_token: string): Promise<CardVaultRow | null>;

  // Sandbox clock, shared by instances on one database
  getSandboxOffset(): Promise<number>;
  setSandboxOffset(offset_ms: number): Promise<void>;

  // Subscription plans and subscriptions (issue 6). Reads take the merchant_id: another
  // merchant's plan or subscription is not found, exactly like a missing one.
  insertPlan(plan: Insertable<SubscriptionPlanTable>, prices: readonly Insertable<SubscriptionPriceTable>[]): Promise<void>;
  /** Deleted plans included; callers decide what a deleted plan means. */
  getPlan(merchant_id: string, plan_id: string): Promise<PlanRecord | null>;
  /** Never lists deleted plans; oldest first. */
  listPlans(merchant_id: string, page: PageRequest): Promise<{ plans: PlanRecord[]; total: number }>;
  updatePlan(merchant_id: string, plan_id: string, patch: PlanPatch): Promise<boolean>;
  /**
   * Inserts unless an active subscription of the same merchant, cid, plan price and card exists
   * (unique index subscriptions_one_active); false then, and that one is findActiveSubscription's.
   */
  insertSubscription(row: NewSubscriptionRow): Promise<boolean>;
  findActiveSubscription(key: Pick<NewSubscriptionRow, 'merchant_id' | 'cid' | 'plan_id' | 'price_id' | 'card_token'>): Promise<SubscriptionRow | null>;
  getSubscription(merchant_id: string, subscription_id: string): Promise<SubscriptionRow | null>;
  /** Row lock (FOR UPDATE) on PostgreSQL; SQLite transactions are already serialized. */
  lockSubscription(subscription_id: string): Promise<SubscriptionRow | null>;
  /** Newest first. */
  listSubscriptions(merchant_id: string, filter: SubscriptionFilter, page: PageRequest): Promise<{ subscriptions: SubscriptionRow[]; total: number }>;
  /** Changes the row only if its version is still `version`, and bumps it: subscription-state.ts's compare-and-set. */
  updateSubscriptionIfVersion(subscription_id: string, version: number, patch: SubscriptionPatch): Promise<boolean>;
  insertSubscriptionChange(row: Insertable<SubscriptionChangeTable>): Promise<void>;
  listSubscriptionChanges(subscription_id: string): Promise<{ from_status: string; to_status: string; event: string; reason: string; at_ms: number }[]>;
  /**
   * Active subscriptions due at now_ms and not claimed by a live lease, claimed for `owner`
   * until lease_until_ms. On PostgreSQL the candidates are locked with SKIP LOCKED, so
   * instances sharing the database claim disjoint sets. A disabled merchant's are held: never
   * claimed while it is disabled.
   */
  claimDueSubscriptions(at: LeaseTimes, limit: number, lease_until_ms: number, owner: string): Promise<SubscriptionRow[]>;
  /** Keeps (or gives back, with null) a claim without changing the subscription. */
  setSubscriptionLease(subscription_id: string, owner: string, lease_until_ms: number | null): Promise<void>;
  /** Active subscriptions due at now_ms, claimed or not; a disabled merchant's held ones are not due work. */
  countDueSubscriptions(now_ms: number): Promise<number>;

  // Hosted cashier (issue 5, docs/cashier.md)
  /** 'exists' when the merchant already has a session with this order_id (order sessions). */
  insertCashierSession(row: NewCashierSessionRow): Promise<'created' | 'exists'>;
  getCashierSession(session_id: string): Promise<CashierSessionRow | null>;
  /** Row lock (FOR UPDATE) on PostgreSQL; SQLite transactions are already serialized. */
  lockCashierSession(session_id: string): Promise<CashierSessionRow | null>;
  findCashierSessionByOrder(merchant_id: string, order_id: string): Promise<CashierSessionRow | null>;
  /** findCashierSessionByOrder's columns that find-order decides on: half the cost of the whole row on SQLite. */
  findOrderSummary(merchant_id: string, order_id: string): Promise<OrderSummary | null>;
  findCashierSessionByAuthToken(auth_token_hash: string): Promise<CashierSessionRow | null>;
  /** Compare-and-set: changes the row only while every `expected` column still has its value. */
  updateCashierSessionIf(session_id: string, expected: CashierSessionExpectation, patch: CashierSessionPatch): Promise<boolean>;
  insertCashierToken(row: CashierTokenRow): Promise<void>;
  findCashierToken(token_hash: string): Promise<CashierTokenRow | null>;
  /** Marks a one-time token used; false when it was used already or has expired. */
  useCashierToken(token_hash: string, now_ms: number): Promise<boolean>;
  /** The session's transactions, oldest first. */
  listCashierTransactions(session_id: string): Promise<TransactionRow[]>;
  /** Orders still pending whose time limit has passed; on PostgreSQL locked with SKIP LOCKED. */
  claimExpiredOrders(now_ms: number, limit: number): Promise<CashierSessionRow[]>;
  getCashierCustomer(merchant_id: string, pin: string): Promise<CashierCustomerRow | null>;
  upsertCashierCustomer(row: CashierCustomerRow): Promise<void>;
  /** The origins allowed to frame the application's init-pay-in pages; null when there is no such application. */
  getFrameOrigins(merchant_id: string, application_key: string): Promise<string[] | null>;
  /** false when there is no such application. */
  setFrameOrigins(merchant_id: string, application_key: string, origins: readonly string[]): Promise<boolean>;
  /** The shop's name for a frontend or an application of the merchant, or null when none is set (or no such identity). */
  getDisplayName(merchant_id: string, identity: { readonly kind: 'frontend' | 'application_key'; readonly value: string }): Promise<string | null>;
  /** Sets (or, with null, clears) it; false when the merchant has no such frontend or application. */
  setDisplayName(merchant_id: string, identity: { readonly kind: 'frontend' | 'application_key'; readonly value: string }, display_name: string | null): Promise<boolean>;
  /** Sets whether the merchant's v1.3 requests must carry Gt-Body-Signature; false when there is no such merchant. */
  setV13BodySignatureRequired(merchant_id: string, required: boolean): Promise<boolean>;
}

export type OrderSummary = Pick<CashierSessionRow, 'session_id' | 'kind' | 'identity_kind' | 'identity_value' | 'order_status' | 'expires_at_ms'>;

export type CashierSessionPatch = Partial<Pick<CashierSessionRow,
  'order_status' | 'closed_at_ms' | 'attempts' | 'claim_until_ms' | 'updated_at_ms'>>;
export type CashierSessionExpectation = Partial<Pick<CashierSessionRow, 'order_status' | 'attempts'>>;

export interface Store extends StoreOps {
  readonly dialect: Dialect;
  /** The back office's users, sessions, audit log and page queries (store/backoffice-store.ts). */
  readonly backoffice: BackOfficeStore;
  migrate(): Promise<void>;
  /** Throws when the database cannot be reached. */
  ping(): Promise<void>;
  /** Work waiting, for /metrics: read from the pending-only indexes, never a scan of the tables. */
  backlog(now_ms: number): Promise<Backlog>;
  /** Connections of the pool (PostgreSQL); null for the embedded store, which has two fixed connections. */
  poolUse(): { readonly total: number; readonly idle: number; readonly waiting: number } | null;
  close(): Promise<void>;
  /** Runs `work` in one database transaction: all of it commits durably, or none of it. */
  transaction<T>(work: (tx: StoreOps) => Promise<T>): Promise<T>;
  /**
   * Calls `listener` once a notification written (insertNotification) or rescheduled
   * (rescheduleNotification) through this store is committed: after the enclosing transaction
   * commits, or at once outside one. The delivery worker uses it to send without waiting for
   * its poll. Returns the function that removes the listener.
   */
  onNotificationCommitted(listener: () => void): () => void;
}
