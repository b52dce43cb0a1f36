// Live processing through the `paypal` connector (issue 27, decisions §17), against the fake PayPal
// on 127.0.0.1 over real HTTP, on both stores: direct payouts to a PayPal account (paid, returned
// after being paid, failed, unclaimed then claimed; duplicate, forged and early webhooks) and
// payouts whose answer was lost (time-out, reset, garbled: settled by the item's webhook) and
// deposits by the hosted cashier over HTTP (the customer sent to PayPal's approval page, approving
// or cancelling there, the gateway capturing once they are back; a refund of one; a buyer's dispute
// of one, a §16 chargeback; a capture whose answer is lost, settled by the scheduled lookup without
// a second capture). Each ends in the
// right transaction_status with one signed notification of it at the merchant's site, and every
// request, answer and event the fake saw is checked against PayPal's published descriptions.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CashierCustomer, initCheckout, initPayIn, openSession, textOf } from '../support/cashier.js';
import { signedReply } from '../support/notification-merchant.js';
import { withLiveGateway } from '../support/live-gateway.js';
import { FAILURE_ENV, type LivePayPal, orderIdOf, startLivePayPal } from '../support/live-paypal.js';
import { refundFromBackOffice } from '../../src/operations/backoffice-refund.js';
import { refundC } from '../support/bodies.js';
import { waitUntil } from '../support/notification-merchant.js';
import { direct, without } from '../support/payout-bodies.js';
import { storeKinds } from '../support/stores.js';

let seq = 0;
/** A receiver no other test uses, so that its payout item is found at the fake. */
const receiverEmail = () => `payee-${Date.now().toString(36)}-${(seq += 1)}@example.com`;

describe.each(storeKinds())('PayPal through a live gateway on %s', (kind) => {
  let live: LivePayPal;
  withLiveGateway(
    () => startLivePayPal(kind, { env: FAILURE_ENV }),
    (started) => (live = started),
  );

  /** The statuses the merchant was notified of, in order. */
  const notified = (trace_id: number) => live.notifications(trace_id).map((n) => n.transaction_status);

  const delivered = (trace_id: number) =>
    waitUntil(
      async () => (await live.gw.gateway.deps.store.notifications.listOfTransaction(trace_id)).every((n) => n.state === 'delivered'),
      `notifications of ${trace_id} delivered`,
    );

  function payoutBody(receiver: string, amount: number): Record<string, unknown> {
    return without(
      direct(live.merchant, {
        gateway: live.gateway,
        amount,
        currency: 'USD',
        data_recipient_type: 'EMAIL',
        data_receiver: receiver,
        notification_url: `${live.receiver.url}/notify`,
        return_url: `${live.receiver.url}/return`,
      }),
      'data_account_number',
      'data_bank_code',
    );
  }

  /** A direct payout to a PayPal account, accepted (pending); its item at the fake. */
  async function payout(amount: number) {
    const receiver = receiverEmail();
    const answer = await live.process(payoutBody(receiver, amount), '/api/direct');
    expect(answer.body, JSON.stringify(answer.body)).toMatchObject({ status: 0, transaction_status: 'pending', payment_method: 'paypal' });
    const trace_id = answer.body.trace_id as number;
    const items = live.fake.payoutItemsOf(answer.body.transaction_id as string);
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ receiver, recipient_type: 'EMAIL', sender_item_id: `paygate-${trace_id}` });
    expect(items[0]!.amount).toEqual({ currency: 'USD', value: (amount / 100).toFixed(2) });
    return { trace_id, item_id: items[0]!.payout_item_id, batch_id: answer.body.transaction_id as string, receiver };
  }

  it('a payout paid (SUCCESS): approved, one signed notification; returned afterwards (RETURNED): reversed', async () => {
    const paid = await payout(4100);
    await live.fake.settlePayoutItem(paid.item_id, 'SUCCESS');
    const notification = await live.settled(paid.trace_id, 'approved');
    expect(notification).toMatchObject({ transaction_type: 'payout', amount: 4100, currency: 'USD', transaction_id: paid.batch_id });
    await delivered(paid.trace_id);
    expect(notified(paid.trace_id).filter((s) => s === 'approved')).toHaveLength(1);

    await live.fake.settlePayoutItem(paid.item_id, 'RETURNED');
    await live.settled(paid.trace_id, 'reversed');
    await delivered(paid.trace_id);
    expect(notified(paid.trace_id).filter((s) => s === 'reversed')).toHaveLength(1);
  });

  it('a payout that fails (FAILED): rejected and notified', async () => {
    const failed = await payout(4200);
    await live.fake.settlePayoutItem(failed.item_id, 'FAILED');
    expect(await live.settled(failed.trace_id, 'rejected')).toMatchObject({ transaction_type: 'payout', error_code: 'FAILED' });
    await delivered(failed.trace_id);
    expect(notified(failed.trace_id).filter((s) => s === 'rejected')).toHaveLength(1);
  });

  it('a payout to someone without an account (UNCLAIMED): pending, then claimed (SUCCESS): approved, notified once', async () => {
    const unclaimed = await payout(4300);
    await live.fake.settlePayoutItem(unclaimed.item_id, 'UNCLAIMED');
    // Still pending after PayPal's word and the lookups that follow it.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await live.row(unclaimed.trace_id)).status).toBe('pending');
    await live.fake.settlePayoutItem(unclaimed.item_id, 'SUCCESS');
    await live.settled(unclaimed.trace_id, 'approved');
    await delivered(unclaimed.trace_id);
    expect(notified(unclaimed.trace_id).filter((s) => s === 'approved')).toHaveLength(1);
  });

  it.each(['timeout', 'reset_after_processing', 'garbage'] as const)(
    "a payout whose answer is lost (%s): pending, settled by the item's webhook; one batch, one item, one notification",
    async (mode) => {
      const receiver = receiverEmail();
      live.fake.failNext('payouts.create', mode);
      const answer = await live.process(payoutBody(receiver, 1900), '/api/direct');
      expect(answer.body, JSON.stringify(answer.body)).toMatchObject({ status: 0, transaction_status: 'pending' });
      const trace_id = answer.body.trace_id as number;
      // PayPal made the payout: one item, keyed by the trace_id (sender_item_id), whatever the gateway heard.
      const items = live.fake.payout_items.filter((item) => item.sender_item_id === `paygate-${trace_id}`);
      expect(items).toHaveLength(1);
      await live.fake.settlePayoutItem(items[0]!.payout_item_id, 'SUCCESS');
      await live.settled(trace_id, 'approved');
      await delivered(trace_id);
      expect(notified(trace_id).filter((s) => s === 'approved')).toHaveLength(1);
      expect(live.fake.payout_items.filter((item) => item.sender_item_id === `paygate-${trace_id}`)).toHaveLength(1);
    },
  );

  it('a duplicate webhook changes nothing; a forged one is refused 401 and changes nothing', async () => {
    const paid = await payout(4400);
    await live.fake.settlePayoutItem(paid.item_id, 'SUCCESS');
    await live.settled(paid.trace_id, 'approved');
    await delivered(paid.trace_id);
    const event = live.fake.events.find((e) => e.resource_id === paid.item_id && e.type === 'PAYMENT.PAYOUTS-ITEM.SUCCEEDED')!;
    expect(event).toBeDefined();
    const changes_before = await live.gw.gateway.deps.store.transactions.listStatusChanges(paid.trace_id);
    expect(await live.fake.redeliver(event.id)).toBe(200);
    expect(await live.gw.gateway.deps.store.transactions.listStatusChanges(paid.trace_id)).toEqual(changes_before);

    // A failure forged from the real event: PayPal's verify call says FAILURE.
    const other = await payout(4500);
    const forged = event.body
      .replaceAll(paid.item_id, other.item_id)
      .replaceAll(paid.batch_id, other.batch_id)
      .replaceAll(`paygate-${paid.trace_id}`, `paygate-${other.trace_id}`)
      .replace('"SUCCESS"', '"FAILED"')
      .replace('PAYMENT.PAYOUTS-ITEM.SUCCEEDED', 'PAYMENT.PAYOUTS-ITEM.FAILED');
    expect(await live.fake.sendRaw(forged, event.signature)).toBe(401);
    expect(await live.fake.sendRaw(forged, null)).toBe(401);
    expect(await live.fake.sendRaw(forged, 'f'.repeat(64))).toBe(401);
    expect(
      (await live.gw.gateway.deps.store.merchants.listProcessorEvents(live.gateway, 1000)).filter((e) => e.trace_id === other.trace_id),
    ).toEqual([]);
    expect((await live.row(other.trace_id)).status).toBe('pending');
    expect(notified(other.trace_id).filter((s) => s !== 'pending')).toEqual([]);
  });

  it("a webhook arriving before the payout's answer: settled once, by whichever comes first", async () => {
    live.fake.failNext('payouts.create', 'timeout');
    const receiver = receiverEmail();
    const answering = live.process(payoutBody(receiver, 4600), '/api/direct');
    // PayPal made the batch and pays the item while the gateway still waits for its answer.
    const item = await waitUntil(() => live.fake.payout_items.find((i) => i.receiver === receiver), 'the payout item at the fake');
    await live.fake.settlePayoutItem(item.payout_item_id, 'SUCCESS');
    const answer = await answering;
    expect(answer.body).toMatchObject({ status: 0 });
    const trace_id = answer.body.trace_id as number;
    expect(item.sender_item_id).toBe(`paygate-${trace_id}`);
    await live.settled(trace_id, 'approved');
    await delivered(trace_id);
    expect(notified(trace_id).filter((s) => s === 'approved')).toHaveLength(1);
    // One batch at PayPal: a retry of the same payout never makes a second.
    expect(live.fake.payout_items.filter((i) => i.receiver === receiver)).toHaveLength(1);
  });

  /** A customer who opened the merchant's cashier (a checkout, or a pay-in) and chose PayPal: at PayPal's approval page. */
  async function depositAtPayPal(flavour: 'checkout' | 'pay-in', amount: number) {
    live.receiver.setReply('/validate', () => signedReply(live.merchant.secret, 0, 'Accepted'));
    const body =
      flavour === 'checkout'
        ? initCheckout(live.merchant, live.receiver.url, { amount, payment_method: 'ewallet' })
        : initPayIn(live.merchant, live.receiver.url, { payment_method: 'ewallet' });
    const opened = await openSession(live.gw, flavour === 'checkout' ? '/api/init-checkout' : '/api/init-pay-in', body, live.merchant);
    expect(opened.body, JSON.stringify(opened.body)).toMatchObject({ status: 0 });
    const customer = new CashierCustomer(live.gw.url);
    const page = await customer.login(opened.body.redirect_url as string);
    expect(page.status).toBe(200);
    // The e-wallet is PayPal, and no wallet account is asked: the buyer logs in at PayPal.
    expect(textOf(page.text)).toContain('PayPal');
    expect(page.text).not.toContain('name="wallet_id"');
    expect(page.text).not.toContain('name="card_number"');
    const fields: Record<string, string> = { method: 'ewallet' };
    if (flavour === 'pay-in') fields.amount = (amount / 100).toFixed(2);
    const paid = await customer.post('/cashier/pay', fields, page.text, false);
    // PayPal's page is elsewhere: the cashier gives a link to it.
    const approval_url = new RegExp(`href="(${live.fake.url.replace(/[.]/g, '\\.')}/checkoutnow\\?token=[^"]+)"`).exec(paid.text)?.[1];
    expect(approval_url, paid.text.slice(0, 2000)).toBeDefined();
    const order_id = orderIdOf(live, approval_url!.replace(/&amp;/g, '&'));
    const order = live.fake.order(order_id)!;
    const trace_id = Number(order.custom_id!.replace('paygate-', ''));
    expect(await live.row(trace_id)).toMatchObject({ status: 'pending_async', payment_method: 'ewallet', psp_transaction_id: order_id });
    expect(order.return_url).toMatch(new RegExp(`^${live.gw.url}/return/${trace_id}/[0-9a-f]{32}\\?outcome=success$`));
    expect(order.cancel_url).toMatch(new RegExp(`^${live.gw.url}/return/${trace_id}/[0-9a-f]{32}\\?outcome=failure$`));
    return { customer, order_id, trace_id, amount };
  }

  /** The buyer comes back by the way PayPal sends them (the order's return_url or cancel_url, with its token). */
  async function comeBack(customer: CashierCustomer, to: string, order_id: string, payer_id: string | null) {
    const url = new URL(to);
    url.searchParams.set('token', order_id);
    if (payer_id !== null) url.searchParams.set('PayerID', payer_id);
    return customer.get(url.toString());
  }

  const captureRequests = (order_id: string) =>
    live.fake.requestsTo('orders.capture').filter((r) => r.path === `/v2/checkout/orders/${order_id}/capture`);

  it('a deposit by the cashier (checkout): approved at PayPal, captured once the buyer is back, notified once; refundable', async () => {
    const deposit = await depositAtPayPal('checkout', 2500);
    await live.fake.approve(deposit.order_id);
    const order = live.fake.order(deposit.order_id)!;
    const back = await comeBack(deposit.customer, order.return_url!, deposit.order_id, order.payer_id);
    expect(back.status).toBe(200);
    // Recorded before the customer saw the attempt page: the gateway captured on the way.
    expect(await live.row(deposit.trace_id)).toMatchObject({ status: 'approved' });
    const notification = await live.settled(deposit.trace_id, 'approved');
    expect(notification).toMatchObject({ amount: 2500, currency: 'USD', payment_method: 'ewallet' });
    expect(live.fake.order(deposit.order_id)).toMatchObject({ status: 'COMPLETED' });
    expect(live.fake.order(deposit.order_id)!.captures).toHaveLength(1);
    expect(captureRequests(deposit.order_id)).toHaveLength(1);
    // Back again (a reload): nothing captured twice, nothing notified twice.
    await comeBack(deposit.customer, order.return_url!, deposit.order_id, order.payer_id);
    await delivered(deposit.trace_id);
    expect(notified(deposit.trace_id).filter((s) => s === 'approved')).toHaveLength(1);
    expect(live.fake.order(deposit.order_id)!.captures).toHaveLength(1);

    // A card refund (card fields, no payment_method paypal) asks for the card the sale was paid with: a wallet deposit has none.
    const by_api = await live.process(
      refundC(live.merchant, deposit.trace_id, { amount: 1000, notification_url: `${live.receiver.url}/notify` }),
    );
    expect(by_api.body.status, JSON.stringify(by_api.body)).not.toBe(0);
    // The back office's refund (no card checks) refunds it at PayPal.
    const sale = await live.row(deposit.trace_id);
    const refunded = await refundFromBackOffice(live.gw.gateway.deps, sale, 1000, 'r'.repeat(32));
    expect(refunded.kind).toBe('processed');
    const refund_trace = (refunded as { answer: Record<string, unknown> }).answer.trace_id as number;
    expect(await live.settled(refund_trace, 'approved')).toMatchObject({ transaction_type: 'refund', amount: 1000 });
    const capture_id = live.fake.order(deposit.order_id)!.captures[0]!.id;
    expect(live.fake.refunds.filter((r) => r.capture_id === capture_id)).toEqual([
      expect.objectContaining({ custom_id: `paygate-${refund_trace}`, amount: { currency_code: 'USD', value: '10.00' } }),
    ]);
  });

  it("a buyer's dispute of a deposit (CUSTOMER.DISPUTE.*): chargeback with the disputed amount, notified once; its later stages recorded", async () => {
    const deposit = await depositAtPayPal('checkout', 3000);
    await live.fake.approve(deposit.order_id);
    const order = live.fake.order(deposit.order_id)!;
    await comeBack(deposit.customer, order.return_url!, deposit.order_id, order.payer_id);
    await live.settled(deposit.trace_id, 'approved');
    const capture_id = live.fake.order(deposit.order_id)!.captures[0]!.id;

    // PayPal names the capture; the gateway finds the deposit by the capture's order.
    const dispute_id = await live.fake.openDispute(capture_id, '12.50');
    expect(await live.settled(deposit.trace_id, 'chargeback')).toMatchObject({
      transaction_type: 'sale',
      transaction_status: 'chargeback',
      amount: 1250,
      currency: 'USD',
    });
    const disputes = () => live.gw.gateway.deps.store.disputes.listForTransaction(deposit.trace_id, 10);
    expect(await disputes()).toEqual([
      expect.objectContaining({
        psp_dispute_id: dispute_id,
        stage: 'evidence_required',
        amount_minor: 1250,
        currency: 'USD',
        reason: 'MERCHANDISE_OR_SERVICE_NOT_RECEIVED',
        evidence_due_at_ms: expect.any(Number),
      }),
    ]);

    // Later stages move the dispute, not the payment: chargeback stays, nothing notified again.
    await live.fake.moveDispute(dispute_id, 'UNDER_REVIEW');
    await waitUntil(async () => (await disputes())[0]?.stage === 'under_review', 'dispute under review');
    await live.fake.moveDispute(dispute_id, 'RESOLVED', 'RESOLVED_SELLER_FAVOUR');
    await waitUntil(async () => (await disputes())[0]?.stage === 'won', 'dispute won');
    expect(await live.row(deposit.trace_id)).toMatchObject({ status: 'chargeback' });
    await delivered(deposit.trace_id);
    expect(notified(deposit.trace_id)).toEqual(['pending_async', 'approved', 'chargeback']);
    expect(await disputes()).toHaveLength(1);
  });

  it('a deposit by the cashier (pay-in) approved by POSTing the approval page: approved, notified once', async () => {
    const deposit = await depositAtPayPal('pay-in', 3100);
    const approved = await fetch(`${live.fake.url}/checkoutnow/approve?token=${encodeURIComponent(deposit.order_id)}`, {
      method: 'POST',
      redirect: 'manual',
    });
    expect([302, 303]).toContain(approved.status);
    const back = await deposit.customer.get(approved.headers.get('location')!);
    expect(back.status).toBe(200);
    await live.settled(deposit.trace_id, 'approved');
    await delivered(deposit.trace_id);
    expect(notified(deposit.trace_id).filter((s) => s === 'approved')).toHaveLength(1);
    expect(captureRequests(deposit.order_id)).toHaveLength(1);
  });

  it('the buyer cancels at PayPal: cancelled, notified once, nothing captured', async () => {
    const deposit = await depositAtPayPal('checkout', 2600);
    const cancelled = await fetch(`${live.fake.url}/checkoutnow/cancel?token=${encodeURIComponent(deposit.order_id)}`, {
      method: 'POST',
      redirect: 'manual',
    });
    const back = await deposit.customer.get(cancelled.headers.get('location')!);
    expect(back.status).toBe(200);
    await live.settled(deposit.trace_id, 'cancelled');
    await delivered(deposit.trace_id);
    expect(notified(deposit.trace_id).filter((s) => s === 'cancelled')).toHaveLength(1);
    expect(captureRequests(deposit.order_id)).toHaveLength(0);
  });

  it("the capture's answer lost (a time-out): the scheduled lookup settles it, without a second capture", async () => {
    const deposit = await depositAtPayPal('checkout', 2700);
    await live.fake.approve(deposit.order_id);
    const order = live.fake.order(deposit.order_id)!;
    live.fake.holdEvents(true);
    live.fake.failNext('orders.capture', 'timeout');
    await comeBack(deposit.customer, order.return_url!, deposit.order_id, order.payer_id);
    // The customer went on; the deposit waits for the processor's word (its webhooks held back).
    expect(await live.row(deposit.trace_id)).toMatchObject({ status: 'pending_async' });
    expect(live.fake.order(deposit.order_id)!.captures).toHaveLength(1);
    // The lookup is scheduled past the challenge's time-out (recheck_after_ms): the gateway's clock is moved on to it.
    const clock = live.gw.gateway.clock;
    const later_ms = clock.now_ms() + live.gw.gateway.deps.config.schedules.challenge_timeout_seconds * 1000 + 61_000;
    const started_ms = Date.now();
    clock.now_ms = () => later_ms + (Date.now() - started_ms);
    try {
      await live.settled(deposit.trace_id, 'approved', 15_000);
    } finally {
      delete (clock as { now_ms?: unknown }).now_ms;
    }
    expect(live.fake.order(deposit.order_id)!.captures).toHaveLength(1);
    expect(captureRequests(deposit.order_id)).toHaveLength(1);
    live.fake.holdEvents(false);
    await live.fake.releaseHeldEvents();
    await delivered(deposit.trace_id);
    expect(notified(deposit.trace_id).filter((s) => s === 'approved')).toHaveLength(1);
  });

  it('the capture webhook before the capture answer: approved, notified once', async () => {
    const deposit = await depositAtPayPal('checkout', 2800);
    await live.fake.approve(deposit.order_id);
    const order = live.fake.order(deposit.order_id)!;
    live.fake.failNext('orders.capture', 'webhook_first');
    await comeBack(deposit.customer, order.return_url!, deposit.order_id, order.payer_id);
    await live.settled(deposit.trace_id, 'approved');
    await delivered(deposit.trace_id);
    expect(notified(deposit.trace_id).filter((s) => s === 'approved')).toHaveLength(1);
    expect(live.fake.order(deposit.order_id)!.captures).toHaveLength(1);
  });

  // Last: it closes the gateway's HTTP server to flush its log.
  it("the gateway's log after all of it holds neither the client secret nor any access token PayPal issued", async () => {
    const tokens = live.fake
      .requestsTo('token')
      .filter((r) => r.status === 200)
      .map((r) => (JSON.parse(r.answer_body!) as { access_token: string }).access_token);
    expect(tokens.length).toBeGreaterThan(0);
    expect(tokens.length).toBe(live.fake.tokens_issued);
    await live.gw.gateway.app.close(); // flushes the request logs
    await new Promise((resolve) => setTimeout(resolve, 200));
    const log = fs.readFileSync(live.gw.log_file, 'utf8');
    expect(log).toContain('/webhooks/paypal/'); // PayPal's webhooks were logged
    expect(log).toContain('/cashier/pay');
    expect(log).not.toContain(live.fake.client_secret);
    expect(log).not.toContain(Buffer.from(`${live.fake.client_id}:${live.fake.client_secret}`).toString('base64'));
    for (const token of tokens) expect(log).not.toContain(token);
    // The webhooks' signatures are not logged either.
    for (const event of live.fake.events.filter((e) => e.signature !== null)) expect(log).not.toContain(event.signature);
  });
});
