// The interactive API reference (issue 19 item 8, issue 28 item 6): paygate's own page over
// /openapi.json, served from the gateway's files, opened in Chromium as a merchant's developer
// would: operations grouped by what they do, no console error under its CSP, and in the sandbox a
// sale tried from the page, signed there with a secret typed there that no request ever carries.
import type { Browser, ConsoleMessage, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATION_TAGS } from '../../src/http/openapi.js';
import { saleA } from '../support/bodies.js';
import { launchBrowser, newPage } from '../support/browser.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';

/** Every console message at warning level or above, and every uncaught error, of a page. */
function watchConsole(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (message: ConsoleMessage) => {
    if (message.type() === 'error' || message.type() === 'warning') problems.push(`${message.type()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
  return problems;
}

/**
 * Opens an operation as a reader does, by its summary line. The line is a link to the operation's
 * own `#/tag/operation` address; Playwright would wait for that in-page navigation to finish, and a
 * loaded CI machine once took over the 10 s allowed (2026-11-27) while Swagger UI drew the sale's
 * schema. What the test needs is the operation open, so it waits for that, not for the address.
 */
async function openOperation(operation: Locator): Promise<void> {
  await operation.locator('.opblock-summary').waitFor();
  await operation.locator('.opblock-summary').click({ noWaitAfter: true });
  await operation.locator('.opblock-body').waitFor({ timeout: 30_000 });
}

describe('the API reference page in the sandbox', () => {
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

  it('groups every endpoint by what it does, is paygate-branded, and loads nothing from outside the gateway', async () => {
    const { page, close } = await newPage(browser, 'desktop');
    const problems = watchConsole(page);
    const outside: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(gw.url) && !request.url().startsWith('data:')) outside.push(request.url());
    });
    try {
      const response = await page.goto(`${gw.url}/reference`);
      expect(response?.status()).toBeLessThan(400);
      expect(response?.headers()['content-security-policy']).toMatch(/script-src 'self'; script-src-attr 'none'; style-src 'self'$/);
      await page.locator('.opblock').first().waitFor();
      const doc = (await (await fetch(`${gw.url}/openapi.json`)).json()) as {
        paths: Record<string, Record<string, { tags?: string[] }>>;
        webhooks: Record<string, Record<string, { tags?: string[] }>>;
      };
      // The calls, and what the gateway sends to merchants (notifications, validation requests, subscription events).
      const operations = [...Object.values(doc.paths), ...Object.values(doc.webhooks)].flatMap((methods) => Object.values(methods));
      expect(Object.keys(doc.webhooks)).toHaveLength(3);
      expect(await page.locator('.opblock').count()).toBe(operations.length);
      // Each operation in exactly one group, none left in Swagger's "default"; every group shown, in order, with its words.
      const names = OPERATION_TAGS.map((tag) => tag.name as string);
      for (const operation of operations) expect(operation.tags?.length === 1 && names.includes(operation.tags[0]!)).toBe(true);
      const shown = await page
        .locator('.opblock-tag-section h3.opblock-tag')
        .evaluateAll((tags) => tags.map((tag) => tag.getAttribute('data-tag')));
      expect(shown).toEqual(names);
      await expect(page.locator('#operations-tag-default').count()).resolves.toBe(0);
      await expect(page.locator('#operations-tag-subscriptions').innerText()).resolves.toContain('v1.3 plans and subscriptions');
      expect(await page.locator('#operations-tag-cards').locator('xpath=..').locator('.opblock').count()).toBe(5);
      // paygate's name, title and intro; no Swagger top bar (logo, URL box).
      await expect(page.title()).resolves.toBe('paygate API reference');
      await expect(page.locator('.pg-header').innerText()).resolves.toMatch(/paygate\s+API reference\s+sandbox/i);
      await expect(page.locator('.info .title').innerText()).resolves.toMatch(/paygate/);
      await expect(page.locator('.info .description').innerText()).resolves.toContain('a self-hostable payment gateway');
      await expect(page.locator('.topbar').count()).resolves.toBe(0);
      // Open the sale call: its body schema and its answers are shown.
      const sale = page.locator('#operations-cards-postApiProcess');
      await openOperation(sale);
      await sale.locator('.responses-table').waitFor();
      const text = await sale.innerText();
      expect(text).toContain('Signed answer');
      expect(text).toContain('429');
      // The security schemes are offered.
      await expect(page.locator('.auth-wrapper .authorize').count()).resolves.toBe(1);
      expect(outside).toEqual([]);
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  });

  it('signs a sale tried from the page with the secret typed there, which no request carries: approved', async () => {
    const { page, close } = await newPage(browser, 'desktop');
    const problems = watchConsole(page);
    const secret = gw.merchant.secret;
    const sent: string[] = [];
    page.on('request', (request) => {
      sent.push([request.url(), JSON.stringify(request.headers()), request.postData() ?? ''].join('\n'));
    });
    try {
      await page.goto(`${gw.url}/reference`);
      const sale = page.locator('#operations-cards-postApiProcess');
      await openOperation(sale);
      await sale.locator('.try-out__btn').click();
      // A sale as a developer writes it: no timestamp, no signature; the page adds both.
      const body = saleA(gw.merchant);
      delete body.timestamp;
      await sale.locator('textarea.body-param__text').fill(JSON.stringify(body, null, 2));
      await page.locator('#pg-secret').fill(secret);
      const [response] = await Promise.all([
        page.waitForResponse((r) => r.url() === `${gw.url}/api/process`),
        sale.locator('button.execute').click(),
      ]);
      const answer = (await response.json()) as Record<string, unknown>;
      expect(answer).toMatchObject({ status: 0, transaction_status: 'approved' });
      const request = JSON.parse(response.request().postData() ?? '{}') as Record<string, unknown>;
      expect(request.signature).toMatch(/^[0-9a-f]{96}$/);
      expect(typeof request.timestamp).toBe('number');
      // The answer is shown in the page too, and the box says what it signed.
      await expect(sale.locator('.live-responses-table').innerText()).resolves.toContain('"transaction_status": "approved"');
      await expect(page.locator('.pg-signed').innerText()).resolves.toMatch(/^Signed \/api\/process with timestamp \d+ in this page\.$/);
      expect(sent.filter((line) => line.includes('/api/process'))).toHaveLength(1);
      for (const line of sent) expect(line).not.toContain(secret);
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  });
});

describe('the API reference page in live mode', () => {
  let gw: TestGateway;
  let browser: Browser;
  beforeAll(async () => {
    gw = await startTestGateway('sqlite', { env: { PAYGATE_ENV: 'live' } });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.close();
  });

  it('has no signing box and signs nothing', async () => {
    const { page, close } = await newPage(browser, 'desktop');
    const problems = watchConsole(page);
    try {
      await page.goto(`${gw.url}/reference`);
      await page.locator('.opblock').first().waitFor();
      await expect(page.locator('.pg-header').innerText()).resolves.toMatch(/live/i);
      await expect(page.locator('#pg-secret').count()).resolves.toBe(0);
      await expect(page.evaluate(() => typeof (window as unknown as Record<string, unknown>).paygateSignRequest)).resolves.toBe(
        'undefined',
      );
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  });
});
