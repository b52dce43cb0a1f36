// POST /api/find-order (spec §4.7) through the real HTTP server, on each store: every outcome
// (0 found, 1 not found, 3 still open, 4 timed out with no transactions), the declined-transaction
// rule, a transaction still pending at the time limit, and the field and signature failures.
import { describe, expect, it } from 'vitest';
import { verifyBody } from '../../src/domain/signing.js';
import { buildNotificationPayload } from '../../src/notifications/payload.js';
import { FIND_ORDER_FIELDS } from '../../src/operations/find-order.js';
import { postJson, postSigned } from '../support/client.js';
import { orderId } from '../support/bodies.js';
import {
  CashierCustomer,
  findOrderBody,
  gatewayNow,
  initCheckout,
  initPayOutOrder,
  openSession,
  textOf,
  withGatewayAndShop,
} from '../support/cashier.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../support/gateway.js';
import type { MerchantReceiver } from '../support/merchant-receiver.js';
import { waitUntil } from '../support/notification-merchant.js';
import { storeKinds } from '../support/stores.js';

const ENVELOPE_ONLY = ['description', 'signature', 'status', 'timestamp', 'version'];

describe.each(storeKinds())('find-order on %s', (kind) => {
  let gw: TestGateway;
  let shop: MerchantReceiver;
  withGatewayAndShop(kind, [], (started) => ({ gw, shop } = started));

  const find = (gateway: TestGateway, order_id: string, overrides: Record<string, unknown> = {}) =>
    postSigned(
      gateway.url,
      '/api/find-order',
      findOrderBody(gateway.merchant, order_id, { timestamp: gatewayNow(gateway), ...overrides }),
      gateway.merchant.secret,
    );

  /** Opens an order and logs a customer in; returns the customer on the payment form. */
  async function openOrder(gateway: TestGateway, path = '/api/init-checkout', overrides: Record<string, unknown> = {}) {
    const body =
      path === '/api/init-checkout'
        ? initCheckout(gateway.merchant, shop.url, { timestamp: gatewayNow(gateway), ...overrides })
        : initPayOutOrder(gateway.merchant, shop.url, { timestamp: gatewayNow(gateway), ...overrides });
    const answer = await openSession(gateway, path, body, gateway.merchant);
    expect(answer.body.status).toBe(0);
    const customer = new CashierCustomer(gateway.url);
    const page = await customer.login(answer.body.redirect_url as string);
    return { order_id: body.order_id as string, auth_token: answer.body.auth_token as string, customer, page };
  }

  /**
   * A card attempt; returns the result page. The card form is opened afresh: after a declined
   * attempt the result page offers the choice of method, not a form.
   */
  async function attempt(customer: CashierCustomer, cvv: string) {
    const form = await customer.get('/cashier?method=card');
    const posted = await customer.payByCard(form.text, { cvv });
    expect(posted.status).toBe(303);
    return customer.get(posted.location!);
  }

  it("1: an unknown order_id, and another merchant's order, get the same answer: only the envelope", async () => {
    const unknown = await find(gw, orderId('nope'));
    expect(unknown.body).toMatchObject({ status: 1, description: 'Order not found', version: '1.1' });
    expect(Object.keys(unknown.body).sort()).toEqual(ENVELOPE_ONLY);
    expect(verifyBody(unknown.body, gw.merchant.secret)).toBe(true);

    const other = await gw.createMerchant();
    const theirs = initCheckout(other, shop.url);
    expect((await openSession(gw, '/api/init-checkout', theirs, other)).body.status).toBe(0);
    const answer = await find(gw, theirs.order_id as string);
    expect(answer.body).toMatchObject({ status: 1, description: 'Order not found' });
    expect(Object.keys(answer.body).sort()).toEqual(ENVELOPE_ONLY);
    // Found by its owner (still open).
    const own = await postSigned(gw.url, '/api/find-order', findOrderBody(other, theirs.order_id as string), other.secret);
    expect(own.body).toMatchObject({ status: 3 });
  });

  it('3: an open order, with or without a declined attempt', async () => {
    const { order_id, customer } = await openOrder(gw);
    const open = await find(gw, order_id);
    expect(open.body).toMatchObject({ status: 3, description: 'Order is still open' });
    expect(Object.keys(open.body).sort()).toEqual(ENVELOPE_ONLY);
    const declined = await attempt(customer, '000');
    expect(textOf(declined.text)).toContain('Payment declined');
    expect(textOf(declined.text)).toContain('You can try again with another card or method.');
    expect((await find(gw, order_id)).body).toMatchObject({ status: 3 });
  });

  it("0: an approved order answers the transaction's details; a declined attempt before it does not count", async () => {
    const { order_id, auth_token, customer, page } = await openOrder(gw, '/api/init-checkout', { variable1: 'alpha', variable2: 'beta' });
    const declined = await attempt(customer, '000');
    expect(textOf(declined.text)).toContain('Payment declined');
    expect(textOf(declined.text)).toContain('[TEST] Do not honor');
    expect((await find(gw, order_id)).body).toMatchObject({ status: 3 });
    const approved = await attempt(customer, '568');
    expect(textOf(approved.text)).toContain('Payment approved');
    const answer = await find(gw, order_id);
    expect(answer.body).toMatchObject({
      status: 0,
      description: 'Order found',
      order_status: 'approved',
      transaction_type: 'sale',
      transaction_status: 'approved',
      order_id,
      frontend: gw.merchant.frontend,
      merchant_id: gw.merchant.merchant_id,
      amount: 1999,
      currency: 'USD',
      charge_amount: 1999,
      charge_currency: 'USD',
      payment_method: 'card',
      payment_processor: 'sandbox',
      card_number: '411111******1111',
      card_type: 'VISA',
      card_exp: '12/2035',
      auth_token,
      error_code: '0',
      variable1: 'alpha',
      variable2: 'beta',
      version: '1.1',
    });
    expect(answer.body.trace_id).toEqual(expect.any(Number));
    expect(answer.body.transaction_id).toMatch(/^sbx_/);
    expect(verifyBody(answer.body, gw.merchant.secret)).toBe(true);
    expect(JSON.stringify(answer.body)).not.toContain('4111111111111111');
    // Only spec §4.7's fields (and frontend, variable3): the approved sale's card_token (decisions §9), which its
    // notification carries, is not one of them.
    const sale = await gw.gateway.deps.store.transactions.get(answer.body.trace_id as number);
    expect(sale!.card_token).toEqual(expect.any(String));
    expect(buildNotificationPayload(sale!, 0)).toHaveProperty('card_token', sale!.card_token);
    expect(answer.body).not.toHaveProperty('card_token');
    expect(JSON.stringify(answer.body)).not.toContain(sale!.card_token!);
    for (const key of Object.keys(answer.body)) expect([...FIND_ORDER_FIELDS, ...ENVELOPE_ONLY], key).toContain(key);
    // The order is closed: the cashier takes no further payment for it.
    const again = await customer.get('/cashier');
    expect(textOf(again.text)).toContain('This order is paid');
    const forced = await customer.post(
      '/cashier/pay',
      { method: 'card', card_number: '4111111111111111', card_exp: '12/35', cvv: '568' },
      page.text,
    );
    expect(textOf(forced.text)).toContain('This order is paid');
    const row = await gw.gateway.deps.store.cashier.findSessionByOrder(gw.merchant.merchant_id, order_id);
    expect(await gw.gateway.deps.store.cashier.listTransactions(row!.session_id)).toHaveLength(2);
  });

  it('0: a payout order (init-pay-out-order) is found too, as a payout', async () => {
    const { order_id, customer } = await openOrder(gw, '/api/init-pay-out-order', { amount: 4200 });
    const form = await customer.get('/cashier?method=card');
    const paid = await customer.post('/cashier/pay', { method: 'card', card_number: '4111111111111111', card_exp: '12/35' }, form.text);
    expect(textOf(paid.text)).toContain('Withdrawal approved');
    expect((await find(gw, order_id)).body).toMatchObject({
      status: 0,
      order_status: 'approved',
      transaction_type: 'payout',
      transaction_status: 'approved',
      amount: 4200,
      order_id,
    });
  });

  it('refuses bad requests like every signed call: missing field 10, wrong version 10, unknown frontend 11, bad signature 2', async () => {
    const { order_id } = await openOrder(gw);
    const missing = await find(gw, order_id, { order_id: undefined });
    expect(missing.body).toMatchObject({ status: 10, description: 'Missing required field: order_id' });
    expect((await find(gw, order_id, { version: '1.2' })).body).toMatchObject({ status: 10 });
    expect((await find(gw, order_id, { frontend: 'someone-else' })).body).toMatchObject({ status: 11 });
    const bad = await postJson(gw.url, '/api/find-order', { ...findOrderBody(gw.merchant, order_id), signature: 'f'.repeat(96) });
    expect(bad.body).toMatchObject({ status: 2 });
    expect((await find(gw, order_id, { order_id: 'x'.repeat(51) })).body).toMatchObject({ status: 10 });
  });

  it('every bad field gets a description of at most 75 characters (spec §4.7) that names the field', async () => {
    const { order_id } = await openOrder(gw);
    for (const field of ['order_id', 'frontend', 'merchant_id', 'version', 'timestamp']) {
      for (const value of [undefined, true, 'x'.repeat(300), ...(field === 'timestamp' ? [] : [-5])]) {
        const answer = await find(gw, order_id, { [field]: value });
        const what = `${field} = ${JSON.stringify(value)?.slice(0, 12)}`;
        expect(answer.body.status, what).toBe(10);
        const description = answer.body.description as string;
        expect(description.length, `${what}: ${description}`).toBeLessThanOrEqual(75);
        expect(description, what).toContain(field);
      }
    }
  });

  it('the merchant is identified by frontend only: an application_key next to it is ignored, valid or not', async () => {
    const { order_id } = await openOrder(gw);
    expect((await find(gw, order_id, { application_key: gw.merchant.application_key })).body).toMatchObject({ status: 3 });
    expect((await find(gw, order_id, { application_key: 'not-ours' })).body).toMatchObject({ status: 3 });
    // A valid application_key does not stand in for an unknown frontend.
    expect((await find(gw, order_id, { application_key: gw.merchant.application_key, frontend: 'not-ours' })).body).toMatchObject({
      status: 11,
    });
  });

  it('time limit (sandbox clock): 4 with no transaction; the latest declined one after only declines; a pending one, then its late approval', async () => {
    // Its own gateway: the clock moves, and asynchronous results (CVV 222) settle only after 20 minutes.
    const clock_gw = await startTestGateway(kind, { env: { PAYGATE_SANDBOX_SETTLE_SECONDS: '1200' } });
    try {
      const empty = await openOrder(clock_gw);
      const declines = await openOrder(clock_gw);
      const first = await attempt(declines.customer, '000');
      expect(textOf(first.text)).toContain('Payment declined');
      expect(textOf(first.text)).toContain('[TEST] Do not honor');
      const second = await attempt(declines.customer, '801');
      expect(textOf(second.text)).toContain('Insufficient funds');
      const pending = await openOrder(clock_gw);
      const waiting = await attempt(pending.customer, '222');
      expect(textOf(waiting.text)).toContain('Processing');
      expect((await find(clock_gw, pending.order_id)).body).toMatchObject({ status: 3 });

      const moved = await postJson(clock_gw.url, '/sandbox/clock', { advance_seconds: 901 }, { authorization: `Bearer ${ADMIN_TOKEN}` });
      expect(moved.http_status).toBe(200);
      // Due work closes the orders from the database.
      const store = clock_gw.gateway.deps.store;
      await waitUntil(
        async () => (await store.cashier.findSessionByOrder(clock_gw.merchant.merchant_id, empty.order_id))?.order_status === 'rejected',
        'due work to close the empty order',
        5000,
      );

      const timed_out = await find(clock_gw, empty.order_id);
      expect(timed_out.body).toMatchObject({ status: 4, description: 'Order timed out with no transactions' });
      expect(Object.keys(timed_out.body).sort()).toEqual(ENVELOPE_ONLY);

      const declined = await find(clock_gw, declines.order_id);
      expect(declined.body).toMatchObject({
        status: 0,
        order_status: 'rejected',
        transaction_status: 'rejected',
        error_code: '1',
        order_id: declines.order_id,
      });
      // The latest of the two declines (801), not the first (000).
      expect(declined.body.error_details).toMatch(/Insufficient funds/);
      expect(declined.body.error_details).not.toMatch(/Do not honor/);

      const still_pending = await find(clock_gw, pending.order_id);
      expect(still_pending.body).toMatchObject({ status: 0, order_status: 'rejected', transaction_status: 'pending' });
      // The customer's page says the order is over; the payment may still finish (spec §4.7).
      expect(textOf((await pending.customer.get('/cashier')).text)).toContain('This order has expired');

      await postJson(clock_gw.url, '/sandbox/clock', { advance_seconds: 400 }, { authorization: `Bearer ${ADMIN_TOKEN}` });
      await waitUntil(
        async () => (await store.cashier.findSessionByOrder(clock_gw.merchant.merchant_id, pending.order_id))?.order_status === 'approved',
        'the late approval to reach the order',
        5000,
      );
      expect((await find(clock_gw, pending.order_id)).body).toMatchObject({
        status: 0,
        order_status: 'approved',
        transaction_status: 'approved',
      });
    } finally {
      await clock_gw.close();
    }
  });

  it('find-order closes an expired order itself, without waiting for due work', async () => {
    const slow_gw = await startTestGateway(kind, { env: { PAYGATE_DUE_WORK_POLL_MS: '60000' } });
    try {
      const { order_id } = await openOrder(slow_gw);
      await postJson(slow_gw.url, '/sandbox/clock', { advance_seconds: 900 }, { authorization: `Bearer ${ADMIN_TOKEN}` });
      expect((await find(slow_gw, order_id)).body).toMatchObject({ status: 4 });
      const session = await slow_gw.gateway.deps.store.cashier.findSessionByOrder(slow_gw.merchant.merchant_id, order_id);
      expect(session).toMatchObject({ order_status: 'rejected' });
      expect(session!.closed_at_ms).toEqual(expect.any(Number));
    } finally {
      await slow_gw.close();
    }
  });
  it('an order to authorize (init-checkout transaction_type authorize): authorized until captured, then approved; a voided one closes as rejected', async () => {
    const capture_or_void = (path: '/api/capture' | '/api/void', trace_id: unknown) =>
      postSigned(
        gw.url,
        path,
        {
          merchant_id: gw.merchant.merchant_id,
          frontend: gw.merchant.frontend,
          reference_id: trace_id,
          version: '1.1',
          timestamp: gatewayNow(gw),
        },
        gw.merchant.secret,
      );
    const held = await openOrder(gw, '/api/init-checkout', { transaction_type: 'authorize', payment_method: undefined });
    // Only cards: a wallet payment cannot be held for a later capture.
    expect((await held.customer.get('/cashier')).text).not.toContain('value="ewallet"');
    const sale_order = await openOrder(gw, '/api/init-checkout', { payment_method: undefined });
    expect((await sale_order.customer.get('/cashier')).text).toContain('value="ewallet"');
    const paid = await attempt(held.customer, '568');
    expect(paid.status).toBe(200);
    // The customer is told the amount is held, not that the payment "will be completed shortly".
    expect(paid.text).toContain('Payment authorized');
    expect(paid.text).toContain('The amount is reserved on your card. The shop takes it when your order is ready');
    const authorized = await find(gw, held.order_id);
    expect(authorized.body).toMatchObject({
      status: 0,
      order_status: 'authorized',
      transaction_type: 'authorize',
      transaction_status: 'authorized',
    });
    expect((await capture_or_void('/api/capture', authorized.body.trace_id)).body).toMatchObject({
      status: 0,
      transaction_status: 'approved',
    });
    expect((await find(gw, held.order_id)).body).toMatchObject({
      status: 0,
      order_status: 'approved',
      transaction_status: 'approved',
      amount: 1999,
    });

    const voided = await openOrder(gw, '/api/init-checkout', { transaction_type: 'authorize' });
    await attempt(voided.customer, '568');
    const before = await find(gw, voided.order_id);
    expect(before.body).toMatchObject({ order_status: 'authorized' });
    expect((await capture_or_void('/api/void', before.body.trace_id)).body).toMatchObject({ status: 0, transaction_status: 'cancelled' });
    // A void is the merchant's decision on the order: it closes within the time limit, and the
    // customer is not offered another payment for it.
    const after_void = await find(gw, voided.order_id);
    expect(after_void.body).toMatchObject({
      status: 0,
      order_status: 'rejected',
      transaction_type: 'authorize',
      transaction_status: 'cancelled',
      trace_id: before.body.trace_id,
    });
    const session = await gw.gateway.deps.store.cashier.findSessionByOrder(gw.merchant.merchant_id, voided.order_id);
    expect(session).toMatchObject({ order_status: 'rejected' });
    expect(session!.closed_at_ms).toEqual(expect.any(Number));
    const closed_page = await voided.customer.get('/cashier');
    expect(textOf(closed_page.text)).toContain('This order was cancelled');
    expect(closed_page.text).not.toContain('name="card_number"');

    // An unknown transaction_type is refused by name.
    const bad = await openSession(
      gw,
      '/api/init-checkout',
      initCheckout(gw.merchant, shop.url, { transaction_type: 'payout', timestamp: gatewayNow(gw) }),
      gw.merchant,
    );
    expect(bad.body).toMatchObject({ status: 10, description: expect.stringContaining('transaction_type') });
  });
});
