// Chargebacks and reversals in the sandbox (decisions §16), through the real HTTP server on each
// store, with the merchant's notification endpoint a real local server that verifies every
// notification's signature: CVV 259's chargeback a minute later on the sandbox clock, the
// /sandbox/transactions/{trace_id}/chargeback and /reversal triggers (whole and part), each
// notified once and signed, and the triggers' refusals with nothing changed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJson, postSigned } from '../support/client.js';
import { saleA } from '../support/bodies.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../support/gateway.js';
import { type MerchantReceiver, startMerchantReceiver } from '../support/merchant-receiver.js';
import { merchantVerify, notificationOf, signedReply, waitUntil } from '../support/notification-merchant.js';
import { storeKinds } from '../support/stores.js';

describe.each(storeKinds())('chargebacks and reversals on %s', (kind) => {
  let gw: TestGateway;
  let receiver: MerchantReceiver;
  beforeAll(async () => {
    receiver = await startMerchantReceiver();
    gw = await startTestGateway(kind);
    receiver.setReply('/notify', signedReply(gw.merchant.secret));
  });
  afterAll(async () => {
    await gw?.close();
    await receiver?.close();
  });

  const store = () => gw.gateway.deps.store;
  /** Requests are signed on the sandbox clock, which the CVV 259 test moves forward. */
  const now_s = () => Math.floor(gw.gateway.deps.clock.now_ms() / 1000);
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const trigger = (trace_id: number | string, what: 'chargeback' | 'reversal', body: unknown = {}, headers = admin) =>
    postJson(gw.url, `/sandbox/transactions/${trace_id}/${what}`, body, headers);
  async function sale(overrides: Record<string, unknown> = {}): Promise<number> {
    const answer = await postSigned(
      gw.url,
      '/api/process',
      saleA(gw.merchant, { notification_url: `${receiver.url}/notify`, timestamp: now_s(), ...overrides }),
      gw.merchant.secret,
    );
    expect(answer.body).toMatchObject({ status: 0 });
    return answer.body.trace_id as number;
  }
  /** The notifications the merchant received for a transaction, each checked to be signed with its secret. */
  const received = (trace_id: number) =>
    receiver
      .requestsTo('/notify', 'POST')
      .map(notificationOf)
      .filter((n) => n.trace_id === trace_id)
      .map((n) => {
        expect(merchantVerify(n, gw.merchant.secret)).toBe(true);
        return n;
      });
  const receivedStatus = (trace_id: number, status: string) =>
    waitUntil(() => received(trace_id).find((n) => n.transaction_status === status), `a ${status} notification of ${trace_id}`);

  it('CVV 259: approved, then a chargeback of the whole amount 60 seconds later on the sandbox clock, notified once', async () => {
    const trace_id = await sale({ cvv: '259', amount: 4200 });
    expect(await store().transactions.get(trace_id)).toMatchObject({ status: 'approved' });
    await receivedStatus(trace_id, 'approved');
    expect(await store().disputes.listForTransaction(trace_id, 10)).toEqual([]);
    const moved = await postJson(gw.url, '/sandbox/clock', { advance_seconds: 61 }, admin);
    expect(moved.http_status).toBe(200);
    const notice = await receivedStatus(trace_id, 'chargeback');
    expect(notice).toMatchObject({ transaction_type: 'sale', amount: 4200, charge_amount: 4200 });
    const [dispute] = await store().disputes.listForTransaction(trace_id, 10);
    expect(dispute).toMatchObject({
      amount_minor: 4200,
      currency: 'USD',
      stage: 'evidence_required',
      merchant_id: gw.merchant.merchant_id,
    });
    expect(dispute!.evidence_due_at_ms).toBeGreaterThan(gw.gateway.deps.clock.now_ms());
    // Nothing more happens to it later.
    await postJson(gw.url, '/sandbox/clock', { advance_seconds: 120 }, admin);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(received(trace_id).map((n) => n.transaction_status)).toEqual(['approved', 'chargeback']);
  });

  it('CVV 259 on an authorization: the chargeback waits for the capture, then disputes what was captured', async () => {
    const answer = await postSigned(
      gw.url,
      '/api/process',
      saleA(gw.merchant, {
        transaction_type: 'authorize',
        cvv: '259',
        amount: 3000,
        notification_url: `${receiver.url}/notify`,
        timestamp: now_s(),
      }),
      gw.merchant.secret,
    );
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'authorized', error_details: '[TEST] Authorized' });
    const trace_id = answer.body.trace_id as number;
    await postJson(gw.url, '/sandbox/clock', { advance_seconds: 61 }, admin);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await store().transactions.get(trace_id)).toMatchObject({ status: 'authorized' });
    expect(await store().disputes.listForTransaction(trace_id, 10)).toEqual([]);
    const captured = await postSigned(
      gw.url,
      '/api/capture',
      {
        merchant_id: gw.merchant.merchant_id,
        application_key: gw.merchant.application_key,
        reference_id: trace_id,
        amount: 2000,
        version: '1.2',
        timestamp: now_s(),
      },
      gw.merchant.secret,
    );
    expect(captured.body).toMatchObject({
      status: 0,
      transaction_status: 'approved',
      error_details: 'Captured in part; the rest released',
    });
    await postJson(gw.url, '/sandbox/clock', { advance_seconds: 61 }, admin);
    expect(await receivedStatus(trace_id, 'chargeback')).toMatchObject({ transaction_type: 'authorize', amount: 2000 });
  });

  it('the chargeback trigger disputes part of a sale: chargeback, notified with the disputed amount; a second one is refused', async () => {
    const trace_id = await sale({ amount: 1000 });
    const answer = await trigger(trace_id, 'chargeback', { amount: 300 });
    expect(answer.http_status).toBe(200);
    expect(answer.body).toMatchObject({ status: 0, trace_id, transaction_status: 'chargeback', description: expect.any(String) });
    const notice = await receivedStatus(trace_id, 'chargeback');
    expect(notice).toMatchObject({ transaction_type: 'sale', amount: 300, charge_amount: 300 });
    expect(await store().transactions.get(trace_id)).toMatchObject({ status: 'chargeback', amount_minor: 1000 });
    const again = await trigger(trace_id, 'chargeback');
    expect(again.http_status).toBe(409);
    expect(await store().disputes.listForTransaction(trace_id, 10)).toHaveLength(1);
  });

  it('a captured authorization charged back is notified as an authorize', async () => {
    const answer = await postSigned(
      gw.url,
      '/api/process',
      saleA(gw.merchant, { transaction_type: 'authorize', amount: 900, notification_url: `${receiver.url}/notify`, timestamp: now_s() }),
      gw.merchant.secret,
    );
    const trace_id = answer.body.trace_id as number;
    expect((await trigger(trace_id, 'chargeback')).http_status).toBe(409);
    await postSigned(
      gw.url,
      '/api/capture',
      {
        merchant_id: gw.merchant.merchant_id,
        application_key: gw.merchant.application_key,
        reference_id: trace_id,
        amount: 500,
        version: '1.2',
        timestamp: now_s(),
      },
      gw.merchant.secret,
    );
    expect((await trigger(trace_id, 'chargeback')).body).toMatchObject({ status: 0, transaction_status: 'chargeback' });
    expect(await receivedStatus(trace_id, 'chargeback')).toMatchObject({ transaction_type: 'authorize', amount: 500 });
  });

  it('the reversal trigger for the whole amount makes the sale reversed, notified once', async () => {
    const trace_id = await sale({ amount: 1500 });
    const answer = await trigger(trace_id, 'reversal');
    expect(answer.body).toMatchObject({ status: 0, trace_id, transaction_status: 'reversed' });
    expect(await receivedStatus(trace_id, 'reversed')).toMatchObject({ transaction_type: 'sale', amount: 1500 });
    expect((await trigger(trace_id, 'reversal')).http_status).toBe(409);
    expect((await store().transactions.listStatusChanges(trace_id)).map((c) => c.to_status)).toEqual(['pending', 'approved', 'reversed']);
  });

  it('a reversal of part records a refund transaction of the gateway, approved and notified; the sale stays approved', async () => {
    const trace_id = await sale({ amount: 2000 });
    const order_id = (await store().transactions.get(trace_id))!.order_id;
    const answer = await trigger(trace_id, 'reversal', { amount: 700 });
    expect(answer.body).toMatchObject({ status: 0, trace_id, transaction_status: 'approved', refund_trace_id: expect.any(Number) });
    const refund_id = answer.body.refund_trace_id as number;
    expect(await store().transactions.get(refund_id)).toMatchObject({
      transaction_type: 'refund',
      status: 'approved',
      reference_id: trace_id,
      amount_minor: 700,
    });
    expect(await receivedStatus(refund_id, 'approved')).toMatchObject({
      transaction_type: 'refund',
      reference_id: trace_id,
      order_id,
      amount: 700,
    });
    expect(await store().transactions.get(trace_id)).toMatchObject({ status: 'approved', refund_reserved_minor: 700 });
    // The rest cannot be reversed beyond what remains.
    expect((await trigger(trace_id, 'reversal', { amount: 1301 })).http_status).toBe(400);
    expect((await trigger(trace_id, 'reversal', { amount: 1300 })).body).toMatchObject({ status: 0, transaction_status: 'approved' });
    expect(await store().transactions.get(trace_id)).toMatchObject({ refund_reserved_minor: 2000, status: 'approved' });
  });

  it('the triggers want the admin token, a known trace_id and an amount within the payment', async () => {
    const trace_id = await sale({ amount: 500 });
    expect((await trigger(trace_id, 'chargeback', {}, {} as typeof admin)).http_status).toBe(401);
    expect((await trigger(trace_id, 'chargeback', {}, { authorization: 'Bearer wrong' })).http_status).toBe(401);
    expect((await trigger(987654321, 'chargeback')).http_status).toBe(404);
    expect((await trigger(trace_id, 'chargeback', { amount: 501 })).http_status).toBe(400);
    expect((await trigger(trace_id, 'reversal', { amount: 'x' })).http_status).toBe(400);
    expect(await store().transactions.get(trace_id)).toMatchObject({ status: 'approved', refund_reserved_minor: 0 });
    expect(await store().disputes.listForTransaction(trace_id, 10)).toEqual([]);
  });
});

describe('the sandbox triggers in live mode', () => {
  it('are unknown paths (404)', async () => {
    const gw = await startTestGateway('sqlite', { env: { PAYGATE_ENV: 'live', PAYGATE_MASTER_KEY: 'b'.repeat(64) } });
    try {
      const answer = await postJson(gw.url, '/sandbox/transactions/1/chargeback', {}, { authorization: `Bearer ${ADMIN_TOKEN}` });
      expect(answer.http_status).toBe(404);
    } finally {
      await gw.close();
    }
  });
});
