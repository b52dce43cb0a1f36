// POST /api/process refunds (variant C) through the real HTTP server, on each store.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJson, postSigned, signed } from '../support/client.js';
import { MASTERCARD, orderId, refundC, saleA } from '../support/bodies.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { storeKinds } from '../support/stores.js';

describe.each(storeKinds())('refund on %s', (kind) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(kind);
  });
  afterAll(async () => {
    await gw?.close();
  });

  const post = (body: Record<string, unknown>, secret = gw.merchant.secret) => postSigned(gw.url, '/api/process', body, secret);
  async function approvedSale(amount = 1999, merchant = gw.merchant): Promise<number> {
    const answer = await post(saleA(merchant, { amount }), merchant.secret);
    expect(answer.body.transaction_status).toBe('approved');
    return answer.body.trace_id as number;
  }

  it('approves a partial refund of an approved sale and records its notification', async () => {
    const trace_id = await approvedSale();
    const answer = await post(refundC(gw.merchant, trace_id, { amount: 500 }));
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'approved', version: '1.1', payment_processor: 'sandbox' });
    expect(answer.body.trace_id).not.toBe(trace_id);
    const refund = await gw.gateway.deps.store.transactions.get(answer.body.trace_id as number);
    expect(refund).toMatchObject({ transaction_type: 'refund', reference_id: trace_id, amount_minor: 500, status: 'approved' });
    const sale = await gw.gateway.deps.store.transactions.get(trace_id);
    expect(sale?.refund_reserved_minor).toBe(500);
    const [notification] = await gw.gateway.deps.store.notifications.listOfTransaction(refund!.trace_id);
    expect(JSON.parse(notification!.payload_json)).toMatchObject({
      transaction_type: 'refund',
      reference_id: trace_id,
      frontend: gw.merchant.frontend,
    });
  });

  it('accepts reference_id as digits text too', async () => {
    const trace_id = await approvedSale();
    const answer = await post(refundC(gw.merchant, String(trace_id)));
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'approved' });
  });

  it('refuses a refund over the remaining amount and stores nothing', async () => {
    const trace_id = await approvedSale(1000);
    expect((await post(refundC(gw.merchant, trace_id, { amount: 700 }))).body.status).toBe(0);
    const body = refundC(gw.merchant, trace_id, { amount: 301 });
    const answer = await post(body);
    expect(answer.body).toMatchObject({ status: 14 });
    expect(answer.body.description).toMatch(/300 left/);
    expect(await gw.gateway.deps.store.transactions.findByKey(gw.merchant.merchant_id, 'refund', body.order_id as string)).toBeNull();
    expect((await post(refundC(gw.merchant, trace_id, { amount: 300 }))).body).toMatchObject({ status: 0, transaction_status: 'approved' });
  });

  it('never lets 20 concurrent partial refunds exceed the sale', async () => {
    const trace_id = await approvedSale(1000);
    const bodies = Array.from({ length: 20 }, () => signed(refundC(gw.merchant, trace_id, { amount: 150 }), gw.merchant.secret));
    const answers = await Promise.all(bodies.map((b) => postJson(gw.url, '/api/process', b)));
    const approved = answers.filter((a) => a.body.status === 0 && a.body.transaction_status === 'approved');
    const refused = answers.filter((a) => a.body.status === 14);
    expect(approved).toHaveLength(6); // 6 x 150 = 900 <= 1000 < 7 x 150
    expect(refused).toHaveLength(14);
    const sale = await gw.gateway.deps.store.transactions.get(trace_id);
    expect(sale?.refund_reserved_minor).toBe(900);
  });

  it('answers a replayed refund with the same trace_id, even once the sale is fully refunded', async () => {
    const trace_id = await approvedSale(500);
    const body = refundC(gw.merchant, trace_id, { amount: 500 });
    const first = await post(body);
    const again = await post(body);
    expect(again.body).toMatchObject({ status: 0, trace_id: first.body.trace_id });
    const sale = await gw.gateway.deps.store.transactions.get(trace_id);
    expect(sale?.refund_reserved_minor).toBe(500);
  });

  it('refuses a refund of a rejected sale, another currency, or another card', async () => {
    const rejected = await post(saleA(gw.merchant, { cvv: '000' }));
    expect((await post(refundC(gw.merchant, rejected.body.trace_id))).body.status).toBe(14);
    const trace_id = await approvedSale();
    expect((await post(refundC(gw.merchant, trace_id, { currency: 'EUR' }))).body).toMatchObject({ status: 14 });
    const other_card = await post(refundC(gw.merchant, trace_id, { card_number: MASTERCARD }));
    expect(other_card.body).toMatchObject({ status: 10 });
    expect(other_card.body.description).toMatch(/card_number/);
    const other_expiry = await post(refundC(gw.merchant, trace_id, { card_exp: '01/2020' }));
    expect(other_expiry.body).toMatchObject({ status: 10 });
    expect(other_expiry.body.description).toMatch(/card_exp/);
  });

  it("answers exactly the not-found answer for another merchant's sale and for a missing one", async () => {
    const other = await gw.createMerchant();
    const their_sale = await approvedSale(1999, other);
    const theirs = await post(refundC(gw.merchant, their_sale));
    const missing = await post(refundC(gw.merchant, 99_999_999));
    expect(theirs.body.status, String(theirs.body.description)).toBe(13);
    const strip = (b: Record<string, unknown>) => ({ ...b, timestamp: 0, signature: '' });
    expect(strip(theirs.body)).toEqual(strip(missing.body));
    // Reading it through transaction-status gives the same not-found answer.
    const read = (trace: number) =>
      postSigned(
        gw.url,
        '/api/transaction-status',
        {
          merchant_id: gw.merchant.merchant_id,
          application_key: gw.merchant.application_key,
          trace_id: trace,
          timestamp: Math.floor(Date.now() / 1000),
          version: '1.2',
        },
        gw.merchant.secret,
      );
    const read_theirs = await read(their_sale);
    const read_missing = await read(99_999_999);
    expect(read_theirs.body.status, String(read_theirs.body.description)).toBe(13);
    expect(strip(read_theirs.body)).toEqual(strip(read_missing.body));
    const read_own = await read(await approvedSale());
    expect(read_own.body).toMatchObject({ status: 0, transaction_status: 'approved', card_number: '411111******1111' });
  });

  it('refuses a refund of a refund and of a sale still waiting for 3-D Secure, reserving nothing', async () => {
    const trace_id = await approvedSale(1000);
    const refund = await post(refundC(gw.merchant, trace_id, { amount: 100 }));
    expect(refund.body).toMatchObject({ status: 0, transaction_status: 'approved' });
    const of_refund = await post(refundC(gw.merchant, refund.body.trace_id));
    expect(of_refund.body).toMatchObject({
      status: 14,
      description: 'Refund refused: the original transaction is not an approved sale or captured authorization',
    });
    const challenged = await post(saleA(gw.merchant, { cvv: '333', amount: 1000 }));
    expect(challenged.body.transaction_status).toBe('pending_async');
    const of_pending = await post(refundC(gw.merchant, challenged.body.trace_id));
    expect(of_pending.body).toMatchObject({ status: 14 });
    expect((await gw.gateway.deps.store.transactions.get(refund.body.trace_id as number))?.refund_reserved_minor).toBe(0);
    expect((await gw.gateway.deps.store.transactions.get(challenged.body.trace_id as number))?.refund_reserved_minor).toBe(0);
    expect((await gw.gateway.deps.store.transactions.get(trace_id))?.refund_reserved_minor).toBe(100);
  });

  it('names a missing, over-long or mistyped field and reserves nothing', async () => {
    const trace_id = await approvedSale(1000);
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ state: undefined }, /^Missing required field: state$/],
      [{ card_exp: undefined }, /^Missing required field: card_exp$/],
      [{ amount: 0 }, /^Invalid field: amount/],
      [{ amount: '5.00' }, /^Invalid field: amount/],
      [{ reference_id: 'abc' }, /^Invalid field: reference_id \(expected a trace_id/],
      [{ reference_id: 0 }, /^Invalid field: reference_id/],
      [{ reference_id: '123456789012' }, /^Invalid field: reference_id/],
      [{ order_id: 'r'.repeat(51) }, /^Invalid field: order_id/],
      [{ email: 'not-an-address' }, /^Invalid field: email/],
      [{ frontend: 'f'.repeat(257) }, /^Invalid field: frontend/],
    ];
    for (const [overrides, description] of cases) {
      const body = refundC(gw.merchant, trace_id, overrides);
      for (const key of Object.keys(overrides)) if (overrides[key] === undefined) delete body[key];
      const answer = await post(body);
      expect(answer.body, JSON.stringify(overrides)).toMatchObject({ status: 10, version: '1.1' });
      expect(answer.body.description).toMatch(description);
      expect(answer.body.trace_id).toBeUndefined();
      if (typeof body.order_id === 'string' && body.order_id.length <= 50) {
        expect(await gw.gateway.deps.store.transactions.findByKey(gw.merchant.merchant_id, 'refund', body.order_id)).toBeNull();
      }
    }
    expect((await gw.gateway.deps.store.transactions.get(trace_id))?.refund_reserved_minor).toBe(0);
  });

  it('refuses a version other than 1.1 in the frontend form and 1.2 in the application_key form', async () => {
    const trace_id = await approvedSale(1000);
    const frontend_12 = await post(refundC(gw.merchant, trace_id, { version: '1.2' }));
    expect(frontend_12.body).toMatchObject({ status: 10 });
    expect(frontend_12.body.description).toMatch(/^Invalid field: version \(expected exactly "1\.1"\)$/);
    const { frontend: _frontend, ...by_key } = refundC(gw.merchant, trace_id, { version: '1.1' });
    const app_11 = await post({ ...by_key, application_key: gw.merchant.application_key });
    expect(app_11.body).toMatchObject({ status: 10 });
    expect(app_11.body.description).toMatch(/^Invalid field: version \(expected exactly "1\.2"\)$/);
    expect((await gw.gateway.deps.store.transactions.get(trace_id))?.refund_reserved_minor).toBe(0);
  });

  it("refuses an unknown frontend or another merchant's, revealing nothing and reserving nothing", async () => {
    const other = await gw.createMerchant();
    const trace_id = await approvedSale(1000);
    const unknown = await post(refundC(gw.merchant, trace_id, { frontend: 'no-such-frontend' }));
    const foreign = await post(refundC(gw.merchant, trace_id, { frontend: other.frontend }));
    for (const answer of [unknown, foreign]) {
      expect(answer.body).toMatchObject({
        status: 11,
        description: 'Authentication failed: unknown merchant_id, application_key or frontend',
      });
      expect(answer.body.trace_id).toBeUndefined();
    }
    expect((await gw.gateway.deps.store.transactions.get(trace_id))?.refund_reserved_minor).toBe(0);
  });

  it('refuses a bad signature, an expired timestamp and a reused order_id with other content', async () => {
    const trace_id = await approvedSale(1000);
    const body = signed(refundC(gw.merchant, trace_id, { amount: 200 }), gw.merchant.secret);
    const tampered = await postJson(gw.url, '/api/process', { ...body, amount: 1000 });
    expect(tampered.body).toMatchObject({ status: 2, description: expect.stringMatching(/^Invalid signature/) });
    const late = await post(refundC(gw.merchant, trace_id, { timestamp: Math.floor(gw.gateway.clock.now_ms() / 1000) - 120 }));
    expect(late.body).toMatchObject({ status: 1, description: 'Timestamp expired' });
    expect((await gw.gateway.deps.store.transactions.get(trace_id))?.refund_reserved_minor).toBe(0);
    const first = await post(refundC(gw.merchant, trace_id, { amount: 200, order_id: body.order_id }));
    expect(first.body).toMatchObject({ status: 0, transaction_status: 'approved' });
    const changed = await post(refundC(gw.merchant, trace_id, { amount: 300, order_id: body.order_id }));
    expect(changed.body).toMatchObject({ status: 12, description: 'Duplicate order_id' });
    expect((await gw.gateway.deps.store.transactions.get(trace_id))?.refund_reserved_minor).toBe(200);
  });

  it('names a missing reference_id', async () => {
    const body = refundC(gw.merchant, 1);
    delete body.reference_id;
    const answer = await post({ ...body, order_id: orderId() });
    expect(answer.body).toMatchObject({ status: 10, description: 'Missing required field: reference_id' });
  });
});
