// The back office over real HTTP on both stores (decisions.md §14, docs/backoffice.md): sign-in
// and its lock-out, CSRF on every form, the audit log, the access matrix (every URL as each role
// and as another merchant: zero leaks), refunds, the search with its keyset pages, the CSV
// export, the sessions' idle time-out and 8-hour limit (on the sandbox clock, no sleeping), and
// the processor webhook events on a transaction's page and a gateway's (real webhooks from the
// fake Checkout.com, and signed ones of payments the gateway never made).
// Chromium drives the same pages in test/browser/backoffice.test.ts.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../../src/domain/merchants.js';
import { backOfficeRoutes } from '../../src/http/backoffice/routes.js';
import { gatewaySettingsPurpose } from '../../src/connectors/registry.js';
import { signInRoutes } from '../../src/http/backoffice/sign-in.js';
import { ADMIN_TOKEN, startTestGateway, startTwoInstances, type TestGateway, type TwoInstances } from '../support/gateway.js';
import { storeKinds } from '../support/stores.js';
import { postSigned, nowSeconds } from '../support/client.js';
import { payoutE } from '../support/payout-bodies.js';
import { saleA, VISA } from '../support/bodies.js';
import { addUser, advanceClock, BackOfficeClient, PASSWORD, pageText, sale, sameUtcDay } from '../support/backoffice.js';
import { startMerchantReceiver } from '../support/merchant-receiver.js';
import { createPlanVia, subscribeVia, tokenize, useClock } from '../support/v13.js';
import { merchantVerify, notificationOf, signedReply, waitUntil } from '../support/notification-merchant.js';
import { checkoutSignature } from '../support/checkout/fake.js';
import { CHECKOUT_WEBHOOK_SECRET, type LiveCheckout, liveSale, startLiveCheckout } from '../support/live-checkout.js';
import { withLiveGateway } from '../support/live-gateway.js';
import { iso } from '../../src/pages/backoffice/format.js';
import type { ProcessorEventRow } from '../../src/store/schema.js';
import { CLI_ENTRY } from '../support/build.js';

/** The session's last use as its row holds it (gateway clock); null once the row is gone. */
async function lastSeenOf(gw: TestGateway, client: BackOfficeClient): Promise<number | null> {
  // The cookie is the session id signed (id.signature); the row is kept by the id's sha256.
  const signed = decodeURIComponent(client.cookie('paygate_bo_session') ?? '');
  const session_hash = createHash('sha256')
    .update(signed.slice(0, signed.lastIndexOf('.')))
    .digest('hex');
  const row = await gw.gateway.deps.store.backoffice.getSession(session_hash, gw.gateway.deps.clock.now_ms());
  return row?.last_seen_at_ms ?? null;
}

describe('paygate user create', () => {
  it('prints the user as JSON, refuses a short password and an existing e-mail, and changes nothing then', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-bo-cli-'));
    const run = (args: string[]) =>
      spawnSync(process.execPath, [CLI_ENTRY, ...args], {
        env: { ...process.env, PAYGATE_DATA_DIR: dir },
        encoding: 'utf8',
        timeout: 30_000,
      });
    try {
      const created = run(['user', 'create', '--email', 'Ops@Example.com', '--password', PASSWORD, '--role', 'operator']);
      expect(created.status, created.stderr).toBe(0);
      expect(JSON.parse(created.stdout)).toMatchObject({ email: 'ops@example.com', role: 'operator', merchant_id: null });
      const short = run(['user', 'create', '--email', 'b@example.com', '--password', '11-chars-xx', '--role', 'operator']);
      expect(short.status).toBe(2);
      expect(short.stderr).toMatch(/--password must be at least 12 characters/);
      const again = run(['user', 'create', '--email', 'ops@example.com', '--password', PASSWORD, '--role', 'operator']);
      expect(again.status).toBe(1);
      const no_merchant = run([
        'user',
        'create',
        '--email',
        'm@example.com',
        '--password',
        PASSWORD,
        '--role',
        'merchant',
        '--merchant-id',
        'nobody',
      ]);
      expect(no_merchant.status).toBe(1);
      expect(no_merchant.stderr).toMatch(/--merchant-id names no merchant/);
      const without_merchant = run(['user', 'create', '--email', 'm@example.com', '--password', PASSWORD, '--role', 'merchant']);
      expect(without_merchant.status).toBe(2);
      expect(without_merchant.stderr).toMatch(/--merchant-id/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('back-office sign-in rate per address', () => {
  it('answers 429 with Retry-After past the limit, whatever the e-mail, before any password is checked', async () => {
    const gw = await startTestGateway('sqlite', { env: { PAYGATE_RATE_LIMIT_SIGN_IN_PER_MINUTE: '3' } });
    try {
      await addUser(gw, 'rate@example.com', 'operator');
      const client = new BackOfficeClient(gw.url);
      for (const email of ['a@example.com', 'b@example.com', 'c@example.com'])
        expect((await client.signIn(email, 'wrong password here')).status).toBe(401);
      const limited = await client.signIn('rate@example.com');
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(pageText(limited.text)).toContain('Too many sign-in attempts from your address');
      // Not counted as a failure of that e-mail: it is not locked, only the address is slowed down.
      expect(await gw.gateway.deps.store.backoffice.countSignInFailures('rate@example.com', 0)).toBe(0);
    } finally {
      await gw.close();
    }
  });
});

describe.each(storeKinds())('back office on %s', (kind) => {
  let gw: TestGateway;
  let shop_a: CreatedMerchant;
  let shop_b: CreatedMerchant;
  /** Records of shop A that the matrix asks for. */
  let a_sale: { trace_id: number; order_id: string };
  let a_payout: number;
  let a_notification: number;
  let a_subscription: string;
  /** A request log row of shop A (its sale). */
  let a_request: number;

  beforeAll(async () => {
    // Many sign-ins within a minute from 127.0.0.1: the per-address sign-in limit has its own test below.
    gw = await startTestGateway(kind, { env: { PAYGATE_RATE_LIMIT_SIGN_IN_PER_MINUTE: '1000' } });
    shop_a = await gw.createMerchant();
    shop_b = await gw.createMerchant();
    await addUser(gw, 'operator@example.com', 'operator');
    await addUser(gw, 'staff-a@example.com', 'merchant', shop_a.merchant_id);
    await addUser(gw, 'staff-b@example.com', 'merchant', shop_b.merchant_id);
    a_sale = await sale(gw, shop_a);
    await sale(gw, shop_b);
    const hold = await fetch(`${gw.url}/operator/gateways/${shop_a.gateway}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ hold_payouts: true }),
    });
    expect(hold.status).toBe(200);
    const payout = await postSigned(gw.url, '/api/process', payoutE(shop_a, { amount: 5000, timestamp: nowSeconds() }), shop_a.secret);
    expect(payout.body).toMatchObject({ status: 0, transaction_status: 'requested' });
    a_payout = Number(payout.body.trace_id);
    a_notification = (await gw.gateway.deps.store.notifications.listOfTransaction(a_sale.trace_id))[0]!.id;
    const plan = await createPlanVia(gw.url, shop_a);
    a_subscription = String((await subscribeVia(gw.url, shop_a, plan, await tokenize(gw.url, shop_a))).subscription_id);
    await gw.gateway.deps.request_log.flush();
    const logged = await gw.gateway.deps.store.requestLog.searchRequestLogs(
      {
        merchant_id: shop_a.merchant_id,
        path: null,
        api_status: null,
        trace_id: a_sale.trace_id,
        from_ms: null,
        to_ms: null,
        before: null,
      },
      1,
    );
    a_request = logged[0]!.id;
  });
  afterAll(async () => {
    await gw?.close();
  });

  /** Every GET page with shop A's ids where a page takes one. */
  function pagesOfShopA(): string[] {
    const ids: Record<string, string> = {
      trace_id: String(a_sale.trace_id),
      subscription_id: a_subscription,
      gateway_id: shop_a.gateway!,
      id: String(a_request),
    };
    return backOfficeRoutes()
      .filter((r) => r.method === 'GET')
      .map((r) => `/backoffice${r.url.replace(/:([a-z_]+)/g, (_, name: string) => ids[name] ?? 'x')}`);
  }

  it('sends a visitor without a session to sign-in (303) from every page but sign-in, unknown URLs included', async () => {
    const visitor = new BackOfficeClient(gw.url);
    const urls = [...pagesOfShopA(), '/backoffice/no-such-page', `/backoffice/transactions/${a_sale.trace_id}?x=1`];
    for (const url of urls) {
      const answer = await visitor.get(url);
      expect([url, answer.status, answer.location]).toEqual([url, 303, '/backoffice/']);
    }
    const sign_in = await visitor.get('/backoffice/');
    expect(sign_in.status).toBe(200);
    expect(sign_in.text).toMatch(/<label for="email">E-mail/);
    expect(sign_in.text).toMatch(/<label for="password">Password/);
    expect(sign_in.text).toMatch(/<button class="primary" type="submit">Sign in<\/button>/);
    expect(signInRoutes().map((r) => r.url)).toEqual(['/', '/sign-in', '/sign-out']);
  });

  it('signs in with a session cookie that is HttpOnly and SameSite, and signs out', async () => {
    const client = new BackOfficeClient(gw.url);
    const signed_in = await client.signIn('operator@example.com');
    expect([signed_in.status, signed_in.location]).toEqual([303, '/backoffice/overview']);
    const cookie = signed_in.headers.getSetCookie().find((c) => c.startsWith('paygate_bo_session='))!;
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(cookie).toMatch(/Path=\/backoffice/);
    expect((await client.get('/backoffice/overview')).status).toBe(200);
    const out = await client.post('/backoffice/sign-out', {});
    expect([out.status, out.location]).toEqual([303, '/backoffice/']);
    expect((await client.get('/backoffice/overview')).status).toBe(303);
    // The session is gone from the store too, not only from the browser.
    const wrong = await new BackOfficeClient(gw.url).signIn('operator@example.com', 'not the password at all');
    expect(wrong.status).toBe(401);
    expect(pageText(wrong.text)).toContain('E-mail or password is wrong.');
  });

  it('refuses every form without its CSRF token with 403 and changes nothing', async () => {
    const client = new BackOfficeClient(gw.url);
    await client.signIn('operator@example.com');
    await client.get('/backoffice/users');
    const forms: [string, Record<string, string>][] = [
      ['/backoffice/users', { email: 'forged@example.com', password: PASSWORD, role: 'operator' }],
      [`/backoffice/transactions/${a_sale.trace_id}/refund`, { amount: '1.00', refund_key: 'k'.repeat(32) }],
      [`/backoffice/payouts/${a_payout}/reject`, { reason: 'forged' }],
      [`/backoffice/notifications/${a_notification}/resend`, {}],
      ['/backoffice/merchants', { merchant_id: 'forged-shop' }],
      ['/backoffice/sign-out', {}],
      ['/backoffice/sign-in', { email: 'operator@example.com', password: PASSWORD }],
    ];
    for (const [url, form] of forms) {
      const answer = await client.post(url, form, { csrf: false });
      expect([url, answer.status]).toEqual([url, 403]);
      const wrong_token = await client.post(url, { ...form, _csrf: 'not-a-token' }, { csrf: false });
      expect([url, wrong_token.status]).toEqual([url, 403]);
    }
    const store = gw.gateway.deps.store;
    expect(await store.backoffice.findUserByEmail('forged@example.com')).toBeNull();
    expect((await store.transactions.get(a_sale.trace_id))!.refund_reserved_minor).toBe(0);
    expect((await store.transactions.get(a_payout))!.status).toBe('requested');
    expect(await store.merchants.get('forged-shop')).toBeNull();
    // Still signed in: the forged sign-out did nothing.
    expect((await client.get('/backoffice/overview')).status).toBe(200);
  });

  it('locks an e-mail for 15 minutes after 10 failed sign-ins, records every attempt, and lets it in after', async () => {
    await addUser(gw, 'locked@example.com', 'merchant', shop_b.merchant_id);
    const client = new BackOfficeClient(gw.url);
    for (let i = 1; i <= 10; i += 1) {
      const answer = await client.signIn('locked@example.com', `wrong password number ${i}`);
      expect(answer.status).toBe(401);
    }
    const right = await client.signIn('locked@example.com');
    expect(right.status).toBe(429);
    expect(Number(right.headers.get('retry-after'))).toBeGreaterThan(800);
    expect(pageText(right.text)).toMatch(/locked for 15 more minute/);
    // Another e-mail from the same address is not locked.
    expect((await new BackOfficeClient(gw.url).signIn('staff-b@example.com')).status).toBe(303);
    await advanceClock(gw, 14 * 60);
    expect((await client.signIn('locked@example.com')).status).toBe(429);
    await advanceClock(gw, 61);
    expect((await client.signIn('locked@example.com')).status).toBe(303);

    const operator = new BackOfficeClient(gw.url);
    await operator.signIn('operator@example.com');
    const audit = pageText((await operator.get('/backoffice/audit')).text);
    // Empty cells (no role or merchant for a refused attempt) fold into single spaces.
    expect(audit.match(/locked@example\.com sign_in refused 127\.0\.0\.1 wrong e-mail or password/g)?.length).toBe(10);
    expect(audit.match(/refused 127\.0\.0\.1 wrong e-mail or password; account now locked/g)?.length).toBe(1);
    expect(audit.match(/locked@example\.com sign_in refused 127\.0\.0\.1 account locked/g)?.length).toBe(2);
    expect(audit).toMatch(new RegExp(`locked@example\\.com merchant sign_in ${shop_b.merchant_id} done 127\\.0\\.0\\.1`));
  });

  it('answers every page of another merchant, and every operator page, exactly like a page that does not exist (the matrix)', async () => {
    const operator = new BackOfficeClient(gw.url);
    const staff_a = new BackOfficeClient(gw.url);
    const staff_b = new BackOfficeClient(gw.url);
    for (const [client, email] of [
      [operator, 'operator@example.com'],
      [staff_a, 'staff-a@example.com'],
      [staff_b, 'staff-b@example.com'],
    ] as const) {
      expect((await client.signIn(email)).status).toBe(303);
    }
    // What "does not exist" looks like to each of them: an unknown page, an unknown transaction.
    const missing_page = new Map([
      ['operator', await operator.get('/backoffice/no-such-page')],
      ['A', await staff_a.get('/backoffice/no-such-page')],
      ['B', await staff_b.get('/backoffice/no-such-page')],
    ]);
    const missing_transaction = await staff_b.get('/backoffice/transactions/999999999');
    const missing_subscription = await staff_b.get('/backoffice/subscriptions/no-such-subscription');
    const missing_request = await staff_b.get('/backoffice/request-log/999999999');
    expect([...missing_page.values(), missing_transaction, missing_subscription, missing_request].map((m) => m.status)).toEqual([
      404, 404, 404, 404, 404, 404,
    ]);
    const without_text = (text: string, ...ids: string[]) => ids.reduce<string>((t, id) => t.split(id).join('ID'), pageText(text));
    const without_ids = (text: string, ...ids: number[]) =>
      ids.reduce<string>((t, id) => t.replace(new RegExp(`\\b${id}\\b`, 'g'), 'ID'), pageText(text));

    const leaks: string[] = [];
    let checked = 0;
    // What of shop A must never reach shop B: its id, its order, links to its records.
    const secrets_of_a = [
      shop_a.merchant_id,
      a_sale.order_id,
      `/backoffice/transactions/${a_sale.trace_id}"`,
      `/backoffice/transactions/${a_payout}"`,
      a_subscription,
    ];
    const routes = backOfficeRoutes().filter((r) => r.method === 'GET');
    const urls = pagesOfShopA();
    // The sale's own page, by its path segment: a gateway id is hex and may start with the trace_id's digits.
    const isShopASale = (url: string) => new RegExp(`/transactions/${a_sale.trace_id}(?:[/?]|$)`).test(url);
    for (const [index, route] of routes.entries()) {
      const url = urls[index]!;
      const viewers = [
        ['operator', operator, 'operator'],
        ['A', staff_a, 'merchant'],
        ['B', staff_b, 'merchant'],
      ] as const;
      for (const [who, client, role] of viewers) {
        const answer = await client.get(url);
        checked += 1;
        if (!route.roles.includes(role)) {
          // A page of another role: exactly the page that does not exist.
          if (answer.status !== 404 || without_ids(answer.text) !== without_ids(missing_page.get(who)!.text))
            leaks.push(`${url} as ${who}`);
          continue;
        }
        if (who !== 'B') {
          expect([url, who, answer.status]).toEqual([url, who, 200]);
          if (isShopASale(url)) expect(answer.text).toContain(a_sale.order_id);
          if (url.includes(a_subscription)) expect(answer.text).toContain('subscription.created');
          continue;
        }
        if (isShopASale(url)) {
          // Shop A's own transaction, as shop B: the unknown transaction's page, id apart.
          if (answer.status !== 404 || without_ids(answer.text, a_sale.trace_id) !== without_ids(missing_transaction.text, 999999999))
            leaks.push(`${url} as B`);
        } else if (url === `/backoffice/request-log/${a_request}`) {
          // Shop A's request, as shop B: the unknown request's page, id apart.
          if (answer.status !== 404 || without_ids(answer.text, a_request) !== without_ids(missing_request.text, 999999999))
            leaks.push(`${url} as B`);
        } else if (url.includes(a_subscription)) {
          if (
            answer.status !== 404 ||
            without_text(answer.text, a_subscription) !== without_text(missing_subscription.text, 'no-such-subscription')
          )
            leaks.push(`${url} as B`);
        } else if (answer.status !== 200 || secrets_of_a.some((secret) => answer.text.includes(secret))) {
          // Lists, overview, CSV, credentials: nothing of shop A in shop B's answer.
          leaks.push(`${url} as B shows shop A`);
        }
      }
    }
    // Forms aimed at shop A's records, as shop B: not found, and nothing changed.
    const store = gw.gateway.deps.store;
    for (const [url, form] of [
      [`/backoffice/transactions/${a_sale.trace_id}/refund`, { amount: '1.00', refund_key: 'b'.repeat(32) }],
      [`/backoffice/payouts/${a_payout}/approve`, {}],
      [`/backoffice/payouts/${a_payout}/reject`, { reason: 'not mine' }],
      [`/backoffice/notifications/${a_notification}/resend`, {}],
      [`/backoffice/subscriptions/${a_subscription}/cancel`, {}],
    ] as const) {
      await staff_b.get('/backoffice/overview');
      const answer = await staff_b.post(url, form);
      checked += 1;
      if (answer.status !== 404 || pageText(answer.text).includes(shop_a.merchant_id)) leaks.push(`POST ${url} as B`);
    }
    expect((await store.transactions.get(a_sale.trace_id))!.refund_reserved_minor).toBe(0);
    expect((await store.transactions.get(a_payout))!.status).toBe('requested');
    expect((await store.subscriptions.get(shop_a.merchant_id, a_subscription))!.status).toBe('active');
    expect(checked).toBe(3 * pagesOfShopA().length + 5);
    expect(leaks).toEqual([]);
  });

  it("cancels a subscription from its page, as the merchant's staff or an operator, once, with the merchant notified and the audit log told", async () => {
    const store = gw.gateway.deps.store;
    // Stamped on the gateway's clock, which earlier tests in this file move forward.
    useClock(() => Math.floor(gw.gateway.deps.clock.now_ms() / 1000));
    let ids: string[];
    try {
      const plan = await createPlanVia(gw.url, shop_a, { name: 'To cancel' });
      const card_token = await tokenize(gw.url, shop_a);
      ids = [];
      for (let i = 0; i < 2; i += 1)
        ids.push(String((await subscribeVia(gw.url, shop_a, plan, card_token, { cid: `cancel-${i}` })).subscription_id));
    } finally {
      useClock(null);
    }
    for (const [email, id] of [
      ['staff-a@example.com', ids[0]!],
      ['operator@example.com', ids[1]!],
    ] as const) {
      const client = new BackOfficeClient(gw.url);
      await client.signIn(email);
      expect(pageText((await client.get(`/backoffice/subscriptions/${id}`)).text)).toContain(`Cancel subscription ${id}`);
      const cancelled = await client.post(`/backoffice/subscriptions/${id}/cancel`, { confirm: 'yes' });
      expect([cancelled.status, cancelled.location]).toEqual([303, `/backoffice/subscriptions/${id}?notice=canceled`]);
      const page = pageText((await client.get(cancelled.location!)).text);
      expect(page).toContain('Subscription cancelled: nothing more will be charged.');
      expect(page).not.toContain(`Cancel subscription ${id}`);
      const row = (await store.subscriptions.get(shop_a.merchant_id, id))!;
      expect(row).toMatchObject({ status: 'canceled', next_charge_at_ms: null });
      expect((await store.subscriptions.listChanges(id)).at(-1)).toMatchObject({
        to_status: 'canceled',
        event: 'subscription.canceled',
        reason: expect.stringContaining(`cancelled in the back office by ${email}`),
      });
      // The merchant's systems hear of it as of a cancel through the API.
      const events = (await store.notifications.listOfSubscription(id)).map(
        (n) => JSON.parse(n.payload_json) as { event: string; subscription_status: string },
      );
      expect(events.filter((e) => e.event === 'subscription.canceled')).toEqual([
        expect.objectContaining({ subscription_status: 'canceled' }),
      ]);
      // Sent twice (a double click): cancelled once, the second told so.
      const again = await client.post(`/backoffice/subscriptions/${id}/cancel`, { confirm: 'yes' });
      expect(again.location).toBe(`/backoffice/subscriptions/${id}?notice=already`);
      expect((await store.subscriptions.listChanges(id)).filter((c) => c.event === 'subscription.canceled')).toHaveLength(1);
    }
    const operator = new BackOfficeClient(gw.url);
    await operator.signIn('operator@example.com');
    const audit = pageText((await operator.get('/backoffice/audit')).text);
    expect(audit).toMatch(new RegExp(`cancel_subscription\\s+${ids[0]}\\s+${shop_a.merchant_id}\\s+done`));
    expect(audit).toMatch(new RegExp(`cancel_subscription\\s+${ids[1]}\\s+${shop_a.merchant_id}\\s+refused`));
  });

  it('refunds a sale partly after its confirmation page, replays a form sent twice, and refuses more than is left', async () => {
    const { trace_id } = await sale(gw, shop_a, { amount: 5000 });
    const staff = new BackOfficeClient(gw.url);
    await staff.signIn('staff-a@example.com');
    const page = await staff.get(`/backoffice/transactions/${trace_id}`);
    const key = /name="refund_key" value="([0-9a-f]{32})"/.exec(page.text)![1]!;
    const store = gw.gateway.deps.store;
    // The form first answers with its confirmation: the amount, the card and the customer, nothing refunded yet.
    const asked = await staff.post(`/backoffice/transactions/${trace_id}/refund`, { amount: '20.00', refund_key: key });
    expect(asked.status).toBe(200);
    const confirm = pageText(asked.text);
    expect(confirm).toContain(`Confirm the refund of transaction ${trace_id}`);
    expect(confirm).toMatch(/Amount to refund\s+20\.00 USD/);
    expect(confirm).toMatch(/Refundable after this\s+30\.00 USD/);
    expect(confirm).toContain('411111******1111');
    expect(await store.transactions.listRefundsOf(trace_id, 10)).toEqual([]);
    const confirmed = { amount: '20.00', refund_key: key, confirm: 'yes' };
    const first = await staff.post(`/backoffice/transactions/${trace_id}/refund`, confirmed);
    expect([first.status, first.location]).toEqual([303, `/backoffice/transactions/${trace_id}?notice=refunded`]);
    const twice = await staff.post(`/backoffice/transactions/${trace_id}/refund`, confirmed);
    expect(twice.status).toBe(303);
    const refunds = await store.transactions.listRefundsOf(trace_id, 10);
    expect(refunds.map((r) => [r.amount_minor, r.status])).toEqual([[2000, 'approved']]);
    // The refund's page lists it, and the merchant's notification of it was written.
    const after = pageText((await staff.get(`/backoffice/transactions/${trace_id}`)).text);
    expect(after).toContain('Refunds');
    expect(after).toContain(String(refunds[0]!.trace_id));
    const too_much = await staff.post(`/backoffice/transactions/${trace_id}/refund`, {
      amount: '30.01',
      refund_key: 'c'.repeat(32),
      confirm: 'yes',
    });
    expect(too_much.status).toBe(409);
    expect(pageText(too_much.text)).toContain('more than is left to refund');
    const bad = await staff.post(`/backoffice/transactions/${trace_id}/refund`, { amount: '1.001', refund_key: 'd'.repeat(32) });
    expect(bad.status).toBe(400);
    expect(pageText(bad.text)).toContain('Amount: expected a positive amount in USD');
    expect((await store.transactions.listRefundsOf(trace_id, 10)).length).toBe(1);
  });

  it('searches with keyset pages and exports the search as CSV, formulas defused', async () => {
    const shop = await gw.createMerchant();
    await addUser(gw, `staff-${shop.merchant_id}@example.com`, 'merchant', shop.merchant_id);
    const made: number[] = [];
    for (let i = 0; i < 55; i += 1)
      made.push((await sale(gw, shop, { amount: 100 + i, pin: i === 0 ? '=HYPERLINK("x")' : 'cust-42' })).trace_id);
    const declined = await sale(gw, shop, { cvv: '000' });
    const staff = new BackOfficeClient(gw.url);
    await staff.signIn(`staff-${shop.merchant_id}@example.com`);
    const first = await staff.get('/backoffice/transactions?status=approved');
    const ids_on = (text: string) => [...text.matchAll(/<a href="\/backoffice\/transactions\/(\d+)">\1<\/a>/g)].map((m) => Number(m[1]));
    const page_one = ids_on(first.text);
    expect(page_one).toEqual([...made].reverse().slice(0, 50));
    const older = /<a href="\/backoffice\/transactions\?([^"]+)" rel="next">Older<\/a>/.exec(first.text)![1]!.replace(/&amp;/g, '&');
    const page_two = ids_on((await staff.get(`/backoffice/transactions?${older}`)).text);
    expect(page_two).toEqual([...made].reverse().slice(50));
    expect(ids_on((await staff.get('/backoffice/transactions?status=rejected')).text)).toEqual([declined.trace_id]);
    // Amounts in the currency's major units, with the currency they are in.
    const no_currency = await staff.get('/backoffice/transactions?amount_min=1.50');
    expect(no_currency.status).toBe(400);
    expect(pageText(no_currency.text)).toContain('Currency: expected the currency the amounts are in');
    expect((await staff.get('/backoffice/transactions?currency=USD&amount_min=1.505')).status).toBe(400);
    expect(ids_on((await staff.get('/backoffice/transactions?currency=eur&amount_min=1.50&amount_max=1.52')).text)).toEqual([]);
    expect(ids_on((await staff.get('/backoffice/transactions?currency=usd&amount_min=1.50&amount_max=1.52')).text)).toEqual([
      made[52],
      made[51],
      made[50],
    ]);
    expect(ids_on((await staff.get(`/backoffice/transactions?trace_id=${made[3]}`)).text)).toEqual([made[3]]);
    const wrong = await staff.get('/backoffice/transactions?from=2026-02-31');
    expect(wrong.status).toBe(400);
    expect(pageText(wrong.text)).toContain('From (date): expected a date as YYYY-MM-DD');

    const csv = await staff.get('/backoffice/transactions.csv?type=sale');
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    const lines = csv.text.trim().split('\r\n');
    expect(lines[0]).toMatch(/^trace_id,created_at,merchant_id,/);
    // The gateway by its label, as the pages name it; its id last, for a script that matches on it.
    expect(lines[0]).toMatch(/,gateway,.*,gateway_id$/);
    const label = (await gw.gateway.deps.store.merchants.getGateway(shop.gateway!))!.label;
    expect(lines[1]).toContain(`,${label},`);
    expect(lines[1]!.endsWith(`,${shop.gateway!}`)).toBe(true);
    expect(lines.length).toBe(1 + 56);
    const formula_line = lines.find((l) => l.startsWith(`${made[0]},`))!;
    expect(formula_line).toContain(`"'=HYPERLINK(""x"")"`);
    expect(formula_line).toContain('411111******1111');
    expect(csv.text).not.toContain(VISA);
  });

  it('shows the overview figures of what happened, per merchant', async () => {
    const seeded_at_ms = Date.now();
    const shop = await gw.createMerchant();
    await addUser(gw, `overview-${shop.merchant_id}@example.com`, 'merchant', shop.merchant_id);
    await sale(gw, shop, { amount: 1250 });
    await sale(gw, shop, { amount: 750 });
    await sale(gw, shop, { amount: 999, cvv: '000' });
    const staff = new BackOfficeClient(gw.url);
    await staff.signIn(`overview-${shop.merchant_id}@example.com`);
    const text = pageText((await staff.get('/backoffice/overview')).text);
    expect(text).toContain('Approved, last 30 days 20.00 USD');
    expect(text).toContain('Approval rate, 30 days 66.7 %');
    if (sameUtcDay(seeded_at_ms)) {
      expect(text).toContain('Approved today 20.00 USD');
      expect(text).toContain('Approval rate today 66.7 %');
    }
    expect(text).toContain('Payouts waiting for a decision 0');
    expect((await staff.get('/backoffice/overview')).text).toMatch(
      /<svg viewBox="0 0 640 180" width="100%" role="img" aria-label="Approved sales in USD over the last 30 days: 20.00 USD in all"/,
    );
  });

  it("lets a merchant's staff roll the secret with the grace they pick, shown once, and send a signed test notification", async () => {
    const shop = await gw.createMerchant();
    await addUser(gw, `creds-${shop.merchant_id}@example.com`, 'merchant', shop.merchant_id);
    const staff = new BackOfficeClient(gw.url);
    await staff.signIn(`creds-${shop.merchant_id}@example.com`);
    const page = pageText((await staff.get('/backoffice/credentials')).text);
    expect(page).toContain(shop.application_key);
    expect(page).not.toContain(shop.secret);

    // The first form only asks: what will happen, nothing rolled yet.
    const asked = await staff.post('/backoffice/credentials/roll', { grace_seconds: '3600' });
    expect(asked.status).toBe(200);
    expect(pageText(asked.text)).toContain('Confirm: roll the API secret');
    expect(pageText(asked.text)).toContain('still accepted for 1 hour, then refused');
    expect(asked.text).not.toContain('data-testid="new-secret"');
    await sale(gw, shop);
    // Confirmed without its CSRF token: refused, nothing rolled.
    expect((await staff.post('/backoffice/credentials/roll', { grace_seconds: '3600', confirm: 'yes' }, { csrf: false })).status).toBe(403);
    const rolled = await staff.post('/backoffice/credentials/roll', { grace_seconds: '3600', confirm: 'yes' });
    expect(rolled.status).toBe(200);
    expect(rolled.headers.get('cache-control')).toBe('no-store');
    const new_secret = /data-testid="new-secret">([^<]+)</.exec(rolled.text)![1]!;
    expect(new_secret).not.toBe(shop.secret);
    // Both secrets sign sales during the grace; after it only the new one.
    await sale(gw, shop);
    await sale(gw, { ...shop, secret: new_secret });
    await advanceClock(gw, 3601);
    await expect(sale(gw, shop)).rejects.toThrow(/"description":"Invalid signature/);
    await sale(gw, { ...shop, secret: new_secret });
    // An hour without a request ended the session (the idle time-out): its person signs in again.
    await staff.signIn(`creds-${shop.merchant_id}@example.com`);
    // Never shown again, and the audit log says when the old one ended, not what either was.
    const again = await staff.get('/backoffice/credentials');
    expect(again.status).toBe(200);
    expect(again.text).not.toContain(new_secret);
    const too_long = await staff.post('/backoffice/credentials/roll', { grace_seconds: String(24 * 3600 + 1) });
    expect(too_long.status).toBe(400);
    expect(pageText(too_long.text)).toContain('Grace: expected 0 to 24 hours');

    const receiver = await startMerchantReceiver();
    try {
      receiver.setReply('/notify', () => signedReply(new_secret, 0));
      const sent = await staff.post('/backoffice/credentials/test-notification', { url: `${receiver.url}/notify` });
      expect(sent.status).toBe(200);
      expect(pageText(sent.text)).toMatch(/Delivered: your endpoint answered HTTP 200 with a valid signed reply/);
      const received = notificationOf(receiver.requestsTo('/notify', 'POST')[0]!);
      expect(received.test).toBe('1');
      expect(merchantVerify(received, new_secret)).toBe(true);
      receiver.setReply('/notify', () => ({ status: 500, body: { error: 'boom' } }));
      const failed = await staff.post('/backoffice/credentials/test-notification', { url: `${receiver.url}/notify` });
      expect(pageText(failed.text)).toContain('Not delivered: HTTP 500. Its reply: {"error":"boom"}');
    } finally {
      await receiver.close();
    }
    const operator = new BackOfficeClient(gw.url);
    await operator.signIn('operator@example.com');
    const audit = (await operator.get('/backoffice/audit')).text;
    expect(audit).toContain('roll_secret');
    expect(audit).toContain('test_notification');
    expect(audit).not.toContain(new_secret);
    // An operator has no credentials page: it does not exist for them.
    expect((await operator.get('/backoffice/credentials')).status).toBe(404);
  });

  it("lets an operator disable a merchant (its API calls then fail as an unknown merchant's) and enable it again", async () => {
    const shop = await gw.createMerchant();
    // Stamped on the gateway's clock, which earlier tests in this file move forward.
    useClock(() => Math.floor(gw.gateway.deps.clock.now_ms() / 1000));
    let subscription_id: string;
    try {
      const plan = await createPlanVia(gw.url, shop, { name: 'Held monthly' });
      subscription_id = String((await subscribeVia(gw.url, shop, plan, await tokenize(gw.url, shop))).subscription_id);
    } finally {
      useClock(null);
    }
    const operator = new BackOfficeClient(gw.url);
    await operator.signIn('operator@example.com');
    expect(pageText((await operator.get('/backoffice/merchants')).text)).toContain(shop.merchant_id);
    const disabled = await operator.post(`/backoffice/merchants/${shop.merchant_id}/disable`, { confirm: 'yes' });
    expect([disabled.status, disabled.location]).toEqual([303, '/backoffice/merchants?notice=disabled']);
    await expect(sale(gw, shop)).rejects.toThrow(/"status":11/);
    expect(pageText((await operator.get('/backoffice/merchants')).text)).toMatch(new RegExp(`${shop.merchant_id} disabled since`));
    // Its subscriptions' renewals are held, and their page says so (docs/subscriptions.md §5.6).
    const held_note = 'held: the merchant is disabled; nothing is charged until it is enabled again';
    expect(pageText((await operator.get(`/backoffice/subscriptions/${subscription_id}`)).text)).toContain(held_note);
    await operator.post(`/backoffice/merchants/${shop.merchant_id}/enable`, { confirm: 'yes' });
    await sale(gw, shop);
    expect(pageText((await operator.get(`/backoffice/subscriptions/${subscription_id}`)).text)).not.toContain(held_note);
    expect((await operator.post('/backoffice/merchants/no-such-shop/disable', {})).status).toBe(404);
    expect((await operator.post('/backoffice/merchants/no-such-shop/disable', { confirm: 'yes' })).status).toBe(404);
  });

  it("writes a gateway's secret settings without ever showing them, and replaces them", async () => {
    const shop = await gw.createMerchant();
    const operator = new BackOfficeClient(gw.url);
    await operator.signIn('operator@example.com');
    const page = await operator.get('/backoffice/gateways');
    expect(page.text).toContain('Add checkout gateway');
    const secret_key = 'sk_sbox_backoffice0first0secret';
    const CHANNEL = `pc_${'b'.repeat(26)}`;
    const webhook_secret = 'whsec-backoffice-first-0123';
    const created = await operator.post('/backoffice/gateways', {
      connector: 'checkout',
      merchant_id: shop.merchant_id,
      label: 'Checkout Backoffice',
      currencies: 'USD,EUR',
      setting_secret_key: secret_key,
      setting_processing_channel_id: CHANNEL,
      setting_webhook_secret: webhook_secret,
    });
    expect([created.status, created.location]).toEqual([303, '/backoffice/gateways?notice=created']);
    const gateway = (await gw.gateway.deps.store.merchants.listGateways(shop.merchant_id)).find((g) => g.connector === 'checkout')!;
    expect(gateway.label).toBe('Checkout Backoffice');
    const shown = (await operator.get('/backoffice/gateways')).text;
    // Named by its label, its button too; the id only in the links, the forms and the webhook URL to give the processor.
    expect(shown).toContain(gateway.gateway_id);
    expect(pageText(shown)).toContain('Checkout Backoffice Label Checkout Backoffice Merchant');
    expect(shown).toContain('>Disable Checkout Backoffice…</button>');
    expect(pageText(shown).replace(`/webhooks/checkout/${gateway.gateway_id}`, '')).not.toContain(gateway.gateway_id);
    expect(pageText(shown)).toContain('secret_key, webhook_secret (set; never shown)');
    for (const secret of [secret_key, webhook_secret]) expect(shown).not.toContain(secret);
    const new_key = 'sk_sbox_backoffice0second0secret';
    const replaced = await operator.post(`/backoffice/gateways/${gateway.gateway_id}/settings`, {
      setting_secret_key: new_key,
      setting_webhook_secret: '',
    });
    expect(replaced.status).toBe(303);
    const row = (await gw.gateway.deps.store.merchants.getGateway(gateway.gateway_id))!;
    const settings = JSON.parse(gw.gateway.deps.sealer.open(row.settings_sealed!, gatewaySettingsPurpose(gateway.gateway_id))) as Record<
      string,
      string
    >;
    expect(settings).toMatchObject({ secret_key: new_key, webhook_secret, processing_channel_id: CHANNEL });
    expect((await operator.get('/backoffice/gateways')).text).not.toContain(new_key);
    const audit = (await operator.get('/backoffice/audit')).text;
    expect(audit).toContain('settings: secret_key');
    expect(audit).not.toContain(new_key);
    const bad = await operator.post('/backoffice/gateways', {
      connector: 'checkout',
      merchant_id: shop.merchant_id,
      currencies: 'USD',
      setting_secret_key: 'nope',
    });
    expect(bad.status).toBe(400);
    // What is wrong and the shape expected; a secret's value never echoed.
    expect(pageText(bad.text)).toContain(
      'secret_key: expected sk_ followed by 8 to 200 printable characters without spaces, got a value of 4 characters that does not fit (not shown: the setting is secret).',
    );

    // Renamed: 1 to 64 characters; the gateway's own page heads with it and shows the id to copy.
    const too_long = await operator.post(`/backoffice/gateways/${gateway.gateway_id}/rename`, { label: 'x'.repeat(65) });
    expect(too_long.status).toBe(400);
    expect(pageText(too_long.text)).toContain('Label: expected text of 1 to 64 characters, got 65.');
    const renamed = await operator.post(`/backoffice/gateways/${gateway.gateway_id}/rename`, { label: 'Checkout BO renamed' });
    expect([renamed.status, renamed.location]).toEqual([303, '/backoffice/gateways?notice=renamed']);
    expect((await gw.gateway.deps.store.merchants.getGateway(gateway.gateway_id))!.label).toBe('Checkout BO renamed');
    const own = await operator.get(`/backoffice/gateways/${gateway.gateway_id}`);
    expect(own.text).toContain('<title>Gateway Checkout BO renamed · paygate back office</title>');
    expect(pageText(own.text)).toContain('Gateway Checkout BO renamed Label Checkout BO renamed Gateway ID');
    expect(own.text).toContain(`<code class="copy" data-testid="gateway-id">${gateway.gateway_id}</code>`);
    const audit_after = pageText((await operator.get('/backoffice/audit')).text);
    expect(audit_after).toContain('rename_gateway');
    expect(audit_after).toContain('label: Checkout Backoffice -> Checkout BO renamed');
    expect(audit_after).toContain('Label: expected text of 1 to 64 characters, got 65.'); // the refused rename

    // A transaction names its gateway by label, on the search and on its page, for operators and its merchant's staff.
    const sandbox_label = `sandbox ${shop_a.gateway!.slice(0, 8)}`;
    const staff_a = new BackOfficeClient(gw.url);
    await staff_a.signIn('staff-a@example.com');
    for (const client of [operator, staff_a]) {
      const detail = pageText((await client.get(`/backoffice/transactions/${a_sale.trace_id}`)).text);
      expect(detail).toContain(`Gateway ${sandbox_label} `);
      expect(detail).not.toContain(shop_a.gateway!);
      const search = pageText((await client.get(`/backoffice/transactions?trace_id=${a_sale.trace_id}`)).text);
      expect(search).toContain(sandbox_label);
      expect(search).not.toContain(shop_a.gateway!);
    }
    const linked = (await operator.get(`/backoffice/transactions/${a_sale.trace_id}`)).text;
    expect(linked).toContain(`<dt>Gateway</dt><dd><a href="/backoffice/gateways/${shop_a.gateway!}">${sandbox_label}</a></dd>`);
  });

  it("ends a disabled user's session at its next request and refuses its sign-in", async () => {
    const shop = await gw.createMerchant();
    await addUser(gw, `leaver-${shop.merchant_id}@example.com`, 'merchant', shop.merchant_id);
    const leaver = new BackOfficeClient(gw.url);
    await leaver.signIn(`leaver-${shop.merchant_id}@example.com`);
    expect((await leaver.get('/backoffice/overview')).status).toBe(200);
    const operator = new BackOfficeClient(gw.url);
    await operator.signIn('operator@example.com');
    const user = (await gw.gateway.deps.store.backoffice.findUserByEmail(`leaver-${shop.merchant_id}@example.com`))!;
    await operator.get('/backoffice/users');
    expect((await operator.post(`/backoffice/users/${user.user_id}/disable`, { confirm: 'yes' })).status).toBe(303);
    expect((await leaver.get('/backoffice/overview')).status).toBe(303);
    expect((await leaver.signIn(`leaver-${shop.merchant_id}@example.com`)).status).toBe(401);
    // An operator cannot lock themselves out.
    const self = (await gw.gateway.deps.store.backoffice.findUserByEmail('operator@example.com'))!;
    expect((await operator.post(`/backoffice/users/${self.user_id}/disable`, {})).status).toBe(409);
    expect((await operator.post(`/backoffice/users/${self.user_id}/disable`, { confirm: 'yes' })).status).toBe(409);
  });

  it('answers text a rule refuses in a URL like a missing page or a named field, never with a crash', async () => {
    const operator = new BackOfficeClient(gw.url);
    await operator.signIn('operator@example.com');
    for (const url of ['/backoffice/users/%00/disable', '/backoffice/gateways/a%01b/enable', '/backoffice/merchants/%C2%85/disable']) {
      await operator.get('/backoffice/users');
      expect([url, (await operator.post(url, {})).status]).toEqual([url, 404]);
    }
    expect((await operator.get('/backoffice/merchants?after=%00')).status).toBe(200);
    const search = await operator.get('/backoffice/transactions?order_id=a%00b');
    expect(search.status).toBe(400);
    expect(pageText(search.text)).toContain('Order ID: expected text of up to 128 characters');
    expect((await operator.get('/backoffice/audit?before=%00')).status).toBe(200);
    expect(fs.readFileSync(gw.log_file, 'utf8')).not.toMatch(/"level":50/);
  });

  // Last in this block: they move the shared gateway's clock by hours.
  it('keeps a session used every 10 minutes signed in past 15 minutes, writing its last use at most once a minute', async () => {
    const client = new BackOfficeClient(gw.url);
    await client.signIn('operator@example.com');
    const signed_in_at_ms = (await lastSeenOf(gw, client))!;
    expect(signed_in_at_ms).toBeGreaterThan(0);
    // Requests within a minute of the last write write nothing.
    await advanceClock(gw, 30);
    expect((await client.get('/backoffice/overview')).status).toBe(200);
    expect((await client.get('/backoffice/transactions')).status).toBe(200);
    expect(await lastSeenOf(gw, client)).toBe(signed_in_at_ms);
    let last_seen_at_ms = signed_in_at_ms;
    for (let i = 1; i <= 3; i += 1) {
      await advanceClock(gw, 10 * 60);
      expect([i, (await client.get('/backoffice/overview')).status]).toEqual([i, 200]);
      const seen = (await lastSeenOf(gw, client))!;
      expect(seen - last_seen_at_ms).toBeGreaterThanOrEqual(10 * 60_000);
      last_seen_at_ms = seen;
    }
    // 30 minutes and 30 seconds after sign-in on the gateway clock, still signed in.
    expect(gw.gateway.deps.clock.now_ms() - signed_in_at_ms).toBeGreaterThan(30 * 60_000);
    expect((await client.get('/backoffice/users')).status).toBe(200);
  });

  it('signs a session left idle 16 minutes out at its next request, for good: the old cookie opens nothing, and the audit log says why', async () => {
    const email = `idle-${Date.now()}@example.com`;
    await addUser(gw, email, 'operator');
    const client = new BackOfficeClient(gw.url);
    await client.signIn(email);
    expect((await client.get('/backoffice/users')).status).toBe(200);
    // Idle is counted from the last use, not from sign-in: 14 minutes, a request, 14 more.
    await advanceClock(gw, 14 * 60);
    expect((await client.get('/backoffice/users')).status).toBe(200);
    await advanceClock(gw, 14 * 60);
    expect((await client.get('/backoffice/users')).status).toBe(200);
    const kept_cookie = client.copy();

    await advanceClock(gw, 16 * 60);
    const out = await client.get('/backoffice/users');
    expect([out.status, out.location]).toEqual([303, '/backoffice/?notice=idle']);
    const sign_in = await client.get(out.location!);
    expect(sign_in.status).toBe(200);
    expect(pageText(sign_in.text)).toContain('Signed out after 15 minutes without activity. Sign in again to go on.');
    expect(sign_in.text).toMatch(/<label for="password">Password/);
    expect((await client.get('/backoffice/users')).status).toBe(303);

    // The row is gone: the same cookie sent again (a copy kept aside) is no session at all, and its form changes nothing.
    expect(await lastSeenOf(gw, kept_cookie)).toBeNull();
    const reused = await kept_cookie.get('/backoffice/users');
    expect([reused.status, reused.location]).toEqual([303, '/backoffice/']);
    const forged = await kept_cookie.post('/backoffice/users', { email: `after-idle-${email}`, password: PASSWORD, role: 'operator' });
    expect([forged.status, forged.location]).toEqual([303, '/backoffice/']);
    expect(await gw.gateway.deps.store.backoffice.findUserByEmail(`after-idle-${email}`)).toBeNull();

    // Signing in again works at once, and the end was recorded once, for this user, from this address.
    expect((await client.signIn(email)).status).toBe(303);
    const audit = pageText((await client.get('/backoffice/audit')).text);
    expect(
      audit.match(
        new RegExp(`${email.replace(/\./g, '\\.')} operator sign_out done 127\\.0\\.0\\.1 after 15 minutes without activity`, 'g'),
      )?.length,
    ).toBe(1);
  });

  it('ends a session idle past the time-out when it posts a form, without doing what the form asks', async () => {
    const client = new BackOfficeClient(gw.url);
    await client.signIn('operator@example.com');
    await client.get('/backoffice/merchants');
    await advanceClock(gw, 16 * 60);
    const posted = await client.post('/backoffice/merchants', { merchant_id: 'made-after-idle' });
    expect([posted.status, posted.location]).toEqual([303, '/backoffice/?notice=idle']);
    expect(await gw.gateway.deps.store.merchants.get('made-after-idle')).toBeNull();
  });

  it('still ends a session 8 hours after sign-in however often it is used', async () => {
    const client = new BackOfficeClient(gw.url);
    await client.signIn('operator@example.com');
    // 34 requests 14 minutes apart: 7 hours 56 minutes, never idle.
    for (let i = 1; i <= 34; i += 1) {
      await advanceClock(gw, 14 * 60);
      expect([i, (await client.get('/backoffice/no-such-page')).status]).toEqual([i, 404]);
    }
    await advanceClock(gw, 5 * 60);
    const out = await client.get('/backoffice/overview');
    // Expired, not idle: the row is no longer read, so no idle notice.
    expect([out.status, out.location]).toEqual([303, '/backoffice/']);
  });
});

/**
 * The rows of the page's "Processor events" table: each cell's text, the row's links and its HTML.
 * Only that section is read (up to the next heading), so an empty one gives no rows.
 */
function eventRows(page: string): { cells: string[]; links: string[]; html: string }[] {
  const start = page.indexOf('<h2>Processor events</h2>');
  if (start < 0) return [];
  const rest = page.slice(start + 1);
  const section = rest.slice(0, rest.indexOf('<h2>') < 0 ? undefined : rest.indexOf('<h2>'));
  const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(section)?.[1] ?? '';
  return [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((row) => ({
    cells: [...row[1]!.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((cell) => pageText(cell[1]!)),
    links: [...row[1]!.matchAll(/href="([^"]+)"/g)].map((link) => link[1]!),
    html: row[1]!,
  }));
}

describe.each(storeKinds())('processor webhook events in the back office on %s', (kind) => {
  // Real webhooks through the gateway's webhook path (operations/processor-webhook.ts): a sale's
  // events sent by the fake Checkout.com, and events signed with the gateway's webhook secret
  // for payments the gateway never made, which it records as unmatched.
  let live: LiveCheckout;
  let other_shop: CreatedMerchant;
  withLiveGateway(
    () => startLiveCheckout(kind),
    (started) => (live = started),
  );
  beforeAll(async () => {
    other_shop = await live.gw.createMerchant();
    await addUser(live.gw, 'operator@example.com', 'operator');
    await addUser(live.gw, 'staff@example.com', 'merchant', live.merchant.merchant_id);
    await addUser(live.gw, 'other@example.com', 'merchant', other_shop.merchant_id);
  });

  async function signedIn(email: string): Promise<BackOfficeClient> {
    const client = new BackOfficeClient(live.gw.url);
    expect((await client.signIn(email)).status).toBe(303);
    return client;
  }

  /** A sale on the Checkout.com gateway, approved at once; its webhooks follow (or are held). */
  async function checkoutSale(amount: number): Promise<{ trace_id: number; order_id: string }> {
    const body = liveSale(live, saleA(live.merchant, { gateway: live.gateway, amount }));
    const answer = await live.process(body);
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'approved' });
    return { trace_id: answer.body.trace_id as number, order_id: body.order_id as string };
  }

  /** The sale's events as recorded, newest first: read with the store's own oldest-first list, not the back office's. */
  async function recordedOf(trace_id: number, count: number): Promise<ProcessorEventRow[]> {
    return waitUntil(
      async () => {
        const rows = (await live.gw.gateway.deps.store.merchants.listProcessorEvents(live.gateway, 10_000)).filter(
          (e) => e.trace_id === trace_id,
        );
        return rows.length === count ? rows.reverse() : undefined;
      },
      `${count} events of ${trace_id} recorded`,
      10_000,
    );
  }

  /** A Checkout.com event of a payment this gateway never made, signed with the gateway's webhook secret: recorded unmatched. */
  async function unmatchedEvent(event_id: string, event_type = 'payment_captured'): Promise<void> {
    const body = JSON.stringify({
      id: event_id,
      type: event_type,
      created_on: new Date().toISOString(),
      data: {
        id: `pay_elsewhere_${event_id}`,
        action_id: `act_${event_id}`,
        amount: 1000,
        currency: 'USD',
        response_code: '10000',
        reference: `elsewhere-${event_id}`,
      },
    });
    expect(await live.fake.sendRaw(body, checkoutSignature(body, CHECKOUT_WEBHOOK_SECRET))).toBe(200);
  }

  it("lists a transaction's webhook events newest first for its merchant's staff and operators, says when there are none, and shows another merchant nothing", async () => {
    live.fake.holdEvents(true);
    const { trace_id, order_id } = await checkoutSale(4100);
    const staff = await signedIn('staff@example.com');
    const before = await staff.get(`/backoffice/transactions/${trace_id}`);
    expect(before.status).toBe(200);
    expect(eventRows(before.text)).toEqual([]);
    expect(pageText(before.text)).toContain('Processor events No processor webhook event was matched to this transaction.');

    live.fake.holdEvents(false);
    await live.fake.releaseHeldEvents();
    const sent = live.fake.events.filter((e) => e.payment_id === live.fake.paymentsWithReference(order_id)[0]!.id);
    expect(sent.map((e) => e.type)).toEqual(['payment_approved', 'payment_captured']);
    const recorded = await recordedOf(trace_id, 2);
    // The request had answered approved already: the processor's confirmations change nothing.
    expect(recorded.map((e) => [e.event_type, e.outcome]).sort()).toEqual([
      ['payment_approved', 'unchanged'],
      ['payment_captured', 'unchanged'],
    ]);
    expect(recorded.map((e) => e.event_id).sort()).toEqual(sent.map((e) => e.id).sort());
    // The gateway by its label ("checkout" and the id's first 8, as the operator API named it), never its id.
    const label = `checkout ${live.gateway.slice(0, 8)}`;
    const expected = recorded.map((e) => [iso(e.received_at_ms), label, e.event_type, e.event_id, e.outcome]);

    const page = await staff.get(`/backoffice/transactions/${trace_id}`);
    expect(eventRows(page.text).map((row) => row.cells)).toEqual(expected);
    expect(pageText(page.text)).not.toContain('No processor webhook event was matched');
    // The gateway's page is not theirs: no link to it.
    expect(eventRows(page.text).flatMap((row) => row.links)).toEqual([]);

    const operator = await signedIn('operator@example.com');
    const seen_by_operator = eventRows((await operator.get(`/backoffice/transactions/${trace_id}`)).text);
    expect(seen_by_operator.map((row) => row.cells)).toEqual(expected);
    expect(seen_by_operator.map((row) => row.links)).toEqual(expected.map(() => [`/backoffice/gateways/${live.gateway}`]));

    const other = await signedIn('other@example.com');
    const missing = await other.get('/backoffice/transactions/999999999');
    const refused = await other.get(`/backoffice/transactions/${trace_id}`);
    expect(refused.status).toBe(404);
    // The unknown transaction's page, its id apart.
    expect(pageText(refused.text).replace(`transaction ${trace_id}.`, 'transaction ID.')).toBe(
      pageText(missing.text).replace('transaction 999999999.', 'transaction ID.'),
    );
    for (const e of recorded) expect(refused.text).not.toContain(e.event_id);
  });

  it("shows an operator a gateway's latest 50 events, unmatched ones marked and matched ones linked, filtered by outcome; a merchant's staff cannot reach it", async () => {
    const store = live.gw.gateway.deps.store;
    const run = `${kind}-${Date.now()}`;
    // Older than the sale's events below, and more than a page: the page keeps the newest 50 of all.
    for (let i = 0; i < 55; i += 1) await unmatchedEvent(`evt_unmatched_${run}_${String(i).padStart(2, '0')}`);
    // A processor's text is escaped like any other.
    await unmatchedEvent(`evt_<b>${run}</b>`, 'payment_<i>captured</i>');
    const { trace_id } = await checkoutSale(4200);
    await recordedOf(trace_id, 2);
    const all = (await store.merchants.listProcessorEvents(live.gateway, 10_000)).reverse();
    expect(all.filter((e) => e.outcome === 'unmatched').length).toBeGreaterThanOrEqual(56);
    const cellsOf = (e: ProcessorEventRow) => [
      iso(e.received_at_ms),
      e.event_type,
      e.event_id,
      e.outcome,
      e.trace_id === null ? '—' : String(e.trace_id),
    ];

    const operator = await signedIn('operator@example.com');
    const list = await operator.get('/backoffice/gateways');
    expect(list.text).toContain(`href="/backoffice/gateways/${live.gateway}"`);
    expect(list.text).toContain(`href="/backoffice/gateways/${live.gateway}?outcome=unmatched"`);

    const page = await operator.get(`/backoffice/gateways/${live.gateway}`);
    expect(page.status).toBe(200);
    const rows = eventRows(page.text);
    expect(rows.map((row) => row.cells)).toEqual(all.slice(0, 50).map(cellsOf));
    expect(pageText(page.text)).toContain('The newest 50 are shown.');
    // The sale's events link to it; an unmatched one links nowhere and stands out.
    const matched = rows.filter((row) => row.cells[4] === String(trace_id));
    expect(matched.map((row) => row.links)).toEqual([[`/backoffice/transactions/${trace_id}`], [`/backoffice/transactions/${trace_id}`]]);
    const unmatched_rows = rows.filter((row) => row.cells[3] === 'unmatched');
    expect(unmatched_rows.length).toBe(48);
    for (const row of unmatched_rows) {
      expect(row.links).toEqual([]);
      expect(row.html).toContain('<strong>unmatched</strong>');
    }
    expect(page.text).toContain(`evt_&lt;b&gt;${run}&lt;/b&gt;`);
    expect(page.text).toContain('payment_&lt;i&gt;captured&lt;/i&gt;');
    expect(page.text).not.toContain(`<b>${run}</b>`);

    const only_unmatched = await operator.get(`/backoffice/gateways/${live.gateway}?outcome=unmatched`);
    expect(only_unmatched.status).toBe(200);
    expect(eventRows(only_unmatched.text).map((row) => row.cells)).toEqual(
      all
        .filter((e) => e.outcome === 'unmatched')
        .slice(0, 50)
        .map(cellsOf),
    );
    expect(only_unmatched.text).toMatch(/<option value="unmatched" selected>unmatched<\/option>/);
    const unchanged = await operator.get(`/backoffice/gateways/${live.gateway}?outcome=unchanged`);
    expect(eventRows(unchanged.text).map((row) => row.cells)).toEqual(
      all
        .filter((e) => e.outcome === 'unchanged')
        .slice(0, 50)
        .map(cellsOf),
    );
    expect(eventRows(unchanged.text).map((row) => row.cells[3])).toContain('unchanged');
    const applied = await operator.get(`/backoffice/gateways/${live.gateway}?outcome=applied`);
    expect(eventRows(applied.text)).toEqual([]);
    expect(pageText(applied.text)).toContain('No applied webhook event has come for this gateway.');
    // An empty choice is the form's "any".
    expect(eventRows((await operator.get(`/backoffice/gateways/${live.gateway}?outcome=`)).text).map((row) => row.cells)).toEqual(
      all.slice(0, 50).map(cellsOf),
    );

    for (const bad of ['duplicate', 'UNMATCHED', 'unmatched%00', 'unmatched&outcome=applied']) {
      const refused = await operator.get(`/backoffice/gateways/${live.gateway}?outcome=${bad}`);
      expect([bad, refused.status]).toEqual([bad, 400]);
      expect(pageText(refused.text)).toContain('Outcome: expected one of applied, unchanged, unmatched, ignored.');
      expect(eventRows(refused.text)).toEqual([]);
    }
    const no_such = await operator.get(`/backoffice/gateways/${'0'.repeat(32)}`);
    expect(no_such.status).toBe(404);

    // A merchant's staff, even of the gateway's own merchant: the page that does not exist.
    for (const email of ['staff@example.com', 'other@example.com']) {
      const client = await signedIn(email);
      const missing = await client.get('/backoffice/no-such-page');
      for (const url of [`/backoffice/gateways/${live.gateway}`, `/backoffice/gateways/${live.gateway}?outcome=unmatched`]) {
        const answer = await client.get(url);
        expect([email, url, answer.status]).toEqual([email, url, 404]);
        expect(pageText(answer.text)).toBe(pageText(missing.text));
        expect(answer.text).not.toContain('evt_unmatched_');
      }
    }
  });
});

describe('back-office idle time-out setting', () => {
  it('honours PAYGATE_BACKOFFICE_IDLE_TIMEOUT_MINUTES: 30 keeps a session idle 20 minutes, ends one idle 31, and says 30', async () => {
    // One store is enough: the setting is read once, the same for both (the store's part runs on both above).
    const gw = await startTestGateway('sqlite', { env: { PAYGATE_BACKOFFICE_IDLE_TIMEOUT_MINUTES: '30' } });
    try {
      await addUser(gw, 'thirty@example.com', 'operator');
      const client = new BackOfficeClient(gw.url);
      await client.signIn('thirty@example.com');
      await advanceClock(gw, 20 * 60);
      expect((await client.get('/backoffice/overview')).status).toBe(200);
      await advanceClock(gw, 31 * 60);
      const out = await client.get('/backoffice/overview');
      expect([out.status, out.location]).toEqual([303, '/backoffice/?notice=idle']);
      expect(pageText((await client.get(out.location!)).text)).toContain('Signed out after 30 minutes without activity.');
    } finally {
      await gw.close();
    }
  });
});

describe.runIf(storeKinds().includes('postgres'))('back-office sessions on two instances sharing PostgreSQL', () => {
  let both: TwoInstances;
  let a: TestGateway;
  let b: TestGateway;
  beforeAll(async () => {
    both = await startTwoInstances();
    ({ a, b } = both);
    await addUser(a, 'two@example.com', 'operator');
  });
  afterAll(async () => {
    await both?.close();
  });

  /** Moves both instances' clocks: the offset is shared through the database, and 0 makes B take it up at once. */
  const advanceBoth = async (seconds: number) => {
    await advanceClock(a, seconds);
    await advanceClock(b, 0);
  };

  it('counts a use on one instance for the other, and ends an idle session on both', async () => {
    const on_a = new BackOfficeClient(a.url);
    await on_a.signIn('two@example.com');
    const on_b = on_a.copy(b.url);
    await advanceBoth(10 * 60);
    expect((await on_b.get('/backoffice/overview')).status).toBe(200);
    // 20 minutes after sign-in, 10 after the use B saw: A reads B's write from the row.
    await advanceBoth(10 * 60);
    expect((await on_a.get('/backoffice/overview')).status).toBe(200);
    await advanceBoth(16 * 60);
    const out = await on_b.get('/backoffice/overview');
    expect([out.status, out.location]).toEqual([303, '/backoffice/?notice=idle']);
    // Ended for A too, with the same cookie: the row is gone.
    const on_a_after = await on_a.get('/backoffice/overview');
    expect([on_a_after.status, on_a_after.location]).toEqual([303, '/backoffice/']);
  });
});
