// Table shapes as Kysely sees them. Both dialects share these: integers are JavaScript
// numbers (the PostgreSQL pool parses int8 into numbers; amounts are capped at 2^53-1),
// booleans are 0/1 integers, times are unix milliseconds.
import type { Generated, Insertable, Selectable } from 'kysely';

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

/** A merchant's account at one processor, reached through a connector (decisions.md §13, docs/connectors.md). */
export interface GatewayTable {
  gateway_id: string;
  merchant_id: string;
  /** The connector's name: sandbox, checkout (migration 0010 renamed it from `processor`). */
  connector: string;
  /** Comma-separated ISO codes. */
  currencies: string;
  mit_enabled: number;
  hold_payouts: number;
  created_at_ms: number;
  /** The connector's settings as one JSON object, sealed with the master key (credentials included); null: none. */
  settings_sealed: string | null;
  /** 0 once an operator disabled it: no new payment goes to it; its transactions still settle, refund and take webhooks. */
  enabled: Generated<number>;
  /** Changes with its settings, so every instance's copy of the connector is rebuilt (connectors/registry.ts). */
  updated_at_ms: number;
}

/**
 * A merchant's routing rule (migration 0011, docs/connectors.md): the payments it matches go to
 * its gateway, rules tried by priority. Each condition null matches any payment.
 */
export interface RoutingRuleTable {
  rule_id: string;
  merchant_id: string;
  gateway_id: string;
  /** Lower first; equal priorities in creation order. */
  priority: number;
  /** Comma-separated ISO 4217 codes. */
  currencies: string | null;
  amount_min_minor: number | null;
  amount_max_minor: number | null;
  /** Comma-separated card brands as domain/cards.ts names them (VISA, MASTERCARD, ...). */
  card_brands: string | null;
  /** Comma-separated ISO 3166-1 alpha-2 codes of the card's issuing country, by its BIN (bin_ranges). */
  bin_countries: string | null;
  created_at_ms: number;
}

/** The issuing country of card number prefixes (BINs of 6 to 8 digits), loaded by the operator (migration 0011). */
export interface BinRangeTable {
  prefix: string;
  country: string;
}

/** The processors' webhook events applied, by their own id: a replayed event changes nothing (migration 0010). */
export interface ProcessorEventTable {
  gateway_id: string;
  event_id: string;
  event_type: string;
  /** The transaction it was matched to; null when none was found. */
  trace_id: number | null;
  /** What it did: one of PROCESSOR_EVENT_OUTCOMES. */
  outcome: string;
  received_at_ms: number;
}

/**
 * What a recorded webhook event did (operations/processor-webhook.ts): changed its transaction,
 * found it with that outcome already, found no transaction of the gateway (what an operator
 * looks into), or decided nothing. A replay is never recorded: its id is taken.
 */
export const PROCESSOR_EVENT_OUTCOMES = ['applied', 'unchanged', 'unmatched', 'ignored'] as const;
export type ProcessorEventOutcome = (typeof PROCESSOR_EVENT_OUTCOMES)[number];

export interface TransactionTable {
  trace_id: Generated<number>;
  merchant_id: string;
  transaction_type: string;
  order_id: string;
  /** Keyed fingerprint of the request's business content (idempotency). */
  request_fingerprint: string;
  api_version: string;
  identity_kind: string;
  identity_value: string;
  gateway_id: string;
  payment_processor: string;
  payment_method: string;
  status: string;
  amount_minor: number;
  currency: string;
  charge_amount_minor: number;
  charge_currency: string;
  pin: string;
  card_masked: string | null;
  card_brand: string | null;
  card_exp: string | null;
  card_fingerprint: string | null;
  card_token: string | null;
  reference_id: number | null;
  /** On sales: the sum of refunds approved or in flight; a CHECK keeps it within amount_minor. */
  refund_reserved_minor: Generated<number>;
  return_url: string | null;
  notification_url: string | null;
  psp_transaction_id: string | null;
  error_code: string | null;
  error_details: string | null;
  description: string | null;
  redirect_url: string | null;
  challenge_token_hash: string | null;
  challenge_expires_at_ms: number | null;
  /** 'interactive' (the customer can approve or decline) or 'unresponsive' (the issuer never answers). */
  challenge_mode: string | null;
  /** The answer given to the request (without timestamp and signature), replayed to duplicates. */
  answer_json: string | null;
  variables_json: string | null;
  /** Direct payouts: the request's data_ fields as a JSON object (migration 0002_payouts). */
  data_json: string | null;
  /** Cashier (migration 0004_cashier): the session the transaction was made in; null outside the cashier. */
  cashier_session_id: string | null;
  /** Cashier: the order_id the merchant knows (the session's), notified instead of the internal order_id. */
  cashier_order_id: string | null;
  /** Cashier: the session's auth_token, notified (spec §6.2). It no longer logs anyone in once written here (docs/cashier.md). */
  cashier_auth_token: string | null;
  /**
   * Payouts only (migration 0010): the request's customer (name, address) sealed, which a
   * processor's card payout needs when an operator releases a held payout later.
   */
  customer_sealed: string | null;
  /**
   * Cascade (migration 0011): 0 for a merchant's request; n for the n-th retry of it on another
   * gateway, whose row has its own trace_id and an internal order_id.
   */
  cascade_level: Generated<number>;
  /** A cascade attempt's first attempt (the merchant's request); null on the first attempt itself. */
  cascade_root: number | null;
  created_at_ms: number;
  updated_at_ms: number;
}

export interface StatusChangeTable {
  id: Generated<number>;
  trace_id: number;
  from_status: string;
  to_status: string;
  reason: string;
  at_ms: number;
}

export interface NotificationTable {
  id: Generated<number>;
  /** The transaction notified; null for a subscription event (migration 0003_subscriptions). */
  trace_id: number | null;
  /** 'transaction' (signed in the body, decisions.md §1) or 'subscription_event' (Gt-Authentication header, §2). */
  kind: Generated<string>;
  /** The subscription of a subscription event; null for a transaction notification. */
  subscription_id: string | null;
  merchant_id: string;
  url: string;
  /** The unsigned body, timestamp included; signed at each send so every resend is identical. */
  payload_json: string;
  state: string;
  attempts: Generated<number>;
  next_attempt_at_ms: number;
  lease_until_ms: number | null;
  lease_owner: string | null;
  last_error: string | null;
  created_at_ms: number;
  updated_at_ms: number;
  /**
   * Gateway clock: the resend bound (PAYGATE_NOTIFY_MAX_AGE_SECONDS) counts from here. Set at
   * creation and again by an operator's manual resend, which so gets a whole bound of its own
   * (migration 0007_notification_bound). null only on a row written without it by hand; read
   * as created_at_ms then (boundFrom in notifications/schedule.ts).
   */
  bound_from_ms: number | null;
}

export interface NotificationAttemptTable {
  id: Generated<number>;
  notification_id: number;
  attempt_no: number;
  started_at_ms: number;
  duration_ms: number;
  http_status: number | null;
  reply_excerpt: string | null;
  outcome: string;
  reason: string;
}

export interface DueActionTable {
  id: Generated<number>;
  trace_id: number;
  kind: string;
  due_at_ms: number;
  expected_status: string;
  to_status: string;
  error_code: string | null;
  error_details: string | null;
  done: Generated<number>;
  /** processor_lookup: how many times the processor was asked so far (migration 0010). */
  attempts: Generated<number>;
}

export interface CardVaultTable {
  card_token: string;
  merchant_id: string;
  pin: string;
  pan_sealed: string;
  pan_fingerprint: string;
  card_masked: string;
  card_exp: string;
  card_brand: string | null;
  created_at_ms: number;
}

export interface SandboxClockTable {
  id: number;
  offset_ms: number;
}

/** Subscription plans (migration 0003_subscriptions). A deleted plan stays as a row but is never shown. */
export interface SubscriptionPlanTable {
  plan_id: string;
  merchant_id: string;
  name: string;
  description: string | null;
  billing_cycle: string;
  trial_period: number;
  trial_period_cycle: string;
  /** Charges after which a subscription expires; null: until cancelled. */
  expiration_cycles: number | null;
  retries_number: number;
  retries_delay_days: number;
  /** active, inactive, deleted (spec §3.4). */
  status: string;
  created_at_ms: number;
  updated_at_ms: number;
}

/** One price per currency per plan: a unique (plan_id, currency) constraint says so. */
export interface SubscriptionPriceTable {
  price_id: string;
  plan_id: string;
  currency: string;
  amount_minor: number;
  /** Order of the prices as the merchant gave them. */
  position: number;
}

export interface SubscriptionTable {
  subscription_id: string;
  merchant_id: string;
  /** The application that created it: renewals are sales of this application, events carry it. */
  application_key: string;
  plan_id: string;
  price_id: string;
  cid: string;
  card_token: string;
  /** The price when the subscription was created. */
  amount_minor: number;
  currency: string;
  notification_url: string;
  /** active, inactive, expired, canceled: changed only by domain/subscription-state.ts. */
  status: string;
  billing_cycle: string;
  /** Due time of the first charge (reset by an activation); later charges fall on this date's series (billing-calendar.ts). */
  anchor_at_ms: number;
  expiration_cycles: number | null;
  retries_number: number;
  retries_delay_days: number;
  /** Approved charges so far; the next charge is cycle cycles_charged + 1. */
  cycles_charged: number;
  /** Attempts of the next cycle so far (0 before its first); keeps counting across reactivations, so no order_id is reused. */
  attempt: number;
  /** When the billing worker next looks at it; null when nothing more is due (not active). */
  next_charge_at_ms: number | null;
  /** The billing worker's claim, so two instances never work on one subscription at once. */
  lease_until_ms: number | null;
  lease_owner: string | null;
  last_trace_id: number | null;
  last_error: string | null;
  /** Bumped by every change: the compare-and-set of subscription-state.ts. */
  version: number;
  created_at_ms: number;
  updated_at_ms: number;
  ended_at_ms: number | null;
}

export interface SubscriptionChangeTable {
  id: Generated<number>;
  subscription_id: string;
  from_status: string;
  to_status: string;
  event: string;
  reason: string;
  at_ms: number;
}

/**
 * A hosted cashier session (migration 0004_cashier), opened by init-pay-in, init-checkout,
 * init-pay-out or init-pay-out-order. The last two are orders (spec §2.4): order_id is set and
 * order_status is changed only by domain/order-state.ts.
 */
export interface CashierSessionTable {
  session_id: string;
  merchant_id: string;
  /** pay_in, checkout, pay_out, pay_out_order. */
  kind: string;
  identity_kind: string;
  identity_value: string;
  api_version: string;
  /** The merchant's order_id (checkout, pay_out_order); null for pay_in and pay_out. Unique per merchant. */
  order_id: string | null;
  /** Keyed fingerprint of the init request (idempotency of order sessions). */
  request_fingerprint: string;
  /** sha256 of the auth_token: how a login by auth_token finds the session. */
  auth_token_hash: string;
  currency: string;
  /** The exact amount of an order; null for pay_in and pay_out. */
  amount_minor: number | null;
  /** pay_out: the customer's balance as sent; withdrawals never exceed what is left of it. */
  balance_minor: number | null;
  pin: string;
  country: string;
  /** The customer fields the merchant sent, as sealed JSON (personal data is not kept in clear). */
  customer_sealed: string;
  locale: string | null;
  payment_method: string | null;
  gateway_id: string | null;
  profile: number | null;
  return_url: string;
  notification_url: string;
  validation_url: string | null;
  variables_json: string | null;
  /** Orders only: pending, authorized, approved, rejected (spec §3.3). */
  order_status: string | null;
  /** The session (and its order) lives until then: 15 minutes after it was opened. */
  expires_at_ms: number;
  /** When the order closed (approved, or rejected at its time limit). */
  closed_at_ms: number | null;
  /** Attempts claimed so far; the n-th attempt's transaction has the internal order_id of attempt n. */
  attempts: number;
  /** While set and in the future (real wall clock), a customer request is busy with attempt `attempts`: no second one starts. */
  claim_until_ms: number | null;
  created_at_ms: number;
  updated_at_ms: number;
}

/** One-time login tokens (redirect_url) and browser sessions (the cookie), stored as sha256 hashes. */
export interface CashierTokenTable {
  token_hash: string;
  session_id: string;
  /** login: one use, in redirect_url; browser: the HttpOnly cookie. */
  kind: string;
  expires_at_ms: number;
  used_at_ms: number | null;
  created_at_ms: number;
}

/** What a customer entered in the one-time registration form, per merchant and pin, sealed. */
export interface CashierCustomerTable {
  merchant_id: string;
  pin: string;
  profile_sealed: string;
  created_at_ms: number;
  updated_at_ms: number;
}

/** A person who signs in to the back office (migration 0015, docs/backoffice.md). */
export interface BackofficeUserTable {
  user_id: string;
  /** Lower-cased; unique. */
  email: string;
  /** argon2id, PHC string (@node-rs/argon2). */
  password_hash: string;
  /** operator (every merchant) or merchant (its merchant_id only): a CHECK ties the two columns. */
  role: string;
  merchant_id: string | null;
  created_at_ms: number;
  /** Set once disabled: the user can no longer sign in and its sessions end at their next request. */
  disabled_at_ms: number | null;
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

/** Who did what, when and from where in the back office; operators read it (docs/backoffice.md). */
export interface AuditLogTable {
  id: Generated<number>;
  at_ms: number;
  /** null for an attempt by nobody known (a failed sign-in with an unknown e-mail). */
  user_id: string | null;
  email: string;
  role: string | null;
  /** The merchant whose data the action touched, if any: a merchant's staff see only their own merchant's lines. */
  merchant_id: string | null;
  action: string;
  /** What it acted on (a trace_id, a user's e-mail, a gateway id), or null. */
  target: string | null;
  address: string;
  /** done, refused, failed: what came of it. */
  outcome: string;
  /** A short account, never a secret, a password or a card number. */
  detail: string | null;
}

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
}

export type TransactionRow = Selectable<TransactionTable>;
export type NewTransactionRow = Insertable<TransactionTable>;

/** The columns a new transaction row may leave out: the nullable ones and those with a default. */
type OptionalTransactionColumn = Exclude<
  { [K in keyof NewTransactionRow]-?: undefined extends NewTransactionRow[K] ? K : never }[keyof NewTransactionRow], 'trace_id'>;

/**
 * What the database stores in each of them when an insert leaves it out (migrations.ts); a new
 * row starts from them (operations/lifecycle.ts). Typed as a complete map, so a new nullable or
 * defaulted column does not compile until it is listed here; a store test compares the row built
 * from it with the row read back, on both stores.
 */
export const TRANSACTION_COLUMN_DEFAULTS: { readonly [K in OptionalTransactionColumn]: TransactionRow[K] } = {
  refund_reserved_minor: 0, card_masked: null, card_brand: null, card_exp: null, card_fingerprint: null, card_token: null,
  reference_id: null, return_url: null, notification_url: null, psp_transaction_id: null, error_code: null, error_details: null,
  description: null, redirect_url: null, challenge_token_hash: null, challenge_expires_at_ms: null, challenge_mode: null,
  answer_json: null, variables_json: null, data_json: null, cashier_session_id: null, cashier_order_id: null, cashier_auth_token: null,
  customer_sealed: null, cascade_level: 0, cascade_root: null,
};

export type GatewayRow = Selectable<GatewayTable>;
export type NewGatewayRow = Insertable<GatewayTable>;
export type ProcessorEventRow = Selectable<ProcessorEventTable>;
export type RoutingRuleRow = Selectable<RoutingRuleTable>;
export type NotificationRow = Selectable<NotificationTable>;
export type DueActionRow = Selectable<DueActionTable>;
export type CardVaultRow = Selectable<CardVaultTable>;
export type SubscriptionPlanRow = Selectable<SubscriptionPlanTable>;
export type SubscriptionPriceRow = Selectable<SubscriptionPriceTable>;
export type SubscriptionRow = Selectable<SubscriptionTable>;
export type NewSubscriptionRow = Insertable<SubscriptionTable>;
export type CashierSessionRow = Selectable<CashierSessionTable>;
export type NewCashierSessionRow = Insertable<CashierSessionTable>;
export type CashierTokenRow = Selectable<CashierTokenTable>;
export type CashierCustomerRow = Selectable<CashierCustomerTable>;
export type BackofficeUserRow = Selectable<BackofficeUserTable>;
export type AuditLogRow = Selectable<AuditLogTable>;
