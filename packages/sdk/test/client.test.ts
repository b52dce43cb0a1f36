// Every method of the SDK's client against a real gateway over real HTTP: the variant and version
// each one picks are the ones the gateway takes (it would refuse anything else with status 10),
// every answer verified, and the named outcomes a merchant branches on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PaygateClient, type Outcome } from '@paygate/sdk';
import type { TestGateway } from '../../../test/support/gateway.js';
import { CARD, clientFor, CUSTOMER, orderId, saleFields, withGateway } from './support.js';

/** The answer of an ok outcome, or a failure that shows the refusal. */
function ok<A>(outcome: Outcome<A>): A {
  if (outcome.kind !== 'ok') throw new Error(`expected ok, got ${JSON.stringify(outcome)}`);
  return outcome.answer;
}

const SHOP = { return_url: 'https://shop.example/return', notification_url: 'https://shop.example/notify' };

describe('PaygateClient against a real gateway', () => {
  let gw: TestGateway;
  let client: PaygateClient;
  withGateway((started) => (gw = started));
  beforeAll(() => {
    client = clientFor(gw, gw.merchant);
  });
  afterAll(() => client.close());

  it('sale: approved with a card_token, sent again with the same order_id it answers the same transaction', async () => {
    const fields = saleFields();
    const first = ok(await client.sale(fields));
    expect(first).toMatchObject({ status: 0, transaction_status: 'approved', version: '1.2' });
    expect(first.card_token).toMatch(/^[A-Za-z0-9]{1,32}$/);
    const again = ok(await client.sale(fields));
    expect(again.trace_id).toBe(first.trace_id);
    // The same order_id with another amount is a refusal, not an error: a named outcome.
    expect(await client.sale({ ...fields, amount: 2000 })).toEqual({ kind: 'refused', status: 12, description: 'Duplicate order_id' });
  });

  it('sale: a 3-D Secure card is pending_async with the page to send the customer to; a declined one is rejected', async () => {
    const challenged = ok(await client.sale(saleFields({ cvv: '333' })));
    expect(challenged.transaction_status).toBe('pending_async');
    expect(challenged.redirect_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/sandbox\/3ds\//);
    const declined = ok(await client.sale(saleFields({ cvv: '000' })));
    expect(declined).toMatchObject({ transaction_status: 'rejected', error_details: '[TEST] Do not honor' });
  });

  it('saleFrontend (1.1) and both refunds: refund (1.2, application_key) and refundFrontend (1.1)', async () => {
    const sale = ok(await client.saleFrontend({ ...saleFields({ amount: 3000 }) }));
    expect(sale).toMatchObject({ transaction_status: 'approved', version: '1.1' });
    const refund_fields = {
      amount: 1000,
      currency: 'USD',
      card_number: CARD.card_number,
      card_exp: CARD.card_exp,
      pin: CUSTOMER.pin,
      email: CUSTOMER.email,
      requester_ip: CUSTOMER.requester_ip,
      country: CUSTOMER.country,
      first_name: CUSTOMER.first_name,
      last_name: CUSTOMER.last_name,
      state: CUSTOMER.state,
      zip: CUSTOMER.zip,
      reference_id: sale.trace_id!,
    };
    const refund = ok(await client.refund({ ...refund_fields, order_id: orderId('refund') }));
    expect(refund).toMatchObject({ transaction_status: 'approved', version: '1.2' });
    const refund_frontend = ok(await client.refundFrontend({ ...refund_fields, order_id: orderId('refund') }));
    expect(refund_frontend).toMatchObject({ transaction_status: 'approved', version: '1.1' });
    expect(refund_frontend.trace_id).not.toBe(refund.trace_id);
    // More than is left is the gateway's refusal (status 14).
    const over = await client.refund({ ...refund_fields, amount: 5000, order_id: orderId('refund') });
    expect(over).toMatchObject({ kind: 'refused', status: 14 });
  });

  it("paypalSale goes to the buyer's wallet page (pending_async) without card fields; confirmed, paypalRefund refunds it", async () => {
    const { card_number: _n, card_exp: _e, cvv: _c, ...fields } = saleFields({ amount: 2500 });
    const sale = ok(await client.paypalSale(fields));
    expect(sale).toMatchObject({ status: 0, transaction_status: 'pending_async', version: '1.2' });
    // In the sandbox its e-wallet page stands in for PayPal's approval page.
    const confirmed = await fetch(sale.redirect_url!, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'action=confirm',
      redirect: 'manual',
    });
    expect(confirmed.headers.get('location')).toBe(fields.return_url);
    const refund = ok(
      await client.paypalRefund({
        amount: 500,
        currency: 'USD',
        pin: CUSTOMER.pin,
        order_id: orderId('refund'),
        reference_id: sale.trace_id!,
      }),
    );
    expect(refund).toMatchObject({ status: 0, transaction_status: 'approved' });
  });

  it('authorize holds the funds; a partial capture approves what it captures, sent again it answers the same; nothing is captured twice', async () => {
    const fields = saleFields({ amount: 5000 });
    const held = ok(await client.authorize(fields));
    expect(held).toMatchObject({ status: 0, transaction_status: 'authorized', version: '1.2', error_details: '[TEST] Authorized' });
    expect(held.card_token).toMatch(/^[A-Za-z0-9]{1,32}$/);
    // Keyed by order_id like a sale: the same request answers the same authorization.
    expect(ok(await client.authorize(fields)).trace_id).toBe(held.trace_id);
    const trace_id = held.trace_id!;

    const captured = ok(await client.capture({ reference_id: trace_id, amount: 3000 }));
    expect(captured).toMatchObject({ status: 0, trace_id, transaction_status: 'approved', version: '1.2' });
    // The same capture again (a lost answer): the same answer, no second capture.
    expect(ok(await client.capture({ reference_id: trace_id, amount: 3000 }))).toMatchObject({ trace_id, transaction_status: 'approved' });
    const read = ok(await client.transactionStatus(trace_id));
    expect(read).toMatchObject({ transaction_type: 'authorize', transaction_status: 'approved', amount: 3000, charge_amount: 3000 });

    // One capture per authorization: another amount, or a void, is refused with status 37 and changes nothing.
    expect(await client.capture({ reference_id: trace_id, amount: 1000 })).toEqual({
      kind: 'refused',
      status: 37,
      description: 'Capture refused: the authorization was already captured for 3000',
    });
    expect(await client.void({ reference_id: trace_id })).toEqual({
      kind: 'refused',
      status: 37,
      description: 'Void refused: the authorization was already captured for 3000',
    });
    expect(ok(await client.transactionStatus(trace_id))).toMatchObject({ transaction_status: 'approved', amount: 3000 });
  });

  it('the frontend forms (authorizeFrontend; capture and void with only a frontend, version 1.1); void releases the authorization', async () => {
    const frontend_only = new PaygateClient({
      base_url: gw.url,
      merchant_id: gw.merchant.merchant_id,
      secret: gw.merchant.secret,
      frontend: gw.merchant.frontend,
    });
    try {
      const held = ok(await frontend_only.authorizeFrontend(saleFields({ amount: 2500 })));
      expect(held).toMatchObject({ transaction_status: 'authorized', version: '1.1' });
      const trace_id = held.trace_id!;
      expect(await frontend_only.capture({ reference_id: trace_id, amount: 2501 })).toEqual({
        kind: 'refused',
        status: 37,
        description: 'Capture refused: amount exceeds the authorized amount (2500)',
      });
      const voided = ok(await frontend_only.void({ reference_id: trace_id }));
      expect(voided).toMatchObject({ status: 0, trace_id, transaction_status: 'cancelled', version: '1.1' });
      expect(ok(await frontend_only.void({ reference_id: trace_id })).transaction_status).toBe('cancelled');
      expect(await frontend_only.capture({ reference_id: trace_id })).toEqual({
        kind: 'refused',
        status: 37,
        description: 'Capture refused: the authorization was already voided',
      });
      expect(ok(await frontend_only.transactionStatus(trace_id))).toMatchObject({
        transaction_type: 'authorize',
        transaction_status: 'cancelled',
      });
    } finally {
      frontend_only.close();
    }
  });

  it("capture and void refused: a sale is not an authorization (37), an unknown or another merchant's trace_id is not found (13)", async () => {
    const sale = ok(await client.sale(saleFields()));
    expect(await client.capture({ reference_id: sale.trace_id! })).toEqual({
      kind: 'refused',
      status: 37,
      description: `Capture refused: transaction ${sale.trace_id} is not an authorized authorization (transaction_type sale, status approved)`,
    });
    expect(await client.void({ reference_id: 99_999_999 })).toEqual({ kind: 'refused', status: 13, description: 'Transaction not found' });
    const other = await gw.createMerchant();
    const other_client = clientFor(gw, other);
    try {
      const theirs = ok(await other_client.authorize(saleFields()));
      expect(theirs.transaction_status).toBe('authorized');
      expect(await client.capture({ reference_id: theirs.trace_id! })).toEqual({
        kind: 'refused',
        status: 13,
        description: 'Transaction not found',
      });
      expect(ok(await other_client.transactionStatus(theirs.trace_id!)).transaction_status).toBe('authorized');
    } finally {
      other_client.close();
    }
  });

  it('payout encrypts the card (spec §5.3) and the gateway opens it; payoutFrontend sends it plain', async () => {
    const payout_fields = {
      amount: 2500,
      currency: 'USD',
      ...CUSTOMER,
      gateway: gw.merchant.gateway!,
      ...SHOP,
      card_number: CARD.card_number,
      card_exp: CARD.card_exp,
    };
    const encrypted = ok(await client.payout({ ...payout_fields, order_id: orderId('payout') }));
    expect(encrypted).toMatchObject({ status: 0, transaction_status: 'approved', version: '1.2' });
    const read = ok(await client.transactionStatus(encrypted.trace_id!));
    expect(read).toMatchObject({ transaction_type: 'payout', card_number: '411111******1111', amount: 2500 });
    const plain = ok(await client.payoutFrontend({ ...payout_fields, order_id: orderId('payout') }));
    expect(plain).toMatchObject({ transaction_status: 'approved', version: '1.1' });
    // The payout's outcome by amount (decisions.md §7): 1400 rejected.
    const rejected = ok(await client.payout({ ...payout_fields, amount: 1400, order_id: orderId('payout') }));
    expect(rejected.transaction_status).toBe('rejected');
  });

  it("directPayout with the processor's data_ fields; a missing one is named", async () => {
    const fields = { amount: 1200, currency: 'USD', pin: CUSTOMER.pin, country: 'GB', gateway: gw.merchant.gateway!, ...SHOP };
    const paid = ok(await client.directPayout({ ...fields, order_id: orderId('direct'), data_account_number: 'GB29NWBK60161331926819' }));
    expect(paid).toMatchObject({ transaction_type: 'payout', transaction_status: 'approved', error_code: 0 });
    expect(await client.directPayout({ ...fields, order_id: orderId('direct') })).toEqual({
      kind: 'refused',
      status: 10,
      description: 'Missing required field: data_account_number',
    });
  });

  it('tokenize gives the same token for the same card; transactionStatus reads a transaction by trace_id', async () => {
    const first = ok(await client.tokenize({ pin: 'cust-tok', card_number: CARD.card_number, card_exp: CARD.card_exp }));
    const second = ok(await client.tokenize({ pin: 'cust-tok', card_number: CARD.card_number, card_exp: CARD.card_exp }));
    expect(first.card_token).toBe(second.card_token);
    expect(first.card_number).toBe('411111******1111');
    expect(await client.transactionStatus(99_999_999)).toEqual({ kind: 'refused', status: 13, description: 'Transaction not found' });
  });

  it('the cashier sessions: initPayIn, initCheckout (same order_id, same session), initPayOut, initPayOutOrder; findOrder', async () => {
    const customer = { currency: 'USD', country: 'GB', ...SHOP };
    const pay_in = ok(await client.initPayIn({ ...customer, pin: 'cust-in', validation_url: 'https://shop.example/validate' }));
    expect(pay_in.redirect_url).toMatch(/\/cashier\/login\//);
    expect(pay_in.auth_token).toMatch(/\S/);
    const order_id = orderId('checkout');
    const checkout = ok(await client.initCheckout({ ...customer, pin: 'cust-co', order_id, amount: 1999 }));
    const checkout_again = ok(await client.initCheckout({ ...customer, pin: 'cust-co', order_id, amount: 1999 }));
    expect(checkout_again.auth_token).toBe(checkout.auth_token);
    expect(await client.findOrder(order_id)).toEqual({ kind: 'open', description: 'Order is still open' });
    expect(await client.findOrder(orderId('nobody'))).toEqual({ kind: 'not_found', description: 'Order not found' });
    const pay_out = ok(
      await client.initPayOut({ ...customer, pin: 'cust-out', balance: 5000, validation_url: 'https://shop.example/validate' }),
    );
    expect(pay_out.redirect_url).toMatch(/\/cashier\/login\//);
    const pay_out_order = ok(await client.initPayOutOrder({ ...customer, pin: 'cust-po', order_id: orderId('po'), amount: 700 }));
    expect(pay_out_order.auth_token).toMatch(/\S/);
  });

  it('plans: create, update, read, list; an unknown one is a refusal', async () => {
    const created = ok(await client.createPlan({ name: 'Gold', prices: [{ amount: 990, currency: 'USD' }], billing_cycle: 'monthly' }));
    expect(created).toMatchObject({ status: 0, name: 'Gold', subscription_plan_status: 'active', version: '1.3' });
    expect(created.prices[0]!.price_id).toMatch(/\S/);
    const updated = ok(await client.updatePlan(created.plan_id, { name: 'Gold plus', description: 'More gold' }));
    expect(updated).toMatchObject({ name: 'Gold plus', plan_description: 'More gold' });
    expect(ok(await client.getPlan(created.plan_id)).name).toBe('Gold plus');
    const listed = ok(await client.listPlans({ page_size: 100 }));
    expect(listed.plans.map((plan) => plan.plan_id)).toContain(created.plan_id);
    expect(await client.getPlan('plan_unknown')).toEqual({ kind: 'refused', status: 30, description: 'Plan not found' });
  });

  it('subscriptions: create (again: the same one), read, list, cancel; created inactive, then activated', async () => {
    const plan = ok(
      await client.createPlan({ name: 'Monthly', prices: [{ amount: 500, currency: 'USD' }], billing_cycle: 'monthly', trial_period: 30 }),
    );
    const token = ok(await client.tokenize({ pin: 'cust-sub', card_number: CARD.card_number, card_exp: CARD.card_exp })).card_token!;
    const fields = {
      plan_id: plan.plan_id,
      price_id: plan.prices[0]!.price_id,
      cid: orderId('cid'),
      card_token: token,
      notification_url: 'https://shop.example/subs',
    };
    const created = ok(await client.createSubscription(fields));
    expect(created).toMatchObject({ subscription_status: 'active', cid: fields.cid, price: { amount: 500, currency: 'USD' } });
    const again = ok(await client.createSubscription(fields));
    expect(again.subscription_id).toBe(created.subscription_id);
    expect(ok(await client.getSubscription(created.subscription_id)).subscription_status).toBe('active');
    const listed = ok(await client.listSubscriptions({ cid: fields.cid }));
    expect(listed.subscriptions.map((s) => s.subscription_id)).toEqual([created.subscription_id]);
    expect(ok(await client.cancelSubscription(created.subscription_id)).subscription_status).toBe('canceled');

    const dormant = ok(await client.createSubscription({ ...fields, cid: orderId('cid'), activate: false }));
    expect(dormant.subscription_status).toBe('inactive');
    expect(ok(await client.activateSubscription(dormant.subscription_id)).subscription_status).toBe('active');
    // spec §7: an unknown plan on create is status -1, a refusal like any other here.
    expect(await client.createSubscription({ ...fields, plan_id: 'plan_nothing' })).toEqual({
      kind: 'refused',
      status: -1,
      description: 'Plan not found',
    });
  });

  it('a call needing an identity the client was not given says which option is missing', async () => {
    const no_frontend = clientFor(gw, gw.merchant, { frontend: undefined });
    await expect(no_frontend.findOrder('x')).rejects.toThrow("give frontend in the client's options");
    no_frontend.close();
  });
});
