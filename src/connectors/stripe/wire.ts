// Stripe's objects and errors as the Stripe connector reads them: the parts of a PaymentIntent, a
// Refund, a Charge and a Dispute it uses, checked for shape (an answer that does not read is an
// unknown outcome, never a guess), and what a call through the `stripe` package came to. Apart from the connector so that
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
  /** manual: an authorization, captured or canceled later (automatic when Stripe does not say). */
  readonly capture_method: string;
  readonly amount_received: number | null;
  /** Its last charge's id, whether Stripe gave the id or the object (expand[]=latest_charge). */
  readonly latest_charge: string | null;
  /** That charge's status, when it was expanded; null otherwise. */
  readonly latest_charge_status: string | null;
}

/** The parts of a Charge this connector reads (charge.captured). */
export interface Charge {
  readonly id: string;
  readonly payment_intent: string | null;
  readonly amount_captured: number | null;
  readonly trace_id: number | null;
}

/** The parts of a Dispute this connector reads (charge.dispute.*). */
export interface Dispute {
  readonly id: string;
  /** Stripe's status as given; status-map.ts's disputeStage reads it. */
  readonly status: string;
  readonly amount: number | null;
  /** ISO 4217 in upper case. */
  readonly currency: string | null;
  readonly reason: string | null;
  /** evidence_details.due_by (unix seconds); null when absent or 0 (no response allowed). */
  readonly due_by_s: number | null;
  readonly payment_intent: string | null;
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

/** An expandable field's id: the text Stripe gives by default, or the id of the object it gives when expanded. */
export function idOf(value: unknown): string | null {
  return isObject(value) ? text(value.id) : text(value);
}

/** The PaymentIntent a Refund (or any object with the field) is of, read apart from readRefund: only a refund's webhook needs it. */
export function paymentIntentOf(value: unknown): string | null {
  return isObject(value) ? idOf(value.payment_intent) : null;
}

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
    capture_method: text(value.capture_method) ?? 'automatic',
    amount_received: whole(value.amount_received),
    latest_charge: idOf(value.latest_charge),
    latest_charge_status: isObject(value.latest_charge) ? text(value.latest_charge.status) : null,
  };
}

export function readCharge(value: unknown): Charge | null {
  if (!isObject(value) || value.object !== 'charge') return null;
  const id = text(value.id);
  if (id === null) return null;
  return {
    id,
    payment_intent: idOf(value.payment_intent),
    amount_captured: whole(value.amount_captured),
    trace_id: traceIdOf(value.metadata),
  };
}

export function readDispute(value: unknown): Dispute | null {
  if (!isObject(value) || value.object !== 'dispute') return null;
  const id = text(value.id);
  const status = text(value.status);
  if (id === null || status === null) return null;
  const due_by = isObject(value.evidence_details) ? whole(value.evidence_details.due_by) : null;
  return {
    id,
    status,
    amount: whole(value.amount),
    currency: text(value.currency)?.toUpperCase() ?? null,
    reason: text(value.reason),
    due_by_s: due_by !== null && due_by > 0 ? due_by : null,
    payment_intent: idOf(value.payment_intent),
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
