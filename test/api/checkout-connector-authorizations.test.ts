// The `checkout` connector's authorizations, captures, voids, refunds made outside the gateway and
// disputes (decisions §16, issue 26), called directly (no gateway) over real HTTP against the fake
// Checkout.com on 127.0.0.1: what it sends (checked by the fake against the published description,
// fake.violations stays empty), what it makes of the answers, of a lookup and of each webhook
// event as the fake delivers it, signed, to a local receiver.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectorOptions, loadConfig } from '../../src/config.js';
import { checkoutDefinition } from '../../src/connectors/checkout/connector.js';
import {
  type CaptureRequest,
  type CardSaleRequest,
  type Connector,
  type ConnectorContext,
  type LookupRequest,
  NO_CUSTOMER,
  type VoidRequest,
  type WebhookEvent,
} from '../../src/connectors/connector.js';
import { CardData } from '../../src/domain/cards.js';
import { AdjustableClock } from '../../src/domain/clock.js';
import { ProcessorHttp } from '../../src/outbound/processor-http.js';
import { type FakeCheckout, type FakeEvent, startFakeCheckout } from '../support/checkout/fake.js';
import { startMerchantReceiver, type MerchantReceiver } from '../support/merchant-receiver.js';

const WEBHOOK_PATH = '/webhooks/checkout';
const WEBHOOK_SECRET = 'whsec-connector-test-0123456789';
const PROCESSING_CHANNEL = 'pc_paygatefake7xkq3mzt2vwnd5h';
const GATEWAY_ID = 'c'.repeat(32);
/** A whole call to the fake, at most: short, so that a capture left hanging times out quickly. */
const TIMEOUT_MS = 1500;

let fake: FakeCheckout;
let receiver: MerchantReceiver;
let connector: Connector;
let seq = 0;

function contextWith(timeout_ms: number): ConnectorContext {
  return {
    options: connectorOptions(loadConfig({})),
    clock: new AdjustableClock(),
    public_url: () => 'https://pay.example.com',
    http: new ProcessorHttp({ timeout_ms, connect_timeout_ms: 500, max_reply_bytes: 256 * 1024, allow_private: true }),
  };
}

function connectorAt(base_url: string, timeout_ms = TIMEOUT_MS): Connector {
  return checkoutDefinition.create(
    { secret_key: fake.secret_key, processing_channel_id: PROCESSING_CHANNEL, webhook_secret: WEBHOOK_SECRET, base_url },
    contextWith(timeout_ms),
    GATEWAY_ID,
  );
}

function authorization(overrides: Partial<CardSaleRequest> = {}, pan = '4242424242424242'): CardSaleRequest {
  seq += 1;
  return {
    trace_id: 7000 + seq,
    reference: `AUTH-${seq}-${Date.now()}`,
    merchant_id: 'merchant-1',
    amount_minor: 1000,
    currency: 'EUR',
    card: new CardData(pan, { month: 12, year: 2035 }, '100'),
    customer: NO_CUSTOMER,
    initiated_by: 'customer',
    mit_retry: false,
    return_to: { success_url: `${receiver.url}/return?ok`, failure_url: `${receiver.url}/return?failed` },
    capture: false,
    ...overrides,
  };
}

/** An approved authorization at the fake: its request and the payment id. */
async function authorized(amount_minor = 1000): Promise<{ request: CardSaleRequest; payment_id: string }> {
  const request = authorization({ amount_minor });
  const result = await connector.sale(request);
  expect(result).toMatchObject({ kind: 'approved', charge_amount_minor: amount_minor, charge_currency: 'EUR' });
  return { request, payment_id: result.psp_transaction_id! };
}

function captureOf(
  auth: { request: CardSaleRequest; payment_id: string },
  amount_minor: number,
  idempotency_key = `cap-${auth.request.trace_id}`,
): CaptureRequest {
  return {
    trace_id: auth.request.trace_id,
    reference: auth.request.reference,
    psp_transaction_id: auth.payment_id,
    authorized_minor: auth.request.amount_minor,
    currency: auth.request.currency,
    idempotency_key,
    amount_minor,
  };
}

function voidOf(auth: { request: CardSaleRequest; payment_id: string }, idempotency_key = `void-${auth.request.trace_id}`): VoidRequest {
  const { amount_minor: _, ...request } = captureOf(auth, 0, idempotency_key);
  return request;
}

function lookupOf(
  auth: { request: CardSaleRequest; payment_id: string | null },
  transaction_type: LookupRequest['transaction_type'] = 'authorize',
): LookupRequest {
  return {
    trace_id: auth.request.trace_id,
    reference: auth.request.reference,
    transaction_type,
    psp_transaction_id: auth.payment_id,
    sale_psp_transaction_id: null,
    amount_minor: auth.request.amount_minor,
    currency: auth.request.currency,
  };
}

/** The event of this type about this payment, once the fake delivered it, as the connector reads what arrived. */
async function readDelivered(predicate: (event: FakeEvent) => boolean): Promise<WebhookEvent> {
  const event = await fake.waitForEvent(predicate);
  expect(event.state).toBe('delivered');
  const arrived = receiver.requestsTo(WEBHOOK_PATH).find((r) => (r.json as { id?: string } | null)?.id === event.id);
  expect(arrived, `event ${event.type} ${event.id} arrived`).toBeDefined();
  const reading = await connector.readWebhook!(Buffer.from(arrived!.body), arrived!.headers);
  expect(reading.kind).toBe('event');
  return (reading as Extract<typeof reading, { kind: 'event' }>).event;
}

beforeAll(async () => {
  receiver = await startMerchantReceiver();
  fake = await startFakeCheckout({ webhook_retry_delay_ms: 5 });
  fake.setWebhookEndpoint(`${receiver.url}${WEBHOOK_PATH}`, WEBHOOK_SECRET);
  connector = connectorAt(fake.url);
});

afterAll(async () => {
  await fake?.close();
  await receiver?.close();
});

afterEach(() => {
  // Every request the connector sent, and every answer and event of the fake, keeps to the description.
  expect(fake.violations).toEqual([]);
  fake.clearViolations();
});

describe('the connector declares what it does', () => {
  it('authorize_capture and disputes, with the capture and void it declares them by', () => {
    expect(checkoutDefinition.capabilities).toMatchObject({ authorize_capture: true, disputes: true, webhooks: true });
    expect(typeof connector.authorizations?.capture).toBe('function');
    expect(typeof connector.authorizations?.void).toBe('function');
  });
});

describe('authorize, capture, void', () => {
  it('authorizes with capture false: Authorized at Checkout.com, approved for us, nothing captured; a lookup finds the hold open', async () => {
    const auth = await authorized(1000);
    const sent = fake.requestsTo('POST /payments').find((r) => (r.json as { reference?: string }).reference === auth.request.reference)!;
    expect(sent.json).toMatchObject({ capture: false, amount: 1000, metadata: { paygate_trace_id: auth.request.trace_id } });
    expect(sent.idempotency_key).toBe(`paygate-${GATEWAY_ID}-${auth.request.trace_id}-authorize`);
    expect(fake.payment(auth.payment_id)).toMatchObject({ status: 'Authorized', captured_amount: 0, released_amount: 0 });
    expect(await connector.lookup(lookupOf(auth))).toEqual({
      kind: 'found',
      result: expect.objectContaining({ kind: 'approved', psp_transaction_id: auth.payment_id, charge_amount_minor: 1000 }),
      payment: { hold: 'open', captured_minor: 0, refunds: [] },
    });
    // Without the payment's id (its answer lost), by our reference and trace_id, alike.
    expect(await connector.lookup(lookupOf({ ...auth, payment_id: null }))).toMatchObject({
      kind: 'found',
      result: { kind: 'approved', psp_transaction_id: auth.payment_id },
      payment: { hold: 'open', captured_minor: 0 },
    });
    // payment_approved is the authorization's result (the gateway makes it `authorized`).
    const approved = await readDelivered((e) => e.payment_id === auth.payment_id && e.type === 'payment_approved');
    expect(approved).toMatchObject({
      result: { kind: 'approved', psp_transaction_id: auth.payment_id },
      match: { trace_id: auth.request.trace_id },
    });
    expect(approved.payment_event).toBeUndefined();
  });

  it('captures part: 202 accepted with the action id, the rest released; the same capture again is one capture; payment_captured and a lookup confirm it', async () => {
    const auth = await authorized(1000);
    const capture = captureOf(auth, 600);
    const first = await connector.authorizations!.capture(capture);
    expect(first).toEqual({ kind: 'accepted', psp_action_id: expect.stringMatching(/^act_[a-z2-7]{26}$/) });
    const sent = fake.requestsTo('POST /payments/{id}/captures').filter((r) => r.path === `/payments/${auth.payment_id}/captures`);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.idempotency_key).toBe(capture.idempotency_key);
    expect(sent[0]!.json).toEqual({
      amount: 600,
      capture_type: 'Final',
      reference: auth.request.reference,
      metadata: { paygate_trace_id: auth.request.trace_id },
    });
    expect(fake.payment(auth.payment_id)).toMatchObject({ status: 'Partially Captured', captured_amount: 600, released_amount: 400 });

    // Asked again with the same key (a replayed request, a retry after a crash): the same answer, still one capture.
    expect(await connector.authorizations!.capture(capture)).toEqual(first);
    const captures = fake.payment(auth.payment_id)!.actions.filter((a) => a.type === 'Capture');
    expect(captures).toEqual([
      expect.objectContaining({ id: (first as { psp_action_id: string }).psp_action_id, amount: 600, approved: true }),
    ]);
    expect(
      fake
        .requestsTo('POST /payments/{id}/captures')
        .filter((r) => r.path.includes(auth.payment_id))
        .map((r) => r.idempotency),
    ).toEqual(['new', 'replayed']);

    const event = await readDelivered((e) => e.payment_id === auth.payment_id && e.type === 'payment_captured');
    expect(event.payment_event).toEqual({ kind: 'captured', psp_payment_id: auth.payment_id, amount_minor: 600 });
    expect(event.match).toMatchObject({ psp_transaction_id: auth.payment_id, transaction_type: null, trace_id: auth.request.trace_id });
    expect(await connector.lookup(lookupOf(auth))).toMatchObject({
      kind: 'found',
      result: { kind: 'approved', psp_transaction_id: auth.payment_id },
      payment: { hold: 'captured', captured_minor: 600, refunds: [] },
    });

    // One capture per authorization: another key is refused by Checkout.com (403), nothing captured.
    const again = await connector.authorizations!.capture(captureOf(auth, 400, `cap-other-${auth.request.trace_id}`));
    expect(again).toMatchObject({
      kind: 'refused',
      error_code: '403',
      error_details: expect.stringContaining('Capture refused by the processor'),
    });
    expect(fake.payment(auth.payment_id)?.captured_amount).toBe(600);
  });

  it('captures all of it: Captured, nothing released', async () => {
    const auth = await authorized(2500);
    expect(await connector.authorizations!.capture(captureOf(auth, 2500))).toMatchObject({ kind: 'accepted' });
    expect(fake.payment(auth.payment_id)).toMatchObject({ status: 'Captured', captured_amount: 2500, released_amount: 0 });
    expect(await connector.lookup(lookupOf(auth))).toMatchObject({ payment: { hold: 'captured', captured_minor: 2500 } });
  });

  it('voids another: accepted, Voided; payment_voided is a voided payment event with no result; a lookup finds the hold voided; no capture after', async () => {
    const auth = await authorized(1500);
    const voided = await connector.authorizations!.void(voidOf(auth));
    expect(voided).toEqual({ kind: 'accepted', psp_action_id: expect.stringMatching(/^act_/) });
    const sent = fake.requestsTo('POST /payments/{id}/voids').find((r) => r.path === `/payments/${auth.payment_id}/voids`)!;
    expect(sent.json).toEqual({ reference: auth.request.reference, metadata: { paygate_trace_id: auth.request.trace_id } });
    expect(sent.idempotency_key).toBe(`void-${auth.request.trace_id}`);
    expect(fake.payment(auth.payment_id)).toMatchObject({ status: 'Voided', captured_amount: 0, released_amount: 1500 });
    // The same void again: the same answer, one void.
    expect(await connector.authorizations!.void(voidOf(auth))).toEqual(voided);
    expect(fake.payment(auth.payment_id)!.actions.filter((a) => a.type === 'Void')).toHaveLength(1);

    const event = await readDelivered((e) => e.payment_id === auth.payment_id && e.type === 'payment_voided');
    expect(event).toMatchObject({
      result: null,
      match: { psp_transaction_id: auth.payment_id, transaction_type: null },
      payment_event: { kind: 'voided', psp_payment_id: auth.payment_id },
    });
    // The authorization succeeded, then was released: approved, hold voided (a sale's lookup would say rejected).
    expect(await connector.lookup(lookupOf(auth))).toMatchObject({
      kind: 'found',
      result: { kind: 'approved' },
      payment: { hold: 'voided', captured_minor: 0 },
    });
    expect(await connector.authorizations!.capture(captureOf(auth, 1500))).toMatchObject({ kind: 'refused', error_code: '403' });
  });

  it('refuses what Checkout.com refuses: more than authorized (422), an unknown payment (404); nothing happens', async () => {
    const auth = await authorized(800);
    const over = await connector.authorizations!.capture(captureOf(auth, 801));
    expect(over).toEqual({
      kind: 'refused',
      error_code: '422',
      error_details: 'Capture refused by the processor (HTTP 422: request_invalid, capture_amount_exceeds_balance)',
    });
    expect(fake.payment(auth.payment_id)).toMatchObject({ status: 'Authorized', captured_amount: 0 });
    const unknown = { ...auth, payment_id: 'pay_aaaaaaaaaaaaaaaaaaaaaaaaaa' };
    expect(await connector.authorizations!.void(voidOf(unknown))).toMatchObject({
      kind: 'refused',
      error_code: '404',
      error_details: expect.stringContaining('no such payment'),
    });
  });

  it('a declined capture: accepted, then payment_capture_declined, which reports nothing; the hold stays open', async () => {
    const auth = await authorized(900);
    fake.declineNext('capture');
    expect(await connector.authorizations!.capture(captureOf(auth, 900))).toMatchObject({ kind: 'accepted' });
    const event = await readDelivered((e) => e.payment_id === auth.payment_id && e.type === 'payment_capture_declined');
    expect(event.result).toBeNull();
    expect(event.payment_event).toBeUndefined();
    expect(await connector.lookup(lookupOf(auth))).toMatchObject({ payment: { hold: 'open', captured_minor: 0 } });

    fake.declineNext('void');
    expect(await connector.authorizations!.void(voidOf(auth))).toMatchObject({ kind: 'accepted' });
    const void_declined = await readDelivered((e) => e.payment_id === auth.payment_id && e.type === 'payment_void_declined');
    expect(void_declined.result).toBeNull();
    expect(void_declined.payment_event).toBeUndefined();
    expect(fake.payment(auth.payment_id)?.status).toBe('Authorized');
  });

  it('an unknown outcome is unknown, never guessed: a capture never answered, a 5xx twice, an unreadable answer; asking again with the key is safe', async () => {
    const auth = await authorized(1200);
    fake.hangNextCapture();
    const hung = await connector.authorizations!.capture(captureOf(auth, 1200));
    expect(hung).toMatchObject({ kind: 'unknown', reason: expect.any(String) });
    // Checkout.com captured it: a lookup says so, and the same key answers the capture that was made.
    expect(await connector.lookup(lookupOf(auth))).toMatchObject({ payment: { hold: 'captured', captured_minor: 1200 } });
    expect(await connector.authorizations!.capture(captureOf(auth, 1200))).toMatchObject({ kind: 'accepted' });
    expect(fake.payment(auth.payment_id)!.actions.filter((a) => a.type === 'Capture')).toHaveLength(1);

    const second = await authorized(1300);
    fake.failNext('POST /payments/{id}/captures', 'http_503');
    fake.failNext('POST /payments/{id}/captures', 'http_503');
    expect(await connector.authorizations!.capture(captureOf(second, 1300))).toMatchObject({ kind: 'unknown' });
    fake.failNext('POST /payments/{id}/voids', 'garbage');
    expect(await connector.authorizations!.void(voidOf(second))).toMatchObject({
      kind: 'unknown',
      reason: expect.stringContaining('does not parse'),
    });
    expect(fake.payment(second.payment_id)?.status).toBe('Voided');

    // A 503 once is retried with the same key: one capture, answered.
    const third = await authorized(1400);
    fake.failNext('POST /payments/{id}/captures', 'http_503');
    expect(await connector.authorizations!.capture(captureOf(third, 1400))).toMatchObject({ kind: 'accepted' });
  });

  it('a capture that never reaches Checkout.com is refused as unreachable: nothing was captured', async () => {
    const auth = await authorized(500);
    const unreachable = connectorAt('http://127.0.0.1:1');
    expect(await unreachable.authorizations!.capture(captureOf(auth, 500))).toEqual({
      kind: 'refused',
      error_code: 'unreachable',
      error_details: expect.stringMatching(/^Processor unreachable \(.+\); nothing was captured$/),
    });
    expect(fake.payment(auth.payment_id)?.status).toBe('Authorized');
  });

  it('3-D Secure on an authorization: the processor page, then Authorized; a lookup finds it open', async () => {
    const request = authorization({}, '4010061700000021');
    const result = await connector.sale(request);
    expect(result).toMatchObject({ kind: 'redirect', redirect_url: expect.stringContaining('/3ds/sid_') });
    const page = (result as { redirect_url: string }).redirect_url;
    const submitted = await fetch(page, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ password: 'Checkout1!' }).toString(),
      redirect: 'manual',
    });
    expect(submitted.status).toBe(303);
    const auth = { request, payment_id: result.psp_transaction_id! };
    expect(fake.payment(auth.payment_id)).toMatchObject({ status: 'Authorized', three_ds: 'authenticated', captured_amount: 0 });
    expect(await connector.lookup(lookupOf(auth))).toMatchObject({ result: { kind: 'approved' }, payment: { hold: 'open' } });
  });
});

describe('refunds made outside the gateway (reversals)', () => {
  it("a dashboard refund is `refunded` with Checkout.com's action id and no trace_id of ours; ours keeps its match and result", async () => {
    const sale = authorization({ capture: true, amount_minor: 3000 });
    const paid = await connector.sale(sale);
    expect(paid).toMatchObject({ kind: 'approved' });
    const payment_id = paid.psp_transaction_id!;
    expect(fake.payment(payment_id)?.status).toBe('Captured');

    const our_refund = {
      trace_id: sale.trace_id + 100_000,
      reference: `R-${sale.reference}`,
      sale_psp_transaction_id: payment_id,
      sale_trace_id: sale.trace_id,
      amount_minor: 1000,
      currency: 'EUR',
    };
    const pending = await connector.refund(our_refund);
    expect(pending).toMatchObject({ kind: 'pending', psp_transaction_id: expect.stringMatching(/^act_/) });
    const ours = await readDelivered(
      (e) => e.payment_id === payment_id && e.type === 'payment_refunded' && e.action_id === pending.psp_transaction_id,
    );
    expect(ours).toMatchObject({
      result: { kind: 'approved', psp_transaction_id: pending.psp_transaction_id, charge_amount_minor: 1000 },
      match: {
        trace_id: null,
        psp_transaction_id: pending.psp_transaction_id,
        transaction_type: 'refund',
        reference: our_refund.reference,
      },
      payment_event: {
        kind: 'refunded',
        psp_payment_id: payment_id,
        psp_refund_id: pending.psp_transaction_id,
        amount_minor: 1000,
        currency: 'EUR',
      },
    });

    const dashboard = await fake.refundFromDashboard(payment_id, 500);
    expect(dashboard).toMatchObject({ type: 'Refund', amount: 500, reference: null, metadata: null });
    const theirs = await readDelivered((e) => e.payment_id === payment_id && e.type === 'payment_refunded' && e.action_id === dashboard.id);
    expect(theirs.payment_event).toEqual({
      kind: 'refunded',
      psp_payment_id: payment_id,
      psp_refund_id: dashboard.id,
      amount_minor: 500,
      currency: 'EUR',
    });
    // Nothing in it names one of our refunds: the gateway finds none, and it is a reversal.
    expect(theirs.match).toEqual({ trace_id: null, psp_transaction_id: dashboard.id, transaction_type: 'refund', reference: null });

    // A lookup of the sale lists both refunds Checkout.com holds, ours by its trace_id.
    const found = await connector.lookup(lookupOf({ request: sale, payment_id }, 'sale'));
    expect(found).toMatchObject({ kind: 'found', result: { kind: 'approved' } });
    const state = (found as { payment?: { hold: unknown; refunds: unknown[] } }).payment;
    expect(state?.hold).toBeNull();
    expect(state?.refunds).toEqual(
      expect.arrayContaining([
        { psp_refund_id: pending.psp_transaction_id, amount_minor: 1000, trace_id: our_refund.trace_id },
        { psp_refund_id: dashboard.id, amount_minor: 500, trace_id: null },
      ]),
    );
    expect(state?.refunds).toHaveLength(2);
  });

  it('a dashboard refund of the whole of a partly captured authorization', async () => {
    const auth = await authorized(1000);
    await connector.authorizations!.capture(captureOf(auth, 700));
    const dashboard = await fake.refundFromDashboard(auth.payment_id);
    expect(dashboard.amount).toBe(700);
    expect(fake.payment(auth.payment_id)).toMatchObject({ status: 'Refunded', refunded_amount: 700 });
    expect(await connector.lookup(lookupOf(auth))).toMatchObject({
      result: { kind: 'approved' },
      payment: { hold: 'captured', captured_minor: 700, refunds: [{ psp_refund_id: dashboard.id, amount_minor: 700, trace_id: null }] },
    });
  });
});

describe('disputes', () => {
  async function capturedSale(amount_minor: number): Promise<string> {
    const paid = await connector.sale(authorization({ capture: true, amount_minor }));
    expect(paid).toMatchObject({ kind: 'approved' });
    return paid.psp_transaction_id!;
  }

  it('a dispute opened then won: each event a dispute payment event matched by the payment id, with no result', async () => {
    const payment_id = await capturedSale(4000);
    const due_ms = Date.now() + 5 * 24 * 3600 * 1000;
    const dispute = await fake.openDispute(payment_id, {
      amount: 2500,
      category: 'product_service_not_received',
      reason_code: '13.1',
      evidence_due_in_ms: due_ms - Date.now(),
    });
    expect(dispute.id).toMatch(/^dsp_[a-z2-7]{22}$/);
    expect(dispute.events).toEqual(['dispute_received', 'dispute_evidence_required']);

    const received = await readDelivered((e) => e.action_id === dispute.id && e.type === 'dispute_received');
    expect(received).toMatchObject({
      event_type: 'dispute_received',
      result: null,
      match: { trace_id: null, psp_transaction_id: payment_id, transaction_type: null, reference: null },
      payment_event: {
        kind: 'dispute',
        psp_payment_id: payment_id,
        dispute: {
          psp_dispute_id: dispute.id,
          stage: 'opened',
          amount_minor: 2500,
          currency: 'EUR',
          reason: 'product_service_not_received (13.1)',
          evidence_due_at_ms: Date.parse(dispute.evidence_required_by),
        },
      },
    });
    expect(Math.abs(Date.parse(dispute.evidence_required_by) - due_ms)).toBeLessThan(5000);
    const evidence = await readDelivered((e) => e.action_id === dispute.id && e.type === 'dispute_evidence_required');
    expect(evidence.payment_event).toMatchObject({ kind: 'dispute', dispute: { stage: 'evidence_required', psp_dispute_id: dispute.id } });

    await fake.moveDispute(dispute.id, 'evidence_submitted');
    const submitted = await readDelivered((e) => e.action_id === dispute.id && e.type === 'dispute_evidence_submitted');
    expect(submitted.payment_event).toMatchObject({ dispute: { stage: 'under_review', evidence_due_at_ms: null } });

    expect(await fake.moveDispute(dispute.id, 'won')).toMatchObject({ status: 'won' });
    const won = await readDelivered((e) => e.action_id === dispute.id && e.type === 'dispute_won');
    expect(won).toMatchObject({
      result: null,
      payment_event: {
        kind: 'dispute',
        psp_payment_id: payment_id,
        dispute: { psp_dispute_id: dispute.id, stage: 'won', amount_minor: 2500 },
      },
    });
    await expect(fake.moveDispute(dispute.id, 'lost')).rejects.toThrow(/won already/);
    // The payment itself is as it was at Checkout.com.
    expect(fake.payment(payment_id)).toMatchObject({
      status: 'Captured',
      disputes: [expect.objectContaining({ id: dispute.id, status: 'won' })],
    });
  });

  it('every dispute event type maps to its stage: lost, accepted, canceled, expired, arbitration', async () => {
    const stages: Record<string, string> = {};
    for (const to of ['lost', 'accepted', 'canceled', 'expired'] as const) {
      const dispute = await fake.openDispute(await capturedSale(1000), { evidence_required: false });
      await fake.moveDispute(dispute.id, to);
      const event = await readDelivered((e) => e.action_id === dispute.id && e.type === `dispute_${to}`);
      stages[event.event_type] = (event.payment_event as { dispute: { stage: string } }).dispute.stage;
      if (to === 'lost') {
        await fake.moveDispute(dispute.id, 'arbitration_won');
        const arbitration = await readDelivered((e) => e.action_id === dispute.id && e.type === 'dispute_arbitration_won');
        stages[arbitration.event_type] = (arbitration.payment_event as { dispute: { stage: string } }).dispute.stage;
      }
    }
    expect(stages).toEqual({
      dispute_lost: 'lost',
      dispute_arbitration_won: 'won',
      dispute_accepted: 'accepted',
      dispute_canceled: 'canceled',
      dispute_expired: 'lost',
    });
  });

  it('keeps the signature check: a dispute event altered after signing is refused, one without its ids is ignored', async () => {
    const dispute = await fake.openDispute(await capturedSale(1000), { evidence_required: false });
    const event = await fake.waitForEvent((e) => e.action_id === dispute.id && e.type === 'dispute_received');
    const arrived = receiver.requestsTo(WEBHOOK_PATH).find((r) => (r.json as { id?: string } | null)?.id === event.id)!;
    const altered = arrived.body.replace(`"amount":1000`, `"amount":1`);
    expect(altered).not.toBe(arrived.body);
    expect(connector.readWebhook!(Buffer.from(altered), arrived.headers)).toEqual({ kind: 'bad_signature' });

    const { checkoutSignature } = await import('../support/checkout/fake.js');
    const without_payment = JSON.stringify({ id: 'evt_x', type: 'dispute_received', data: { id: 'dsp_x', amount: 10 } });
    expect(
      connector.readWebhook!(Buffer.from(without_payment), { 'cko-signature': checkoutSignature(without_payment, WEBHOOK_SECRET) }),
    ).toMatchObject({ kind: 'ignored' });
  });
});
