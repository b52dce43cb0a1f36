// A fake PayPal for the tests (test code only), stateful, on 127.0.0.1 over real HTTP, written
// from PayPal's published descriptions (test/psp-specs/paypal, SOURCE.md): the OAuth2 client-
// credentials token, Orders v2 (create with intent CAPTURE, GET, capture), Payments v2 (GET
// capture, refund, GET refund), Payouts v1 (create a batch, GET batch, GET item), disputes of captures (their
// CUSTOMER.DISPUTE.* webhooks, as Disputes v1 describes the resource) and webhooks,
// signed and sent to the registered URL, with POST /v1/notifications/verify-webhook-signature
// answering SUCCESS or FAILURE for the webhook_id the fake registered. Every request, answer and
// event is checked against the descriptions (`violations`, which tests assert is empty).
//
// Idempotency as PayPal documents it: a POST with a PayPal-Request-Id seen before (same route) is
// answered the first answer again, nothing done twice; a payout batch whose sender_batch_id was
// used before is refused 400 with a link to the first batch.
//
// Signatures: PayPal signs with its certificate (RSA over transmission id | time | webhook id |
// CRC32 of the body); the fake signs with an HMAC key of its own over the same fields (SHA-256 of
// the body instead of CRC32), and only its verify call can tell, as only PayPal's can.
//
// Test controls (beside FakeProcessorControls: failNext per route, holdEvents, releaseHeldEvents,
// redeliver, sendRaw, waitForEvent, violations): approve(order_id) / the approval page a browser
// uses (Approve, Cancel), pendingNextCapture(), settlePayoutItem(item_id, status) (SUCCESS,
// FAILED, RETURNED, BLOCKED, UNCLAIMED, then SUCCESS again for a claim), refundFromDashboard,
// expireTokens, order/capture/refund/payoutItem views.
import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';
import type http from 'node:http';
import { createProcessorControls, type FakeProcessorControls } from '../fake-processor/controls.js';
import { answerText, createFailureQueue, createHeldAnswers, type FakeAnswer, sendProcessed } from '../fake-processor/failure-modes.js';
import { answeredIconRequest, pageAnswers } from '../fake-processor/html.js';
import { failuresAsViolations, startLocalServer } from '../fake-processor/local-server.js';
import { createViolationLog, keepBounded, type RecordedRequestBase, type Writable } from '../fake-processor/recording.js';
import { createWebhookOutbox, type OutboxEvent, type WebhookOptions } from '../fake-processor/webhook-outbox.js';
import { approvalPage, noOrderPage } from './approval-page.js';
import { paypalSpec, validateTokenRequest } from './spec.js';

export const FAKE_PAYPAL_ROUTES = [
  'token',
  'orders.create',
  'orders.get',
  'orders.capture',
  'captures.get',
  'captures.refund',
  'refunds.get',
  'payouts.create',
  'payouts.get',
  'payouts-item.get',
  'verify',
] as const;
export type FakePayPalRoute = (typeof FAKE_PAYPAL_ROUTES)[number];

const TEMPLATES: Readonly<Record<string, FakePayPalRoute>> = {
  'POST /v2/checkout/orders': 'orders.create',
  'GET /v2/checkout/orders/{id}': 'orders.get',
  'POST /v2/checkout/orders/{id}/capture': 'orders.capture',
  'GET /v2/payments/captures/{capture_id}': 'captures.get',
  'POST /v2/payments/captures/{capture_id}/refund': 'captures.refund',
  'GET /v2/payments/refunds/{refund_id}': 'refunds.get',
  'POST /v1/payments/payouts': 'payouts.create',
  'GET /v1/payments/payouts/{id}': 'payouts.get',
  'GET /v1/payments/payouts-item/{payout_item_id}': 'payouts-item.get',
  'POST /v1/notifications/verify-webhook-signature': 'verify',
};

export type PayoutItemStatus = 'PENDING' | 'SUCCESS' | 'FAILED' | 'RETURNED' | 'BLOCKED' | 'UNCLAIMED';

export interface FakeEvent extends OutboxEvent {
  readonly resource_id: string;
}

export type FakePayPalRequest = RecordedRequestBase<FakePayPalRoute>;

interface Money {
  currency_code: string;
  value: string;
}
interface Capture {
  id: string;
  order_id: string;
  status: 'COMPLETED' | 'PENDING' | 'DECLINED' | 'PARTIALLY_REFUNDED' | 'REFUNDED';
  amount: Money;
  custom_id: string | null;
  invoice_id: string | null;
  refunded_cents: number;
  create_time: string;
}
export type DisputeStatus = 'OPEN' | 'WAITING_FOR_BUYER_RESPONSE' | 'WAITING_FOR_SELLER_RESPONSE' | 'UNDER_REVIEW' | 'RESOLVED' | 'OTHER';
interface Dispute {
  id: string;
  capture: Capture;
  status: DisputeStatus;
  stage: 'INQUIRY' | 'CHARGEBACK';
  amount: Money;
  outcome_code: string | null;
  create_time: string;
  update_time: string;
  seller_response_due_date: string;
}
interface Refund {
  id: string;
  capture_id: string;
  status: 'COMPLETED' | 'PENDING';
  amount: Money;
  custom_id: string | null;
  invoice_id: string | null;
  create_time: string;
}
interface Order {
  id: string;
  status: 'CREATED' | 'PAYER_ACTION_REQUIRED' | 'APPROVED' | 'COMPLETED' | 'VOIDED';
  amount: Money;
  reference_id: string | null;
  custom_id: string | null;
  invoice_id: string | null;
  return_url: string | null;
  cancel_url: string | null;
  approve_rel: 'payer-action' | 'approve';
  payer_id: string | null;
  captures: Capture[];
  create_time: string;
}
interface PayoutItem {
  payout_item_id: string;
  payout_batch_id: string;
  sender_batch_id: string;
  sender_item_id: string | null;
  recipient_type: string;
  receiver: string;
  amount: { currency: string; value: string };
  status: PayoutItemStatus;
  transaction_id: string | null;
  /** Every status the item has had, oldest first. */
  history: PayoutItemStatus[];
}

export interface FakePayPalOptions extends WebhookOptions {
  /** Lifetime of an access token (expires_in). Default 32400 s, as PayPal's sandbox answers. */
  readonly token_ttl_s?: number;
  readonly max_recorded?: number;
}

export interface FakePayPal extends FakeProcessorControls<FakePayPalRoute, FakeEvent, FakePayPalRequest> {
  readonly url: string;
  readonly client_id: string;
  readonly client_secret: string;
  /** The webhook id of the registered endpoint (what the gateway's webhook_id setting must be). */
  readonly webhook_id: string;
  /** Access tokens issued so far. */
  readonly tokens_issued: number;
  setWebhookEndpoint(url: string | null): void;
  /** Expires every token issued so far (the next call with one is answered 401). */
  expireTokens(): void;
  /** The buyer approves the order (as the approval page's Approve button). */
  approve(order_id: string): Promise<void>;
  /** The next capture is PENDING (PayPal's review); completeCapture settles it later. */
  pendingNextCapture(): void;
  completeCapture(capture_id: string, status: 'COMPLETED' | 'DECLINED'): Promise<void>;
  /** A refund made in PayPal's dashboard (not through the API's caller). */
  refundFromDashboard(capture_id: string, value: string): Promise<string>;
  settlePayoutItem(payout_item_id: string, status: Exclude<PayoutItemStatus, 'PENDING'>): Promise<void>;
  /**
   * The buyer disputes a capture (CUSTOMER.DISPUTE.CREATED, waiting for the seller's response);
   * `value` is the disputed amount (the whole capture by default). Answers the dispute's id.
   */
  openDispute(capture_id: string, value?: string, stage?: 'INQUIRY' | 'CHARGEBACK'): Promise<string>;
  /** The dispute moves on: CUSTOMER.DISPUTE.UPDATED, or RESOLVED with `outcome_code`. */
  moveDispute(dispute_id: string, status: DisputeStatus, outcome_code?: string): Promise<void>;
  order(id: string): Readonly<Order> | null;
  payoutItemsOf(batch_id: string): readonly Readonly<PayoutItem>[];
  readonly orders: readonly Readonly<Order>[];
  readonly refunds: readonly Readonly<Refund>[];
  readonly payout_items: readonly Readonly<PayoutItem>[];
}

const BODY_MAX_BYTES = 256 * 1024;
const SIGNING_KEY = randomBytes(32);
const CERT_URL = 'https://api.sandbox.paypal.com/v1/notifications/certs/CERT-360caa42-fca2a594-fake';

function id(length = 17): string {
  // PayPal's ids (payer ids: ^[2-9A-HJ-NP-Z]{13}$) leave out 0, 1, I and O.
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
  let out = '';
  for (const b of randomBytes(length)) out += alphabet[b % alphabet.length];
  return out;
}
function cents(value: string): number {
  return Math.round(Number(value) * 100);
}
function fromCents(value: number): string {
  return (value / 100).toFixed(2);
}
function now(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** What the fake signs: transmission id | time | webhook id | SHA-256 of the body (PayPal: CRC32). */
function signature(transmission_id: string, time: string, webhook_id: string, body: string): string {
  const digest = createHash('sha256').update(body).digest('hex');
  return createHmac('sha256', SIGNING_KEY).update(`${transmission_id}|${time}|${webhook_id}|${digest}`).digest('hex');
}

function error(name: string, message: string, issue?: string): unknown {
  return {
    name,
    message,
    debug_id: id(13).toLowerCase(),
    ...(issue ? { details: [{ issue, description: message }] } : {}),
    links: [{ href: `https://developer.paypal.com/docs/api/orders/v2/#error-${issue ?? name}`, rel: 'information_link' }],
  };
}

export async function startFakePayPal(options: FakePayPalOptions = {}): Promise<FakePayPal> {
  // The schemas of the operations served here compiled now, at the start: compiled inside a first
  // request they took longer than the tests' 1.5 s processor time-out in a loaded suite.
  paypalSpec.warm(Object.keys(TEMPLATES));
  const client_id = `AFakeClient${id(20)}`;
  const client_secret = `EFakeSecret${id(30)}`;
  const webhook_id = `WH${id(18)}`;
  const token_ttl_s = options.token_ttl_s ?? 32_400;
  const max_recorded = options.max_recorded ?? 2000;
  const violations = createViolationLog(200);
  const requests: FakePayPalRequest[] = [];
  const events: FakeEvent[] = [];
  const failures = createFailureQueue<FakePayPalRoute>('fake paypal', 20);
  const held_answers = createHeldAnswers(50);
  const tokens = new Map<string, number>();
  let tokens_issued = 0;
  const orders = new Map<string, Order>();
  const captures = new Map<string, Capture>();
  const disputes = new Map<string, Dispute>();
  const refunds = new Map<string, Refund>();
  const batches = new Map<string, { id: string; sender_batch_id: string; items: PayoutItem[]; time_created: string }>();
  const sender_batch_ids = new Map<string, string>();
  const items = new Map<string, PayoutItem>();
  /** PayPal-Request-Id per route → the first answer (status and text). */
  const replies = new Map<string, { status: number; text: string | null }>();
  let pending_next_capture = false;
  let base_url = '';
  const signing_headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'PayPal/AUHD-214.0-fake' };

  const webhooks = createWebhookOutbox<FakeEvent>({
    name: 'fake paypal',
    events,
    settings: options,
    // The transmission headers are set here, at each attempt, beside the signature they sign.
    sign: (body, hook_id) => {
      const transmission_id = randomUUID();
      const time = now();
      signing_headers['paypal-transmission-id'] = transmission_id;
      signing_headers['paypal-transmission-time'] = time;
      signing_headers['paypal-cert-url'] = CERT_URL;
      signing_headers['paypal-auth-algo'] = 'SHA256withRSA';
      return signature(transmission_id, time, hook_id, body);
    },
    signature_header: 'paypal-transmission-sig',
    headers: signing_headers,
    wait_max_ms: 30_000,
  });
  if (options.webhook_url) webhooks.setEndpoint({ url: options.webhook_url, secret: webhook_id });

  function event(event_type: string, resource_type: string, resource: Record<string, unknown>, summary: string): FakeEvent {
    const body = {
      id: `WH-${id(8)}-${id(17)}`,
      create_time: now(),
      resource_type,
      event_type,
      summary,
      resource,
      resource_version: '2.0',
      event_version: '1.0',
      links: [{ href: `${base_url}/v1/notifications/webhooks-events/x`, rel: 'self', method: 'GET' }],
    };
    const text = JSON.stringify(body);
    violations.add('event', `event ${event_type} ${body.id}`, paypalSpec.validateEvent(body));
    const made: FakeEvent = {
      id: body.id,
      type: event_type,
      body: text,
      created_ms: Date.now(),
      state: 'queued',
      signature: null,
      status: null,
      deliveries: [],
      resource_id: String(resource.id ?? resource.payout_item_id ?? resource.dispute_id ?? ''),
    };
    events.push(made);
    keepBounded(events, max_recorded);
    return made;
  }

  // ---------------------------------------------------------------- views of objects as PayPal answers them

  function captureJson(c: Capture): Record<string, unknown> {
    return {
      id: c.id,
      status: c.status,
      amount: c.amount,
      final_capture: true,
      ...(c.custom_id !== null ? { custom_id: c.custom_id } : {}),
      ...(c.invoice_id !== null ? { invoice_id: c.invoice_id } : {}),
      seller_protection: { status: 'ELIGIBLE' },
      supplementary_data: { related_ids: { order_id: c.order_id } },
      create_time: c.create_time,
      update_time: now(),
      links: [
        { href: `${base_url}/v2/payments/captures/${c.id}`, rel: 'self', method: 'GET' },
        { href: `${base_url}/v2/payments/captures/${c.id}/refund`, rel: 'refund', method: 'POST' },
        { href: `${base_url}/v2/checkout/orders/${c.order_id}`, rel: 'up', method: 'GET' },
      ],
    };
  }
  /** A Disputes v1 `dispute` as the CUSTOMER.DISPUTE.* webhooks carry it (the merchant's view). */
  function disputeJson(d: Dispute): Record<string, unknown> {
    return {
      dispute_id: d.id,
      create_time: d.create_time,
      update_time: d.update_time,
      disputed_transactions: [
        {
          buyer_transaction_id: id(17),
          seller_transaction_id: d.capture.id,
          create_time: d.capture.create_time,
          transaction_status: 'COMPLETED',
          gross_amount: d.capture.amount,
          ...(d.capture.invoice_id !== null ? { invoice_number: d.capture.invoice_id } : {}),
          ...(d.capture.custom_id !== null ? { custom: d.capture.custom_id } : {}),
          seller: { merchant_id: 'FAKEMERCHANT1' },
        },
      ],
      reason: 'MERCHANDISE_OR_SERVICE_NOT_RECEIVED',
      status: d.status,
      dispute_amount: d.amount,
      ...(d.outcome_code !== null ? { dispute_outcome: { outcome_code: d.outcome_code } } : {}),
      dispute_life_cycle_stage: d.stage,
      dispute_channel: 'INTERNAL',
      seller_response_due_date: d.seller_response_due_date,
      links: [{ href: `${base_url}/v1/customer/disputes/${d.id}`, rel: 'self', method: 'GET' }],
    };
  }
  function refundJson(r: Refund): Record<string, unknown> {
    return {
      id: r.id,
      status: r.status,
      amount: r.amount,
      ...(r.custom_id !== null ? { custom_id: r.custom_id } : {}),
      ...(r.invoice_id !== null ? { invoice_id: r.invoice_id } : {}),
      create_time: r.create_time,
      update_time: now(),
      links: [
        { href: `${base_url}/v2/payments/refunds/${r.id}`, rel: 'self', method: 'GET' },
        { href: `${base_url}/v2/payments/captures/${r.capture_id}`, rel: 'up', method: 'GET' },
      ],
    };
  }
  function orderJson(o: Order): Record<string, unknown> {
    const order_refunds = [...refunds.values()].filter((r) => o.captures.some((c) => c.id === r.capture_id));
    const payments =
      o.captures.length > 0
        ? {
            payments: {
              captures: o.captures.map(captureJson),
              ...(order_refunds.length > 0 ? { refunds: order_refunds.map(refundJson) } : {}),
            },
          }
        : {};
    const links: Record<string, string>[] = [{ href: `${base_url}/v2/checkout/orders/${o.id}`, rel: 'self', method: 'GET' }];
    if (o.status === 'CREATED' || o.status === 'PAYER_ACTION_REQUIRED')
      links.push({ href: `${base_url}/checkoutnow?token=${o.id}`, rel: o.approve_rel, method: 'GET' });
    if (o.status === 'APPROVED') links.push({ href: `${base_url}/v2/checkout/orders/${o.id}/capture`, rel: 'capture', method: 'POST' });
    return {
      id: o.id,
      intent: 'CAPTURE',
      status: o.status,
      ...(o.payer_id !== null
        ? { payer: { payer_id: o.payer_id, email_address: 'buyer@example.com' }, payment_source: { paypal: { account_id: o.payer_id } } }
        : {}),
      purchase_units: [
        {
          reference_id: o.reference_id ?? 'default',
          amount: o.amount,
          ...(o.custom_id !== null ? { custom_id: o.custom_id } : {}),
          ...(o.invoice_id !== null ? { invoice_id: o.invoice_id } : {}),
          ...payments,
        },
      ],
      create_time: o.create_time,
      links,
    };
  }
  function itemJson(item: PayoutItem): Record<string, unknown> {
    return {
      payout_item_id: item.payout_item_id,
      ...(item.transaction_id !== null ? { transaction_id: item.transaction_id } : {}),
      transaction_status: item.status,
      payout_batch_id: item.payout_batch_id,
      sender_batch_id: item.sender_batch_id,
      payout_item: {
        recipient_type: item.recipient_type,
        amount: item.amount,
        receiver: item.receiver,
        ...(item.sender_item_id !== null ? { sender_item_id: item.sender_item_id } : {}),
        recipient_wallet: 'PAYPAL',
      },
      ...(item.status !== 'PENDING' ? { time_processed: now() } : {}),
      ...(item.status === 'FAILED' || item.status === 'BLOCKED' || item.status === 'RETURNED'
        ? {
            errors: {
              name: item.status === 'BLOCKED' ? 'RECEIVER_ACCOUNT_LOCKED' : 'RECEIVER_UNREGISTERED',
              message: `Item ${item.status}`,
              debug_id: id(13).toLowerCase(),
            },
          }
        : {}),
      links: [{ href: `${base_url}/v1/payments/payouts-item/${item.payout_item_id}`, rel: 'item', method: 'GET' }],
    };
  }
  function batchStatus(batch: { items: PayoutItem[] }): string {
    return batch.items.every((i) => i.status !== 'PENDING') ? 'SUCCESS' : 'PENDING';
  }

  // ---------------------------------------------------------------- routes

  type Answer = FakeAnswer<FakeEvent>;

  function processRoute(route: FakePayPalRoute, params: Record<string, string>, json: any, headers: http.IncomingHttpHeaders): Answer {
    switch (route) {
      case 'orders.create': {
        if (json.intent !== 'CAPTURE')
          return { status: 422, json: error('UNPROCESSABLE_ENTITY', 'Only CAPTURE is faked', 'UNSUPPORTED_INTENT'), events: [] };
        const unit = json.purchase_units[0];
        const experience = json.payment_source?.paypal?.experience_context ?? json.application_context ?? {};
        const order: Order = {
          id: id(),
          status: json.payment_source?.paypal ? 'PAYER_ACTION_REQUIRED' : 'CREATED',
          amount: { currency_code: unit.amount.currency_code, value: unit.amount.value },
          reference_id: unit.reference_id ?? null,
          custom_id: unit.custom_id ?? null,
          invoice_id: unit.invoice_id ?? null,
          return_url: experience.return_url ?? null,
          cancel_url: experience.cancel_url ?? null,
          approve_rel: json.payment_source?.paypal ? 'payer-action' : 'approve',
          payer_id: null,
          captures: [],
          create_time: now(),
        };
        orders.set(order.id, order);
        return { status: 200, json: orderJson(order), events: [] };
      }
      case 'orders.get': {
        const order = orders.get(params.id ?? '');
        return order ? { status: 200, json: orderJson(order), events: [] } : notFound('RESOURCE_NOT_FOUND', 'INVALID_RESOURCE_ID');
      }
      case 'orders.capture': {
        const order = orders.get(params.id ?? '');
        if (!order) return notFound('RESOURCE_NOT_FOUND', 'INVALID_RESOURCE_ID');
        if (order.status === 'COMPLETED')
          return { status: 422, json: error('UNPROCESSABLE_ENTITY', 'Order already captured', 'ORDER_ALREADY_CAPTURED'), events: [] };
        if (order.status !== 'APPROVED')
          return {
            status: 422,
            json: error('UNPROCESSABLE_ENTITY', 'The payer has not approved the order', 'ORDER_NOT_APPROVED'),
            events: [],
          };
        const capture: Capture = {
          id: id(),
          order_id: order.id,
          status: pending_next_capture ? 'PENDING' : 'COMPLETED',
          amount: order.amount,
          custom_id: order.custom_id,
          invoice_id: order.invoice_id,
          refunded_cents: 0,
          create_time: now(),
        };
        pending_next_capture = false;
        captures.set(capture.id, capture);
        order.captures.push(capture);
        order.status = 'COMPLETED';
        const made = [
          event(
            capture.status === 'COMPLETED' ? 'PAYMENT.CAPTURE.COMPLETED' : 'PAYMENT.CAPTURE.PENDING',
            'capture',
            captureJson(capture),
            `Payment ${capture.status.toLowerCase()} for ${capture.amount.value} ${capture.amount.currency_code}`,
          ),
        ];
        return { status: 201, json: orderJson(order), events: made };
      }
      case 'captures.get': {
        const capture = captures.get(params.capture_id ?? '');
        return capture ? { status: 200, json: captureJson(capture), events: [] } : notFound('RESOURCE_NOT_FOUND', 'INVALID_RESOURCE_ID');
      }
      case 'captures.refund': {
        const capture = captures.get(params.capture_id ?? '');
        if (!capture) return notFound('RESOURCE_NOT_FOUND', 'INVALID_RESOURCE_ID');
        const value = json.amount?.value ?? fromCents(cents(capture.amount.value) - capture.refunded_cents);
        const made = refund(capture, value, json.custom_id ?? null, json.invoice_id ?? null);
        return 'error' in made ? made.error : { status: 201, json: refundJson(made.refund), events: made.events };
      }
      case 'refunds.get': {
        const found = refunds.get(params.refund_id ?? '');
        return found ? { status: 200, json: refundJson(found), events: [] } : notFound('RESOURCE_NOT_FOUND', 'INVALID_RESOURCE_ID');
      }
      case 'payouts.create': {
        const sender_batch_id = String(json.sender_batch_header?.sender_batch_id ?? '');
        const first = sender_batch_ids.get(sender_batch_id);
        if (sender_batch_id !== '' && first !== undefined) {
          const answer = error('USER_BUSINESS_ERROR', 'User business error.', 'SENDER_BATCH_ID_ALREADY_EXISTS') as Record<string, unknown>;
          answer.links = [{ href: `${base_url}/v1/payments/payouts/${first}`, rel: 'self', method: 'GET' }];
          return { status: 400, json: answer, events: [] };
        }
        const batch = { id: id(13), sender_batch_id, items: [] as PayoutItem[], time_created: now() };
        for (const raw of json.items as any[]) {
          const item: PayoutItem = {
            payout_item_id: id(13),
            payout_batch_id: batch.id,
            sender_batch_id,
            sender_item_id: raw.sender_item_id ?? null,
            recipient_type: raw.recipient_type ?? json.sender_batch_header?.recipient_type ?? 'EMAIL',
            receiver: raw.receiver,
            amount: raw.amount,
            status: 'PENDING',
            transaction_id: null,
            history: ['PENDING'],
          };
          batch.items.push(item);
          items.set(item.payout_item_id, item);
        }
        batches.set(batch.id, batch);
        if (sender_batch_id !== '') sender_batch_ids.set(sender_batch_id, batch.id);
        return {
          status: 201,
          json: {
            batch_header: { payout_batch_id: batch.id, batch_status: 'PENDING', sender_batch_header: { sender_batch_id } },
            links: [{ href: `${base_url}/v1/payments/payouts/${batch.id}`, rel: 'self', method: 'GET' }],
          },
          events: [],
        };
      }
      case 'payouts.get': {
        const batch = batches.get(params.id ?? '');
        if (!batch) return { status: 404, json: error('INVALID_RESOURCE_ID', 'Requested resource ID was not found.'), events: [] };
        return {
          status: 200,
          json: {
            batch_header: {
              payout_batch_id: batch.id,
              batch_status: batchStatus(batch),
              time_created: batch.time_created,
              sender_batch_header: { sender_batch_id: batch.sender_batch_id },
            },
            items: batch.items.map(itemJson),
            total_items: batch.items.length,
            links: [{ href: `${base_url}/v1/payments/payouts/${batch.id}`, rel: 'self', method: 'GET' }],
          },
          events: [],
        };
      }
      case 'payouts-item.get': {
        const item = items.get(params.payout_item_id ?? '');
        return item
          ? { status: 200, json: itemJson(item), events: [] }
          : { status: 404, json: error('INVALID_RESOURCE_ID', 'Requested resource ID was not found.'), events: [] };
      }
      case 'verify': {
        const body_text = JSON.stringify(json.webhook_event);
        const ok =
          json.webhook_id === webhook_id &&
          json.transmission_sig === signature(json.transmission_id, json.transmission_time, json.webhook_id, body_text);
        void headers;
        return { status: 200, json: { verification_status: ok ? 'SUCCESS' : 'FAILURE' }, events: [] };
      }
      default:
        return { status: 404, events: [] };
    }
  }

  function notFound(name: string, issue: string): Answer {
    return { status: 404, json: error(name, 'The specified resource does not exist.', issue), events: [] };
  }

  function refund(
    capture: Capture,
    value: string,
    custom_id: string | null,
    invoice_id: string | null,
  ): { refund: Refund; events: FakeEvent[] } | { error: Answer } {
    if (capture.status !== 'COMPLETED' && capture.status !== 'PARTIALLY_REFUNDED')
      return {
        error: { status: 422, json: error('UNPROCESSABLE_ENTITY', 'Capture is not refundable', 'CAPTURE_FULLY_REFUNDED'), events: [] },
      };
    const left = cents(capture.amount.value) - capture.refunded_cents;
    if (cents(value) > left)
      return {
        error: { status: 422, json: error('UNPROCESSABLE_ENTITY', 'Refund exceeds the capture', 'REFUND_AMOUNT_EXCEEDED'), events: [] },
      };
    const made: Refund = {
      id: id(),
      capture_id: capture.id,
      status: 'COMPLETED',
      amount: { currency_code: capture.amount.currency_code, value },
      custom_id,
      invoice_id,
      create_time: now(),
    };
    refunds.set(made.id, made);
    capture.refunded_cents += cents(value);
    capture.status = capture.refunded_cents >= cents(capture.amount.value) ? 'REFUNDED' : 'PARTIALLY_REFUNDED';
    return {
      refund: made,
      events: [
        event(
          'PAYMENT.CAPTURE.REFUNDED',
          'refund',
          refundJson(made),
          `A ${value} ${made.amount.currency_code} capture payment was refunded`,
        ),
      ],
    };
  }

  // ---------------------------------------------------------------- HTTP

  function writeAnswer(response: http.ServerResponse, record: Writable<FakePayPalRequest>, status: number, text: string | null): void {
    record.status = status;
    record.answer_body = text;
    response.writeHead(status, { 'content-type': 'application/json', 'paypal-debug-id': id(13).toLowerCase() });
    response.end(text ?? undefined);
  }

  async function handle(
    request: http.IncomingMessage,
    response: http.ServerResponse,
    body: { text: string; too_large: boolean },
  ): Promise<void> {
    const method = (request.method ?? 'GET').toUpperCase();
    const url = new URL(request.url ?? '/', base_url);
    const key_header = request.headers['paypal-request-id'];
    const record: Writable<FakePayPalRequest> = {
      seq: requests.length + 1,
      method,
      path: url.pathname,
      route: null,
      headers: request.headers,
      idempotency_key: typeof key_header === 'string' ? key_header : null,
      body: body.text,
      at_ms: Date.now(),
      status: null,
      answer_body: null,
      failure: null,
    };
    requests.push(record);
    keepBounded(requests, max_recorded);
    if (answeredIconRequest(url.pathname, response, record)) return;
    if (url.pathname.startsWith('/checkoutnow')) return handlePage(method, url, record, response);

    const route: FakePayPalRoute | null =
      method === 'POST' && url.pathname === '/v1/oauth2/token'
        ? 'token'
        : (() => {
            const found = paypalSpec.get().table.find(method, url.pathname);
            return found.entry ? (TEMPLATES[found.entry.key] ?? null) : null;
          })();
    record.route = route;
    const label = `${method} ${url.pathname}`;
    const failure = route ? failures.take(route) : null;
    record.failure = failure;
    if (failure === 'reset_before_processing') {
      request.socket.destroy();
      return;
    }
    if (failure === 'http_500' || failure === 'http_503') {
      const text = JSON.stringify(error('INTERNAL_SERVER_ERROR', 'An internal server error occurred.'));
      return writeAnswer(response, record, failure === 'http_500' ? 500 : 503, route === 'token' ? null : text);
    }

    let answer: Answer;
    if (route === 'token') {
      violations.add('request', label, validateTokenRequest(request.headers, body.text));
      const expected = `Basic ${Buffer.from(`${client_id}:${client_secret}`).toString('base64')}`;
      if (request.headers.authorization !== expected)
        answer = { status: 401, json: { error: 'invalid_client', error_description: 'Client Authentication failed' }, events: [] };
      else {
        const access_token = `A21AA${id(40)}`;
        tokens.set(access_token, Date.now() + token_ttl_s * 1000);
        tokens_issued += 1;
        answer = {
          status: 200,
          json: {
            scope: 'https://uri.paypal.com/services/payments/payment',
            access_token,
            token_type: 'Bearer',
            app_id: 'APP-80W284485P519543T',
            expires_in: token_ttl_s,
            nonce: `${now()}${id(8)}`,
          },
          events: [],
        };
      }
    } else {
      const problems = paypalSpec.validateRequest({ method, path: url.pathname + url.search, headers: request.headers, body: body.text });
      violations.add('request', label, problems);
      const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1] ?? '';
      const expiry = tokens.get(token);
      const replay_key = record.idempotency_key !== null && route !== null ? `${route} ${record.idempotency_key}` : null;
      const replay = replay_key !== null ? replies.get(replay_key) : undefined;
      if (!route) answer = { status: 404, json: error('NOT_FOUND', 'No such route'), events: [] };
      else if (expiry === undefined || expiry < Date.now())
        answer = {
          status: 401,
          json: {
            name: 'AUTHENTICATION_FAILURE',
            message: 'Authentication failed due to missing authorization header, or invalid authentication credentials.',
            debug_id: id(13).toLowerCase(),
            links: [],
          },
          events: [],
        };
      else if (replay) answer = { status: replay.status, ...(replay.text !== null ? { text: replay.text } : {}), events: [] };
      else if (problems.length > 0 || body.too_large)
        answer = {
          status: 400,
          json: error(
            'INVALID_REQUEST',
            'Request is not well-formed, syntactically incorrect, or violates schema.',
            problems[0] ?? 'TOO_LARGE',
          ),
          events: [],
        };
      else {
        const params = paypalSpec.get().table.find(method, url.pathname).path_params;
        answer = processRoute(route, params, body.text === '' ? {} : JSON.parse(body.text), request.headers);
        if (replay_key !== null && answer.status < 500) replies.set(replay_key, { status: answer.status, text: answerText(answer) });
      }
      if (route)
        violations.add(
          'response',
          `${label} → ${answer.status}`,
          paypalSpec.validateResponse({
            method,
            path: url.pathname,
            status: answer.status,
            body: answer.text !== undefined ? JSON.parse(answer.text) : answer.json,
          }),
        );
    }
    const text = answerText(answer);
    await sendProcessed(
      failure,
      {
        request,
        response,
        record,
        text,
        garbage_start: '{"id":"',
        write: (out) => writeAnswer(response, record, answer.status, out),
        publish: () => webhooks.publish(answer.events),
      },
      held_answers,
    );
  }

  function handlePage(method: string, url: URL, record: Writable<FakePayPalRequest>, response: http.ServerResponse): void {
    const answers = pageAnswers(response, (status) => (record.status = status));
    const order = orders.get(url.searchParams.get('token') ?? '');
    if (!order || (order.status !== 'CREATED' && order.status !== 'PAYER_ACTION_REQUIRED' && order.status !== 'APPROVED'))
      return answers.page(404, noOrderPage());
    if (method === 'GET' && url.pathname === '/checkoutnow')
      return answers.page(200, approvalPage(order.id, order.amount.value, order.amount.currency_code));
    if (method === 'POST' && url.pathname === '/checkoutnow/approve') {
      const made = approveOrder(order);
      void webhooks.publish(made);
      const target = new URL(order.return_url ?? `${base_url}/checkoutnow/done`);
      target.searchParams.set('token', order.id);
      target.searchParams.set('PayerID', order.payer_id ?? '');
      return answers.redirect(target.toString());
    }
    if (method === 'POST' && url.pathname === '/checkoutnow/cancel') {
      const target = new URL(order.cancel_url ?? `${base_url}/checkoutnow/done`);
      target.searchParams.set('token', order.id);
      return answers.redirect(target.toString());
    }
    return answers.page(404, noOrderPage());
  }

  function approveOrder(order: Order): FakeEvent[] {
    if (order.status === 'APPROVED') return [];
    order.status = 'APPROVED';
    order.payer_id = id(13);
    return [event('CHECKOUT.ORDER.APPROVED', 'checkout-order', orderJson(order), `An order has been approved by buyer`)];
  }

  const server = await startLocalServer({ body_max_bytes: BODY_MAX_BYTES, handle: failuresAsViolations(violations, handle) });
  base_url = server.url;

  const controls = createProcessorControls<FakePayPalRoute, FakeEvent, FakePayPalRequest>({
    violations,
    requests,
    events,
    failures,
    webhooks,
    held_answers,
    server,
    stopTimers: () => undefined,
  });

  return {
    ...controls,
    url: server.url,
    client_id,
    client_secret,
    webhook_id,
    get tokens_issued() {
      return tokens_issued;
    },
    setWebhookEndpoint(url) {
      webhooks.setEndpoint(url === null ? null : { url, secret: webhook_id });
    },
    expireTokens() {
      for (const token of tokens.keys()) tokens.set(token, 0);
    },
    async approve(order_id) {
      const order = orders.get(order_id);
      if (!order) throw new Error(`fake paypal: no order ${order_id}`);
      await webhooks.publish(approveOrder(order));
    },
    pendingNextCapture() {
      pending_next_capture = true;
    },
    async completeCapture(capture_id, status) {
      const capture = captures.get(capture_id);
      if (!capture || capture.status !== 'PENDING') throw new Error(`fake paypal: no pending capture ${capture_id}`);
      capture.status = status;
      await webhooks.publish([event(`PAYMENT.CAPTURE.${status}`, 'capture', captureJson(capture), `Payment ${status.toLowerCase()}`)]);
    },
    async refundFromDashboard(capture_id, value) {
      const capture = captures.get(capture_id);
      if (!capture) throw new Error(`fake paypal: no capture ${capture_id}`);
      const made = refund(capture, value, null, null);
      if ('error' in made) throw new Error('fake paypal: the capture cannot be refunded');
      await webhooks.publish(made.events);
      return made.refund.id;
    },
    async settlePayoutItem(payout_item_id, status) {
      const item = items.get(payout_item_id);
      if (!item) throw new Error(`fake paypal: no payout item ${payout_item_id}`);
      item.status = status;
      item.history.push(status);
      if (status === 'SUCCESS' || status === 'UNCLAIMED') item.transaction_id ??= id(17);
      const type: Record<string, string> = {
        SUCCESS: 'PAYMENT.PAYOUTS-ITEM.SUCCEEDED',
        FAILED: 'PAYMENT.PAYOUTS-ITEM.FAILED',
        RETURNED: 'PAYMENT.PAYOUTS-ITEM.RETURNED',
        BLOCKED: 'PAYMENT.PAYOUTS-ITEM.BLOCKED',
        UNCLAIMED: 'PAYMENT.PAYOUTS-ITEM.UNCLAIMED',
      };
      await webhooks.publish([event(type[status]!, 'payouts_item', itemJson(item), `A payout item is ${status.toLowerCase()}`)]);
    },
    async openDispute(capture_id, value, stage = 'CHARGEBACK') {
      const capture = captures.get(capture_id);
      if (!capture) throw new Error(`fake paypal: no capture ${capture_id}`);
      const dispute: Dispute = {
        id: `PP-D-${id(5)}`,
        capture,
        status: 'WAITING_FOR_SELLER_RESPONSE',
        stage,
        amount: { currency_code: capture.amount.currency_code, value: value ?? capture.amount.value },
        outcome_code: null,
        create_time: now(),
        update_time: now(),
        seller_response_due_date: new Date(Date.now() + 10 * 86_400_000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      };
      disputes.set(dispute.id, dispute);
      await webhooks.publish([event('CUSTOMER.DISPUTE.CREATED', 'dispute', disputeJson(dispute), 'A new dispute opened')]);
      return dispute.id;
    },
    async moveDispute(dispute_id, status, outcome_code) {
      const dispute = disputes.get(dispute_id);
      if (!dispute) throw new Error(`fake paypal: no dispute ${dispute_id}`);
      dispute.status = status;
      dispute.outcome_code = status === 'RESOLVED' ? (outcome_code ?? 'RESOLVED_BUYER_FAVOUR') : null;
      dispute.update_time = now();
      const type = status === 'RESOLVED' ? 'CUSTOMER.DISPUTE.RESOLVED' : 'CUSTOMER.DISPUTE.UPDATED';
      await webhooks.publish([
        event(type, 'dispute', disputeJson(dispute), `A dispute was ${status === 'RESOLVED' ? 'resolved' : 'updated'}`),
      ]);
    },
    order(order_id) {
      return orders.get(order_id) ?? null;
    },
    payoutItemsOf(batch_id) {
      return batches.get(batch_id)?.items ?? [];
    },
    get orders() {
      return [...orders.values()];
    },
    get refunds() {
      return [...refunds.values()];
    },
    get payout_items() {
      return [...items.values()];
    },
  };
}
