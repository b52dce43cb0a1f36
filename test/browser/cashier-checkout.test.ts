// The init-checkout cashier as a customer meets it, in a real Chromium, on each store: the
// fixed amount, a declined card followed by a successful second attempt (the order then
// closes), and the page in German (locale de-DE).
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postSigned } from '../support/client.js';
import { launchBrowser, newPage } from '../support/browser.js';
import { findOrderBody, initCheckout, openSession } from '../support/cashier.js';
import { checkTapTargets, shoot, visibleText } from '../support/cashier-browser.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { type MerchantReceiver, startMerchantReceiver } from '../support/merchant-receiver.js';
import { signedReply, waitUntil } from '../support/notification-merchant.js';
import { storeKinds } from '../support/stores.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

describe.each(storeKinds())('cashier checkout (init-checkout) in Chromium on %s', (kind) => {
  let gw: TestGateway;
  let shop: MerchantReceiver;
  beforeAll(async () => {
    [gw, shop] = await Promise.all([startTestGateway(kind), startMerchantReceiver()]);
    shop.setReply('/notify', () => signedReply(gw.merchant.secret, 0));
  });
  afterAll(async () => {
    await Promise.all([gw?.close(), shop?.close()]);
  });

  it('a declined card, then a successful second attempt; the order closes as approved and find-order says so', async () => {
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
      expect(await page.getByLabel('Card number').inputValue()).toBe('');
      await checkTapTargets(page);
      await shoot(browser, page, kind, 'checkout-declined');
      expect((await postSigned(gw.url, '/api/find-order', findOrderBody(gw.merchant, body.order_id as string), gw.merchant.secret)).body)
        .toMatchObject({ status: 3 });

      await page.getByLabel('Card number').fill('4111111111111111');
      await page.getByLabel('Expiry date').fill('12/2035');
      await page.getByLabel('CVV').fill('123');
      await page.getByRole('button', { name: 'Pay' }).click();
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
      status: 0, order_status: 'approved', transaction_status: 'approved', amount: 4999, currency: 'EUR', card_number: '411111******1111',
      auth_token: answer.body.auth_token,
    });
    // Both attempts were notified with the order's order_id.
    const notified = await waitUntil(() => {
      const mine = shop.requestsTo('/notify').map((r) => r.json as Record<string, unknown>).filter((n) => n.order_id === body.order_id);
      return mine.length >= 2 ? mine : undefined;
    }, 'two notifications');
    expect(notified.map((n) => n.transaction_status).sort()).toEqual(['approved', 'rejected']);
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
