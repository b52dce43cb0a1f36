// The example shop as a customer uses it, in a real Chromium, against a real gateway: "Buy", the
// hosted checkout (a declined card first, then the sandbox card that approves), back to the shop,
// and the order shown paid because the shop's notification handler recorded paygate's notification.
// "Capture on shipping": the checkout authorizes, the order waits for "Ship", which captures it
// (and "Cancel order" voids another). And the other way round: coming back to the return URL, even
// with "approved" written into it, pays nothing.
import { PaygateClient } from '@paygate/sdk';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newPage } from '../../../test/support/browser.js';
import { visibleText, withChromium } from '../../../test/support/cashier-browser.js';
import { CashierCustomer } from '../../../test/support/cashier.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../../../test/support/gateway.js';
import { waitUntil } from '../../../test/support/notification-merchant.js';
import { type RunningShop, startShop } from '../src/shop.js';

let browser: Browser;
withChromium((launched) => (browser = launched));

describe('example shop in Chromium', () => {
  let gw: TestGateway;
  let shop: RunningShop;
  const log: string[] = [];
  beforeAll(async () => {
    gw = await startTestGateway('sqlite');
    shop = await startShop({
      paygate: { base_url: gw.url, merchant_id: gw.merchant.merchant_id, secret: gw.merchant.secret, frontend: gw.merchant.frontend },
      port: 0,
      log: (line) => log.push(line),
    });
  });
  afterAll(async () => {
    await shop?.close();
    await gw?.close();
  });

  it('from "Buy" to a paid order: the hosted checkout, a declined card, the approved one, and the shop\'s notification handler records it', async () => {
    const { page, close } = await newPage(browser, 'desktop');
    try {
      await page.goto(shop.url);
      await page.getByRole('heading', { name: 'Example shop' }).waitFor();
      await page.locator('section', { hasText: 'Paygate mug' }).getByRole('button', { name: 'Buy' }).click();

      // paygate's hosted checkout, for the shop's order and amount.
      await page.getByRole('heading', { name: 'Checkout' }).waitFor();
      expect(page.url().startsWith(gw.url)).toBe(true);
      const order = shop.orders()[0]!;
      expect(await visibleText(page)).toContain(order.order_id);
      expect(await visibleText(page)).toContain('12.50 USD');
      await page.getByRole('button', { name: /^Card/ }).click();
      await page.getByLabel('Card number').fill('4111 1111 1111 1111');
      await page.getByLabel('Expiry date').fill('12/34');
      await page.getByLabel('CVV').fill('000');
      await page.getByRole('button', { name: 'Pay' }).click();
      await page.getByText('Payment declined').waitFor();

      await page.getByRole('button', { name: /^Card/ }).click();
      await page.getByLabel('Card number').fill('4111 1111 1111 1111');
      await page.getByLabel('Expiry date').fill('12/34');
      await page.getByLabel('CVV').fill('568');
      await page.getByRole('button', { name: 'Pay' }).click();
      await page.getByText('Payment approved').waitFor();

      // Back at the shop: the order page shows it paid once the notification has come (the page refreshes itself).
      await page.getByRole('link', { name: 'Return to shop' }).click();
      expect(page.url().startsWith(`${shop.url}/orders/${order.order_id}`)).toBe(true);
      await page.locator('#order-status', { hasText: 'Paid' }).waitFor({ timeout: 15_000 });
      const text = await visibleText(page);
      expect(text).toContain("Payment confirmed by paygate's notification");
      expect(text).toContain('411111******1111');
    } finally {
      await close();
    }
    // The shop's record: paid by the approved sale's notification, the declined attempt's notification kept too.
    const order = shop.orders()[0]!;
    expect(order.status).toBe('paid');
    const approved = order.notifications.find((n) => n.transaction_status === 'approved')!;
    expect(approved).toMatchObject({ transaction_type: 'sale', amount: 1250, currency: 'USD', order_id: order.order_id });
    expect(order.paid_trace_id).toBe(approved.trace_id);
    expect(order.notifications.map((n) => n.transaction_status)).toContain('rejected');
    // And paygate recorded the shop's reply as a delivery.
    const recorded = await waitUntil(async () => {
      const answer = (await (
        await fetch(`${gw.url}/operator/transactions/${approved.trace_id}/notifications`, {
          headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        })
      ).json()) as { notifications: { state: string }[] };
      return answer.notifications.at(-1)?.state === 'delivered' ? answer : undefined;
    }, 'the notification recorded delivered');
    expect(recorded.notifications.length).toBeGreaterThan(0);
    expect(log).toContain(`order ${order.order_id} paid (transaction ${approved.trace_id})`);
  });

  it("capture on shipping: the checkout authorizes, the order waits for Ship, and Ship captures it; paid by the capture's notification", async () => {
    const paygate = new PaygateClient({
      base_url: gw.url,
      merchant_id: gw.merchant.merchant_id,
      secret: gw.merchant.secret,
      frontend: gw.merchant.frontend,
    });
    const { page, close } = await newPage(browser, 'desktop');
    try {
      await page.goto(shop.url);
      const tshirt = page.locator('section', { hasText: 'Sandbox T-shirt' });
      await tshirt.getByLabel('Capture on shipping').check();
      await tshirt.getByRole('button', { name: 'Buy' }).click();

      await page.getByRole('heading', { name: 'Checkout' }).waitFor();
      const order = shop.orders().at(-1)!;
      expect(order).toMatchObject({ capture: 'on_shipping', status: 'awaiting_payment' });
      // An order to authorize takes cards only (a wallet payment cannot be held): the checkout opens on the card form.
      expect(await page.getByRole('button', { name: /^Card/ }).count()).toBe(0);
      await page.getByLabel('Card number').fill('4111 1111 1111 1111');
      await page.getByLabel('Expiry date').fill('12/34');
      await page.getByLabel('CVV').fill('568');
      await page.getByRole('button', { name: 'Pay' }).click();
      await page.getByText('Payment authorized').waitFor();

      await page.getByRole('link', { name: 'Return to shop' }).click();
      await page.locator('#order-status', { hasText: 'Authorized' }).waitFor({ timeout: 15_000 });
      expect(await visibleText(page)).toContain('the funds are held and taken when the order ships');
      // paygate's find-order says the same as the shop: authorized, not paid.
      const held = await paygate.findOrder(order.order_id);
      expect(held).toMatchObject({ kind: 'found', answer: { order_status: 'authorized', transaction_status: 'authorized' } });

      await page.getByRole('button', { name: 'Ship' }).click();
      await page.locator('#order-status', { hasText: 'Paid' }).waitFor({ timeout: 15_000 });
      expect(await visibleText(page)).toContain('Shipped: the authorized payment was captured.');
      expect(await paygate.findOrder(order.order_id)).toMatchObject({ kind: 'found', answer: { order_status: 'approved' } });
    } finally {
      await close();
      paygate.close();
    }
    const order = shop.orders().at(-1)!;
    expect(order).toMatchObject({ status: 'paid', shipped: true });
    expect(order.paid_trace_id).toBe(order.authorized_trace_id);
    expect(order.notifications.map((n) => [n.transaction_type, n.transaction_status, n.amount])).toEqual([
      ['authorize', 'authorized', 1999],
      ['authorize', 'approved', 1999],
    ]);
    expect(log).toContain(`order ${order.order_id} authorized (transaction ${order.authorized_trace_id})`);
  });

  it('Cancel order voids the authorization: cancelled by its notification, and it can no longer be shipped', async () => {
    const bought = await fetch(`${shop.url}/buy`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'product=mug&capture=on_shipping',
    });
    expect(bought.status).toBe(303);
    const order = shop.orders().at(-1)!;
    const customer = new CashierCustomer(gw.url);
    await customer.login(bought.headers.get('location')!);
    const card_form = await customer.get('/cashier?method=card');
    expect((await customer.payByCard(card_form.text, { card_number: '4111111111111111', card_exp: '12/34', cvv: '568' })).status).toBe(303);
    await waitUntil(() => order.status === 'authorized' || undefined, 'the authorization notified');

    const post = (action: string) => fetch(`${shop.url}/orders/${order.order_id}/${action}`, { method: 'POST', redirect: 'manual' });
    expect((await post('cancel')).status).toBe(303);
    await waitUntil(() => order.status === 'cancelled' || undefined, 'the void notified');
    expect(order.notifications.map((n) => n.transaction_status)).toEqual(['authorized', 'cancelled']);
    const shipped = await post('ship');
    expect(shipped.status).toBe(409);
    expect(order).toMatchObject({ status: 'cancelled', shipped: false, paid_trace_id: null });
    const { page, close } = await newPage(browser, 'phone');
    try {
      await page.goto(`${shop.url}/orders/${order.order_id}`);
      expect(await page.locator('#order-status').innerText()).toBe('Cancelled');
      expect(await page.getByRole('button', { name: 'Ship' }).count()).toBe(0);
    } finally {
      await close();
    }
  });

  it('coming back to the return URL pays nothing, whatever its query says; only a notification does', async () => {
    const bought = await fetch(`${shop.url}/buy`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'product=tshirt',
    });
    expect(bought.status).toBe(303);
    expect(bought.headers.get('location')).toMatch(new RegExp(`^${gw.url}/cashier/login/`));
    const order = shop.orders().at(-1)!;
    const { page, close } = await newPage(browser, 'phone');
    try {
      await page.goto(`${shop.url}/orders/${order.order_id}?order_id=${order.order_id}&transaction_status=approved&trace_id=1`);
      expect(await page.locator('#order-status').innerText()).toBe('Waiting for the payment');
    } finally {
      await close();
    }
    expect(order.status).toBe('awaiting_payment');
  });
});
