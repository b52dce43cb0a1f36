// The life of a payment after its answer through the `checkout` connector (decisions §16, issue
// 26), against the fake Checkout.com over real HTTP, on both stores, the merchant's site a real
// server checking every notification's signature: an authorization, its partial capture (202, so
// `authorized` until payment_captured arrives, then `approved` with the captured amount), the same
// capture replayed (one capture at Checkout.com), a void, a capture whose answer is lost settled by
// asking Checkout.com, a chargeback and its later outcome, a refund made in Checkout.com's dashboard
// (a reversal, or part of it a recorded refund), and the operator's reconcile that finds one no
// webhook reported. Every request and event is checked against Checkout.com's description.
import { describe, expect, it } from 'vitest';
import { saleA } from '../support/bodies.js';
import { FAILURE_ENV, type LiveCheckout, liveSale, operatorCall, startLiveCheckout } from '../support/live-checkout.js';
import { withLiveGateway } from '../support/live-gateway.js';
import { waitUntil } from '../support/notification-merchant.js';
import { storeKinds } from '../support/stores.js';

describe.each(storeKinds())('authorizations, chargebacks and reversals through Checkout.com on %s', (kind) => {
  let live: LiveCheckout;
  withLiveGateway(
    () => startLiveCheckout(kind, { env: { ...FAILURE_ENV } }),
    (started) => (live = started),
  );

  const now_s = () => Math.floor(Date.now() / 1000);
  const action = (path: '/api/capture' | '/api/void', trace_id: number, amount?: number) =>
    live.process(
      {
        merchant_id: live.merchant.merchant_id,
        application_key: live.merchant.application_key,
        reference_id: trace_id,
        ...(amount === undefined ? {} : { amount }),
        version: '1.2',
        timestamp: now_s(),
      },
      path,
    );
  /** The Capture actions Checkout.com holds for a payment: a capture asked twice is still one. */
  const captures = (payment_id: string) => (live.fake.payment(payment_id)?.actions ?? []).filter((a) => a.type === 'Capture');
  async function authorize(amount: number): Promise<{ trace_id: number; payment_id: string }> {
    const answer = await live.process(
      liveSale(live, saleA(live.merchant, { gateway: live.gateway, transaction_type: 'authorize', amount })),
    );
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'authorized', payment_processor: 'checkout' });
    const trace_id = answer.body.trace_id as number;
    await live.settled(trace_id, 'authorized');
    return { trace_id, payment_id: answer.body.transaction_id as string };
  }
  async function sale(amount: number): Promise<{ trace_id: number; payment_id: string }> {
    const answer = await live.process(liveSale(live, saleA(live.merchant, { gateway: live.gateway, amount })));
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'approved' });
    await live.settled(answer.body.trace_id as number, 'approved');
    return { trace_id: answer.body.trace_id as number, payment_id: answer.body.transaction_id as string };
  }

  it('authorizes without capturing, captures part (authorized until Checkout.com confirms), and a replay makes no second capture', async () => {
    const { trace_id, payment_id } = await authorize(5000);
    expect(live.fake.payment(payment_id)).toMatchObject({ status: 'Authorized', captured_amount: 0 });
    live.fake.holdEvents(true);
    const first = await action('/api/capture', trace_id, 3000);
    // Checkout.com answers 202: the capture is taken, confirmed later by payment_captured.
    expect(first.body).toMatchObject({ status: 0, trace_id, transaction_status: 'authorized' });
    const again = await action('/api/capture', trace_id, 3000);
    expect(again.body).toMatchObject({ status: 0, trace_id, transaction_status: 'authorized' });
    expect(captures(payment_id)).toHaveLength(1);
    live.fake.holdEvents(false);
    await live.fake.releaseHeldEvents();
    const notice = await live.settled(trace_id, 'approved');
    expect(notice).toMatchObject({ transaction_type: 'authorize', amount: 3000, charge_amount: 3000 });
    expect(live.fake.payment(payment_id)).toMatchObject({ captured_amount: 3000, released_amount: 2000, status: 'Partially Captured' });
    expect((await live.row(trace_id)).amount_minor).toBe(3000);
    const replay = await action('/api/capture', trace_id, 3000);
    expect(replay.body).toMatchObject({ status: 0, transaction_status: 'approved' });
    expect(captures(payment_id)).toHaveLength(1);
    expect(live.notifications(trace_id).map((n) => n.transaction_status)).toEqual(['authorized', 'approved']);
  });

  it('voids an authorization: cancelled once Checkout.com confirms, notified once', async () => {
    const { trace_id, payment_id } = await authorize(1200);
    const answer = await action('/api/void', trace_id);
    expect(answer.body).toMatchObject({ status: 0, trace_id });
    await live.settled(trace_id, 'cancelled');
    expect(live.fake.payment(payment_id)).toMatchObject({ status: 'Voided' });
    expect(live.notifications(trace_id).map((n) => n.transaction_status)).toEqual(['authorized', 'cancelled']);
  });

  it('a capture whose answer never comes is settled by asking Checkout.com, never guessed or sent twice', async () => {
    const { trace_id, payment_id } = await authorize(2000);
    live.fake.holdEvents(true);
    live.fake.hangNextCapture();
    const answer = await action('/api/capture', trace_id, 1500);
    // The answer was lost: the authorization is still what the gateway knows for sure.
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'authorized' });
    expect((await live.row(trace_id)).status).toBe('authorized');
    // The due work asks Checkout.com (GET /payments/{id} and its actions) and applies what it says.
    const notice = await live.settled(trace_id, 'approved', 30_000);
    expect(notice).toMatchObject({ amount: 1500 });
    expect(captures(payment_id)).toHaveLength(1);
    expect(live.fake.payment(payment_id)).toMatchObject({ captured_amount: 1500 });
  });

  it("a chargeback: Checkout.com's dispute events move the sale to chargeback once, notified with the disputed amount; its outcome is recorded", async () => {
    const { trace_id, payment_id } = await sale(4000);
    const opened = await live.fake.openDispute(payment_id, { amount: 2500, reason_code: '10.4', category: 'fraudulent' });
    const notice = await live.settled(trace_id, 'chargeback');
    expect(notice).toMatchObject({ transaction_type: 'sale', amount: 2500 });
    const dispute = await waitUntil(async () => {
      const [row] = await live.gw.gateway.deps.store.disputes.listForTransaction(trace_id, 10);
      return row?.stage === 'evidence_required' ? row : undefined;
    }, 'the dispute at evidence_required');
    expect(dispute).toMatchObject({ psp_dispute_id: opened.id, amount_minor: 2500, currency: 'USD' });
    expect(dispute.evidence_due_at_ms).toEqual(expect.any(Number));
    expect(dispute.reason).toContain('fraudulent');
    await live.fake.moveDispute(opened.id, 'won');
    await waitUntil(async () => {
      const [row] = await live.gw.gateway.deps.store.disputes.listForTransaction(trace_id, 10);
      return row?.stage === 'won' ? row : undefined;
    }, 'the dispute won');
    expect((await live.row(trace_id)).status).toBe('chargeback');
    expect(live.notifications(trace_id).map((n) => n.transaction_status)).toEqual(['approved', 'chargeback']);
  });

  it("a refund made in Checkout.com's dashboard: the whole amount reverses the sale; part of it is a refund of the gateway's, notified", async () => {
    const whole = await sale(1800);
    await live.fake.refundFromDashboard(whole.payment_id);
    expect(await live.settled(whole.trace_id, 'reversed')).toMatchObject({ transaction_type: 'sale', amount: 1800 });

    const part = await sale(3000);
    await live.fake.refundFromDashboard(part.payment_id, 1000);
    const store = live.gw.gateway.deps.store;
    const refund = await waitUntil(async () => (await store.transactions.listRefundsOf(part.trace_id, 10))[0], 'the recorded refund');
    expect(refund).toMatchObject({ status: 'approved', amount_minor: 1000, reference_id: part.trace_id });
    const notice = await live.settled(refund.trace_id, 'approved');
    expect(notice).toMatchObject({ transaction_type: 'refund', reference_id: part.trace_id, amount: 1000 });
    expect(await live.row(part.trace_id)).toMatchObject({ status: 'approved', refund_reserved_minor: 1000 });
  });

  it("the operator's reconcile finds a dashboard refund no webhook reported, and records it once", async () => {
    const { trace_id, payment_id } = await sale(2600);
    live.fake.holdEvents(true);
    await live.fake.refundFromDashboard(payment_id, 600);
    const first = await operatorCall(live.gw, 'POST', `/operator/transactions/${trace_id}/reconcile`);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ status: 0, transaction_status: 'approved', applied: [expect.stringContaining('600')] });
    const again = await operatorCall(live.gw, 'POST', `/operator/transactions/${trace_id}/reconcile`);
    expect(again.body).toMatchObject({ status: 0, applied: [] });
    // The webhook arriving late records nothing more.
    live.fake.holdEvents(false);
    await live.fake.releaseHeldEvents();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await live.gw.gateway.deps.store.transactions.listRefundsOf(trace_id, 10)).toHaveLength(1);
    expect(await live.row(trace_id)).toMatchObject({ status: 'approved', refund_reserved_minor: 600 });
  });
});
