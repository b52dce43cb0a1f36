// The back office's Request log in a real Chromium (issue 28, item 5; docs/backoffice.md): a
// merchant's staff member opens it from the navigation and sees their own merchant's requests
// only, narrows them to the refused signature and opens it: the sandbox's signature help (the
// string the gateway hashed) is shown at the top, the bodies masked below. An operator sees both
// merchants' rows. Nothing Chromium receives holds the PAN, the CVV or a secret.
import type { Page } from 'playwright-core';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../../src/domain/merchants.js';
import { newPage } from '../support/browser.js';
import { withChromium } from '../support/cashier-browser.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { storeKinds } from '../support/stores.js';
import { addUser, PASSWORD, sale } from '../support/backoffice.js';
import { postJson, signed } from '../support/client.js';
import { maskText } from '../../src/operations/request-log-masking.js';

const PAN = '4000056655665556';
const CVV = '7391';

let browser: Browser;
withChromium((launched) => {
  browser = launched;
});

describe.each(storeKinds())('the request log in Chromium on %s', (kind) => {
  let gw: TestGateway;
  let shop_a: CreatedMerchant;
  let shop_b: CreatedMerchant;
  let a_trace_id = 0;
  let b_trace_id = 0;
  const seen: string[] = [];

  beforeAll(async () => {
    gw = await startTestGateway(kind);
    shop_a = await gw.createMerchant({ merchant_id: `shop-a-${kind}` });
    shop_b = await gw.createMerchant({ merchant_id: `shop-b-${kind}` });
    await addUser(gw, 'operator@example.com', 'operator');
    await addUser(gw, 'staff-a@example.com', 'merchant', shop_a.merchant_id);
    a_trace_id = (await sale(gw, shop_a, { card_number: PAN, cvv: CVV })).trace_id;
    const timestamp = Math.floor(gw.gateway.deps.clock.now_ms() / 1000);
    // A short body, so that the sandbox's answer has room for the string it hashed.
    const status_body = {
      merchant_id: shop_a.merchant_id,
      application_key: shop_a.application_key,
      trace_id: 1,
      timestamp,
      version: '1.2',
    };
    const refused = await postJson(gw.url, '/api/transaction-status', signed(status_body, 'not-the-secret'));
    expect(refused.body.status).toBe(2);
    b_trace_id = (await sale(gw, shop_b, { card_number: PAN, cvv: CVV })).trace_id;
    await gw.gateway.deps.request_log.flush();
  });
  afterAll(async () => {
    const all = seen.join('\n');
    expect(all).not.toContain(PAN);
    expect(all).not.toContain(shop_a.secret);
    expect(all).not.toMatch(/"cvv"/);
    await gw?.close();
  });

  async function openSignedIn(email: string): Promise<{ page: Page; close: () => Promise<void> }> {
    const opened = await newPage(browser, 'desktop');
    const { page } = opened;
    page.on('response', async (response) => {
      if (!response.url().includes('/backoffice')) return;
      const body = await response.text().catch(() => null);
      if (body !== null) seen.push(body);
    });
    await page.goto(`${gw.url}/backoffice/`);
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${gw.url}/backoffice/overview`);
    return { page, close: opened.close };
  }

  it("shows a merchant's staff their own requests only, and a refused signature with its help", async () => {
    const { page, close } = await openSignedIn('staff-a@example.com');
    try {
      await page.getByRole('link', { name: 'Request log' }).click();
      await expect.poll(() => page.locator('h1').innerText()).toBe('Request log');
      const table = await page.locator('table').innerText();
      expect(table).toContain('/api/process');
      expect(table).toContain('/api/transaction-status');
      expect(table).toContain('Signature refused');
      expect(await page.locator('tbody tr').count()).toBe(2);
      const main = await page.locator('main').innerText();
      expect(main).not.toContain(shop_b.merchant_id);
      // The trace_id column (the 8th for staff, who have no merchant column): shop A's sale, and none for the refused one.
      expect(await page.locator('tbody tr td:nth-child(8)').allInnerTexts()).toEqual(['', String(a_trace_id)]);

      await page.getByLabel('API status').fill('2');
      await page.getByRole('button', { name: 'Search' }).click();
      await expect.poll(() => page.locator('tbody tr').count()).toBe(1);
      await page.locator('tbody tr a').first().click();
      const help = page.getByRole('alert', { name: 'Signature help' });
      await expect.poll(() => help.innerText()).toContain('Signature refused');
      const help_text = await help.innerText();
      // The help is the stored answer, masked as every request-log body is: a random application
      // key with twelve digits in a row shows them masked (CI once drew one).
      expect(help_text).toContain(`Signed here: sha384hex of "${maskText(`${shop_a.application_key}${shop_a.merchant_id}`)}`);
      expect(help_text).not.toContain(shop_a.secret);
      expect(await page.getByLabel('Request body').innerText()).toContain('"signature": "[redacted]"');

      // The sale's own page: its bodies masked.
      await page.goto(`${gw.url}/backoffice/request-log?api_status=0`);
      await page.locator('tbody tr a').first().click();
      await expect.poll(() => page.locator('h1').innerText()).toMatch(/^Request \d+$/);
      expect(await page.getByRole('alert', { name: 'Signature help' }).count()).toBe(0);
      const request = await page.getByLabel('Request body').innerText();
      expect(request).toContain('"card_number": "400005******5556"');
      expect(request).toContain('"signature": "[redacted]"');
      expect(request).not.toMatch(/cvv/);
      expect(await page.getByLabel('Answer body').innerText()).toContain('"transaction_status": "approved"');
    } finally {
      await close();
    }
  });

  it("shows an operator every merchant's requests", async () => {
    const { page, close } = await openSignedIn('operator@example.com');
    try {
      await page.goto(`${gw.url}/backoffice/request-log`);
      const table = await page.locator('table').innerText();
      expect(table).toContain(shop_a.merchant_id);
      expect(table).toContain(shop_b.merchant_id);
      expect(table).toContain(String(b_trace_id));
    } finally {
      await close();
    }
  });
});
