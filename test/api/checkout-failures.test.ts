// The ways a real processor fails (issue 14 §4), each against the fake Checkout.com, on both
// stores: a time-out, HTTP 5xx (once, and twice), a connection reset after the request was sent,
// one reset before, an answer that does not parse, the webhook arriving before the synchronous
// answer, duplicate and out-of-order webhooks, and webhooks with a bad signature. For each: what
// the merchant is answered, that the processor holds at most one payment for the order (every
// retry reused the idempotency key), and that the transaction reaches its final status (by a
// lookup, a webhook or the sweep) with exactly one notification of it.
import { describe, expect, it } from 'vitest';
import { saleA } from '../support/bodies.js';
import { checkoutSignature } from '../support/checkout/fake.js';
import { CHECKOUT_WEBHOOK_SECRET, FAILURE_ENV, type LiveCheckout, liveSale, startLiveCheckout } from '../support/live-checkout.js';
import { withLiveGateway } from '../support/live-gateway.js';
import { waitUntil } from '../support/notification-merchant.js';
import { storeKinds } from '../support/stores.js';

describe.each(storeKinds())('Checkout.com failures on %s', (kind) => {
  let live: LiveCheckout;
  withLiveGateway(
    () => startLiveCheckout(kind, { env: FAILURE_ENV }),
    (started) => (live = started),
  );

  const sale = (overrides: Record<string, unknown> = {}) => liveSale(live, saleA(live.merchant, { gateway: live.gateway, ...overrides }));

  /** Every POST /payments for this order carried the same idempotency key; the processor holds `payments` of them. */
  function atProcessor(order_id: string, trace_id: number, payments: number): void {
    expect(live.fake.paymentsWithReference(order_id)).toHaveLength(payments);
    const keys = new Set(
      live.fake
        .requestsTo('POST /payments')
        .filter((r) => (r.json as { reference?: string } | null)?.reference === order_id)
        .map((r) => r.idempotency_key),
    );
    expect([...keys]).toEqual([`paygate-${live.gateway}-${trace_id}-sale`]);
  }

  /** The statuses the merchant was notified of, in order. */
  const notified = (trace_id: number) => live.notifications(trace_id).map((n) => n.transaction_status);

  it('a time-out: answered pending, then the lookup finds the payment approved; one payment, one notification', async () => {
    live.fake.holdEvents(true);
    live.fake.failNext('POST /payments', 'timeout');
    const body = sale({ amount: 2100 });
    const answer = await live.process(body);
    expect(answer.body).toMatchObject({
      status: 0,
      transaction_status: 'pending',
      error_code: '0',
      error_details: "Awaiting the processor's answer; the final status will be notified",
    });
    const trace_id = answer.body.trace_id as number;
    await live.settled(trace_id, 'approved');
    atProcessor(body.order_id as string, trace_id, 1);
    expect(await live.row(trace_id)).toMatchObject({ psp_transaction_id: live.fake.paymentsWithReference(body.order_id as string)[0]!.id });
    // The processor's webhooks, once they come, confirm it: nothing more to notify.
    live.fake.holdEvents(false);
    await live.fake.releaseHeldEvents();
    expect(notified(trace_id)).toEqual(['approved']);
    // The merchant retrying: the answer it got the first time, no second charge.
    const replay = await live.process({ ...body, timestamp: (body.timestamp as number) + 1 });
    expect(replay.body).toMatchObject({ status: 0, trace_id, transaction_status: 'pending' });
    atProcessor(body.order_id as string, trace_id, 1);
  });

  it('HTTP 500 once: retried with the same idempotency key and approved; 500 twice: pending, never charged, closed as error', async () => {
    live.fake.failNext('POST /payments', 'http_500');
    const once = sale({ amount: 2200 });
    const first = await live.process(once);
    expect(first.body).toMatchObject({ status: 0, transaction_status: 'approved' });
    expect(
      live.fake.requestsTo('POST /payments').filter((r) => (r.json as { reference?: string }).reference === once.order_id),
    ).toHaveLength(2);
    atProcessor(once.order_id as string, first.body.trace_id as number, 1);

    live.fake.failNext('POST /payments', 'http_500');
    live.fake.failNext('POST /payments', 'http_503');
    const twice = sale({ amount: 2300 });
    const second = await live.process(twice);
    expect(second.body).toMatchObject({ status: 0, transaction_status: 'pending' });
    const trace_id = second.body.trace_id as number;
    // The processor has no record of it: once it cannot be in flight any more, it ends as error.
    const notification = await live.settled(trace_id, 'error');
    expect(notification).toMatchObject({ error_details: 'The processor has no record of this transaction: the request never reached it' });
    atProcessor(twice.order_id as string, trace_id, 0);
  });

  it('a connection reset after the request was sent: pending, then approved by lookup; one payment', async () => {
    live.fake.holdEvents(true);
    live.fake.failNext('POST /payments', 'reset_after_processing');
    const body = sale({ amount: 2400 });
    const answer = await live.process(body);
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'pending' });
    await live.settled(answer.body.trace_id as number, 'approved');
    atProcessor(body.order_id as string, answer.body.trace_id as number, 1);
  });

  it('a connection reset before the processor got the request: pending, the processor knows nothing, closed as error', async () => {
    live.fake.failNext('POST /payments', 'reset_before_processing');
    const body = sale({ amount: 2500 });
    const answer = await live.process(body);
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'pending' });
    await live.settled(answer.body.trace_id as number, 'error');
    atProcessor(body.order_id as string, answer.body.trace_id as number, 0);
  });

  it('an answer that does not parse: pending, then approved by lookup; one payment', async () => {
    live.fake.holdEvents(true);
    live.fake.failNext('POST /payments', 'garbage');
    const body = sale({ amount: 2600 });
    const answer = await live.process(body);
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'pending' });
    await live.settled(answer.body.trace_id as number, 'approved');
    atProcessor(body.order_id as string, answer.body.trace_id as number, 1);
  });

  it('the webhook before the synchronous answer: the merchant is answered approved with its card token, notified once', async () => {
    live.fake.failNext('POST /payments', 'webhook_first');
    const body = sale({ amount: 2700 });
    const answer = await live.process(body);
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'approved', card_token: expect.any(String) });
    const trace_id = answer.body.trace_id as number;
    await live.settled(trace_id, 'approved');
    await waitUntil(
      async () => (await live.gw.gateway.deps.store.notifications.listOfTransaction(trace_id)).every((n) => n.state === 'delivered'),
      'delivered',
    );
    expect(notified(trace_id)).toEqual(['approved']);
    // The stored answer a replay repeats is the approved one, with the token.
    const replay = await live.process({ ...body, timestamp: (body.timestamp as number) + 1 });
    expect(replay.body).toMatchObject({ trace_id, transaction_status: 'approved', card_token: answer.body.card_token });
    atProcessor(body.order_id as string, trace_id, 1);
  });

  it('duplicate and out-of-order webhooks: the first that settles applies, the rest change nothing and notify nothing', async () => {
    live.fake.holdEvents(true);
    live.fake.failNext('POST /payments', 'timeout');
    const body = sale({ amount: 2800 });
    const answer = await live.process(body);
    expect(answer.body).toMatchObject({ transaction_status: 'pending' });
    const trace_id = answer.body.trace_id as number;
    const payment_id = live.fake.paymentsWithReference(body.order_id as string)[0]!.id;
    const events = live.fake.events.filter((e) => e.payment_id === payment_id);
    expect(events.map((e) => e.type)).toEqual(['payment_approved', 'payment_captured']);
    // Captured first, then approved, then captured twice more.
    const [approved, captured] = events;
    await live.fake.releaseHeldEvents([captured!.id, approved!.id, captured!.id, captured!.id]);
    await live.settled(trace_id, 'approved');
    expect(notified(trace_id)).toEqual(['approved']);
    const recorded = await live.gw.gateway.deps.store.merchants.listProcessorEvents(live.gateway, 1000);
    expect(recorded.filter((e) => e.trace_id === trace_id).map((e) => [e.event_type, e.outcome])).toEqual([
      ['payment_captured', 'applied'],
      ['payment_approved', 'unchanged'],
    ]);
    expect(await live.fake.redeliver(captured!.id)).toBe(200);
    const changes = await live.gw.gateway.deps.store.transactions.listStatusChanges(trace_id);
    expect(changes.map((c) => c.to_status)).toEqual(['pending', 'approved']);
    expect(changes[1]!.reason).toBe('processor webhook payment_captured');
  });

  it("a webhook with a bad, missing or another key's signature, or a changed body: HTTP 401, nothing read, nothing changed", async () => {
    live.fake.holdEvents(true);
    live.fake.failNext('POST /payments', 'timeout');
    const body = sale({ amount: 2900 });
    const answer = await live.process(body);
    const trace_id = answer.body.trace_id as number;
    const payment_id = live.fake.paymentsWithReference(body.order_id as string)[0]!.id;
    const event = live.fake.events.find((e) => e.payment_id === payment_id && e.type === 'payment_approved')!;
    // A decline forged from the real event: the processor never said it.
    const forged = event.body.replace('"payment_approved"', '"payment_declined"');
    expect(await live.fake.sendRaw(forged, event.signature)).toBe(401);
    expect(await live.fake.sendRaw(forged, null)).toBe(401);
    expect(await live.fake.sendRaw(forged, checkoutSignature(forged, 'another-secret-0123456789'))).toBe(401);
    expect(await live.fake.sendRaw(forged, 'f'.repeat(64))).toBe(401);
    expect(await live.fake.sendRaw(forged, 'not hex')).toBe(401);
    // Nothing was recorded or changed by them; the real event, signed with the gateway's secret, applies.
    expect(
      (await live.gw.gateway.deps.store.merchants.listProcessorEvents(live.gateway, 1000)).filter((e) => e.trace_id === trace_id),
    ).toEqual([]);
    expect((await live.row(trace_id)).status).toBe('pending');
    expect(await live.fake.sendRaw(event.body, checkoutSignature(event.body, CHECKOUT_WEBHOOK_SECRET))).toBe(200);
    await live.settled(trace_id, 'approved');
    expect(notified(trace_id)).toEqual(['approved']);
    // A webhook for a gateway that does not exist, or under another connector's path: 404.
    const other = await fetch(`${live.gw.url}/webhooks/checkout/${'0'.repeat(32)}`, {
      method: 'POST',
      body: event.body,
      headers: { 'cko-signature': event.signature! },
    });
    expect(other.status).toBe(404);
    const wrong_connector = await fetch(live.webhook_url.replace('/webhooks/checkout/', '/webhooks/sandbox/'), {
      method: 'POST',
      body: event.body,
      headers: { 'cko-signature': event.signature! },
    });
    expect(wrong_connector.status).toBe(404);
  });
});
