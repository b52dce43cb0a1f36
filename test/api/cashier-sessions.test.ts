// The cashier session calls (POST /api/init-pay-in, init-checkout, init-pay-out,
// init-pay-out-order) through the real HTTP server, on each store: every success and failure
// path, the login links, idempotency on order_id, validation requests, notifications of cashier
// payments, framing headers, and expiry by the sandbox clock.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { verifyBody } from '../../src/domain/signing.js';
import { InitCheckout, InitPayIn, InitPayOut, InitPayOutOrder } from '../../src/http/routes/cashier-sessions.js';
import { sha256Hex } from '../../src/operations/cashier-session.js';
import { nowSeconds, postJson, postSigned, signed } from '../support/client.js';
import { orderId } from '../support/bodies.js';
import {
  CashierCustomer,
  findOrderBody,
  gatewayNow,
  initCheckout,
  initPayIn,
  initPayOut,
  initPayOutOrder,
  openSession,
  textOf,
  withGatewayAndShop,
} from '../support/cashier.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../support/gateway.js';
import type { MerchantReceiver } from '../support/merchant-receiver.js';
import { merchantVerify, signedReply, waitUntil } from '../support/notification-merchant.js';
import { storeKinds } from '../support/stores.js';
import { CLI_ENTRY } from '../support/build.js';

const LOGIN_LINK = /\/cashier\/login\/([A-Za-z0-9_-]{20,})$/;

describe.each(storeKinds())('cashier session calls on %s', (kind) => {
  let gw: TestGateway;
  let shop: MerchantReceiver;
  withGatewayAndShop(kind, ['validation', 'notification'], (started) => ({ gw, shop } = started));

  const CALLS = [
    ['/api/init-pay-in', '1.2', () => initPayIn(gw.merchant, shop.url)],
    ['/api/init-checkout', '1.1', () => initCheckout(gw.merchant, shop.url)],
    ['/api/init-pay-out', '1.1', () => initPayOut(gw.merchant, shop.url)],
    ['/api/init-pay-out-order', '1.1', () => initPayOutOrder(gw.merchant, shop.url)],
  ] as const;

  it.each(CALLS)(
    '%s opens a session: signed answer with redirect_url and auth_token, tokens stored only as hashes',
    async (path, version, body) => {
      const answer = await openSession(gw, path, body());
      expect(answer.http_status).toBe(200);
      expect(answer.body).toMatchObject({ status: 0, description: 'Cashier session opened', version });
      expect(Object.keys(answer.body).sort()).toEqual([
        'auth_token',
        'description',
        'redirect_url',
        'signature',
        'status',
        'timestamp',
        'version',
      ]);
      expect(verifyBody(answer.body, gw.merchant.secret)).toBe(true);
      const redirect_url = answer.body.redirect_url as string;
      const auth_token = answer.body.auth_token as string;
      expect(redirect_url.startsWith(`${gw.url}/cashier/login/`)).toBe(true);
      expect(redirect_url.length).toBeLessThanOrEqual(256);
      expect(auth_token).toMatch(/^[A-Za-z0-9_-]{32}$/);
      const login_token = LOGIN_LINK.exec(redirect_url)![1]!;
      // Nothing in the database holds either token in clear.
      const store = gw.gateway.deps.store;
      const session = await store.cashier.findSessionByAuthToken(
        (await import('../../src/operations/cashier-session.js')).sha256Hex(auth_token),
      );
      expect(session).not.toBeNull();
      expect(JSON.stringify(session)).not.toContain(auth_token);
      expect(JSON.stringify(session)).not.toContain(login_token);
      expect(JSON.stringify(session)).not.toContain('Jane');
    },
  );

  it('the redirect_url logs in once: HttpOnly SameSite=Lax cookie, then the cashier page; a second use is refused', async () => {
    const answer = await openSession(gw, '/api/init-checkout', initCheckout(gw.merchant, shop.url));
    const first = await fetch(answer.body.redirect_url as string, { redirect: 'manual' });
    expect(first.status).toBe(303);
    expect(first.headers.get('location')).toBe('/cashier');
    const cookie = first.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^paygate_cashier=[A-Za-z0-9_-]{32}; Path=\/cashier; HttpOnly; Max-Age=\d+; SameSite=Lax$/);
    const page = await fetch(`${gw.url}/cashier`, { headers: { cookie: cookie.split(';')[0]! } });
    expect(page.status).toBe(200);
    expect(textOf(await page.text())).toContain('19.99 USD');
    const again = await fetch(answer.body.redirect_url as string, { redirect: 'manual' });
    expect(again.status).toBe(410);
    expect(again.headers.get('set-cookie')).toBeNull();
    expect(textOf(await again.text())).toContain('This link has expired or was already used');
  });

  it("the auth_token logs in (GET ?auth_token= and POST form) until the session's first payment", async () => {
    const answer = await openSession(gw, '/api/init-checkout', initCheckout(gw.merchant, shop.url));
    const auth_token = answer.body.auth_token as string;
    const by_get = await fetch(`${gw.url}/cashier/login?auth_token=${auth_token}`, { redirect: 'manual' });
    expect(by_get.status).toBe(303);
    expect(by_get.headers.get('set-cookie')).toMatch(/^paygate_cashier=/);
    const by_post = await fetch(`${gw.url}/cashier/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `auth_token=${auth_token}`,
    });
    expect(by_post.status).toBe(303);
    const wrong = await fetch(`${gw.url}/cashier/login?auth_token=${'x'.repeat(32)}`, { redirect: 'manual' });
    expect(wrong.status).toBe(410);
    // A payment writes the token into the transaction (its notifications carry it): from then on it opens nothing.
    const customer = new CashierCustomer(gw.url);
    const page = await customer.get(`${gw.url}/cashier/login?auth_token=${auth_token}`);
    const paid = await customer.payByCard(page.text, { cvv: '000' });
    expect(paid.status).toBe(303);
    const after = await fetch(`${gw.url}/cashier/login?auth_token=${auth_token}`, { redirect: 'manual' });
    expect(after.status).toBe(410);
  });

  it('idempotency on order_id: the same init-checkout again answers the same session; other content is Duplicate order_id', async () => {
    const body = initCheckout(gw.merchant, shop.url);
    const first = await openSession(gw, '/api/init-checkout', body);
    const again = await openSession(gw, '/api/init-checkout', { ...body, timestamp: nowSeconds() + 1 });
    expect(again.body).toMatchObject({ status: 0, auth_token: first.body.auth_token });
    // A fresh one-time link (the first may have been used), both working while unused.
    expect(again.body.redirect_url).not.toBe(first.body.redirect_url);
    for (const link of [first.body.redirect_url, again.body.redirect_url] as string[]) {
      expect((await fetch(link, { redirect: 'manual' })).status).toBe(303);
    }
    const different = await openSession(gw, '/api/init-checkout', { ...body, amount: 2000 });
    expect(different.body).toMatchObject({ status: 12, description: 'Duplicate order_id' });
    expect(Object.keys(different.body).sort()).toEqual(['description', 'signature', 'status', 'timestamp', 'version']);
    // One order per order_id and merchant, whichever call opened it.
    const twin = await openSession(gw, '/api/init-pay-out-order', initPayOutOrder(gw.merchant, shop.url, { order_id: body.order_id }));
    expect(twin.body).toMatchObject({ status: 12 });
    const payout_order = initPayOutOrder(gw.merchant, shop.url);
    const po1 = await openSession(gw, '/api/init-pay-out-order', payout_order);
    const po2 = await openSession(gw, '/api/init-pay-out-order', { ...payout_order, timestamp: nowSeconds() });
    expect(po2.body).toMatchObject({ status: 0, auth_token: po1.body.auth_token });
  });

  it('init-pay-in and init-pay-out are not idempotent on anything: each call opens a new session', async () => {
    const body = initPayIn(gw.merchant, shop.url);
    const a = await openSession(gw, '/api/init-pay-in', body);
    const b = await openSession(gw, '/api/init-pay-in', { ...body, timestamp: nowSeconds() });
    expect(a.body.status).toBe(0);
    expect(b.body.auth_token).not.toBe(a.body.auth_token);
  });

  const FIELD_CASES: [string, () => Record<string, unknown>, RegExp][] = [
    ['/api/init-pay-in', () => initPayIn(gw.merchant, shop.url, { validation_url: undefined }), /^Missing required field: validation_url$/],
    ['/api/init-pay-in', () => initPayIn(gw.merchant, shop.url, { pin: undefined }), /^Missing required field: pin$/],
    ['/api/init-pay-in', () => initPayIn(gw.merchant, shop.url, { version: '1.1' }), /^Invalid field: version/],
    ['/api/init-pay-in', () => initPayIn(gw.merchant, shop.url, { phone: 12345678 }), /^Invalid field: phone \(expected 9 to 20 digits/],
    ['/api/init-pay-in', () => initPayIn(gw.merchant, shop.url, { state: 'ABCD' }), /^Invalid field: state/],
    ['/api/init-pay-in', () => initPayIn(gw.merchant, shop.url, { locale: 'english' }), /^Invalid field: locale/],
    ['/api/init-pay-in', () => initPayIn(gw.merchant, shop.url, { payment_method: 'x'.repeat(51) }), /^Invalid field: payment_method/],
    ['/api/init-pay-in', () => initPayIn(gw.merchant, shop.url, { profile: 100 }), /^Invalid field: profile/],
    ['/api/init-pay-in', () => initPayIn(gw.merchant, shop.url, { validation_url: 'ftp://x' }), /^Invalid field: validation_url/],
    [
      '/api/init-pay-in',
      () => initPayIn(gw.merchant, shop.url, { payment_method: 'bank' }),
      /^Invalid field: payment_method \(expected card or ewallet\)$/,
    ],
    ['/api/init-checkout', () => initCheckout(gw.merchant, shop.url, { order_id: undefined }), /^Missing required field: order_id$/],
    ['/api/init-checkout', () => initCheckout(gw.merchant, shop.url, { amount: undefined }), /^Missing required field: amount$/],
    ['/api/init-checkout', () => initCheckout(gw.merchant, shop.url, { amount: 0 }), /^Invalid field: amount/],
    ['/api/init-checkout', () => initCheckout(gw.merchant, shop.url, { frontend: 'f'.repeat(51) }), /^Invalid field: frontend/],
    ['/api/init-checkout', () => initCheckout(gw.merchant, shop.url, { payment_method: 'x'.repeat(11) }), /^Invalid field: payment_method/],
    ['/api/init-checkout', () => initCheckout(gw.merchant, shop.url, { phone: 12345 }), /^Invalid field: phone/],
    ['/api/init-checkout', () => initCheckout(gw.merchant, shop.url, { version: '1.2' }), /^Invalid field: version/],
    [
      '/api/init-pay-out',
      () => initPayOut(gw.merchant, shop.url, { validation_url: undefined }),
      /^Missing required field: validation_url$/,
    ],
    ['/api/init-pay-out', () => initPayOut(gw.merchant, shop.url, { balance: -1 }), /^Invalid field: balance/],
    ['/api/init-pay-out', () => initPayOut(gw.merchant, shop.url, { payment_method: 'x'.repeat(33) }), /^Invalid field: payment_method/],
    [
      '/api/init-pay-out',
      () => initPayOut(gw.merchant, shop.url, { payment_method: 'bank' }),
      /^Invalid field: payment_method \(expected card, ewallet or bank_account\)$/,
    ],
    ['/api/init-pay-out-order', () => initPayOutOrder(gw.merchant, shop.url, { amount: undefined }), /^Missing required field: amount$/],
    [
      '/api/init-pay-out-order',
      () => initPayOutOrder(gw.merchant, shop.url, { return_url: undefined }),
      /^Missing required field: return_url$/,
    ],
  ];

  it.each(FIELD_CASES)('%s refuses a bad field with status 10 naming it (%#)', async (path, body, description) => {
    const answer = await openSession(gw, path, body());
    expect(answer.body).toMatchObject({ status: 10 });
    expect(answer.body.description).toMatch(description);
    expect(verifyBody(answer.body, gw.merchant.secret)).toBe(true);
  });

  const SCHEMAS = {
    '/api/init-pay-in': InitPayIn.schema,
    '/api/init-checkout': InitCheckout.schema,
    '/api/init-pay-out': InitPayOut.schema,
    '/api/init-pay-out-order': InitPayOutOrder.schema,
  } as const;

  it.each(CALLS)(
    '%s: every bad field gets a description of at most 75 characters (spec §2.3) that names the field',
    async (path, _version, body) => {
      const schema = SCHEMAS[path];
      const required = new Set(schema.required ?? []);
      const fields = Object.keys(schema.properties).filter((name) => name !== 'signature');
      expect(fields.length).toBeGreaterThan(20);
      const seen: string[] = [];
      for (const field of fields) {
        // (A negative timestamp is well-formed: it is answered as expired.)
        const bad_values: unknown[] = field === 'timestamp' ? [true, 'x'.repeat(300)] : [true, 'x'.repeat(300), -5];
        if (required.has(field)) bad_values.push(undefined);
        for (const value of bad_values) {
          const answer = await openSession(gw, path, { ...body(), [field]: value });
          const what = `${field} = ${JSON.stringify(value)?.slice(0, 12)}`;
          expect(answer.body.status, what).toBe(10);
          const description = answer.body.description as string;
          expect(description.length, `${what}: ${description}`).toBeLessThanOrEqual(75);
          expect(description, what).toContain(field);
          seen.push(description);
        }
      }
      // The fields whose dictionary wording is longer are answered in the short one, rule included.
      if (path !== '/api/init-pay-in') expect(seen).toContain('Invalid field: locale (expected a language code: en, de-DE, es_ES)');
      expect(seen).toContain('Invalid field: currency (expected an ISO 4217 code such as USD)');
      expect(seen).toContain('Invalid field: notification_url (expected an http(s) URL, max 256 chars)');
      // A nested value is refused before the route's own checks, also within 75 characters, even under a long unknown key.
      for (const key of ['variable1', 'k'.repeat(90)]) {
        // Refused before the signature is checked, so it needs none that is valid (nested values cannot be signed).
        const answer = await postJson(gw.url, path, { ...body(), [key]: { nested: true }, signature: '0'.repeat(96) });
        expect(answer.body.status).toBe(10);
        const description = answer.body.description as string;
        expect(description.length, description).toBeLessThanOrEqual(75);
        expect(description).toContain(key.slice(0, 31));
      }
      // The answers of a known field's problem that are not field errors fit too, and say what is wrong.
      for (const [overrides, status, named] of [
        [{ currency: 'NZD' }, 15, 'gateway'],
        [{ gateway: 'g'.repeat(32) }, 15, 'gateway'],
        [{ gateway: 'g'.repeat(32), currency: 'NZD' }, 15, 'gateway'],
        [{ payment_method: 'bank' }, 10, 'payment_method'],
      ] as const) {
        const answer = await openSession(gw, path, { ...body(), ...overrides });
        expect(answer.body.status, JSON.stringify(overrides)).toBe(status);
        expect((answer.body.description as string).length, answer.body.description as string).toBeLessThanOrEqual(75);
        expect(answer.body.description).toContain(named);
      }
    },
  );

  it('each call is identified by its own field: frontend for init-checkout, init-pay-out, init-pay-out-order; application_key for init-pay-in', async () => {
    const key = gw.merchant.application_key;
    const frontend = gw.merchant.frontend;
    const identityOf = async (answer: { body: Record<string, unknown> }) => {
      expect(answer.body.status).toBe(0);
      const session = (await gw.gateway.deps.store.cashier.findSessionByAuthToken(sha256Hex(answer.body.auth_token as string)))!;
      return [session.identity_kind, session.identity_value];
    };
    // A valid application_key next to the frontend changes nothing: the session is the frontend's.
    const checkout = initCheckout(gw.merchant, shop.url, { application_key: key });
    const opened = await openSession(gw, '/api/init-checkout', checkout);
    expect(await identityOf(opened)).toEqual(['frontend', frontend]);
    expect(
      await identityOf(await openSession(gw, '/api/init-pay-out', initPayOut(gw.merchant, shop.url, { application_key: key }))),
    ).toEqual(['frontend', frontend]);
    expect(
      await identityOf(await openSession(gw, '/api/init-pay-out-order', initPayOutOrder(gw.merchant, shop.url, { application_key: key }))),
    ).toEqual(['frontend', frontend]);
    // The other field is ignored, not checked: an unknown one is no error...
    expect(
      await identityOf(await openSession(gw, '/api/init-checkout', initCheckout(gw.merchant, shop.url, { application_key: 'not-ours' }))),
    ).toEqual(['frontend', frontend]);
    expect(await identityOf(await openSession(gw, '/api/init-pay-in', initPayIn(gw.merchant, shop.url, { frontend: 'not-ours' })))).toEqual(
      ['application_key', key],
    );
    expect(await identityOf(await openSession(gw, '/api/init-pay-in', initPayIn(gw.merchant, shop.url, { frontend })))).toEqual([
      'application_key',
      key,
    ]);
    // ...and a valid one does not stand in for the call's own field when that is unknown.
    for (const [path, bad] of [
      ['/api/init-checkout', initCheckout(gw.merchant, shop.url, { frontend: 'not-ours', application_key: key })],
      ['/api/init-pay-out', initPayOut(gw.merchant, shop.url, { frontend: 'not-ours', application_key: key })],
      ['/api/init-pay-out-order', initPayOutOrder(gw.merchant, shop.url, { frontend: 'not-ours', application_key: key })],
      ['/api/init-pay-in', initPayIn(gw.merchant, shop.url, { application_key: 'not-ours', frontend })],
    ] as const) {
      expect((await openSession(gw, path, bad)).body, path).toMatchObject({ status: 11 });
    }

    // The checkout opened with both fields is found by its frontend and notified as version 1.1 with frontend.
    const found = await postSigned(gw.url, '/api/find-order', findOrderBody(gw.merchant, checkout.order_id as string), gw.merchant.secret);
    expect(found.body).toMatchObject({ status: 3, description: 'Order is still open' });
    const customer = new CashierCustomer(gw.url);
    const page = await customer.login(opened.body.redirect_url as string);
    expect((await customer.payByCard(page.text)).status).toBe(303);
    const notified = await waitUntil(
      () =>
        shop
          .requestsTo('/notify')
          .map((r) => r.json as Record<string, unknown>)
          .find((n) => n.order_id === checkout.order_id && n.transaction_status === 'approved'),
      'the notification',
    );
    expect(notified).toMatchObject({ version: '1.1', frontend });
    expect(notified).not.toHaveProperty('application_key');
    const paid = await postSigned(gw.url, '/api/find-order', findOrderBody(gw.merchant, checkout.order_id as string), gw.merchant.secret);
    expect(paid.body).toMatchObject({ status: 0, order_status: 'approved', frontend, version: '1.1' });
    expect(paid.body).not.toHaveProperty('application_key');
  });

  it('the same init-checkout / init-pay-out-order again for a paid order answers 24 Order closed, with no login link', async () => {
    const body = initCheckout(gw.merchant, shop.url);
    const first = await openSession(gw, '/api/init-checkout', body);
    const customer = new CashierCustomer(gw.url);
    const paid = await customer.payByCard((await customer.login(first.body.redirect_url as string)).text);
    expect(textOf((await customer.get(paid.location!)).text)).toContain('Payment approved');
    const again = await openSession(gw, '/api/init-checkout', { ...body, timestamp: nowSeconds() });
    expect(again.body).toMatchObject({ status: 24, description: 'Order closed: this order_id is already paid', version: '1.1' });
    expect(Object.keys(again.body).sort()).toEqual(['description', 'signature', 'status', 'timestamp', 'version']);
    expect(verifyBody(again.body, gw.merchant.secret)).toBe(true);
    // Other content for the same order_id is still a duplicate.
    expect((await openSession(gw, '/api/init-checkout', { ...body, amount: 1, timestamp: nowSeconds() })).body).toMatchObject({
      status: 12,
    });

    const order = initPayOutOrder(gw.merchant, shop.url, { payment_method: 'card' });
    const opened = await openSession(gw, '/api/init-pay-out-order', order);
    const payee = new CashierCustomer(gw.url);
    const form = await payee.login(opened.body.redirect_url as string);
    const paid_out = await payee.post('/cashier/pay', { method: 'card', card_number: '4111111111111111', card_exp: '12/35' }, form.text);
    expect(textOf(paid_out.text)).toContain('Withdrawal approved');
    expect((await openSession(gw, '/api/init-pay-out-order', { ...order, timestamp: nowSeconds() })).body).toMatchObject({
      status: 24,
      description: 'Order closed: this order_id is already paid',
    });
  });

  it('accepts the per-endpoint lengths: a 3-character state on init-*, a 6-digit phone on init-checkout, a 9-digit phone on init-pay-in', async () => {
    expect(
      (await openSession(gw, '/api/init-checkout', initCheckout(gw.merchant, shop.url, { state: 'NSW', phone: 123456 }))).body.status,
    ).toBe(0);
    expect(
      (await openSession(gw, '/api/init-pay-in', initPayIn(gw.merchant, shop.url, { state: 'NSW', phone: '123456789' }))).body.status,
    ).toBe(0);
    expect(
      (await openSession(gw, '/api/init-pay-out', initPayOut(gw.merchant, shop.url, { payment_method: 'ewallet', locale: 'de-DE' }))).body
        .status,
    ).toBe(0);
  });

  it.each(CALLS)(
    '%s: bad signature 2, expired timestamp 1, unknown merchant or identity 11, currency without gateway 15',
    async (path, _version, body) => {
      const bad_signature = await postJson(gw.url, path, { ...body(), signature: 'a'.repeat(96) });
      expect(bad_signature.body).toMatchObject({ status: 2, description: expect.stringMatching(/^Invalid signature/) });
      const expired = await openSession(gw, path, { ...body(), timestamp: nowSeconds() - 120 });
      expect(expired.body).toMatchObject({ status: 1, description: 'Timestamp expired' });
      const identity = path === '/api/init-pay-in' ? { application_key: 'not-ours' } : { frontend: 'not-ours' };
      expect((await openSession(gw, path, { ...body(), ...identity })).body).toMatchObject({ status: 11 });
      const unknown_merchant = await postJson(gw.url, path, signed({ ...body(), merchant_id: 'nobody-here' }, 'whatever-secret'));
      expect(unknown_merchant.body).toMatchObject({ status: 11 });
      expect(unknown_merchant.body.signature).toBeUndefined();
      expect((await openSession(gw, path, { ...body(), currency: 'NZD' })).body).toMatchObject({ status: 15 });
      expect((await openSession(gw, path, { ...body(), gateway: 'f'.repeat(32) })).body).toMatchObject({ status: 15 });
    },
  );

  it('a cashier card payment is an ordinary stored sale whose notification carries auth_token and the order_id', async () => {
    const body = initCheckout(gw.merchant, shop.url, { variable1: 'v-one' });
    const answer = await openSession(gw, '/api/init-checkout', body);
    const customer = new CashierCustomer(gw.url);
    const page = await customer.login(answer.body.redirect_url as string);
    expect(page.status).toBe(200);
    const paid = await customer.payByCard(page.text);
    expect(paid.status).toBe(303);
    expect(paid.location).toBe('/cashier/attempt/1');
    const result = await customer.get(paid.location!);
    expect(textOf(result.text)).toContain('Payment approved');
    const notified = await waitUntil(
      () =>
        shop
          .requestsTo('/notify')
          .map((r) => r.json as Record<string, unknown>)
          .find((n) => n.order_id === body.order_id),
      'the notification',
    );
    expect(notified).toMatchObject({
      transaction_type: 'sale',
      transaction_status: 'approved',
      order_id: body.order_id,
      auth_token: answer.body.auth_token,
      frontend: gw.merchant.frontend,
      amount: 1999,
      currency: 'USD',
      card_number: '411111******1111',
      variable1: 'v-one',
      version: '1.1',
    });
    expect(merchantVerify(notified, gw.merchant.secret)).toBe(true);
    const row = await gw.gateway.deps.store.transactions.get(notified.trace_id as number);
    expect(row).toMatchObject({ status: 'approved', cashier_order_id: body.order_id, transaction_type: 'sale' });
    expect(row!.order_id).toMatch(/^cashier-session:[0-9a-f]{32}:attempt:1$/);
    // A refund of it works like for any sale.
    const refund = await postSigned(
      gw.url,
      '/api/process',
      {
        merchant_id: gw.merchant.merchant_id,
        frontend: gw.merchant.frontend,
        transaction_type: 'refund',
        order_id: orderId('refund'),
        reference_id: row!.trace_id,
        amount: 500,
        currency: 'USD',
        card_number: '4111111111111111',
        card_exp: '12/2035',
        pin: row!.pin,
        email: 'jane@example.com',
        requester_ip: '203.0.113.7',
        country: 'GB',
        first_name: 'Jane',
        last_name: 'Doe',
        state: 'LN',
        zip: 'SW1A 1AA',
        timestamp: nowSeconds(),
        version: '1.1',
      },
      gw.merchant.secret,
    );
    expect(refund.body).toMatchObject({ status: 0, transaction_status: 'approved' });
  });

  it('init-pay-in: a validation request (signed, decisions §11) precedes the deposit; its notification carries auth_token and the generated order_id', async () => {
    const body = initPayIn(gw.merchant, shop.url);
    const answer = await openSession(gw, '/api/init-pay-in', body);
    const customer = new CashierCustomer(gw.url);
    const page = await customer.login(answer.body.redirect_url as string);
    const paid = await customer.payByCard(page.text, { amount: '12.34' });
    expect(paid.status).toBe(303);
    const validation = shop
      .requestsTo('/validate')
      .map((r) => r.json as Record<string, unknown>)
      .find((v) => v.auth_token === answer.body.auth_token)!;
    expect(validation).toMatchObject({
      merchant_id: gw.merchant.merchant_id,
      application_key: gw.merchant.application_key,
      pin: body.pin,
      transaction_type: 'sale',
      transaction_status: 'pending',
      amount: 1234,
      currency: 'USD',
      payment_method: 'card',
      version: '1.2',
    });
    expect(Object.keys(validation).sort()).toEqual([
      'amount',
      'application_key',
      'auth_token',
      'currency',
      'merchant_id',
      'order_id',
      'payment_method',
      'pin',
      'signature',
      'timestamp',
      'transaction_status',
      'transaction_type',
      'version',
    ]);
    expect(merchantVerify(validation, gw.merchant.secret)).toBe(true);
    const notified = await waitUntil(
      () =>
        shop
          .requestsTo('/notify')
          .map((r) => r.json as Record<string, unknown>)
          .find((n) => n.order_id === validation.order_id),
      'the notification',
    );
    expect(notified).toMatchObject({
      transaction_status: 'approved',
      auth_token: answer.body.auth_token,
      application_key: gw.merchant.application_key,
      amount: 1234,
    });
  });

  it('a refused, unreachable or badly signed validation creates no transaction and shows why', async () => {
    const cases: [string, Parameters<MerchantReceiver['setReply']>[1], RegExp][] = [
      ['/validate-refuse', () => signedReply(gw.merchant.secret, 7, 'Deposit limit reached for today'), /Deposit limit reached for today/],
      ['/validate-unsigned', { status: 200, body: { status: 0, description: 'OK' } }, /could not confirm this payment/],
      ['/validate-wrong-key', () => signedReply('another-secret', 0), /could not confirm this payment/],
      ['/validate-garbage', { status: 200, body: null, raw: 'OK!' }, /could not confirm this payment/],
      ['/validate-500', { status: 500, body: {} }, /could not confirm this payment/],
      ['/validate-minus', () => signedReply(gw.merchant.secret, -1, 'db down'), /could not confirm this payment/],
    ];
    for (const [path, reply_for, shown] of cases) {
      shop.setReply(path, reply_for);
      const answer = await openSession(gw, '/api/init-pay-in', initPayIn(gw.merchant, shop.url, { validation_url: `${shop.url}${path}` }));
      const customer = new CashierCustomer(gw.url);
      const page = await customer.login(answer.body.redirect_url as string);
      const refused = await customer.payByCard(page.text, { amount: '10' });
      expect(refused.status, path).toBe(200);
      expect(textOf(refused.text), path).toMatch(shown);
      expect(refused.text, path).not.toContain('4111111111111111');
      const session = (await gw.gateway.deps.store.cashier.findSessionByAuthToken(
        (await import('../../src/operations/cashier-session.js')).sha256Hex(answer.body.auth_token as string),
      ))!;
      expect(await gw.gateway.deps.store.cashier.listTransactions(session.session_id), path).toEqual([]);
    }
    // Unreachable: nothing listens there.
    const answer = await openSession(
      gw,
      '/api/init-pay-out',
      initPayOut(gw.merchant, shop.url, { validation_url: 'http://127.0.0.1:9/validate' }),
    );
    const customer = new CashierCustomer(gw.url);
    const choice = await customer.login(answer.body.redirect_url as string);
    expect(textOf(choice.text)).toContain('How do you want to receive the money?');
    const page = await customer.get('/cashier?method=card');
    const refused = await customer.payByCard(page.text, { amount: '10' });
    expect(textOf(refused.text)).toMatch(/could not confirm this payment/);
  });

  it('a withdrawal is bounded by the balance sent and recorded as a payout with its notification', async () => {
    const body = initPayOut(gw.merchant, shop.url, { balance: 5000 });
    const answer = await openSession(gw, '/api/init-pay-out', body);
    const customer = new CashierCustomer(gw.url);
    expect(textOf((await customer.login(answer.body.redirect_url as string)).text)).toContain('Available to withdraw 50.00 USD');
    const page = await customer.get('/cashier?method=card');
    const too_much = await customer.post(
      '/cashier/pay',
      { method: 'card', amount: '50.01', card_number: '4111111111111111', card_exp: '12/35' },
      page.text,
      false,
    );
    expect(too_much.status).toBe(422);
    expect(textOf(too_much.text)).toContain('This is more than you can withdraw (50.00 USD)');
    const paid = await customer.post(
      '/cashier/pay',
      { method: 'card', amount: '30', card_number: '4111111111111111', card_exp: '12/35' },
      page.text,
    );
    expect(textOf(paid.text)).toContain('Withdrawal approved');
    const validation = shop
      .requestsTo('/validate')
      .map((r) => r.json as Record<string, unknown>)
      .find((v) => v.auth_token === answer.body.auth_token)!;
    expect(validation).toMatchObject({
      transaction_type: 'payout',
      transaction_status: 'requested',
      frontend: gw.merchant.frontend,
      amount: 3000,
      version: '1.1',
    });
    const notified = await waitUntil(
      () =>
        shop
          .requestsTo('/notify')
          .map((r) => r.json as Record<string, unknown>)
          .find((n) => n.order_id === validation.order_id),
      'the payout notification',
    );
    expect(notified).toMatchObject({
      transaction_type: 'payout',
      transaction_status: 'approved',
      amount: 3000,
      auth_token: answer.body.auth_token,
    });
    const next = await customer.get('/cashier');
    expect(textOf(next.text)).toContain('Available to withdraw 20.00 USD');
  });

  it("init-pay-in pages may be framed only by the application's origins; other pages by nobody", async () => {
    const unauthorized = await fetch(
      `${gw.url}/operator/merchants/${gw.merchant.merchant_id}/applications/${gw.merchant.application_key}/frame-origins`,
      {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ frame_origins: ['https://shop.example'] }),
      },
    );
    expect(unauthorized.status).toBe(401);
    const put = (frame_origins: unknown) =>
      fetch(`${gw.url}/operator/merchants/${gw.merchant.merchant_id}/applications/${gw.merchant.application_key}/frame-origins`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_TOKEN}` },
        body: JSON.stringify({ frame_origins }),
      });
    expect((await put(['https://shop.example/path'])).status).toBe(400);
    expect((await put(['javascript:alert(1)'])).status).toBe(400);
    expect((await put(["https://a.example 'unsafe-inline'"])).status).toBe(400);
    const set = await put(['https://shop.example', 'http://localhost:8080/']);
    expect(set.status).toBe(200);
    expect(await set.json()).toMatchObject({ status: 0, frame_origins: ['https://shop.example', 'http://localhost:8080'] });
    const missing = await fetch(`${gw.url}/operator/merchants/${gw.merchant.merchant_id}/applications/nope/frame-origins`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(missing.status).toBe(404);

    const pay_in = await openSession(gw, '/api/init-pay-in', initPayIn(gw.merchant, shop.url));
    const customer = new CashierCustomer(gw.url);
    const page = await customer.login(pay_in.body.redirect_url as string);
    expect(page.headers.get('content-security-policy')).toContain('frame-ancestors https://shop.example http://localhost:8080');
    expect(page.headers.get('x-frame-options')).toBeNull();
    const checkout = await openSession(gw, '/api/init-checkout', initCheckout(gw.merchant, shop.url));
    const other = await new CashierCustomer(gw.url).login(checkout.body.redirect_url as string);
    expect(other.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(other.headers.get('x-frame-options')).toBe('DENY');
    expect(other.headers.get('referrer-policy')).toBe('no-referrer');
    expect(other.headers.get('cache-control')).toBe('no-store');
    expect((await put([])).status).toBe(200);
    const denied = await new CashierCustomer(gw.url).login(
      (await openSession(gw, '/api/init-pay-in', initPayIn(gw.merchant, shop.url))).body.redirect_url as string,
    );
    expect(denied.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(denied.headers.get('x-frame-options')).toBe('DENY');
  });

  it("forms need the session's CSRF token and the cookie", async () => {
    const answer = await openSession(gw, '/api/init-checkout', initCheckout(gw.merchant, shop.url));
    const customer = new CashierCustomer(gw.url);
    const page = await customer.login(answer.body.redirect_url as string);
    const forged = await customer.post(
      '/cashier/pay',
      { csrf: 'forged', method: 'card', card_number: '4111111111111111', card_exp: '12/35', cvv: '568' },
      null,
      false,
    );
    expect(forged.status).toBe(403);
    const stranger = new CashierCustomer(gw.url);
    const no_cookie = await stranger.post(
      '/cashier/pay',
      { method: 'card', card_number: '4111111111111111', card_exp: '12/35', cvv: '568' },
      page.text,
      false,
    );
    expect(no_cookie.status).toBe(401);
    const session = (await gw.gateway.deps.store.cashier.findSessionByAuthToken(
      (await import('../../src/operations/cashier-session.js')).sha256Hex(answer.body.auth_token as string),
    ))!;
    expect(await gw.gateway.deps.store.cashier.listTransactions(session.session_id)).toEqual([]);
  });

  it('keeps tokens out of the log', async () => {
    const answer = await openSession(gw, '/api/init-pay-in', initPayIn(gw.merchant, shop.url));
    const customer = new CashierCustomer(gw.url);
    await customer.login(answer.body.redirect_url as string);
    await fetch(`${gw.url}/cashier/login?auth_token=${answer.body.auth_token as string}`, { redirect: 'manual' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const log = fs.readFileSync(gw.log_file, 'utf8');
    expect(log).toContain('/cashier/login/[redacted]');
    expect(log).not.toContain(LOGIN_LINK.exec(answer.body.redirect_url as string)![1]!);
    expect(log).not.toContain(answer.body.auth_token as string);
    expect(log).not.toContain(customer.cookie!.split('=')[1]!);
  });

  it('the sandbox clock expires sessions, links, auth_tokens and orders at once (own gateway)', async () => {
    const clock_gw = await startTestGateway(kind);
    try {
      const checkout = initCheckout(clock_gw.merchant, shop.url);
      const opened = await openSession(clock_gw, '/api/init-checkout', checkout, clock_gw.merchant);
      const pay_in = await openSession(clock_gw, '/api/init-pay-in', initPayIn(clock_gw.merchant, shop.url), clock_gw.merchant);
      const logged_in = new CashierCustomer(clock_gw.url);
      expect((await logged_in.login(pay_in.body.redirect_url as string)).status).toBe(200);
      const moved = await postJson(clock_gw.url, '/sandbox/clock', { advance_seconds: 901 }, { authorization: `Bearer ${ADMIN_TOKEN}` });
      expect(moved.http_status).toBe(200);
      expect((await fetch(opened.body.redirect_url as string, { redirect: 'manual' })).status).toBe(410);
      expect(
        (await fetch(`${clock_gw.url}/cashier/login?auth_token=${opened.body.auth_token as string}`, { redirect: 'manual' })).status,
      ).toBe(410);
      const ended = await logged_in.get('/cashier');
      expect(textOf(ended.text)).toContain('Your session has ended');
      expect(ended.text).not.toContain('name="csrf"');
      expect(textOf((await logged_in.get('/cashier?method=card')).text)).toContain('Your session has ended');
      // The same init-checkout again, before or after due work closed the order: no login link that would not work.
      const replayed = await openSession(
        clock_gw,
        '/api/init-checkout',
        { ...checkout, timestamp: gatewayNow(clock_gw) },
        clock_gw.merchant,
      );
      expect(replayed.body).toMatchObject({ status: 24, description: 'Order closed: this order_id has expired' });
      expect(replayed.body).not.toHaveProperty('redirect_url');
      const found = await postSigned(
        clock_gw.url,
        '/api/find-order',
        findOrderBody(clock_gw.merchant, checkout.order_id as string, { timestamp: gatewayNow(clock_gw) }),
        clock_gw.merchant.secret,
      );
      expect(found.body).toMatchObject({ status: 4, description: 'Order timed out with no transactions' });
      const closed = await clock_gw.gateway.deps.store.cashier.findSessionByOrder(
        clock_gw.merchant.merchant_id,
        checkout.order_id as string,
      );
      expect(closed).toMatchObject({ order_status: 'rejected' });
      expect(
        (await openSession(clock_gw, '/api/init-checkout', { ...checkout, timestamp: gatewayNow(clock_gw) }, clock_gw.merchant)).body,
      ).toMatchObject({ status: 24, description: 'Order closed: this order_id has expired' });
    } finally {
      await clock_gw.close();
    }
  });
});

describe('paygate merchant create --frame-origin', () => {
  it("sets the application's frame origins, and refuses a bad one before creating anything", async () => {
    const { spawnSync } = await import('node:child_process');
    const os = await import('node:os');
    const path = await import('node:path');
    const { openSqliteStore } = await import('../../src/store/open.js');
    const data_dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-cli-frame-'));
    const paygate = (args: string[]) =>
      spawnSync(process.execPath, [CLI_ENTRY, ...args], {
        env: { ...process.env, PAYGATE_DATA_DIR: data_dir },
        encoding: 'utf8',
        timeout: 30_000,
      });
    try {
      const bad = paygate(['merchant', 'create', '--merchant-id', 'framed-shop', '--frame-origin', 'https://shop.example/cart']);
      expect(bad.status).toBe(2);
      expect(bad.stderr).toMatch(/--frame-origin must be an http\(s\) origin/);
      const created = paygate([
        'merchant',
        'create',
        '--merchant-id',
        'framed-shop',
        '--application-key',
        'framed-app',
        '--frame-origin',
        'https://shop.example',
        '--frame-origin',
        'https://m.shop.example:8443',
      ]);
      expect(created.status, created.stderr).toBe(0);
      expect(JSON.parse(created.stdout)).toMatchObject({
        merchant_id: 'framed-shop',
        frame_origins: ['https://shop.example', 'https://m.shop.example:8443'],
      });
      const store = openSqliteStore(path.join(data_dir, 'paygate.sqlite'));
      try {
        expect(await store.merchants.getFrameOrigins('framed-shop', 'framed-app')).toEqual([
          'https://shop.example',
          'https://m.shop.example:8443',
        ]);
      } finally {
        await store.close();
      }
    } finally {
      fs.rmSync(data_dir, { recursive: true, force: true });
    }
  });
});
