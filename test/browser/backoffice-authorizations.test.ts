// An authorization's Capture and Void and the disputes, in the back office, in a real Chromium on
// both stores (decisions §16, docs/backoffice.md): an operator captures part of an authorization
// after its confirmation page (amount, masked card, customer), and the page then shows it approved
// for the captured amount, the merchant notified once and the audit log told; the same form sent
// again changes nothing; a form without its CSRF token is refused; a merchant's staff member voids
// another; another merchant's staff get the page that does not exist; a chargeback made with the
// sandbox's trigger is in the Disputes view and on its transaction's page. Screenshots of the
// SQLite run go to docs/screenshots/backoffice-{authorization,capture,disputes}-*.png (npm run screenshots).
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../../src/domain/merchants.js';
import { newPage, type ViewportName } from '../support/browser.js';
import { shootPage, withChromium } from '../support/cashier-browser.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { storeKinds } from '../support/stores.js';
import { addUser, PASSWORD, sale } from '../support/backoffice.js';
import { authorize, chargeback, notificationsReporting } from '../support/backoffice-authorizations.js';

let browser: Browser;
withChromium((launched) => {
  browser = launched;
});

describe.each(storeKinds())('back-office authorizations and disputes in Chromium on %s', (kind) => {
  let gw: TestGateway;
  let shop: CreatedMerchant;
  let other: CreatedMerchant;
  /** Captured by the operator, in part. */
  let to_capture: number;
  /** Voided by the merchant's staff. */
  let to_void: number;
  /** Charged back with the sandbox's trigger. */
  let disputed: number;

  beforeAll(async () => {
    gw = await startTestGateway(kind);
    shop = await gw.createMerchant({ merchant_id: `auth-shop-${kind}` });
    other = await gw.createMerchant({ merchant_id: `other-shop-${kind}` });
    await addUser(gw, 'operator@example.com', 'operator');
    await addUser(gw, 'staff@example.com', 'merchant', shop.merchant_id);
    await addUser(gw, 'other-staff@example.com', 'merchant', other.merchant_id);
    to_capture = (await authorize(gw, shop, { amount: 4250 })).trace_id;
    to_void = (await authorize(gw, shop, { amount: 1800 })).trace_id;
    disputed = (await sale(gw, shop, { amount: 2600 })).trace_id;
    await chargeback(gw, disputed);
  });
  afterAll(async () => {
    await gw?.close();
  });

  async function openSignedIn(email: string, viewport: ViewportName): Promise<{ page: Page; close: () => Promise<void> }> {
    const opened = await newPage(browser, viewport);
    const { page } = opened;
    await page.goto(`${gw.url}/backoffice/`);
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${gw.url}/backoffice/overview`);
    return { page, close: opened.close };
  }

  /** The fields of the page's form posting to `action`, as the browser would send them. */
  async function formFields(page: Page, action: string): Promise<Record<string, string>> {
    const inputs = page.locator(`form[action="${action}"] input`);
    const fields: Record<string, string> = {};
    for (const input of await inputs.all()) fields[(await input.getAttribute('name'))!] = await input.inputValue();
    return fields;
  }

  it('an operator captures part of an authorization after confirming; the same form again and a form without its token change nothing', async () => {
    const store = gw.gateway.deps.store;
    const { page, close } = await openSignedIn('operator@example.com', 'desktop');
    try {
      await page.goto(`${gw.url}/backoffice/transactions/${to_capture}`);
      expect(await page.locator('main').innerText()).toMatch(/Status\s+authorized/);
      const amount = page.getByLabel(/^Amount to capture \(USD, at most 42\.50\)/);
      // The whole authorized amount by default.
      expect(await amount.inputValue()).toBe('42.50');
      await shootPage(browser, page, kind, 'backoffice-authorization');
      await amount.fill('12.50');
      await page.getByRole('button', { name: 'Capture', exact: true }).click();

      await expect.poll(() => page.locator('h1').innerText()).toBe(`Confirm the capture of transaction ${to_capture}`);
      const confirmation = await page.locator('main').innerText();
      expect(confirmation).toMatch(/Amount to capture\s+12\.50 USD/);
      expect(confirmation).toMatch(/Authorized amount\s+42\.50 USD/);
      expect(confirmation).toMatch(/Card\s+411111\*{6}1111/);
      expect(confirmation).toMatch(/Customer PIN\s+cust-42/);
      // Nothing has moved before the confirmation.
      expect(await store.authorizations.getAction(to_capture)).toBeNull();
      expect((await store.transactions.get(to_capture))!.status).toBe('authorized');
      await shootPage(browser, page, kind, 'backoffice-capture');
      const action = `/backoffice/transactions/${to_capture}/capture`;
      const confirmed_form = await formFields(page, action);
      expect(confirmed_form).toMatchObject({ amount: '12.50', confirm: 'yes' });

      await page.getByRole('button', { name: 'Confirm capture' }).click();
      await expect.poll(() => page.locator('[role="status"]').innerText()).toContain('Captured.');
      const captured = await page.locator('main').innerText();
      expect(captured).toMatch(/Status\s+approved/);
      expect(captured).toMatch(/Amount\s+12\.50 USD/);
      expect(captured).toMatch(/Captured amount\s+12\.50 USD/);
      expect(captured).toMatch(/By\s+agent operator@example\.com/);
      expect(await page.getByRole('button', { name: 'Capture', exact: true }).count()).toBe(0);
      expect(await store.transactions.get(to_capture)).toMatchObject({ status: 'approved', amount_minor: 1250 });
      await expect.poll(() => notificationsReporting(gw, to_capture, 'approved')).toBe(1);

      // The confirmed form sent a second time (a double click, a reload): the capture is found made.
      const again = await page.request.post(`${gw.url}${action}`, { form: confirmed_form, maxRedirects: 0 });
      expect([again.status(), again.headers().location]).toEqual([303, `/backoffice/transactions/${to_capture}?notice=captured`]);
      // A form without its CSRF token, at the other authorization: refused, nothing moves.
      const forged = await page.request.post(`${gw.url}/backoffice/transactions/${to_void}/void`, {
        form: { amount: '18.00', confirm: 'yes' },
        maxRedirects: 0,
      });
      expect(forged.status()).toBe(403);
      expect(await forged.text()).toContain('This form has expired');
      expect(await store.transactions.get(to_capture)).toMatchObject({ status: 'approved', amount_minor: 1250 });
      expect(await store.authorizations.getAction(to_capture)).toMatchObject({ action: 'capture', amount_minor: 1250, state: 'done' });
      expect(await store.authorizations.getAction(to_void)).toBeNull();
      expect((await store.transactions.get(to_void))!.status).toBe('authorized');
      expect(await notificationsReporting(gw, to_capture, 'approved')).toBe(1);

      await page.getByRole('link', { name: 'Audit log' }).click();
      const audit = await page.locator('main').innerText();
      expect(audit).toMatch(
        new RegExp(
          `capture\\s+${to_capture}\\s+${shop.merchant_id}\\s+done\\s+\\S+\\s+12\\.50 USD: authorization now approved(?! \\(form)`,
        ),
      );
      expect(audit).toContain('12.50 USD: authorization now approved (form sent again: nothing more done)');
    } finally {
      await close();
    }
  });

  it("a merchant's staff member voids another authorization after confirming; another merchant's staff find nothing", async () => {
    const store = gw.gateway.deps.store;
    const outsider = await openSignedIn('other-staff@example.com', 'desktop');
    try {
      await outsider.page.goto(`${gw.url}/backoffice/transactions/${to_void}`);
      expect(await outsider.page.locator('h1').innerText()).toBe('Not found');
      // Their own valid token, at the other merchant's authorization: the same page that does not exist.
      const fields = await formFields(outsider.page, '/backoffice/sign-out');
      for (const step of [{}, { confirm: 'yes' }]) {
        const answer = await outsider.page.request.post(`${gw.url}/backoffice/transactions/${to_void}/void`, {
          form: { ...fields, ...step },
          maxRedirects: 0,
        });
        expect(answer.status()).toBe(404);
        expect(await answer.text()).toContain(`There is nothing here for transaction ${to_void}.`);
      }
      expect((await store.transactions.get(to_void))!.status).toBe('authorized');
    } finally {
      await outsider.close();
    }

    const { page, close } = await openSignedIn('staff@example.com', 'phone');
    try {
      await page.goto(`${gw.url}/backoffice/transactions/${to_void}`);
      await page.getByRole('button', { name: 'Void', exact: true }).click();
      await expect.poll(() => page.locator('h1').innerText()).toBe(`Confirm the void of transaction ${to_void}`);
      const confirmation = await page.locator('main').innerText();
      expect(confirmation).toMatch(/Amount released\s+18\.00 USD/);
      expect(confirmation).toMatch(/Card\s+411111\*{6}1111/);
      expect(confirmation).toMatch(/Customer PIN\s+cust-42/);
      expect((await store.transactions.get(to_void))!.status).toBe('authorized');
      await page.getByRole('button', { name: 'Confirm void' }).click();
      await expect.poll(() => page.locator('[role="status"]').innerText()).toContain('Voided');
      const voided = await page.locator('main').innerText();
      expect(voided).toMatch(/Status\s+cancelled/);
      expect(voided).toMatch(/By\s+agent staff@example\.com/);
      expect((await store.transactions.get(to_void))!.status).toBe('cancelled');
      await expect.poll(() => notificationsReporting(gw, to_void, 'cancelled')).toBe(1);
    } finally {
      await close();
    }
  });

  it('the Disputes view lists the chargeback made with the sandbox trigger, and its transaction shows it', async () => {
    const { page, close } = await openSignedIn('staff@example.com', 'desktop');
    try {
      await page.getByRole('link', { name: 'Disputes' }).click();
      await expect.poll(() => page.locator('h1').innerText()).toBe('Disputes');
      const listed = await page.locator('main').innerText();
      expect(listed).toMatch(new RegExp(`${disputed}\\s+evidence_required\\s+26\\.00 USD`));
      expect(listed).toContain('[TEST] Chargeback made by the sandbox trigger');
      await shootPage(browser, page, kind, 'backoffice-disputes');
      // Closed ones only: none yet.
      await page.getByLabel('Show').selectOption('closed');
      await page.getByRole('button', { name: 'Show' }).click();
      await expect.poll(() => page.locator('main').innerText()).toContain('No dispute is closed.');
      await page.getByLabel('Show').selectOption('open');
      await page.getByRole('button', { name: 'Show' }).click();
      await page.getByRole('link', { name: String(disputed), exact: true }).click();
      await expect.poll(() => page.locator('h1').innerText()).toBe(`Transaction ${disputed}`);
      const transaction = await page.locator('main').innerText();
      expect(transaction).toMatch(/Status\s+chargeback/);
      expect(transaction).toMatch(/Disputes\s+Evidence due \(UTC\)/);
      expect(transaction).toMatch(/evidence_required\s+26\.00 USD/);
    } finally {
      await close();
    }
  });
});
