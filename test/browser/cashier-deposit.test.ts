// The init-pay-in cashier as a customer meets it, in a real Chromium, on each store: the one-time
// registration form, a card deposit approved, a card deposit through 3-D Secure, a deposit paid
// from the sandbox e-wallet, a deposit the merchant's validation refuses, a payment still
// processing, and a link and an auth_token that have expired by the sandbox clock (with the
// pages of a session and an order that ended).
import type { Browser, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/operations/cashier-session.js';
import { postJson } from '../support/client.js';
import { newPage } from '../support/browser.js';
import { gatewayNow, initCheckout, initPayIn, openSession, withGatewayAndShop } from '../support/cashier.js';
import { checkTapTargets, shoot, visibleText, withChromium } from '../support/cashier-browser.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../support/gateway.js';
import type { MerchantReceiver } from '../support/merchant-receiver.js';
import { signedReply, waitUntil } from '../support/notification-merchant.js';
import { storeKinds } from '../support/stores.js';

let browser: Browser;
withChromium((launched) => (browser = launched));

describe.each(storeKinds())('cashier deposit (init-pay-in) in Chromium on %s', (kind) => {
  let gw: TestGateway;
  let shop: MerchantReceiver;
  withGatewayAndShop(kind, ['validation', 'notification'], (started) => ({ gw, shop } = started));

  const sessionOf = async (gateway: TestGateway, auth_token: string) =>
    (await gateway.gateway.deps.store.cashier.findSessionByAuthToken(sha256Hex(auth_token)))!;
  const transactionsOf = async (gateway: TestGateway, auth_token: string) =>
    gateway.gateway.deps.store.cashier.listTransactions((await sessionOf(gateway, auth_token)).session_id);

  async function open(overrides: Record<string, unknown> = {}) {
    const answer = await openSession(gw, '/api/init-pay-in', initPayIn(gw.merchant, shop.url, overrides));
    expect(answer.body.status).toBe(0);
    return { redirect_url: answer.body.redirect_url as string, auth_token: answer.body.auth_token as string };
  }

  async function fillCard(page: Page, card: { number?: string; exp?: string; cvv?: string } = {}) {
    await page.getByLabel('Card number').fill(card.number ?? '4111 1111 1111 1111');
    await page.getByLabel('Expiry date').fill(card.exp ?? '12/35');
    await page.getByLabel('CVV').fill(card.cvv ?? '568');
  }

  it('registration: a customer the merchant sent no details for fills the one-time form; errors are shown by field', async () => {
    const pin = `reg-${Date.now()}`;
    const session = await open({
      pin,
      first_name: undefined,
      last_name: undefined,
      email: undefined,
      phone: undefined,
      dob: undefined,
      address: undefined,
      city: undefined,
      zip: undefined,
    });
    const { page, close } = await newPage(browser, 'phone', { javaScriptEnabled: false });
    try {
      await page.goto(session.redirect_url);
      await page.getByRole('heading', { name: 'Your details' }).waitFor();
      expect(await page.locator('script').count()).toBe(0);
      await shoot(browser, page, kind, 'registration');
      await page.getByLabel('First name').fill('Ana');
      await page.getByLabel('Last name').fill('García');
      await page.getByLabel('E-mail').fill('ana@example');
      await page.getByLabel('Phone').fill('12345678');
      await page.getByLabel('Date of birth').fill('1991-07-30');
      await page.getByLabel('Street address').fill('Calle Mayor 1');
      await page.getByLabel('City').fill('Madrid');
      await page.getByRole('button', { name: 'Confirm' }).click();
      // The same rules as the session call: an e-mail address, a phone of at least 9 digits on init-pay-in; postal code required.
      await page.getByText('Please check this value.').first().waitFor();
      expect(await page.locator('#f-email-error').innerText()).toBe('Please check this value.');
      expect(await page.locator('#f-phone-error').innerText()).toBe('Please check this value.');
      expect(await page.locator('#f-zip-error').innerText()).toBe('Please fill in this field.');
      expect(await page.getByLabel('First name').inputValue()).toBe('Ana');
      await checkTapTargets(page);
      await shoot(browser, page, kind, 'registration-errors');
      await page.getByLabel('E-mail').fill('ana@example.com');
      await page.getByLabel('Phone').fill('34612345678');
      await page.getByLabel('Postal code').fill('28013');
      await page.getByRole('button', { name: 'Confirm' }).click();
      await page.getByRole('heading', { name: 'Deposit' }).waitFor();
      expect(await page.getByLabel('Amount (USD)').isVisible()).toBe(true);
    } finally {
      await close();
    }
    // One time: the next session of the same customer goes straight to the deposit form.
    const next = await open({
      pin,
      first_name: undefined,
      email: undefined,
      phone: undefined,
      dob: undefined,
      address: undefined,
      city: undefined,
      zip: undefined,
      last_name: undefined,
    });
    const again = await newPage(browser, 'desktop');
    try {
      await again.page.goto(next.redirect_url);
      await again.page.getByRole('heading', { name: 'Deposit' }).waitFor();
      expect(await again.page.getByRole('heading', { name: 'Your details' }).count()).toBe(0);
    } finally {
      await again.close();
    }
  });

  it('a card deposit approved: validation accepted, sale stored and notified with auth_token, back to the shop', async () => {
    const session = await open();
    const { page, close } = await newPage(browser, 'phone');
    try {
      await page.goto(session.redirect_url);
      await page.getByRole('heading', { name: 'Deposit' }).waitFor();
      expect(page.url()).toBe(`${gw.url}/cashier`);
      await checkTapTargets(page);
      await shoot(browser, page, kind, 'deposit');
      await page.getByLabel('Amount (USD)').fill('25.50');
      await fillCard(page);
      await page.getByRole('button', { name: 'Pay' }).click();
      await page.getByText('Payment approved').waitFor();
      expect(page.url()).toBe(`${gw.url}/cashier/attempt/1`);
      const text = await visibleText(page);
      expect(text).toContain('Thank you. 25.50 USD has been paid.');
      expect(text).toContain('411111******1111');
      expect(await page.content()).not.toContain('4111111111111111');
      await checkTapTargets(page);
      await shoot(browser, page, kind, 'deposit-approved');
      await Promise.all([
        page.waitForURL(
          (url) => `${url.origin}${url.pathname}` === `${shop.url}/return` && url.searchParams.get('transaction_status') === 'approved',
        ),
        page.getByRole('link', { name: 'Return to shop' }).click(),
      ]);
    } finally {
      await close();
    }
    const [row] = await transactionsOf(gw, session.auth_token);
    expect(row).toMatchObject({ transaction_type: 'sale', status: 'approved', amount_minor: 2550, card_masked: '411111******1111' });
    const notified = await waitUntil(
      () =>
        shop
          .requestsTo('/notify')
          .map((r) => r.json as Record<string, unknown>)
          .find((n) => n.trace_id === row!.trace_id && n.transaction_status === 'approved'),
      'the notification',
    );
    expect(notified).toMatchObject({ auth_token: session.auth_token, order_id: row!.cashier_order_id, amount: 2550 });
  });

  it('a card deposit through 3-D Secure: CVV 333 opens the sandbox page, Approve returns to the cashier with the result', async () => {
    const session = await open();
    const { page, close } = await newPage(browser, 'desktop', { javaScriptEnabled: false });
    try {
      await page.goto(session.redirect_url);
      await page.getByLabel('Amount (USD)').fill('40');
      await fillCard(page, { cvv: '333' });
      await page.getByRole('button', { name: 'Pay' }).click();
      await page.getByRole('heading', { name: '3-D Secure authentication' }).waitFor();
      expect(page.url()).toMatch(new RegExp(`^${gw.url}/sandbox/3ds/`));
      expect(await visibleText(page)).toContain('40.00 USD');
      await shoot(browser, page, kind, '3ds');
      await page.getByRole('button', { name: 'Approve' }).click();
      await page.getByText('Payment approved').waitFor();
      expect(page.url()).toBe(`${gw.url}/cashier/attempt/1`);
      await shoot(browser, page, kind, '3ds-approved');
    } finally {
      await close();
    }
    const [row] = await transactionsOf(gw, session.auth_token);
    expect(row).toMatchObject({ status: 'approved', amount_minor: 4000 });
    const statuses = (await gw.gateway.deps.store.notifications.listOfTransaction(row!.trace_id)).map(
      (n) => JSON.parse(n.payload_json) as Record<string, unknown>,
    );
    expect(statuses.map((n) => n.transaction_status)).toEqual(['pending_async', 'approved']);
    expect(statuses.every((n) => n.auth_token === session.auth_token)).toBe(true);
  });

  it('a deposit from the sandbox e-wallet: the customer chooses the method, confirms at the wallet, and is back with the result', async () => {
    const session = await open({ payment_method: undefined });
    const { page, close } = await newPage(browser, 'phone', { javaScriptEnabled: false });
    try {
      await page.goto(session.redirect_url);
      await page.getByRole('heading', { name: 'Choose a payment method' }).waitFor();
      await checkTapTargets(page);
      await shoot(browser, page, kind, 'deposit-methods');
      await page.getByRole('button', { name: /^Sandbox e-wallet/ }).click();
      await page.getByLabel('Wallet ID').waitFor();
      expect(await page.getByLabel('Card number').count()).toBe(0);
      await page.getByLabel('Amount (USD)').fill('12.34');
      await page.getByLabel('Wallet ID').fill('WALLET98765');
      await page.getByRole('button', { name: 'Pay' }).click();
      await page.getByRole('heading', { name: 'Sandbox wallet: payment request' }).waitFor();
      expect(page.url()).toMatch(new RegExp(`^${gw.url}/sandbox/wallet/`));
      const wallet = await visibleText(page);
      expect(wallet).toContain('12.34 USD');
      expect(wallet).not.toContain('WALLET98765');
      await shoot(browser, page, kind, 'deposit-wallet');
      await page.getByRole('button', { name: 'Confirm' }).click();
      await page.getByText('Payment approved').waitFor();
      expect(page.url()).toBe(`${gw.url}/cashier/attempt/1`);
      expect(await visibleText(page)).toContain('Thank you. 12.34 USD has been paid.');
    } finally {
      await close();
    }
    const [row] = await transactionsOf(gw, session.auth_token);
    expect(row).toMatchObject({
      transaction_type: 'sale',
      payment_method: 'ewallet',
      status: 'approved',
      amount_minor: 1234,
      card_masked: null,
    });
    const validation = shop
      .requestsTo('/validate')
      .map((r) => r.json as Record<string, unknown>)
      .find((v) => v.order_id === row!.cashier_order_id);
    expect(validation).toMatchObject({ payment_method: 'ewallet', amount: 1234 });
    const notified = await waitUntil(
      () =>
        shop
          .requestsTo('/notify')
          .map((r) => r.json as Record<string, unknown>)
          .find((n) => n.trace_id === row!.trace_id && n.transaction_status === 'approved'),
      'the notification',
    );
    expect(notified).toMatchObject({ auth_token: session.auth_token, payment_method: 'ewallet', amount: 1234 });
    expect(notified).not.toHaveProperty('card_number');
  });

  it("a refused validation shows the merchant's reason and creates no transaction", async () => {
    shop.setReply('/validate-refuse', () =>
      signedReply(gw.merchant.secret, 5, 'Deposits are paused for your account. Please contact support.'),
    );
    const session = await open({ validation_url: `${shop.url}/validate-refuse` });
    const { page, close } = await newPage(browser, 'phone');
    try {
      await page.goto(session.redirect_url);
      await page.getByLabel('Amount (USD)').fill('10');
      await fillCard(page);
      await page.getByRole('button', { name: 'Pay' }).click();
      await page.getByRole('alert').waitFor();
      const alert = await page.getByRole('alert').innerText();
      expect(alert).toContain('The merchant did not accept this payment.');
      expect(alert).toContain('Deposits are paused for your account. Please contact support.');
      // The amount stays; the card fields are empty again (never written back into a page).
      expect(await page.getByLabel('Amount (USD)').inputValue()).toBe('10');
      expect(await page.getByLabel('Card number').inputValue()).toBe('');
      await shoot(browser, page, kind, 'refused');
    } finally {
      await close();
    }
    expect(await transactionsOf(gw, session.auth_token)).toEqual([]);
    expect(shop.requestsTo('/validate-refuse')).toHaveLength(1);
  });

  it('a payment still processing (CVV 222, own gateway that settles late) shows its status and Refresh, and takes no second payment', async () => {
    const slow_gw = await startTestGateway(kind, { env: { PAYGATE_SANDBOX_SETTLE_SECONDS: '1200' } });
    const { page, close } = await newPage(browser, 'phone', { javaScriptEnabled: false });
    try {
      // This gateway's merchant has its own secret: the shop answers its validation requests signed with it.
      shop.setReply('/validate-slow', () => signedReply(slow_gw.merchant.secret, 0, 'Accepted'));
      const answer = await openSession(
        slow_gw,
        '/api/init-pay-in',
        initPayIn(slow_gw.merchant, shop.url, {
          timestamp: gatewayNow(slow_gw),
          validation_url: `${shop.url}/validate-slow`,
        }),
        slow_gw.merchant,
      );
      await page.goto(answer.body.redirect_url as string);
      await page.getByLabel('Amount (USD)').fill('18');
      await fillCard(page, { cvv: '222' });
      await page.getByRole('button', { name: 'Pay' }).click();
      await page.getByText('Processing').first().waitFor();
      expect(page.url()).toBe(`${slow_gw.url}/cashier/attempt/1`);
      // The cashier's own page says the same while the payment is in flight: no form to pay twice.
      await page.goto(`${slow_gw.url}/cashier`);
      const text = await visibleText(page);
      expect(text).toContain('Processing');
      expect(text).toContain('We are waiting for the final answer. This usually takes a few seconds.');
      expect(text).toContain('18.00 USD');
      expect(await page.getByRole('link', { name: 'Refresh' }).count()).toBe(1);
      expect(await page.getByRole('button', { name: 'Pay' }).count()).toBe(0);
      expect(await page.getByLabel('Card number').count()).toBe(0);
      await checkTapTargets(page);
      await shoot(browser, page, kind, 'payment-processing');
      const [row] = await transactionsOf(slow_gw, answer.body.auth_token as string);
      expect(row).toMatchObject({ status: 'pending', amount_minor: 1800 });
    } finally {
      await close();
      await slow_gw.close();
    }
  });

  it('an expired link and auth_token (sandbox clock, own gateway) show that they expired; open pages say the session ended or the order expired', async () => {
    const clock_gw = await startTestGateway(kind);
    const { page, close } = await newPage(browser, 'phone');
    const checkout_page = await newPage(browser, 'desktop');
    try {
      const fresh = await openSession(
        clock_gw,
        '/api/init-pay-in',
        initPayIn(clock_gw.merchant, shop.url, { timestamp: gatewayNow(clock_gw) }),
        clock_gw.merchant,
      );
      const used = await openSession(
        clock_gw,
        '/api/init-pay-in',
        initPayIn(clock_gw.merchant, shop.url, { timestamp: gatewayNow(clock_gw) }),
        clock_gw.merchant,
      );
      const order = await openSession(
        clock_gw,
        '/api/init-checkout',
        initCheckout(clock_gw.merchant, shop.url, { timestamp: gatewayNow(clock_gw) }),
        clock_gw.merchant,
      );
      const auth_token_login = `${clock_gw.url}/cashier/login?auth_token=${fresh.body.auth_token as string}`;
      // Before the clock moves, the auth_token logs in (a context of its own; it can be used again).
      const before = await newPage(browser, 'desktop');
      try {
        expect((await before.page.goto(auth_token_login))?.status()).toBe(200);
        await before.page.getByRole('heading', { name: 'Deposit' }).waitFor();
      } finally {
        await before.close();
      }
      await page.goto(used.body.redirect_url as string);
      await page.getByRole('heading', { name: 'Deposit' }).waitFor();
      await checkout_page.page.goto(order.body.redirect_url as string);
      await checkout_page.page.getByRole('heading', { name: 'Checkout' }).waitFor();

      const moved = await postJson(clock_gw.url, '/sandbox/clock', { advance_seconds: 901 }, { authorization: `Bearer ${ADMIN_TOKEN}` });
      expect(moved.http_status).toBe(200);
      await page.reload();
      await page.getByRole('heading', { name: 'Your session has ended' }).waitFor();
      expect(await page.getByRole('button', { name: 'Pay' }).count()).toBe(0);
      expect(await visibleText(page)).toContain('For your security, a cashier session lasts 15 minutes.');
      await shoot(browser, page, kind, 'session-ended');
      await checkout_page.page.reload();
      await checkout_page.page.getByRole('heading', { name: 'This order has expired' }).waitFor();
      expect(await checkout_page.page.getByRole('button', { name: 'Pay' }).count()).toBe(0);
      expect(await visibleText(checkout_page.page)).toContain('The time to pay this order is over.');
      await shoot(browser, checkout_page.page, kind, 'order-expired');

      const expired = await page.goto(fresh.body.redirect_url as string);
      expect(expired?.status()).toBe(410);
      await page.getByRole('heading', { name: 'This link has expired or was already used' }).waitFor();
      expect(await visibleText(page)).toContain('Please return to the shop and open the cashier again.');
      await shoot(browser, page, kind, 'link-expired');

      // The auth_token that logged in before: refused the same way, in a fresh context (no cookie).
      const after = await newPage(browser, 'phone');
      try {
        const refused = await after.page.goto(auth_token_login);
        expect(refused?.status()).toBe(410);
        await after.page.getByRole('heading', { name: 'This link has expired or was already used' }).waitFor();
        expect(await after.page.getByRole('button', { name: 'Pay' }).count()).toBe(0);
        expect((await after.context.cookies()).filter((c) => c.name === 'paygate_cashier')).toEqual([]);
      } finally {
        await after.close();
      }
    } finally {
      await close();
      await checkout_page.close();
      await clock_gw.close();
    }
  });
});
