// The life of a payment after its answer through the `stripe` connector (decisions §16, issue 26),
// against the fake Stripe over real HTTP, on both stores, the merchant's site a real server
// checking every notification's signature: an authorization (capture_method manual), a partial
// capture (Stripe answers at once: approved with the captured amount; its two webhook events
// change nothing more), a replay with one capture at Stripe, a void, Stripe cancelling an expired
// authorization, a capture whose answer is lost settled by asking Stripe, a chargeback and its
// outcome, and Dashboard refunds (a reversal, or part of it a recorded refund). Every request and
// event is checked against Stripe's published description.
import { describe, expect, it } from 'vitest';
import { saleA } from '../support/bodies.js';
import {
  closeStripeDispute,
  expireStripeAuthorization,
  FAILURE_ENV,
  type LiveStripe,
  liveSale,
  openStripeDispute,
  refundInStripeDashboard,
  startLiveStripe,
  stripeIntentOf,
} from '../support/live-stripe.js';
import { withLiveGateway } from '../support/live-gateway.js';
import { waitUntil } from '../support/notification-merchant.js';
import { storeKinds } from '../support/stores.js';

const APPROVED = '4242424242424242';

describe.each(storeKinds())('authorizations, chargebacks and reversals through Stripe on %s', (kind) => {
  let live: LiveStripe;
  withLiveGateway(
    () => startLiveStripe(kind, { env: { ...FAILURE_ENV } }),
    (started) => (live = started),
  );

  const action = (path: '/api/capture' | '/api/void', trace_id: number, amount?: number) =>
    live.process(
      {
        merchant_id: live.merchant.merchant_id,
        application_key: live.merchant.application_key,
        reference_id: trace_id,
        ...(amount === undefined ? {} : { amount }),
        version: '1.2',
        timestamp: Math.floor(Date.now() / 1000),
      },
      path,
    );
  const captureRequests = (intent_id: string) =>
    live.fake.requestsTo('POST /v1/payment_intents/{intent}/capture').filter((r) => r.path === `/v1/payment_intents/${intent_id}/capture`);
  async function pay(transaction_type: 'sale' | 'authorize', amount: number): Promise<number> {
    const answer = await live.process(
      liveSale(live, saleA(live.merchant, { gateway: live.gateway, card_number: APPROVED, transaction_type, amount })),
    );
    const expected = transaction_type === 'sale' ? 'approved' : 'authorized';
    expect(answer.body).toMatchObject({ status: 0, transaction_status: expected, payment_processor: 'stripe' });
    await live.settled(answer.body.trace_id as number, expected);
    return answer.body.trace_id as number;
  }

  it('authorizes with capture_method manual, captures part at once, and a replay makes no second capture or notification', async () => {
    const trace_id = await pay('authorize', 5000);
    const intent = stripeIntentOf(live, trace_id);
    expect(intent).toMatchObject({ capture_method: 'manual', status: 'requires_capture', amount_capturable: 5000 });
    const first = await action('/api/capture', trace_id, 3500);
    expect(first.body).toMatchObject({ status: 0, trace_id, transaction_status: 'approved' });
    const notice = await live.settled(trace_id, 'approved');
    expect(notice).toMatchObject({ transaction_type: 'authorize', amount: 3500, charge_amount: 3500 });
    expect(stripeIntentOf(live, trace_id)).toMatchObject({ status: 'succeeded', amount_received: 3500, amount_released: 1500 });
    expect((await action('/api/capture', trace_id, 3500)).body).toMatchObject({ status: 0, transaction_status: 'approved' });
    expect(captureRequests(intent.id)).toHaveLength(1);
    // charge.captured and payment_intent.succeeded both arrive; neither changes anything more.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(live.notifications(trace_id).map((n) => n.transaction_status)).toEqual(['authorized', 'approved']);
    expect(await live.gw.gateway.deps.store.transactions.listRefundsOf(trace_id, 10)).toEqual([]);
  });

  it('voids an authorization (cancelled, notified once); Stripe cancelling an expired one makes it cancelled too', async () => {
    const voided = await pay('authorize', 1200);
    expect((await action('/api/void', voided)).body).toMatchObject({ status: 0, transaction_status: 'cancelled' });
    await live.settled(voided, 'cancelled');
    expect(stripeIntentOf(live, voided)).toMatchObject({ status: 'canceled' });
    expect(live.notifications(voided).map((n) => n.transaction_status)).toEqual(['authorized', 'cancelled']);

    const expired = await pay('authorize', 1300);
    await expireStripeAuthorization(live, expired);
    await live.settled(expired, 'cancelled');
    expect((await action('/api/capture', expired)).body).toMatchObject({ status: 37 });
  });

  it('a capture whose answer never comes is settled by asking Stripe, never guessed', async () => {
    const trace_id = await pay('authorize', 2000);
    live.fake.holdEvents(true);
    live.fake.hangNextCapture();
    const answer = await action('/api/capture', trace_id, 1500);
    expect(answer.body).toMatchObject({ status: 0 });
    expect(['authorized', 'approved']).toContain(answer.body.transaction_status);
    const notice = await live.settled(trace_id, 'approved', 30_000);
    expect(notice).toMatchObject({ amount: 1500 });
    expect(stripeIntentOf(live, trace_id)).toMatchObject({ amount_received: 1500 });
  });

  it('a chargeback: charge.dispute.created moves the sale to chargeback once, notified with the disputed amount; closed won is recorded', async () => {
    const trace_id = await pay('sale', 4000);
    const dispute = await openStripeDispute(live, trace_id, { amount: 4000, reason: 'fraudulent' });
    const notice = await live.settled(trace_id, 'chargeback');
    expect(notice).toMatchObject({ transaction_type: 'sale', amount: 4000 });
    const store = live.gw.gateway.deps.store;
    const [row] = await store.disputes.listForTransaction(trace_id, 10);
    expect(row).toMatchObject({ psp_dispute_id: dispute.id, amount_minor: 4000, stage: 'evidence_required', reason: 'fraudulent' });
    expect(row!.evidence_due_at_ms).toEqual(expect.any(Number));
    await closeStripeDispute(live, dispute.id, 'won');
    await waitUntil(async () => {
      const [current] = await store.disputes.listForTransaction(trace_id, 10);
      return current?.stage === 'won' ? current : undefined;
    }, 'the dispute won');
    expect((await live.row(trace_id)).status).toBe('chargeback');
    expect(live.notifications(trace_id).map((n) => n.transaction_status)).toEqual(['approved', 'chargeback']);
  });

  it("refunds made in Stripe's Dashboard: the whole amount reverses the sale; part of it is a refund of the gateway's, notified", async () => {
    const whole = await pay('sale', 1800);
    await refundInStripeDashboard(live, whole);
    expect(await live.settled(whole, 'reversed')).toMatchObject({ amount: 1800 });

    const part = await pay('sale', 3000);
    await refundInStripeDashboard(live, part, 700);
    const store = live.gw.gateway.deps.store;
    const refund = await waitUntil(async () => (await store.transactions.listRefundsOf(part, 10))[0], 'the recorded refund');
    expect(refund).toMatchObject({ status: 'approved', amount_minor: 700, reference_id: part });
    expect(await live.settled(refund.trace_id, 'approved')).toMatchObject({ transaction_type: 'refund', reference_id: part, amount: 700 });
    expect(await live.row(part)).toMatchObject({ status: 'approved', refund_reserved_minor: 700 });
  });
});
