// Live processing through the `checkout` connector (issue 14, decisions.md §13), against the fake
// Checkout.com on 127.0.0.1 over real HTTP, on both stores: a merchant's signed sale approved,
// declined softly and hard, refunded in part and in full, a card payout pending then paid; each
// ends in the right transaction_status with a signed notification at the merchant's site, and
// every request the connector sent and every answer and event the fake gave is checked against
// Checkout.com's published API description (fake.violations stays empty).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { postSigned } from '../support/client.js';
import { merchantVerify, waitUntil } from '../support/notification-merchant.js';
import { orderId, saleA, refundC } from '../support/bodies.js';
import { type LiveCheckout, liveSale, startLiveCheckout } from '../support/live-checkout.js';
import { payoutD, payoutE } from '../support/payout-bodies.js';
import { ADMIN_TOKEN } from '../support/gateway.js';
import { createPlanVia, subscribeVia, tokenize } from '../support/v13.js';
import { storeKinds } from '../support/stores.js';

describe.each(storeKinds())('live sales through Checkout.com on %s', (kind) => {
  let live: LiveCheckout;
  beforeAll(async () => {
    live = await startLiveCheckout(kind);
  });
  afterAll(async () => {
    await live?.close();
  });
  afterEach(() => {
    expect(live.fake.violations).toEqual([]);
  });

  const sale = (overrides: Record<string, unknown> = {}) => liveSale(live, saleA(live.merchant, { gateway: live.gateway, ...overrides }));

  it("an approved sale: status 0, approved, the processor's payment id, a card token, one signed notification, one payment at the processor", async () => {
    const body = sale({ amount: 1999 });
    const answer = await live.process(body);
    expect(answer.body).toMatchObject({
      status: 0,
      transaction_status: 'approved',
      payment_processor: 'checkout',
      transaction_id: expect.stringMatching(/^pay_/),
      error_code: '10000',
      card_token: expect.any(String),
    });
    const trace_id = answer.body.trace_id as number;
    const notification = await live.settled(trace_id, 'approved');
    expect(merchantVerify(notification, live.merchant.secret)).toBe(true);
    expect(notification).toMatchObject({
      transaction_id: answer.body.transaction_id,
      card_token: answer.body.card_token,
      amount: 1999,
      currency: 'USD',
    });
    // At the processor: one payment, with the merchant's order_id as its reference, our trace_id, the card as its source.
    const payments = live.fake.paymentsWithReference(body.order_id as string);
    expect(payments).toHaveLength(1);
    expect(payments[0]).toMatchObject({ id: answer.body.transaction_id, status: 'Captured', amount: 1999, currency: 'USD' });
    const sent = live.fake.requestsTo('POST /payments').find((r) => (r.json as { reference?: string }).reference === body.order_id)!;
    expect(sent.headers.authorization).toBe(`Bearer ${live.fake.secret_key}`);
    expect(sent.idempotency_key).toBe(`paygate-${live.gateway}-${trace_id}-sale`);
    expect(sent.json).toMatchObject({
      source: { type: 'card', number: '4111111111111111', expiry_month: 12, expiry_year: 2035, cvv: '568' },
      metadata: { paygate_trace_id: trace_id },
    });

    // The processor's webhooks (payment_approved, payment_captured) confirm what was answered: no second notification.
    await live.fake.waitForEvent((e) => e.payment_id === answer.body.transaction_id && e.type === 'payment_captured');
    await waitUntil(
      async () => (await live.gw.gateway.deps.store.notifications.listOfTransaction(trace_id)).every((n) => n.state === 'delivered'),
      'delivered',
    );
    expect(live.notifications(trace_id)).toHaveLength(1);

    // The same request again: the same answer, nothing new at the processor.
    const replay = await live.process({ ...body, timestamp: (body.timestamp as number) + 1 });
    expect(replay.body).toMatchObject({ status: 0, trace_id, transaction_status: 'approved', transaction_id: answer.body.transaction_id });
    expect(live.fake.paymentsWithReference(body.order_id as string)).toHaveLength(1);
  });

  it("a soft decline (do not honour, by amount) and a hard one (stolen card): rejected, with the processor's code and words, notified", async () => {
    const soft = await live.process(sale({ amount: 1005 }));
    expect(soft.body).toMatchObject({
      status: 0,
      transaction_status: 'rejected',
      error_code: '20005',
      transaction_id: expect.stringMatching(/^pay_/),
    });
    expect(soft.body.card_token).toBeUndefined();
    expect(await live.settled(soft.body.trace_id as number, 'rejected')).toMatchObject({ error_code: '20005' });

    const hard = await live.process(sale({ card_number: '4539253655711767', amount: 2000 }));
    expect(hard.body).toMatchObject({ status: 0, transaction_status: 'rejected', error_code: '30043' });
    expect(await live.settled(hard.body.trace_id as number, 'rejected')).toMatchObject({ error_code: '30043' });
  });

  it("a partial then a full refund: each accepted (pending), then approved by the processor's webhook and notified; no more than the sale", async () => {
    const paid = await live.process(sale({ amount: 3000 }));
    expect(paid.body).toMatchObject({ transaction_status: 'approved' });
    const sale_trace = paid.body.trace_id as number;
    await live.fake.waitForEvent((e) => e.payment_id === paid.body.transaction_id && e.type === 'payment_captured');

    const partial = await live.process(liveSale(live, refundC(live.merchant, sale_trace, { amount: 1000, currency: 'USD' })));
    expect(partial.body).toMatchObject({ status: 0, transaction_status: 'pending', transaction_id: expect.stringMatching(/^act_/) });
    const refunded = await live.settled(partial.body.trace_id as number, 'approved');
    expect(refunded).toMatchObject({ amount: 1000, transaction_type: 'refund' });

    const rest = await live.process(liveSale(live, refundC(live.merchant, sale_trace, { amount: 2000, currency: 'USD' })));
    expect(rest.body).toMatchObject({ status: 0, transaction_status: 'pending' });
    await live.settled(rest.body.trace_id as number, 'approved');
    expect(live.fake.payment(paid.body.transaction_id as string)).toMatchObject({ status: 'Refunded', refunded_amount: 3000 });
    for (const refund of [partial, rest]) {
      const sent = live.fake
        .requestsTo('POST /payments/{id}/refunds')
        .find((r) => r.idempotency_key === `paygate-${live.gateway}-${String(refund.body.trace_id)}-refund`);
      expect(sent?.json).toMatchObject({ amount: refund === partial ? 1000 : 2000 });
    }

    const over = await live.process(liveSale(live, refundC(live.merchant, sale_trace, { amount: 1, currency: 'USD' })));
    expect(over.body).toMatchObject({ status: 14 });
  });

  it('a card payout (variants D and E): pending at the processor, then paid: approved and notified', async () => {
    const encrypted = await live.process(liveSale(live, payoutD(live.merchant, { gateway: live.gateway, amount: 4200 })));
    expect(encrypted.body).toMatchObject({ status: 0, transaction_status: 'pending', transaction_id: expect.stringMatching(/^pay_/) });
    const plain = await live.process(liveSale(live, payoutE(live.merchant, { gateway: live.gateway, amount: 4300 })));
    expect(plain.body).toMatchObject({ status: 0, transaction_status: 'pending' });
    await live.fake.settlePayouts();
    for (const answer of [encrypted, plain]) {
      expect(await live.settled(answer.body.trace_id as number, 'approved')).toMatchObject({ transaction_type: 'payout' });
      expect(live.fake.payment(answer.body.transaction_id as string)).toMatchObject({ kind: 'payout', status: 'Paid' });
    }
  });

  it('3-D Secure when the processor asks for it (three_ds never, a card its rules challenge): pending_async with its page', async () => {
    const answer = await live.process(sale({ card_number: '4010061700000021', amount: 3300 }));
    expect(answer.body).toMatchObject({
      status: 0,
      transaction_status: 'pending_async',
      redirect_url: expect.stringMatching(new RegExp(`^${live.fake.url}/`)),
      transaction_id: expect.stringMatching(/^pay_/),
    });
    const sent = live.fake.requestsTo('POST /payments').at(-1)!.json as Record<string, unknown>;
    expect(sent['3ds']).toEqual({ enabled: false });
    // Nobody finishes it: the processor gives up, and its webhook settles the sale.
    await live.fake.abandonChallenge(answer.body.transaction_id as string);
    expect(await live.settled(answer.body.trace_id as number, 'rejected')).toMatchObject({ error_code: '20152' });
  });

  it('a held payout released by the operator is sent with the payee the request named; a declined payout is rejected', async () => {
    const held = await live.gw.gateway.deps.store.merchants.setGatewayHoldPayouts(live.gateway, true);
    expect(held).toBe(true);
    live.gw.gateway.deps.merchants.invalidate();
    try {
      const requested = await live.process(liveSale(live, payoutE(live.merchant, { gateway: live.gateway, amount: 4400 })));
      expect(requested.body).toMatchObject({ status: 0, transaction_status: 'requested' });
      const released = await fetch(`${live.gw.url}/operator/payouts/${String(requested.body.trace_id)}/approve`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: '{}',
      });
      expect(released.status).toBe(200);
      const sent = live.fake.requestsTo('POST /payments').at(-1)!.json as {
        destination: { account_holder: Record<string, unknown> };
        reference: string;
      };
      expect(sent.destination.account_holder).toMatchObject({ type: 'individual', first_name: 'Pat', last_name: 'Payee' });
      await live.fake.settlePayouts();
      await live.settled(requested.body.trace_id as number, 'approved');
    } finally {
      await live.gw.gateway.deps.store.merchants.setGatewayHoldPayouts(live.gateway, false);
      live.gw.gateway.deps.merchants.invalidate();
    }
    const declined = await live.process(
      liveSale(live, payoutE(live.merchant, { gateway: live.gateway, card_number: '4818192525595285', amount: 4500 })),
    );
    await live.fake.settlePayouts();
    expect(await live.settled(declined.body.trace_id as number, 'rejected')).toMatchObject({ transaction_type: 'payout' });
  });

  it('a subscription renewal is a merchant-initiated, recurring charge of the stored card, without a CVV', async () => {
    const card_token = await tokenize(live.gw.url, live.merchant);
    const plan = await createPlanVia(live.gw.url, live.merchant);
    const created = await subscribeVia(live.gw.url, live.merchant, plan, card_token, { notification_url: `${live.receiver.url}/subs` });
    const charge = await waitUntil(
      () => live.fake.requestsTo('POST /payments').find((r) => (r.json as { payment_type?: string }).payment_type === 'Recurring'),
      'the renewal at the processor',
    );
    expect(charge.json).toMatchObject({
      amount: 1999,
      currency: 'USD',
      payment_type: 'Recurring',
      merchant_initiated: true,
      source: { type: 'card', number: '4111111111111111' },
    });
    expect((charge.json as { source: Record<string, unknown> }).source.cvv).toBeUndefined();
    expect((charge.json as Record<string, unknown>)['3ds']).toBeUndefined();
    await waitUntil(
      async () =>
        (await live.gw.gateway.deps.store.subscriptions.get(live.merchant.merchant_id, String(created.subscription_id)))?.cycles_charged ===
        1,
      'the renewal booked',
    );
  });

  it('answers status 15 naming the cause: no gateway yet, a disabled gateway, a currency it does not take', async () => {
    const bare = await live.gw.createMerchant();
    expect(bare.gateway).toBeNull();
    const answer = await postSigned(live.gw.url, '/api/process', saleA(bare, { order_id: orderId() }), bare.secret);
    expect(answer.body).toMatchObject({ status: 15, description: 'Gateway unavailable: this merchant has no gateway yet' });
    expect((await live.process(sale({ currency: 'JPY' }))).body).toMatchObject({
      status: 15,
      description: `Gateway unavailable: gateway ${live.gateway} does not accept JPY`,
    });
  });
});
