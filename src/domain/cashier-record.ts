// A hosted cashier session (and the order it may carry), its one-time tokens and the customers
// the cashier remembers, as the gateway keeps them: records that operations, the order state
// machine and the cashier pages pass around. Defined here, so the domain depends on nothing;
// store/schema.ts builds its tables from them. Times are unix milliseconds.
// Object types, not interfaces, as Kysely's rows are: a record is also a Readonly<Record<string, unknown>>.
import type { OrderStatus } from './order-state.js';
import type { IdentityKind } from './transaction-record.js';

/** What opened the session: init-pay-in, init-checkout, init-pay-out, init-pay-out-order. */
export type SessionKind = 'pay_in' | 'checkout' | 'pay_out' | 'pay_out_order';

/**
 * A hosted cashier session (migration 0004_cashier), opened by init-pay-in, init-checkout,
 * init-pay-out or init-pay-out-order. The last two are orders (spec §2.4): order_id is set and
 * order_status is changed only by transitions/order.ts, checked against domain/order-state.ts.
 */
export type CashierSessionRow = {
  session_id: string;
  merchant_id: string;
  /** pay_in, checkout, pay_out, pay_out_order. */
  kind: SessionKind;
  identity_kind: IdentityKind;
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
  /**
   * init-checkout's transaction_type (migration 0018): `authorize` makes the order's card payment
   * an authorization, captured later (decisions §16); `sale` otherwise.
   */
  transaction_type: 'sale' | 'authorize';
  /** Orders only: pending, authorized, approved, rejected (spec §3.3). */
  order_status: OrderStatus | null;
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
};

/** login: one use, in redirect_url; browser: the HttpOnly cookie. */
export type CashierTokenKind = 'login' | 'browser';

/** One-time login tokens (redirect_url) and browser sessions (the cookie), stored as sha256 hashes. */
export type CashierTokenRow = {
  token_hash: string;
  session_id: string;
  /** login: one use, in redirect_url; browser: the HttpOnly cookie. */
  kind: CashierTokenKind;
  expires_at_ms: number;
  used_at_ms: number | null;
  created_at_ms: number;
};

/** What a customer entered in the one-time registration form, per merchant and pin, sealed. */
export type CashierCustomerRow = {
  merchant_id: string;
  pin: string;
  profile_sealed: string;
  created_at_ms: number;
  updated_at_ms: number;
};
