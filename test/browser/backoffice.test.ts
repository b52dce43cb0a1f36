// The back office in a real Chromium on both stores (issue 15, docs/backoffice.md): an operator and
// a merchant's staff member sign in through the form and do each task end to end (search, a
// transaction, a partial refund, a notification sent again, payouts approved and rejected with a
// reason, subscriptions, merchants, gateways, users, the audit log, the secret rolled, a test
// notification, the CSV export), at desktop and phone widths. Every back-office answer Chromium
// receives is kept and scanned at the end: no full card number anywhere. Screenshots of the SQLite
// run go to docs/screenshots/backoffice-*.png (npm run screenshots).
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../../src/domain/merchants.js';
import { luhnValid } from '../../src/domain/cards.js';
import { newPage, type ViewportName } from '../support/browser.js';
import { shootPage, withChromium } from '../support/cashier-browser.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../support/gateway.js';
import { storeKinds } from '../support/stores.js';
import { addUser, PASSWORD, sale, sameUtcDay } from '../support/backoffice.js';
import { MASTERCARD, VISA } from '../support/bodies.js';
import { nowSeconds, postSigned } from '../support/client.js';
import { payoutE } from '../support/payout-bodies.js';
import { startMerchantReceiver, type MerchantReceiver } from '../support/merchant-receiver.js';
import { signedReply, waitUntil } from '../support/notification-merchant.js';
import { createPlanVia, subscribeVia, tokenize } from '../support/v13.js';

let browser: Browser;
withChromium((launched) => {
  browser = launched;
});

/**
 * Numbers of a card number's length that pass the Luhn check: a full card number, written whole or
 * in groups of digits split by spaces or dashes. A run inside a longer word (a random hex id such
 * as a gateway's) is not a number shown to anyone, and one in twenty such runs passes Luhn by chance.
 * The form's CSRF token is left out: it is random base64url, whose dashes once joined its digits
 * into a 13-digit run that passed Luhn (a CI run on 2026-11-27).
 */
function fullCardNumbers(text: string): string[] {
  const without_tokens = text.replace(/(name="_csrf" value=")[^"]*"/g, '$1"');
  return [...without_tokens.matchAll(/(?<![0-9A-Za-z])[0-9](?:[ -]?[0-9]){12,18}(?![0-9A-Za-z])/g)]
    .map((m) => m[0].replace(/[ -]/g, ''))
    .filter((digits) => luhnValid(digits));
}

describe.each(storeKinds())('back office in Chromium on %s', (kind) => {
  let gw: TestGateway;
  let shop: CreatedMerchant;
  let receiver: MerchantReceiver;
  /** Every back-office answer body Chromium received (pages and the CSV), for the card-number scan. */
  const seen: { url: string; body: string }[] = [];
  let approved_sale: { trace_id: number; order_id: string };
  let payouts: number[] = [];
  let subscription_id: string;
  /** When the sales below began: the overview's "today" figures hold them only on that UTC day. */
  let seeded_at_ms: number;

  beforeAll(async () => {
    seeded_at_ms = Date.now();
    gw = await startTestGateway(kind);
    receiver = await startMerchantReceiver();
    shop = await gw.createMerchant({ merchant_id: `shop-${kind}` });
    await addUser(gw, 'operator@example.com', 'operator');
    await addUser(gw, 'staff@example.com', 'merchant', shop.merchant_id);
    receiver.setReply('/notify', () => signedReply(shop.secret, 0));
    approved_sale = await sale(gw, shop, { amount: 4250, notification_url: `${receiver.url}/notify` });
    await sale(gw, shop, { amount: 1500, card_number: MASTERCARD });
    await sale(gw, shop, { amount: 999, cvv: '000' });
    const hold = await fetch(`${gw.url}/operator/gateways/${shop.gateway}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ hold_payouts: true }),
    });
    expect(hold.status).toBe(200);
    payouts = [];
    for (const amount of [5000, 7000]) {
      const payout = await postSigned(gw.url, '/api/process', payoutE(shop, { amount, timestamp: nowSeconds() }), shop.secret);
      expect(payout.body).toMatchObject({ status: 0, transaction_status: 'requested' });
      payouts.push(Number(payout.body.trace_id));
    }
    const plan = await createPlanVia(gw.url, shop, { name: 'Gold monthly' });
    subscription_id = String((await subscribeVia(gw.url, shop, plan, await tokenize(gw.url, shop))).subscription_id);
    // The first charge is made by the billing worker, not by the create call: the overview's
    // figures count it, so wait for it (a loaded machine once showed the overview before it).
    await waitUntil(
      async () => (await gw.gateway.deps.store.subscriptions.get(shop.merchant_id, subscription_id))?.cycles_charged === 1,
      'the first charge',
    );
  });
  afterAll(async () => {
    // The scan of everything the back office showed: masked cards are there, full ones never.
    const all = seen.map((s) => s.body).join('\n');
    if (seen.length > 0) {
      expect(all).toContain('411111******1111');
      for (const page of seen) {
        expect([page.url, fullCardNumbers(page.body)]).toEqual([page.url, []]);
        expect(page.body.includes(VISA) || page.body.includes(MASTERCARD)).toBe(false);
      }
      // The scan itself: it finds a card number shown whole or grouped, and passes a hex id.
      expect(fullCardNumbers(`<td>${VISA}</td> <td>5555 5555 5555 4444</td> <td>4111-1111-1111-1111</td>`)).toEqual([
        VISA,
        MASTERCARD,
        VISA,
      ]);
      expect(fullCardNumbers('<td>ab2546171599137cd</td> <td>2026-11-24 03:37:33</td>')).toEqual([]);
      expect(fullCardNumbers('<input type="hidden" name="_csrf" value="jevv9OOA-1420727-725144_sXBg0">')).toEqual([]);
    }
    await receiver?.close();
    await gw?.close();
  });

  async function openSignedIn(email: string, viewport: ViewportName): Promise<{ page: Page; close: () => Promise<void> }> {
    const opened = await newPage(browser, viewport);
    const { page } = opened;
    page.on('response', async (response) => {
      if (!response.url().includes('/backoffice')) return;
      if (response.status() >= 300 && response.status() < 400) return;
      const body = await response.text().catch(() => null);
      if (body !== null) seen.push({ url: response.url(), body });
    });
    await page.goto(`${gw.url}/backoffice/`);
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${gw.url}/backoffice/overview`);
    return { page, close: opened.close };
  }

  it('an operator finds a transaction, refunds part of it and sends its notification again', async () => {
    const { page, close } = await openSignedIn('operator@example.com', 'desktop');
    try {
      await expect.poll(() => page.locator('h1').innerText()).toBe('Overview');
      // 42.50 + 15.00 and the subscription's first charge, 19.99; one sale of four declined.
      const tiles = await page.locator('.tiles').innerText();
      expect(tiles).toMatch(/Approved, last 30 days\s+77\.49 USD/);
      expect(tiles).toMatch(/Approval rate, 30 days\s+75\.0 %/);
      if (sameUtcDay(seeded_at_ms)) {
        expect(tiles).toMatch(/Approved today\s+77\.49 USD/);
        expect(tiles).toMatch(/Approval rate today\s+75\.0 %/);
      }
      expect(tiles).toMatch(/Payouts waiting for a decision\s+2/);
      expect(await page.locator('svg[role="img"]').count()).toBe(2);
      await shootPage(browser, page, kind, 'backoffice-overview');

      await page.getByRole('link', { name: 'Transactions' }).click();
      await page.getByLabel('Order ID').fill(approved_sale.order_id);
      await page.getByRole('button', { name: 'Search' }).click();
      await page.getByRole('link', { name: String(approved_sale.trace_id), exact: true }).click();
      await expect.poll(() => page.locator('h1').innerText()).toBe(`Transaction ${approved_sale.trace_id}`);
      const facts = await page.locator('main').innerText();
      expect(facts).toContain('411111******1111');
      expect(facts).toContain('42.50 USD');
      await receiver.waitForRequest((r) => r.path === '/notify');
      await expect.poll(async () => (await page.reload(), page.locator('main').innerText()), { timeout: 15_000 }).toMatch(/delivered/);
      await shootPage(browser, page, kind, 'backoffice-transaction');

      await page.getByLabel(/^Amount \(USD/).fill('12.50');
      await page.getByRole('button', { name: 'Refund' }).click();
      // A refund moves money: its confirmation page first, with the amount, card and customer.
      await expect.poll(() => page.locator('h1').innerText()).toBe(`Confirm the refund of transaction ${approved_sale.trace_id}`);
      expect(await page.locator('main').innerText()).toMatch(/Amount to refund\s+12\.50 USD/);
      expect(await gw.gateway.deps.store.transactions.listRefundsOf(approved_sale.trace_id, 10)).toEqual([]);
      await page.getByRole('button', { name: 'Confirm refund' }).click();
      await expect.poll(() => page.locator('[role="status"]').innerText()).toContain('Refund sent');
      const refunds = await gw.gateway.deps.store.transactions.listRefundsOf(approved_sale.trace_id, 10);
      expect(refunds.map((r) => [r.amount_minor, r.status])).toEqual([[1250, 'approved']]);
      expect(await page.locator('main').innerText()).toMatch(/Refunded or in flight\s+12\.50 USD/);

      const before = receiver.requestsTo('/notify', 'POST').length;
      await page.getByRole('button', { name: 'Send again' }).first().click();
      await expect.poll(() => page.locator('[role="status"]').innerText()).toContain('scheduled to be sent again');
      await expect.poll(() => receiver.requestsTo('/notify', 'POST').length, { timeout: 15_000 }).toBeGreaterThan(before);
    } finally {
      await close();
    }
  });

  it('an operator approves one payout and rejects another with a reason, and reads subscriptions', async () => {
    const { page, close } = await openSignedIn('operator@example.com', 'desktop');
    try {
      await page.getByRole('link', { name: 'Payouts' }).click();
      await shootPage(browser, page, kind, 'backoffice-payouts');
      await page.getByRole('button', { name: `Approve ${payouts[0]}` }).click();
      // Each decision asks first (test/browser/backoffice-fit.test.ts checks what the page says).
      await page.getByRole('button', { name: 'Confirm: pay out 50.00 USD' }).click();
      await expect.poll(() => page.locator('[role="status"]').innerText()).toContain('Payout approved');
      await page.getByRole('button', { name: `Reject ${payouts[1]}` }).click();
      // The reason is required: the browser keeps the form until it is given.
      expect(page.url()).toMatch(/\/backoffice\/payouts/);
      await page.getByLabel('Reason for rejecting').fill('Account not verified');
      await page.getByRole('button', { name: `Reject ${payouts[1]}` }).click();
      await page.getByRole('button', { name: `Confirm: reject payout ${payouts[1]}` }).click();
      await expect.poll(() => page.locator('[role="status"]').innerText()).toContain('Payout rejected');
      const store = gw.gateway.deps.store;
      await expect.poll(async () => (await store.transactions.get(payouts[0]!))!.status).toBe('approved');
      expect((await store.transactions.get(payouts[1]!))!.status).toBe('rejected');
      expect((await store.transactions.listStatusChanges(payouts[1]!)).at(-1)!.reason).toContain('Account not verified');
      expect(await page.locator('main').innerText()).toContain('No payout is waiting for a decision.');

      await page.getByRole('link', { name: 'Subscriptions' }).click();
      const text = await page.locator('main').innerText();
      expect(text).toContain('Gold monthly');
      expect(text).toMatch(/19\.99 USD \/ monthly\s+active/);
      await shootPage(browser, page, kind, 'backoffice-subscriptions');
      // One subscription: its history and its event notifications, sent again from here.
      await page.locator('tbody a').first().click();
      await expect.poll(() => page.locator('h1').innerText()).toMatch(/^Subscription /);
      const detail = await page.locator('main').innerText();
      expect(detail).toContain('subscription.created (active)');
      const event = (await gw.gateway.deps.store.notifications.listOfSubscription(subscription_id))[0]!;
      // Its first attempt failed (merchant.example does not resolve here); the next would be minutes away.
      await expect
        .poll(async () => (await gw.gateway.deps.store.notifications.get(event.id))!.attempts, { timeout: 15_000 })
        .toBeGreaterThan(0);
      const attempts_before = (await gw.gateway.deps.store.notifications.get(event.id))!.attempts;
      await page.getByRole('button', { name: 'Send again' }).first().click();
      await expect.poll(() => page.locator('[role="status"]').innerText()).toContain('scheduled to be sent again');
      await expect
        .poll(async () => (await gw.gateway.deps.store.notifications.get(event.id))!.attempts, { timeout: 15_000 })
        .toBeGreaterThan(attempts_before);
      // And cancelled from here: nothing more is charged, and the button is gone.
      await page.getByRole('button', { name: `Cancel subscription ${subscription_id}` }).click();
      await page.getByRole('button', { name: `Confirm: cancel subscription ${subscription_id}` }).click();
      await expect.poll(() => page.locator('[role="status"]').innerText()).toContain('Subscription cancelled');
      expect((await gw.gateway.deps.store.subscriptions.get(shop.merchant_id, subscription_id))!).toMatchObject({
        status: 'canceled',
        next_charge_at_ms: null,
      });
      expect(await page.getByRole('button', { name: `Cancel subscription ${subscription_id}` }).count()).toBe(0);
    } finally {
      await close();
    }
  });

  it('an operator creates a merchant, gives it a gateway, disables it, creates a user and reads the audit log', async () => {
    const { page, close } = await openSignedIn('operator@example.com', 'desktop');
    try {
      await page.getByRole('link', { name: 'Merchants' }).click();
      await page.getByLabel('Merchant ID (empty: generated)').fill(`new-shop-${kind}`);
      await page.getByRole('button', { name: 'Create merchant' }).click();
      const secret = await page.getByTestId('new-secret').innerText();
      expect(secret.length).toBeGreaterThanOrEqual(16);
      expect((await gw.gateway.deps.merchants.findFresh(`new-shop-${kind}`))!.secret).toBe(secret);
      await page.getByRole('link', { name: 'Merchants' }).click();
      expect(await page.content()).not.toContain(secret);
      await shootPage(browser, page, kind, 'backoffice-merchants');

      await page.getByRole('link', { name: 'Gateways' }).click();
      const sandbox_form = page.locator('form', { has: page.getByRole('button', { name: 'Add sandbox gateway' }) });
      await sandbox_form.getByLabel('Merchant ID').fill(`new-shop-${kind}`);
      await sandbox_form.getByRole('button', { name: 'Add sandbox gateway' }).click();
      await expect.poll(() => page.locator('[role="status"]').innerText()).toContain('Gateway created.');
      const gateways = await gw.gateway.deps.store.merchants.listGateways(`new-shop-${kind}`);
      expect(gateways.map((g) => g.connector)).toEqual(['sandbox', 'sandbox']);
      const added = gateways.at(-1)!;
      // Named by its label (none given: the connector and the id's first 8), never by its id.
      expect(added.label).toBe(`sandbox ${added.gateway_id.slice(0, 8)}`);
      expect(await page.locator('main').innerText()).not.toContain(added.gateway_id);
      await page.getByRole('button', { name: `Disable sandbox ${added.gateway_id.slice(0, 8)}` }).click();
      await page.getByRole('button', { name: `Confirm: disable sandbox ${added.gateway_id.slice(0, 8)}` }).click();
      await expect.poll(() => page.locator('[role="status"]').innerText()).toContain('Gateway disabled.');
      expect((await gw.gateway.deps.store.merchants.getGateway(added.gateway_id))!.enabled).toBe(0);

      // A processor's credentials: typed into password fields, sealed, never shown again.
      const checkout_form = page.locator('form', { has: page.getByRole('button', { name: 'Add checkout gateway' }) });
      const secret_key = `sk_sbox_${kind}_browser_secret_key`;
      await checkout_form.getByLabel('Merchant ID').fill(`new-shop-${kind}`);
      await checkout_form.getByLabel(/^Label/).fill('Checkout EU');
      await checkout_form.getByLabel('Currencies (comma-separated)').fill('USD,EUR');
      await checkout_form.getByLabel('secret_key').fill(secret_key);
      await checkout_form.getByLabel('processing_channel_id').fill(`pc_${'c'.repeat(26)}`);
      await checkout_form.getByLabel('webhook_secret').fill('whsec-browser-0123456789');
      expect(await checkout_form.getByLabel('secret_key').getAttribute('type')).toBe('password');
      await checkout_form.getByRole('button', { name: 'Add checkout gateway' }).click();
      await expect.poll(() => page.locator('[role="status"]').innerText()).toContain('Gateway created.');
      const checkout = (await gw.gateway.deps.store.merchants.listGateways(`new-shop-${kind}`)).find((g) => g.connector === 'checkout')!;
      expect(checkout.label).toBe('Checkout EU');
      const card = page.locator('.card', { has: page.getByRole('button', { name: 'Disable Checkout EU' }) });
      expect(await card.locator('h2').innerText()).toBe('Checkout EU');
      expect(await card.innerText()).toMatch(/secret_key, webhook_secret \(set; never shown\)/);
      await card.getByText('Replace settings (credentials)').click();
      await card.getByLabel(/^secret_key/).fill(`${secret_key}_rolled`);
      await card.getByRole('button', { name: 'Replace settings' }).click();
      await expect.poll(() => page.locator('[role="status"]').innerText()).toContain('Gateway settings replaced.');
      expect(await page.content()).not.toContain(secret_key);
      await shootPage(browser, page, kind, 'backoffice-gateways');

      // Renamed in its card; its own page heads with the label and shows the id, selected whole by one click to copy.
      const renamed_card = page.locator('.card', { has: page.getByRole('button', { name: 'Disable Checkout EU' }) });
      await renamed_card.getByText('Rename', { exact: true }).click();
      await renamed_card.getByLabel(/^Label/).fill('Checkout EU · main');
      await renamed_card.getByRole('button', { name: 'Rename Checkout EU' }).click();
      await expect.poll(() => page.locator('[role="status"]').innerText()).toContain('Gateway renamed.');
      await page.getByRole('link', { name: 'Checkout EU · main', exact: true }).click();
      await page.waitForURL(`${gw.url}/backoffice/gateways/${checkout.gateway_id}`);
      expect(await page.locator('h1').innerText()).toBe('Gateway Checkout EU · main');
      const id = page.getByTestId('gateway-id');
      expect(await id.innerText()).toBe(checkout.gateway_id);
      await id.click();
      expect(await page.evaluate(() => window.getSelection()?.toString())).toBe(checkout.gateway_id);
      await shootPage(browser, page, kind, 'backoffice-gateway');

      await page.getByRole('link', { name: 'Merchants' }).click();
      await page.getByRole('button', { name: `Disable new-shop-${kind}` }).click();
      await page.getByRole('button', { name: `Confirm: disable new-shop-${kind}` }).click();
      await expect.poll(() => page.locator('[role="status"]').innerText()).toContain('Merchant disabled');

      await page.getByRole('link', { name: 'Users' }).click();
      await page.getByLabel('E-mail').fill('new-staff@example.com');
      await page.getByLabel(/^Password/).fill(PASSWORD);
      await page.getByLabel('Role').selectOption('merchant');
      await page.getByLabel('Merchant ID (merchant users)').fill(shop.merchant_id);
      await page.getByRole('button', { name: 'Create user' }).click();
      await expect.poll(() => page.locator('[role="status"]').innerText()).toContain('User created.');
      expect(await page.locator('main').innerText()).toContain('new-staff@example.com');
      await shootPage(browser, page, kind, 'backoffice-users');

      await page.getByRole('link', { name: 'Audit log' }).click();
      const audit = await page.locator('main').innerText();
      for (const action of [
        'create_merchant',
        'create_gateway',
        'disable_gateway',
        'disable_merchant',
        'create_user',
        'refund',
        'payout_approve',
        'payout_reject',
        'resend_notification',
        'cancel_subscription',
        'sign_in',
      ]) {
        expect(audit).toContain(action);
      }
      expect(audit).not.toContain(secret);
      await shootPage(browser, page, kind, 'backoffice-audit');

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL(`${gw.url}/backoffice/`);
      await page.goto(`${gw.url}/backoffice/overview`);
      expect(page.url()).toBe(`${gw.url}/backoffice/`);
    } finally {
      await close();
    }
  });

  it("a merchant's staff member on a phone sees their transactions, exports them, rolls the secret and sends a test notification", async () => {
    const { page, close } = await openSignedIn('staff@example.com', 'phone');
    try {
      expect(await page.locator('header').innerText()).toContain(shop.merchant_id);
      await page.getByRole('link', { name: 'Transactions' }).click();
      const rows = await page.locator('tbody tr').count();
      expect(rows).toBeGreaterThanOrEqual(5);
      await shootPage(browser, page, kind, 'backoffice-transactions');
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('link', { name: 'Export this search as CSV' }).click(),
      ]);
      const csv = await (await download.createReadStream()).toArray();
      const text = Buffer.concat(csv as Buffer[]).toString('utf8');
      seen.push({ url: 'transactions.csv', body: text });
      expect(text.split('\r\n')[0]).toMatch(/^trace_id,created_at,merchant_id/);
      expect(text).toContain(approved_sale.order_id);

      // An operator's page is, to them, a page that does not exist.
      await page.goto(`${gw.url}/backoffice/users`);
      expect(await page.locator('h1').innerText()).toBe('Not found');

      await page.goto(`${gw.url}/backoffice/credentials`);
      await page.getByLabel('Keep accepting the old secret for').selectOption({ label: '4 hours' });
      await page.getByRole('button', { name: 'Roll the secret' }).click();
      // Its confirmation first: nothing is rolled until it is confirmed.
      expect(await page.locator('h1').innerText()).toBe('Confirm: roll the API secret');
      expect(await page.getByTestId('confirmation').innerText()).toContain('still accepted for 4 hours');
      expect((await gw.gateway.deps.merchants.findFresh(shop.merchant_id))!.secret).toBe(shop.secret);
      await page.getByRole('button', { name: 'Roll the secret' }).click();
      const new_secret = await page.getByTestId('new-secret').innerText();
      expect((await gw.gateway.deps.merchants.findFresh(shop.merchant_id))!.secret).toBe(new_secret);
      await shootPage(browser, page, kind, 'backoffice-credentials');
      receiver.setReply('/test-hook', () => signedReply(new_secret, 0));
      await page.getByLabel('Notification URL').fill(`${receiver.url}/test-hook`);
      await page.getByRole('button', { name: 'Send a test notification' }).click();
      await expect.poll(() => page.locator('[role="status"]').innerText()).toContain('Delivered');
      expect(receiver.requestsTo('/test-hook', 'POST').length).toBe(1);

      // The endpoint checker: this hook answers status 0 to anything, forged or unsigned too.
      await page.getByLabel('Endpoint URL').fill(`${receiver.url}/test-hook`);
      await page.getByLabel('Endpoint URL').press('Enter');
      const report = page.getByTestId('endpoint-report');
      await expect.poll(() => report.innerText(), { timeout: 20_000 }).toContain('7 passed, 0 warnings, 2 failed');
      const failed = await page.locator('[data-verdict="fail"]').allInnerTexts();
      expect(failed.map((text) => text.split('\n')[0])).toEqual([
        'Fail · 6. approved with a wrong signature (one character changed)',
        'Fail · 7. approved with no signature at all',
      ]);
      expect(failed[0]).toContain('It accepted a notification anyone could have sent.');
      expect(receiver.requestsTo('/test-hook', 'POST').length).toBe(10);
    } finally {
      await close();
    }
  });
});
