// A PayPal deposit through the hosted cashier as a customer meets it, in a real Chromium, on each
// store (issue 27): the merchant's gateway is `paypal`, pointed at the fake PayPal on 127.0.0.1.
// The customer chooses PayPal (no wallet account asked), follows the link to PayPal's approval
// page, and approves there (the gateway captures once they are back, and shows the cashier's
// result) or cancels (the deposit is cancelled). Each ends in the right status with one signed
// notification at the merchant's site; the fake's record of requests stays within PayPal's API.
import type { Browser, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { newPage, type ViewportName } from '../support/browser.js';
import { initCheckout, openSession } from '../support/cashier.js';
import { visibleText, withChromium } from '../support/cashier-browser.js';
import { withLiveGateway } from '../support/live-gateway.js';
import { type LivePayPal, startLivePayPal } from '../support/live-paypal.js';
import { waitUntil } from '../support/notification-merchant.js';
import { storeKinds } from '../support/stores.js';

let browser: Browser;
withChromium((launched) => (browser = launched));

describe.each(storeKinds())('PayPal deposit through the cashier in Chromium on %s', (kind) => {
  let live: LivePayPal;
  withLiveGateway(
    () => startLivePayPal(kind),
    (started) => (live = started),
  );

  /** Opens the checkout's cashier, pays with PayPal, and arrives at PayPal's approval page: the trace_id of the deposit. */
  async function toPayPal(page: Page, amount: number): Promise<{ trace_id: number; order_id: string }> {
    const body = initCheckout(live.merchant, live.receiver.url, { amount, payment_method: 'ewallet' });
    const opened = await openSession(live.gw, '/api/init-checkout', body, live.merchant);
    expect(opened.body).toMatchObject({ status: 0 });
    await page.goto(opened.body.redirect_url as string);
    await page.getByRole('heading', { name: 'PayPal' }).waitFor();
    expect(await page.getByLabel('Wallet ID').count()).toBe(0);
    expect(await page.getByLabel('Card number').count()).toBe(0);
    expect(await visibleText(page)).toContain("You approve the payment on PayPal's own page, then come back here.");
    await page.getByRole('button', { name: 'Pay' }).click();
    // PayPal's page is on another origin: the cashier links to it.
    const link = page.locator(`a[href^="${live.fake.url}/checkoutnow?token="]`);
    await link.waitFor();
    await Promise.all([page.waitForURL((url) => url.href.startsWith(`${live.fake.url}/checkoutnow`)), link.click()]);
    await page.getByRole('heading', { name: 'Pay with PayPal' }).waitFor();
    const order_id = new URL(page.url()).searchParams.get('token')!;
    expect(await page.locator('#order').innerText()).toBe(order_id);
    expect(await page.locator('main').innerText()).toContain(`${(amount / 100).toFixed(2)} USD`);
    const trace_id = Number(live.fake.order(order_id)!.custom_id!.replace('paygate-', ''));
    expect(await live.row(trace_id)).toMatchObject({ status: 'pending_async', psp_transaction_id: order_id });
    return { trace_id, order_id };
  }

  async function deposit(viewport: ViewportName, amount: number, button: 'Approve' | 'Cancel') {
    const { page, close } = await newPage(browser, viewport);
    try {
      const found = await toPayPal(page, amount);
      await Promise.all([
        page.waitForURL((url) => url.href.startsWith(`${live.gw.url}/cashier/attempt/`)),
        page.locator(`#${button.toLowerCase()}`).click(),
      ]);
      return { ...found, text: await visibleText(page) };
    } finally {
      await close();
    }
  }

  const onlyOnce = async (trace_id: number, status: string) => {
    await waitUntil(
      async () => (await live.gw.gateway.deps.store.notifications.listOfTransaction(trace_id)).every((n) => n.state === 'delivered'),
      'delivered',
    );
    expect(live.notifications(trace_id).filter((n) => n.transaction_status === status)).toHaveLength(1);
  };

  it('approved at PayPal on a phone: back at the cashier, paid, captured once, notified once', async () => {
    const paid = await deposit('phone', 2300, 'Approve');
    expect(paid.text).toContain('Payment approved');
    expect(paid.text).toContain('23.00 USD');
    expect(await live.settled(paid.trace_id, 'approved')).toMatchObject({ amount: 2300, payment_method: 'ewallet' });
    await onlyOnce(paid.trace_id, 'approved');
    expect(live.fake.order(paid.order_id)).toMatchObject({ status: 'COMPLETED' });
    expect(live.fake.order(paid.order_id)!.captures).toHaveLength(1);
  });

  it('cancelled at PayPal on a desktop: back at the cashier, the deposit cancelled and notified once, nothing captured', async () => {
    const cancelled = await deposit('desktop', 2400, 'Cancel');
    expect(cancelled.text).not.toContain('Payment approved');
    await live.settled(cancelled.trace_id, 'cancelled');
    await onlyOnce(cancelled.trace_id, 'cancelled');
    expect(live.fake.order(cancelled.order_id)!.captures).toHaveLength(0);
  });
});
