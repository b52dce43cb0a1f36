// A transaction as the gateway keeps it, with its status history and its due actions: the
// records every part passes around (operations, the state machine, notifications, the store).
// Defined here, so the domain depends on nothing; store/schema.ts builds its tables from them.
// Integers are JavaScript numbers (amounts are capped at 2^53-1), booleans are 0/1 integers,
// times are unix milliseconds. Statuses carry the state machine's unions, so a status it does
// not know does not compile.
// Object types, not interfaces, as Kysely's rows are: a record is also a Readonly<Record<string, unknown>>.
import type { TransactionStatus, TransactionType } from './transaction-state.js';

/** How the request named its shop: an application (v1.2 / v1.3) or a frontend (v1.1). */
export type IdentityKind = 'application_key' | 'frontend';

/** A sandbox challenge: the customer can approve or decline, or the issuer never answers. */
export type ChallengeMode = 'interactive' | 'unresponsive';

export type TransactionRow = {
  trace_id: number;
  merchant_id: string;
  transaction_type: TransactionType;
  order_id: string;
  /** Keyed fingerprint of the request's business content (idempotency). */
  request_fingerprint: string;
  api_version: string;
  identity_kind: IdentityKind;
  identity_value: string;
  gateway_id: string;
  payment_processor: string;
  payment_method: string;
  status: TransactionStatus;
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
  refund_reserved_minor: number;
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
  challenge_mode: ChallengeMode | null;
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
  cascade_level: number;
  /** A cascade attempt's first attempt (the merchant's request); null on the first attempt itself. */
  cascade_root: number | null;
  created_at_ms: number;
  updated_at_ms: number;
};

/** One line of a transaction's status history; from_status is '' on the line of its birth. */
export type StatusChangeRow = {
  id: number;
  trace_id: number;
  from_status: TransactionStatus | '';
  to_status: TransactionStatus;
  reason: string;
  at_ms: number;
};

/**
 * Work the gateway does later on a transaction: apply a result the processor will produce by
 * itself (processor_result), end a challenge nobody answered (challenge_timeout), ask the
 * processor what became of it (processor_lookup), or open the chargeback the sandbox's simulated
 * issuer files after an approval (sandbox_chargeback, CVV 259: decisions §16).
 */
export type DueActionKind = 'processor_result' | 'challenge_timeout' | 'processor_lookup' | 'sandbox_chargeback';

export type DueActionRow = {
  id: number;
  trace_id: number;
  kind: DueActionKind;
  due_at_ms: number;
  /** Applied only while the transaction still has this status. */
  expected_status: TransactionStatus;
  /** The status it leads to; '' for a processor_lookup, whose answer decides. */
  to_status: TransactionStatus | '';
  error_code: string | null;
  error_details: string | null;
  done: number;
  /** processor_lookup: how many times the processor was asked so far (migration 0010). */
  attempts: number;
};
