// The confirmation step of the back office's actions that move money or stop something (issue 30,
// docs/backoffice.md §2), over real HTTP on both stores: a payout approved or rejected, a
// subscription cancelled, a merchant, a gateway and a user disabled and enabled. The first form
// answers a page naming what will happen (amount in major units, masked card, customer, the
// gateway's label; a refund's and a capture's too) and changes nothing, not even the audit log; only the same form sent again
// with confirm=yes, with its CSRF token, makes the change. Another merchant's record is the page
// that does not exist at both steps.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../../src/domain/merchants.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../support/gateway.js';
import { storeKinds } from '../support/stores.js';
import { nowSeconds, postSigned } from '../support/client.js';
import { payoutE } from '../support/payout-bodies.js';
import { addUser, BackOfficeClient, pageText, sale } from '../support/backoffice.js';
import { authorize } from '../support/backoffice-authorizations.js';
import { createPlanVia, subscribeVia, tokenize, useClock } from '../support/v13.js';

describe.each(storeKinds())('back-office confirmations on %s', (kind) => {
  let gw: TestGateway;
  let shop: CreatedMerchant;
  let other: CreatedMerchant;
  let operator: BackOfficeClient;
  let staff: BackOfficeClient;
  let outsider: BackOfficeClient;

  beforeAll(async () => {
    gw = await startTestGateway(kind, { env: { PAYGATE_RATE_LIMIT_SIGN_IN_PER_MINUTE: '1000' } });
    shop = await gw.createMerchant();
    other = await gw.createMerchant();
    await addUser(gw, 'operator@example.com', 'operator');
    await addUser(gw, 'staff@example.com', 'merchant', shop.merchant_id);
    await addUser(gw, 'outsider@example.com', 'merchant', other.merchant_id);
    operator = new BackOfficeClient(gw.url);
    staff = new BackOfficeClient(gw.url);
    outsider = new BackOfficeClient(gw.url);
    await operator.signIn('operator@example.com');
    await staff.signIn('staff@example.com');
    await outsider.signIn('outsider@example.com');
    const hold = await fetch(`${gw.url}/operator/gateways/${shop.gateway}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ hold_payouts: true }),
    });
    expect(hold.status).toBe(200);
  });
  afterAll(async () => {
    await gw?.close();
  });

  async function auditCount(): Promise<number> {
    return (await gw.gateway.deps.store.backoffice.listAudit(null, null, 1000)).length;
  }

  async function heldPayout(amount: number): Promise<number> {
    const payout = await postSigned(gw.url, '/api/process', payoutE(shop, { amount, timestamp: nowSeconds() }), shop.secret);
    expect(payout.body).toMatchObject({ status: 0, transaction_status: 'requested' });
    return Number(payout.body.trace_id);
  }

  it('approves a payout only once its confirmation (amount, card, customer, gateway) is confirmed', async () => {
    const store = gw.gateway.deps.store;
    const trace_id = await heldPayout(123_456);
    const label = (await store.merchants.getGateway(shop.gateway!))!.label;
    await staff.get('/backoffice/payouts');
    const audit_before = await auditCount();
    const first = await staff.post(`/backoffice/payouts/${trace_id}/approve`, {});
    expect(first.status).toBe(200);
    const text = pageText(first.text);
    expect(text).toContain(`Confirm: approve payout ${trace_id}`);
    expect(text).toContain('Amount 1234.56 USD');
    expect(text).toContain('411111******1111');
    expect(text).toMatch(/Customer PIN \S+/);
    expect(text).toContain(`Gateway ${label}`);
    expect(text).not.toContain(shop.gateway!);
    expect((await store.transactions.get(trace_id))!.status).toBe('requested');
    expect(await auditCount()).toBe(audit_before);
    // Another merchant's payout: not found, at both steps.
    await outsider.get('/backoffice/payouts');
    expect((await outsider.post(`/backoffice/payouts/${trace_id}/approve`, {})).status).toBe(404);
    expect((await outsider.post(`/backoffice/payouts/${trace_id}/approve`, { confirm: 'yes' })).status).toBe(404);
    // The confirm form without its token: refused, nothing done.
    expect((await staff.post(`/backoffice/payouts/${trace_id}/approve`, { confirm: 'yes' }, { csrf: false })).status).toBe(403);
    expect((await store.transactions.get(trace_id))!.status).toBe('requested');
    const done = await staff.post(`/backoffice/payouts/${trace_id}/approve`, { confirm: 'yes' });
    expect([done.status, done.location]).toEqual([303, '/backoffice/payouts?notice=approved']);
    await expect.poll(async () => (await store.transactions.get(trace_id))!.status).toBe('approved');
    // A confirmation sent again finds the payout decided: refused, nothing more done.
    expect((await staff.post(`/backoffice/payouts/${trace_id}/approve`, { confirm: 'yes' })).status).toBe(409);
    expect((await staff.post(`/backoffice/payouts/${trace_id}/approve`, {})).status).toBe(409);
  });

  it("names the gateway by its label on a refund's and a capture's confirmation too", async () => {
    const label = (await gw.gateway.deps.store.merchants.getGateway(shop.gateway!))!.label;
    const paid = await sale(gw, shop, { amount: 2500 });
    const held = await authorize(gw, shop, { amount: 1000 });
    await staff.get(`/backoffice/transactions/${paid.trace_id}`);
    const refund = pageText(
      (await staff.post(`/backoffice/transactions/${paid.trace_id}/refund`, { amount: '5', refund_key: 'e'.repeat(32) })).text,
    );
    expect(refund).toContain('Amount to refund 5.00 USD');
    expect(refund).toContain(`Gateway ${label}`);
    const capture = pageText((await staff.post(`/backoffice/transactions/${held.trace_id}/capture`, { amount: '10' })).text);
    expect(capture).toContain('Amount to capture 10.00 USD');
    expect(capture).toContain(`Gateway ${label}`);
    expect(await gw.gateway.deps.store.transactions.listRefundsOf(paid.trace_id, 10)).toEqual([]);
    expect((await gw.gateway.deps.store.transactions.get(held.trace_id))!.status).toBe('authorized');
  });

  it('rejects a payout with the reason given on the first form, shown on the confirmation', async () => {
    const store = gw.gateway.deps.store;
    const trace_id = await heldPayout(700);
    await staff.get('/backoffice/payouts');
    expect((await staff.post(`/backoffice/payouts/${trace_id}/reject`, {})).status).toBe(400);
    const first = await staff.post(`/backoffice/payouts/${trace_id}/reject`, { reason: 'Account <not> verified' });
    expect(first.status).toBe(200);
    expect(pageText(first.text)).toContain('Reason for rejecting Account <not> verified');
    expect(first.text).toContain('<input type="hidden" name="reason" value="Account &lt;not&gt; verified">');
    expect(pageText(first.text)).toContain('Amount 7.00 USD');
    expect((await store.transactions.get(trace_id))!.status).toBe('requested');
    const done = await staff.post(`/backoffice/payouts/${trace_id}/reject`, { reason: 'Account <not> verified', confirm: 'yes' });
    expect(done.location).toBe('/backoffice/payouts?notice=rejected');
    expect((await store.transactions.get(trace_id))!.status).toBe('rejected');
    expect((await store.transactions.listStatusChanges(trace_id)).at(-1)!.reason).toContain('Account <not> verified');
  });

  it('cancels a subscription only once confirmed, naming its price, card and customer', async () => {
    const store = gw.gateway.deps.store;
    useClock(() => Math.floor(gw.gateway.deps.clock.now_ms() / 1000));
    let id: string;
    try {
      const plan = await createPlanVia(gw.url, shop, { name: 'Confirmed monthly' });
      id = String((await subscribeVia(gw.url, shop, plan, await tokenize(gw.url, shop), { cid: 'cust-confirm' })).subscription_id);
    } finally {
      useClock(null);
    }
    await staff.get(`/backoffice/subscriptions/${id}`);
    const first = await staff.post(`/backoffice/subscriptions/${id}/cancel`, {});
    expect(first.status).toBe(200);
    const text = pageText(first.text);
    expect(text).toContain(`Confirm: cancel subscription ${id}`);
    expect(text).toMatch(/Price \d+\.\d{2} USD \/ monthly/);
    expect(text).toContain('411111******1111');
    expect(text).toContain('Customer (cid) cust-confirm');
    expect((await store.subscriptions.get(shop.merchant_id, id))!.status).toBe('active');
    await outsider.get('/backoffice/overview');
    expect((await outsider.post(`/backoffice/subscriptions/${id}/cancel`, { confirm: 'yes' })).status).toBe(404);
    const done = await staff.post(`/backoffice/subscriptions/${id}/cancel`, { confirm: 'yes' });
    expect(done.location).toBe(`/backoffice/subscriptions/${id}?notice=canceled`);
    expect((await store.subscriptions.get(shop.merchant_id, id))!.status).toBe('canceled');
    // Once cancelled, the first form goes on at once: there is nothing left to confirm.
    expect((await staff.post(`/backoffice/subscriptions/${id}/cancel`, {})).location).toBe(
      `/backoffice/subscriptions/${id}?notice=already`,
    );
  });

  it('disables and enables a merchant, a gateway and a user only from their confirmation pages', async () => {
    const store = gw.gateway.deps.store;
    const target = await gw.createMerchant();
    await addUser(gw, 'leaver@example.com', 'merchant', target.merchant_id);
    const leaver = (await store.backoffice.findUserByEmail('leaver@example.com'))!;
    const gateway = (await store.merchants.getGateway(target.gateway!))!;
    await operator.get('/backoffice/merchants');
    const audit_before = await auditCount();

    const merchant_page = await operator.post(`/backoffice/merchants/${target.merchant_id}/disable`, {});
    expect(merchant_page.status).toBe(200);
    expect(pageText(merchant_page.text)).toContain(`Confirm: disable merchant ${target.merchant_id}`);
    expect(pageText(merchant_page.text)).toContain(`Gateways ${gateway.label}`);
    expect(pageText(merchant_page.text)).toContain("answered as an unknown merchant's");
    const gateway_page = await operator.post(`/backoffice/gateways/${gateway.gateway_id}/disable`, {});
    expect(pageText(gateway_page.text)).toContain(`Confirm: disable gateway ${gateway.label}`);
    expect(pageText(gateway_page.text)).toContain(`Merchant ${target.merchant_id}`);
    const user_page = await operator.post(`/backoffice/users/${leaver.user_id}/disable`, {});
    expect(pageText(user_page.text)).toContain('Confirm: disable user leaver@example.com');
    expect(pageText(user_page.text)).toContain('Their sessions end at once');
    // Nothing changed, nothing audited.
    expect((await store.merchants.get(target.merchant_id))!.disabled_at_ms).toBeNull();
    expect((await store.merchants.getGateway(gateway.gateway_id))!.enabled).toBe(1);
    expect((await store.backoffice.getUser(leaver.user_id))!.disabled_at_ms).toBeNull();
    expect(await auditCount()).toBe(audit_before);
    // Unknown records: not found at the first step too.
    for (const url of [
      '/backoffice/merchants/nobody/disable',
      '/backoffice/gateways/nogateway/disable',
      '/backoffice/users/nobody/disable',
    ])
      expect([url, (await operator.post(url, {})).status]).toEqual([url, 404]);

    for (const [url, notice] of [
      [`/backoffice/merchants/${target.merchant_id}/disable`, '/backoffice/merchants?notice=disabled'],
      [`/backoffice/gateways/${gateway.gateway_id}/disable`, '/backoffice/gateways?notice=disabled'],
      [`/backoffice/users/${leaver.user_id}/disable`, '/backoffice/users?notice=disabled'],
    ] as const) {
      const done = await operator.post(url, { confirm: 'yes' });
      expect([url, done.status, done.location]).toEqual([url, 303, notice]);
    }
    expect((await store.merchants.get(target.merchant_id))!.disabled_at_ms).not.toBeNull();
    expect((await store.merchants.getGateway(gateway.gateway_id))!.enabled).toBe(0);
    expect((await store.backoffice.getUser(leaver.user_id))!.disabled_at_ms).not.toBeNull();

    // Enabling asks too, and says what it starts again.
    const enable_page = await operator.post(`/backoffice/merchants/${target.merchant_id}/enable`, {});
    expect(pageText(enable_page.text)).toContain(`Confirm: enable merchant ${target.merchant_id}`);
    expect(pageText(enable_page.text)).toMatch(/State now disabled since/);
    expect((await store.merchants.get(target.merchant_id))!.disabled_at_ms).not.toBeNull();
    for (const url of [
      `/backoffice/merchants/${target.merchant_id}/enable`,
      `/backoffice/gateways/${gateway.gateway_id}/enable`,
      `/backoffice/users/${leaver.user_id}/enable`,
    ])
      expect([url, (await operator.post(url, { confirm: 'yes' })).status]).toEqual([url, 303]);
    expect((await store.merchants.get(target.merchant_id))!.disabled_at_ms).toBeNull();
    expect((await store.merchants.getGateway(gateway.gateway_id))!.enabled).toBe(1);
    const audit = pageText((await operator.get('/backoffice/audit')).text);
    // The audit log names the gateway by its label.
    expect(audit).toMatch(new RegExp(`disable_gateway ${gateway.label}`));
    expect(audit).not.toContain(`disable_gateway ${gateway.gateway_id}`);
  });
});
