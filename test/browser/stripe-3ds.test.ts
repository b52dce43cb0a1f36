// Stripe's own 3-D Secure, as a customer meets it in a real Chromium (issue 17): a live sale
// through the `stripe` gateway is answered pending_async with a redirect_url to Stripe's page (the
// fake's test page, on 127.0.0.1); the customer completes the authentication (approved) or fails
// it (declined). Stripe sends them back to the gateway, which asks Stripe for the PaymentIntent,
// records the outcome with its notification, and sends them on to the merchant's return_url. On
// both stores, at a phone's and a desktop's width.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { saleA } from '../support/bodies.js';
import { launchBrowser, newPage, type ViewportName } from '../support/browser.js';
import { type LiveStripe, liveSale, startLiveStripe } from '../support/live-stripe.js';
import { withLiveGateway } from '../support/live-gateway.js';
import { storeKinds } from '../support/stores.js';

/** Stripe's test card that always asks for 3-D Secure. */
const THREE_DS = '4000000000003220';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

describe.each(storeKinds())('Stripe 3-D Secure in Chromium on %s', (kind) => {
  let live: LiveStripe;
  withLiveGateway(
    () => startLiveStripe(kind),
    (started) => (live = started),
  );

  async function challengedSale(amount: number) {
    const body = liveSale(live, saleA(live.merchant, { gateway: live.gateway, card_number: THREE_DS, amount }));
    body.return_url = `${live.receiver.url}/return?order=${encodeURIComponent(body.order_id as string)}`;
    const answer = await live.process(body);
    expect(answer.body).toMatchObject({
      status: 0,
      transaction_status: 'pending_async',
      transaction_id: expect.stringMatching(/^pi_/),
      redirect_url: expect.stringMatching(new RegExp(`^${live.fake.url}/3d_secure_2_test/`)),
    });
    return { answer: answer.body, trace_id: answer.body.trace_id as number, return_url: body.return_url as string };
  }

  async function authenticate(
    viewport: ViewportName,
    redirect_url: string,
    return_url: string,
    button: 'Complete authentication' | 'Fail authentication',
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

  it('completed by the customer on a phone: back at the merchant, the sale approved and notified', async () => {
    // Stripe's webhooks held back: the outcome can only come from asking Stripe when the customer is back.
    live.fake.holdEvents(true);
    const sale = await challengedSale(5100);
    expect(await authenticate('phone', sale.answer.redirect_url as string, sale.return_url, 'Complete authentication')).toBe(
      'Back at the merchant',
    );
    expect(await live.row(sale.trace_id)).toMatchObject({ status: 'approved', psp_transaction_id: sale.answer.transaction_id });
    expect(await live.settled(sale.trace_id, 'approved')).toMatchObject({ transaction_id: sale.answer.transaction_id, amount: 5100 });
    expect(live.fake.paymentIntent(sale.answer.transaction_id as string)).toMatchObject({ status: 'succeeded', three_ds: 'succeeded' });
    const sent = live.fake
      .requestsTo('POST /v1/payment_intents')
      .find((r) => r.idempotency_key === `paygate-${live.gateway}-${sale.trace_id}-sale`)!;
    expect(sent.form.return_url).toMatch(new RegExp(`^${live.gw.url}/return/${sale.trace_id}/[0-9a-f]{32}\\?outcome=success$`));
  });

  it("failed by the customer on a desktop: back at the merchant, the sale rejected with Stripe's code and notified", async () => {
    live.fake.holdEvents(true);
    const sale = await challengedSale(5200);
    expect(await authenticate('desktop', sale.answer.redirect_url as string, sale.return_url, 'Fail authentication')).toBe(
      'Back at the merchant',
    );
    expect(await live.row(sale.trace_id)).toMatchObject({ status: 'rejected', error_code: 'payment_intent_authentication_failure' });
    expect(await live.settled(sale.trace_id, 'rejected')).toMatchObject({ error_code: 'payment_intent_authentication_failure' });
  });
});
