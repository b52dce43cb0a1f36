// Checkout.com's wire format, as its Unified Payments API describes it (test/psp-specs/checkout.com,
// the published OpenAPI description): the requests this connector sends and the parts of the
// answers and webhook events it reads. Answers are read defensively (readers below): a field
// missing or of another type makes the answer unreadable, and an unreadable answer is an
// unknown outcome, never a guess.

export interface CkoAddress {
  readonly address_line1?: string;
  readonly city?: string;
  readonly state?: string;
  readonly zip?: string;
  /** ISO 3166-1 alpha-2. */
  readonly country?: string;
}

export interface CkoCardSource {
  readonly type: 'card';
  readonly number: string;
  readonly expiry_month: number;
  readonly expiry_year: number;
  readonly cvv?: string;
  readonly name?: string;
  readonly billing_address?: CkoAddress;
}

/** Ours, on every payment: the lookup and webhooks find exactly this transaction by it. */
export interface CkoMetadata {
  readonly paygate_trace_id: number;
}

export interface CkoPaymentRequest {
  readonly source: CkoCardSource;
  readonly amount: number;
  readonly currency: string;
  readonly payment_type: 'Regular' | 'Recurring';
  readonly merchant_initiated?: boolean;
  readonly reference: string;
  /** false: an authorization only, captured or voided later (decisions §16). */
  readonly capture: boolean;
  readonly customer?: { readonly email?: string; readonly name?: string };
  readonly '3ds'?: { readonly enabled: boolean };
  readonly processing_channel_id: string;
  readonly success_url?: string;
  readonly failure_url?: string;
  readonly payment_ip?: string;
  readonly metadata: CkoMetadata;
}

/**
 * A payout to a card (Checkout.com's card payouts through POST /payments, as its later description
 * gives them: a card destination and instruction.funds_transfer_type; test/psp-specs/checkout.com).
 */
export interface CkoCardPayoutRequest {
  readonly source: { readonly type: 'currency_account'; readonly id: string };
  readonly destination: {
    readonly type: 'card';
    readonly number: string;
    readonly expiry_month: number;
    readonly expiry_year: number;
    readonly account_holder: {
      readonly type: 'individual';
      readonly first_name: string;
      readonly last_name: string;
      readonly billing_address?: CkoAddress;
    };
  };
  readonly amount: number;
  readonly currency: string;
  readonly reference: string;
  readonly instruction: { readonly funds_transfer_type: string };
  readonly processing_channel_id: string;
  readonly metadata: CkoMetadata;
}

export interface CkoRefundRequest {
  readonly amount: number;
  readonly reference: string;
  readonly metadata: CkoMetadata;
}

/**
 * POST /payments/{id}/captures (CaptureRequest): the amount (less than authorized is a partial
 * capture) and `Final`, so that what is not captured is released at once (one capture per
 * authorization, decisions §16).
 */
export interface CkoCaptureRequest {
  readonly amount: number;
  readonly capture_type: 'Final';
  readonly reference: string;
  readonly metadata: CkoMetadata;
}

/** POST /payments/{id}/voids (VoidRequest). */
export interface CkoVoidRequest {
  readonly reference: string;
  readonly metadata: CkoMetadata;
}

/** Checkout.com's payment statuses (PaymentDetails.status, PaymentResponse.status, webhook data.status). */
export const CKO_PAYMENT_STATUSES = [
  'Pending',
  'Authorized',
  'Card Verified',
  'Voided',
  'Partially Captured',
  'Captured',
  'Partially Refunded',
  'Refunded',
  'Declined',
  'Canceled',
  'Expired',
  'Paid',
] as const;
export type CkoPaymentStatus = (typeof CKO_PAYMENT_STATUSES)[number];

/** The parts of a payment (an answer to POST /payments, GET /payments/{id}, a list item) this connector reads. */
export interface CkoPayment {
  readonly id: string;
  readonly status: CkoPaymentStatus;
  readonly approved: boolean | null;
  readonly amount: number | null;
  readonly currency: string | null;
  readonly response_code: string | null;
  readonly response_summary: string | null;
  readonly reference: string | null;
  readonly trace_id: number | null;
  /** `_links.redirect.href`: the processor's 3-D Secure page. */
  readonly redirect_url: string | null;
}

/** The parts of a payment action (GET /payments/{id}/actions) this connector reads. */
export interface CkoAction {
  readonly id: string;
  readonly type: string;
  readonly amount: number | null;
  readonly approved: boolean | null;
  readonly response_code: string | null;
  readonly response_summary: string | null;
  readonly reference: string | null;
  /** Our trace_id from the action's metadata: a refund (or capture) the gateway asked for. */
  readonly trace_id: number | null;
}

/**
 * A webhook event: its id, type and data. Payment events (Events/EventObject) carry the payment's
 * data (`id` the payment); dispute events carry the dispute's (`id` the dispute, `payment_id` the
 * payment, category, reason_code, evidence_required_by: the examples of Checkout.com's webhook
 * pages, test/psp-specs/checkout.com/SOURCE.md).
 */
export interface CkoEvent {
  readonly id: string;
  readonly type: string;
  readonly data: {
    readonly id: string | null;
    readonly action_id: string | null;
    readonly amount: number | null;
    readonly currency: string | null;
    readonly response_code: string | null;
    readonly response_summary: string | null;
    readonly reference: string | null;
    readonly trace_id: number | null;
    /** Dispute events: the disputed payment. */
    readonly payment_id: string | null;
    readonly category: string | null;
    readonly reason_code: string | null;
    /** Dispute events: the deadline for evidence (ISO 8601), when the event gives one. */
    readonly evidence_required_by: string | null;
  };
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

function whole(value: unknown): number | null {
  return typeof value === 'number' && Number.isSafeInteger(value) ? value : null;
}

/** Our trace_id from a payment's metadata, given as a number or its decimal text. */
function traceIdOf(metadata: unknown): number | null {
  if (!isObject(metadata)) return null;
  const value = metadata.paygate_trace_id;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) return value;
  if (typeof value === 'string' && /^[1-9][0-9]{0,15}$/.test(value)) return Number(value);
  return null;
}

export function readPayment(json: unknown): CkoPayment | null {
  if (!isObject(json)) return null;
  const id = text(json.id);
  const status = text(json.status);
  if (id === null || status === null || !(CKO_PAYMENT_STATUSES as readonly string[]).includes(status)) return null;
  const links = isObject(json._links) ? json._links : {};
  const redirect = isObject(links.redirect) ? text(links.redirect.href) : null;
  return {
    id,
    status: status as CkoPaymentStatus,
    approved: typeof json.approved === 'boolean' ? json.approved : null,
    amount: whole(json.amount),
    currency: text(json.currency),
    response_code: text(json.response_code),
    response_summary: text(json.response_summary),
    reference: text(json.reference),
    trace_id: traceIdOf(json.metadata),
    redirect_url: redirect,
  };
}

/** GET /payments?reference=: its `data` items; null when the answer is not such a list. */
export function readPaymentList(json: unknown): CkoPayment[] | null {
  if (!isObject(json) || !Array.isArray(json.data)) return null;
  const payments: CkoPayment[] = [];
  for (const item of json.data) {
    const payment = readPayment(item);
    if (payment === null) return null;
    payments.push(payment);
  }
  return payments;
}

export function readActions(json: unknown): CkoAction[] | null {
  if (!Array.isArray(json)) return null;
  const actions: CkoAction[] = [];
  for (const item of json) {
    if (!isObject(item)) return null;
    const id = text(item.id);
    const type = text(item.type);
    if (id === null || type === null) return null;
    actions.push({
      id,
      type,
      amount: whole(item.amount),
      approved: typeof item.approved === 'boolean' ? item.approved : null,
      response_code: text(item.response_code),
      response_summary: text(item.response_summary),
      reference: text(item.reference),
      trace_id: traceIdOf(item.metadata),
    });
  }
  return actions;
}

/** The answer to a refund, capture or void request (RefundAcceptedResponse, CaptureAcceptedResponse, VoidAcceptedResponse). */
export function readActionAccepted(json: unknown): { readonly action_id: string } | null {
  if (!isObject(json)) return null;
  const action_id = text(json.action_id);
  return action_id === null ? null : { action_id };
}

/** A validation error's codes (ValidationError: error_type, error_codes), for the operator. */
export function readErrorCodes(json: unknown): string {
  if (!isObject(json)) return '';
  const codes = Array.isArray(json.error_codes) ? json.error_codes.filter((c): c is string => typeof c === 'string') : [];
  return [text(json.error_type), ...codes]
    .filter((c): c is string => c !== null && c !== '')
    .join(', ')
    .slice(0, 200);
}

export function readEvent(json: unknown): CkoEvent | null {
  if (!isObject(json) || !isObject(json.data)) return null;
  const id = text(json.id);
  const type = text(json.type);
  if (id === null || type === null) return null;
  const data = json.data;
  return {
    id,
    type,
    data: {
      id: text(data.id),
      action_id: text(data.action_id),
      amount: whole(data.amount),
      currency: text(data.currency),
      response_code: text(data.response_code),
      response_summary: text(data.response_summary),
      reference: text(data.reference),
      trace_id: traceIdOf(data.metadata),
      payment_id: text(data.payment_id),
      category: text(data.category),
      reason_code: text(data.reason_code),
      evidence_required_by: text(data.evidence_required_by),
    },
  };
}
