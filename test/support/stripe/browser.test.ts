// The fake Stripe's 3-D Secure test page as a person meets it, in a real Chromium (Debian's, via
// playwright-core): a PaymentIntent asked to authenticate points next_action.redirect_to_url.url
// at the page; the person sees the amount and the two buttons Stripe's test page has, "Complete
// authentication" and "Fail authentication", clicks one, and lands on the return_url with
// payment_intent, payment_intent_client_secret and redirect_status added, while the PaymentIntent
// becomes succeeded, or requires_payment_method with payment_intent_authentication_failure.
import fs from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, newPage, SCREENSHOT_DIR, type ViewportName } from '../browser.js';
import { startMerchantReceiver, type MerchantReceiver } from '../merchant-receiver.js';
import { startFakeStripe, type FakeStripe } from './fake.js';

let browser: Browser;
let fake: FakeStripe;
let receiver: MerchantReceiver;

/** A sale of 4000 0000 0000 3220 (3-D Secure required) with a return_url at the merchant. */
async function challenged(order: string): Promise<{ id: string; client_secret: string; page: string; return_url: string }> {
  const return_url = `${receiver.url}/return?order=${order}`;
  const response = await fetch(`${fake.url}/v1/payment_intents`, {
    method: 'POST',
    headers: { authorization: `Bearer ${fake.secret_key}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      amount: '4250',
      currency: 'eur',
      confirm: 'true',
      'payment_method_types[0]': 'card',
      'payment_method_data[type]': 'card',
      'payment_method_data[card][number]': '4000000000003220',
      'payment_method_data[card][exp_month]': '12',
      'payment_method_data[card][exp_year]': '2030',
      'payment_method_data[card][cvc]': '123',
      'metadata[paygate_trace_id]': order,
      return_url,
    }).toString(),
    signal: AbortSignal.timeout(5000),
  });
  const json = (await response.json()) as any;
  expect(json.status).toBe('requires_action');
  return { id: json.id, client_secret: json.client_secret, page: json.next_action.redirect_to_url.url, return_url };
}

async function choose(
  viewport: ViewportName,
  page_url: string,
  button: 'Complete authentication' | 'Fail authentication',
  screenshot: string,
): Promise<{ url: URL; heading: string }> {
  const opened = await newPage(browser, viewport);
  try {
    const { page } = opened;
    await page.goto(page_url);
    await expect(page.getByRole('heading', { name: '3D Secure 2 Test Page' }).isVisible()).resolves.toBe(true);
    await expect(page.getByText('42.50 EUR').isVisible()).resolves.toBe(true);
    await expect(page.getByRole('button', { name: 'Complete authentication' }).isVisible()).resolves.toBe(true);
    await expect(page.getByRole('button', { name: 'Fail authentication' }).isVisible()).resolves.toBe(true);
    fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, screenshot) });
    await Promise.all([page.waitForURL((url) => url.pathname === '/return'), page.getByRole('button', { name: button }).click()]);
    return { url: new URL(page.url()), heading: await page.getByRole('heading').first().innerText() };
  } finally {
    await opened.close();
  }
}

describe("the fake Stripe's 3-D Secure page in Chromium", () => {
  beforeAll(async () => {
    browser = await launchBrowser();
    receiver = await startMerchantReceiver();
    fake = await startFakeStripe();
  });
  afterAll(async () => {
    await browser?.close();
    await fake?.close();
    await receiver?.close();
  });
  afterEach(() => {
    const seen = [...fake.violations];
    fake.clearViolations();
    expect(seen).toEqual([]);
  });

  it('"Complete authentication" (phone width) succeeds and returns to the merchant with redirect_status=succeeded', async () => {
    const intent = await challenged('9001');
    const { url, heading } = await choose('phone', intent.page, 'Complete authentication', 'stripe-3ds-test-page-phone.png');
    expect(heading).toBe('Back at the merchant');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      order: '9001',
      payment_intent: intent.id,
      payment_intent_client_secret: intent.client_secret,
      redirect_status: 'succeeded',
    });
    expect(fake.paymentIntent(intent.id)).toMatchObject({ status: 'succeeded', three_ds: 'succeeded' });
    await fake.waitForEvent((e) => e.payment_intent_id === intent.id && e.type === 'payment_intent.succeeded');
  });

  it('"Fail authentication" (desktop width) returns with redirect_status=failed; the PaymentIntent needs another payment method', async () => {
    const intent = await challenged('9002');
    const { url } = await choose('desktop', intent.page, 'Fail authentication', 'stripe-3ds-test-page-desktop.png');
    expect(url.searchParams.get('redirect_status')).toBe('failed');
    expect(fake.paymentIntent(intent.id)).toMatchObject({
      status: 'requires_payment_method',
      three_ds: 'failed',
      last_error: { code: 'payment_intent_authentication_failure', decline_code: null },
    });
    await fake.waitForEvent((e) => e.payment_intent_id === intent.id && e.type === 'payment_intent.payment_failed');
  });
});
