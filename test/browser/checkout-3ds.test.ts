// Checkout.com's own 3-D Secure, as a customer meets it in a real Chromium (issue 14): a live
// sale through the `checkout` gateway is answered pending_async with a redirect_url to the
// processor's page (the fake's, on 127.0.0.1); the customer enters the password and continues
// (approved) or gets it wrong (declined). The processor sends them back to the gateway, which
// asks the processor for the outcome, records it with its notification, and sends them on to the
// merchant's return_url. On both stores, at a phone's and a desktop's width.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { saleA } from '../support/bodies.js';
import { launchBrowser, newPage, type ViewportName } from '../support/browser.js';
import { type LiveCheckout, liveSale, startLiveCheckout } from '../support/live-checkout.js';
import { withLiveGateway } from '../support/live-gateway.js';
import { storeKinds } from '../support/stores.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

describe.each(storeKinds())('Checkout.com 3-D Secure in Chromium on %s', (kind) => {
  let live: LiveCheckout;
  withLiveGateway(
    () => startLiveCheckout(kind, { settings: { three_ds: 'always' } }),
    (started) => (live = started),
  );

  /** A sale sent to Checkout.com's 3-D Secure page; its return_url names the order. */
  async function challengedSale(overrides: Record<string, unknown> = {}) {
    const body = liveSale(live, saleA(live.merchant, { gateway: live.gateway, ...overrides }));
    body.return_url = `${live.receiver.url}/return?order=${encodeURIComponent(body.order_id as string)}`;
    const answer = await live.process(body);
    expect(answer.body).toMatchObject({
      status: 0,
      transaction_status: 'pending_async',
      error_code: '0',
      error_details: '3-D Secure authentication required',
      transaction_id: expect.stringMatching(/^pay_/),
      redirect_url: expect.stringMatching(new RegExp(`^${live.fake.url}/`)),
    });
    // No notification yet: nothing is decided until the customer is back or the processor says so.
    expect(live.notifications(answer.body.trace_id as number)).toEqual([]);
    return { body, answer: answer.body, trace_id: answer.body.trace_id as number, return_url: body.return_url as string };
  }

  async function authenticate(viewport: ViewportName, redirect_url: string, return_url: string, password: string): Promise<string> {
    const opened = await newPage(browser, viewport);
    try {
      const { page } = opened;
      await page.goto(redirect_url);
      await page.getByLabel('Password').fill(password);
      await Promise.all([page.waitForURL((url) => url.href === return_url), page.getByRole('button', { name: 'Continue' }).click()]);
      return await page.getByRole('heading').first().innerText();
    } finally {
      await opened.close();
    }
  }

  it('approved by the customer on a phone: back at the merchant, the sale approved and notified', async () => {
    // The processor's webhooks held back: the outcome can only come from asking it when the customer is back.
    live.fake.holdEvents(true);
    const sale = await challengedSale({ amount: 4100 });
    expect(await authenticate('phone', sale.answer.redirect_url as string, sale.return_url, 'Checkout1!')).toBe('Back at the merchant');
    // Recorded before the customer arrived at the merchant: the gateway asked the processor on the way.
    expect(await live.row(sale.trace_id)).toMatchObject({ status: 'approved', psp_transaction_id: sale.answer.transaction_id });
    const notification = await live.settled(sale.trace_id, 'approved');
    expect(notification).toMatchObject({ transaction_id: sale.answer.transaction_id, amount: 4100 });
    expect(live.fake.payment(sale.answer.transaction_id as string)).toMatchObject({ three_ds: 'authenticated', status: 'Captured' });
    // The way back is the gateway's (never straight to the merchant), and the customer's word is not taken: the processor was asked.
    const asked = live.fake.requestsTo('GET /payments/{id}').filter((r) => r.path.endsWith(sale.answer.transaction_id as string));
    expect(asked.length).toBeGreaterThan(0);
    const sent = live.fake.requestsTo('POST /payments').find((r) => (r.json as { reference?: string }).reference === sale.body.order_id)!;
    expect((sent.json as { success_url: string }).success_url).toMatch(
      new RegExp(`^${live.gw.url}/return/${sale.trace_id}/[0-9a-f]{32}\\?outcome=success$`),
    );
  });

  it('declined by the customer on a desktop (a wrong password): back at the merchant, the sale rejected and notified', async () => {
    live.fake.holdEvents(true);
    const sale = await challengedSale({ amount: 4200 });
    expect(await authenticate('desktop', sale.answer.redirect_url as string, sale.return_url, 'not the password')).toBe(
      'Back at the merchant',
    );
    expect(await live.row(sale.trace_id)).toMatchObject({ status: 'rejected', error_code: '20151' });
    expect(await live.settled(sale.trace_id, 'rejected')).toMatchObject({ error_code: '20151' });
  });

  it('a made-up or altered way back finds nothing and changes nothing', async () => {
    const sale = await challengedSale({ amount: 4300 });
    const sent = live.fake.requestsTo('POST /payments').find((r) => (r.json as { reference?: string }).reference === sale.body.order_id)!;
    const success_url = (sent.json as { success_url: string }).success_url;
    const altered = success_url.replace(
      /\/([0-9a-f])([0-9a-f]{31})\?/,
      (_m, first: string, rest: string) => `/${first === '0' ? '1' : '0'}${rest}?`,
    );
    const opened = await newPage(browser, 'desktop');
    try {
      const response = await opened.page.goto(altered);
      expect(response?.status()).toBe(404);
      expect(await opened.page.getByRole('heading').first().innerText()).toBe('Link not valid');
    } finally {
      await opened.close();
    }
    expect((await live.row(sale.trace_id)).status).toBe('pending_async');
  });
  it('an authorization through 3-D Secure on a desktop: authorized (not captured) when the customer is back, then captured', async () => {
    live.fake.holdEvents(true);
    const held = await challengedSale({ amount: 2600, transaction_type: 'authorize' });
    expect(await authenticate('desktop', held.answer.redirect_url as string, held.return_url, 'Checkout1!')).toBe('Back at the merchant');
    expect(await live.row(held.trace_id)).toMatchObject({ transaction_type: 'authorize', status: 'authorized' });
    expect(await live.settled(held.trace_id, 'authorized')).toMatchObject({ transaction_type: 'authorize', amount: 2600 });
    expect(live.fake.payment(held.answer.transaction_id as string)).toMatchObject({
      three_ds: 'authenticated',
      status: 'Authorized',
      captured_amount: 0,
    });
    live.fake.holdEvents(false);
    await live.fake.releaseHeldEvents();
    const captured = await live.process(
      {
        merchant_id: live.merchant.merchant_id,
        application_key: live.merchant.application_key,
        reference_id: held.trace_id,
        version: '1.2',
        timestamp: Math.floor(Date.now() / 1000),
      },
      '/api/capture',
    );
    expect(captured.body).toMatchObject({ status: 0 });
    expect(await live.settled(held.trace_id, 'approved')).toMatchObject({ amount: 2600 });
  });
});
