// A merchant's credentials over real HTTP against a real gateway, on SQLite and PostgreSQL
// (docs/security.md §5): a rolled secret's grace for the old one (body-signed and v1.3 calls, the
// answer signed with the secret the request used), its end on the gateway clock, a disabled
// merchant answered exactly as an unknown one, and the operator's test notification to a real
// local receiver. The merchant's side checks signatures with test/support's own code, not src/'s.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../../src/domain/merchants.js';
import {
  rollMerchantSecret,
  SECRET_GRACE_MAX_S,
  sendTestNotification,
  setMerchantDisabled,
} from '../../src/operations/merchant-credentials.js';
import { saleA } from '../support/bodies.js';
import { CashierCustomer, gatewayNow, initCheckout, openSession, textOf } from '../support/cashier.js';
import { postJson, signed } from '../support/client.js';
import { withStoppedClock } from '../support/clock.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../support/gateway.js';
import { type MerchantReceiver, startMerchantReceiver } from '../support/merchant-receiver.js';
import { merchantVerify, notificationOf, signedReply, waitUntil } from '../support/notification-merchant.js';
import { payoutD } from '../support/payout-bodies.js';
import { storeKinds } from '../support/stores.js';
import { gtBodySignature, gtRequestHeader, sha384, v13 } from '../support/v13.js';

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
const UNKNOWN = 'Authentication failed: unknown merchant_id, application_key or frontend';

async function operator(gw: TestGateway, method: 'POST' | 'PUT', path: string, body: unknown, headers: Record<string, string> = admin) {
  const response = await fetch(`${gw.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { http_status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> };
}

function roll(gw: TestGateway, merchant_id: string, body: unknown) {
  return operator(gw, 'POST', `/operator/merchants/${encodeURIComponent(merchant_id)}/roll-secret`, body);
}

function setDisabled(gw: TestGateway, merchant_id: string, disabled: unknown) {
  return operator(gw, 'PUT', `/operator/merchants/${encodeURIComponent(merchant_id)}/disabled`, { disabled });
}

function testNotification(gw: TestGateway, merchant_id: string, body: unknown) {
  return operator(gw, 'POST', `/operator/merchants/${encodeURIComponent(merchant_id)}/test-notification`, body);
}

/** Rolls with a grace and answers the new secret (status 0 checked). */
async function rolled(gw: TestGateway, merchant: CreatedMerchant, grace_seconds: number): Promise<string> {
  const answer = await roll(gw, merchant.merchant_id, { grace_seconds });
  expect(answer.body, JSON.stringify(answer.body)).toMatchObject({
    status: 0,
    merchant_id: merchant.merchant_id,
    secret: expect.any(String),
  });
  return answer.body.secret as string;
}

/** The answer signature, checked the merchant's way (decisions.md §1, test/support's code). */
function signedWith(body: Record<string, unknown>, secret: string): boolean {
  return merchantVerify(body, secret);
}

describe.each(storeKinds())('merchant credentials on %s', (kind) => {
  let gw: TestGateway;
  let receiver: MerchantReceiver;
  beforeAll(async () => {
    // Resends after a second, so a notification that failed goes out again within the test.
    [gw, receiver] = await Promise.all([
      startTestGateway(kind, { env: { PAYGATE_NOTIFY_RETRY_SECONDS: '1', PAYGATE_NOTIFY_POLL_MS: '50' } }),
      startMerchantReceiver(),
    ]);
  });
  afterAll(async () => {
    await Promise.all([gw?.close(), receiver?.close()]);
  });

  /** POST /api/tokenize signed with `secret`, stamped with the gateway's clock (the sandbox clock moves in these tests). */
  function tokenize(merchant: CreatedMerchant, secret: string) {
    return postJson(
      gw.url,
      '/api/tokenize',
      signed(
        {
          merchant_id: merchant.merchant_id,
          application_key: merchant.application_key,
          pin: 'cust-42',
          card_number: '4111111111111111',
          card_exp: '10/2033',
          timestamp: gatewayNow(gw),
          version: '1.2',
        },
        secret,
      ),
    );
  }

  /** A v1.3 plan list signed with `secret`; the helper checks the answer's header with the same secret. */
  function plans(merchant: CreatedMerchant, secret: string, body_signature = false) {
    return v13(gw.url, 'GET', '/api/v1.3/subscription-plan', { ...merchant, secret }, {}, { timestamp: gatewayNow(gw), body_signature });
  }

  /** The same call with Gt-Authentication made with `auth_secret` (and Gt-Body-Signature with `body_secret`, if given), its answer header unchecked. */
  async function rawPlans(merchant: CreatedMerchant, auth_secret: string, body_secret?: string) {
    const timestamp = gatewayNow(gw);
    const path = '/api/v1.3/subscription-plan';
    const query = new URLSearchParams({
      merchant_id: merchant.merchant_id,
      application_key: merchant.application_key,
      timestamp: String(timestamp),
      version: 'v1.3',
    }).toString();
    const headers: Record<string, string> = {
      'gt-authentication': gtRequestHeader(merchant.merchant_id, merchant.application_key, timestamp, auth_secret),
    };
    if (body_secret !== undefined) headers['gt-body-signature'] = gtBodySignature('GET', path, query, body_secret);
    const response = await fetch(`${gw.url}${path}?${query}`, { headers });
    const body = (await response.json()) as Record<string, unknown>;
    /** Whether the answer's header is made with this secret. */
    const headerWith = (secret: string) =>
      response.headers.get('gt-authentication') === sha384(`${String(body.status)}${String(body.timestamp)}${secret}`);
    return { body, headerWith };
  }

  describe('rolling the secret', () => {
    it('during the grace the old secret is accepted and answered with it; the new one answered with the new one', async () => {
      const merchant = await gw.createMerchant();
      const old_secret = merchant.secret;
      const before_ms = gw.gateway.clock.now_ms();
      const answer = await roll(gw, merchant.merchant_id, { grace_seconds: 3600 });
      expect(answer.http_status).toBe(200);
      expect(answer.headers.get('cache-control')).toBe('no-store');
      const new_secret = answer.body.secret as string;
      expect(new_secret).toMatch(/^[A-Za-z0-9_-]{32}$/);
      expect(new_secret).not.toBe(old_secret);
      const until_ms = Date.parse(answer.body.previous_valid_until as string);
      expect(until_ms).toBeGreaterThanOrEqual(before_ms + 3_600_000 - 1000);
      expect(until_ms).toBeLessThanOrEqual(gw.gateway.clock.now_ms() + 3_600_000);

      const with_old = await tokenize(merchant, old_secret);
      expect(with_old.body).toMatchObject({ status: 0, card_token: expect.any(String) });
      expect(signedWith(with_old.body, old_secret)).toBe(true);
      expect(signedWith(with_old.body, new_secret)).toBe(false);
      const with_new = await tokenize(merchant, new_secret);
      expect(with_new.body).toMatchObject({ status: 0 });
      expect(signedWith(with_new.body, new_secret)).toBe(true);
      // Neither: refused, and the refusal is signed with the current secret.
      const with_neither = await tokenize(merchant, randomBytes(24).toString('base64url'));
      expect(with_neither.body).toMatchObject({ status: 2 });
      expect(signedWith(with_neither.body, new_secret)).toBe(true);
    });

    it('during the grace a v1.3 call with the old secret (Gt-Authentication and Gt-Body-Signature) is accepted and its answer header made with it', async () => {
      const merchant = await gw.createMerchant();
      const new_secret = await rolled(gw, merchant, 600);
      // v13() throws unless the answer's Gt-Authentication verifies with the secret it was given.
      const old_plain = await plans(merchant, merchant.secret);
      expect(old_plain.body).toMatchObject({ status: 0 });
      expect(old_plain.header).toBe(sha384(`${String(old_plain.body.status)}${String(old_plain.body.timestamp)}${merchant.secret}`));
      expect((await plans(merchant, merchant.secret, true)).body).toMatchObject({ status: 0 });
      expect((await plans(merchant, new_secret, true)).body).toMatchObject({ status: 0 });
      // Both headers must be made with one secret: Gt-Authentication with the old, Gt-Body-Signature with the new, is refused.
      const mixed = await rawPlans(merchant, merchant.secret, new_secret);
      expect(mixed.body).toMatchObject({ status: 2, description: 'Invalid signature (Gt-Body-Signature header)' });
      expect(mixed.headerWith(merchant.secret)).toBe(true);
    });

    it('during the grace a card encrypted with the old secret (spec §5.3) opens with it', async () => {
      const merchant = await gw.createMerchant();
      await rolled(gw, merchant, 600);
      // payoutD encrypts with merchant.secret, the old one here, and the request is signed with it.
      const answer = await postJson(gw.url, '/api/process', signed(payoutD(merchant, { timestamp: gatewayNow(gw) }), merchant.secret));
      expect(answer.body, JSON.stringify(answer.body)).toMatchObject({ status: 0 });
      expect(signedWith(answer.body, merchant.secret)).toBe(true);
    });

    it('after the grace (sandbox clock moved) the old secret is refused on both kinds of call, though the merchant was read during it', async () => {
      const merchant = await gw.createMerchant();
      const new_secret = await rolled(gw, merchant, 60);
      // Read and kept by the directory while the grace lasts.
      expect((await tokenize(merchant, merchant.secret)).body).toMatchObject({ status: 0 });
      expect((await plans(merchant, merchant.secret)).body).toMatchObject({ status: 0 });
      const moved = await postJson(gw.url, '/sandbox/clock', { advance_seconds: 61 }, admin);
      expect(moved.http_status).toBe(200);
      const old_body = await tokenize(merchant, merchant.secret);
      expect(old_body.body).toMatchObject({ status: 2 });
      expect(signedWith(old_body.body, new_secret)).toBe(true);
      const old_header = await rawPlans(merchant, merchant.secret);
      expect(old_header.body).toMatchObject({ status: 2, description: 'Invalid signature (Gt-Authentication header)' });
      // Refused before any secret was matched: the answer's header is made with the current one.
      expect(old_header.headerWith(new_secret)).toBe(true);
      expect((await tokenize(merchant, new_secret)).body).toMatchObject({ status: 0 });
      expect((await plans(merchant, new_secret)).body).toMatchObject({ status: 0 });
    });

    it('a grace of 0 ends the old secret at once', async () => {
      const merchant = await gw.createMerchant();
      const answer = await roll(gw, merchant.merchant_id, { grace_seconds: 0 });
      expect(answer.body).toMatchObject({ status: 0 });
      expect(Date.parse(answer.body.previous_valid_until as string)).toBeLessThanOrEqual(gw.gateway.clock.now_ms());
      expect((await tokenize(merchant, merchant.secret)).body).toMatchObject({ status: 2 });
      expect((await tokenize(merchant, answer.body.secret as string)).body).toMatchObject({ status: 0 });
    });

    it('rolling again during a grace ends the older secret: only the one before the last roll is kept', async () => {
      const merchant = await gw.createMerchant();
      const second = await rolled(gw, merchant, 600);
      const third = await rolled(gw, merchant, 600);
      expect((await tokenize(merchant, merchant.secret)).body).toMatchObject({ status: 2 });
      expect((await tokenize(merchant, second)).body).toMatchObject({ status: 0 });
      expect((await tokenize(merchant, third)).body).toMatchObject({ status: 0 });
    });

    it('a grace over 24 hours, negative, fractional, a string or missing is refused naming grace_seconds, and nothing changes', async () => {
      const merchant = await gw.createMerchant();
      expect(SECRET_GRACE_MAX_S).toBe(86_400);
      for (const body of [
        { grace_seconds: SECRET_GRACE_MAX_S + 1 },
        { grace_seconds: -1 },
        { grace_seconds: 1.5 },
        { grace_seconds: '60' },
        {},
        { grace_seconds: null },
      ]) {
        const answer = await roll(gw, merchant.merchant_id, body);
        expect(answer.http_status, JSON.stringify(body)).toBe(400);
        expect(answer.body, JSON.stringify(body)).toEqual({
          status: 10,
          description: 'Invalid field: grace_seconds (expected a whole number of seconds from 0 to 86400)',
        });
      }
      // The secret is unchanged: the merchant's own still works, and there is no previous one.
      expect((await tokenize(merchant, merchant.secret)).body).toMatchObject({ status: 0 });
      expect(await gw.gateway.deps.store.merchants.get(merchant.merchant_id)).toMatchObject({ previous_secret_sealed: null });
      // The longest grace is accepted.
      expect((await roll(gw, merchant.merchant_id, { grace_seconds: SECRET_GRACE_MAX_S })).body).toMatchObject({ status: 0 });
    });

    it('an unknown merchant is 404, and without the operator token nothing is rolled', async () => {
      expect(await roll(gw, `nobody-${randomBytes(4).toString('hex')}`, { grace_seconds: 60 })).toMatchObject({
        http_status: 404,
        body: { status: 11, description: 'No such merchant' },
      });
      const merchant = await gw.createMerchant();
      const refused = await operator(gw, 'POST', `/operator/merchants/${merchant.merchant_id}/roll-secret`, { grace_seconds: 60 }, {});
      expect(refused.http_status).toBe(401);
      expect(refused.body).not.toHaveProperty('secret');
      expect((await tokenize(merchant, merchant.secret)).body).toMatchObject({ status: 0 });
    });

    it('the new secret is stored sealed and never logged', async () => {
      const merchant = await gw.createMerchant();
      const new_secret = await rolled(gw, merchant, 600);
      expect((await tokenize(merchant, new_secret)).body).toMatchObject({ status: 0 });
      const log = fs.readFileSync(gw.log_file, 'utf8');
      expect(log).toContain('merchant secret rolled');
      expect(log).not.toContain(new_secret);
      const record = await gw.gateway.deps.store.merchants.get(merchant.merchant_id);
      expect(record?.secret_sealed).not.toContain(new_secret);
      expect(record?.previous_secret_sealed).not.toContain(merchant.secret);
      expect(record?.previous_secret_sealed).not.toBeNull();
    });
  });

  describe('notifications after a roll', () => {
    it('a queued notification is sent again signed with the current secret, and delivered when the reply is signed with it', async () => {
      const merchant = await gw.createMerchant();
      const path = `/notify-${randomBytes(4).toString('hex')}`;
      receiver.setReply(path, { status: 500, body: { error: 'down' } });
      const sale = await postJson(
        gw.url,
        '/api/process',
        signed(saleA(merchant, { notification_url: `${receiver.url}${path}`, timestamp: gatewayNow(gw) }), merchant.secret),
      );
      expect(sale.body).toMatchObject({ status: 0, transaction_status: 'approved' });
      const first = await receiver.waitForRequest((r) => r.path === path, 10_000);
      expect(merchantVerify(notificationOf(first), merchant.secret)).toBe(true);
      const new_secret = await rolled(gw, merchant, 600);
      receiver.setReply(path, () => signedReply(new_secret, 0));
      const trace_id = sale.body.trace_id as number;
      await waitUntil(
        async () => (await gw.gateway.deps.store.notifications.listOfTransaction(trace_id)).every((n) => n.state === 'delivered'),
        'the notification delivered',
        15_000,
      );
      const last = receiver.requestsTo(path).at(-1)!;
      expect(merchantVerify(notificationOf(last), new_secret)).toBe(true);
      expect(merchantVerify(notificationOf(last), merchant.secret)).toBe(false);
    });
  });

  describe('disabling a merchant', () => {
    /** Every body-signed and v1.3 call of /openapi.json, sent for `merchant_id` with minimal fields and signed with `secret`. */
    async function everyApiCall(merchant_id: string, application_key: string, secret: string) {
      const doc = (await (await fetch(`${gw.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
      const answers: { call: string; http_status: number; body: Record<string, unknown>; header: string | null }[] = [];
      for (const [path, methods] of Object.entries(doc.paths)) {
        if (!path.startsWith('/api/')) continue;
        for (const method of Object.keys(methods).map((m) => m.toUpperCase())) {
          const url_path = path.replace(/\{[^}]+\}/g, 'x1');
          const timestamp = gatewayNow(gw);
          const fields: Record<string, unknown> = { merchant_id, application_key, timestamp, version: '1.2' };
          let response: Response;
          if (path.startsWith('/api/v1.3/')) {
            const header = gtRequestHeader(merchant_id, application_key, timestamp, secret);
            const query = new URLSearchParams({ merchant_id, application_key, timestamp: String(timestamp) }).toString();
            response =
              method === 'GET'
                ? await fetch(`${gw.url}${url_path}?${query}`, { headers: { 'gt-authentication': header } })
                : await fetch(`${gw.url}${url_path}`, {
                    method,
                    headers: { 'content-type': 'application/json', 'gt-authentication': header },
                    body: JSON.stringify(fields),
                  });
          } else {
            response = await fetch(`${gw.url}${url_path}`, {
              method,
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify(signed(fields, secret)),
            });
          }
          const body = (await response.json()) as Record<string, unknown>;
          answers.push({
            call: `${method} ${path}`,
            http_status: response.status,
            body,
            header: response.headers.get('gt-authentication'),
          });
        }
      }
      return answers;
    }

    it("every signed and v1.3 call of a disabled merchant is answered exactly as an unknown merchant's, and again normally once enabled", async () => {
      const merchant = await gw.createMerchant();
      expect(await setDisabled(gw, merchant.merchant_id, true)).toMatchObject({
        http_status: 200,
        body: { status: 0, description: 'Merchant disabled', merchant_id: merchant.merchant_id, disabled: true },
      });
      const disabled = await everyApiCall(merchant.merchant_id, merchant.application_key, merchant.secret);
      const unknown = await everyApiCall(`nobody-${randomBytes(4).toString('hex')}`, merchant.application_key, merchant.secret);
      // The body-signed calls and the v1.3 ones are all covered.
      expect(disabled.map((a) => a.call)).toEqual(
        expect.arrayContaining([
          'POST /api/process',
          'POST /api/tokenize',
          'POST /api/init-checkout',
          'GET /api/v1.3/subscription-plan',
          'POST /api/v1.3/subscription',
        ]),
      );
      expect(disabled.length).toBe(unknown.length);
      const shape = (a: (typeof disabled)[number]) => ({
        call: a.call,
        http_status: a.http_status,
        header: a.header,
        body: { ...a.body, timestamp: 'any' },
      });
      expect(disabled.map(shape)).toEqual(unknown.map(shape));
      for (const answer of disabled) {
        expect(answer.body, answer.call).toMatchObject({ status: 11, description: UNKNOWN });
        expect(answer.body, answer.call).not.toHaveProperty('signature');
        expect(answer.header, answer.call).toBeNull();
      }

      expect(await setDisabled(gw, merchant.merchant_id, false)).toMatchObject({
        http_status: 200,
        body: { status: 0, description: 'Merchant enabled', disabled: false },
      });
      expect((await tokenize(merchant, merchant.secret)).body).toMatchObject({ status: 0 });
      expect((await plans(merchant, merchant.secret)).body).toMatchObject({ status: 0 });
    });

    it('an open cashier session of a disabled merchant takes no payment, and does once it is enabled', async () => {
      const merchant = await gw.createMerchant();
      const checkout = initCheckout(merchant, receiver.url, { timestamp: gatewayNow(gw) });
      const opened = await openSession(gw, '/api/init-checkout', checkout, merchant);
      expect(opened.body).toMatchObject({ status: 0 });
      const customer = new CashierCustomer(gw.url);
      const page = await customer.login(opened.body.redirect_url as string);
      expect(page.status).toBe(200);
      await setDisabled(gw, merchant.merchant_id, true);
      const refused = await customer.payByCard(page.text);
      expect(refused.status).toBe(200);
      expect(textOf(refused.text)).toContain('This payment method is not available right now');
      const session = await gw.gateway.deps.store.cashier.findSessionByOrder(merchant.merchant_id, checkout.order_id as string);
      expect(session).not.toBeNull();
      expect(await gw.gateway.deps.store.cashier.listTransactions(session!.session_id)).toEqual([]);
      await setDisabled(gw, merchant.merchant_id, false);
      const paid = await customer.payByCard((await customer.get('/cashier')).text);
      expect(paid.status).toBe(303);
    });

    it('a notification queued before the merchant was disabled still goes out', async () => {
      const merchant = await gw.createMerchant();
      const path = `/notify-${randomBytes(4).toString('hex')}`;
      receiver.setReply(path, { status: 503, body: {} });
      const sale = await postJson(
        gw.url,
        '/api/process',
        signed(saleA(merchant, { notification_url: `${receiver.url}${path}`, timestamp: gatewayNow(gw) }), merchant.secret),
      );
      expect(sale.body).toMatchObject({ status: 0 });
      await receiver.waitForRequest((r) => r.path === path, 10_000);
      await setDisabled(gw, merchant.merchant_id, true);
      receiver.setReply(path, () => signedReply(merchant.secret, 0));
      const trace_id = sale.body.trace_id as number;
      await waitUntil(
        async () => (await gw.gateway.deps.store.notifications.listOfTransaction(trace_id)).every((n) => n.state === 'delivered'),
        'the notification delivered',
        15_000,
      );
      expect((await tokenize(merchant, merchant.secret)).body).toMatchObject({ status: 11 });
    });

    it('a body that is not true or false is refused naming disabled; an unknown merchant is 404', async () => {
      const merchant = await gw.createMerchant();
      for (const value of ['true', 1, null, undefined]) {
        const answer = await setDisabled(gw, merchant.merchant_id, value);
        expect(answer, String(value)).toMatchObject({
          http_status: 400,
          body: { status: 10, description: 'Invalid field: disabled (expected true or false)' },
        });
      }
      expect((await tokenize(merchant, merchant.secret)).body).toMatchObject({ status: 0 });
      expect(await setDisabled(gw, `nobody-${randomBytes(4).toString('hex')}`, true)).toMatchObject({
        http_status: 404,
        body: { status: 11 },
      });
    });
  });

  describe('test notification', () => {
    it("is delivered to the merchant's endpoint signed with the current secret, marked as a test, and reports the reply", async () => {
      const merchant = await gw.createMerchant();
      const new_secret = await rolled(gw, merchant, 600);
      const path = `/test-${randomBytes(4).toString('hex')}`;
      receiver.setReply(path, () => signedReply(new_secret, 0));
      const answer = await testNotification(gw, merchant.merchant_id, { url: `${receiver.url}${path}` });
      expect(answer.http_status).toBe(200);
      expect(answer.body).toMatchObject({
        status: 0,
        description: 'Test notification delivered',
        delivered: true,
        http_status: 200,
        duration_ms: expect.any(Number),
      });
      expect(answer.body.reply_excerpt).toContain('"status":0');
      const received = receiver.requestsTo(path, 'POST');
      expect(received).toHaveLength(1);
      const body = notificationOf(received[0]!);
      expect(merchantVerify(body, new_secret)).toBe(true);
      expect(merchantVerify(body, merchant.secret)).toBe(false);
      expect(body).toMatchObject({
        test: '1',
        trace_id: 0,
        merchant_id: merchant.merchant_id,
        application_key: merchant.application_key,
        transaction_type: 'sale',
        transaction_status: 'pending',
        amount: 0,
        version: '1.2',
      });
      expect(body.order_id).toMatch(/^test-notification-\d+$/);
      expect(Number((body.order_id as string).slice('test-notification-'.length))).toBe(body.timestamp);
      expect(received[0]!.headers['content-type']).toBe('application/json');
      // Sent at once, not through the outbox: nothing was stored.
      expect(await gw.gateway.deps.store.notifications.listOfTransaction(0)).toEqual([]);
    });

    it('is not delivered when the reply is signed with the old secret, is an HTTP error or a redirect, and says why', async () => {
      const merchant = await gw.createMerchant();
      await rolled(gw, merchant, 600);
      const path = `/test-${randomBytes(4).toString('hex')}`;
      receiver.setReply(path, () => signedReply(merchant.secret, 0));
      expect((await testNotification(gw, merchant.merchant_id, { url: `${receiver.url}${path}` })).body).toMatchObject({
        status: 0,
        delivered: false,
        http_status: 200,
        reason: 'reply signature invalid',
        description: 'Test notification not delivered: reply signature invalid',
      });
      receiver.setReply(path, { status: 500, body: { error: 'boom' } });
      expect((await testNotification(gw, merchant.merchant_id, { url: `${receiver.url}${path}` })).body).toMatchObject({
        status: 0,
        delivered: false,
        http_status: 500,
        reason: 'HTTP 500',
        reply_excerpt: '{"error":"boom"}',
      });
      // A redirect is not followed.
      receiver.setReply(path, { status: 302, body: {}, headers: { location: `${receiver.url}/elsewhere` } });
      expect((await testNotification(gw, merchant.merchant_id, { url: `${receiver.url}${path}` })).body).toMatchObject({
        delivered: false,
        http_status: 302,
      });
      expect(receiver.requestsTo('/elsewhere')).toHaveLength(0);
      // Nothing listens there.
      expect((await testNotification(gw, merchant.merchant_id, { url: 'http://127.0.0.1:9/notify' })).body).toMatchObject({
        delivered: false,
        http_status: null,
        reason: 'connection refused',
      });
    });

    it('a bad url is refused naming url, an unknown merchant is 404', async () => {
      const merchant = await gw.createMerchant();
      for (const body of [
        {},
        { url: 'ftp://example.com/x' },
        { url: 'not a url' },
        { url: `https://example.com/${'x'.repeat(240)}` },
        { url: 42 },
      ]) {
        expect(await testNotification(gw, merchant.merchant_id, body), JSON.stringify(body)).toMatchObject({
          http_status: 400,
          body: { status: 10, description: 'Invalid field: url (expected an http(s) URL of up to 256 characters)' },
        });
      }
      expect(await testNotification(gw, merchant.merchant_id, { url: 'http://user:pw@example.com/x' })).toMatchObject({
        http_status: 400,
        body: { status: 10, description: 'Invalid field: url (credentials in URL not allowed)' },
      });
      expect(await testNotification(gw, `nobody-${randomBytes(4).toString('hex')}`, { url: `${receiver.url}/x` })).toMatchObject({
        http_status: 404,
        body: { status: 11 },
      });
    });
  });

  describe('the operation functions (the back office calls them)', () => {
    it('answer named outcomes, never throw, for every case', async () => {
      const deps = gw.gateway.deps;
      const nobody = `nobody-${randomBytes(4).toString('hex')}`;
      const merchant = await gw.createMerchant();
      for (const grace_s of [-1, 1.5, Number.NaN, SECRET_GRACE_MAX_S + 1, Number.POSITIVE_INFINITY]) {
        expect(await rollMerchantSecret(deps, merchant.merchant_id, grace_s), String(grace_s)).toEqual({
          kind: 'invalid_grace',
          max_s: SECRET_GRACE_MAX_S,
        });
      }
      expect(await rollMerchantSecret(deps, nobody, 60)).toEqual({ kind: 'not_found' });
      await withStoppedClock(gw.gateway, async (now_s) => {
        const outcome = await rollMerchantSecret(deps, merchant.merchant_id, 90);
        expect(outcome).toEqual({
          kind: 'rolled',
          secret: expect.stringMatching(/^[A-Za-z0-9_-]{32}$/),
          previous_valid_until_ms: now_s * 1000 + 500 + 90_000,
        });
      });
      expect(await setMerchantDisabled(deps, nobody, true)).toBe(false);
      expect(await setMerchantDisabled(deps, merchant.merchant_id, true)).toBe(true);
      expect((await deps.merchants.find(merchant.merchant_id))?.disabled).toBe(true);
      expect(await setMerchantDisabled(deps, merchant.merchant_id, false)).toBe(true);
      expect((await deps.merchants.find(merchant.merchant_id))?.disabled).toBe(false);
      expect(await sendTestNotification(deps, nobody, `${receiver.url}/x`)).toEqual({ kind: 'not_found' });
      expect(await sendTestNotification(deps, merchant.merchant_id, 'ftp://example.com/x')).toEqual({
        kind: 'url_not_allowed',
        reason: 'unsupported URL scheme',
      });
    });
  });

  it('the three operator calls are in /openapi.json, and their answers match the schemas given there', async () => {
    type Operation = { responses: Record<string, { content?: Record<string, { schema: object }> }> };
    const doc = (await (await fetch(`${gw.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, Operation>> };
    const ajv = new Ajv({ strict: false, allErrors: true });
    const check = (path: string, method: string, answer: Record<string, unknown>) => {
      const schema = doc.paths[path]?.[method]?.responses['200']?.content?.['application/json']?.schema;
      expect(schema, `${method} ${path}`).toBeDefined();
      const valid = ajv.compile(schema!);
      expect(valid(answer), `${method} ${path}: ${JSON.stringify(valid.errors)}`).toBe(true);
    };
    const merchant = await gw.createMerchant();
    const path = `/test-${randomBytes(4).toString('hex')}`;
    const rolled_answer = await roll(gw, merchant.merchant_id, { grace_seconds: 60 });
    check('/operator/merchants/{merchant_id}/roll-secret', 'post', rolled_answer.body);
    check('/operator/merchants/{merchant_id}/disabled', 'put', (await setDisabled(gw, merchant.merchant_id, false)).body);
    receiver.setReply(path, () => signedReply(rolled_answer.body.secret as string, 0));
    const delivered = (await testNotification(gw, merchant.merchant_id, { url: `${receiver.url}${path}` })).body;
    expect(delivered).toMatchObject({ delivered: true });
    check('/operator/merchants/{merchant_id}/test-notification', 'post', delivered);
    check(
      '/operator/merchants/{merchant_id}/test-notification',
      'post',
      (await testNotification(gw, merchant.merchant_id, { url: 'http://127.0.0.1:9/x' })).body,
    );
  });
});

describe('test notification in live mode', () => {
  let gw: TestGateway;
  let receiver: MerchantReceiver;
  beforeAll(async () => {
    // The store plays no part in the address policy: SQLite only.
    [gw, receiver] = await Promise.all([startTestGateway('sqlite', { env: { PAYGATE_ENV: 'live' } }), startMerchantReceiver()]);
  });
  afterAll(async () => {
    await Promise.all([gw?.close(), receiver?.close()]);
  });

  it('refuses loopback, private and link-local destinations without connecting', async () => {
    const merchant = await gw.createMerchant();
    receiver.setReply('/notify', () => signedReply(merchant.secret, 0));
    const port = new URL(receiver.url).port;
    for (const url of [
      `${receiver.url}/notify`,
      `http://localhost:${port}/notify`,
      'http://10.1.2.3/notify',
      'http://169.254.169.254/latest',
      'http://[::1]/notify',
    ]) {
      expect(await testNotification(gw, merchant.merchant_id, { url }), url).toMatchObject({
        http_status: 400,
        body: { status: 10, description: 'Invalid field: url (destination not allowed)' },
      });
    }
    expect(receiver.requests).toHaveLength(0);
  });
});
