// The init-checkout cashier as a customer meets it, in a real Chromium, on each store: the
// fixed amount, a declined card followed by a successful second method (the sandbox e-wallet;
// the order then closes), and the page in German (locale de-DE).
import type { Browser } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { postSigned } from '../support/client.js';
import { newPage } from '../support/browser.js';
import { findOrderBody, initCheckout, openSession, withGatewayAndShop } from '../support/cashier.js';
import { checkTapTargets, shoot, visibleText, withChromium } from '../support/cashier-browser.js';
import type { TestGateway } from '../support/gateway.js';
import type { MerchantReceiver } from '../support/merchant-receiver.js';
import { waitUntil } from '../support/notification-merchant.js';
import { storeKinds } from '../support/stores.js';

let browser: Browser;
withChromium((launched) => (browser = launched));

describe.each(storeKinds())('cashier checkout (init-checkout) in Chromium on %s', (kind) => {
  let gw: TestGateway;
  let shop: MerchantReceiver;
  withGatewayAndShop(kind, ['notification'], (started) => ({ gw, shop } = started));

  it('a declined card, then a successful second method (e-wallet); the order closes as approved and find-order says so', async () => {
    const body = initCheckout(gw.merchant, shop.url, { amount: 4999, currency: 'EUR' });
    const answer = await openSession(gw, '/api/init-checkout', body);
    const { page, close } = await newPage(browser, 'phone');
    try {
      await page.goto(answer.body.redirect_url as string);
      await page.getByRole('heading', { name: 'Checkout' }).waitFor();
      const summary = await visibleText(page);
      expect(summary).toContain(body.order_id as string);
      expect(summary).toContain('Amount to pay');
      expect(summary).toContain('49.99 EUR');
      expect(await page.getByLabel(/^Amount/).count()).toBe(0);
      await checkTapTargets(page);
      await shoot(browser, page, kind, 'checkout');

      await page.getByLabel('Card number').fill('5555 5555 5555 4444');
      await page.getByLabel('Expiry date').fill('06/34');
      await page.getByLabel('CVV').fill('000');
      await page.getByRole('button', { name: 'Pay' }).click();
      await page.getByText('Payment declined').waitFor();
      expect(await visibleText(page)).toContain('Reason given: [TEST] Do not honor');
      expect(await visibleText(page)).toContain('You can try again with another card or method.');
      // Another method is offered at once: the choice, not a card form again.
      expect(await page.getByRole('button', { name: /^Card/ }).count()).toBe(1);
      expect(await page.getByRole('button', { name: /^Sandbox e-wallet/ }).count()).toBe(1);
      await checkTapTargets(page);
      await shoot(browser, page, kind, 'checkout-declined');
      expect(
        (await postSigned(gw.url, '/api/find-order', findOrderBody(gw.merchant, body.order_id as string), gw.merchant.secret)).body,
      ).toMatchObject({ status: 3 });

      // The second attempt with another method: the sandbox e-wallet, confirmed on its page.
      await page.getByRole('button', { name: /^Sandbox e-wallet/ }).click();
      await page.getByLabel('Wallet ID').fill('WALLET4242');
      expect(await page.getByLabel(/^Amount/).count()).toBe(0);
      await page.getByRole('button', { name: 'Pay' }).click();
      await page.getByRole('heading', { name: 'Sandbox wallet: payment request' }).waitFor();
      expect(await visibleText(page)).toContain('49.99 EUR');
      expect(await visibleText(page)).toContain(body.order_id as string);
      await page.getByRole('button', { name: 'Confirm' }).click();
      await page.getByText('Payment approved').waitFor();
      expect(page.url()).toBe(`${gw.url}/cashier/attempt/2`);
      expect(await visibleText(page)).toContain('Thank you. 49.99 EUR has been paid.');
      expect(await page.getByRole('link', { name: 'Make another deposit' }).count()).toBe(0);
      await shoot(browser, page, kind, 'checkout-approved');

      // The order is closed: the cashier shows it paid and offers no form.
      await page.goto(`${gw.url}/cashier`);
      await page.getByRole('heading', { name: 'This order is paid' }).waitFor();
      expect(await page.getByRole('button', { name: 'Pay' }).count()).toBe(0);
      expect(await visibleText(page)).toMatch(/49\.99 EUR\s+Payment approved/);
      await shoot(browser, page, kind, 'order-paid');
    } finally {
      await close();
    }
    const found = await postSigned(gw.url, '/api/find-order', findOrderBody(gw.merchant, body.order_id as string), gw.merchant.secret);
    expect(found.body).toMatchObject({
      status: 0,
      order_status: 'approved',
      transaction_status: 'approved',
      amount: 4999,
      currency: 'EUR',
      payment_method: 'ewallet',
      auth_token: answer.body.auth_token,
    });
    // Both attempts were notified with the order's order_id: the declined card, the wallet's wait and its approval.
    const notified = await waitUntil(() => {
      const mine = shop
        .requestsTo('/notify')
        .map((r) => r.json as Record<string, unknown>)
        .filter((n) => n.order_id === body.order_id);
      return mine.length >= 3 ? mine : undefined;
    }, 'three notifications');
    expect(notified.map((n) => [n.payment_method, n.transaction_status]).sort()).toEqual([
      ['card', 'rejected'],
      ['ewallet', 'approved'],
      ['ewallet', 'pending_async'],
    ]);
    expect(notified.every((n) => n.auth_token === answer.body.auth_token)).toBe(true);
  });

  it('speaks German with locale de-DE: labels, buttons and errors', async () => {
    const answer = await openSession(gw, '/api/init-checkout', initCheckout(gw.merchant, shop.url, { locale: 'de-DE', amount: 1250 }));
    const { page, close } = await newPage(browser, 'desktop', { javaScriptEnabled: false });
    try {
      await page.goto(answer.body.redirect_url as string);
      await page.getByRole('heading', { name: 'Bezahlung' }).waitFor();
      expect(await page.locator('html').getAttribute('lang')).toBe('de');
      expect(await visibleText(page)).toContain('Zu zahlen');
      await page.getByLabel('Kartennummer').fill('4111 1111 1111 1112');
      await page.getByLabel('Gültig bis').fill('01/20');
      await page.getByRole('button', { name: 'Bezahlen' }).click();
      await page.getByText('Diese Kartennummer ist ungültig.').waitFor();
      const text = await visibleText(page);
      expect(text).toContain('Geben Sie das Ablaufdatum als MM/JJ ein; die Karte darf nicht abgelaufen sein.');
      expect(text).toContain('Bitte füllen Sie dieses Feld aus.');
      expect(await page.getByRole('link', { name: 'Abbrechen' }).count()).toBe(1);
      await shoot(browser, page, kind, 'checkout-de');
    } finally {
      await close();
    }
  });

  it('speaks Spanish with locale es', async () => {
    const answer = await openSession(gw, '/api/init-checkout', initCheckout(gw.merchant, shop.url, { locale: 'es', amount: 1250 }));
    const { page, close } = await newPage(browser, 'phone');
    try {
      await page.goto(answer.body.redirect_url as string);
      await page.getByRole('heading', { name: 'Pago' }).waitFor();
      expect(await page.getByRole('button', { name: 'Pagar' }).count()).toBe(1);
      expect(await page.getByLabel('Número de tarjeta').count()).toBe(1);
    } finally {
      await close();
    }
  });
});
