// Stripe's webhooks (connector.ts's readWebhook calls this): verified by the `stripe` package's own
// event construction with the gateway's whsec_ secret, then the event mapped to the transaction it
// is about, its result, and what happened to the payment itself (decisions §16: a capture or a
// void confirmed, a refund, ours or not, a dispute), through status-map.ts's EVENT_MEANING. Apart
// from the connector, as hyperswitch keeps a connector's webhooks, so that verifying and reading
// the processor's events is one file to review.
import type Stripe from 'stripe';
import type { PaymentEvent, ProcessorResult, WebhookEvent, WebhookReading } from '../connector.js';
import { intentResult, refundResult } from './results.js';
import { declineKind, disputeStage, eventMeaning, REFUND_MEANING, wasAuthorized } from './status-map.js';
import { type Intent, paymentIntentOf, readCharge, readDispute, readIntent, readRefund } from './wire.js';

interface VerifiedEvent {
  readonly id: string;
  readonly type: string;
  readonly data: { readonly object: unknown };
}

/**
 * A webhook, verified by the package's own event construction (the Stripe-Signature header's
 * HMAC over the timestamp and the exact body, with the gateway's whsec_ secret, within the
 * package's default tolerance of five minutes); nothing of it is read otherwise.
 */
export function readStripeWebhook(
  webhooks: Stripe['webhooks'],
  webhook_secret: string,
  recheck_after_ms: number,
  raw_body: Buffer,
  headers: Readonly<Record<string, string | string[] | undefined>>,
): WebhookReading {
  const header = headers['stripe-signature'];
  if (typeof header !== 'string' || header.length > 2048) return { kind: 'bad_signature' };
  let event: VerifiedEvent;
  try {
    event = webhooks.constructEvent(raw_body, header, webhook_secret) as unknown as VerifiedEvent;
  } catch {
    return { kind: 'bad_signature' };
  }
  const meaning = eventMeaning(event.type);
  const object = event.data?.object;
  switch (meaning?.about) {
    case 'refund':
      return readRefundEvent(event, object, meaning.outcome, recheck_after_ms);
    case 'dispute':
      return readDisputeEvent(event, object);
    case 'capture':
      return readCaptureEvent(event, object);
    default:
      return readIntentEvent(event, object, meaning?.outcome ?? null, recheck_after_ms);
  }
}

function eventOf(event: VerifiedEvent, fields: Omit<WebhookEvent, 'event_id' | 'event_type'>): WebhookReading {
  return { kind: 'event', event: { event_id: event.id, event_type: event.type, ...fields } };
}

/** A match by the payment's id (and our trace_id where the object carries our metadata). */
function paymentMatch(psp_payment_id: string, trace_id: number | null): WebhookEvent['match'] {
  return { trace_id, psp_transaction_id: psp_payment_id, transaction_type: null, reference: null };
}

/**
 * refund.*: the result of our refund (found by our trace_id in its metadata), and for a succeeded
 * refund the payment_event `refunded`, so that a refund nobody asked the gateway for (no metadata
 * of ours: the Dashboard, another integration) is found by its payment and becomes a reversal.
 */
function readRefundEvent(
  event: VerifiedEvent,
  object: unknown,
  outcome: 'approved' | 'rejected' | 'from_status',
  recheck_after_ms: number,
): WebhookReading {
  const refund = readRefund(object);
  if (!refund) return { kind: 'ignored', reason: `${event.type} without a refund` };
  const result: ProcessorResult =
    outcome === 'rejected'
      ? {
          kind: 'rejected',
          psp_transaction_id: refund.id,
          error_code: refund.reason ?? 'failed',
          error_details: `Refund ${refund.status} at the processor`,
        }
      : refundResult(refund, { amount_minor: refund.amount ?? 0, currency: refund.currency ?? '' }, recheck_after_ms);
  const payment_intent = paymentIntentOf(object);
  const refunded: PaymentEvent | undefined =
    outcome !== 'rejected' &&
    REFUND_MEANING[refund.status] === 'approved' &&
    payment_intent !== null &&
    refund.amount !== null &&
    refund.currency !== null
      ? {
          kind: 'refunded',
          psp_payment_id: payment_intent,
          psp_refund_id: refund.id,
          amount_minor: refund.amount,
          currency: refund.currency,
        }
      : undefined;
  return eventOf(event, {
    result: result.kind === 'pending' ? null : result,
    match: { trace_id: refund.trace_id, psp_transaction_id: refund.id, transaction_type: 'refund', reference: null },
    ...(refunded ? { payment_event: refunded } : {}),
  });
}

/** charge.dispute.*: the payment_event `dispute`, matched to the payment by its PaymentIntent. */
function readDisputeEvent(event: VerifiedEvent, object: unknown): WebhookReading {
  const dispute = readDispute(object);
  if (!dispute) return { kind: 'ignored', reason: `${event.type} without a dispute` };
  // A dispute of a charge made without a PaymentIntent is of no payment of this gateway's.
  if (dispute.payment_intent === null) return { kind: 'ignored', reason: `${event.type} of a charge without a payment intent` };
  return eventOf(event, {
    result: null,
    match: paymentMatch(dispute.payment_intent, null),
    payment_event: {
      kind: 'dispute',
      psp_payment_id: dispute.payment_intent,
      dispute: {
        psp_dispute_id: dispute.id,
        stage: disputeStage(dispute.status),
        amount_minor: dispute.amount,
        currency: dispute.currency,
        reason: dispute.reason,
        evidence_due_at_ms: dispute.due_by_s === null ? null : dispute.due_by_s * 1000,
      },
    },
  });
}

/** charge.captured: the capture of an authorization, confirmed, with what was captured. */
function readCaptureEvent(event: VerifiedEvent, object: unknown): WebhookReading {
  const charge = readCharge(object);
  if (!charge || charge.payment_intent === null) return { kind: 'ignored', reason: `${event.type} without a payment intent` };
  return eventOf(event, {
    result: null,
    match: paymentMatch(charge.payment_intent, charge.trace_id),
    payment_event: { kind: 'captured', psp_payment_id: charge.payment_intent, amount_minor: charge.amount_captured },
  });
}

/**
 * payment_intent.*: the result of our sale or authorization; on an authorization also its
 * capture (succeeded) or its void (canceled after its approval: only the payment_event, no result).
 */
function readIntentEvent(
  event: VerifiedEvent,
  object: unknown,
  outcome: 'approved' | 'rejected' | 'from_status' | null,
  recheck_after_ms: number,
): WebhookReading {
  const intent = readIntent(object);
  if (!intent) return { kind: 'ignored', reason: `${event.type} without a payment intent` };
  const match = paymentMatch(intent.id, intent.trace_id);
  const manual = intent.capture_method === 'manual';
  if (manual && intent.status === 'canceled' && wasAuthorized(intent))
    return eventOf(event, { result: null, match, payment_event: { kind: 'voided', psp_payment_id: intent.id } });
  const result = outcome === 'approved' || outcome === 'rejected' ? decidedResult(intent, outcome, recheck_after_ms) : null;
  const captured: PaymentEvent | undefined =
    manual && intent.status === 'succeeded'
      ? { kind: 'captured', psp_payment_id: intent.id, amount_minor: intent.amount_received }
      : undefined;
  return eventOf(event, { result, match, ...(captured ? { payment_event: captured } : {}) });
}

/** The result an event of a decided payment carries: its status's, else (a failure event of an intent not yet moved) a rejection. */
function decidedResult(intent: Intent, outcome: 'approved' | 'rejected', recheck_after_ms: number): ProcessorResult | null {
  const decided = intentResult(
    intent,
    { amount_minor: intent.amount ?? 0, currency: intent.currency?.toUpperCase() ?? '' },
    recheck_after_ms,
  );
  if (decided.kind === 'approved' || decided.kind === 'rejected') return decided;
  if (outcome !== 'rejected') return null;
  return {
    kind: 'rejected',
    psp_transaction_id: intent.id,
    error_code: intent.error_code ?? 'payment_failed',
    error_details: (intent.error_message ?? 'Payment failed at the processor').slice(0, 200),
    decline: declineKind(intent.error_code),
  };
}
