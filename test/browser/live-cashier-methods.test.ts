// The hosted cashier offers what the merchant's gateways can do (issue 27, item 3), in a real
// Chromium, live, on each store: a merchant with a `paypal` gateway and an `adyen` gateway, both
// pointed at their fakes on 127.0.0.1. A withdrawal offers PayPal and a bank account (no card:
// neither connector makes card payouts); paid to a PayPal e-mail it is one PayPal payout item,
// pending until PayPal's SUCCESS, then approved; paid to an IBAN typed with spaces it is one
// Adyen payout, submitted and confirmed (pending), then paid by PAYOUT_THIRDPARTY; an IBAN whose
// check digits fail is refused in the form, before anything is sent. A deposit offers cards (Adyen)
// next to PayPal. Each payout ends approved with one signed notification at the merchant's site.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAdyen, type FakeAdyen } from '../support/adyen/fake.js';
import { newPage } from '../support/browser.js';
import { initPayIn, initPayOut, openSession } from '../support/cashier.js';
import { visibleText, withChromium } from '../support/cashier-browser.js';
import { operatorCall } from '../support/live-gateway.js';
import { type LivePayPal, startLivePayPal } from '../support/live-paypal.js';
import { signedReply, waitUntil } from '../support/notification-merchant.js';
import { direct, without } from '../support/payout-bodies.js';
import { storeKinds } from '../support/stores.js';

let browser: Browser;
withChromium((launched) => (browser = launched));

describe.each(storeKinds())('the live cashier offers PayPal and bank accounts, in Chromium on %s', (kind) => {
  let live: LivePayPal;
  let adyen: FakeAdyen;
  let adyen_gateway: string;
  beforeAll(async () => {
    live = await startLivePayPal(kind);
    adyen = await startFakeAdyen();
    const created = await operatorCall(live.gw, 'POST', '/operator/gateways', {
      merchant_id: live.merchant.merchant_id,
      connector: 'adyen',
      currencies: ['EUR', 'USD'],
      settings: {
        api_key: adyen.api_key,
        merchant_account: adyen.merchant_account,
        hmac_key: adyen.hmac_key,
        payout_api_key: adyen.payout_api_key,
        payout_reviewer_api_key: adyen.payout_reviewer_api_key,
        base_url: adyen.url,
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    adyen_gateway = created.body.gateway as string;
    adyen.setWebhookUrl(created.body.webhook_url as string);
    live.receiver.setReply('/validate', () => signedReply(live.merchant.secret, 0, 'Accepted'));
  }, 60_000);
  afterAll(async () => {
    await live?.close();
    await adyen?.close();
  });

  const deliveredOnce = async (trace_id: number, status: string) => {
    await waitUntil(
      async () => (await live.gw.gateway.deps.store.notifications.listOfTransaction(trace_id)).every((n) => n.state === 'delivered'),
      'delivered',
    );
    expect(live.notifications(trace_id).filter((n) => n.transaction_status === status)).toHaveLength(1);
  };

  /** Opens a withdrawal session in EUR and chooses `method` on its choice page. */
  async function withdrawal(page: Page, method: 'PayPal' | 'Bank account'): Promise<void> {
    const body = initPayOut(live.merchant, live.receiver.url, { currency: 'EUR', balance: 50_000 });
    const opened = await openSession(live.gw, '/api/init-pay-out', body, live.merchant);
    expect(opened.body, JSON.stringify(opened.body)).toMatchObject({ status: 0 });
    await page.goto(opened.body.redirect_url as string);
    await page.getByRole('heading', { name: 'How do you want to receive the money?' }).waitFor();
    const buttons = await page.locator('button.method').allInnerTexts();
    expect(buttons.map((b) => b.split('\n')[0]!.trim())).toEqual(['PayPal', 'Bank account']);
    await page.getByRole('button', { name: new RegExp(`^${method}`) }).click();
    await page.getByRole('heading', { name: method }).waitFor();
  }

  /** The session's payout, once the cashier shows its result. */
  async function payoutOfPage(page: Page) {
    await page.waitForURL((url) => url.pathname.startsWith('/cashier/attempt/'));
    const rows = await live.gw.gateway.deps.store.transactions.search(
      { merchant_id: live.merchant.merchant_id, transaction_type: 'payout' },
      null,
      10,
    );
    return rows[0]!;
  }

  it('a withdrawal to a PayPal account: one payout item to the typed e-mail, pending, then approved by SUCCESS, notified once', async () => {
    const { page, close } = await newPage(browser, 'phone');
    try {
      await withdrawal(page, 'PayPal');
      await page.getByLabel('Amount (EUR)').fill('40.00');
      await page.getByLabel('PayPal e-mail').fill('not-an-address');
      await page.getByRole('button', { name: 'Withdraw' }).click();
      await page.getByText('Enter an e-mail address such as name@example.com.').waitFor();
      await page.getByLabel('PayPal e-mail').fill('payee@example.com');
      await page.getByRole('button', { name: 'Withdraw' }).click();
      const row = await payoutOfPage(page);
      expect(row).toMatchObject({ amount_minor: 4000, currency: 'EUR', gateway_id: live.gateway, status: 'pending' });
      const items = live.fake.payoutItemsOf(row.psp_transaction_id!);
      expect(items).toHaveLength(1);
      expect(items[0]).toMatchObject({ receiver: 'payee@example.com', recipient_type: 'EMAIL' });
      expect(await visibleText(page)).toContain('40.00 EUR');
      await live.fake.settlePayoutItem(items[0]!.payout_item_id, 'SUCCESS');
      expect(await live.settled(row.trace_id, 'approved')).toMatchObject({ amount: 4000, transaction_type: 'payout' });
      await deliveredOnce(row.trace_id, 'approved');
    } finally {
      await close();
    }
  });

  it('a withdrawal to a bank account: the IBAN checked in the form, then one Adyen payout, confirmed, paid, notified once', async () => {
    const { page, close } = await newPage(browser, 'desktop');
    try {
      await withdrawal(page, 'Bank account');
      await page.getByLabel('Amount (EUR)').fill('55.50');
      // Check digits that do not verify: refused in the form, nothing sent to Adyen.
      await page.getByLabel('IBAN').fill('NL92 ABNA 0417 1643 00');
      await page.getByLabel('Account holder').fill('Jane Doe');
      const submitted_before = adyen.requestsTo('storeDetailAndSubmitThirdParty').length;
      await page.getByRole('button', { name: 'Withdraw' }).click();
      await page.getByText('This IBAN is not valid: check the letters and digits.').waitFor();
      expect(adyen.requestsTo('storeDetailAndSubmitThirdParty')).toHaveLength(submitted_before);
      await page.getByLabel('IBAN').fill('nl91 abna 0417 1643 00');
      await page.getByRole('button', { name: 'Withdraw' }).click();
      const row = await payoutOfPage(page);
      expect(row).toMatchObject({ amount_minor: 5550, currency: 'EUR', gateway_id: adyen_gateway, status: 'pending' });
      const payout = adyen.payout(row.psp_transaction_id!);
      expect(payout).toMatchObject({ iban: 'NL91ABNA0417164300', amount_minor: 5550, currency: 'EUR', status: 'confirmed' });
      const sent = JSON.parse(adyen.requestsTo('storeDetailAndSubmitThirdParty').at(-1)!.body) as Record<string, unknown>;
      // The holder's e-mail and date of birth, which Adyen requires, from what the cashier knows of the customer.
      expect(sent).toMatchObject({
        shopperEmail: 'jane@example.com',
        dateOfBirth: '1990-04-12',
        bank: { ownerName: 'Jane Doe', countryCode: 'NL' },
      });
      await adyen.settlePayout(row.psp_transaction_id!, 'paid');
      expect(await live.settled(row.trace_id, 'approved')).toMatchObject({ amount: 5550, transaction_type: 'payout' });
      await deliveredOnce(row.trace_id, 'approved');
    } finally {
      await close();
    }
  });

  it('a deposit offers a card (Adyen takes cards) next to PayPal', async () => {
    const { page, close } = await newPage(browser, 'desktop');
    try {
      const body = initPayIn(live.merchant, live.receiver.url, { currency: 'EUR', payment_method: undefined });
      const opened = await openSession(live.gw, '/api/init-pay-in', body, live.merchant);
      expect(opened.body, JSON.stringify(opened.body)).toMatchObject({ status: 0 });
      await page.goto(opened.body.redirect_url as string);
      await page.getByRole('heading', { name: 'Choose a payment method' }).waitFor();
      const buttons = await page.locator('button.method').allInnerTexts();
      expect(buttons.map((b) => b.split('\n')[0]!.trim())).toEqual(['Card', 'PayPal']);
    } finally {
      await close();
    }
  });

  it('a direct payout by the API that names no gateway goes to the gateway that pays its kind of payee, whichever comes first', async () => {
    const shop = { notification_url: `${live.receiver.url}/notify`, return_url: `${live.receiver.url}/return` };
    const to_paypal = without(
      direct(live.merchant, {
        gateway: undefined,
        amount: 1200,
        data_recipient_type: 'EMAIL',
        data_receiver: 'api-payee@example.com',
        ...shop,
      }),
      'gateway',
      'data_account_number',
      'data_bank_code',
    );
    const paid = await live.process(to_paypal, '/api/direct');
    expect(paid.body, JSON.stringify(paid.body)).toMatchObject({ status: 0, payment_processor: 'paypal', payment_method: 'paypal' });
    const to_bank = without(
      direct(live.merchant, {
        gateway: undefined,
        amount: 1300,
        data_iban: 'NL91ABNA0417164300',
        data_owner_name: 'Ada Lovelace',
        data_country_code: 'NL',
        data_email: 'ada@example.com',
        data_date_of_birth: '1990-12-10',
        ...shop,
      }),
      'gateway',
      'data_account_number',
      'data_bank_code',
    );
    const banked = await live.process(to_bank, '/api/direct');
    expect(banked.body, JSON.stringify(banked.body)).toMatchObject({ status: 0, payment_processor: 'adyen' });
    // Named, a gateway that does not pay this kind of payee is refused with status 15, naming what it lacks.
    const named = await live.process(
      { ...to_paypal, order_id: `${String(to_paypal.order_id)}-named`, gateway: adyen_gateway },
      '/api/direct',
    );
    expect(named.body).toMatchObject({ status: 15 });
    expect(named.body.description).toMatch(/payouts to PayPal accounts/);
  });
});
