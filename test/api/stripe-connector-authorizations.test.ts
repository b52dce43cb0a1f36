// The `stripe` connector's authorizations and what happens to a payment outside the gateway
// (issue 26, decisions.md §16), at the connector's level: real HTTP through the official `stripe`
// package to the fake Stripe (test/support/stripe/fake.ts), webhooks as the fake signs and
// delivers them, read back by the connector's own verification. An authorization
// (capture: false) is a manual-capture PaymentIntent; it is captured in part (the rest released)
// once whatever the replays of its key, voided, found by lookup open, captured or voided; a
// capture that times out is unknown and then settled by asking; every new webhook event type comes
// out as its payment_event: the capture, the void, a dispute from opened to won or lost, and a
// refund made in Stripe's Dashboard, which carries no trace_id of ours. fake.violations stays empty:
// every request and answer, every event, is Stripe's published description's. Last, live-stripe.ts's
// controls for the gateway's end-to-end tests, against a running gateway whose webhook endpoint
// verifies and takes each new event.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectorOptions, loadConfig } from '../../src/config.js';
import {
  type CaptureRequest,
  type CardSaleRequest,
  type Connector,
  type ConnectorContext,
  type LookupRequest,
  NO_CUSTOMER,
  type PaymentEvent,
  type WebhookEvent,
} from '../../src/connectors/connector.js';
import { stripeDefinition } from '../../src/connectors/stripe/connector.js';
import { CardData } from '../../src/domain/cards.js';
import { AdjustableClock } from '../../src/domain/clock.js';
import { ProcessorHttp } from '../../src/outbound/processor-http.js';
import { saleA } from '../support/bodies.js';
import { waitUntil } from '../support/fake-processor/fetch-answer.js';
import { withLiveGateway } from '../support/live-gateway.js';
import {
  closeStripeDispute,
  type LiveStripe,
  liveSale,
  openStripeDispute,
  refundInStripeDashboard,
  startLiveStripe,
  stripeIntentOf,
} from '../support/live-stripe.js';
import { startMerchantReceiver, type MerchantReceiver } from '../support/merchant-receiver.js';
import { type FakeEvent, type FakeStripe, startFakeStripe } from '../support/stripe/fake.js';
import { storeKinds } from '../support/stores.js';

const WEBHOOK_PATH = '/webhooks/stripe';
const WEBHOOK_SECRET = 'whsec_authorizationsTest0123456789abcdef';
const GATEWAY_ID = 'a'.repeat(32);
const TIMEOUT_MS = 1500;

/** Stripe's test cards (docs.stripe.com/testing). */
const APPROVED = '4242424242424242';
const DECLINED = '4000000000000002';
const THREE_DS = '4000000000003220';
const REFUND_PENDING = '4000000000007726';

let fake: FakeStripe;
let receiver: MerchantReceiver;
let connector: Connector;
let next_trace = Math.floor(Date.now() / 1000) * 1000;

beforeAll(async () => {
  receiver = await startMerchantReceiver();
  fake = await startFakeStripe({ refund_settle_ms: null, webhook_retry_delay_ms: 5 });
  fake.setWebhookEndpoint(`${receiver.url}${WEBHOOK_PATH}`, WEBHOOK_SECRET);
  const context: ConnectorContext = {
    options: { ...connectorOptions(loadConfig({})), environment: 'sandbox', processor_timeout_ms: TIMEOUT_MS },
    clock: new AdjustableClock(),
    public_url: () => 'http://127.0.0.1:1',
    http: new ProcessorHttp({ timeout_ms: TIMEOUT_MS, connect_timeout_ms: 500, max_reply_bytes: 1 << 20, allow_private: true }),
  };
  connector = stripeDefinition.create(
    { secret_key: fake.secret_key, webhook_secret: WEBHOOK_SECRET, base_url: fake.url },
    context,
    GATEWAY_ID,
  );
});

afterAll(async () => {
  await fake?.close();
  await receiver?.close();
});

afterEach(() => {
  const seen = [...fake.violations];
  fake.clearViolations();
  expect(seen).toEqual([]);
});

function sale(
  card_number: string,
  amount_minor: number,
  capture: boolean,
  return_to: CardSaleRequest['return_to'] = null,
): CardSaleRequest {
  next_trace += 1;
  return {
    trace_id: next_trace,
    reference: `order-${next_trace}`,
    merchant_id: 'm1',
    amount_minor,
    currency: 'USD',
    card: new CardData(card_number, { month: 12, year: 2035 }, '123'),
    customer: NO_CUSTOMER,
    initiated_by: 'customer',
    mit_retry: false,
    return_to,
    capture,
  };
}

/** An approved authorization: its request and its PaymentIntent's id. */
async function authorize(amount_minor = 1000, card_number = APPROVED): Promise<{ request: CardSaleRequest; id: string }> {
  const request = sale(card_number, amount_minor, false);
  const result = await connector.sale(request);
  expect(result).toMatchObject({
    kind: 'approved',
    charge_amount_minor: amount_minor,
    charge_currency: 'USD',
    error_code: 'requires_capture',
  });
  return { request, id: (result as { psp_transaction_id: string }).psp_transaction_id };
}

function action(request: CardSaleRequest, id: string, key: string): Omit<CaptureRequest, 'amount_minor'> {
  return {
    trace_id: request.trace_id,
    reference: request.reference,
    psp_transaction_id: id,
    authorized_minor: request.amount_minor,
    currency: request.currency,
    idempotency_key: key,
  };
}

function lookup(request: CardSaleRequest, psp_transaction_id: string | null, transaction_type: LookupRequest['transaction_type']) {
  return connector.lookup({
    trace_id: request.trace_id,
    reference: request.reference,
    transaction_type,
    psp_transaction_id,
    sale_psp_transaction_id: null,
    amount_minor: request.amount_minor,
    currency: request.currency,
  });
}

/** What the connector reads of an event the fake delivered: the body and headers the receiver got, as the gateway gets them. */
async function read(event: FakeEvent): Promise<WebhookEvent> {
  const delivered = await receiver.waitForRequest((r) => r.path === WEBHOOK_PATH && (r.json as { id?: string } | null)?.id === event.id);
  const reading = await connector.readWebhook!(Buffer.from(delivered.body, 'utf8'), delivered.headers);
  if (reading.kind !== 'event') throw new Error(`${event.type}: ${JSON.stringify(reading)}`);
  return reading.event;
}

async function readType(type: string, object_id: string): Promise<WebhookEvent> {
  return read(await fake.waitForEvent((e) => e.type === type && e.object_id === object_id && e.state === 'delivered'));
}

function eventsOfIntent(id: string, type: string): FakeEvent[] {
  return fake.events.filter((e) => e.payment_intent_id === id && e.type === type);
}

describe('authorize (capture: false)', () => {
  it('makes a manual-capture PaymentIntent with its own idempotency key; requires_capture is approved; lookup finds it open', async () => {
    const { request, id } = await authorize(1000);
    expect(fake.paymentIntent(id)).toMatchObject({
      status: 'requires_capture',
      capture_method: 'manual',
      amount_capturable: 1000,
      amount_received: 0,
    });
    const sent = fake
      .requestsTo('POST /v1/payment_intents')
      .find((r) => r.form.metadata && (r.form.metadata as Record<string, string>).paygate_trace_id === String(request.trace_id))!;
    expect(sent.form).toMatchObject({ capture_method: 'manual', confirm: true, amount: 1000 });
    expect(sent.idempotency_key).toBe(`paygate-${GATEWAY_ID}-${request.trace_id}-authorize`);
    expect(await lookup(request, id, 'authorize')).toEqual({
      kind: 'found',
      result: expect.objectContaining({ kind: 'approved', psp_transaction_id: id, charge_amount_minor: 1000 }),
      payment: { hold: 'open', captured_minor: 0, refunds: [] },
    });
    // Without the id (the answer was lost): found by our trace_id, the same.
    expect(await lookup(request, null, 'authorize')).toMatchObject({ kind: 'found', payment: { hold: 'open' } });
    // A sale is still captured at once.
    const paid = await connector.sale(sale(APPROVED, 500, true));
    expect(paid).toMatchObject({ kind: 'approved', error_code: 'succeeded' });
    expect(fake.paymentIntent((paid as { psp_transaction_id: string }).psp_transaction_id)).toMatchObject({ capture_method: 'automatic' });
  });

  it('a decline is rejected, and a lookup says so without a hold', async () => {
    const request = sale(DECLINED, 1000, false);
    const result = await connector.sale(request);
    expect(result).toMatchObject({ kind: 'rejected', error_code: 'generic_decline' });
    const id = (result as { psp_transaction_id: string }).psp_transaction_id;
    expect(await lookup(request, id, 'authorize')).toMatchObject({
      kind: 'found',
      result: { kind: 'rejected' },
      payment: { hold: null, captured_minor: null },
    });
  });

  it('3-D Secure as for a sale: redirect, then authenticated: requires_capture, approved by lookup and by the webhook', async () => {
    const request = sale(THREE_DS, 1200, false, { success_url: `${receiver.url}/back`, failure_url: `${receiver.url}/failed` });
    const result = await connector.sale(request);
    expect(result).toMatchObject({ kind: 'redirect', redirect_url: expect.stringContaining('/3d_secure_2_test/') });
    const id = (result as { psp_transaction_id: string }).psp_transaction_id;
    expect(await lookup(request, id, 'authorize')).toMatchObject({ result: { kind: 'redirect' }, payment: { hold: null } });
    expect(await fake.authenticate(id, 'complete')).toContain('redirect_status=succeeded');
    expect(await lookup(request, id, 'authorize')).toMatchObject({ result: { kind: 'approved' }, payment: { hold: 'open' } });
    const approved = await readType('payment_intent.amount_capturable_updated', id);
    expect(approved).toMatchObject({
      result: { kind: 'approved', psp_transaction_id: id, charge_amount_minor: 1200 },
      match: { trace_id: request.trace_id, psp_transaction_id: id, transaction_type: null },
    });
    expect(approved.payment_event).toBeUndefined();
  });
});

describe('capture', () => {
  it('captures part: done with the charge; Stripe shows amount_received and releases the rest; the same key again is one capture; lookup says captured', async () => {
    const { request, id } = await authorize(1000);
    const key = `capture-${request.trace_id}`;
    const done = await connector.authorizations!.capture({ ...action(request, id, key), amount_minor: 600 });
    const charge = fake.paymentIntent(id)!.latest_charge;
    expect(done).toEqual({ kind: 'done', psp_action_id: charge });
    expect(fake.paymentIntent(id)).toMatchObject({ status: 'succeeded', amount_received: 600, amount_released: 400, amount_capturable: 0 });
    const sent = fake.requestsTo('POST /v1/payment_intents/{intent}/capture').filter((r) => r.path.includes(id));
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ idempotency_key: key, form: { amount_to_capture: 600 }, idempotency: 'new' });

    const again = await connector.authorizations!.capture({ ...action(request, id, key), amount_minor: 600 });
    expect(again).toEqual(done);
    const both = fake.requestsTo('POST /v1/payment_intents/{intent}/capture').filter((r) => r.path.includes(id));
    expect(both.map((r) => r.idempotency)).toEqual(['new', 'replayed']);
    await fake.waitForEvent((e) => e.payment_intent_id === id && e.type === 'payment_intent.succeeded');
    expect(eventsOfIntent(id, 'charge.captured')).toHaveLength(1);

    expect(await lookup(request, id, 'authorize')).toEqual({
      kind: 'found',
      result: expect.objectContaining({ kind: 'approved', psp_transaction_id: id, charge_amount_minor: 1000 }),
      payment: { hold: 'captured', captured_minor: 600, refunds: [] },
    });
    // Another capture (another key): Stripe captures once; refused with its code.
    const second = await connector.authorizations!.capture({ ...action(request, id, `${key}-2`), amount_minor: 400 });
    expect(second).toMatchObject({ kind: 'refused', error_code: 'payment_intent_unexpected_state' });
    expect((second as { error_details: string }).error_details).toMatch(/^Capture refused by the processor: .*status of succeeded/);
  });

  it('refuses more than authorized and an authorization Stripe let expire (nothing captured)', async () => {
    const { request, id } = await authorize(800);
    const over = await connector.authorizations!.capture({ ...action(request, id, `over-${request.trace_id}`), amount_minor: 801 });
    expect(over).toMatchObject({ kind: 'refused', error_code: 'amount_too_large' });
    await fake.expireAuthorization(id);
    const late = await connector.authorizations!.capture({ ...action(request, id, `late-${request.trace_id}`), amount_minor: 800 });
    expect(late).toMatchObject({ kind: 'refused', error_code: 'payment_intent_unexpected_state' });
    expect(fake.paymentIntent(id)).toMatchObject({ status: 'canceled', amount_received: 0 });
    // Expired after its approval: a lookup says voided.
    expect(await lookup(request, id, 'authorize')).toMatchObject({
      result: { kind: 'approved' },
      payment: { hold: 'voided', captured_minor: 0 },
    });
  });

  it('a capture that times out is unknown; a lookup finds it captured, and the same key again answers it (one capture)', async () => {
    const { request, id } = await authorize(1000);
    const key = `hang-${request.trace_id}`;
    fake.hangNextCapture();
    const started_ms = Date.now();
    const lost = await connector.authorizations!.capture({ ...action(request, id, key), amount_minor: 1000 });
    expect(lost).toMatchObject({ kind: 'unknown' });
    // The fake never answers: without the time-out the call would hang until the test's own. The margin is wide
    // because a CI machine busy with other test files can be seconds late to fire a timer.
    expect(Date.now() - started_ms).toBeLessThan(TIMEOUT_MS + 10_000);
    expect(await lookup(request, id, 'authorize')).toMatchObject({ payment: { hold: 'captured', captured_minor: 1000 } });
    const again = await connector.authorizations!.capture({ ...action(request, id, key), amount_minor: 1000 });
    expect(again).toMatchObject({ kind: 'done' });
    // The package, which gave up on its own time-out too, retries once in the background with the same key: a replay.
    const captures = () => fake.requestsTo('POST /v1/payment_intents/{intent}/capture').filter((r) => r.path.includes(id));
    await waitUntil(() => captures().length >= 3, 5000);
    expect(captures().map((r) => r.idempotency)).toEqual(['new', 'replayed', 'replayed']);
    expect(eventsOfIntent(id, 'charge.captured')).toHaveLength(1);
  });

  it('5xx twice (the package retries once with the same key): unknown, nothing captured', async () => {
    const { request, id } = await authorize(1000);
    fake.failNext('POST /v1/payment_intents/{intent}/capture', 'http_500');
    fake.failNext('POST /v1/payment_intents/{intent}/capture', 'http_500');
    const result = await connector.authorizations!.capture({ ...action(request, id, `5xx-${request.trace_id}`), amount_minor: 1000 });
    expect(result).toMatchObject({ kind: 'unknown', reason: expect.stringContaining('500') });
    expect(fake.paymentIntent(id)).toMatchObject({ status: 'requires_capture', amount_received: 0 });
  });
});

describe('void', () => {
  it('cancels the PaymentIntent: done; the same key again answers the same; lookup says voided; then neither capture nor another void', async () => {
    const { request, id } = await authorize(1000);
    const key = `void-${request.trace_id}`;
    const done = await connector.authorizations!.void(action(request, id, key));
    expect(done).toEqual({ kind: 'done', psp_action_id: id });
    expect(fake.paymentIntent(id)).toMatchObject({ status: 'canceled', amount_released: 1000 });
    expect(await connector.authorizations!.void(action(request, id, key))).toEqual(done);
    expect(
      fake
        .requestsTo('POST /v1/payment_intents/{intent}/cancel')
        .filter((r) => r.path.includes(id))
        .map((r) => r.idempotency),
    ).toEqual(['new', 'replayed']);
    expect(await lookup(request, id, 'authorize')).toEqual({
      kind: 'found',
      result: expect.objectContaining({ kind: 'approved', psp_transaction_id: id }),
      payment: { hold: 'voided', captured_minor: 0, refunds: [] },
    });
    expect(await connector.authorizations!.capture({ ...action(request, id, `c-${key}`), amount_minor: 1000 })).toMatchObject({
      kind: 'refused',
      error_code: 'payment_intent_unexpected_state',
    });
    expect(await connector.authorizations!.void(action(request, id, `v-${key}`))).toMatchObject({
      kind: 'refused',
      error_code: 'payment_intent_unexpected_state',
    });
  });

  it('a void of what Stripe does not know is refused (resource_missing)', async () => {
    const request = sale(APPROVED, 100, false);
    expect(await connector.authorizations!.void(action(request, 'pi_unknown0000000000000000', `v-${request.trace_id}`))).toMatchObject({
      kind: 'refused',
      error_code: 'resource_missing',
    });
  });
});

describe('webhooks of an authorization', () => {
  it('the capture: charge.captured and payment_intent.succeeded give payment_event captured with the captured amount', async () => {
    const { request, id } = await authorize(1000);
    await connector.authorizations!.capture({ ...action(request, id, `wc-${request.trace_id}`), amount_minor: 700 });
    const charge = fake.paymentIntent(id)!.latest_charge!;
    const by_charge = await readType('charge.captured', charge);
    expect(by_charge).toMatchObject({
      result: null,
      match: { trace_id: request.trace_id, psp_transaction_id: id, transaction_type: null },
      payment_event: { kind: 'captured', psp_payment_id: id, amount_minor: 700 } satisfies PaymentEvent,
    });
    const by_intent = await readType('payment_intent.succeeded', id);
    expect(by_intent.payment_event).toEqual({ kind: 'captured', psp_payment_id: id, amount_minor: 700 });
    expect(by_intent.match).toMatchObject({ trace_id: request.trace_id, psp_transaction_id: id });
  });

  it('the void (ours, or Stripe expiring it): payment_intent.canceled gives payment_event voided and no result', async () => {
    const { request, id } = await authorize(1000);
    await connector.authorizations!.void(action(request, id, `wv-${request.trace_id}`));
    expect(await readType('payment_intent.canceled', id)).toMatchObject({
      result: null,
      match: { trace_id: request.trace_id, psp_transaction_id: id },
      payment_event: { kind: 'voided', psp_payment_id: id },
    });
    const expired = await authorize(500);
    await fake.expireAuthorization(expired.id);
    expect((await readType('payment_intent.canceled', expired.id)).payment_event).toEqual({ kind: 'voided', psp_payment_id: expired.id });
  });

  it('a canceled authorization that was never approved (3-D Secure abandoned) is a rejection, not a void', async () => {
    const request = sale(THREE_DS, 900, false, { success_url: `${receiver.url}/back`, failure_url: `${receiver.url}/failed` });
    const id = ((await connector.sale(request)) as { psp_transaction_id: string }).psp_transaction_id;
    expect(await connector.authorizations!.void(action(request, id, `ab-${request.trace_id}`))).toMatchObject({ kind: 'done' });
    const canceled = await readType('payment_intent.canceled', id);
    expect(canceled.payment_event).toBeUndefined();
    expect(canceled.result).toMatchObject({ kind: 'rejected', psp_transaction_id: id });
    expect(await lookup(request, id, 'authorize')).toMatchObject({ result: { kind: 'rejected' }, payment: { hold: null } });
  });

  it("a sale's payment_intent.succeeded is only its result (no payment_event)", async () => {
    const request = sale(APPROVED, 300, true);
    const id = ((await connector.sale(request)) as { psp_transaction_id: string }).psp_transaction_id;
    const succeeded = await readType('payment_intent.succeeded', id);
    expect(succeeded).toMatchObject({ result: { kind: 'approved' }, match: { trace_id: request.trace_id } });
    expect(succeeded.payment_event).toBeUndefined();
  });
});

describe('disputes', () => {
  it('opened then won: every charge.dispute.* event is payment_event dispute of the payment, stage from its status', async () => {
    const request = sale(APPROVED, 2500, true);
    const id = ((await connector.sale(request)) as { psp_transaction_id: string }).psp_transaction_id;
    const dispute = await fake.openDispute(id, { reason: 'product_not_received' });
    const facts = {
      psp_dispute_id: dispute.id,
      amount_minor: 2500,
      currency: 'USD',
      reason: 'product_not_received',
      evidence_due_at_ms: dispute.due_by * 1000,
    };
    const created = await readType('charge.dispute.created', dispute.id);
    expect(created).toEqual({
      event_id: expect.stringMatching(/^evt_/),
      event_type: 'charge.dispute.created',
      result: null,
      match: { trace_id: null, psp_transaction_id: id, transaction_type: null, reference: null },
      payment_event: { kind: 'dispute', psp_payment_id: id, dispute: { ...facts, stage: 'evidence_required' } },
    });
    expect((await readType('charge.dispute.funds_withdrawn', dispute.id)).payment_event).toMatchObject({
      dispute: { stage: 'evidence_required' },
    });
    await fake.updateDispute(dispute.id, 'under_review');
    expect((await readType('charge.dispute.updated', dispute.id)).payment_event).toEqual({
      kind: 'dispute',
      psp_payment_id: id,
      dispute: { ...facts, stage: 'under_review' },
    });
    await fake.closeDispute(dispute.id, 'won');
    expect((await readType('charge.dispute.closed', dispute.id)).payment_event).toMatchObject({ dispute: { ...facts, stage: 'won' } });
    expect((await readType('charge.dispute.funds_reinstated', dispute.id)).payment_event).toMatchObject({ dispute: { stage: 'won' } });
  });

  it('a dispute of part of a captured authorization, lost; an inquiry closed without a chargeback is canceled', async () => {
    const { request, id } = await authorize(1000);
    await connector.authorizations!.capture({ ...action(request, id, `d-${request.trace_id}`), amount_minor: 800 });
    const dispute = await fake.openDispute(id, { amount: 300 });
    expect((await readType('charge.dispute.created', dispute.id)).payment_event).toMatchObject({
      kind: 'dispute',
      psp_payment_id: id,
      dispute: { amount_minor: 300, stage: 'evidence_required', reason: 'fraudulent' },
    });
    await fake.closeDispute(dispute.id, 'lost');
    expect((await readType('charge.dispute.closed', dispute.id)).payment_event).toMatchObject({
      dispute: { stage: 'lost', amount_minor: 300 },
    });

    const other = ((await connector.sale(sale(APPROVED, 400, true))) as { psp_transaction_id: string }).psp_transaction_id;
    const inquiry = await fake.openDispute(other, { status: 'warning_needs_response' });
    expect((await readType('charge.dispute.created', inquiry.id)).payment_event).toMatchObject({ dispute: { stage: 'evidence_required' } });
    await fake.closeDispute(inquiry.id, 'won');
    expect((await readType('charge.dispute.closed', inquiry.id)).payment_event).toMatchObject({ dispute: { stage: 'canceled' } });
  });
});

describe('refunds made outside the gateway (reversals)', () => {
  it("a Dashboard refund is read as refunded with no trace_id of ours; ours carries its trace_id; a sale's lookup lists both", async () => {
    const request = sale(APPROVED, 1000, true);
    const id = ((await connector.sale(request)) as { psp_transaction_id: string }).psp_transaction_id;
    const refund_trace = request.trace_id + 500_000;
    const ours = await connector.refund({
      trace_id: refund_trace,
      reference: request.reference,
      sale_psp_transaction_id: id,
      sale_trace_id: request.trace_id,
      amount_minor: 200,
      currency: 'USD',
    });
    expect(ours).toMatchObject({ kind: 'approved' });
    const our_refund = (ours as { psp_transaction_id: string }).psp_transaction_id;
    const dashboard = await fake.refundFromDashboard(id, 300);

    const outside = await readType('refund.created', dashboard.id);
    expect(outside).toEqual({
      event_id: expect.stringMatching(/^evt_/),
      event_type: 'refund.created',
      result: expect.objectContaining({ kind: 'approved', psp_transaction_id: dashboard.id, charge_amount_minor: 300 }),
      match: { trace_id: null, psp_transaction_id: dashboard.id, transaction_type: 'refund', reference: null },
      payment_event: { kind: 'refunded', psp_payment_id: id, psp_refund_id: dashboard.id, amount_minor: 300, currency: 'USD' },
    });
    const mine = await readType('refund.created', our_refund);
    expect(mine.match.trace_id).toBe(refund_trace);
    expect(mine.payment_event).toEqual({
      kind: 'refunded',
      psp_payment_id: id,
      psp_refund_id: our_refund,
      amount_minor: 200,
      currency: 'USD',
    });
    // charge.refunded says no refund's id: read as nothing.
    const charge_refunded = await fake.waitForEvent((e) => e.payment_intent_id === id && e.type === 'charge.refunded');
    const delivered = await receiver.waitForRequest((r) => (r.json as { id?: string } | null)?.id === charge_refunded.id);
    expect((await connector.readWebhook!(Buffer.from(delivered.body), delivered.headers)).kind).toBe('ignored');

    const found = await lookup(request, id, 'sale');
    expect(found).toMatchObject({ kind: 'found', result: { kind: 'approved' }, payment: { hold: null, captured_minor: null } });
    expect(found.kind === 'found' ? found.payment?.refunds : undefined).toEqual([
      { psp_refund_id: dashboard.id, amount_minor: 300, trace_id: null },
      { psp_refund_id: our_refund, amount_minor: 200, trace_id: refund_trace },
    ]);
  });

  it("a captured authorization's lookup lists the Dashboard's refunds; a pending refund is reported once it succeeds, a failed one never", async () => {
    const { request, id } = await authorize(1000, REFUND_PENDING);
    await connector.authorizations!.capture({ ...action(request, id, `r-${request.trace_id}`), amount_minor: 900 });
    const pending = await fake.refundFromDashboard(id, 400);
    expect(pending.status).toBe('pending');
    const created = await readType('refund.created', pending.id);
    expect(created.result).toBeNull();
    expect(created.payment_event).toBeUndefined();
    expect(await lookup(request, id, 'authorize')).toMatchObject({ payment: { hold: 'captured', captured_minor: 900, refunds: [] } });
    await fake.settleRefunds();
    expect((await readType('refund.updated', pending.id)).payment_event).toEqual({
      kind: 'refunded',
      psp_payment_id: id,
      psp_refund_id: pending.id,
      amount_minor: 400,
      currency: 'USD',
    });
    expect(await lookup(request, id, 'authorize')).toMatchObject({
      payment: { hold: 'captured', refunds: [{ psp_refund_id: pending.id, amount_minor: 400, trace_id: null }] },
    });

    // 4000 0000 0000 5126: a refund that succeeds, then fails: refund.failed reports no refund.
    const failing = ((await connector.sale(sale('4000000000005126', 600, true))) as { psp_transaction_id: string }).psp_transaction_id;
    const refund = await fake.refundFromDashboard(failing);
    await fake.settleRefunds();
    const failed = await readType('refund.failed', refund.id);
    expect(failed.result).toMatchObject({ kind: 'rejected', psp_transaction_id: refund.id });
    expect(failed.payment_event).toBeUndefined();
  });
});

describe('capabilities', () => {
  it('declares authorize_capture and disputes, and has authorizations', () => {
    expect(stripeDefinition.capabilities).toMatchObject({ authorize_capture: true, disputes: true });
    expect(typeof connector.authorizations?.capture).toBe('function');
    expect(typeof connector.authorizations?.void).toBe('function');
  });
});

describe("the gateway's webhook endpoint and live-stripe.ts's controls", () => {
  let live: LiveStripe;
  withLiveGateway(
    () => startLiveStripe(storeKinds()[0]!),
    (started) => (live = started),
  );

  it('a dispute opened and won, and a Dashboard refund, of a sale found by its trace_id: each event verified and answered 2xx', async () => {
    const answer = await live.process(liveSale(live, saleA(live.merchant, { gateway: live.gateway, card_number: APPROVED, amount: 1800 })));
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'approved' });
    const trace_id = answer.body.trace_id as number;
    expect(stripeIntentOf(live, trace_id)).toMatchObject({ id: answer.body.transaction_id, status: 'succeeded' });
    const dispute = await openStripeDispute(live, trace_id, { amount: 1800 });
    expect(dispute).toMatchObject({ payment_intent: answer.body.transaction_id, status: 'needs_response' });
    await closeStripeDispute(live, dispute.id, 'won');
    const refund = await refundInStripeDashboard(live, trace_id, 500);
    expect(refund).toMatchObject({ amount: 500, metadata: {} });
    const made = live.fake.events.filter((e) => e.object_id === dispute.id || e.object_id === refund.id);
    expect(made.map((e) => e.type).sort()).toEqual(
      [
        'charge.dispute.created',
        'charge.dispute.funds_withdrawn',
        'charge.dispute.closed',
        'charge.dispute.funds_reinstated',
        'refund.created',
      ].sort(),
    );
    // Delivered: the gateway verified each signature and answered 2xx on its first try.
    for (const event of made) expect([event.type, event.state, event.deliveries.length]).toEqual([event.type, 'delivered', 1]);
    expect(() => stripeIntentOf(live, trace_id + 987_654)).toThrow(/0 PaymentIntents/);
  });
});
