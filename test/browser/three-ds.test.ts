// The sandbox 3-D Secure page as a customer meets it: in a real Chromium, on each store, against
// a real gateway and a real merchant site (the receiver) to come back to (decisions.md §7, §12).
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TransactionRow } from '../../src/store/schema.js';
import { VISA, saleA } from '../support/bodies.js';
import { launchBrowser, newPage, SCREENSHOT_DIR, type ViewportName } from '../support/browser.js';
import { postJson, postSigned } from '../support/client.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway, type TestGatewayOptions } from '../support/gateway.js';
import { startMerchantReceiver, type MerchantReceiver } from '../support/merchant-receiver.js';
import { ADMIN_DATABASE_URL, createTestDatabase } from '../support/postgres.js';
import type { StoreKind } from '../support/stores.js';
import { storeKinds } from '../support/stores.js';

const MASKED_VISA = '411111******1111';

/** Reads until done() holds, every 50 ms, for at most timeout_ms; then fails naming what it waited for. */
async function pollUntil<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeout_ms = 5000): Promise<T> {
  const deadline = Date.now() + timeout_ms;
  let last = await read();
  while (!done(last)) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeout_ms} ms waiting for ${what}; last: ${JSON.stringify(last)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    last = await read();
  }
  return last;
}

/**
 * startTestGateway, but on PostgreSQL the database is dropped only once the gateway's sessions
 * have left the server. The pg pool's end() resolves before its backends exit, and the store's
 * pool has no 'error' listener, so a `drop database ... with (force)` racing them terminates an
 * idle client and its error becomes an uncaught exception (seen in test/api too).
 */
async function startGateway(kind: StoreKind, options: TestGatewayOptions = {}): Promise<TestGateway> {
  if (kind !== 'postgres') return startTestGateway(kind, options);
  const database = await createTestDatabase();
  const started = await startTestGateway(kind, { ...options, database }).catch(async (error: unknown) => {
    await database.drop();
    throw error;
  });
  const name = new URL(database.url).pathname.slice(1);
  return {
    ...started,
    async close() {
      await started.close();
      const admin = new pg.Client({ connectionString: ADMIN_DATABASE_URL });
      await admin.connect();
      try {
        await pollUntil(
          `the gateway's sessions on ${name} to end`,
          async () => {
            const result = await admin.query<{ n: string }>('select count(*) as n from pg_stat_activity where datname = $1', [name]);
            return Number(result.rows[0]?.n ?? 0);
          },
          (n) => n === 0,
          5000,
        );
      } finally {
        await admin.end();
      }
      await database.drop();
    },
  };
}

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

describe.each(storeKinds())('sandbox 3-D Secure page in Chromium on %s', (kind) => {
  let gw: TestGateway;
  let merchant_site: MerchantReceiver;
  beforeAll(async () => {
    [gw, merchant_site] = await Promise.all([startGateway(kind), startMerchantReceiver()]);
  });
  afterAll(async () => {
    await Promise.all([gw?.close(), merchant_site?.close()]);
  });

  interface Challenge {
    readonly trace_id: number;
    readonly redirect_url: string;
    readonly order_id: string;
    readonly return_url: string;
  }

  /** A customer-initiated sale that the sandbox sends to a challenge page (CVV 333/300, or 588 with 713). */
  async function challengedSale(gateway: TestGateway, overrides: Record<string, unknown>): Promise<Challenge> {
    const body = saleA(gateway.merchant, { notification_url: `${merchant_site.url}/notify`, ...overrides });
    const return_url = `${merchant_site.url}/return?order=${encodeURIComponent(body.order_id as string)}`;
    body.return_url = return_url;
    const answer = await postSigned(gateway.url, '/api/process', body, gateway.merchant.secret);
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'pending_async', error_code: '0' });
    expect(answer.body.redirect_url).toMatch(new RegExp(`^${gateway.url}/sandbox/3ds/[A-Za-z0-9_-]{20,}$`));
    return {
      trace_id: answer.body.trace_id as number,
      redirect_url: answer.body.redirect_url as string,
      order_id: body.order_id as string,
      return_url,
    };
  }

  const transaction = async (gateway: TestGateway, trace_id: number): Promise<TransactionRow> => {
    const row = await gateway.gateway.deps.store.transactions.get(trace_id);
    if (!row) throw new Error(`transaction ${trace_id} not stored`);
    return row;
  };

  const notifiedStatuses = async (gateway: TestGateway, trace_id: number): Promise<Record<string, unknown>[]> =>
    (await gateway.gateway.deps.store.notifications.listOfTransaction(trace_id)).map(
      (n) => JSON.parse(n.payload_json) as Record<string, unknown>,
    );

  const advanceClock = (gateway: TestGateway, seconds: number, authorization: string | null = `Bearer ${ADMIN_TOKEN}`) =>
    postJson(gateway.url, '/sandbox/clock', { advance_seconds: seconds }, authorization === null ? {} : { authorization });

  /** What the customer reads on the page (the visible text of <main>). */
  const visibleText = (page: Page) => page.locator('main').innerText();

  /** Opens the challenge page and checks what the customer is shown: amount, merchant, masked card only. */
  async function openChallenge(page: Page, challenge: Challenge, amount_text: string): Promise<void> {
    const response = await page.goto(challenge.redirect_url);
    expect(response?.status()).toBe(200);
    await page.getByRole('heading', { name: '3-D Secure authentication' }).waitFor();
    const text = await visibleText(page);
    expect(text).toContain(amount_text);
    expect(text).toContain(gw.merchant.merchant_id);
    expect(text).toContain(MASKED_VISA);
    expect(text).toContain(challenge.order_id);
    expect(await page.content()).not.toContain(VISA);
    expect(await page.content()).not.toContain(VISA.slice(6));
  }

  /** Clicks a button and waits for the browser to arrive at the merchant's return page. */
  async function clickAndReturn(page: Page, button: 'Approve' | 'Decline', challenge: Challenge): Promise<void> {
    await Promise.all([page.waitForURL((url) => url.href === challenge.return_url), page.getByRole('button', { name: button }).click()]);
    expect(await page.getByRole('heading').first().innerText()).toBe('Back at the merchant');
    const arrivals = merchant_site.requestsTo('/return', 'GET').filter((r) => r.query.order === challenge.order_id);
    expect(arrivals).toHaveLength(1);
    // The page's URL holds the challenge token: it must not reach the merchant through Referer.
    expect(arrivals[0]!.headers.referer).toBeUndefined();
  }

  it('approve: shows amount, merchant and the masked card, returns to the merchant, approves and notifies', async () => {
    const challenge = await challengedSale(gw, { cvv: '333', amount: 1999, currency: 'USD' });
    const { page, close } = await newPage(browser, 'phone');
    try {
      await openChallenge(page, challenge, '19.99 USD');
      await clickAndReturn(page, 'Approve', challenge);
    } finally {
      await close();
    }
    expect(await transaction(gw, challenge.trace_id)).toMatchObject({ status: 'approved', error_code: '0' });
    const notified = await notifiedStatuses(gw, challenge.trace_id);
    expect(notified).toContainEqual(
      expect.objectContaining({
        transaction_status: 'approved',
        trace_id: challenge.trace_id,
        order_id: challenge.order_id,
        card_number: MASKED_VISA,
      }),
    );
    expect(JSON.stringify(notified)).not.toContain(VISA);
  });

  it('decline: CVV 300, Decline returns to the merchant and rejects', async () => {
    const challenge = await challengedSale(gw, { cvv: '300', amount: 4250, currency: 'EUR' });
    const { page, close } = await newPage(browser, 'desktop');
    try {
      await openChallenge(page, challenge, '42.50 EUR');
      await clickAndReturn(page, 'Decline', challenge);
    } finally {
      await close();
    }
    const row = await transaction(gw, challenge.trace_id);
    expect(row).toMatchObject({ status: 'rejected', error_code: '1' });
    expect(row.error_details).toMatch(/^\[TEST\] Declined/);
    expect(await notifiedStatuses(gw, challenge.trace_id)).toContainEqual(expect.objectContaining({ transaction_status: 'rejected' }));
  });

  it('works without JavaScript: the plain form approves', async () => {
    const challenge = await challengedSale(gw, { cvv: '333' });
    const { page, close } = await newPage(browser, 'phone', { javaScriptEnabled: false });
    try {
      await openChallenge(page, challenge, '19.99 USD');
      expect(await page.locator('script').count()).toBe(0);
      await clickAndReturn(page, 'Approve', challenge);
    } finally {
      await close();
    }
    expect(await transaction(gw, challenge.trace_id)).toMatchObject({ status: 'approved' });
  });

  it('time-out: no answer within 15 minutes (sandbox clock +901 s) rejects it; the page closes and a late Approve changes nothing', async () => {
    // Its own gateway: moving the clock would put every later request's timestamp out of the window.
    const clock_gw = await startGateway(kind);
    const { context, page, close } = await newPage(browser, 'desktop');
    try {
      const challenge = await challengedSale(clock_gw, { cvv: '333' });
      await page.goto(challenge.redirect_url);
      await page.getByRole('button', { name: 'Approve' }).waitFor();
      // A second tab left open on the same page: the customer comes back to it too late.
      const stale = await context.newPage();
      await stale.goto(challenge.redirect_url);
      await stale.getByRole('button', { name: 'Approve' }).waitFor();

      const moved = await advanceClock(clock_gw, 901);
      expect(moved.http_status).toBe(200);
      expect(moved.body.now).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000) + 900);
      const row = await pollUntil(
        'the due worker to time the challenge out',
        () => transaction(clock_gw, challenge.trace_id),
        (r) => r.status !== 'pending_async',
        5000,
      );
      expect(row).toMatchObject({ status: 'rejected', error_code: '1' });
      expect(row.error_details).toContain('Transaction timed out');

      const reloaded = await page.reload();
      expect(reloaded?.status()).toBe(200);
      expect(await page.getByRole('button', { name: 'Approve' }).count()).toBe(0);
      expect(await page.getByRole('button', { name: 'Decline' }).count()).toBe(0);
      expect(await visibleText(page)).toMatch(/authentication is closed.*rejected/s);

      await Promise.all([
        stale.waitForURL((url) => url.href === challenge.return_url),
        stale.getByRole('button', { name: 'Approve' }).click(),
      ]);
      const late_post = await fetch(challenge.redirect_url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'action=approve',
        redirect: 'manual',
      });
      expect(late_post.status).toBe(303);
      expect(late_post.headers.get('location')).toBe(challenge.return_url);
      expect(await transaction(clock_gw, challenge.trace_id)).toMatchObject({ status: 'rejected', error_details: row.error_details });
      // The one final status notified is the time-out's rejection; the late clicks added none.
      const finals = (await notifiedStatuses(clock_gw, challenge.trace_id)).filter((n) => n.transaction_status !== 'pending_async');
      expect(finals).toEqual([expect.objectContaining({ transaction_status: 'rejected', error_details: row.error_details })]);
    } finally {
      await close();
      await clock_gw.close();
    }
  });

  it('CVV 588 with amount 713: no buttons while waiting for the issuer, then rejected as timed out', async () => {
    const issuer_gw = await startGateway(kind, { env: { PAYGATE_SANDBOX_ISSUER_TIMEOUT_SECONDS: '3' } });
    const { page, close } = await newPage(browser, 'phone');
    try {
      const challenge = await challengedSale(issuer_gw, { cvv: '588', amount: 713 });
      const response = await page.goto(challenge.redirect_url);
      expect(response?.status()).toBe(200);
      expect(await visibleText(page)).toContain('Waiting for the card issuer');
      expect(await visibleText(page)).toContain('7.13 USD');
      expect(await page.getByRole('button').count()).toBe(0);
      expect(await page.locator('form').count()).toBe(0);
      // Posting an answer by hand while waiting changes nothing either.
      const forced = await fetch(challenge.redirect_url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'action=approve',
        redirect: 'manual',
      });
      expect(forced.status).toBe(303);
      expect(await transaction(issuer_gw, challenge.trace_id)).toMatchObject({ status: 'pending_async' });

      const row = await pollUntil(
        'the issuer time-out',
        () => transaction(issuer_gw, challenge.trace_id),
        (r) => r.status !== 'pending_async',
        10_000,
      );
      expect(row).toMatchObject({ status: 'rejected', error_code: '1' });
      expect(row.error_details).toContain('Transaction timed out');
      await page.reload();
      expect(await visibleText(page)).toMatch(/authentication is closed.*rejected/s);
      expect(await notifiedStatuses(issuer_gw, challenge.trace_id)).toContainEqual(
        expect.objectContaining({ transaction_status: 'rejected' }),
      );
    } finally {
      await close();
      await issuer_gw.close();
    }
  });

  it('the sandbox clock refuses a missing or wrong admin token with 401 and does not move', async () => {
    const before = await gw.gateway.deps.store.sandboxClock.getOffset();
    for (const authorization of [null, 'Bearer wrong-token', `Bearer ${ADMIN_TOKEN}x`, ADMIN_TOKEN, `Basic ${ADMIN_TOKEN}`, 'Bearer ']) {
      const answer = await advanceClock(gw, 901, authorization);
      expect(answer.http_status, String(authorization)).toBe(401);
    }
    expect(await gw.gateway.deps.store.sandboxClock.getOffset()).toBe(before);
    expect(gw.gateway.clock.get_offset_ms()).toBe(before);
  });

  it('an unknown token answers 404 with a readable page', async () => {
    const { page, close } = await newPage(browser, 'phone');
    try {
      const response = await page.goto(`${gw.url}/sandbox/3ds/no-such-token-${Date.now()}`);
      expect(response?.status()).toBe(404);
      expect(response?.headers()['content-type']).toMatch(/^text\/html/);
      expect(await page.getByRole('heading').innerText()).toBe('Link not valid');
      expect(await visibleText(page)).toContain('This payment link is unknown or no longer valid.');
      expect(await page.getByRole('button').count()).toBe(0);
    } finally {
      await close();
    }
    const posted = await fetch(`${gw.url}/sandbox/3ds/no-such-token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'action=approve',
    });
    expect(posted.status).toBe(404);
    expect(await posted.text()).toContain('Link not valid');
  });

  it.each<ViewportName>(['phone', 'desktop'])(
    'fits a %s screen: no sideways scrolling, both buttons visible and large enough',
    async (viewport) => {
      const challenge = await challengedSale(gw, { cvv: '333' });
      const { page, close } = await newPage(browser, viewport);
      try {
        await openChallenge(page, challenge, '19.99 USD');
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        expect(overflow).toBeLessThanOrEqual(0);
        const height = page.viewportSize()!.height;
        for (const name of ['Approve', 'Decline']) {
          const box = await page.getByRole('button', { name }).boundingBox();
          expect(box, name).not.toBeNull();
          expect(box!.height, name).toBeGreaterThanOrEqual(44);
          expect(box!.y + box!.height, `${name} above the fold`).toBeLessThanOrEqual(height);
        }
        // One copy of the screenshots, from the SQLite run.
        if (kind === 'sqlite') {
          fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
          const file = path.join(SCREENSHOT_DIR, `3ds-${viewport}.png`);
          await page.screenshot({ path: file, fullPage: true });
          expect(fs.statSync(file).size).toBeGreaterThan(1000);
        }
      } finally {
        await close();
      }
      expect(await transaction(gw, challenge.trace_id)).toMatchObject({ status: 'pending_async' });
    },
  );
});
