// Issue 18: what an attack from outside found, each point over real HTTP against a real gateway,
// on SQLite and PostgreSQL wherever a store is involved. Every assertion here failed before its fix.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyBody } from '../../src/domain/signing.js';
import { orderId, saleA, saleB } from '../support/bodies.js';
import { initCheckout } from '../support/cashier.js';
import { nowSeconds, postJson, postSigned } from '../support/client.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../support/gateway.js';
import { storeKinds } from '../support/stores.js';
import { createPlanVia, gtRequestHeader, gtBodySignature, v13 } from '../support/v13.js';
import { signedReply, waitUntil } from '../support/notification-merchant.js';
import { type MerchantReceiver, startMerchantReceiver } from '../support/merchant-receiver.js';

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

async function getJson(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ http_status: number; body: Record<string, unknown>; text: string }> {
  const response = await fetch(url, { headers });
  const text = await response.text();
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = { raw: text };
  }
  return { http_status: response.status, body, text };
}

/** The gateway's log so far ('' before its first line is written). */
function logText(gw: TestGateway): string {
  return fs.existsSync(gw.log_file) ? fs.readFileSync(gw.log_file, 'utf8') : '';
}

/** The value as a path segment; one that cannot be percent-encoded (a lone surrogate) as "x". */
function pathSegment(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return 'x';
  }
}

/** A status an answer may carry for bad input: positive (decisions.md §5), never negative. */
function expectPositive(body: Record<string, unknown>, what: string): void {
  expect(typeof body.status, what).toBe('number');
  expect(body.status as number, `${what}: ${JSON.stringify(body)}`).toBeGreaterThan(0);
}

/** The characters an attacker reaches for: NUL, other controls, lone surrogates, and some honest ones. */
const hostileText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 60 }),
  fc.string({
    unit: fc.constantFrom('\u0000', '\u0001', '\u001f', '\u007f', '\u0085', '\ud800', '\udfff', 'a', ' ', '%', "'", '"', '\\', '😀'),
    maxLength: 60,
  }),
  fc.constantFrom('\u0000', 'demo\u0000merchant', '\ud800', 'x'.repeat(51), ' ', '   ', ''),
);

describe.each(storeKinds())('hostile text in identifying fields on %s', (kind) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(kind);
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('a NUL in merchant_id is a positive status naming the field, before any query (signed and v1.3 calls)', async () => {
    const signed = await postJson(gw.url, '/api/process', saleA(gw.merchant, { merchant_id: 'demo\u0000merchant' }));
    expect(signed.http_status).toBe(200);
    expect(signed.body).toMatchObject({ status: 10, description: 'Invalid field: merchant_id (control characters are not allowed)' });
    const body = { ...gw.merchant, merchant_id: 'demo\u0000merchant' };
    const post = await v13(gw.url, 'POST', '/api/v1.3/subscription-plan', body, {
      name: 'x',
      prices: [{ amount: 1, currency: 'USD' }],
      billing_cycle: 'monthly',
    });
    expect(post.body).toMatchObject({ status: 10, description: 'Invalid field: merchant_id (control characters are not allowed)' });
    const get = await v13(gw.url, 'GET', '/api/v1.3/subscription-plan', body);
    expect(get.body).toMatchObject({ status: 10 });
    // The same for application_key, read before the rest of a v1.3 request.
    const key = await v13(gw.url, 'GET', '/api/v1.3/subscription-plan', { ...gw.merchant, application_key: 'demo\u0000' });
    expect(key.body).toMatchObject({ status: 10, description: 'Invalid field: application_key (control characters are not allowed)' });
  });

  it('path and query parameters with NUL or lone surrogates: a positive status (JSON) or the not-found page (HTML), never 500', async () => {
    const nul = '%00';
    const surrogate = '%ED%A0%80'; // a lone surrogate in UTF-8 form: not valid percent-encoded UTF-8
    const operator = [
      `/operator/gateways/abc${nul}`,
      `/operator/merchants/demo${nul}/routing-rules`,
      `/operator/merchants/x${nul}/applications/y/frame-origins`,
      `/operator/payouts/1${nul}`,
      `/operator/subscriptions/sub${nul}/notifications`,
      `/operator/gateways?merchant_id=a${nul}`,
      `/operator/merchants/demo${nul}/v13-body-signature`,
    ];
    for (const path of operator) {
      const answer = await getJson(`${gw.url}${path}`, admin);
      expect(answer.http_status, path).toBeLessThan(500);
      expectPositive(answer.body, path);
    }
    const plan = await v13(gw.url, 'GET', `/api/v1.3/subscription-plan/plan${nul}`, gw.merchant);
    expect(plan.body).toMatchObject({ status: 10, description: 'Invalid field: planId (control characters are not allowed)' });
    for (const path of [`/cashier/login/${'a'.repeat(20)}${nul}`, `/return/1/abc${nul}`, `/cashier/login?auth_token=${nul}`]) {
      const response = await fetch(`${gw.url}${path}`, { redirect: 'manual' });
      expect(response.status, path).toBe(404);
      expect(await response.text(), path).toMatch(/Link not valid/);
    }
    const bad_url = await getJson(`${gw.url}/operator/gateways/${surrogate}`, admin);
    expect(bad_url).toMatchObject({
      http_status: 400,
      body: { status: 27, description: 'Malformed URL: not valid percent-encoded UTF-8' },
    });
    const webhook = await fetch(`${gw.url}/webhooks/checkout/${'a'.repeat(31)}${nul}`, { method: 'POST', body: '{}' });
    expect(webhook.status).toBeLessThan(500);
  });

  it('property: arbitrary strings in every identifying field never get a negative status', async () => {
    const fields = [
      'merchant_id',
      'application_key',
      'frontend',
      'order_id',
      'gateway',
      'pin',
      'first_name',
      'variable1',
      'reference_id',
      'card_token',
    ];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...fields), hostileText, async (field, value) => {
        const body =
          field === 'card_token'
            ? {
                merchant_id: gw.merchant.merchant_id,
                application_key: gw.merchant.application_key,
                transaction_type: 'sale',
                order_id: orderId(),
                amount: 100,
                currency: 'USD',
                card_token: value,
                pin: 'cust-1',
                requester_ip: '203.0.113.7',
                country: 'GB',
                return_url: 'https://shop.example/r',
                notification_url: 'https://shop.example/n',
                timestamp: nowSeconds(),
                version: '1.2',
              }
            : field === 'reference_id'
              ? { ...saleA(gw.merchant), transaction_type: 'refund', reference_id: value }
              : saleA(gw.merchant, { [field]: value });
        const answer = await postSigned(gw.url, '/api/process', body, gw.merchant.secret);
        expect(answer.http_status).toBe(200);
        expect(answer.body.status as number, JSON.stringify({ field, value, answer: answer.body })).toBeGreaterThanOrEqual(0);
        for (const [path, query] of [
          ['/api/v1.3/subscription-plan', { merchant_id: value }],
          ['/api/v1.3/subscription', { cid: value }],
        ] as const) {
          const v = await v13(
            gw.url,
            'GET',
            path,
            { ...gw.merchant, ...('merchant_id' in query ? { merchant_id: query.merchant_id } : {}) },
            'cid' in query ? { cid: query.cid } : {},
          );
          expect(v.body.status as number, JSON.stringify({ path, value, answer: v.body })).toBeGreaterThanOrEqual(0);
        }
        const plan = await v13(gw.url, 'GET', `/api/v1.3/subscription-plan/${pathSegment(value)}`, gw.merchant);
        expect(plan.body.status as number, JSON.stringify(plan.body)).toBeGreaterThanOrEqual(0);
        const operator = await getJson(`${gw.url}/operator/merchants/${pathSegment(value)}/routing-rules`, admin);
        expect(operator.http_status, operator.text).toBeLessThan(500);
      }),
      { numRuns: 60 },
    );
    // Nothing above was an internal error: the log holds no stack trace.
    expect(fs.readFileSync(gw.log_file, 'utf8')).not.toMatch(/"level":50/);
  });
});

describe.each(storeKinds())('text rules of the fields on %s (docs/limits.md §2)', (kind) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(kind);
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('variable1-3 refuse NUL and other control characters; required texts refuse only spaces; lone surrogates are refused', async () => {
    for (const [field, value, description] of [
      ['variable1', 'a\u0000b', 'Invalid field: variable1 (control characters are not allowed)'],
      ['variable2', 'line\nbreak', 'Invalid field: variable2 (control characters are not allowed)'],
      ['variable3', 'next\u0085line', 'Invalid field: variable3 (control characters are not allowed)'],
      ['first_name', '   ', 'Invalid field: first_name (must not be only spaces)'],
      ['order_id', '\u00a0 ', 'Invalid field: order_id (must not be only spaces)'],
      ['city', 'Lon\ud800don', 'Invalid field: city (not valid Unicode text)'],
      ['variable1', '\udc00', 'Invalid field: variable1 (not valid Unicode text)'],
    ] as const) {
      const body = saleA(gw.merchant, { [field]: value });
      const answer = await postSigned(gw.url, '/api/process', body, gw.merchant.secret);
      expect(answer.body, `${field}=${JSON.stringify(value)}`).toMatchObject({ status: 10, description });
      expect(verifyBody(answer.body, gw.merchant.secret)).toBe(true);
      // Nothing was stored: the same order_id with valid content is a new sale.
      const retry = await postSigned(
        gw.url,
        '/api/process',
        { ...body, [field]: field.startsWith('variable') ? 'ok' : 'Fine' },
        gw.merchant.secret,
      );
      expect(retry.body, field).toMatchObject({ status: 0, transaction_status: 'approved' });
    }
  });

  it('lengths count characters, not UTF-16 units: n emoji are taken and stored as sent, n+1 refused', async () => {
    for (const [field, max] of [
      ['first_name', 25],
      ['city', 50],
      ['order_id', 50],
      ['variable1', 256],
    ] as const) {
      const fits = '😀'.repeat(max);
      const accepted = await postSigned(gw.url, '/api/process', saleA(gw.merchant, { [field]: fits }), gw.merchant.secret);
      expect(accepted.body, `${field} × ${max}`).toMatchObject({ status: 0 });
      // What is kept is kept as sent (customer fields are not kept on a sale).
      const row = (await gw.gateway.deps.store.transactions.get(Number(accepted.body.trace_id)))!;
      if (field === 'order_id') expect(row.order_id).toBe(fits);
      if (field === 'variable1') expect((JSON.parse(row.variables_json ?? '{}') as Record<string, string>).variable1).toBe(fits);
      const over = await postSigned(gw.url, '/api/process', saleA(gw.merchant, { [field]: `${fits}a` }), gw.merchant.secret);
      expect(over.body, `${field} × ${max + 1}`).toMatchObject({ status: 10 });
      expect(over.body.description).toMatch(new RegExp(`^Invalid field: ${field} \\(expected .*${max} characters`));
    }
  });
});

describe.each(storeKinds())('merchant URLs in live mode, when the request arrives, on %s', (kind) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(kind, { env: { PAYGATE_ENV: 'live' } });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('refuses notification_url and return_url on loopback, private or link-local hosts with status 10; nothing is stored', async () => {
    for (const [field, url] of [
      ['notification_url', 'http://127.0.0.1:8080/notify'],
      ['notification_url', 'http://localhost/notify'],
      ['notification_url', 'http://[::1]/n'],
      ['notification_url', 'http://169.254.169.254/latest'],
      ['return_url', 'https://10.1.2.3/back'],
      ['return_url', 'http://app.localhost/back'],
      ['notification_url', 'http://2130706433/n'],
      ['notification_url', 'http://[::ffff:192.168.0.1]/n'],
    ] as const) {
      const body = saleB(gw.merchant, { [field]: url });
      const answer = await postSigned(gw.url, '/api/process', body, gw.merchant.secret);
      expect(answer.body, url).toMatchObject({
        status: 10,
        description: `Invalid field: ${field} (a loopback, private or link-local address)`,
      });
      expect(await gw.gateway.deps.store.transactions.findByKey(gw.merchant.merchant_id, 'sale', body.order_id as string)).toBeNull();
    }
    // A cashier session's description fits its 75 characters.
    const session = await postSigned(gw.url, '/api/init-checkout', initCheckout(gw.merchant, 'http://192.168.1.1'), gw.merchant.secret);
    expect(session.body).toMatchObject({ status: 10 });
    expect((session.body.description as string).length).toBeLessThanOrEqual(75);
    // A public URL passes this check (and meets the next one: no gateway yet in live mode).
    const public_url = await postSigned(
      gw.url,
      '/api/process',
      saleB(gw.merchant, { notification_url: 'https://shop.example/notify' }),
      gw.merchant.secret,
    );
    expect(public_url.body).toMatchObject({ status: 15 });
  });
});

describe.each(storeKinds())('v1.3 header replay on %s', (kind) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(kind);
  });
  afterAll(async () => {
    await gw?.close();
  });

  async function reuseCount(): Promise<number> {
    const metrics = await (await fetch(`${gw.url}/metrics`, { headers: admin })).text();
    return [...metrics.matchAll(/^paygate_v13_header_reuse_total\{[^}]*\} (\d+)$/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
  }

  /** Sends a POST with the given header and body as a third party would: the observed header, its own body. */
  async function replay(
    path: string,
    header: string,
    body: Record<string, unknown>,
    extra: Record<string, string> = {},
  ): Promise<Record<string, unknown>> {
    const response = await fetch(`${gw.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'gt-authentication': header, ...extra },
      body: JSON.stringify(body),
    });
    return (await response.json()) as Record<string, unknown>;
  }

  it('by default: the header seen again with another body is logged and counted (the spec rule still lets it through)', async () => {
    const merchant = await gw.createMerchant();
    const timestamp = nowSeconds();
    const header = gtRequestHeader(merchant.merchant_id, merchant.application_key, timestamp, merchant.secret);
    const auth = { merchant_id: merchant.merchant_id, application_key: merchant.application_key, timestamp, version: 'v1.3' };
    const before = await reuseCount();
    const first = await replay('/api/v1.3/subscription-plan', header, {
      ...auth,
      name: 'Honest',
      prices: [{ amount: 100, currency: 'USD' }],
      billing_cycle: 'monthly',
    });
    expect(first).toMatchObject({ status: 0 });
    const again = await replay('/api/v1.3/subscription-plan', header, {
      ...auth,
      name: 'Honest',
      prices: [{ amount: 100, currency: 'USD' }],
      billing_cycle: 'monthly',
    });
    expect(again).toMatchObject({ status: 0 });
    expect(await reuseCount()).toBe(before); // the same body again is a retry, not a replay
    const other = await replay('/api/v1.3/subscription-plan', header, {
      ...auth,
      name: 'Replayed',
      prices: [{ amount: 1, currency: 'USD' }],
      billing_cycle: 'monthly',
    });
    expect(other).toMatchObject({ status: 0 });
    expect(await reuseCount()).toBe(before + 1);
    const line = await waitUntil(
      () =>
        fs
          .readFileSync(gw.log_file, 'utf8')
          .split('\n')
          .find((l) => l.includes('seen again with another body')),
      'the warning',
    );
    expect(JSON.parse(line)).toMatchObject({ merchant_id: merchant.merchant_id, route: '/api/v1.3/subscription-plan', refused: false });
  });

  it('a merchant that requires Gt-Body-Signature: a replayed header with another body is refused, nothing changes', async () => {
    const merchant = await gw.createMerchant();
    const plan = await createPlanVia(gw.url, merchant);
    const plan_id = plan.plan_id as string;
    const switched = await fetch(`${gw.url}/operator/merchants/${merchant.merchant_id}/v13-body-signature`, {
      method: 'PUT',
      headers: { ...admin, 'content-type': 'application/json' },
      body: JSON.stringify({ required: true }),
    });
    expect(await switched.json()).toMatchObject({ status: 0, required: true });
    expect((await getJson(`${gw.url}/operator/merchants/${merchant.merchant_id}/v13-body-signature`, admin)).body).toMatchObject({
      required: true,
    });

    // Without the second header: refused, by name.
    const bare = await v13(gw.url, 'GET', `/api/v1.3/subscription-plan/${plan_id}`, merchant);
    expect(bare.body).toMatchObject({ status: 2, description: 'Invalid signature (Gt-Body-Signature header required for this merchant)' });
    // With it: served (GET signs the query string, PUT its body).
    const read = await v13(gw.url, 'GET', `/api/v1.3/subscription-plan/${plan_id}`, merchant, {}, { body_signature: true });
    expect(read.body).toMatchObject({ status: 0, plan_id });
    const timestamp = nowSeconds();
    const header = gtRequestHeader(merchant.merchant_id, merchant.application_key, timestamp, merchant.secret);
    const body = {
      merchant_id: merchant.merchant_id,
      application_key: merchant.application_key,
      timestamp,
      version: 'v1.3',
      name: 'Renamed',
    };
    const path = `/api/v1.3/subscription-plan/${plan_id}`;
    const text = JSON.stringify(body);
    const put = await fetch(`${gw.url}${path}`, {
      method: 'PUT',
      body: text,
      headers: {
        'content-type': 'application/json',
        'gt-authentication': header,
        'gt-body-signature': gtBodySignature('PUT', path, text, merchant.secret),
      },
    });
    expect(await put.json()).toMatchObject({ status: 0 });
    // The observed headers replayed with another body (a plan deleted): refused, the plan unchanged.
    const observed = gtBodySignature('PUT', path, text, merchant.secret);
    const replayed = await fetch(`${gw.url}${path}`, {
      method: 'PUT',
      body: JSON.stringify({ ...body, subscription_plan_status: 'deleted' }),
      headers: { 'content-type': 'application/json', 'gt-authentication': header, 'gt-body-signature': observed },
    });
    expect(await replayed.json()).toMatchObject({ status: 2, description: 'Invalid signature (Gt-Body-Signature header)' });
    const after = await v13(gw.url, 'GET', path, merchant, {}, { body_signature: true });
    expect(after.body).toMatchObject({ status: 0, name: 'Renamed', subscription_plan_status: 'active' });
    // Switched off: the spec's rule again.
    await fetch(`${gw.url}/operator/merchants/${merchant.merchant_id}/v13-body-signature`, {
      method: 'PUT',
      headers: { ...admin, 'content-type': 'application/json' },
      body: JSON.stringify({ required: false }),
    });
    expect((await v13(gw.url, 'GET', path, merchant)).body).toMatchObject({ status: 0 });
  });
});

describe.each(storeKinds())('unknown merchants on %s', (kind) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(kind, { env: { PAYGATE_UNKNOWN_MERCHANT_CACHE_MS: '60000' } });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('are read from the store once, not once per request, and a merchant created on this instance is served at once', async () => {
    const store = gw.gateway.deps.store;
    const asked: string[] = [];
    const getMerchant = store.merchants.get.bind(store.merchants);
    store.merchants.get = async (merchant_id: string) => {
      asked.push(merchant_id);
      return getMerchant(merchant_id);
    };
    const ghost = `ghost-${orderId()}`;
    for (let i = 0; i < 20; i += 1) {
      const answer = await postJson(gw.url, '/api/process', saleA({ ...gw.merchant, merchant_id: ghost }));
      expect(answer.body).toMatchObject({ status: 11 });
    }
    await Promise.all(Array.from({ length: 20 }, () => postJson(gw.url, '/api/process', saleA({ ...gw.merchant, merchant_id: ghost }))));
    expect(asked.filter((id) => id === ghost)).toHaveLength(1);
    const created = await gw.createMerchant({ merchant_id: ghost });
    const sale = await postSigned(gw.url, '/api/process', saleA(created), created.secret);
    expect(sale.body).toMatchObject({ status: 0 });
  });
});

describe('the operator token never in a query string', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway('sqlite');
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('is refused there even when right, and never reaches the log', async () => {
    for (const name of ['access_token', 'token', 'api_key', 'admin_token', 'Authorization']) {
      const answer = await getJson(`${gw.url}/operator/gateways?${name}=${ADMIN_TOKEN}`);
      expect(answer.http_status, name).toBe(401);
      expect(answer.body.description, name).toBe(
        `Credentials are not accepted in the query string (${name}): send Authorization: Bearer <token>`,
      );
      const with_header = await getJson(`${gw.url}/operator/gateways?${name}=${ADMIN_TOKEN}`, admin);
      expect(with_header.http_status, name).toBe(401);
    }
    await getJson(`${gw.url}/metrics?access_token=${ADMIN_TOKEN}`);
    await getJson(`${gw.url}/nothing-here?secret=${ADMIN_TOKEN}&sig=${ADMIN_TOKEN}`);
    const log = await waitUntil(() => {
      const text = fs.readFileSync(gw.log_file, 'utf8');
      return text.includes('/nothing-here') ? text : undefined;
    }, 'the requests in the log');
    expect(log).toContain('access_token=[redacted]');
    expect(log).not.toContain(ADMIN_TOKEN);
  });
});

/** A raw socket, for what no HTTP client sends: partial headers, a body a byte at a time, oversize headers. */
function rawExchange(url: string, send: (socket: net.Socket) => void): Promise<{ text: string; closed_after_ms: number }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const started = Date.now();
    let text = '';
    const socket = net.connect(Number(port), hostname, () => send(socket));
    socket.on('data', (chunk) => {
      text += chunk.toString('utf8');
    });
    socket.on('error', reject);
    socket.on('close', () => resolve({ text, closed_after_ms: Date.now() - started }));
    socket.setTimeout(20_000, () => {
      socket.destroy();
      reject(new Error(`socket still open after 20 s; received: ${text}`));
    });
  });
}

function envelopeOf(text: string): Record<string, unknown> {
  return JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
}

describe('slow clients and oversize requests', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway('sqlite', { env: { PAYGATE_REQUEST_TIMEOUT_MS: '2000', PAYGATE_HEADERS_TIMEOUT_MS: '1000' } });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('a body sent a byte at a time is cut off at the request time-out: 408 with the envelope, connection closed', async () => {
    const result = await rawExchange(gw.url, (socket) => {
      socket.write('POST /api/process HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{');
      const drip = setInterval(() => (socket.writable ? socket.write(' ') : clearInterval(drip)), 300);
      socket.on('close', () => clearInterval(drip));
    });
    expect(result.text).toMatch(/^HTTP\/1\.1 408 /);
    expect(envelopeOf(result.text)).toMatchObject({
      status: 25,
      description: 'Request timeout: headers and body must arrive within 2 seconds',
    });
    expect(result.closed_after_ms).toBeLessThan(10_000);
  });

  it('headers that never finish are cut off at the headers time-out', async () => {
    const result = await rawExchange(gw.url, (socket) => {
      socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
      const drip = setInterval(() => (socket.writable ? socket.write('X-Slow: 1\r\n') : clearInterval(drip)), 300);
      socket.on('close', () => clearInterval(drip));
    });
    expect(result.text).toMatch(/^HTTP\/1\.1 408 /);
    expect(envelopeOf(result.text)).toMatchObject({ status: 25 });
  });

  it('a request at normal speed is not affected', async () => {
    expect((await getJson(`${gw.url}/healthz`)).body).toMatchObject({ status: 'ok' });
  });

  it('answers 431 and 414 with the envelope', async () => {
    const big = await rawExchange(gw.url, (socket) =>
      socket.write(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`),
    );
    expect(big.text).toMatch(/^HTTP\/1\.1 431 /);
    expect(envelopeOf(big.text)).toMatchObject({ status: 26 });
    const long = await getJson(`${gw.url}/operator/gateways/${'a'.repeat(300)}`, admin);
    expect(long).toMatchObject({
      http_status: 414,
      body: { status: 27, description: 'URL too long: a path parameter is over 200 characters' },
    });
  });
});

describe('many notifications in flight at once', () => {
  let gw: TestGateway;
  let receiver: MerchantReceiver;
  beforeAll(async () => {
    receiver = await startMerchantReceiver();
    gw = await startTestGateway('sqlite', { env: { PAYGATE_NOTIFY_CONCURRENCY: '40' } });
  });
  afterAll(async () => {
    await gw?.close();
    await receiver?.close();
  });

  it('hold one abort listener each on their own signal: no MaxListenersExceededWarning', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on('warning', onWarning);
    try {
      let held = 0;
      receiver.setReply('/slow', async () => {
        held += 1;
        await new Promise((resolve) => setTimeout(resolve, 400));
        return signedReply(gw.merchant.secret);
      });
      const sales = await Promise.all(
        Array.from({ length: 30 }, () =>
          postSigned(gw.url, '/api/process', saleA(gw.merchant, { notification_url: `${receiver.url}/slow` }), gw.merchant.secret),
        ),
      );
      expect(sales.every((sale) => sale.body.status === 0)).toBe(true);
      await waitUntil(() => receiver.requestsTo('/slow').length >= 30, 'the 30 notifications');
      expect(held).toBeGreaterThanOrEqual(30);
      await gw.gateway.notifications.idle();
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.filter((w) => w.includes('MaxListenersExceeded'))).toEqual([]);
  });
});

describe('the master key file', () => {
  it('live mode warns at start when it sits beside the database; PAYGATE_MASTER_KEY_FILE puts it elsewhere, and no warning', async () => {
    const beside = await startTestGateway('sqlite', { env: { PAYGATE_ENV: 'live' } });
    try {
      expect(fs.existsSync(path.join(beside.data_dir, 'master.key'))).toBe(true);
      const line = await waitUntil(
        () =>
          logText(beside)
            .split('\n')
            .find((l) => l.includes('master key file is beside the database')),
        'the warning',
      );
      expect(JSON.parse(line)).toMatchObject({ level: 40, key_file: path.join(beside.data_dir, 'master.key') });
    } finally {
      await beside.close();
    }
    const key_dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-key-'));
    const key_file = path.join(key_dir, 'keys', 'paygate.key');
    const apart = await startTestGateway('sqlite', { env: { PAYGATE_ENV: 'live', PAYGATE_MASTER_KEY_FILE: key_file } });
    try {
      expect(fs.existsSync(path.join(apart.data_dir, 'master.key'))).toBe(false);
      expect(fs.readFileSync(key_file, 'utf8')).toMatch(/^[0-9a-f]{64}\n$/);
      expect(fs.statSync(key_file).mode & 0o777).toBe(0o600);
      const log = await waitUntil(
        () => (logText(apart).includes('paygate listening') ? logText(apart) : undefined),
        'the start in the log',
      );
      expect(log).not.toContain('master key file is beside the database');
    } finally {
      await apart.close();
    }
  });
});
