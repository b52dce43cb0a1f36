// The sandbox e-wallet page as a customer meets it (spec §4.2 pending_async, decisions.md §12):
// in a real Chromium, on each store, against a real gateway and a merchant site to return to.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, newPage, type ViewportName } from '../support/browser.js';
import { postSigned } from '../support/client.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { type MerchantReceiver, startMerchantReceiver } from '../support/merchant-receiver.js';
import { direct } from '../support/payout-bodies.js';
import { storeKinds } from '../support/stores.js';

const ACCOUNT = 'wallet-pat-77120931';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

describe.each(storeKinds())('sandbox e-wallet page in Chromium on %s', (kind) => {
  let gw: TestGateway;
  let merchant_site: MerchantReceiver;
  beforeAll(async () => {
    [gw, merchant_site] = await Promise.all([startTestGateway(kind), startMerchantReceiver()]);
  });
  afterAll(async () => {
    await Promise.all([gw?.close(), merchant_site?.close()]);
  });

  interface WalletPayout {
    readonly trace_id: number;
    readonly redirect_url: string;
    readonly order_id: string;
    readonly return_url: string;
  }

  async function walletPayout(amount: number): Promise<WalletPayout> {
    const body = direct(gw.merchant, {
      amount,
      currency: 'EUR',
      data_method: 'ewallet',
      data_account_number: ACCOUNT,
      notification_url: `${merchant_site.url}/notify`,
    });
    const return_url = `${merchant_site.url}/return?order=${encodeURIComponent(body.order_id as string)}`;
    body.return_url = return_url;
    const answer = await postSigned(gw.url, '/api/direct', body, gw.merchant.secret);
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'pending_async', payment_method: 'ewallet' });
    return {
      trace_id: answer.body.trace_id as number,
      redirect_url: answer.body.redirect_url as string,
      order_id: body.order_id as string,
      return_url,
    };
  }

  const visibleText = (page: Page) => page.locator('main').innerText();

  async function finishAs(viewport: ViewportName, javascript: boolean, payout: WalletPayout, button: 'Confirm' | 'Cancel'): Promise<void> {
    const { page, close } = await newPage(browser, viewport, { javaScriptEnabled: javascript });
    try {
      const response = await page.goto(payout.redirect_url);
      expect(response?.status()).toBe(200);
      await page.getByRole('heading', { name: /Sandbox wallet/ }).waitFor();
      const text = await visibleText(page);
      expect(text).toContain('12.34 EUR');
      expect(text).toContain(gw.merchant.merchant_id);
      expect(text).toContain(payout.order_id);
      expect(text).toContain(`${'*'.repeat(ACCOUNT.length - 4)}${ACCOUNT.slice(-4)}`);
      expect(await page.content()).not.toContain(ACCOUNT);
      expect(await page.locator('script').count()).toBe(0);
      expect(await page.getByRole('button', { name: 'Confirm' }).isVisible()).toBe(true);
      expect(await page.getByRole('button', { name: 'Cancel' }).isVisible()).toBe(true);
      await Promise.all([page.waitForURL((url) => url.href === payout.return_url), page.getByRole('button', { name: button }).click()]);
      expect(await page.getByRole('heading').first().innerText()).toBe('Back at the merchant');
      const arrivals = merchant_site.requestsTo('/return', 'GET').filter((r) => r.query.order === payout.order_id);
      expect(arrivals).toHaveLength(1);
      // The page's URL holds the wallet token: it must not reach the merchant through Referer.
      expect(arrivals[0]!.headers.referer).toBeUndefined();
      // Back on the wallet page later: closed, no buttons.
      await page.goto(payout.redirect_url);
      expect(await page.getByRole('button').count()).toBe(0);
    } finally {
      await close();
    }
  }

  const notified = async (trace_id: number) =>
    (await gw.gateway.deps.store.notifications.listOfTransaction(trace_id)).map(
      (n) => (JSON.parse(n.payload_json) as { transaction_status: string }).transaction_status,
    );

  it('Confirm on a phone, without JavaScript: back at the merchant, the payout approved and notified', async () => {
    const payout = await walletPayout(1234);
    await finishAs('phone', false, payout, 'Confirm');
    expect(await gw.gateway.deps.store.transactions.get(payout.trace_id)).toMatchObject({ status: 'approved', error_code: '0' });
    expect(await notified(payout.trace_id)).toEqual(['pending_async', 'approved']);
  });

  it('Cancel on a desktop: back at the merchant, the payout cancelled and notified', async () => {
    const payout = await walletPayout(1234);
    await finishAs('desktop', true, payout, 'Cancel');
    expect(await gw.gateway.deps.store.transactions.get(payout.trace_id)).toMatchObject({ status: 'cancelled', error_code: '1' });
    expect(await notified(payout.trace_id)).toEqual(['pending_async', 'cancelled']);
  });
});
