// Stripe's objects and errors as the Stripe connector reads them: the parts of a PaymentIntent and
// of a Refund it uses, checked for shape (an answer that does not read is an unknown outcome, never
// a guess), and what a call through the `stripe` package came to. Apart from the connector so that
// the wire mapping is one file, as hyperswitch keeps it in a connector's transformers.
import { INTENT_STATUSES, type IntentStatus, REFUND_STATUSES, type RefundStatus } from './status-map.js';

/** The parts of a PaymentIntent this connector reads. */
export interface Intent {
  readonly id: string;
  readonly status: IntentStatus;
  readonly amount: number | null;
  readonly currency: string | null;
  readonly trace_id: number | null;
  readonly redirect_url: string | null;
  readonly error_code: string | null;
  readonly error_message: string | null;
}

export interface Refund {
  readonly id: string;
  readonly status: RefundStatus;
  readonly amount: number | null;
  /** ISO 4217 in upper case (Stripe writes it in lower case). */
  readonly currency: string | null;
  readonly trace_id: number | null;
  readonly reason: string | null;
}

export type Json = Record<string, unknown>;
export const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
export const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);
export const whole = (value: unknown): number | null => (typeof value === 'number' && Number.isSafeInteger(value) ? value : null);

export function traceIdOf(metadata: unknown): number | null {
  const value = isObject(metadata) ? metadata.paygate_trace_id : undefined;
  return typeof value === 'string' && /^[1-9][0-9]{0,15}$/.test(value) ? Number(value) : null;
}

export function readIntent(value: unknown): Intent | null {
  if (!isObject(value) || value.object !== 'payment_intent') return null;
  const id = text(value.id);
  const status = text(value.status);
  if (id === null || status === null || !(INTENT_STATUSES as readonly string[]).includes(status)) return null;
  const action = isObject(value.next_action) ? value.next_action : null;
  const redirect =
    action && action.type === 'redirect_to_url' && isObject(action.redirect_to_url) ? text(action.redirect_to_url.url) : null;
  const error = isObject(value.last_payment_error) ? value.last_payment_error : null;
  return {
    id,
    status: status as IntentStatus,
    amount: whole(value.amount),
    currency: text(value.currency),
    trace_id: traceIdOf(value.metadata),
    redirect_url: redirect,
    error_code: error ? (text(error.decline_code) ?? text(error.code)) : null,
    error_message: error ? text(error.message) : null,
  };
}

export function readRefund(value: unknown): Refund | null {
  if (!isObject(value) || value.object !== 'refund') return null;
  const id = text(value.id);
  const status = text(value.status);
  if (id === null || status === null || !(REFUND_STATUSES as readonly string[]).includes(status)) return null;
  return {
    id,
    status: status as RefundStatus,
    amount: whole(value.amount),
    currency: text(value.currency)?.toUpperCase() ?? null,
    trace_id: traceIdOf(value.metadata),
    reason: text(value.failure_reason),
  };
}

/** What a call to Stripe came to: its value, an error Stripe (or the network) gave, or no answer in time. */
export type Call<T> =
  | { readonly kind: 'value'; readonly value: T }
  | { readonly kind: 'failed'; readonly error: unknown }
  | { readonly kind: 'lost'; readonly reason: string };

export interface StripeFailure {
  readonly type?: string;
  readonly statusCode?: number;
  readonly code?: string;
  readonly decline_code?: string;
  readonly message?: string;
  readonly detail?: { readonly code?: string };
  readonly raw?: { readonly payment_intent?: unknown };
}
