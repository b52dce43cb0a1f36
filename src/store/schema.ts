// Table shapes as Kysely sees them. Both dialects share these: integers are JavaScript
// numbers (the PostgreSQL pool parses int8 into numbers; amounts are capped at 2^53-1),
// booleans are 0/1 integers, times are unix milliseconds.
import type { Generated, Insertable, Selectable } from 'kysely';

export interface MerchantTable {
  merchant_id: string;
  secret_sealed: string;
  created_at_ms: number;
}

export interface ApplicationTable {
  merchant_id: string;
  application_key: string;
  created_at_ms: number;
}

export interface FrontendTable {
  merchant_id: string;
  name: string;
  currency: string;
  created_at_ms: number;
}

export interface GatewayTable {
  gateway_id: string;
  merchant_id: string;
  processor: string;
  /** Comma-separated ISO codes. */
  currencies: string;
  mit_enabled: number;
  hold_payouts: number;
  created_at_ms: number;
}

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
  trace_id: number;
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

export interface Database {
  merchants: MerchantTable;
  applications: ApplicationTable;
  frontends: FrontendTable;
  gateways: GatewayTable;
  transactions: TransactionTable;
  status_changes: StatusChangeTable;
  notifications: NotificationTable;
  notification_attempts: NotificationAttemptTable;
  due_actions: DueActionTable;
  card_vault: CardVaultTable;
  sandbox_clock: SandboxClockTable;
}

export type TransactionRow = Selectable<TransactionTable>;
export type NewTransactionRow = Insertable<TransactionTable>;
export type GatewayRow = Selectable<GatewayTable>;
export type NotificationRow = Selectable<NotificationTable>;
export type DueActionRow = Selectable<DueActionTable>;
export type CardVaultRow = Selectable<CardVaultTable>;
