// The official `stripe` package (what the connector uses) against the fake Stripe, configured as
// the connector configures it: new Stripe(secret_key, { host, port, protocol: 'http',
// maxNetworkRetries: 0, timeout }). Proves that the fake speaks the package's protocol (form
// encoding, headers, error classes, search, lists) and records what the package really does that
// the connector must know: its pinned API version, the Idempotency-Key it adds to every POST, its
// one automatic retry of a connection closed even with maxNetworkRetries 0, how declines, time-outs,
// 5xx and unparseable answers surface; and that webhooks signed by the fake verify with
// stripe.webhooks.constructEvent, whose test signer agrees with ours.
import { randomUUID } from 'node:crypto';
import Stripe from 'stripe';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startMerchantReceiver, type MerchantReceiver, type ReceivedRequest } from '../merchant-receiver.js';
import { startFakeStripe, stripeSignatureHeader, type FakeStripe } from './fake.js';

const WEBHOOK_PATH = '/webhooks/stripe';
const WEBHOOK_SECRET = 'whsec_sdk_0aB1cD2eF3gH4iJ5kL6mN7oP8qR9sT';
const TIMEOUT_MS = 1500;

let fake: FakeStripe;
let receiver: MerchantReceiver;
let stripe: Stripe;

/** Raw card details as the connector sends them. */
function cardData(number: string, cvc: string | undefined = '123'): Stripe.PaymentIntentCreateParams.PaymentMethodData {
  return {
    type: 'card',
    // @ts-expect-error stripe 23's types leave raw card details out of payment_method_data, as Stripe's published description does; the API takes them (SOURCE.md).
    card: { number, exp_month: 12, exp_year: 2030, ...(cvc === undefined ? {} : { cvc }) },
  };
}

function saleParams(number: string, extra: Partial<Stripe.PaymentIntentCreateParams> = {}): Stripe.PaymentIntentCreateParams {
  return {
    amount: 1000,
    currency: 'usd',
    confirm: true,
    // stripe 23 (API 2026-09-30.endive and later) has allowed_payment_method_types instead of payment_method_types.
    allowed_payment_method_types: ['card'],
    payment_method_data: cardData(number),
    metadata: { paygate_trace_id: String(Math.floor(Math.random() * 1e12)) },
    ...extra,
  };
}

async function caught(promise: Promise<unknown>): Promise<any> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
}

function webhookFor(event_id: string): Promise<ReceivedRequest> {
  return receiver.waitForRequest((r) => r.path === WEBHOOK_PATH && (r.json as { id?: string } | null)?.id === event_id);
}

beforeAll(async () => {
  receiver = await startMerchantReceiver();
  fake = await startFakeStripe({ webhook_retry_delay_ms: 5, refund_settle_ms: 10 });
  fake.setWebhookEndpoint(`${receiver.url}${WEBHOOK_PATH}`, WEBHOOK_SECRET);
  stripe = new Stripe(fake.secret_key, { host: fake.host, port: fake.port, protocol: 'http', maxNetworkRetries: 0, timeout: TIMEOUT_MS });
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

describe('payment intents through the stripe package', () => {
  it("creates and confirms a sale, retrieves it, and sends the package's pinned API version and its own Idempotency-Key", async () => {
    const params = saleParams('4242424242424242');
    const intent = await stripe.paymentIntents.create(params);
    expect(intent).toMatchObject({
      object: 'payment_intent',
      status: 'succeeded',
      amount: 1000,
      currency: 'usd',
      metadata: params.metadata,
    });
    expect(typeof intent.latest_charge).toBe('string');
    expect(intent.lastResponse.statusCode).toBe(200);
    expect(intent.lastResponse.requestId).toMatch(/^req_/);
    const sent = fake.requestsTo('POST /v1/payment_intents').at(-1);
    expect(sent?.stripe_version).toBe(Stripe.API_VERSION);
    expect(Stripe.API_VERSION).toBe('2026-10-28.endive');
    // stripe 23 keys every POST itself, even with maxNetworkRetries 0.
    expect(sent?.idempotency_key).toMatch(/^stripe-node-retry-[0-9a-f-]{36}$/);
    expect(sent?.form).toMatchObject({
      amount: 1000,
      confirm: true,
      allowed_payment_method_types: ['card'],
      payment_method_data: { type: 'card', card: { number: '4242424242424242', exp_month: 12, exp_year: 2030, cvc: '123' } },
    });
    // Brackets go unescaped, lists indexed.
    expect(sent?.body).toContain(
      'allowed_payment_method_types[0]=card&payment_method_data[type]=card&payment_method_data[card][number]=4242424242424242',
    );
    const got = await stripe.paymentIntents.retrieve(intent.id);
    expect(got).toMatchObject({ id: intent.id, status: 'succeeded', latest_charge: intent.latest_charge });
  });

  it("replays the first answer for the connector's own idempotency key; other parameters under it are a StripeIdempotencyError", async () => {
    const key = `paygate-gw1-${randomUUID()}-sale`;
    const params = saleParams('4242424242424242');
    const first = await stripe.paymentIntents.create(params, { idempotencyKey: key });
    const second = await stripe.paymentIntents.create(params, { idempotencyKey: key });
    expect(second.id).toBe(first.id);
    expect(second.lastResponse.headers['idempotent-replayed']).toBe('true');
    expect(fake.paymentIntent(first.id)?.idempotency_keys).toEqual([key]);
    const error = await caught(stripe.paymentIntents.create({ ...params, amount: 2000 }, { idempotencyKey: key }));
    expect(error).toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
    expect(error).toMatchObject({ statusCode: 400, rawType: 'idempotency_error' });
  });

  it('surfaces a decline as StripeCardError (402) with code, decline_code, and the PaymentIntent back to requires_payment_method', async () => {
    const error = await caught(stripe.paymentIntents.create(saleParams('4000000000009995')));
    expect(error).toBeInstanceOf(Stripe.errors.StripeCardError);
    expect(error).toMatchObject({
      statusCode: 402,
      code: 'card_declined',
      decline_code: 'insufficient_funds',
      message: 'Your card has insufficient funds.',
      rawType: 'card_error',
    });
    expect(error.payment_intent).toMatchObject({
      status: 'requires_payment_method',
      last_payment_error: { code: 'card_declined', decline_code: 'insufficient_funds' },
    });
    expect(error.requestId).toMatch(/^req_/);
    const stolen = await caught(stripe.paymentIntents.create(saleParams('4000000000009979')));
    expect(stolen).toMatchObject({ code: 'card_declined', decline_code: 'stolen_card' });
    const cvc = await caught(stripe.paymentIntents.create(saleParams('4000000000000127')));
    expect(cvc).toMatchObject({ code: 'incorrect_cvc', param: 'cvc', decline_code: '' });
    const off = await caught(stripe.paymentIntents.create(saleParams('4000000000003220', { off_session: true })));
    expect(off).toMatchObject({ statusCode: 402, code: 'authentication_required', decline_code: 'authentication_required' });
  });

  it('asks for 3-D Secure with next_action.redirect_to_url; after the page, retrieve shows succeeded', async () => {
    const return_url = `${receiver.url}/return`;
    const intent = await stripe.paymentIntents.create(saleParams('4000000000003220', { return_url }));
    expect(intent.status).toBe('requires_action');
    expect(intent.next_action?.type).toBe('redirect_to_url');
    expect(intent.next_action?.redirect_to_url?.return_url).toBe(return_url);
    const page = intent.next_action?.redirect_to_url?.url ?? '';
    expect(page.startsWith(`${fake.url}/3d_secure_2_test/${intent.id}/`)).toBe(true);
    const location = await fake.authenticate(intent.id, 'complete');
    expect(location).toBe(
      `${return_url}?payment_intent=${intent.id}&payment_intent_client_secret=${encodeURIComponent(intent.client_secret ?? '')}&redirect_status=succeeded`,
    );
    expect((await stripe.paymentIntents.retrieve(intent.id)).status).toBe('succeeded');
  });

  it('searches by metadata and answers a search_result the package reads', async () => {
    const params = saleParams('4242424242424242');
    const trace = String(params.metadata?.paygate_trace_id ?? '');
    const intent = await stripe.paymentIntents.create(params);
    const found = await stripe.paymentIntents.search({ query: `metadata['paygate_trace_id']:'${trace}'`, limit: 10 });
    expect(found.object).toBe('search_result');
    expect(found.data.map((p) => p.id)).toEqual([intent.id]);
    expect(found.has_more).toBe(false);
    expect(found.next_page).toBeNull();
    const counted = await stripe.paymentIntents.search({ query: `metadata['paygate_trace_id']:'${trace}'`, expand: ['total_count'] });
    expect(counted.total_count).toBe(1);
    const query = fake.requestsTo('GET /v1/payment_intents/search').at(-1)?.query;
    expect(query).toEqual({ query: `metadata['paygate_trace_id']:'${trace}'`, expand: ['total_count'] });
  });

  it('expands latest_charge and payment_method on request (ids otherwise), and refuses what cannot be expanded', async () => {
    const intent = await stripe.paymentIntents.create({ ...saleParams('4242424242424242'), expand: ['payment_method'] });
    expect(intent.payment_method).toMatchObject({
      object: 'payment_method',
      card: { brand: 'visa', last4: '4242', exp_month: 12, exp_year: 2030 },
    });
    const got = await stripe.paymentIntents.retrieve(intent.id, { expand: ['latest_charge'] });
    expect(got.latest_charge).toMatchObject({
      object: 'charge',
      status: 'succeeded',
      outcome: { network_status: 'approved_by_network', type: 'authorized' },
      payment_method_details: { card: { last4: '4242' } },
    });
    const trace = String(intent.metadata.paygate_trace_id);
    const found = await stripe.paymentIntents.search({ query: `metadata['paygate_trace_id']:'${trace}'`, expand: ['data.latest_charge'] });
    expect(found.data[0]?.latest_charge).toMatchObject({ object: 'charge' });
    const refund = await stripe.refunds.create({ payment_intent: intent.id, amount: 100, expand: ['charge'] });
    expect(refund.charge).toMatchObject({ object: 'charge', amount_refunded: 100 });
    const refused = await caught(stripe.paymentIntents.retrieve(intent.id, { expand: ['customer'] }));
    expect(refused).toMatchObject({ statusCode: 400, param: 'expand' });
  });

  it('answers an unknown PaymentIntent with StripeInvalidRequestError resource_missing (404), a wrong key with StripeAuthenticationError', async () => {
    const missing = await caught(stripe.paymentIntents.retrieve('pi_doesnotexist'));
    expect(missing).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(missing).toMatchObject({ statusCode: 404, code: 'resource_missing' });
    const other = new Stripe('sk_test_wrongwrongwrongwrong', {
      host: fake.host,
      port: fake.port,
      protocol: 'http',
      maxNetworkRetries: 0,
      timeout: TIMEOUT_MS,
    });
    const denied = await caught(other.paymentIntents.retrieve('pi_x'));
    expect(denied).toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
    expect(denied.statusCode).toBe(401);
  });
});

describe('refunds through the stripe package', () => {
  it('creates partial and full refunds, lists them by PaymentIntent, retrieves one, and refuses more than remains', async () => {
    const intent = await stripe.paymentIntents.create(saleParams('4242424242424242'));
    const part = await stripe.refunds.create(
      { payment_intent: intent.id, amount: 300, metadata: { paygate_trace_id: '77' } },
      { idempotencyKey: `paygate-gw1-77-refund-${randomUUID()}` },
    );
    expect(part).toMatchObject({
      object: 'refund',
      amount: 300,
      status: 'succeeded',
      payment_intent: intent.id,
      metadata: { paygate_trace_id: '77' },
    });
    const too_much = await caught(stripe.refunds.create({ payment_intent: intent.id, amount: 800 }));
    expect(too_much).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(too_much).toMatchObject({
      statusCode: 400,
      param: 'amount',
      message: 'Refund amount ($8.00) is greater than unrefunded amount on charge ($7.00)',
    });
    const rest = await stripe.refunds.create({ payment_intent: intent.id });
    expect(rest.amount).toBe(700);
    const again = await caught(stripe.refunds.create({ payment_intent: intent.id }));
    expect(again).toMatchObject({ statusCode: 400, code: 'charge_already_refunded' });
    const list = await stripe.refunds.list({ payment_intent: intent.id, limit: 100 });
    expect(list.object).toBe('list');
    expect(list.data.map((r) => r.id)).toEqual([rest.id, part.id]);
    expect((await stripe.refunds.retrieve(part.id)).status).toBe('succeeded');
  });

  it('shows an asynchronous refund pending, then succeeded', async () => {
    const intent = await stripe.paymentIntents.create(saleParams('4000000000007726'));
    const refund = await stripe.refunds.create({ payment_intent: intent.id });
    expect(refund.status).toBe('pending');
    await fake.waitForEvent((e) => e.refund_id === refund.id && e.type === 'refund.updated');
    expect((await stripe.refunds.retrieve(refund.id)).status).toBe('succeeded');
  });
});

describe('webhooks and stripe.webhooks', () => {
  it('verifies every event the fake sends with stripe.webhooks.constructEvent (raw body, Stripe-Signature, whsec secret)', async () => {
    const intent = await stripe.paymentIntents.create(saleParams('4242424242424242'));
    const event = await fake.waitForEvent((e) => e.payment_intent_id === intent.id && e.type === 'payment_intent.succeeded');
    const received = await webhookFor(event.id);
    const verified = stripe.webhooks.constructEvent(received.body, String(received.headers['stripe-signature']), WEBHOOK_SECRET);
    expect(verified).toMatchObject({ id: event.id, type: 'payment_intent.succeeded', object: 'event', livemode: false });
    expect((verified.data.object as Stripe.PaymentIntent).id).toBe(intent.id);
    for (const other of fake.events.filter((e) => e.payment_intent_id === intent.id)) {
      const body = (await webhookFor(other.id)).body;
      expect(() => stripe.webhooks.constructEvent(body, other.signature ?? '', WEBHOOK_SECRET)).not.toThrow();
    }
  });

  it('refuses a body changed after signing, another secret, and a signature older than the tolerance', async () => {
    const intent = await stripe.paymentIntents.create(saleParams('4242424242424242'));
    const event = await fake.waitForEvent((e) => e.payment_intent_id === intent.id && e.type === 'charge.succeeded');
    const received = await webhookFor(event.id);
    const header = String(received.headers['stripe-signature']);
    expect(() => stripe.webhooks.constructEvent(received.body.replace('"succeeded"', '"failed"'), header, WEBHOOK_SECRET)).toThrow(
      Stripe.errors.StripeSignatureVerificationError,
    );
    expect(() => stripe.webhooks.constructEvent(received.body, header, 'whsec_other')).toThrow(
      Stripe.errors.StripeSignatureVerificationError,
    );
    // A re-serialised body (not the raw bytes) does not verify: Stripe sends pretty-printed JSON.
    expect(() => stripe.webhooks.constructEvent(JSON.stringify(JSON.parse(received.body)), header, WEBHOOK_SECRET)).toThrow(
      Stripe.errors.StripeSignatureVerificationError,
    );
    const old = stripeSignatureHeader(received.body, WEBHOOK_SECRET, Math.floor(Date.now() / 1000) - 3600);
    expect(await fake.sendRaw(received.body, old)).toBe(200);
    expect(() => stripe.webhooks.constructEvent(received.body, old, WEBHOOK_SECRET)).toThrow(/Timestamp outside the tolerance zone/);
  });

  it('signs exactly as stripe.webhooks.generateTestHeaderString does', () => {
    const payload = JSON.stringify({ id: 'evt_test', object: 'event' }, null, 2);
    for (const timestamp of [1_700_000_000, Math.floor(Date.now() / 1000)]) {
      expect(stripeSignatureHeader(payload, WEBHOOK_SECRET, timestamp)).toBe(
        stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET, timestamp }),
      );
    }
  });
});

describe('failures as the stripe package sees them', () => {
  it('retries a connection closed after processing once by itself, with the same key: the replay is the answer', async () => {
    fake.failNext('POST /v1/payment_intents', 'reset_after_processing');
    const params = saleParams('4242424242424242');
    const intent = await stripe.paymentIntents.create(params, { idempotencyKey: `paygate-gw1-${randomUUID()}-sale` });
    expect(intent.status).toBe('succeeded');
    const sent = fake.requestsTo('POST /v1/payment_intents').slice(-2);
    expect(sent.map((r) => [r.failure, r.idempotency])).toEqual([
      ['reset_after_processing', 'new'],
      [null, 'replayed'],
    ]);
    expect(sent[0]?.idempotency_key).toBe(sent[1]?.idempotency_key);
    expect(fake.intentsWithMetadata('paygate_trace_id', String(params.metadata?.paygate_trace_id ?? ''))).toHaveLength(1);
  });

  it('retries a connection closed before processing once by itself: processed once', async () => {
    fake.failNext('POST /v1/refunds', 'reset_before_processing');
    const intent = await stripe.paymentIntents.create(saleParams('4242424242424242'));
    const refund = await stripe.refunds.create({ payment_intent: intent.id, amount: 100 });
    expect(refund.status).toBe('succeeded');
    expect(fake.paymentIntent(intent.id)?.refunds).toHaveLength(1);
  });

  it('gives up after its timeout with StripeConnectionError although the PaymentIntent was made', async () => {
    fake.failNext('POST /v1/payment_intents', 'timeout');
    const params = saleParams('4242424242424242');
    const started = Date.now();
    const error = await caught(stripe.paymentIntents.create(params));
    expect(error).toBeInstanceOf(Stripe.errors.StripeConnectionError);
    expect(Date.now() - started).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(fake.intentsWithMetadata('paygate_trace_id', String(params.metadata?.paygate_trace_id ?? ''))).toHaveLength(1);
  });

  it('does not retry a 500 with maxNetworkRetries 0 (StripeAPIError), and reports an answer that does not parse', async () => {
    fake.failNext('POST /v1/payment_intents', 'http_500');
    const failed = await caught(stripe.paymentIntents.create(saleParams('4242424242424242')));
    expect(failed).toBeInstanceOf(Stripe.errors.StripeAPIError);
    expect(failed.statusCode).toBe(500);
    fake.failNext('GET /v1/payment_intents/{intent}', 'garbage');
    const intent = await stripe.paymentIntents.create(saleParams('4242424242424242'));
    const garbage = await caught(stripe.paymentIntents.retrieve(intent.id));
    expect(garbage).toBeInstanceOf(Stripe.errors.StripeAPIError);
    expect(garbage.message).toBe('Invalid JSON received from the Stripe API');
  });

  it('webhook_first: the events reach the receiver before the package resolves', async () => {
    fake.failNext('POST /v1/payment_intents', 'webhook_first');
    const intent = await stripe.paymentIntents.create(saleParams('4242424242424242'));
    const resolved_ms = Date.now();
    const delivered = receiver.requests.filter((r) => r.path === WEBHOOK_PATH && (r.json as any)?.data?.object?.id === intent.id);
    expect(delivered.length).toBeGreaterThanOrEqual(2);
    for (const request of delivered) expect(request.at_ms).toBeLessThanOrEqual(resolved_ms);
  });
});
