// Checkout.com's webhooks (connector.ts's readWebhook calls this): the Cko-Signature check with the
// gateway's webhook secret, then the event mapped to the transaction it is about and its result.
// Apart from the connector, as hyperswitch keeps a connector's webhooks, so that verifying and
// reading the processor's events is one file to review.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ProcessorResult, WebhookReading } from '../connector.js';
import { eventMeaning } from './status-map.js';
import { readEvent } from './wire.js';

/**
 * A webhook: `Cko-Signature` must be the hex HMAC-SHA256 of the exact body with the gateway's
 * webhook secret (compared in constant time), else nothing of it is read.
 */
export function readCheckoutWebhook(
  webhook_secret: string,
  raw_body: Buffer,
  headers: Readonly<Record<string, string | string[] | undefined>>,
): WebhookReading {
  const given = headers['cko-signature'];
  if (typeof given !== 'string' || !/^[0-9a-fA-F]{64}$/.test(given)) return { kind: 'bad_signature' };
  const expected = createHmac('sha256', webhook_secret).update(raw_body).digest();
  if (!timingSafeEqual(expected, Buffer.from(given, 'hex'))) return { kind: 'bad_signature' };
  let json: unknown;
  try {
    json = JSON.parse(raw_body.toString('utf8'));
  } catch {
    return { kind: 'ignored', reason: 'the event does not parse' };
  }
  const event = readEvent(json);
  if (!event) return { kind: 'ignored', reason: 'not an event of the shape Checkout.com sends' };
  const meaning = eventMeaning(event.type);
  const data = event.data;
  const asked = { amount_minor: data.amount ?? 0, currency: data.currency ?? '' };
  if (meaning?.about === 'refund') {
    // A refund's event is about the payment (data.id) and names the refund by its action id.
    const result: ProcessorResult =
      meaning.outcome === 'approved'
        ? {
            kind: 'approved',
            psp_transaction_id: data.action_id ?? '',
            charge_amount_minor: asked.amount_minor,
            charge_currency: asked.currency,
            error_code: data.response_code ?? '10000',
            error_details: (data.response_summary ?? 'Refund approved').slice(0, 200),
          }
        : {
            kind: 'rejected',
            psp_transaction_id: data.action_id,
            error_code: data.response_code ?? 'declined',
            error_details: (data.response_summary ?? 'Refund declined by the processor').slice(0, 200),
          };
    return {
      kind: 'event',
      event: {
        event_id: event.id,
        event_type: event.type,
        result,
        match: { trace_id: null, psp_transaction_id: data.action_id, transaction_type: 'refund', reference: data.reference },
      },
    };
  }
  let result: ProcessorResult | null = null;
  if (meaning?.outcome === 'approved') {
    result = {
      kind: 'approved',
      psp_transaction_id: data.id ?? '',
      charge_amount_minor: asked.amount_minor,
      charge_currency: asked.currency,
      error_code: data.response_code ?? '10000',
      error_details: (data.response_summary ?? 'Approved').slice(0, 200),
    };
  } else if (meaning?.outcome === 'rejected') {
    result = {
      kind: 'rejected',
      psp_transaction_id: data.id,
      error_code: data.response_code ?? event.type,
      error_details: (data.response_summary ?? `Payment ${event.type.replace(/^payment_/, '').replace(/_/g, ' ')} at the processor`).slice(
        0,
        200,
      ),
    };
  }
  return {
    kind: 'event',
    event: {
      event_id: event.id,
      event_type: event.type,
      result,
      match: { trace_id: data.trace_id, psp_transaction_id: data.id, transaction_type: null, reference: data.reference },
    },
  };
}
