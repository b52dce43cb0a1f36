// Checkout.com's webhooks (connector.ts's readWebhook calls this): the Cko-Signature check with the
// gateway's webhook secret, then the event mapped to the transaction it is about and its result,
// and to what it says of the payment itself (decisions §16: a capture or a void confirmed, a
// refund made, ours or not, a dispute opened or moved on). Apart from the connector, as
// hyperswitch keeps a connector's webhooks, so that verifying and reading the processor's events
// is one file to review.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { PaymentEvent, ProcessorResult, WebhookReading } from '../connector.js';
import { disputeStage, eventMeaning, paymentEventKind } from './status-map.js';
import { type CkoEvent, readEvent } from './wire.js';

/** A dispute's reason as the gateway keeps it, at most. */
const REASON_MAX_CHARS = 200;

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
  if (disputeStage(event.type) !== null) return readDisputeEvent(event);
  const meaning = eventMeaning(event.type);
  const data = event.data;
  const asked = { amount_minor: data.amount ?? 0, currency: data.currency ?? '' };
  const payment_event = paymentEventOf(event);
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
        ...(payment_event ? { payment_event } : {}),
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
      ...(payment_event ? { payment_event } : {}),
    },
  };
}

/**
 * What a payment event says of the payment (status-map.ts PAYMENT_EVENT_KIND), or null: not such
 * an event, or one without the ids and amounts it needs (nothing is guessed).
 */
function paymentEventOf(event: CkoEvent): PaymentEvent | null {
  const { data } = event;
  if (data.id === null) return null;
  switch (paymentEventKind(event.type)) {
    case 'captured':
      return { kind: 'captured', psp_payment_id: data.id, amount_minor: data.amount };
    case 'voided':
      return { kind: 'voided', psp_payment_id: data.id };
    case 'refunded':
      if (data.action_id === null || data.amount === null || data.amount <= 0 || data.currency === null) return null;
      return {
        kind: 'refunded',
        psp_payment_id: data.id,
        psp_refund_id: data.action_id,
        amount_minor: data.amount,
        currency: data.currency,
      };
    case null:
      return null;
  }
}

/**
 * A dispute event: about the payment `data.payment_id` (matched by its id), the dispute being
 * `data.id`; it decides no request of ours (result null). Without either id nothing can be kept.
 */
function readDisputeEvent(event: CkoEvent): WebhookReading {
  const { data } = event;
  const stage = disputeStage(event.type)!;
  if (data.id === null || data.payment_id === null) return { kind: 'ignored', reason: 'a dispute event without its dispute or payment id' };
  const due_ms = data.evidence_required_by === null ? NaN : Date.parse(data.evidence_required_by);
  const reason =
    data.category !== null && data.reason_code !== null ? `${data.category} (${data.reason_code})` : (data.category ?? data.reason_code);
  return {
    kind: 'event',
    event: {
      event_id: event.id,
      event_type: event.type,
      result: null,
      match: { trace_id: null, psp_transaction_id: data.payment_id, transaction_type: null, reference: null },
      payment_event: {
        kind: 'dispute',
        psp_payment_id: data.payment_id,
        dispute: {
          psp_dispute_id: data.id,
          stage,
          // A dispute's amount may be negative (one against a credit): that is no amount of our payment's.
          amount_minor: data.amount !== null && data.amount > 0 ? data.amount : null,
          currency: data.currency !== null && /^[A-Z]{3}$/.test(data.currency) ? data.currency : null,
          reason: reason === null ? null : reason.slice(0, REASON_MAX_CHARS),
          evidence_due_at_ms: Number.isFinite(due_ms) ? due_ms : null,
        },
      },
    },
  };
}
