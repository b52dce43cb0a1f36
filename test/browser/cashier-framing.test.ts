// Framing of the cashier (docs/cashier.md §7), in a real Chromium, on each store: an init-pay-in
// cashier in the merchant's iframe works when the merchant's origin is configured for the
// application; other origins, and every other kind of session, cannot frame it.
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { newPage } from '../support/browser.js';
import { initCheckout, initPayIn, openSession, withGatewayAndShop } from '../support/cashier.js';
import { SCREENSHOT_DIR, withChromium } from '../support/cashier-browser.js';
import { ADMIN_TOKEN, type TestGateway } from '../support/gateway.js';
import type { MerchantReceiver } from '../support/merchant-receiver.js';
import { storeKinds } from '../support/stores.js';

let browser: Browser;
withChromium((launched) => (browser = launched));

describe.each(storeKinds())('cashier in the merchant\'s iframe, in Chromium on %s', (kind) => {
  let gw: TestGateway;
  let shop: MerchantReceiver;
  withGatewayAndShop(kind, ['validation', 'notification'], (started) => ({ gw, shop } = started));

  async function setFrameOrigins(application_key: string, merchant_id: string, frame_origins: string[]) {
    const response = await fetch(`${gw.url}/operator/merchants/${merchant_id}/applications/${application_key}/frame-origins`, {
      method: 'PUT', headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_TOKEN}` }, body: JSON.stringify({ frame_origins }),
    });
    expect(response.status).toBe(200);
  }

  /** The merchant's page at `path` embeds `src` in an iframe. */
  function embedAt(path: string, src: string) {
    shop.setReply(path, {
      status: 200, headers: { 'content-type': 'text/html; charset=utf-8' }, body: null,
      raw: `<!doctype html><html><head><meta name="viewport" content="width=device-width,initial-scale=1"><title>Shop</title></head>`
        + `<body style="margin:0;font-family:sans-serif;background:#e0e7ff"><h1 style="margin:1rem">Merchant shop: add funds</h1>`
        + `<iframe title="Cashier" src="${src}" style="border:0;width:100%;max-width:32rem;height:760px;display:block;margin:0 auto"></iframe></body></html>`,
    });
  }

  /** Opens the merchant's page and reports whether the cashier showed inside its iframe. */
  async function framed(page: Page, path: string): Promise<{ shown: boolean; refused: string[] }> {
    const refused: string[] = [];
    page.on('console', (message) => {
      if (/frame-ancestors|X-Frame-Options/i.test(message.text())) refused.push(message.text());
    });
    await page.goto(`${shop.url}${path}`);
    await page.waitForLoadState('load');
    const frame = page.frameLocator('iframe[title="Cashier"]');
    const shown = await frame.getByRole('heading').first().waitFor({ timeout: 3000 }).then(() => true, () => false);
    return { shown, refused };
  }

  it('the configured origin frames an init-pay-in cashier; a deposit completes inside the iframe; Return to shop leaves the frame', async () => {
    await setFrameOrigins(gw.merchant.application_key, gw.merchant.merchant_id, [shop.url]);
    const answer = await openSession(gw, '/api/init-pay-in', initPayIn(gw.merchant, shop.url));
    embedAt('/embed-allowed', answer.body.redirect_url as string);
    const { page, close } = await newPage(browser, 'desktop');
    try {
      const { shown } = await framed(page, '/embed-allowed');
      expect(shown).toBe(true);
      const frame = page.frameLocator('iframe[title="Cashier"]');
      await frame.getByRole('heading', { name: 'Deposit' }).waitFor();
      await frame.getByLabel('Amount (USD)').fill('15');
      await frame.getByLabel('Card number').fill('4111111111111111');
      await frame.getByLabel('Expiry date').fill('12/35');
      await frame.getByLabel('CVV').fill('568');
      await frame.getByRole('button', { name: 'Pay' }).click();
      await frame.getByText('Payment approved').waitFor();
      if (kind === 'sqlite') {
        fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
        await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'cashier-embedded-desktop.png'), fullPage: true });
      }
      expect(page.url()).toBe(`${shop.url}/embed-allowed`);
      await Promise.all([page.waitForURL(`${shop.url}/return`), frame.getByRole('link', { name: 'Return to shop' }).click()]);
    } finally {
      await close();
    }
  });

  it('an origin that is not configured cannot frame it, nor can any origin frame a checkout', async () => {
    const other = await gw.createMerchant();
    const not_configured = await openSession(gw, '/api/init-pay-in', initPayIn(other, shop.url), other);
    embedAt('/embed-other', not_configured.body.redirect_url as string);
    const first = await newPage(browser, 'desktop');
    try {
      const { shown, refused } = await framed(first.page, '/embed-other');
      expect(shown).toBe(false);
      expect(refused.join('\n')).toMatch(/frame-ancestors 'none'|X-Frame-Options/);
    } finally {
      await first.close();
    }

    await setFrameOrigins(gw.merchant.application_key, gw.merchant.merchant_id, [shop.url]);
    const checkout = await openSession(gw, '/api/init-checkout', initCheckout(gw.merchant, shop.url));
    embedAt('/embed-checkout', checkout.body.redirect_url as string);
    const second = await newPage(browser, 'desktop');
    try {
      expect((await framed(second.page, '/embed-checkout')).shown).toBe(false);
    } finally {
      await second.close();
    }

    await setFrameOrigins(gw.merchant.application_key, gw.merchant.merchant_id, ['https://elsewhere.example']);
    const elsewhere = await openSession(gw, '/api/init-pay-in', initPayIn(gw.merchant, shop.url));
    embedAt('/embed-elsewhere', elsewhere.body.redirect_url as string);
    const third = await newPage(browser, 'desktop');
    try {
      const { shown, refused } = await framed(third.page, '/embed-elsewhere');
      expect(shown).toBe(false);
      expect(refused.join('\n')).toContain('frame-ancestors https://elsewhere.example');
    } finally {
      await third.close();
    }
  });
});
