// The cascade between two real processors (issue 17, decisions.md §13), live, on both stores: a
// merchant whose rules try Checkout.com (the fake) first and Stripe (the fake) next. A soft
// decline at Checkout.com is tried at Stripe and approved there: the merchant is answered and
// notified once with cascade_level 1, Checkout.com holds the declined payment and Stripe the
// approved PaymentIntent, and a replay answers the final attempt. A hard decline is never
// cascaded, nor an outcome the gateway does not know (a time-out): the card may have been
// charged, so asking another processor could charge it twice. A cashier order cascades the same
// way, and find-order answers its approved attempt. In the sandbox, the sandbox's soft decline is
// tried at Stripe.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { saleA } from '../support/bodies.js';
import { CashierCustomer, findOrderBody, gatewayNow, initCheckout, openSession } from '../support/cashier.js';
import { postSigned } from '../support/client.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { type MerchantReceiver, startMerchantReceiver } from '../support/merchant-receiver.js';
import { type LiveCheckout, startLiveCheckout } from '../support/live-checkout.js';
import { liveSale, operatorCall } from '../support/live-gateway.js';
import { STRIPE_WEBHOOK_SECRET } from '../support/live-stripe.js';
import { merchantVerify, notificationOf, signedReply, sleep, waitUntil } from '../support/notification-merchant.js';
import { type FakeStripe, startFakeStripe } from '../support/stripe/fake.js';
import { storeKinds } from '../support/stores.js';

/** Approved by both fakes unless the amount says otherwise (Checkout.com declines amounts ending in 05). */
const CARD = '4242424242424242';
/** Checkout.com's stolen card (30043, a hard decline). */
const STOLEN_AT_CHECKOUT = '4539253655711767';

describe.each(storeKinds())('cascade from Checkout.com to Stripe on %s', (kind) => {
  let live: LiveCheckout;
  let stripe: FakeStripe;
  let stripe_gateway: string;
  beforeAll(async () => {
    stripe = await startFakeStripe();
    live = await startLiveCheckout(kind, { env: { PAYGATE_PROCESSOR_TIMEOUT_MS: '2000', PAYGATE_STUCK_PROCESSING_SECONDS: '3' } });
    const created = await operatorCall(live.gw, 'POST', '/operator/gateways', {
      merchant_id: live.merchant.merchant_id,
      connector: 'stripe',
      currencies: ['USD', 'EUR'],
      settings: { secret_key: stripe.secret_key, webhook_secret: STRIPE_WEBHOOK_SECRET, base_url: stripe.url },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    stripe_gateway = created.body.gateway as string;
    stripe.setWebhookEndpoint(created.body.webhook_url as string, STRIPE_WEBHOOK_SECRET);
    for (const [gateway, priority] of [
      [live.gateway, 1],
      [stripe_gateway, 2],
    ] as const) {
      expect(
        (await operatorCall(live.gw, 'POST', `/operator/merchants/${live.merchant.merchant_id}/routing-rules`, { gateway, priority }))
          .status,
      ).toBe(201);
    }
  });
  afterAll(async () => {
    await live?.close();
    await stripe?.close();
  });
  afterEach(async () => {
    live.fake.holdEvents(false);
    await live.fake.releaseHeldEvents();
    expect(live.fake.violations).toEqual([]);
    expect(stripe.violations).toEqual([]);
  });

  // No gateway named: the merchant's routing rules choose.
  const sale = (overrides: Record<string, unknown>) => liveSale(live, saleA(live.merchant, { card_number: CARD, ...overrides }));

  it('a soft decline at Checkout.com is approved at Stripe: cascade_level 1, notified once, one payment at each processor', async () => {
    const body = sale({ amount: 1005 });
    const answer = await live.process(body);
    expect(answer.body).toMatchObject({
      status: 0,
      transaction_status: 'approved',
      payment_processor: 'stripe',
      is_cascade: 1,
      cascade_level: 1,
      transaction_id: expect.stringMatching(/^pi_/),
      card_token: expect.any(String),
    });
    const trace_id = answer.body.trace_id as number;
    const final = await live.row(trace_id);
    expect(final).toMatchObject({ gateway_id: stripe_gateway, cascade_level: 1, cascade_root: expect.any(Number) });
    // The first attempt: its own trace_id, declined by Checkout.com, kept, never notified.
    const first = await live.row(final.cascade_root!);
    expect(first).toMatchObject({
      order_id: body.order_id,
      gateway_id: live.gateway,
      status: 'rejected',
      error_code: '20005',
      cascade_level: 0,
    });
    const notification = await live.settled(trace_id, 'approved');
    expect(notification).toMatchObject({
      is_cascade: 1,
      cascade_level: 1,
      gateway: stripe_gateway,
      order_id: body.order_id,
      transaction_id: answer.body.transaction_id,
    });
    await sleep(300);
    expect(live.notifications(first.trace_id)).toEqual([]);
    expect(live.notifications(trace_id)).toHaveLength(1);
    // At the processors: Checkout.com's declined payment under the order, Stripe's approved one under the final trace_id.
    expect(live.fake.paymentsWithReference(body.order_id as string)).toMatchObject([{ status: 'Declined' }]);
    expect(stripe.intentsWithMetadata('paygate_trace_id', String(trace_id))).toMatchObject([
      { id: answer.body.transaction_id, status: 'succeeded', amount: 1005 },
    ]);
    expect(
      stripe.requestsTo('POST /v1/payment_intents').filter((r) => r.idempotency_key === `paygate-${stripe_gateway}-${trace_id}-sale`),
    ).toHaveLength(1);
    // Checkout.com's decline webhook for the first attempt changes nothing.
    await live.fake.waitForEvent((e) => e.payment_id === first.psp_transaction_id && e.type === 'payment_declined');
    await sleep(200);
    expect(await live.row(first.trace_id)).toMatchObject({ status: 'rejected' });
    expect(live.notifications(first.trace_id)).toEqual([]);

    const replay = await live.process({ ...body, timestamp: (body.timestamp as number) + 1 });
    expect(replay.body).toMatchObject({ status: 0, trace_id, transaction_status: 'approved', is_cascade: 1, cascade_level: 1 });
    expect(stripe.intentsWithMetadata('paygate_trace_id', String(trace_id))).toHaveLength(1);
  });

  it('a cashier order cascades too: find-order answers the attempt Stripe approved, with is_cascade and cascade_level 1', async () => {
    live.receiver.setReply('/validate', () => signedReply(live.merchant.secret, 0, 'Accepted'));
    const body = initCheckout(live.merchant, live.receiver.url, { amount: 1005, timestamp: gatewayNow(live.gw) });
    const opened = await openSession(live.gw, '/api/init-checkout', body, live.merchant);
    expect(opened.body.status).toBe(0);
    const customer = new CashierCustomer(live.gw.url);
    await customer.login(opened.body.redirect_url as string);
    const form = await customer.get('/cashier?method=card');
    expect((await customer.payByCard(form.text, { card_number: CARD })).status).toBe(303);
    const found = await postSigned(
      live.gw.url,
      '/api/find-order',
      findOrderBody(live.merchant, body.order_id as string, { timestamp: gatewayNow(live.gw) }),
      live.merchant.secret,
    );
    expect(found.body).toMatchObject({
      status: 0,
      order_status: 'approved',
      transaction_status: 'approved',
      order_id: body.order_id,
      is_cascade: 1,
      cascade_level: 1,
      payment_processor: 'stripe',
      gateway: stripe_gateway,
      transaction_id: expect.stringMatching(/^pi_/),
    });
    expect(live.fake.paymentsWithReference(body.order_id as string)).toMatchObject([{ status: 'Declined' }]);
  });

  it('a hard decline (stolen card) is answered as it is: Stripe is never asked', async () => {
    const body = sale({ card_number: STOLEN_AT_CHECKOUT, amount: 2000 });
    const answer = await live.process(body);
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'rejected', error_code: '30043', payment_processor: 'checkout' });
    expect(answer.body.cascade_level).toBeUndefined();
    await live.settled(answer.body.trace_id as number, 'rejected');
    expect(stripe.requestsTo('POST /v1/payment_intents').filter((r) => r.form.amount === 2000)).toEqual([]);
  });

  it('an outcome the gateway does not know (Checkout.com times out) is never cascaded: pending, then approved where it was sent', async () => {
    // Its webhooks held back, so that only asking it later tells the outcome.
    live.fake.holdEvents(true);
    live.fake.failNext('POST /payments', 'timeout');
    const body = sale({ amount: 2100 });
    const answer = await live.process(body);
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'pending', payment_processor: 'checkout' });
    const trace_id = answer.body.trace_id as number;
    await live.settled(trace_id, 'approved');
    expect(live.fake.paymentsWithReference(body.order_id as string)).toHaveLength(1);
    expect(stripe.requestsTo('POST /v1/payment_intents').filter((r) => r.form.amount === 2100)).toEqual([]);
  });
});

describe.each(storeKinds())('cascade from the sandbox to Stripe on %s', (kind) => {
  let gw: TestGateway;
  let stripe: FakeStripe;
  let shop: MerchantReceiver;
  let stripe_gateway: string;
  beforeAll(async () => {
    stripe = await startFakeStripe();
    shop = await startMerchantReceiver();
    gw = await startTestGateway(kind, { env: { PAYGATE_PROCESSOR_TIMEOUT_MS: '5000' } });
    shop.setReply('/notify', signedReply(gw.merchant.secret));
    const created = await operatorCall(gw, 'POST', '/operator/gateways', {
      merchant_id: gw.merchant.merchant_id,
      connector: 'stripe',
      currencies: ['USD'],
      settings: { secret_key: stripe.secret_key, webhook_secret: STRIPE_WEBHOOK_SECRET, base_url: stripe.url },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    stripe_gateway = created.body.gateway as string;
    stripe.setWebhookEndpoint(created.body.webhook_url as string, STRIPE_WEBHOOK_SECRET);
    for (const [gateway, priority] of [
      [gw.merchant.gateway!, 1],
      [stripe_gateway, 2],
    ] as const) {
      expect(
        (await operatorCall(gw, 'POST', `/operator/merchants/${gw.merchant.merchant_id}/routing-rules`, { gateway, priority })).status,
      ).toBe(201);
    }
  });
  afterAll(async () => {
    await gw?.close();
    await shop?.close();
    await stripe?.close();
  });

  it("the sandbox's soft decline (do not honour) is approved at Stripe: cascade_level 1 in the answer and the notification", async () => {
    const body = saleA(gw.merchant, { card_number: CARD, cvv: '000', amount: 1500, notification_url: `${shop.url}/notify` });
    const answer = await postSigned(gw.url, '/api/process', body, gw.merchant.secret);
    expect(answer.body).toMatchObject({
      status: 0,
      transaction_status: 'approved',
      payment_processor: 'stripe',
      is_cascade: 1,
      cascade_level: 1,
    });
    const notified = await waitUntil(
      () =>
        shop
          .requestsTo('/notify', 'POST')
          .map(notificationOf)
          .find((n) => n.order_id === body.order_id),
      'the notification',
    );
    expect(notified).toMatchObject({
      trace_id: answer.body.trace_id,
      transaction_status: 'approved',
      is_cascade: 1,
      cascade_level: 1,
      gateway: stripe_gateway,
    });
    expect(merchantVerify(notified, gw.merchant.secret)).toBe(true);
    expect(stripe.intentsWithMetadata('paygate_trace_id', String(answer.body.trace_id))).toMatchObject([
      { status: 'succeeded', amount: 1500 },
    ]);
    expect(stripe.violations).toEqual([]);
  });
});
