// Cashier polish (issue 19 item 10) in a real Chromium, on each store: the shop's display name
// instead of its merchant_id, no "open until" once paid, the way back to the shop with the
// outcome signed, and a chat app's link preview that does not use up the one-time link.
import { createHash } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { newPage } from '../support/browser.js';
import { initCheckout, openSession, withGatewayAndShop } from '../support/cashier.js';
import { visibleText, withChromium } from '../support/cashier-browser.js';
import { ADMIN_TOKEN, type TestGateway } from '../support/gateway.js';
import type { MerchantReceiver } from '../support/merchant-receiver.js';
import { storeKinds } from '../support/stores.js';

let browser: Browser;
withChromium((launched) => (browser = launched));

/** decisions.md §1 written here: the values in sorted-key order, then the secret. */
function merchantSignature(fields: Record<string, string>, secret: string): string {
  const text =
    Object.keys(fields)
      .sort()
      .map((key) => fields[key])
      .join('') + secret;
  return createHash('sha384').update(text, 'utf8').digest('hex');
}

describe.each(storeKinds())('cashier polish in Chromium on %s', (kind) => {
  let gw: TestGateway;
  let shop: MerchantReceiver;
  withGatewayAndShop(kind, ['notification'], (started) => ({ gw, shop } = started));

  it('shows the shop\'s name, hides "open until" once paid, and returns to the shop with the outcome signed', async () => {
    const named = await fetch(`${gw.url}/operator/merchants/${gw.merchant.merchant_id}/display-name`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ frontend: gw.merchant.frontend, display_name: 'Corner Bookshop' }),
    });
    expect(await named.json()).toMatchObject({ status: 0, display_name: 'Corner Bookshop' });
    const body = initCheckout(gw.merchant, shop.url, { amount: 1250, currency: 'USD', return_url: `${shop.url}/back?cart=7` });
    const answer = await openSession(gw, '/api/init-checkout', body);
    const { page, close } = await newPage(browser, 'desktop');
    try {
      await page.goto(answer.body.redirect_url as string);
      await page.getByRole('heading', { name: 'Checkout' }).waitFor();
      const before = await visibleText(page);
      expect(before).toContain('Corner Bookshop');
      expect(before).not.toContain(gw.merchant.merchant_id);
      expect(before).toMatch(/Session open until \d\d:\d\d UTC/);

      await page.getByLabel('Card number').fill('4111 1111 1111 1111');
      await page.getByLabel('Expiry date').fill('12/35');
      await page.getByLabel('CVV').fill('568');
      await page.getByRole('button', { name: 'Pay' }).click();
      await page.getByText('Payment approved').waitFor();
      const after = await visibleText(page);
      expect(after).toContain('Corner Bookshop');
      expect(after).not.toMatch(/Session open until/);

      const href = await page.getByRole('link', { name: /shop/i }).first().getAttribute('href');
      const back = new URL(href!);
      expect(`${back.origin}${back.pathname}`).toBe(`${shop.url}/back`);
      expect(back.searchParams.get('cart')).toBe('7'); // the shop's own parameters are kept
      const fields: Record<string, string> = {};
      for (const key of ['order_id', 'trace_id', 'transaction_status', 'timestamp']) fields[key] = back.searchParams.get(key)!;
      expect(fields).toMatchObject({ order_id: body.order_id, transaction_status: 'approved' });
      expect(Number(fields.trace_id)).toBeGreaterThan(0);
      expect(Math.abs(Number(fields.timestamp) - Date.now() / 1000)).toBeLessThan(120);
      expect(back.searchParams.get('signature')).toBe(merchantSignature(fields, gw.merchant.secret));
      // Changed by anyone but the gateway, it no longer verifies.
      expect(merchantSignature({ ...fields, transaction_status: 'declined' }, gw.merchant.secret)).not.toBe(
        back.searchParams.get('signature'),
      );
      // And the browser goes there.
      await page.getByRole('link', { name: /shop/i }).first().click();
      await page.waitForURL((url) => url.pathname === '/back');
      expect(new URL(page.url()).searchParams.get('signature')).toBe(back.searchParams.get('signature'));
    } finally {
      await close();
    }
  });

  it("a chat app's link preview (and a HEAD) leaves the one-time link unused for the customer", async () => {
    const answer = await openSession(gw, '/api/init-checkout', initCheckout(gw.merchant, shop.url));
    const link = answer.body.redirect_url as string;
    for (const agent of [
      'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
      'WhatsApp/2.23.20.0 A',
      'facebookexternalhit/1.1',
      'TelegramBot (like TwitterBot)',
    ]) {
      const preview = await fetch(link, { headers: { 'user-agent': agent }, redirect: 'manual' });
      expect(preview.status, agent).toBe(200);
      const text = await preview.text();
      expect(text, agent).toContain('Open this link in your browser to continue to the payment.');
      expect(preview.headers.get('set-cookie'), agent).toBeNull();
    }
    expect((await fetch(link, { method: 'HEAD', redirect: 'manual' })).status).toBe(200);
    const { page, close } = await newPage(browser, 'phone');
    try {
      await page.goto(link);
      await page.getByRole('heading', { name: 'Checkout' }).waitFor();
    } finally {
      await close();
    }
    // Used now: a second opening is refused, as before.
    const again = await fetch(link, { redirect: 'manual' });
    expect(again.status).toBe(410);
  });
});
