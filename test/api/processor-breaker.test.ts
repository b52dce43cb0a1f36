// Each gateway's guard between the gateway and its processor (issue 29, item 3;
// outbound/processor-guard.ts), live, on both stores, with Checkout.com (the fake) tried first and
// Stripe (the fake) next by the merchant's routing rules:
// - the circuit breaker: failures in a row (HTTP 503) open it; a sale then never reaches Checkout.com (no
//   request sent, so nothing charged there), is refused at once and goes on to Stripe, approved;
//   /metrics shows the breaker open and the one refusal (not sent again after a pause); after the
//   open time one probe goes through, and an answer closes the breaker again;
// - the in-flight limit: while Checkout.com holds as many requests as the limit, the next sale is
//   refused at once (not queued behind the hanging ones) and approved at Stripe.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { saleA } from '../support/bodies.js';
import { type LiveCheckout, startLiveCheckout } from '../support/live-checkout.js';
import { liveSale, operatorCall } from '../support/live-gateway.js';
import { STRIPE_WEBHOOK_SECRET } from '../support/live-stripe.js';
import { scrapeMetrics, total } from '../support/metrics-text.js';
import { sleep, waitUntil } from '../support/notification-merchant.js';
import { type FakeStripe, startFakeStripe } from '../support/stripe/fake.js';
import { storeKinds } from '../support/stores.js';

const CARD = '4242424242424242';

/** Checkout.com first, Stripe next, by the merchant's routing rules; `env` sets the guard. */
function withTwoProcessors(kind: Parameters<typeof startLiveCheckout>[0], env: Record<string, string>) {
  const state = {} as { live: LiveCheckout; stripe: FakeStripe; stripe_gateway: string };
  beforeAll(async () => {
    state.stripe = await startFakeStripe();
    state.live = await startLiveCheckout(kind, {
      env: { PAYGATE_PROCESSOR_TIMEOUT_MS: '1500', PAYGATE_STUCK_PROCESSING_SECONDS: '3', ...env },
    });
    const { live, stripe } = state;
    const created = await operatorCall(live.gw, 'POST', '/operator/gateways', {
      merchant_id: live.merchant.merchant_id,
      connector: 'stripe',
      currencies: ['USD', 'EUR'],
      settings: { secret_key: stripe.secret_key, webhook_secret: STRIPE_WEBHOOK_SECRET, base_url: stripe.url },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    state.stripe_gateway = created.body.gateway as string;
    stripe.setWebhookEndpoint(created.body.webhook_url as string, STRIPE_WEBHOOK_SECRET);
    for (const [gateway, priority] of [
      [live.gateway, 1],
      [state.stripe_gateway, 2],
    ] as const) {
      const rule = await operatorCall(live.gw, 'POST', `/operator/merchants/${live.merchant.merchant_id}/routing-rules`, {
        gateway,
        priority,
      });
      expect(rule.status).toBe(201);
    }
  });
  afterAll(async () => {
    await state.live?.close();
    await state.stripe?.close();
  });
  afterEach(async () => {
    state.live.fake.holdEvents(false);
    await state.live.fake.releaseHeldEvents();
    expect(state.live.fake.violations).toEqual([]);
    expect(state.stripe.violations).toEqual([]);
  });
  return state;
}

describe.each(storeKinds())('the circuit breaker on %s', (kind) => {
  const s = withTwoProcessors(kind, { PAYGATE_PROCESSOR_BREAKER_FAILURES: '2', PAYGATE_PROCESSOR_BREAKER_OPEN_SECONDS: '2' });
  const sale = (amount: number) => liveSale(s.live, saleA(s.live.merchant, { card_number: CARD, amount }));
  const breaker = async () =>
    total(await scrapeMetrics(s.live.gw.url), 'paygate_processor_breaker_state', { connector: 'checkout', gateway_id: s.live.gateway });

  it('opens after failures in a row: sales go to the next gateway at once, none reaches Checkout.com; one probe later closes it', async () => {
    s.live.fake.holdEvents(true);
    // Checkout.com answers 503 twice (the connector sends the sale again once with its key): two failures in a row.
    s.live.fake.failNext('POST /payments', 'http_503');
    s.live.fake.failNext('POST /payments', 'http_503');
    const failed = await s.live.process(sale(4100));
    expect(failed.body).toMatchObject({ status: 0, payment_processor: 'checkout' });
    expect(await breaker()).toBe(2);
    const sent_before = s.live.fake.requestsTo('POST /payments').length;
    const body = sale(4300);
    const moved_on = await s.live.process(body);
    expect(moved_on.body).toMatchObject({ status: 0, transaction_status: 'approved', payment_processor: 'stripe', cascade_level: 1 });
    expect(s.live.fake.requestsTo('POST /payments')).toHaveLength(sent_before);
    const first = await s.live.row((await s.live.row(moved_on.body.trace_id as number)).cascade_root!);
    expect(first).toMatchObject({ gateway_id: s.live.gateway, status: 'error', error_code: 'unreachable' });
    expect(first.error_details).toMatch(/circuit open/);
    const metrics = await scrapeMetrics(s.live.gw.url);
    // Refused once: a refusal by the breaker is not sent again after the connector's retry pause.
    expect(total(metrics, 'paygate_processor_refused_total', { gateway_id: s.live.gateway, reason: 'circuit_open' })).toBe(1);

    // After the open time one request goes through; Checkout.com answers, and the breaker closes.
    await sleep(2_100);
    const probe = await s.live.process(sale(4400));
    expect(probe.body).toMatchObject({ status: 0, transaction_status: 'approved', payment_processor: 'checkout' });
    expect(await breaker()).toBe(0);
    const after = await s.live.process(sale(4500));
    expect(after.body).toMatchObject({ transaction_status: 'approved', payment_processor: 'checkout' });
  });
});

describe.each(storeKinds())('the in-flight limit on %s', (kind) => {
  const s = withTwoProcessors(kind, {
    PAYGATE_PROCESSOR_MAX_IN_FLIGHT: '2',
    PAYGATE_PROCESSOR_WAIT_MS: '300',
    PAYGATE_PROCESSOR_BREAKER_FAILURES: '100',
  });
  const sale = (amount: number) => liveSale(s.live, saleA(s.live.merchant, { card_number: CARD, amount }));

  it('while Checkout.com holds two requests, the next sale waits 300 ms for a slot, not their time-out: refused unsent, approved at Stripe', async () => {
    s.live.fake.holdEvents(true);
    const sent_before = s.live.fake.requestsTo('POST /payments').length;
    s.live.fake.failNext('POST /payments', 'timeout');
    s.live.fake.failNext('POST /payments', 'timeout');
    const hanging = [s.live.process(sale(5100)), s.live.process(sale(5200))];
    await waitUntil(async () => s.live.fake.requestsTo('POST /payments').length === sent_before + 2, 'two requests held by Checkout.com');
    const third_started_ms = Date.now();
    const third = await s.live.process(sale(5300));
    // It waited for a slot (300 ms), and was refused well before the held requests' 1.5 s time-out.
    expect(Date.now() - third_started_ms).toBeGreaterThanOrEqual(300);
    expect(third.body).toMatchObject({ status: 0, transaction_status: 'approved', payment_processor: 'stripe', cascade_level: 1 });
    expect(s.live.fake.requestsTo('POST /payments')).toHaveLength(sent_before + 2);
    const metrics = await scrapeMetrics(s.live.gw.url);
    expect(total(metrics, 'paygate_processor_in_flight', { gateway_id: s.live.gateway })).toBe(2);
    // Refused once, after one wait: the connector does not send it again to wait a second time.
    expect(total(metrics, 'paygate_processor_refused_total', { gateway_id: s.live.gateway, reason: 'in_flight_limit' })).toBe(1);
    for (const answer of await Promise.all(hanging)) expect(answer.body).toMatchObject({ transaction_status: 'pending' });
    expect(total(await scrapeMetrics(s.live.gw.url), 'paygate_processor_in_flight', { gateway_id: s.live.gateway })).toBe(0);
  });
});
