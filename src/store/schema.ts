// Table shapes as Kysely sees them. Both dialects share these: integers are JavaScript
// numbers (the PostgreSQL pool parses int8 into numbers; amounts are capped at 2^53-1),
// booleans are 0/1 integers, times are unix milliseconds. The records the rest of the gateway
// passes around are domain/'s (domain/*-record.ts): their tables are built from them here, and
// their names re-exported, so a status the state machines do not know does not compile in a
// query either. Tables only the store reads are declared here.
import type { Generated, Insertable } from 'kysely';
import type { AuditLogRow, BackofficeUserRow } from '../domain/backoffice-record.js';
import type { CardVaultRow } from '../domain/card-record.js';
import type { CashierCustomerRow, CashierSessionRow, CashierTokenRow } from '../domain/cashier-record.js';
import type { GatewayRow, ProcessorEventRow, RoutingRuleRow } from '../domain/gateway-record.js';
import type { NotificationAttemptRow, NotificationRow } from '../domain/notification-record.js';
import type { SubscriptionChangeRow, SubscriptionPlanRow, SubscriptionPriceRow, SubscriptionRow } from '../domain/subscription-record.js';
import type { DueActionRow, StatusChangeRow, TransactionRow } from '../domain/transaction-record.js';
import type { AuthorizationActionRow } from '../domain/authorization-record.js';
import type { DisputeRow } from '../domain/dispute-record.js';
import type { RequestLogRow } from '../domain/request-log-record.js';

export type {
  AuditLogRow,
  AuthorizationActionRow,
  DisputeRow,
  BackofficeUserRow,
  CardVaultRow,
  CashierCustomerRow,
  CashierSessionRow,
  CashierTokenRow,
  DueActionRow,
  GatewayRow,
  RequestLogRow,
};
export type { NotificationAttemptRow, NotificationRow, ProcessorEventRow, RoutingRuleRow, StatusChangeRow, SubscriptionChangeRow };
export type { SubscriptionPlanRow, SubscriptionPriceRow, SubscriptionRow, TransactionRow };
export { PROCESSOR_EVENT_OUTCOMES, type ProcessorEventOutcome } from '../domain/gateway-record.js';

export interface MerchantTable {
  merchant_id: string;
  secret_sealed: string;
  created_at_ms: number;
  /** 1: its v1.3 requests must carry Gt-Body-Signature (migration 0012). */
  v13_body_signature_required: Generated<number>;
  /** When an operator disabled it (gateway clock); null while enabled (migration 0014). */
  disabled_at_ms: number | null;
  /** The secret before the last roll, sealed like secret_sealed; accepted until previous_secret_until_ms (migration 0014). */
  previous_secret_sealed: string | null;
  /** Gateway clock: requests signed with the previous secret are accepted before this time. */
  previous_secret_until_ms: number | null;
}

export interface ApplicationTable {
  merchant_id: string;
  application_key: string;
  created_at_ms: number;
  /** Origins allowed to frame this application's init-pay-in cashier, space-separated (migration 0004_cashier). */
  frame_origins: Generated<string>;
  /** The shop's name the cashier shows its customers; null: the merchant_id (migration 0013). */
  display_name: string | null;
}

export interface FrontendTable {
  merchant_id: string;
  name: string;
  currency: string;
  created_at_ms: number;
  /** The shop's name the cashier shows its customers; null: the merchant_id (migration 0013). */
  display_name: string | null;
}

/** The issuing country of card number prefixes (BINs of 6 to 8 digits), loaded by the operator (migration 0011). */
export interface BinRangeTable {
  prefix: string;
  country: string;
}

export interface SandboxClockTable {
  id: number;
  offset_ms: number;
}

/** The sandbox's own admin token, sealed (migration 0020): one row, id 1. */
export interface SandboxAdminTokenTable {
  id: number;
  token_sealed: string;
  created_at_ms: number;
}

/** Which master key seals, and the fingerprint key sealed under it (migration 0023): one row, id 1. */
export interface MasterKeyStateTable {
  id: number;
  fingerprint_key_sealed: string;
  sealing_key_id: string;
  updated_at_ms: number;
}

/** A master-key rotation's progress through one table of sealed values (migration 0023). */
export interface MasterKeyRotationTable {
  table_name: string;
  target_key_id: string;
  /** The last primary key done, as a JSON array; null before the first batch. */
  after_key: string | null;
  resealed: number;
  done: number;
  updated_at_ms: number;
}

/** The instance that last started on this database (migration 0021): one row, id 1, written at each start. */
export interface InstanceRecordTable {
  id: number;
  /** The base of its webhook URLs: PUBLIC_URL, or the address it listened on. */
  public_url: string;
  /** 1 when public_url is the operator's PUBLIC_URL, 0 when it is the bound address. */
  public_url_configured: number;
  environment: string;
  started_at_ms: number;
}

/** A signed-in browser (@fastify/session's store), by the sha256 of the cookie's session id. */
export interface BackofficeSessionTable {
  session_hash: string;
  user_id: string;
  /** The session's data as @fastify/session keeps it, without the cookie's own attributes. */
  data_json: string;
  expires_at_ms: number;
  created_at_ms: number;
  /**
   * The last request seen in this session (gateway clock), written at most once a minute
   * (http/backoffice/plugin.ts): the idle time-out is measured from it.
   */
  last_seen_at_ms: number;
}

/** Failed sign-ins, counted per e-mail over a window (the lock-out of decisions.md §14). */
export interface BackofficeSignInFailureTable {
  id: Generated<number>;
  email: string;
  address: string;
  at_ms: number;
}

/** An e-mail refused at sign-in until until_ms, known to the system or not (so a lock tells nothing of who has an account). */
export interface BackofficeSignInLockTable {
  email: string;
  until_ms: number;
}

/**
 * A record of domain/ as a Kysely table: the same columns, those the database fills in when an
 * insert leaves them out marked Generated. Selectable<Table<R, ...>> is R itself, so the record
 * has one definition and the statuses it carries (the state machines' unions) type the columns.
 */
type Table<R, Defaulted extends keyof R = never> = { [K in keyof R]: K extends Defaulted ? Generated<R[K]> : R[K] };

/** label: an insert without one gets the default label (sql/merchants.ts), never the column's empty default. */
export type GatewayTable = Table<GatewayRow, 'enabled' | 'label'>;
export type RoutingRuleTable = Table<RoutingRuleRow>;
export type ProcessorEventTable = Table<ProcessorEventRow>;
export type TransactionTable = Table<TransactionRow, 'trace_id' | 'refund_reserved_minor' | 'cascade_level'>;
export type StatusChangeTable = Table<StatusChangeRow, 'id'>;
export type NotificationTable = Table<NotificationRow, 'id' | 'kind' | 'attempts'>;
export type NotificationAttemptTable = Table<NotificationAttemptRow, 'id'>;
export type DueActionTable = Table<DueActionRow, 'id' | 'done' | 'attempts'>;
export type CardVaultTable = Table<CardVaultRow>;
export type SubscriptionPlanTable = Table<SubscriptionPlanRow>;
export type SubscriptionPriceTable = Table<SubscriptionPriceRow>;
export type SubscriptionTable = Table<SubscriptionRow>;
export type SubscriptionChangeTable = Table<SubscriptionChangeRow, 'id'>;
export type CashierSessionTable = Table<CashierSessionRow, 'transaction_type'>;
export type CashierTokenTable = Table<CashierTokenRow>;
export type CashierCustomerTable = Table<CashierCustomerRow>;
export type BackofficeUserTable = Table<BackofficeUserRow>;
export type AuditLogTable = Table<AuditLogRow, 'id'>;
export type AuthorizationActionTable = Table<AuthorizationActionRow, 'attempts'>;
export type DisputeTable = Table<DisputeRow>;
export type RequestLogTable = Table<RequestLogRow, 'id'>;

export interface Database {
  merchants: MerchantTable;
  applications: ApplicationTable;
  frontends: FrontendTable;
  gateways: GatewayTable;
  processor_events: ProcessorEventTable;
  routing_rules: RoutingRuleTable;
  bin_ranges: BinRangeTable;
  transactions: TransactionTable;
  status_changes: StatusChangeTable;
  notifications: NotificationTable;
  notification_attempts: NotificationAttemptTable;
  due_actions: DueActionTable;
  card_vault: CardVaultTable;
  sandbox_clock: SandboxClockTable;
  sandbox_admin_token: SandboxAdminTokenTable;
  master_key_state: MasterKeyStateTable;
  master_key_rotation: MasterKeyRotationTable;
  instance_record: InstanceRecordTable;
  subscription_plans: SubscriptionPlanTable;
  subscription_prices: SubscriptionPriceTable;
  subscriptions: SubscriptionTable;
  subscription_changes: SubscriptionChangeTable;
  cashier_sessions: CashierSessionTable;
  cashier_tokens: CashierTokenTable;
  cashier_customers: CashierCustomerTable;
  backoffice_users: BackofficeUserTable;
  backoffice_sessions: BackofficeSessionTable;
  backoffice_sign_in_failures: BackofficeSignInFailureTable;
  backoffice_sign_in_locks: BackofficeSignInLockTable;
  audit_log: AuditLogTable;
  authorization_actions: AuthorizationActionTable;
  disputes: DisputeTable;
  request_log: RequestLogTable;
}

/** A transaction to insert: every column but trace_id, which the store draws (domain/trace-id.ts, sql/fresh-trace-id.ts). */
export type NewTransactionRow = Omit<Insertable<TransactionTable>, 'trace_id'>;

/** The columns a new transaction row may leave out: the nullable ones and those with a default. */
type OptionalTransactionColumn = Exclude<
  { [K in keyof NewTransactionRow]-?: undefined extends NewTransactionRow[K] ? K : never }[keyof NewTransactionRow],
  'trace_id'
>;

/**
 * What the database stores in each of them when an insert leaves it out (migrations.ts); a new
 * row starts from them (operations/request-row.ts). Typed as a complete map, so a new nullable or
 * defaulted column does not compile until it is listed here; a store test compares the row built
 * from it with the row read back, on both stores.
 */
export const TRANSACTION_COLUMN_DEFAULTS: { readonly [K in OptionalTransactionColumn]: TransactionRow[K] } = {
  refund_reserved_minor: 0,
  card_masked: null,
  card_brand: null,
  card_exp: null,
  card_fingerprint: null,
  card_token: null,
  reference_id: null,
  return_url: null,
  notification_url: null,
  psp_transaction_id: null,
  error_code: null,
  error_details: null,
  description: null,
  redirect_url: null,
  challenge_token_hash: null,
  challenge_expires_at_ms: null,
  challenge_mode: null,
  answer_json: null,
  variables_json: null,
  data_json: null,
  cashier_session_id: null,
  cashier_order_id: null,
  cashier_auth_token: null,
  customer_sealed: null,
  cascade_level: 0,
  cascade_root: null,
};

export type NewGatewayRow = Insertable<GatewayTable>;
export type NewSubscriptionRow = Insertable<SubscriptionTable>;
export type NewCashierSessionRow = Insertable<CashierSessionTable>;
