// The interactive API reference (issue 19 item 8): Swagger UI served by the gateway from its own
// files over /openapi.json, opened in Chromium as a merchant's developer would.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, newPage } from '../support/browser.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';

describe('the API reference page', () => {
  let gw: TestGateway;
  let browser: Browser;
  beforeAll(async () => {
    gw = await startTestGateway('sqlite');
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.close();
  });

  it('lists every endpoint, opens one to its schemas, and loads nothing from outside the gateway', async () => {
    const { page, close } = await newPage(browser, 'desktop');
    const outside: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(gw.url) && !request.url().startsWith('data:')) outside.push(request.url());
    });
    try {
      const response = await page.goto(`${gw.url}/reference`);
      expect(response?.status()).toBeLessThan(400);
      await page.locator('.opblock').first().waitFor();
      const doc = (await (await fetch(`${gw.url}/openapi.json`)).json()) as {
        paths: Record<string, Record<string, unknown>>;
        webhooks: Record<string, Record<string, unknown>>;
      };
      // The calls, and what the gateway sends to merchants (notifications, validation requests, subscription events).
      const count = (group: Record<string, Record<string, unknown>>) =>
        Object.values(group).reduce((n, methods) => n + Object.keys(methods).length, 0);
      expect(count(doc.webhooks)).toBe(3);
      expect(await page.locator('.opblock').count()).toBe(count(doc.paths) + count(doc.webhooks));
      expect(await page.locator('.opblock', { hasText: 'transactionNotification' }).count()).toBe(1);
      await expect(page.locator('.info .title').innerText()).resolves.toMatch(/paygate/);
      // Open the sale call: its body schema and its answers are shown.
      const sale = page.locator('#operations-default-postApiProcess');
      await sale.locator('.opblock-summary').click();
      await sale.locator('.responses-table').waitFor();
      const text = await sale.innerText();
      expect(text).toContain('Signed answer');
      expect(text).toContain('429');
      // The security schemes are offered.
      await expect(page.locator('.auth-wrapper .authorize').count()).resolves.toBe(1);
      expect(outside).toEqual([]);
    } finally {
      await close();
    }
  });
});
