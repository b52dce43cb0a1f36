// The answer envelope (decisions.md §5): every answer carries status, description, version,
// timestamp and (when the merchant is known) signature. Positive statuses are the merchant's
// doing and name the problem; negative means our fault. docs/errors.md lists each value.
import type { FlatValue } from '../domain/signing.js';
import { signBody } from '../domain/signing.js';

export const Status = {
  OK: 0,
  /** |server time - timestamp| > 60 s. Also "order not found" on find-order (spec §4.7). */
  TIMESTAMP_EXPIRED: 1,
  INVALID_SIGNATURE: 2,
  /** find-order only (spec §4.7): the same value as TIMESTAMP_EXPIRED, as the spec has it. */
  ORDER_NOT_FOUND: 1,
  /** find-order only (spec §4.7). */
  ORDER_OPEN: 3,
  /** find-order only (spec §4.7). */
  ORDER_TIMED_OUT: 4,
  INVALID_FIELD: 10,
  AUTHENTICATION_FAILED: 11,
  DUPLICATE_ORDER: 12,
  TRANSACTION_NOT_FOUND: 13,
  REFUND_REFUSED: 14,
  NO_GATEWAY: 15,
  IN_PROGRESS: 16,
  CARD_DATA_UNREADABLE: 17,
  CARD_TOKEN_NOT_FOUND: 18,
  /** Operator API: the action does not apply to the payout's current status (HTTP 409). */
  TRANSITION_REFUSED: 19,
  UNKNOWN_PATH: 20,
  METHOD_NOT_ALLOWED: 21,
  BODY_TOO_LARGE: 22,
  MALFORMED_BODY: 23,
  /** init-checkout / init-pay-out-order sent again, same content, for an order that can no longer be paid (approved or expired). */
  ORDER_CLOSED: 24,
  /** The request's headers and body did not all arrive within the time limit (HTTP 408; decisions.md §15). */
  REQUEST_TIMEOUT: 25,
  /** The request's headers are over the size limit (HTTP 431). */
  HEADERS_TOO_LARGE: 26,
  /** The URL is not valid percent-encoding (HTTP 400) or a path parameter is over its limit (HTTP 414). */
  MALFORMED_URL: 27,
  /** Above the rate allowed per client address or per merchant (HTTP 429, Retry-After; decisions.md §15). */
  TOO_MANY_REQUESTS: 28,
  /** The gateway's event loop lags (its core saturated): refused before anything was read or recorded (HTTP 503, Retry-After; http/load-shedding.ts). */
  GATEWAY_BUSY: 29,
  /** v1.3: no such plan for this merchant (a deleted plan included). Subscription create answers -1 instead (spec §7). */
  PLAN_NOT_FOUND: 30,
  /** v1.3: no such subscription for this merchant. */
  SUBSCRIPTION_NOT_FOUND: 31,
  /** v1.3: the plan is inactive and takes no new subscriptions. */
  PLAN_NOT_ACTIVE: 32,
  /** v1.3: the price_id is not one of the plan's prices. */
  PRICE_NOT_FOUND: 33,
  /** v1.3: no gateway of the merchant with merchant-initiated transactions enabled takes the currency. */
  CURRENCY_NOT_ALLOWED: 34,
  /** v1.3: the subscription has expired and cannot be cancelled. */
  SUBSCRIPTION_ENDED: 35,
  /** v1.3: the customer already has an active subscription to this price with this card, made by a request with other details. */
  DUPLICATE_SUBSCRIPTION: 36,
  /** A capture or void refused (decisions §16): not an authorized authorization, an amount above it, another action first, or the processor refused. */
  AUTHORIZATION_REFUSED: 37,
  INTERNAL_ERROR: -1,
} as const;

export interface Reply {
  readonly status: number;
  readonly description: string;
  /** Fields of the answer besides the envelope's own. */
  readonly fields?: Readonly<Record<string, FlatValue>>;
  /** 200 unless the edge itself refused the request (decisions.md §5). */
  readonly http_code?: number;
  /**
   * Set when the answer reports only what this request itself just committed, durably: the
   * pipeline then need not wait for other requests' commits to reach the disk (Store.durable).
   */
  readonly from_own_commit?: true;
}

export function reply(status: number, description: string, fields?: Record<string, FlatValue>): Reply {
  return fields ? { status, description, fields } : { status, description };
}

export function fieldError(description: string): Reply {
  return reply(Status.INVALID_FIELD, description);
}

/** The body sent: envelope plus fields, with a fresh timestamp and, when we can, a signature last. */
export function answerBody(answer: Reply, version: string, timestamp: number, secret: string | null): Record<string, FlatValue> {
  const body: Record<string, FlatValue> = { status: answer.status, description: answer.description, ...answer.fields, version, timestamp };
  if (secret !== null) body.signature = signBody(body, secret);
  return body;
}

/** Any JSON value: v1.3 answers carry lists and objects (prices, price, plans), unlike body-signed ones. */
export type JsonValue = string | number | boolean | null | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/** The answer of a header-signed (v1.3) route: its fields may be nested. */
export interface JsonReply {
  readonly status: number;
  readonly description: string;
  readonly fields?: Readonly<Record<string, JsonValue | undefined>>;
  readonly http_code?: number;
}

/** The body of a v1.3 answer: status, description, fields, version, timestamp (the signature is a header). */
export function answerJson(answer: JsonReply, version: string, timestamp: number): Record<string, JsonValue | undefined> {
  const fields = { ...answer.fields };
  for (const own of ['status', 'description', 'version', 'timestamp']) delete fields[own];
  return { status: answer.status, description: answer.description, ...fields, version, timestamp };
}
