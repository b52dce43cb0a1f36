// PayPal's webhooks, verified and read: PayPal signs with its certificate, and the connector lets
// PayPal check it (POST /v1/notifications/verify-webhook-signature with the transmission headers,
// the gateway's webhook_id and the event exactly as received, spliced in as text so that nothing
// is re-serialized); FAILURE is a bad signature, nothing read. Then the event in our terms:
// PAYMENT.CAPTURE.COMPLETED / PENDING / DENIED / DECLINED (a deposit's result), PAYMENT.CAPTURE.REFUNDED
// (a refund: ours by its custom_id, else one made in PayPal's dashboard, a reversal),
// PAYMENT.PAYOUTS-ITEM.* (a payout's result), CHECKOUT.ORDER.APPROVED (nothing to apply: the
// capture follows), CUSTOMER.DISPUTE.CREATED / UPDATED / RESOLVED (a dispute of a deposit:
// disputes.ts maps its stages; decisions §16's chargeback on the first).
import type { WebhookEvent, WebhookReading } from '../connector.js';
import type { PayPalAnswer } from './client.js';
import { readDispute } from './disputes.js';
import { captureResult, payoutResult, readCapture, readPayoutItem, readRefund, refundResult, traceIdOf } from './status-map.js';

type Headers = Readonly<Record<string, string | string[] | undefined>>;
const header = (headers: Headers, name: string): string | null => {
  const v = headers[name];
  return typeof v === 'string' && v !== '' ? v : null;
};

export interface WebhookCalls {
  post(path: string, body: unknown, request_id: string | null): Promise<PayPalAnswer>;
  get(path: string): Promise<PayPalAnswer>;
  readonly webhook_id: string;
  readonly recheck_after_ms: number;
}

export type Verification = 'verified' | 'refused' | 'unavailable';

export async function verifyWebhook(calls: WebhookCalls, raw_body: Buffer, headers: Headers): Promise<Verification> {
  const fields = {
    auth_algo: header(headers, 'paypal-auth-algo'),
    cert_url: header(headers, 'paypal-cert-url'),
    transmission_id: header(headers, 'paypal-transmission-id'),
    transmission_sig: header(headers, 'paypal-transmission-sig'),
    transmission_time: header(headers, 'paypal-transmission-time'),
  };
  if (Object.values(fields).some((v) => v === null)) return 'refused';
  const text = raw_body.toString('utf8');
  try {
    JSON.parse(text);
  } catch {
    return 'refused';
  }
  const head = JSON.stringify({ ...fields, webhook_id: calls.webhook_id });
  const body = `${head.slice(0, -1)},"webhook_event":${text}}`;
  const answer = await calls.post('/v1/notifications/verify-webhook-signature', body, null);
  if (answer.kind !== 'answer' || answer.http_status !== 200) return 'unavailable';
  const status = (answer.json as { verification_status?: unknown } | null)?.verification_status;
  return status === 'SUCCESS' ? 'verified' : 'refused';
}

const DISPUTE_EVENTS: ReadonlySet<string> = new Set(['CUSTOMER.DISPUTE.CREATED', 'CUSTOMER.DISPUTE.UPDATED', 'CUSTOMER.DISPUTE.RESOLVED']);

/** The order a capture belongs to, asked of PayPal (GET /v2/payments/captures/{id}); null when PayPal cannot tell now. */
async function orderOfCapture(calls: WebhookCalls, capture_id: string): Promise<string | null> {
  const answer = await calls.get(`/v2/payments/captures/${encodeURIComponent(capture_id)}`);
  const capture = answer.kind === 'answer' && answer.http_status === 200 ? readCapture(answer.json) : null;
  return capture?.order_id ?? null;
}

export async function readPayPalWebhook(calls: WebhookCalls, raw_body: Buffer, headers: Headers): Promise<WebhookReading> {
  const verification = await verifyWebhook(calls, raw_body, headers);
  // PayPal could not be asked: not read now, and answered as refused so that PayPal sends it again.
  if (verification !== 'verified') return { kind: 'bad_signature' };
  const event = JSON.parse(raw_body.toString('utf8')) as { id?: unknown; event_type?: unknown; resource?: unknown };
  if (typeof event.id !== 'string' || typeof event.event_type !== 'string') return { kind: 'ignored', reason: 'not a PayPal event' };
  const base = { event_id: event.id, event_type: event.event_type };
  const type = event.event_type;

  if (type === 'CHECKOUT.ORDER.APPROVED')
    return { kind: 'ignored', reason: 'order approved: the capture follows the buyer’s return or a lookup' };

  if (type.startsWith('PAYMENT.CAPTURE.') && type !== 'PAYMENT.CAPTURE.REFUNDED' && type !== 'PAYMENT.CAPTURE.REVERSED') {
    const capture = readCapture(event.resource);
    if (!capture || capture.order_id === null) return { kind: 'ignored', reason: `${type} without a capture of an order` };
    const result = captureResult(capture, capture.order_id, calls.recheck_after_ms);
    const webhook: WebhookEvent = {
      ...base,
      match: { trace_id: traceIdOf(capture.custom_id), psp_transaction_id: capture.order_id, transaction_type: 'sale', reference: null },
      result: result.kind === 'pending' ? null : result,
    };
    return { kind: 'event', event: webhook };
  }

  if (type === 'PAYMENT.CAPTURE.REFUNDED') {
    const refund = readRefund(event.resource);
    if (!refund || refund.capture_id === null) return { kind: 'ignored', reason: 'a refund event without its capture' };
    // The deposit is known by its order's id: the refund's capture says which.
    const order_id = await orderOfCapture(calls, refund.capture_id);
    const trace_id = traceIdOf(refund.custom_id);
    if (order_id === null && trace_id === null) return { kind: 'bad_signature' };
    const webhook: WebhookEvent = {
      ...base,
      match: { trace_id, psp_transaction_id: refund.id, transaction_type: 'refund', reference: null },
      result: refundResult(refund, calls.recheck_after_ms),
      ...(order_id !== null
        ? {
            payment_event: {
              kind: 'refunded' as const,
              psp_payment_id: order_id,
              psp_refund_id: refund.id,
              amount_minor: refund.amount_minor,
              currency: refund.currency,
            },
          }
        : {}),
    };
    return { kind: 'event', event: webhook };
  }

  if (DISPUTE_EVENTS.has(type)) {
    const dispute = readDispute(event.resource);
    if (!dispute) return { kind: 'ignored', reason: `${type} without a dispute of a capture` };
    // The deposit is known by its order's id: the disputed capture says which.
    const order_id = await orderOfCapture(calls, dispute.capture_id);
    // PayPal could not tell: refused, so that PayPal sends the event again later.
    if (order_id === null) return { kind: 'bad_signature' };
    return {
      kind: 'event',
      event: {
        ...base,
        match: { trace_id: null, psp_transaction_id: order_id, transaction_type: null, reference: null },
        result: null,
        payment_event: { kind: 'dispute', psp_payment_id: order_id, dispute: dispute.facts },
      },
    };
  }

  if (type.startsWith('PAYMENT.PAYOUTS-ITEM.')) {
    const item = readPayoutItem(event.resource);
    if (!item || item.payout_batch_id === null) return { kind: 'ignored', reason: `${type} without a payout item` };
    const result = payoutResult(item, item.payout_batch_id, { amount_minor: 0, currency: '' }, calls.recheck_after_ms);
    return {
      kind: 'event',
      event: {
        ...base,
        match: {
          trace_id: traceIdOf(item.sender_item_id),
          psp_transaction_id: item.payout_batch_id,
          transaction_type: 'payout',
          reference: null,
        },
        result: result.kind === 'pending' ? null : result,
      },
    };
  }
  return { kind: 'ignored', reason: `${type} is not read by this gateway` };
}
