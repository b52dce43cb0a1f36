// The init-pay-out cashier as a customer meets it, in a real Chromium, on each store: the choice
// of method, a card withdrawal bounded by the balance, and a withdrawal to the sandbox e-wallet
// confirmed on its page; then init-pay-out-order, its payout-order twin.
import type { Browser } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/operations/cashier-session.js';
import { postSigned } from '../support/client.js';
import { newPage } from '../support/browser.js';
import { findOrderBody, initPayOut, initPayOutOrder, openSession, withGatewayAndShop } from '../support/cashier.js';
import { checkTapTargets, shoot, visibleText, withChromium } from '../support/cashier-browser.js';
import type { TestGateway } from '../support/gateway.js';
import type { MerchantReceiver } from '../support/merchant-receiver.js';
import { waitUntil } from '../support/notification-merchant.js';
import { storeKinds } from '../support/stores.js';

let browser: Browser;
withChromium((launched) => (browser = launched));

describe.each(storeKinds())('cashier withdrawal (init-pay-out) in Chromium on %s', (kind) => {
  let gw: TestGateway;
  let shop: MerchantReceiver;
  withGatewayAndShop(kind, ['validation', 'notification'], (started) => ({ gw, shop } = started));

  it('withdraws to a card within the balance, then to the sandbox e-wallet confirmed on its page', async () => {
    const answer = await openSession(gw, '/api/init-pay-out', initPayOut(gw.merchant, shop.url, { balance: 10_000 }));
    const auth_token = answer.body.auth_token as string;
    const { page, close } = await newPage(browser, 'phone', { javaScriptEnabled: false });
    try {
      await page.goto(answer.body.redirect_url as string);
      await page.getByRole('heading', { name: 'How do you want to receive the money?' }).waitFor();
      expect(await visibleText(page)).toContain('Available to withdraw\n100.00 USD');
      await checkTapTargets(page);
      await shoot(browser, page, kind, 'withdrawal-methods');

      await page.getByRole('button', { name: /^Card/ }).click();
      await page.getByLabel('Amount (USD)').waitFor();
      expect(await page.getByLabel('CVV').count()).toBe(0);
      // The plain form, before any submit: shoot() renders the page's HTML again, which after the
      // over-balance submit below is that error page (values typed in are not part of the HTML).
      expect(await page.getByRole('alert').count()).toBe(0);
      await shoot(browser, page, kind, 'withdrawal');
      await page.getByLabel('Amount (USD)').fill('150');
      await page.getByLabel('Card number').fill('4111 1111 1111 1111');
      await page.getByLabel('Expiry date').fill('12/35');
      await page.getByRole('button', { name: 'Withdraw' }).click();
      await page.getByText('This is more than you can withdraw (100.00 USD).').waitFor();
      await shoot(browser, page, kind, 'withdrawal-over-balance');
      await page.getByLabel('Amount (USD)').fill('30.00');
      await page.getByLabel('Card number').fill('4111 1111 1111 1111');
      await page.getByLabel('Expiry date').fill('12/35');
      await page.getByRole('button', { name: 'Withdraw' }).click();
      await page.getByText('Withdrawal approved').waitFor();
      expect(await visibleText(page)).toContain('30.00 USD is on its way to you.');
      await shoot(browser, page, kind, 'withdrawal-approved');

      await page.getByRole('link', { name: 'Make another withdrawal' }).click();
      expect(await visibleText(page)).toContain('Available to withdraw\n70.00 USD');
      await page.getByRole('button', { name: /^Sandbox e-wallet/ }).click();
      await page.getByLabel('Wallet ID').fill('WALLET12345');
      await page.getByLabel('Amount (USD)').fill('20');
      await page.getByRole('button', { name: 'Withdraw' }).click();
      await page.getByRole('heading', { name: 'Sandbox wallet: incoming payout' }).waitFor();
      expect(await visibleText(page)).toContain('20.00 USD');
      await page.getByRole('button', { name: 'Confirm' }).click();
      await page.getByText('Withdrawal approved').waitFor();
      expect(page.url()).toBe(`${gw.url}/cashier/attempt/2`);
      await page.goto(`${gw.url}/cashier`);
      expect(await visibleText(page)).toContain('Available to withdraw\n50.00 USD');
    } finally {
      await close();
    }
    const session = (await gw.gateway.deps.store.cashier.findSessionByAuthToken(sha256Hex(auth_token)))!;
    const rows = await gw.gateway.deps.store.cashier.listTransactions(session.session_id);
    expect(rows.map((r) => [r.transaction_type, r.payment_method, r.status, r.amount_minor])).toEqual([
      ['payout', 'card', 'approved', 3000],
      ['payout', 'ewallet', 'approved', 2000],
    ]);
    const validations = shop
      .requestsTo('/validate')
      .map((r) => r.json as Record<string, unknown>)
      .filter((v) => v.auth_token === auth_token);
    expect(validations.map((v) => [v.payment_method, v.amount, v.transaction_status])).toEqual([
      ['card', 3000, 'requested'],
      ['ewallet', 2000, 'requested'],
    ]);
    const notified = await waitUntil(() => {
      const mine = shop
        .requestsTo('/notify')
        .map((r) => r.json as Record<string, unknown>)
        .filter((n) => n.auth_token === auth_token && n.transaction_status === 'approved');
      return mine.length === 2 ? mine : undefined;
    }, 'both payout notifications');
    expect(notified.map((n) => n.payment_method).sort()).toEqual(['card', 'ewallet']);
  });

  it('a payout order (init-pay-out-order) pays its exact amount once and closes', async () => {
    const body = initPayOutOrder(gw.merchant, shop.url, { amount: 7500, payment_method: 'card' });
    const answer = await openSession(gw, '/api/init-pay-out-order', body);
    const { page, close } = await newPage(browser, 'desktop');
    try {
      await page.goto(answer.body.redirect_url as string);
      // payment_method preselected the card: straight to its form.
      await page.getByRole('heading', { name: 'Payout' }).waitFor();
      expect(await visibleText(page)).toContain('Amount to receive\n75.00 USD');
      await shoot(browser, page, kind, 'payout-order');
      await page.getByLabel('Card number').fill('4111111111111111');
      await page.getByLabel('Expiry date').fill('1235');
      await page.getByRole('button', { name: 'Withdraw' }).click();
      await page.getByText('Withdrawal approved').waitFor();
    } finally {
      await close();
    }
    const found = await postSigned(gw.url, '/api/find-order', findOrderBody(gw.merchant, body.order_id as string), gw.merchant.secret);
    expect(found.body).toMatchObject({ status: 0, order_status: 'approved', transaction_type: 'payout', amount: 7500 });
  });
});
