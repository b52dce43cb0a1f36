// The back office fits a desktop and a phone in a real Chromium (issue 30, item 3;
// docs/backoffice.md): every table page, loaded with enough rows and long values (a 50-character
// merchant id, order ids and customer PINs, a 64-character gateway label, long e-mails, 256-character
// descriptions), never scrolls sideways at 1280x800 nor at 390x844, and on the phone each row is a
// card whose every cell carries its column's label. The search's filters fold behind "Filters" on
// the phone and stand open on the desktop, and its Gateway field names gateways by their labels.
// Amounts read in the currency's decimals (JPY none, BHD three). Every action that moves money or
// stops something goes through its confirmation page, clicked through as a person does.
// Screenshots of the SQLite run: docs/screenshots/backoffice-search-*.png,
// backoffice-confirm-payout-*.png, backoffice-confirm-merchant-*.png (npm run screenshots).
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../../src/domain/merchants.js';
import { newPage, type ViewportName } from '../support/browser.js';
import { shootPage, withChromium } from '../support/cashier-browser.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../support/gateway.js';
import { storeKinds } from '../support/stores.js';
import { addUser, PASSWORD, sale } from '../support/backoffice.js';
import { chargeback } from '../support/backoffice-authorizations.js';
import { nowSeconds, postSigned } from '../support/client.js';
import { payoutE } from '../support/payout-bodies.js';
import { createPlanVia, subscribeVia, tokenize, useClock } from '../support/v13.js';

let browser: Browser;
withChromium((launched) => {
  browser = launched;
});

const LONG_LABEL = 'Checkout Europe primary acquiring account for card subscriptions'.slice(0, 64);
const LONG_EMAIL = 'a.member.of.staff.with.a.rather.long.address@shop-with-a-long-domain-name.example';

async function operatorApi(gw: TestGateway, path: string, body: unknown): Promise<void> {
  const response = await fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect([path, response.status]).toEqual([path, 200]);
}

/**
 * How far the page and each table's box scroll sideways (0: they fit). Measured against the
 * screen's width, not innerWidth: a phone widens its layout viewport to content that overflows.
 */
async function overflow(page: Page): Promise<{ document: number; tables: number }> {
  const width = page.viewportSize()!.width;
  return page.evaluate(
    (screen_width) => ({
      document: Math.max(document.documentElement.scrollWidth, window.innerWidth) - screen_width,
      tables: Math.max(0, ...[...document.querySelectorAll('.scroll')].map((e) => e.scrollWidth - e.clientWidth)),
    }),
    width,
  );
}

interface CellSeen {
  readonly header: string;
  readonly label: string;
  readonly display: string;
  readonly left: number;
  readonly right: number;
  readonly empty: boolean;
}

/** Every table cell with its column's header, the label its ::before shows, and where it is. */
async function cellsOf(page: Page): Promise<CellSeen[]> {
  return page.evaluate(() =>
    [...document.querySelectorAll('table.rows')].flatMap((table) => {
      const headers = [...table.querySelectorAll('thead th')].map((th) => th.textContent?.trim() ?? '');
      return [...table.querySelectorAll('tbody tr')].flatMap((tr) =>
        [...tr.children].map((td, i) => {
          const box = td.getBoundingClientRect();
          return {
            header: headers[i] ?? '',
            label: getComputedStyle(td, '::before').content,
            display: getComputedStyle(td).display,
            left: box.left,
            right: box.right,
            empty: (td.textContent ?? '').trim() === '',
          };
        }),
      );
    }),
  );
}

describe.each(storeKinds())('the back office at phone and desktop sizes in Chromium on %s', (kind) => {
  let gw: TestGateway;
  let shop: CreatedMerchant;
  let other: CreatedMerchant;
  let payouts: number[] = [];
  let subscription_id: string;
  let jpy_sale: number;

  beforeAll(async () => {
    gw = await startTestGateway(kind);
    shop = await gw.createMerchant({ merchant_id: `a-merchant-with-a-rather-long-identifier-${kind}`.padEnd(50, 'x') });
    other = await gw.createMerchant({ merchant_id: `other-shop-${kind}` });
    await operatorApi(gw, `/operator/gateways/${shop.gateway}`, { label: LONG_LABEL, hold_payouts: true });
    await addUser(gw, 'operator@example.com', 'operator');
    await addUser(gw, LONG_EMAIL, 'merchant', shop.merchant_id);
    await addUser(gw, 'leaver@example.com', 'merchant', other.merchant_id);
    for (let i = 0; i < 12; i += 1) {
      await sale(gw, shop, {
        amount: 1000 + i,
        order_id: `order-${i}-${'0123456789abcdef'.repeat(3)}`.slice(0, 50),
        pin: `customer-${i}-${'Z'.repeat(40)}`.slice(0, 50),
        description: `A description long enough to wrap many times: ${'lorem ipsum '.repeat(20)}`.slice(0, 256),
      });
    }
    jpy_sale = (await sale(gw, shop, { amount: 1234, currency: 'JPY' })).trace_id;
    await sale(gw, shop, { amount: 12345, currency: 'BHD' });
    await sale(gw, other, { amount: 999 });
    const disputed = await sale(gw, shop, { amount: 4321 });
    await chargeback(gw, disputed.trace_id);
    payouts = [];
    for (const amount of [5000, 7000]) {
      const payout = await postSigned(gw.url, '/api/process', payoutE(shop, { amount, timestamp: nowSeconds() }), shop.secret);
      expect(payout.body).toMatchObject({ status: 0, transaction_status: 'requested' });
      payouts.push(Number(payout.body.trace_id));
    }
    useClock(() => Math.floor(gw.gateway.deps.clock.now_ms() / 1000));
    try {
      const plan = await createPlanVia(gw.url, shop, { name: `A plan with a long name ${'x'.repeat(8)}` });
      subscription_id = String((await subscribeVia(gw.url, shop, plan, await tokenize(gw.url, shop))).subscription_id);
    } finally {
      useClock(null);
    }
    await gw.gateway.deps.request_log.flush();
  });
  afterAll(async () => {
    await gw?.close();
  });

  async function signedIn(email: string, viewport: ViewportName): Promise<{ page: Page; close: () => Promise<void> }> {
    const opened = await newPage(browser, viewport);
    const { page } = opened;
    await page.goto(`${gw.url}/backoffice/`);
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${gw.url}/backoffice/overview`);
    return { page, close: opened.close };
  }

  const TABLE_PAGES = [
    '/backoffice/transactions',
    '/backoffice/disputes?show=all',
    '/backoffice/payouts',
    '/backoffice/subscriptions',
    '/backoffice/request-log',
    '/backoffice/merchants',
    '/backoffice/gateways',
    '/backoffice/users',
    '/backoffice/audit',
  ];

  for (const viewport of ['desktop', 'phone'] as const) {
    it(`fits every table page at the ${viewport} size (on a phone, each row a card of labelled cells)`, async () => {
      const pages = [...TABLE_PAGES, `/backoffice/transactions/${jpy_sale}`, `/backoffice/subscriptions/${subscription_id}`];
      for (const [email, urls] of [
        ['operator@example.com', pages],
        [LONG_EMAIL, ['/backoffice/transactions', '/backoffice/request-log', '/backoffice/overview']],
      ] as const) {
        const { page, close } = await signedIn(email, viewport);
        try {
          for (const url of urls) {
            await page.goto(`${gw.url}${url}`);
            const fit = await overflow(page);
            expect([url, viewport, fit.document <= 0, fit.tables <= 0]).toEqual([url, viewport, true, true]);
            const cells = await cellsOf(page);
            const shown = cells.filter((c) => !c.empty);
            // Enough rows to matter: a page of long values, not an empty table.
            if (['/backoffice/transactions', '/backoffice/request-log'].includes(url)) expect(shown.length, url).toBeGreaterThan(40);
            const width = page.viewportSize()!.width;
            for (const cell of shown) {
              expect([url, cell.header, cell.left >= 0 && cell.right <= width + 0.5]).toEqual([url, cell.header, true]);
              if (viewport === 'phone') {
                // A card of "label: value" lines: the cell is no longer a table cell, and shows its column's name.
                expect([url, cell.header, cell.display, cell.label]).toEqual([url, cell.header, 'grid', JSON.stringify(cell.header)]);
              } else {
                expect([url, cell.header, cell.display, cell.label]).toEqual([url, cell.header, 'table-cell', 'none']);
              }
            }
          }
          if (email === 'operator@example.com') {
            // Amounts in the currency's own decimals: none for JPY, three for BHD.
            await page.goto(`${gw.url}/backoffice/transactions`);
            const text = await page.locator('main').innerText();
            expect(text).toContain('1234 JPY');
            expect(text).toContain('12.345 BHD');
            expect(text).toContain('10.11 USD');
          }
        } finally {
          await close();
        }
      }
    });
  }

  it('folds the filters behind a toggle on a phone, shows them on a desktop, and picks a gateway by its label', async () => {
    const phone = await signedIn(LONG_EMAIL, 'phone');
    try {
      const { page } = phone;
      await page.getByRole('link', { name: 'Transactions' }).click();
      const search = page.getByRole('button', { name: 'Search' });
      expect(await search.isVisible()).toBe(false);
      await page.locator('details.filters > summary').click();
      expect(await search.isVisible()).toBe(true);
      // The Gateway field lists labels; the id is only the option's value.
      const options = await page.locator('#q-gateway option').allInnerTexts();
      expect(options).toEqual(['any', LONG_LABEL]);
      await page.getByLabel('Gateway').selectOption({ label: LONG_LABEL });
      await page.getByLabel('Currency').fill('USD');
      await page.getByLabel('Amount from (e.g. 12.50)').fill('10.05');
      await page.getByLabel('Amount to (e.g. 99.99)').fill('10.11');
      await search.click();
      await page.waitForURL(/gateway=/);
      // Collapsed again on the next page, saying how many filters are set.
      expect(await page.locator('details.filters > summary').innerText()).toBe('Filters (4 set)');
      expect(await search.isVisible()).toBe(false);
      expect(await page.locator('tbody tr').count()).toBe(7);
      expect((await overflow(page)).document).toBeLessThanOrEqual(0);
      await shootPage(browser, page, kind, 'backoffice-search');
    } finally {
      await phone.close();
    }
    const desktop = await signedIn('operator@example.com', 'desktop');
    try {
      const { page } = desktop;
      for (const url of ['/backoffice/transactions', '/backoffice/request-log', '/backoffice/disputes']) {
        await page.goto(`${gw.url}${url}`);
        // Open without a click: the form and its button are there.
        const button = page.locator('details.filters form button[type="submit"]');
        expect([url, await button.isVisible()]).toEqual([url, true]);
        expect([url, await page.locator('details.filters > summary').isVisible()]).toEqual([url, false]);
      }
      await page.goto(`${gw.url}/backoffice/transactions`);
      // An operator's list names each gateway's merchant too (two merchants may label theirs alike).
      expect(await page.locator('#q-gateway option').allInnerTexts()).toContain(`${LONG_LABEL} (${shop.merchant_id})`);
      // The CSV names the gateway by its label, its id in the last column.
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('link', { name: 'Export this search as CSV' }).click(),
      ]);
      const csv = Buffer.concat((await (await download.createReadStream()).toArray()) as Buffer[]).toString('utf8');
      const [header, first] = csv.split('\r\n');
      expect(header!.endsWith(',gateway_id')).toBe(true);
      const columns = header!.split(',');
      expect(columns[columns.indexOf('gateway')]).toBe('gateway');
      expect(first).toContain(`,${LONG_LABEL},`);
    } finally {
      await desktop.close();
    }
  });

  it('asks before every action that moves money or stops something, and does it only once confirmed', async () => {
    const store = gw.gateway.deps.store;
    const { page, close } = await signedIn('operator@example.com', 'phone');
    try {
      // A payout: the confirmation names the amount, the card, the customer and the gateway.
      await page.getByRole('link', { name: 'Payouts' }).click();
      await page.getByRole('button', { name: `Approve ${payouts[0]}` }).click();
      await expect.poll(() => page.locator('h1').innerText()).toBe(`Confirm: approve payout ${payouts[0]}`);
      const facts = await page.getByTestId('confirmation').innerText();
      expect(facts).toMatch(/Amount\s+50\.00 USD/);
      expect(facts).toContain('411111******1111');
      expect(facts).toMatch(/Customer PIN\s+\S+/);
      expect(facts).toContain(LONG_LABEL);
      expect((await store.transactions.get(payouts[0]!))!.status).toBe('requested');
      expect((await overflow(page)).document).toBeLessThanOrEqual(0);
      await shootPage(browser, page, kind, 'backoffice-confirm-payout');
      await page.getByRole('button', { name: 'Confirm: pay out 50.00 USD' }).click();
      await expect.poll(() => page.locator('[role="status"]').innerText()).toContain('Payout approved');
      await expect.poll(async () => (await store.transactions.get(payouts[0]!))!.status).toBe('approved');

      await page.getByLabel('Reason for rejecting').fill('Account not verified');
      await page.getByRole('button', { name: `Reject ${payouts[1]}` }).click();
      expect(await page.getByTestId('confirmation').innerText()).toMatch(/Reason for rejecting\s+Account not verified/);
      expect((await store.transactions.get(payouts[1]!))!.status).toBe('requested');
      await page.getByRole('button', { name: `Confirm: reject payout ${payouts[1]}` }).click();
      await expect.poll(() => page.locator('[role="status"]').innerText()).toContain('Payout rejected');
      expect((await store.transactions.get(payouts[1]!))!.status).toBe('rejected');

      // A merchant, its gateway and a user: each disabled from its confirmation page only.
      await page.getByRole('link', { name: 'Merchants' }).click();
      await page.getByRole('button', { name: `Disable ${other.merchant_id}` }).click();
      await expect.poll(() => page.locator('h1').innerText()).toBe(`Confirm: disable merchant ${other.merchant_id}`);
      expect((await store.merchants.get(other.merchant_id))!.disabled_at_ms).toBeNull();
      await shootPage(browser, page, kind, 'backoffice-confirm-merchant');
      // "Back" does nothing.
      await page.getByRole('link', { name: 'Back to the merchants, nothing done' }).click();
      expect((await store.merchants.get(other.merchant_id))!.disabled_at_ms).toBeNull();
      await page.getByRole('button', { name: `Disable ${other.merchant_id}` }).click();
      await page.getByRole('button', { name: `Confirm: disable ${other.merchant_id}` }).click();
      await expect.poll(() => page.locator('[role="status"]').innerText()).toContain('Merchant disabled');
      expect((await store.merchants.get(other.merchant_id))!.disabled_at_ms).not.toBeNull();

      const other_gateway = (await store.merchants.getGateway(other.gateway!))!;
      await page.getByRole('link', { name: 'Gateways' }).click();
      await page.getByRole('button', { name: `Disable ${other_gateway.label}` }).click();
      expect(await page.getByTestId('confirmation').innerText()).toContain(other.merchant_id);
      expect((await store.merchants.getGateway(other_gateway.gateway_id))!.enabled).toBe(1);
      await page.getByRole('button', { name: `Confirm: disable ${other_gateway.label}` }).click();
      await expect.poll(() => page.locator('[role="status"]').innerText()).toContain('Gateway disabled.');
      expect((await store.merchants.getGateway(other_gateway.gateway_id))!.enabled).toBe(0);

      await page.getByRole('link', { name: 'Users' }).click();
      await page.getByRole('button', { name: 'Disable leaver@example.com' }).click();
      expect(await page.getByTestId('confirmation').innerText()).toContain('Their sessions end at once');
      await page.getByRole('button', { name: 'Confirm: disable leaver@example.com' }).click();
      await expect.poll(() => page.locator('[role="status"]').innerText()).toContain('User disabled');
      expect((await store.backoffice.findUserByEmail('leaver@example.com'))!.disabled_at_ms).not.toBeNull();

      // A subscription: what stops being charged, and from which card.
      await page.goto(`${gw.url}/backoffice/subscriptions/${subscription_id}`);
      await page.getByRole('button', { name: `Cancel subscription ${subscription_id}` }).click();
      expect(await page.getByTestId('confirmation').innerText()).toContain('411111******1111');
      expect((await store.subscriptions.get(shop.merchant_id, subscription_id))!.status).toBe('active');
      await page.getByRole('button', { name: `Confirm: cancel subscription ${subscription_id}` }).click();
      await expect.poll(() => page.locator('[role="status"]').innerText()).toContain('Subscription cancelled');

      // The audit log names the gateway by its label.
      await page.getByRole('link', { name: 'Audit log' }).click();
      const audit = await page.locator('main').innerText();
      expect(audit).toContain(other_gateway.label);
      expect(audit).not.toContain(other_gateway.gateway_id);
    } finally {
      await close();
    }
  });
});
