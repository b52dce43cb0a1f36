// The ways Adyen fails, through a live gateway on both stores, as for Checkout.com
// (checkout-failures.test.ts): a time-out, HTTP 500 once, a connection reset after the request
// was sent, an answer that does not parse, and the AUTHORISATION notification arriving before the
// synchronous answer. Adyen has no call that reads a payment back (docs/connectors.md §10), so a
// lost answer is settled by the AUTHORISATION notification Adyen sends for every payment. For
// each: what the merchant is answered, that Adyen holds one payment for the order (every try
// carried the same Idempotency-Key), and one notification of the final status. (Duplicate and
// forged notifications: adyen.test.ts.)
import { describe, expect, it } from 'vitest';
import { saleA, VISA } from '../support/bodies.js';
import { FAILURE_ENV, type LiveAdyen, liveSale, startLiveAdyen, TEST_CARD_CVCS } from '../support/live-adyen.js';
import { withLiveGateway } from '../support/live-gateway.js';
import { waitUntil } from '../support/notification-merchant.js';
import { storeKinds } from '../support/stores.js';

describe.each(storeKinds())('Adyen failures through a live gateway on %s', (kind) => {
  let live: LiveAdyen;
  withLiveGateway(
    () => startLiveAdyen(kind, { env: FAILURE_ENV }),
    (started) => (live = started),
  );

  const sale = (amount: number) => liveSale(live, saleA(live.merchant, { gateway: live.gateway, cvv: TEST_CARD_CVCS[VISA], amount }));

  /** Every /payments request for this order carried the same Idempotency-Key, and Adyen holds one payment of it. */
  function onePaymentAtAdyen(order_id: string, trace_id: number): void {
    expect(live.fake.paymentsWithReference(order_id)).toHaveLength(1);
    const keys = new Set(
      live.fake
        .requestsTo('payments')
        .filter((r) => r.body.includes(`"${order_id}"`))
        .map((r) => r.idempotency_key),
    );
    expect([...keys]).toEqual([`paygate-${live.gateway}-${trace_id}-sale`]);
  }

  async function notifiedOnce(trace_id: number, status: string): Promise<void> {
    await waitUntil(
      async () => (await live.gw.gateway.deps.store.notifications.listOfTransaction(trace_id)).every((n) => n.state === 'delivered'),
      'delivered',
    );
    expect(live.notifications(trace_id).map((n) => n.transaction_status)).toEqual([status]);
  }

  it.each(['timeout', 'reset_after_processing', 'garbage'] as const)(
    "%s: answered pending, then Adyen's AUTHORISATION notification approves it; one payment, one notification",
    async (mode) => {
      live.fake.holdEvents(true);
      live.fake.failNext('payments', mode);
      const body = sale(3100 + ['timeout', 'reset_after_processing', 'garbage'].indexOf(mode));
      const answer = await live.process(body);
      expect(answer.body).toMatchObject({ status: 0, transaction_status: 'pending' });
      const trace_id = answer.body.trace_id as number;
      // Nothing is guessed while Adyen has not said.
      expect(await live.row(trace_id)).toMatchObject({ status: 'pending' });
      live.fake.holdEvents(false);
      await live.fake.releaseHeldEvents();
      await live.settled(trace_id, 'approved');
      const psp = live.fake.paymentsWithReference(body.order_id as string)[0]!.psp;
      expect(await live.row(trace_id)).toMatchObject({ psp_transaction_id: psp });
      onePaymentAtAdyen(body.order_id as string, trace_id);
      await notifiedOnce(trace_id, 'approved');
      // The merchant sending the sale again gets the answer it got the first time (decisions §6), no second payment.
      const replay = await live.process({ ...body, timestamp: (body.timestamp as number) + 1 });
      expect(replay.body).toMatchObject({ status: 0, trace_id, transaction_status: 'pending' });
      onePaymentAtAdyen(body.order_id as string, trace_id);
    },
  );

  it('HTTP 500 once: sent again with the same Idempotency-Key and approved; one payment, one notification', async () => {
    live.fake.failNext('payments', 'http_500');
    const body = sale(3200);
    const answer = await live.process(body);
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'approved' });
    const trace_id = answer.body.trace_id as number;
    await live.settled(trace_id, 'approved');
    onePaymentAtAdyen(body.order_id as string, trace_id);
    await notifiedOnce(trace_id, 'approved');
  });

  it('the AUTHORISATION notification before the answer: approved once, notified once', async () => {
    live.fake.failNext('payments', 'webhook_first');
    const body = sale(3300);
    const answer = await live.process(body);
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'approved' });
    const trace_id = answer.body.trace_id as number;
    await live.settled(trace_id, 'approved');
    onePaymentAtAdyen(body.order_id as string, trace_id);
    await notifiedOnce(trace_id, 'approved');
  });
});
