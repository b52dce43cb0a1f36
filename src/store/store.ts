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

import type { SubscriptionStatus } from '../domain/subscription-state.js';
import type { BackOfficeStore } from './backoffice-store.js';
import type { CardStore } from './card-store.js';
import type { CashierStore } from './cashier-store.js';
import type { MerchantStore } from './merchant-store.js';
import type { NotificationStore } from './notification-store.js';
import type { SandboxClockStore } from './sandbox-clock-store.js';
import type { SubscriptionStore } from './subscription-store.js';
import type { TransactionStore } from './transaction-store.js';

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
  readonly status?: SubscriptionStatus | undefined;
}

export type PlanPatch = Partial<Pick<SubscriptionPlanRow, 'name' | 'description' | 'status' | 'updated_at_ms'>>;
/** The domain's (domain/subscription-record.ts): a subscription change carries one. */
export type { SubscriptionPatch } from '../domain/subscription-record.js';

export type TransactionPatch = Partial<Omit<TransactionRow, 'trace_id' | 'merchant_id' | 'transaction_type' | 'order_id'>>;

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
}

export type OrderSummary = Pick<CashierSessionRow, 'session_id' | 'kind' | 'identity_kind' | 'identity_value' | 'order_status' | 'expires_at_ms'>;

export type CashierSessionPatch = Partial<Pick<CashierSessionRow,
  'order_status' | 'closed_at_ms' | 'attempts' | 'claim_until_ms' | 'updated_at_ms'>>;
export type CashierSessionExpectation = Partial<Pick<CashierSessionRow, 'order_status' | 'attempts'>>;

export interface Store extends UnitOfWork {
  readonly dialect: Dialect;
  migrate(): Promise<void>;
  /** Throws when the database cannot be reached. */
  ping(): Promise<void>;
  /** Work waiting, for /metrics: read from the pending-only indexes, never a scan of the tables. */
  backlog(now_ms: number): Promise<Backlog>;
  /** Connections of the pool (PostgreSQL); null for the embedded store, which has two fixed connections. */
  poolUse(): { readonly total: number; readonly idle: number; readonly waiting: number } | null;
  close(): Promise<void>;
  /** Runs `work` in one database transaction: all of it commits durably, or none of it. */
  transaction<T>(work: (tx: UnitOfWork) => Promise<T>): Promise<T>;
  /**
   * Calls `listener` once a notification written (insertNotification) or rescheduled
   * (rescheduleNotification) through this store is committed: after the enclosing transaction
   * commits, or at once outside one. The delivery worker uses it to send without waiting for
   * its poll. Returns the function that removes the listener.
   */
  onNotificationCommitted(listener: () => void): () => void;
}
