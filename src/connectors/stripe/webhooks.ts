// Stripe's webhooks (connector.ts's readWebhook calls this): verified by the `stripe` package's own
// event construction with the gateway's whsec_ secret, then the event mapped to the transaction it
// is about and its result. Apart from the connector, as hyperswitch keeps a connector's webhooks,
// so that verifying and reading the processor's events is one file to review.
import type Stripe from 'stripe';
import type { ProcessorResult, WebhookReading } from '../connector.js';
import { intentResult, refundResult } from './results.js';
import { declineKind, eventMeaning } from './status-map.js';
import { readIntent, readRefund } from './wire.js';

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
  let event: { id: string; type: string; data: { object: unknown } };
  try {
    event = webhooks.constructEvent(raw_body, header, webhook_secret) as unknown as typeof event;
  } catch {
    return { kind: 'bad_signature' };
  }
  const meaning = eventMeaning(event.type);
  const object = event.data?.object;
  if (meaning?.about === 'refund') {
    const refund = readRefund(object);
    if (!refund) return { kind: 'ignored', reason: `${event.type} without a refund` };
    const result: ProcessorResult =
      meaning.outcome === 'rejected'
        ? {
            kind: 'rejected',
            psp_transaction_id: refund.id,
            error_code: refund.reason ?? 'failed',
            error_details: `Refund ${refund.status} at the processor`,
          }
        : refundResult(refund, { amount_minor: refund.amount ?? 0, currency: refund.currency ?? '' }, recheck_after_ms);
    return {
      kind: 'event',
      event: {
        event_id: event.id,
        event_type: event.type,
        result: result.kind === 'pending' ? null : result,
        match: { trace_id: refund.trace_id, psp_transaction_id: refund.id, transaction_type: 'refund', reference: null },
      },
    };
  }
  const intent = readIntent(object);
  if (!intent) return { kind: 'ignored', reason: `${event.type} without a payment intent` };
  let result: ProcessorResult | null = null;
  if (meaning?.outcome === 'approved' || meaning?.outcome === 'rejected') {
    const decided = intentResult(
      intent,
      { amount_minor: intent.amount ?? 0, currency: intent.currency?.toUpperCase() ?? '' },
      recheck_after_ms,
    );
    result =
      decided.kind === 'approved' || decided.kind === 'rejected'
        ? decided
        : meaning.outcome === 'rejected'
          ? {
              kind: 'rejected',
              psp_transaction_id: intent.id,
              error_code: intent.error_code ?? 'payment_failed',
              error_details: (intent.error_message ?? 'Payment failed at the processor').slice(0, 200),
              decline: declineKind(intent.error_code),
            }
          : null;
  }
  return {
    kind: 'event',
    event: {
      event_id: event.id,
      event_type: event.type,
      result,
      match: { trace_id: intent.trace_id, psp_transaction_id: intent.id, transaction_type: null, reference: null },
    },
  };
}
