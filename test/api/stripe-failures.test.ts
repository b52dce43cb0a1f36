// The ways Stripe fails (issue 17), each against the fake Stripe through the official package, on
// both stores: a time-out, HTTP 500 (once, and twice), a connection reset after the request was
// processed and one before, an answer that does not parse, the webhook arriving before the
// synchronous answer, duplicate and out-of-order webhooks. For each: what the merchant is
// answered, that Stripe holds at most one PaymentIntent for the transaction (every attempt carried
// the same idempotency key), and that the transaction reaches its final status (by a lookup, a
// webhook or the sweep) with exactly one notification of it.
import { describe, expect, it } from 'vitest';
import { refundC, saleA } from '../support/bodies.js';
import { FAILURE_ENV, type LiveStripe, liveSale, operatorCall, startLiveStripe, STRIPE_WEBHOOK_SECRET } from '../support/live-stripe.js';
import { withLiveGateway } from '../support/live-gateway.js';
import { waitUntil } from '../support/notification-merchant.js';
import { storeKinds } from '../support/stores.js';

const APPROVED = '4242424242424242';

describe.each(storeKinds())('Stripe failures on %s', (kind) => {
  let live: LiveStripe;
  withLiveGateway(
    () => startLiveStripe(kind, { env: FAILURE_ENV }),
    (started) => (live = started),
  );

  const sale = (overrides: Record<string, unknown> = {}) =>
    liveSale(live, saleA(live.merchant, { gateway: live.gateway, card_number: APPROVED, ...overrides }));

  /** Every POST for this transaction carried the one idempotency key; Stripe holds `intents` PaymentIntents for it. */
  function atStripe(trace_id: number, intents: number): void {
    expect(live.fake.intentsWithMetadata('paygate_trace_id', String(trace_id))).toHaveLength(intents);
    const keys = new Set(
      live.fake
        .requestsTo('POST /v1/payment_intents')
        .filter((r) => new URLSearchParams(r.body).get('metadata[paygate_trace_id]') === String(trace_id))
        .map((r) => r.idempotency_key),
    );
    expect([...keys]).toEqual([`paygate-${live.gateway}-${trace_id}-sale`]);
  }
  const notified = (trace_id: number) => live.notifications(trace_id).map((n) => n.transaction_status);
  const postsFor = (trace_id: number) =>
    live.fake.requestsTo('POST /v1/payment_intents').filter((r) => r.idempotency_key === `paygate-${live.gateway}-${trace_id}-sale`);

  it("a time-out: answered pending, then Stripe's search by our trace_id finds the payment approved; one PaymentIntent, one notification", async () => {
    live.fake.holdEvents(true);
    live.fake.failNext('POST /v1/payment_intents', 'timeout');
    const body = sale({ amount: 2100 });
    const answer = await live.process(body);
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'pending', error_code: '0' });
    const trace_id = answer.body.trace_id as number;
    await live.settled(trace_id, 'approved');
    atStripe(trace_id, 1);
    const intent = live.fake.intentsWithMetadata('paygate_trace_id', String(trace_id))[0]!;
    expect(await live.row(trace_id)).toMatchObject({ psp_transaction_id: intent.id });
    // Found through search, by the metadata the request carried: the gateway had no id to ask for.
    expect(
      live.fake.requestsTo('GET /v1/payment_intents/search').some((r) => r.query.query === `metadata['paygate_trace_id']:'${trace_id}'`),
    ).toBe(true);
    live.fake.holdEvents(false);
    await live.fake.releaseHeldEvents();
    expect(notified(trace_id)).toEqual(['approved']);
    const replay = await live.process({ ...body, timestamp: (body.timestamp as number) + 1 });
    expect(replay.body).toMatchObject({ status: 0, trace_id, transaction_status: 'pending' });
    atStripe(trace_id, 1);
  });

  it('HTTP 500 once: retried by the package with the same key and approved; twice: pending, never charged, closed as error', async () => {
    live.fake.failNext('POST /v1/payment_intents', 'http_500');
    const first = await live.process(sale({ amount: 2200 }));
    expect(first.body).toMatchObject({ status: 0, transaction_status: 'approved' });
    expect(postsFor(first.body.trace_id as number)).toHaveLength(2);
    atStripe(first.body.trace_id as number, 1);

    live.fake.failNext('POST /v1/payment_intents', 'http_500');
    live.fake.failNext('POST /v1/payment_intents', 'http_500');
    const second = await live.process(sale({ amount: 2300 }));
    expect(second.body).toMatchObject({ status: 0, transaction_status: 'pending' });
    const trace_id = second.body.trace_id as number;
    expect(await live.settled(trace_id, 'error')).toMatchObject({
      error_details: 'The processor has no record of this transaction: the request never reached it',
    });
    atStripe(trace_id, 0);
  });

  it("a connection reset after Stripe processed the request: the package's retry with the same key gets the first answer; one PaymentIntent", async () => {
    live.fake.failNext('POST /v1/payment_intents', 'reset_after_processing');
    const answer = await live.process(sale({ amount: 2400 }));
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'approved' });
    const trace_id = answer.body.trace_id as number;
    expect(postsFor(trace_id).map((r) => r.idempotency)).toEqual(['new', 'replayed']);
    await live.settled(trace_id, 'approved');
    atStripe(trace_id, 1);
  });

  it('a connection reset before Stripe got the request: retried, approved; one PaymentIntent', async () => {
    live.fake.failNext('POST /v1/payment_intents', 'reset_before_processing');
    const answer = await live.process(sale({ amount: 2500 }));
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'approved' });
    await live.settled(answer.body.trace_id as number, 'approved');
    atStripe(answer.body.trace_id as number, 1);
  });

  it('an answer that does not parse: pending, then approved by lookup; one PaymentIntent', async () => {
    live.fake.holdEvents(true);
    live.fake.failNext('POST /v1/payment_intents', 'garbage');
    const answer = await live.process(sale({ amount: 2600 }));
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'pending' });
    await live.settled(answer.body.trace_id as number, 'approved');
    atStripe(answer.body.trace_id as number, 1);
  });

  it('the webhook before the synchronous answer: the merchant is answered approved with its card token, notified once', async () => {
    live.fake.failNext('POST /v1/payment_intents', 'webhook_first');
    const answer = await live.process(sale({ amount: 2700 }));
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'approved', card_token: expect.any(String) });
    const trace_id = answer.body.trace_id as number;
    await live.settled(trace_id, 'approved');
    await waitUntil(
      async () => (await live.gw.gateway.deps.store.notifications.listOfTransaction(trace_id)).every((n) => n.state === 'delivered'),
      'delivered',
    );
    expect(notified(trace_id)).toEqual(['approved']);
    // The fake holds its answer until the webhook is acknowledged, longer than the webhook waits
    // for the request: the webhook settled the sale and its notification went out first; the
    // request then added the card's token to the row, which find-order and replays give.
    expect((await live.row(trace_id)).card_token).toBe(answer.body.card_token);
  });

  it('duplicate and out-of-order webhooks: the first that settles applies, the rest change nothing and notify nothing', async () => {
    // A sale left pending (time-out) whose events then come newest first, and again.
    live.fake.holdEvents(true);
    live.fake.failNext('POST /v1/payment_intents', 'timeout');
    const answer = await live.process(sale({ amount: 2800 }));
    expect(answer.body).toMatchObject({ transaction_status: 'pending' });
    const trace_id = answer.body.trace_id as number;
    await live.fake.releaseHeldEvents('reversed');
    await live.settled(trace_id, 'approved');
    const intent = live.fake.intentsWithMetadata('paygate_trace_id', String(trace_id))[0]!;
    for (const event of live.fake.events.filter((e) => e.payment_intent_id === intent.id)) {
      expect(await live.fake.redeliver(event.id)).toBe(200);
    }
    await waitUntil(
      async () => (await live.gw.gateway.deps.store.notifications.listOfTransaction(trace_id)).every((n) => n.state === 'delivered'),
      'delivered',
    );
    expect(notified(trace_id)).toEqual(['approved']);
    expect(await live.row(trace_id)).toMatchObject({ status: 'approved', psp_transaction_id: intent.id });
  });

  it("a refund whose answer is lost: pending, then found among the PaymentIntent's refunds by our trace_id and approved; one refund", async () => {
    const paid = await live.process(sale({ amount: 2900 }));
    expect(paid.body).toMatchObject({ transaction_status: 'approved' });
    live.fake.holdEvents(true);
    live.fake.failNext('POST /v1/refunds', 'timeout');
    const answer = await live.process(
      liveSale(live, refundC(live.merchant, paid.body.trace_id, { amount: 900, currency: 'USD', card_number: APPROVED })),
    );
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'pending' });
    const trace_id = answer.body.trace_id as number;
    expect(await live.settled(trace_id, 'approved')).toMatchObject({ transaction_type: 'refund', amount: 900 });
    const refunds = live.fake.refunds.filter((r) => r.payment_intent === paid.body.transaction_id);
    expect(refunds).toHaveLength(1);
    expect(await live.row(trace_id)).toMatchObject({ psp_transaction_id: refunds[0]!.id });
    expect(live.fake.requestsTo('GET /v1/refunds').some((r) => r.query.payment_intent === paid.body.transaction_id)).toBe(true);
  });

  it('Stripe unreachable (nothing listens at its address): error at once, nothing charged, named as unreachable', async () => {
    const created = await operatorCall(live.gw, 'POST', '/operator/gateways', {
      merchant_id: live.merchant.merchant_id,
      connector: 'stripe',
      currencies: ['USD'],
      settings: { secret_key: live.fake.secret_key, webhook_secret: STRIPE_WEBHOOK_SECRET, base_url: 'http://127.0.0.1:1' },
    });
    expect(created.status).toBe(201);
    const answer = await live.process(sale({ gateway: created.body.gateway, amount: 3100 }));
    expect(answer.body).toMatchObject({
      status: 0,
      transaction_status: 'error',
      error_code: 'unreachable',
      error_details: expect.stringMatching(/nothing was charged/),
    });
    await live.settled(answer.body.trace_id as number, 'error');
  });
});
