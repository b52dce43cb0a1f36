// Live processing through the `adyen` connector (issue 27, decisions §17), against the fake Adyen
// on 127.0.0.1 over real HTTP, on both stores, the merchant's site a real server that checks each
// notification's signature: card sales approved and refused (one of Adyen's test cards with a wrong CVC),
// an authorization captured in part (accepted, authorized until the CAPTURE notification, then
// approved with the captured amount) and one voided, a refund pending until its REFUND
// notification, bank payouts submitted and confirmed (pending) then paid or failed by
// PAYOUT_THIRDPARTY, a CHARGEBACK, a refund made in Adyen's Customer Area (a reversal), the same
// notification twice (nothing more), a forged HMAC (401, nothing), and the answer Adyen wants to
// every notification: exactly `[accepted]`. Every request and notification is checked against
// Adyen's published descriptions (fake.violations stays empty after each test).
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { refundC, saleA, VISA } from '../support/bodies.js';
import { notificationHmac } from '../support/adyen/hmac.js';
import { type LiveAdyen, liveSale, operatorCall, startLiveAdyen, TEST_CARD_CVCS } from '../support/live-adyen.js';
import { withLiveGateway } from '../support/live-gateway.js';
import { waitUntil } from '../support/notification-merchant.js';
import { direct } from '../support/payout-bodies.js';
import { storeKinds } from '../support/stores.js';

const now_s = () => Math.floor(Date.now() / 1000);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(storeKinds())('live processing through Adyen on %s', (kind) => {
  let live: LiveAdyen;
  withLiveGateway(
    () => startLiveAdyen(kind),
    (started) => (live = started),
  );

  const saleBody = (overrides: Record<string, unknown> = {}) =>
    liveSale(live, saleA(live.merchant, { gateway: live.gateway, cvv: TEST_CARD_CVCS[VISA], ...overrides }));
  async function sale(amount: number): Promise<{ trace_id: number; psp: string }> {
    const answer = await live.process(saleBody({ amount }));
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'approved', payment_processor: 'adyen' });
    const trace_id = answer.body.trace_id as number;
    await live.settled(trace_id, 'approved');
    return { trace_id, psp: answer.body.transaction_id as string };
  }
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
  /** The gateway's notifications of a transaction are all delivered (nothing more is on its way). */
  const delivered = (trace_id: number) =>
    waitUntil(
      async () => (await live.gw.gateway.deps.store.notifications.listOfTransaction(trace_id)).every((n) => n.state === 'delivered'),
      `notifications of ${trace_id} delivered`,
    );
  const bankPayout = (amount: number) => {
    const body = liveSale(
      live,
      direct(live.merchant, {
        gateway: live.gateway,
        amount,
        currency: 'EUR',
        data_iban: 'NL91ABNA0417164300',
        data_owner_name: 'Ada Lovelace',
        data_country_code: 'NL',
        data_email: 'ada@example.com',
        data_date_of_birth: '1990-12-10',
      }),
    );
    delete body.data_account_number;
    delete body.data_bank_code;
    return live.process(body, '/api/direct');
  };

  it("an approved sale: approved with Adyen's pspReference, one signed notification, the AUTHORISATION notification changes nothing", async () => {
    const body = saleBody({ amount: 1999 });
    const answer = await live.process(body);
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'approved', payment_processor: 'adyen', error_code: '0' });
    const trace_id = answer.body.trace_id as number;
    const psp = answer.body.transaction_id as string;
    expect(live.fake.payment(psp)).toMatchObject({ status: 'authorised', amount_minor: 1999, currency: 'USD', captured_minor: 1999 });
    expect(await live.settled(trace_id, 'approved')).toMatchObject({ transaction_id: psp, amount: 1999, currency: 'USD' });
    const sent = live.fake.requestsTo('payments').find((r) => r.body.includes(body.order_id as string))!;
    expect(sent.idempotency_key).toBe(`paygate-${live.gateway}-${trace_id}-sale`);
    expect(JSON.parse(sent.body)).toMatchObject({ reference: body.order_id, paymentMethod: { type: 'scheme', holderName: 'Jane Doe' } });
    const event = await live.fake.waitForEvent((e) => e.eventCode === 'AUTHORISATION' && e.pspReference === psp);
    expect(event.status).toBe(200);
    await delivered(trace_id);
    expect(live.notifications(trace_id)).toHaveLength(1);
  });

  it("a refused sale (Adyen's test card with a CVC not its own): rejected with Adyen's refusal, one notification", async () => {
    const answer = await live.process(saleBody({ amount: 2100, cvv: '123' }));
    expect(answer.body).toMatchObject({
      status: 0,
      transaction_status: 'rejected',
      payment_processor: 'adyen',
      error_code: '2',
      error_details: 'Refused',
    });
    const trace_id = answer.body.trace_id as number;
    const psp = answer.body.transaction_id as string;
    expect(live.fake.payment(psp)).toMatchObject({ status: 'refused', captured_minor: 0 });
    expect(await live.settled(trace_id, 'rejected')).toMatchObject({ amount: 2100, error_code: '2' });
    // Adyen's AUTHORISATION notification (success false) changes nothing more.
    const event = await live.fake.waitForEvent((e) => e.eventCode === 'AUTHORISATION' && e.pspReference === psp);
    expect(event.status).toBe(200);
    await delivered(trace_id);
    expect(live.notifications(trace_id)).toHaveLength(1);
  });

  it('an authorization captured in part: accepted, authorized until the CAPTURE notification, then approved with the captured amount', async () => {
    const answer = await live.process(saleBody({ transaction_type: 'authorize', amount: 5000 }));
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'authorized' });
    const trace_id = answer.body.trace_id as number;
    const psp = answer.body.transaction_id as string;
    await live.settled(trace_id, 'authorized');
    expect(live.fake.payment(psp)).toMatchObject({ manual_capture: true, captured_minor: 0 });
    live.fake.holdEvents(true);
    const captured = await action('/api/capture', trace_id, 3000);
    expect(captured.body).toMatchObject({ status: 0, trace_id, transaction_status: 'authorized' });
    expect((await live.row(trace_id)).status).toBe('authorized');
    expect(live.fake.requestsTo('captures')).toHaveLength(1);
    live.fake.holdEvents(false);
    await live.fake.releaseHeldEvents();
    expect(await live.settled(trace_id, 'approved')).toMatchObject({ transaction_type: 'authorize', amount: 3000 });
    expect(live.fake.payment(psp)).toMatchObject({ captured_minor: 3000 });
    expect((await live.row(trace_id)).amount_minor).toBe(3000);
    expect(live.notifications(trace_id).map((n) => n.transaction_status)).toEqual(['authorized', 'approved']);
  });

  it('an authorization voided: cancelled once the CANCELLATION notification comes, notified once', async () => {
    const answer = await live.process(saleBody({ transaction_type: 'authorize', amount: 1200 }));
    const trace_id = answer.body.trace_id as number;
    await live.settled(trace_id, 'authorized');
    const voided = await action('/api/void', trace_id);
    expect(voided.body).toMatchObject({ status: 0, trace_id });
    await live.settled(trace_id, 'cancelled');
    expect(live.fake.payment(answer.body.transaction_id as string)).toMatchObject({ cancelled: true });
    await delivered(trace_id);
    expect(live.notifications(trace_id).map((n) => n.transaction_status)).toEqual(['authorized', 'cancelled']);
  });

  it('a refund: pending (received by Adyen), then approved by the REFUND notification', async () => {
    const paid = await sale(3000);
    live.fake.holdEvents(true);
    const refund = await live.process(
      refundC(live.merchant, paid.trace_id, { amount: 1000, notification_url: `${live.receiver.url}/notify` }),
    );
    expect(refund.body).toMatchObject({ status: 0, transaction_status: 'pending' });
    const refund_trace = refund.body.trace_id as number;
    expect((await live.row(refund_trace)).status).toBe('pending');
    live.fake.holdEvents(false);
    await live.fake.releaseHeldEvents();
    expect(await live.settled(refund_trace, 'approved')).toMatchObject({ transaction_type: 'refund', amount: 1000 });
    expect(live.fake.payment(paid.psp)).toMatchObject({ refunded_minor: 1000 });
    await delivered(refund_trace);
    // The merchant hears of the refund once, when it is decided.
    expect(live.notifications(refund_trace).map((n) => n.transaction_status)).toEqual(['approved']);
  });

  it('a bank payout: submitted and confirmed (pending), then paid by PAYOUT_THIRDPARTY (approved, one notification); a failed one rejected', async () => {
    const answer = await bankPayout(4200);
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'pending', payment_processor: 'adyen' });
    const trace_id = answer.body.trace_id as number;
    const psp = answer.body.transaction_id as string;
    expect(live.fake.payout(psp)).toMatchObject({ status: 'confirmed', amount_minor: 4200, currency: 'EUR', iban: 'NL91ABNA0417164300' });
    const submitted = live.fake.requestsTo('storeDetailAndSubmitThirdParty').at(-1)!;
    expect(submitted.headers['x-api-key']).toBe(live.fake.payout_api_key);
    expect(JSON.parse(submitted.body)).toMatchObject({ shopperEmail: 'ada@example.com', dateOfBirth: '1990-12-10' });
    expect(live.fake.requestsTo('confirmThirdParty').at(-1)!.headers['x-api-key']).toBe(live.fake.payout_reviewer_api_key);
    await live.fake.settlePayout(psp, 'paid');
    expect(await live.settled(trace_id, 'approved')).toMatchObject({ transaction_type: 'payout', amount: 4200 });
    await delivered(trace_id);
    expect(live.notifications(trace_id).filter((n) => n.transaction_status === 'approved')).toHaveLength(1);

    const failing = await bankPayout(4300);
    expect(failing.body).toMatchObject({ status: 0, transaction_status: 'pending' });
    await live.fake.settlePayout(failing.body.transaction_id as string, 'failed');
    expect(await live.settled(failing.body.trace_id as number, 'rejected')).toMatchObject({ transaction_type: 'payout' });
  });

  it('a CHARGEBACK notification: the sale is chargeback, notified with the disputed amount', async () => {
    const paid = await sale(4000);
    await live.fake.chargeback(paid.psp, 'CHARGEBACK', { amount_minor: 2500, reason: 'Fraudulent transaction' });
    expect(await live.settled(paid.trace_id, 'chargeback')).toMatchObject({ transaction_type: 'sale', amount: 2500 });
    const [dispute] = await live.gw.gateway.deps.store.disputes.listForTransaction(paid.trace_id, 10);
    expect(dispute).toMatchObject({ amount_minor: 2500, currency: 'USD' });
    await delivered(paid.trace_id);
    expect(live.notifications(paid.trace_id).map((n) => n.transaction_status)).toEqual(['approved', 'chargeback']);
  });

  it('a batch of two notifications (two CHARGEBACKs) is read item by item: both sales chargeback, each notified once, once', async () => {
    const first = await sale(3400);
    const second = await sale(3500);
    live.fake.holdEvents(true);
    const one = await live.fake.chargeback(first.psp, 'CHARGEBACK', { amount_minor: 1000 });
    const two = await live.fake.chargeback(second.psp, 'CHARGEBACK', { amount_minor: 2000 });
    const item = (body: string) => (JSON.parse(body) as { notificationItems: unknown[] }).notificationItems[0];
    const batch = JSON.stringify({ live: 'false', notificationItems: [item(one.body), item(two.body)] });
    const post = () => fetch(live.webhook_url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: batch });
    const answered = await post();
    expect(answered.status).toBe(200);
    expect(await answered.text()).toBe('[accepted]');
    expect(await live.settled(first.trace_id, 'chargeback')).toMatchObject({ amount: 1000 });
    expect(await live.settled(second.trace_id, 'chargeback')).toMatchObject({ amount: 2000 });
    // The batch again, then each item on its own as Adyen retries: nothing more.
    expect((await post()).status).toBe(200);
    live.fake.holdEvents(false);
    await live.fake.releaseHeldEvents();
    await delivered(first.trace_id);
    await delivered(second.trace_id);
    for (const paid of [first, second]) {
      expect(live.notifications(paid.trace_id).map((n) => n.transaction_status)).toEqual(['approved', 'chargeback']);
      expect(await live.gw.gateway.deps.store.disputes.listForTransaction(paid.trace_id, 10)).toHaveLength(1);
    }
  });

  it("a refund of the whole sale made in Adyen's Customer Area: the sale is reversed", async () => {
    const paid = await sale(1800);
    await live.fake.customerAreaRefund(paid.psp, 1800);
    expect(await live.settled(paid.trace_id, 'reversed')).toMatchObject({ transaction_type: 'sale', amount: 1800 });
  });

  it('the same notification twice changes nothing, and the gateway answers it exactly `[accepted]` as text', async () => {
    const paid = await sale(2600);
    await live.fake.customerAreaRefund(paid.psp, 600);
    const store = live.gw.gateway.deps.store;
    const refund = await waitUntil(async () => (await store.transactions.listRefundsOf(paid.trace_id, 10))[0], 'the recorded refund');
    await live.settled(refund.trace_id, 'approved');
    const event = live.fake.events.filter((e) => e.eventCode === 'REFUND' && e.originalReference === paid.psp).at(-1)!;
    // Delivered again by the fake, and posted once more by hand to read the answer's body.
    expect(await live.fake.redeliver(event.id)).toBe(200);
    const again = await fetch(live.webhook_url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: event.body });
    expect(again.status).toBe(200);
    expect(again.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await again.text()).toBe('[accepted]');
    await pause(300);
    expect(await store.transactions.listRefundsOf(paid.trace_id, 10)).toHaveLength(1);
    expect(await live.row(paid.trace_id)).toMatchObject({ status: 'approved', refund_reserved_minor: 600 });
    await delivered(refund.trace_id);
    expect(live.notifications(refund.trace_id)).toHaveLength(1);
    expect(live.notifications(paid.trace_id)).toHaveLength(1);
  });

  it('a notification with a forged HMAC is refused 401 and changes nothing', async () => {
    const paid = await sale(3100);
    const item = {
      pspReference: 'F999999999999999',
      originalReference: paid.psp,
      merchantAccountCode: live.fake.merchant_account,
      merchantReference: 'forged',
      amount: { value: 3100, currency: 'USD' },
      eventCode: 'REFUND',
      success: 'true',
    };
    const forged = notificationHmac(item, 'AB'.repeat(32));
    const body = JSON.stringify({
      live: 'false',
      notificationItems: [
        { NotificationRequestItem: { ...item, eventDate: '2024-01-01T00:00:00+00:00', additionalData: { hmacSignature: forged } } },
      ],
    });
    expect(await live.fake.sendRaw(body, forged)).toBe(401);
    const direct_answer = await fetch(live.webhook_url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(direct_answer.status).toBe(401);
    expect(await direct_answer.text()).not.toBe('[accepted]');
    await pause(300);
    expect(await live.row(paid.trace_id)).toMatchObject({ status: 'approved', refund_reserved_minor: 0 });
    expect(await live.gw.gateway.deps.store.transactions.listRefundsOf(paid.trace_id, 10)).toHaveLength(0);
    expect(live.notifications(paid.trace_id)).toHaveLength(1);
  });

  // Last: it closes the gateway's HTTP server to flush its log.
  it("neither the operator API nor the gateway's log ever shows Adyen's keys, the HMAC key or a notification's signature", async () => {
    const shown = await operatorCall(live.gw, 'GET', `/operator/gateways/${live.gateway}`);
    expect(shown.status).toBe(200);
    const secrets = [live.fake.api_key, live.fake.payout_api_key, live.fake.payout_reviewer_api_key, live.fake.hmac_key];
    for (const secret of secrets) expect(JSON.stringify(shown.body)).not.toContain(secret);
    await live.gw.gateway.app.close(); // flushes the request logs
    await pause(200);
    const log = fs.readFileSync(live.gw.log_file, 'utf8');
    expect(log).toContain('/webhooks/adyen/'); // Adyen's notifications were logged
    for (const secret of secrets) expect(log).not.toContain(secret);
    const signatures = live.fake.events.map((e) => e.signature).filter((sig): sig is string => sig !== null && sig !== '');
    expect(signatures.length).toBeGreaterThan(0);
    for (const signature of signatures) expect(log).not.toContain(signature);
  });
});
