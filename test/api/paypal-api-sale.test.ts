// A sale paid with PayPal by the API (decisions §17: POST /api/process with payment_method
// `paypal`), against the fake PayPal on 127.0.0.1 over real HTTP, on both stores: answered
// pending_async with PayPal's approval link, the buyer approving there and coming back to the
// gateway, which captures once and sends them on to the merchant's return_url; the buyer
// cancelling; the refund of it by the API (no card fields: a PayPal sale has none), and a card
// sale's refund still asking for its card. Then the requests the variant refuses, and the same
// sale in the sandbox, where the sandbox's e-wallet page stands in for PayPal's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postSigned } from '../support/client.js';
import { orderId, saleA } from '../support/bodies.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { type LivePayPal, liveSale, orderIdOf, startLivePayPal } from '../support/live-paypal.js';
import { withLiveGateway } from '../support/live-gateway.js';
import { waitUntil } from '../support/notification-merchant.js';
import { storeKinds } from '../support/stores.js';

const now_s = () => Math.floor(Date.now() / 1000);

/** A sale's body with payment_method paypal: the card fields gone. */
function paypalSale(base: Record<string, unknown>, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const body: Record<string, unknown> = { ...base, payment_method: 'paypal', ...overrides };
  delete body.card_number;
  delete body.card_exp;
  delete body.cvv;
  return body;
}

/** Follows redirects by hand (each must be one) and returns the last location that is not the gateway's. */
async function follow(start: string, stop_at: string): Promise<{ url: string; hops: string[] }> {
  let url = start;
  const hops: string[] = [];
  for (let i = 0; i < 5 && !url.startsWith(stop_at); i += 1) {
    const response = await fetch(url, { redirect: 'manual' });
    const location = response.headers.get('location');
    expect([302, 303], `${url} answered ${response.status}`).toContain(response.status);
    url = new URL(location!, url).toString();
    hops.push(url);
  }
  return { url, hops };
}

describe.each(storeKinds())('a PayPal sale by the API, live, on %s', (kind) => {
  let live: LivePayPal;
  withLiveGateway(
    // No time-out is tested here, so the live settings' 5 s (not FAILURE_ENV's 1.5 s): the fake's
    // first answers, checked against PayPal's description with its schemas compiled on first use,
    // may take over 1.5 s in a loaded suite.
    () => startLivePayPal(kind),
    (started) => (live = started),
  );

  const notified = (trace_id: number) => live.notifications(trace_id).map((n) => n.transaction_status);
  const delivered = (trace_id: number) =>
    waitUntil(
      async () => (await live.gw.gateway.deps.store.notifications.listOfTransaction(trace_id)).every((n) => n.state === 'delivered'),
      `notifications of ${trace_id} delivered`,
    );

  async function startSale(amount: number) {
    const body = paypalSale(liveSale(live, saleA(live.merchant, { gateway: live.gateway, amount })));
    const answer = await live.process(body);
    expect(answer.body, JSON.stringify(answer.body)).toMatchObject({
      status: 0,
      transaction_status: 'pending_async',
      payment_processor: 'paypal',
    });
    const trace_id = answer.body.trace_id as number;
    const order_id = orderIdOf(live, answer.body.redirect_url as string);
    expect(live.fake.order(order_id)).toMatchObject({ status: 'PAYER_ACTION_REQUIRED' });
    return { body, trace_id, order_id };
  }

  it('approved at PayPal: captured once the buyer is back, sent on to the return_url, notified once; refunded by the API', async () => {
    const sale = await startSale(4200);
    expect(live.fake.order(sale.order_id)!.amount).toEqual({ currency_code: 'USD', value: '42.00' });
    // The buyer approves on PayPal's page, which sends them back to the gateway.
    const approved = await fetch(`${live.fake.url}/checkoutnow/approve?token=${encodeURIComponent(sale.order_id)}`, {
      method: 'POST',
      redirect: 'manual',
    });
    expect([302, 303]).toContain(approved.status);
    const back = await follow(approved.headers.get('location')!, live.receiver.url);
    expect(back.url.startsWith(`${live.receiver.url}/return`), back.hops.join(' → ')).toBe(true);
    // Captured on the way back, before the buyer reached the merchant.
    expect(await live.row(sale.trace_id)).toMatchObject({ status: 'approved' });
    expect(live.fake.order(sale.order_id)).toMatchObject({ status: 'COMPLETED' });
    expect(live.fake.order(sale.order_id)!.captures).toHaveLength(1);
    expect(await live.settled(sale.trace_id, 'approved')).toMatchObject({ amount: 4200, currency: 'USD', order_id: sale.body.order_id });
    await delivered(sale.trace_id);
    expect(notified(sale.trace_id).filter((s) => s === 'approved')).toHaveLength(1);

    // The refund by the API: payment_method paypal, no card fields.
    const refund = {
      transaction_type: 'refund',
      payment_method: 'paypal',
      amount: 1500,
      currency: 'USD',
      pin: 'cust-42',
      merchant_id: live.merchant.merchant_id,
      application_key: live.merchant.application_key,
      order_id: orderId(),
      reference_id: sale.trace_id,
      notification_url: `${live.receiver.url}/notify`,
      version: '1.2',
      timestamp: now_s(),
    };
    const refunded = await live.process(refund);
    expect(refunded.body, JSON.stringify(refunded.body)).toMatchObject({ status: 0, payment_processor: 'paypal' });
    const refund_trace = refunded.body.trace_id as number;
    expect(await live.settled(refund_trace, 'approved')).toMatchObject({ transaction_type: 'refund', amount: 1500 });
    const capture_id = live.fake.order(sale.order_id)!.captures[0]!.id;
    expect(live.fake.refunds.filter((r) => r.capture_id === capture_id)).toEqual([
      expect.objectContaining({ amount: { currency_code: 'USD', value: '15.00' } }),
    ]);
    // The same refund again is the same refund, not a second one.
    const again = await live.process({ ...refund, timestamp: now_s() });
    expect(again.body).toMatchObject({ status: 0, trace_id: refund_trace });
    expect(live.fake.refunds.filter((r) => r.capture_id === capture_id)).toHaveLength(1);
    // More than what is left is refused, naming what is left.
    const over = await live.process({ ...refund, order_id: orderId(), amount: 3000, timestamp: now_s() });
    expect(over.body).toMatchObject({ status: 14 });
    expect(over.body.description).toMatch(/2700 left/);
  });

  it('cancelled at PayPal: cancelled, notified once, sent on to the return_url, nothing captured', async () => {
    const sale = await startSale(4300);
    const cancelled = await fetch(`${live.fake.url}/checkoutnow/cancel?token=${encodeURIComponent(sale.order_id)}`, {
      method: 'POST',
      redirect: 'manual',
    });
    const back = await follow(cancelled.headers.get('location')!, live.receiver.url);
    expect(back.url.startsWith(`${live.receiver.url}/return`)).toBe(true);
    await live.settled(sale.trace_id, 'cancelled');
    await delivered(sale.trace_id);
    expect(notified(sale.trace_id).filter((s) => s === 'cancelled')).toHaveLength(1);
    expect(live.fake.order(sale.order_id)!.captures).toHaveLength(0);
  });

  it('the same sale sent twice is one order at PayPal; a card refund of a card sale still asks for its card', async () => {
    const sale = await startSale(4400);
    const again = await live.process({ ...sale.body, timestamp: now_s() });
    expect(again.body).toMatchObject({ status: 0, trace_id: sale.trace_id, transaction_status: 'pending_async' });
    expect(live.fake.requestsTo('orders.create').filter((r) => r.body.includes(`"${sale.body.order_id as string}"`))).toHaveLength(1);
    // A refund with payment_method paypal of a sale still waiting for the buyer: not approved, refused.
    const early = await live.process({
      transaction_type: 'refund',
      payment_method: 'paypal',
      amount: 100,
      currency: 'USD',
      pin: 'cust-42',
      merchant_id: live.merchant.merchant_id,
      application_key: live.merchant.application_key,
      order_id: orderId(),
      reference_id: sale.trace_id,
      version: '1.2',
      timestamp: now_s(),
    });
    expect(early.body).toMatchObject({ status: 14 });
  });

  it('refuses what the variant does not take, naming the field, writing nothing', async () => {
    const base = liveSale(live, saleA(live.merchant, { gateway: live.gateway, amount: 4500 }));
    const stored = async (order_id: unknown) =>
      live.gw.gateway.deps.store.transactions.findByKey(live.merchant.merchant_id, 'sale', order_id as string);
    const unknown = await live.process({ ...base, payment_method: 'bitcoin' });
    expect(unknown.body).toMatchObject({ status: 10, description: 'Invalid field: payment_method (expected card or paypal)' });
    const authorize = await live.process(paypalSale(base, { transaction_type: 'authorize' }));
    expect(authorize.body).toMatchObject({ status: 10 });
    expect(authorize.body.description).toMatch(/^Invalid field: transaction_type/);
    const missing = paypalSale(base);
    delete missing.return_url;
    expect((await live.process(missing)).body).toMatchObject({ status: 10, description: 'Missing required field: return_url' });
    for (const order_id of [base.order_id]) expect(await stored(order_id)).toBeNull();
  });
});

describe.each(storeKinds())('a PayPal sale by the API in the sandbox, on %s', (kind) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(kind);
  });
  afterAll(async () => {
    await gw?.close();
  });

  it("goes to the sandbox's e-wallet page (pending_async); confirmed there it is approved and sent on, then refunded without a card", async () => {
    const body = paypalSale(saleA(gw.merchant, { amount: 1700 }));
    const answer = await postSigned(gw.url, '/api/process', body, gw.merchant.secret);
    expect(answer.body, JSON.stringify(answer.body)).toMatchObject({
      status: 0,
      transaction_status: 'pending_async',
      payment_processor: 'sandbox',
    });
    const trace_id = answer.body.trace_id as number;
    expect(await gw.gateway.deps.store.transactions.get(trace_id)).toMatchObject({ status: 'pending_async', payment_method: 'ewallet' });
    const page_url = answer.body.redirect_url as string;
    expect(new URL(page_url).pathname).toMatch(/^\/sandbox\/wallet\//);
    expect((await fetch(page_url)).status).toBe(200);
    const confirmed = await fetch(page_url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'action=confirm',
      redirect: 'manual',
    });
    expect([302, 303]).toContain(confirmed.status);
    expect(confirmed.headers.get('location')).toBe(body.return_url);
    expect(await gw.gateway.deps.store.transactions.get(trace_id)).toMatchObject({ status: 'approved' });
    const refund = await postSigned(
      gw.url,
      '/api/process',
      {
        transaction_type: 'refund',
        payment_method: 'paypal',
        amount: 700,
        currency: 'USD',
        pin: 'cust-42',
        merchant_id: gw.merchant.merchant_id,
        application_key: gw.merchant.application_key,
        order_id: orderId(),
        reference_id: trace_id,
        version: '1.2',
        timestamp: Math.floor(Date.now() / 1000),
      },
      gw.merchant.secret,
    );
    expect(refund.body).toMatchObject({ status: 0, transaction_status: 'approved', payment_processor: 'sandbox' });
  });

  it('a card sale with payment_method card is the card sale it always was', async () => {
    const answer = await postSigned(gw.url, '/api/process', saleA(gw.merchant, { payment_method: 'card' }), gw.merchant.secret);
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'approved' });
    const refund = await postSigned(
      gw.url,
      '/api/process',
      {
        transaction_type: 'refund',
        payment_method: 'paypal',
        amount: 100,
        currency: 'USD',
        pin: 'cust-42',
        merchant_id: gw.merchant.merchant_id,
        application_key: gw.merchant.application_key,
        order_id: orderId(),
        reference_id: answer.body.trace_id,
        version: '1.2',
        timestamp: Math.floor(Date.now() / 1000),
      },
      gw.merchant.secret,
    );
    expect(refund.body).toMatchObject({ status: 10 });
    expect(refund.body.description).toMatch(/^Missing required field: card_number/);
  });
});
