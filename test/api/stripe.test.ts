// Live processing through the `stripe` connector (issue 17, decisions.md §13), against the fake
// Stripe on 127.0.0.1 over real HTTP and through the official `stripe` package, on both stores: a
// merchant's signed sale approved, declined softly and hard (Stripe's decline codes), sent to
// 3-D Secure and back, refunded in part and in full (at once, and pending then settled by webhook),
// a renewal charged off-session, webhooks verified by their signature; each ends in the right
// transaction_status with a signed notification at the merchant's site, and every request the
// package sent and every answer and event the fake gave is checked against Stripe's published
// API description (fake.violations stays empty).
import { describe, expect, it } from 'vitest';
import { refundC, saleA } from '../support/bodies.js';
import { type LiveStripe, liveSale, startLiveStripe, STRIPE_WEBHOOK_SECRET } from '../support/live-stripe.js';
import { withLiveGateway } from '../support/live-gateway.js';
import { waitUntil } from '../support/notification-merchant.js';
import { payoutE } from '../support/payout-bodies.js';
import { stripeSignatureHeader } from '../support/stripe/fake.js';
import { storeKinds } from '../support/stores.js';
import { createPlanVia, subscribeVia, tokenize } from '../support/v13.js';

/** Stripe's test cards (docs.stripe.com/testing). */
const APPROVED = '4242424242424242';
const GENERIC_DECLINE = '4000000000000002';
const INSUFFICIENT_FUNDS = '4000000000009995';
const LOST_CARD = '4000000000009987';
const INCORRECT_CVC = '4000000000000127';
const THREE_DS = '4000000000003220';
const REFUND_PENDING = '4000000000007726';

describe.each(storeKinds())('live sales through Stripe on %s', (kind) => {
  let live: LiveStripe;
  withLiveGateway(
    () => startLiveStripe(kind),
    (started) => (live = started),
  );

  const sale = (overrides: Record<string, unknown> = {}) =>
    liveSale(live, saleA(live.merchant, { gateway: live.gateway, card_number: APPROVED, ...overrides }));
  const refund = (sale_trace: number, amount: number, card_number = APPROVED) =>
    liveSale(live, refundC(live.merchant, sale_trace, { amount, currency: 'USD', card_number }));
  /** The PaymentIntent Stripe holds for our trace_id (its metadata). */
  const intentsOf = (trace_id: number) => live.fake.intentsWithMetadata('paygate_trace_id', String(trace_id));
  const allDelivered = (trace_id: number) =>
    waitUntil(
      async () => (await live.gw.gateway.deps.store.notifications.listOfTransaction(trace_id)).every((n) => n.state === 'delivered'),
      'delivered',
    );

  it("an approved sale: status 0, approved, the PaymentIntent's id, a card token, one signed notification, one PaymentIntent", async () => {
    const body = sale({ amount: 1999 });
    const answer = await live.process(body);
    expect(answer.body).toMatchObject({
      status: 0,
      transaction_status: 'approved',
      payment_processor: 'stripe',
      transaction_id: expect.stringMatching(/^pi_/),
      error_code: 'succeeded',
      card_token: expect.any(String),
    });
    const trace_id = answer.body.trace_id as number;
    const notification = await live.settled(trace_id, 'approved');
    expect(notification).toMatchObject({
      transaction_id: answer.body.transaction_id,
      card_token: answer.body.card_token,
      amount: 1999,
      currency: 'USD',
    });
    // At Stripe: one PaymentIntent, confirmed with the card's data, our trace_id and the merchant's order in its metadata.
    const intents = intentsOf(trace_id);
    expect(intents).toHaveLength(1);
    expect(intents[0]).toMatchObject({
      id: answer.body.transaction_id,
      status: 'succeeded',
      amount: 1999,
      amount_received: 1999,
      currency: 'usd',
      card_last4: '4242',
      metadata: { paygate_trace_id: String(trace_id), paygate_reference: expect.any(String) },
      off_session: false,
    });
    const sent = live.fake
      .requestsTo('POST /v1/payment_intents')
      .find((r) => r.idempotency_key === `paygate-${live.gateway}-${trace_id}-sale`)!;
    expect(sent.headers.authorization).toBe(`Bearer ${live.fake.secret_key}`);
    expect(sent.form).toMatchObject({
      amount: 1999,
      currency: 'usd',
      confirm: true,
      allowed_payment_method_types: ['card'],
      payment_method_data: { type: 'card', card: { number: APPROVED, exp_month: 12, exp_year: 2035, cvc: '568' } },
    });
    // Stripe's webhooks (payment_intent.succeeded...) confirm what was answered: no second notification.
    await live.fake.waitForEvent(
      (e) => e.payment_intent_id === answer.body.transaction_id && e.type === 'payment_intent.succeeded' && e.state === 'delivered',
    );
    await allDelivered(trace_id);
    expect(live.notifications(trace_id)).toHaveLength(1);
    // The same request again: the same answer, nothing new at Stripe.
    const replay = await live.process({ ...body, timestamp: (body.timestamp as number) + 1 });
    expect(replay.body).toMatchObject({ status: 0, trace_id, transaction_status: 'approved', transaction_id: answer.body.transaction_id });
    expect(intentsOf(trace_id)).toHaveLength(1);
  });

  it("declines: Stripe's decline code as error_code and its message, the PaymentIntent's id, notified; no card token", async () => {
    for (const [card_number, error_code, details] of [
      [GENERIC_DECLINE, 'generic_decline', /declined/i],
      [INSUFFICIENT_FUNDS, 'insufficient_funds', /insufficient funds/i],
      [LOST_CARD, 'lost_card', /declined/i],
      [INCORRECT_CVC, 'incorrect_cvc', /security code/i],
    ] as const) {
      const answer = await live.process(sale({ card_number, amount: 2000 }));
      expect(answer.body, card_number).toMatchObject({
        status: 0,
        transaction_status: 'rejected',
        error_code,
        error_details: expect.stringMatching(details),
        transaction_id: expect.stringMatching(/^pi_/),
      });
      expect(answer.body.card_token).toBeUndefined();
      expect(await live.settled(answer.body.trace_id as number, 'rejected')).toMatchObject({ error_code });
      expect(intentsOf(answer.body.trace_id as number)[0]).toMatchObject({ status: 'requires_payment_method' });
    }
  });

  it("3-D Secure: pending_async with Stripe's page; the customer authenticates and comes back through the gateway: approved, notified", async () => {
    live.fake.holdEvents(true);
    const answer = await live.process(sale({ card_number: THREE_DS, amount: 3300 }));
    expect(answer.body).toMatchObject({
      status: 0,
      transaction_status: 'pending_async',
      error_details: '3-D Secure authentication required',
      redirect_url: expect.stringMatching(new RegExp(`^${live.fake.url}/3d_secure_2_test/pi_`)),
      transaction_id: expect.stringMatching(/^pi_/),
    });
    const trace_id = answer.body.trace_id as number;
    expect(live.notifications(trace_id)).toEqual([]);
    // Stripe sends the customer to the gateway's own return address, never straight to the merchant.
    const back_url = await live.fake.authenticate(answer.body.transaction_id as string, 'complete');
    expect(back_url).toMatch(new RegExp(`^${live.gw.url}/return/${trace_id}/[0-9a-f]{32}\\?outcome=success&payment_intent=pi_`));
    const back = await fetch(back_url!, { redirect: 'manual' });
    expect(back.status).toBe(303);
    expect(back.headers.get('location')).toBe(`${live.receiver.url}/return`);
    // Recorded before the customer was sent on: the gateway asked Stripe (its webhooks are held).
    expect(await live.row(trace_id)).toMatchObject({ status: 'approved', psp_transaction_id: answer.body.transaction_id });
    expect(
      live.fake.requestsTo('GET /v1/payment_intents/{intent}').some((r) => r.path.endsWith(answer.body.transaction_id as string)),
    ).toBe(true);
    expect(await live.settled(trace_id, 'approved')).toMatchObject({ transaction_id: answer.body.transaction_id, amount: 3300 });
  });

  it("3-D Secure failed by the customer: rejected with Stripe's code", async () => {
    const answer = await live.process(sale({ card_number: THREE_DS, amount: 3400 }));
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'pending_async' });
    // The customer never comes back: Stripe's webhook (payment_intent.payment_failed) settles it.
    await live.fake.authenticate(answer.body.transaction_id as string, 'fail');
    expect(await live.settled(answer.body.trace_id as number, 'rejected')).toMatchObject({
      error_code: 'payment_intent_authentication_failure',
    });
  });

  it('a partial then a full refund, each approved at once and notified; nothing more than the sale is refunded', async () => {
    const paid = await live.process(sale({ amount: 3000 }));
    expect(paid.body).toMatchObject({ transaction_status: 'approved' });
    const sale_trace = paid.body.trace_id as number;

    const partial = await live.process(refund(sale_trace, 1000));
    expect(partial.body).toMatchObject({ status: 0, transaction_status: 'approved', transaction_id: expect.stringMatching(/^re_/) });
    expect(await live.settled(partial.body.trace_id as number, 'approved')).toMatchObject({ amount: 1000, transaction_type: 'refund' });
    const rest = await live.process(refund(sale_trace, 2000));
    expect(rest.body).toMatchObject({ status: 0, transaction_status: 'approved' });
    await live.settled(rest.body.trace_id as number, 'approved');

    expect(live.fake.paymentIntent(paid.body.transaction_id as string)).toMatchObject({ amount_refunded: 3000 });
    for (const [answer, amount] of [
      [partial, 1000],
      [rest, 2000],
    ] as const) {
      const sent = live.fake
        .requestsTo('POST /v1/refunds')
        .find((r) => r.idempotency_key === `paygate-${live.gateway}-${String(answer.body.trace_id)}-refund`);
      expect(sent?.form).toMatchObject({
        payment_intent: paid.body.transaction_id,
        amount,
        metadata: { paygate_trace_id: String(answer.body.trace_id) },
      });
      expect(live.fake.refund(answer.body.transaction_id as string)).toMatchObject({ status: 'succeeded', amount });
    }
    // Stripe's refund.created webhooks change nothing more.
    await live.fake.waitForEvent((e) => e.refund_id === rest.body.transaction_id && e.type === 'refund.created' && e.state === 'delivered');
    await allDelivered(rest.body.trace_id as number);
    expect(live.notifications(rest.body.trace_id as number)).toHaveLength(1);

    const over = await live.process(refund(sale_trace, 1));
    expect(over.body).toMatchObject({ status: 14 });
    expect(live.fake.requestsTo('POST /v1/refunds').filter((r) => r.form.payment_intent === paid.body.transaction_id)).toHaveLength(2);
  });

  it("a refund Stripe takes pending: answered pending, then approved by Stripe's refund.updated webhook and notified", async () => {
    const paid = await live.process(sale({ card_number: REFUND_PENDING, amount: 2500 }));
    expect(paid.body).toMatchObject({ transaction_status: 'approved' });
    const answer = await live.process(refund(paid.body.trace_id as number, 2500, REFUND_PENDING));
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'pending', transaction_id: expect.stringMatching(/^re_/) });
    const trace_id = answer.body.trace_id as number;
    expect(live.notifications(trace_id)).toEqual([]);
    await live.fake.settleRefunds();
    expect(await live.settled(trace_id, 'approved')).toMatchObject({
      transaction_type: 'refund',
      amount: 2500,
      transaction_id: answer.body.transaction_id,
    });
  });

  it('a subscription renewal is charged off-session, without a CVV', async () => {
    const card_token = await tokenize(live.gw.url, live.merchant, 'cust-42', APPROVED);
    const plan = await createPlanVia(live.gw.url, live.merchant);
    const created = await subscribeVia(live.gw.url, live.merchant, plan, card_token, { notification_url: `${live.receiver.url}/subs` });
    const charge = await waitUntil(
      () => live.fake.requestsTo('POST /v1/payment_intents').find((r) => r.form.off_session === true),
      'the renewal at Stripe',
    );
    expect(charge.form).toMatchObject({ amount: 1999, currency: 'usd', payment_method_data: { card: { number: APPROVED } } });
    expect((charge.form.payment_method_data as { card: Record<string, unknown> }).card.cvc).toBeUndefined();
    expect(charge.form.error_on_requires_action).toBeUndefined();
    await waitUntil(
      async () =>
        (await live.gw.gateway.deps.store.subscriptions.get(live.merchant.merchant_id, String(created.subscription_id)))?.cycles_charged ===
        1,
      'the renewal booked',
    );
  });

  it("Stripe pays out only to the account's bank: a card payout through this gateway is refused with status 15", async () => {
    const answer = await live.process(liveSale(live, payoutE(live.merchant, { gateway: live.gateway, amount: 4300 })));
    expect(answer.body).toMatchObject({
      status: 15,
      description: expect.stringMatching(new RegExp(`^Gateway unavailable: gateway ${live.gateway} `)),
    });
    expect(live.fake.requestsTo('POST /v1/payment_intents').filter((r) => r.form.amount === 4300)).toEqual([]);
  });

  it("a webhook with a bad, missing, stale or another secret's signature, or a changed body: HTTP 400/401, nothing changed", async () => {
    live.fake.holdEvents(true);
    const answer = await live.process(sale({ card_number: INSUFFICIENT_FUNDS, amount: 2600 }));
    expect(answer.body).toMatchObject({ transaction_status: 'rejected' });
    const trace_id = answer.body.trace_id as number;
    // A forged "succeeded" for that PaymentIntent.
    const forged = JSON.stringify({
      id: 'evt_forged',
      object: 'event',
      type: 'payment_intent.succeeded',
      api_version: '2023-08-16',
      created: Math.floor(Date.now() / 1000),
      data: {
        object: { ...live.fake.paymentIntent(answer.body.transaction_id as string)!.json, status: 'succeeded', last_payment_error: null },
      },
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
    });
    for (const header of [
      null,
      'nonsense',
      stripeSignatureHeader(forged, 'whsec_anotherAccountsSecret0123456789'),
      stripeSignatureHeader(forged, STRIPE_WEBHOOK_SECRET, Math.floor(Date.now() / 1000) - 3600),
      stripeSignatureHeader(`${forged} `, STRIPE_WEBHOOK_SECRET),
    ]) {
      const status = await live.fake.sendRaw(forged, header);
      expect(status, String(header)).toBe(401);
    }
    expect(await live.row(trace_id)).toMatchObject({ status: 'rejected' });
    // Properly signed, the same body is read (and contradicts a final status: logged, not applied).
    expect(await live.fake.sendRaw(forged, stripeSignatureHeader(forged, STRIPE_WEBHOOK_SECRET))).toBe(200);
    expect(await live.row(trace_id)).toMatchObject({ status: 'rejected' });
  });
});
