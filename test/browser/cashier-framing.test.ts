// Framing of the cashier and the sandbox challenge pages (docs/cashier.md §9), in a real Chromium,
// on each store: an init-pay-in cashier in the merchant's iframe works when the merchant's origin
// is configured for the application, 3-D Secure included; other origins, every other kind of
// session, and the sandbox 3-D Secure and wallet pages of other payments cannot be framed. Each
// refusal is shown against the same URL loading at the top level, so it is the framing that fails.
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { saleA } from '../support/bodies.js';
import { newPage } from '../support/browser.js';
import { postSigned } from '../support/client.js';
import { CashierCustomer, initCheckout, initPayIn, openSession, withGatewayAndShop } from '../support/cashier.js';
import { SCREENSHOT_DIR, withChromium } from '../support/cashier-browser.js';
import { ADMIN_TOKEN, type TestGateway } from '../support/gateway.js';
import { type MerchantReceiver, startMerchantReceiver } from '../support/merchant-receiver.js';
import { direct } from '../support/payout-bodies.js';
import { storeKinds } from '../support/stores.js';

let browser: Browser;
withChromium((launched) => (browser = launched));

describe.each(storeKinds())("cashier in the merchant's iframe, in Chromium on %s", (kind) => {
  let gw: TestGateway;
  let shop: MerchantReceiver;
  withGatewayAndShop(kind, ['validation', 'notification'], (started) => ({ gw, shop } = started));

  async function setFrameOrigins(application_key: string, merchant_id: string, frame_origins: string[]) {
    const response = await fetch(`${gw.url}/operator/merchants/${merchant_id}/applications/${application_key}/frame-origins`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_TOKEN}` },
      body: JSON.stringify({ frame_origins }),
    });
    expect(response.status).toBe(200);
  }

  /** The page at `path` of `site` (the merchant's shop unless told) embeds `src` in an iframe. */
  function embedAt(path: string, src: string, site: MerchantReceiver = shop) {
    site.setReply(path, {
      status: 200,
      headers: { 'content-type': 'text/html; charset=utf-8' },
      body: null,
      raw:
        `<!doctype html><html><head><meta name="viewport" content="width=device-width,initial-scale=1"><title>Shop</title></head>` +
        `<body style="margin:0;font-family:sans-serif;background:#e0e7ff"><h1 style="margin:1rem">Merchant shop: add funds</h1>` +
        `<iframe title="Cashier" src="${src}" style="border:0;width:100%;max-width:32rem;height:760px;display:block;margin:0 auto"></iframe></body></html>`,
    });
  }

  interface Framed {
    /** A heading of the framed page became visible inside the iframe. */
    readonly shown: boolean;
    /** Chromium's console messages refusing the frame (frame-ancestors or X-Frame-Options). */
    readonly refused: string[];
    /** Where the iframe ended up: Chromium's error page when the framing was refused. */
    readonly frame_url: string | undefined;
  }

  /** Opens the page at `path` of `site` and reports whether the framed page showed inside its iframe. */
  async function framed(page: Page, path: string, site: MerchantReceiver = shop): Promise<Framed> {
    const refused: string[] = [];
    page.on('console', (message) => {
      if (/frame-ancestors|X-Frame-Options/i.test(message.text())) refused.push(message.text());
    });
    await page.goto(`${site.url}${path}`);
    await page.waitForLoadState('load');
    const frame_url = () =>
      page
        .frames()
        .find((f) => f !== page.mainFrame())
        ?.url();
    // The load event waits for the iframe too: a refused frame already shows Chromium's error page.
    if (frame_url()?.startsWith('chrome-error:')) return { shown: false, refused, frame_url: frame_url() };
    const frame = page.frameLocator('iframe[title="Cashier"]');
    const shown = await frame
      .getByRole('heading')
      .first()
      .waitFor({ timeout: 3000 })
      .then(
        () => true,
        () => false,
      );
    return { shown, refused, frame_url: frame_url() };
  }

  /** `src` framed by the page at `path` of `site` is refused with `directive`, in a fresh context. */
  async function expectRefused(path: string, src: string, directive: string, site: MerchantReceiver = shop): Promise<void> {
    embedAt(path, src, site);
    const { page, close } = await newPage(browser, 'desktop');
    try {
      const result = await framed(page, path, site);
      expect(result.shown, src).toBe(false);
      expect(result.refused.join('\n'), src).toContain(directive);
      expect(result.frame_url, src).toMatch(/^chrome-error:/);
    } finally {
      await close();
    }
  }

  /** The same `url` at the top level of a fresh context: it loads, with `heading` and the `buttons` a person would press. */
  async function expectLoadsUnframed(url: string, heading: string, buttons: string[]): Promise<void> {
    const { page, close } = await newPage(browser, 'desktop');
    try {
      const response = await page.goto(url);
      expect(response?.status(), url).toBe(200);
      await page.getByRole('heading', { name: heading }).waitFor();
      for (const name of buttons) expect(await page.getByRole('button', { name }).isVisible(), name).toBe(true);
    } finally {
      await close();
    }
  }

  /** The framing headers a page is served with. */
  async function framingOf(url: string): Promise<{ csp: string; xfo: string | null }> {
    const response = await fetch(url);
    await response.arrayBuffer();
    expect(response.status, url).toBe(200);
    return { csp: response.headers.get('content-security-policy') ?? '', xfo: response.headers.get('x-frame-options') };
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
      await Promise.all([
        page.waitForURL(
          (url) => `${url.origin}${url.pathname}` === `${shop.url}/return` && url.searchParams.get('transaction_status') === 'approved',
        ),
        frame.getByRole('link', { name: 'Return to shop' }).click(),
      ]);
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
      const { shown, refused, frame_url } = await framed(first.page, '/embed-other');
      expect(shown).toBe(false);
      expect(refused.join('\n')).toMatch(/frame-ancestors 'none'|X-Frame-Options/);
      expect(frame_url).toMatch(/^chrome-error:/);
    } finally {
      await first.close();
    }

    // A checkout, even of a merchant whose application has frame origins: refused framed, while the very same
    // login URL loads at the top level afterwards (the auth_token logs in again until the first payment).
    await setFrameOrigins(gw.merchant.application_key, gw.merchant.merchant_id, [shop.url]);
    const checkout = await openSession(gw, '/api/init-checkout', initCheckout(gw.merchant, shop.url));
    const checkout_login = `${gw.url}/cashier/login?auth_token=${checkout.body.auth_token as string}`;
    await expectRefused('/embed-checkout', checkout_login, "frame-ancestors 'none'");
    await expectLoadsUnframed(checkout_login, 'Checkout', ['Pay']);

    await setFrameOrigins(gw.merchant.application_key, gw.merchant.merchant_id, ['https://elsewhere.example']);
    const elsewhere = await openSession(gw, '/api/init-pay-in', initPayIn(gw.merchant, shop.url));
    embedAt('/embed-elsewhere', elsewhere.body.redirect_url as string);
    const third = await newPage(browser, 'desktop');
    try {
      const { shown, refused, frame_url } = await framed(third.page, '/embed-elsewhere');
      expect(shown).toBe(false);
      expect(refused.join('\n')).toContain('frame-ancestors https://elsewhere.example');
      expect(frame_url).toMatch(/^chrome-error:/);
    } finally {
      await third.close();
    }
  });
  it('3-D Secure inside the embedded cashier: its page opens in the iframe of a configured origin only, and Approve returns there', async () => {
    await setFrameOrigins(gw.merchant.application_key, gw.merchant.merchant_id, [shop.url]);
    const answer = await openSession(gw, '/api/init-pay-in', initPayIn(gw.merchant, shop.url));
    embedAt('/embed-3ds', answer.body.redirect_url as string);
    const { page, close } = await newPage(browser, 'desktop');
    let challenge_url: string;
    try {
      expect((await framed(page, '/embed-3ds')).shown).toBe(true);
      const frame = page.frameLocator('iframe[title="Cashier"]');
      await frame.getByLabel('Amount (USD)').fill('21');
      await frame.getByLabel('Card number').fill('4111111111111111');
      await frame.getByLabel('Expiry date').fill('12/35');
      await frame.getByLabel('CVV').fill('333');
      await frame.getByRole('button', { name: 'Pay' }).click();
      await frame.getByRole('heading', { name: '3-D Secure authentication' }).waitFor();
      challenge_url = page
        .frames()
        .find((f) => f !== page.mainFrame())!
        .url();
      expect(challenge_url).toMatch(new RegExp(`^${gw.url}/sandbox/3ds/`));
      expect(page.url()).toBe(`${shop.url}/embed-3ds`);
      await frame.getByRole('button', { name: 'Approve' }).click();
      await frame.getByText('Payment approved').waitFor();
      expect(page.url()).toBe(`${shop.url}/embed-3ds`);
    } finally {
      await close();
    }
    // The session's 3-D Secure page has the cashier's own rule: the configured origins, nobody else.
    const headers = await framingOf(challenge_url);
    expect(headers.csp).toContain(`frame-ancestors ${shop.url}`);
    expect(headers.xfo).toBeNull();
    const elsewhere = await startMerchantReceiver();
    try {
      await expectRefused('/embed-3ds-elsewhere', challenge_url, `frame-ancestors ${shop.url}`, elsewhere);
    } finally {
      await elsewhere.close();
    }
  });

  it('nobody can frame the sandbox 3-D Secure and wallet pages of a direct payment or a checkout; each loads at the top level', async () => {
    // A card sale sent to 3-D Secure (CVV 333) and a direct payout to the sandbox e-wallet, both through the API.
    const sale = await postSigned(
      gw.url,
      '/api/process',
      saleA(gw.merchant, { cvv: '333', return_url: `${shop.url}/return`, notification_url: `${shop.url}/notify` }),
      gw.merchant.secret,
    );
    expect(sale.body).toMatchObject({ status: 0, transaction_status: 'pending_async' });
    const payout = await postSigned(
      gw.url,
      '/api/direct',
      direct(gw.merchant, {
        amount: 1234,
        currency: 'EUR',
        data_method: 'ewallet',
        data_account_number: 'WALLET555',
        return_url: `${shop.url}/return`,
        notification_url: `${shop.url}/notify`,
      }),
      gw.merchant.secret,
    );
    expect(payout.body).toMatchObject({ status: 0, transaction_status: 'pending_async', payment_method: 'ewallet' });
    const pages: [string, string, string, string[]][] = [
      ['/embed-sale-3ds', sale.body.redirect_url as string, '3-D Secure authentication', ['Approve', 'Decline']],
      ['/embed-wallet', payout.body.redirect_url as string, 'Sandbox wallet: incoming payout', ['Confirm', 'Cancel']],
    ];
    for (const [path, url, heading, buttons] of pages) {
      expect(await framingOf(url)).toEqual({ csp: expect.stringContaining("frame-ancestors 'none'"), xfo: 'DENY' });
      await expectRefused(path, url, "frame-ancestors 'none'");
      await expectLoadsUnframed(url, heading, buttons);
    }
    // Nothing was pressed through the frames: both still wait for the customer.
    for (const trace_id of [sale.body.trace_id, payout.body.trace_id] as number[]) {
      expect(await gw.gateway.deps.store.transactions.get(trace_id)).toMatchObject({ status: 'pending_async' });
    }

    // A checkout's 3-D Secure page, even for a merchant with frame origins: only init-pay-in pages may be framed.
    await setFrameOrigins(gw.merchant.application_key, gw.merchant.merchant_id, [shop.url]);
    const checkout = await openSession(gw, '/api/init-checkout', initCheckout(gw.merchant, shop.url));
    const customer = new CashierCustomer(gw.url);
    const paid = await customer.payByCard((await customer.login(checkout.body.redirect_url as string)).text, { cvv: '333' });
    expect(paid.status).toBe(303);
    expect(paid.location).toMatch(new RegExp(`^${gw.url}/sandbox/3ds/`));
    expect(await framingOf(paid.location!)).toEqual({ csp: expect.stringContaining("frame-ancestors 'none'"), xfo: 'DENY' });
    await expectRefused('/embed-checkout-3ds', paid.location!, "frame-ancestors 'none'");
  });
});
