// Adyen's 3-D Secure, as a customer meets it in a real Chromium (issue 27): a live sale through
// the `adyen` gateway with Adyen's test card 4917610000000000 is answered pending_async with a
// redirect_url to Adyen's page (the fake's, on 127.0.0.1); the customer approves (or fails) it,
// Adyen sends them back to the gateway with a redirectResult, the gateway completes the payment
// with /payments/details, records the outcome with one notification, and sends them on to the
// merchant's return_url. On both stores, at a phone's and a desktop's width.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { saleA } from '../support/bodies.js';
import { launchBrowser, newPage, type ViewportName } from '../support/browser.js';
import { type LiveAdyen, liveSale, startLiveAdyen, TEST_CARD_CVCS, THREEDS_CARD } from '../support/live-adyen.js';
import { withLiveGateway } from '../support/live-gateway.js';
import { waitUntil } from '../support/notification-merchant.js';
import { storeKinds } from '../support/stores.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

describe.each(storeKinds())('Adyen 3-D Secure in Chromium on %s', (kind) => {
  let live: LiveAdyen;
  withLiveGateway(
    () => startLiveAdyen(kind),
    (started) => (live = started),
  );

  /** A sale sent to Adyen's 3-D Secure page; its return_url names the order. */
  async function challengedSale(amount: number) {
    const body = liveSale(
      live,
      saleA(live.merchant, { gateway: live.gateway, card_number: THREEDS_CARD, cvv: TEST_CARD_CVCS[THREEDS_CARD], amount }),
    );
    body.return_url = `${live.receiver.url}/return?order=${encodeURIComponent(body.order_id as string)}`;
    const answer = await live.process(body);
    expect(answer.body).toMatchObject({
      status: 0,
      transaction_status: 'pending_async',
      error_code: '0',
      error_details: '3-D Secure authentication required',
      payment_processor: 'adyen',
      redirect_url: expect.stringMatching(new RegExp(`^${live.fake.url}/threeds/`)),
    });
    const trace_id = answer.body.trace_id as number;
    // Nothing is decided until the customer is back: no final notification yet (pending_async may be notified).
    expect(live.notifications(trace_id).filter((n) => n.transaction_status !== 'pending_async')).toEqual([]);
    // Adyen sends the customer back to the gateway's way back, never straight to the merchant.
    const sent = live.fake.requestsTo('payments').find((r) => r.body.includes(body.order_id as string))!;
    expect((JSON.parse(sent.body) as { returnUrl: string }).returnUrl).toMatch(
      new RegExp(`^${live.gw.url}/return/${trace_id}/[0-9a-f]{32}\\?outcome=success$`),
    );
    return { answer: answer.body, trace_id, return_url: body.return_url as string };
  }

  /** The customer on Adyen's page presses Approve or Fail and lands back at the merchant; the heading they see. */
  async function authenticate(
    viewport: ViewportName,
    redirect_url: string,
    return_url: string,
    button: 'Approve' | 'Fail',
  ): Promise<string> {
    const opened = await newPage(browser, viewport);
    try {
      const { page } = opened;
      await page.goto(redirect_url);
      await Promise.all([page.waitForURL((url) => url.href === return_url), page.getByRole('button', { name: button }).click()]);
      return await page.getByRole('heading').first().innerText();
    } finally {
      await opened.close();
    }
  }

  const delivered = (trace_id: number) =>
    waitUntil(
      async () => (await live.gw.gateway.deps.store.notifications.listOfTransaction(trace_id)).every((n) => n.state === 'delivered'),
      `notifications of ${trace_id} delivered`,
    );

  it('approved by the customer on a phone: back at the merchant, the sale approved and notified once', async () => {
    const sale = await challengedSale(4100);
    expect(await authenticate('phone', sale.answer.redirect_url as string, sale.return_url, 'Approve')).toBe('Back at the merchant');
    // Recorded before the customer reached the merchant: the gateway asked Adyen (/payments/details) on the way.
    expect(await live.row(sale.trace_id)).toMatchObject({ status: 'approved', psp_transaction_id: sale.answer.transaction_id });
    expect(live.fake.requestsTo('payments/details').length).toBeGreaterThan(0);
    expect(await live.settled(sale.trace_id, 'approved')).toMatchObject({ transaction_id: sale.answer.transaction_id, amount: 4100 });
    expect(live.fake.payment(sale.answer.transaction_id as string)).toMatchObject({ status: 'authorised', captured_minor: 4100 });
    // Adyen's AUTHORISATION notification confirms what is recorded: still one notification.
    await live.fake.waitForEvent((e) => e.eventCode === 'AUTHORISATION' && e.pspReference === sale.answer.transaction_id);
    await delivered(sale.trace_id);
    // Besides the notification of pending_async the gateway sends with every such answer: the outcome, once.
    expect(
      live
        .notifications(sale.trace_id)
        .map((n) => n.transaction_status)
        .sort(),
    ).toEqual(['approved', 'pending_async'].sort());
  });

  it('failed by the customer on a desktop: back at the merchant, the sale rejected and notified once', async () => {
    const sale = await challengedSale(4200);
    expect(await authenticate('desktop', sale.answer.redirect_url as string, sale.return_url, 'Fail')).toBe('Back at the merchant');
    expect(await live.row(sale.trace_id)).toMatchObject({ status: 'rejected' });
    expect(await live.settled(sale.trace_id, 'rejected')).toMatchObject({ transaction_id: sale.answer.transaction_id });
    await live.fake.waitForEvent((e) => e.eventCode === 'AUTHORISATION' && e.pspReference === sale.answer.transaction_id);
    await delivered(sale.trace_id);
    // Besides the notification of pending_async the gateway sends with every such answer: the outcome, once.
    expect(
      live
        .notifications(sale.trace_id)
        .map((n) => n.transaction_status)
        .sort(),
    ).toEqual(['rejected', 'pending_async'].sort());
  });
});
