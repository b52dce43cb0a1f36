// The HTTP edge of decisions.md §5: codes and envelopes for what never reaches an operation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unixSeconds } from '../../src/domain/clock.js';
import { verifyBody } from '../../src/domain/signing.js';
import { UNKNOWN_CREDENTIALS } from '../../src/http/route.js';
import { initCheckout, initPayOut } from '../support/cashier.js';
import { postJson, postSigned } from '../support/client.js';
import { refundC, saleA, saleB } from '../support/bodies.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { payoutE } from '../support/payout-bodies.js';
import { ADMIN_DATABASE_URL } from '../support/postgres.js';
import { storeKinds } from '../support/stores.js';
import { v13 } from '../support/v13.js';
import pg from 'pg';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

describe('HTTP edge', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway('sqlite');
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('answers 400 with the envelope for a body that is not a JSON object', async () => {
    for (const body of ['[1,2]', '"text"', '{not json', '42']) {
      const answer = await postJson(gw.url, '/api/process', body);
      expect(answer.http_status, body).toBe(400);
      expect(answer.body.status).toBeGreaterThan(0);
      expect(typeof answer.body.description).toBe('string');
    }
  });

  it('answers 400 for a form-encoded body on the API', async () => {
    const response = await fetch(`${gw.url}/api/process`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'merchant_id=x&amount=1',
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ status: 23 });
  });

  it('answers 413 for a body over 64 KiB', async () => {
    const answer = await postJson(gw.url, '/api/process', { ...saleA(gw.merchant), variable1: 'x'.repeat(70 * 1024) });
    expect(answer.http_status).toBe(413);
    expect(answer.body).toMatchObject({ status: 22 });
  });

  it('answers 404 for an unknown path and 405 for a wrong method', async () => {
    const missing = await fetch(`${gw.url}/api/nothing-here`, { method: 'POST' });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ status: 20 });
    for (const method of ['GET', 'PUT', 'DELETE', 'OPTIONS']) {
      const wrong = await fetch(`${gw.url}/api/process`, { method });
      expect(wrong.status, method).toBe(405);
      expect(await wrong.json()).toMatchObject({ status: 21 });
    }
  });

  it('refuses more than 100 fields by name of the limit', async () => {
    const body: Record<string, unknown> = saleA(gw.merchant);
    for (let i = 0; i < 101; i += 1) body[`extra_${i}`] = 'x';
    const answer = await postJson(gw.url, '/api/process', body);
    expect(answer.body).toMatchObject({ status: 10 });
    expect(answer.body.description).toMatch(/Too many fields/);
    expect(verifyBody(answer.body, gw.merchant.secret)).toBe(true); // the merchant was identified, so it is signed
  });

  it('answers 400 for a JSON body with a __proto__ key instead of polluting objects', async () => {
    const answer = await postJson(gw.url, '/api/process', '{"__proto__":{"polluted":1},"merchant_id":"x"}');
    expect(answer.http_status).toBe(400);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('serves /healthz when the store is reachable', async () => {
    const response = await fetch(`${gw.url}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ status: 'ok', store: 'sqlite' });
  });

  it("answers an unknown frontend on every frontend call exactly as another merchant's frontend, revealing nothing", async () => {
    const other = await gw.createMerchant();
    const now = () => unixSeconds(gw.gateway.clock);
    const calls: [string, (frontend: string) => Record<string, unknown>][] = [
      ['/api/process', (frontend) => saleB(gw.merchant, { frontend, timestamp: now() })],
      ['/api/process', (frontend) => refundC(gw.merchant, 1, { frontend, timestamp: now() })],
      ['/api/process', (frontend) => payoutE(gw.merchant, { frontend, timestamp: now() })],
      [
        '/api/transaction-status',
        (frontend) => ({ merchant_id: gw.merchant.merchant_id, frontend, trace_id: 1, timestamp: now(), version: '1.1' }),
      ],
      ['/api/init-checkout', (frontend) => initCheckout(gw.merchant, 'https://merchant.example', { frontend, timestamp: now() })],
      ['/api/init-pay-out', (frontend) => initPayOut(gw.merchant, 'https://merchant.example', { frontend, timestamp: now() })],
    ];
    const bare = (body: Record<string, unknown>) => {
      const { signature: _signature, timestamp: _timestamp, ...rest } = body;
      return rest;
    };
    for (const [path, make] of calls) {
      const unknown = await postSigned(gw.url, path, make('no-such-frontend'), gw.merchant.secret);
      const foreign = await postSigned(gw.url, path, make(other.frontend), gw.merchant.secret);
      const label = `${path} ${String(make('x').transaction_type ?? '')}`;
      expect(unknown.http_status, label).toBe(200);
      expect(unknown.body, label).toMatchObject({ status: 11, description: UNKNOWN_CREDENTIALS });
      expect(Object.keys(bare(unknown.body)).sort(), label).toEqual(['description', 'status', 'version']);
      expect(bare(foreign.body), label).toEqual(bare(unknown.body));
      // The merchant_id was known, so the answer is signed with that merchant's secret (postSigned checked it).
      expect(typeof unknown.body.signature, label).toBe('string');
    }
  });

  it('lists in /openapi.json every route the app registered, with the methods it answers', async () => {
    const doc = (await (await fetch(`${gw.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    // The app's own route table (Fastify's), paths rebuilt from its tree.
    const registered = new Set<string>();
    const stack: string[] = [];
    for (const line of gw.gateway.app.printRoutes({ commonPrefix: false }).split('\n')) {
      const match = /^((?:│ {3}| {4})*)(?:├── |└── )(.+?)(?: \(([A-Z, ]+)\))?$/.exec(line);
      if (!match) continue;
      const depth = match[1]!.length / 4;
      stack.length = depth;
      const full = (stack[depth - 1] ?? '') + match[2]!;
      stack.push(full);
      if (match[3]) registered.add(full);
    }
    expect(registered.size).toBeGreaterThan(30);
    const openapi_path = (url: string) => url.replace(/:([A-Za-z_]+)/g, '{$1}');
    for (const url of registered) {
      // The interactive reference's own files (Swagger UI): pages about the API, not part of it.
      if (url === '/reference' || url.startsWith('/reference/')) continue;
      // The back office: a web app for people (docs/backoffice.md), its pages listed in http/backoffice/routes.ts, not API operations.
      if (url === '/backoffice' || url.startsWith('/backoffice/')) continue;
      // Every path also answers a method it does not take with 405 and Allow: the methods it does take.
      const probe = await fetch(`${gw.url}${url.replace(/:([A-Za-z_]+)/g, 'x')}`, { method: 'PATCH' });
      expect(probe.status, url).toBe(405);
      const allowed = (probe.headers.get('allow') ?? '')
        .split(',')
        .map((m) => m.trim().toLowerCase())
        .filter(Boolean)
        .sort();
      expect(allowed.length, url).toBeGreaterThan(0);
      expect(Object.keys(doc.paths[openapi_path(url)] ?? {}).sort(), url).toEqual(allowed);
    }
    // And nothing documented that the app does not serve.
    const documented = Object.keys(doc.paths);
    expect(documented.filter((path) => ![...registered].some((url) => openapi_path(url) === path))).toEqual([]);
  });

  it("describes for a client generator: ids, answers, security schemes and the gateway's own endpoints", async () => {
    type Operation = {
      operationId?: string;
      security?: Record<string, string[]>[];
      responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
    };
    const doc = (await (await fetch(`${gw.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, Operation>>;
      components: { securitySchemes: Record<string, { type: string }>; schemas: Record<string, unknown> };
    };
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['gtAuthentication', 'gtBodySignature', 'operatorToken']);
    const ids = new Set<string>();
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        const where = `${method} ${path}`;
        expect(operation.operationId, where).toMatch(/^[a-z]+[A-Za-z0-9]*$/);
        expect(ids.has(operation.operationId!), where).toBe(false);
        ids.add(operation.operationId!);
        const success = operation.responses['200'];
        expect(success, where).toBeDefined();
        if (path.startsWith('/operator/') || path === '/metrics') expect(operation.security, where).toEqual([{ operatorToken: [] }]);
        if (path.startsWith('/api/v1.3/')) expect(operation.security, where).toContainEqual({ gtAuthentication: [] });
        if (path.startsWith('/api/') && !path.startsWith('/api/v1.3/')) {
          expect(operation.security, where).toEqual([]);
          for (const code of ['400', '413', '429', '500']) expect(operation.responses[code], `${where} ${code}`).toBeDefined();
        }
      }
    }
    for (const path of ['/healthz', '/metrics', '/openapi.json']) expect(doc.paths[path]?.get, path).toBeDefined();
    // Every reference resolves, and every schema compiles as JSON Schema.
    const text = JSON.stringify(doc);
    for (const [, ref] of text.matchAll(/"\$ref":"#\/components\/schemas\/([A-Za-z]+)"/g))
      expect(doc.components.schemas[ref!], ref).toBeDefined();
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema(doc.components.schemas.Envelope as object, '#/components/schemas/Envelope');
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const operation of Object.values(methods)) {
        for (const answer of Object.values(operation.responses)) {
          const schema = answer.content?.['application/json']?.schema as Record<string, unknown> | undefined;
          if (schema && !('$ref' in schema)) expect(() => ajv.compile(schema), path).not.toThrow();
        }
      }
    }
  });

  it('serves an OpenAPI document of every endpoint from the route schemas', async () => {
    const doc = (await (await fetch(`${gw.url}/openapi.json`)).json()) as {
      openapi: string;
      paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: { anyOf?: unknown[] } }> } }>>;
    };
    expect(doc.openapi).toBe('3.1.0');
    for (const path of ['/api/process', '/api/tokenize', '/api/transaction-status', '/sandbox/3ds/{token}', '/sandbox/clock']) {
      expect(doc.paths[path], path).toBeDefined();
    }
    const process_schema = doc.paths['/api/process']!.post!.requestBody!.content['application/json']!.schema;
    expect(process_schema.anyOf?.length).toBeGreaterThanOrEqual(3);
    expect(JSON.stringify(process_schema)).toContain('"maxLength":19');
  });
});

// /healthz follows the store: 503 once its connections are gone.
// docs/errors.md "Every problem at once": several missing and invalid fields named in one answer,
// in the route schema's order, the description within its limit and error_details for the rest.
describe('every field problem at once', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway('sqlite');
  });
  afterAll(async () => {
    await gw?.close();
  });

  const missing = (name: string) => `Missing required field: ${name}`;
  const AMOUNT = 'Invalid field: amount (expected a whole number of minor units, 1 to 9007199254740991)';
  const CURRENCY = 'Invalid field: currency (expected an ISO 4217 code the gateway knows, such as USD)';
  const EMAIL = 'Invalid field: email (expected an e-mail address of up to 50 characters)';

  it('names missing and invalid fields together on a 1.2 sale, in the schema order whatever the order of the keys', async () => {
    const body = saleA(gw.merchant, { amount: 'abc', dob: undefined, email: 'nope', phone: undefined });
    const reversed = Object.fromEntries(Object.entries(body).reverse());
    for (const sent of [body, reversed]) {
      const answer = await postSigned(gw.url, '/api/process', sent, gw.merchant.secret);
      expect(answer.http_status).toBe(200);
      expect(answer.body).toMatchObject({
        status: 10,
        version: '1.2',
        description: [AMOUNT, missing('dob'), EMAIL, missing('phone')].join('; '),
      });
      expect(answer.body).not.toHaveProperty('error_details');
    }
    // One problem is named exactly as it always was.
    const one = await postSigned(gw.url, '/api/process', saleA(gw.merchant, { dob: undefined }), gw.merchant.secret);
    expect(one.body).toMatchObject({ status: 10, description: 'Missing required field: dob' });
    expect(one.body).not.toHaveProperty('error_details');
  });

  it('fills the description on a 1.1 sale and lists them all in error_details, a missing timestamp among them', async () => {
    const names = ['pin', 'dob', 'email', 'phone', 'requester_ip', 'address', 'city', 'country', 'first_name', 'last_name', 'zip', 'state'];
    const gone = Object.fromEntries([...names, 'timestamp'].map((name) => [name, undefined]));
    const answer = await postSigned(gw.url, '/api/process', saleB(gw.merchant, { currency: 'usd', ...gone }), gw.merchant.secret);
    expect(answer.http_status).toBe(200);
    expect(answer.body).toMatchObject({ status: 10, version: '1.1' });
    const texts = [CURRENCY, ...[...names, 'timestamp'].map(missing)];
    const description = answer.body.description as string;
    expect(description.length).toBeLessThanOrEqual(256);
    const shown = texts.findIndex(
      (_, count) => description === `${texts.slice(0, count).join('; ')}; +${texts.length - count} more in error_details`,
    );
    expect(shown, description).toBeGreaterThanOrEqual(3);
    expect(answer.body.error_details).toBe(`${CURRENCY}; Missing required fields: ${[...names, 'timestamp'].join(', ')}`);
  });

  it('keeps init-checkout (1.1) within 75 characters and to the envelope, naming as many as fit', async () => {
    const two = await postSigned(
      gw.url,
      '/api/init-checkout',
      initCheckout(gw.merchant, 'https://shop.example', { order_id: undefined, amount: undefined }),
      gw.merchant.secret,
    );
    expect(two.body).toMatchObject({ status: 10, description: `${missing('order_id')}; ${missing('amount')}` });
    const three = await postSigned(
      gw.url,
      '/api/init-checkout',
      initCheckout(gw.merchant, 'https://shop.example', { order_id: undefined, amount: undefined, currency: 'usd' }),
      gw.merchant.secret,
    );
    expect(three.body).toMatchObject({
      status: 10,
      description: 'Invalid field: currency (expected an ISO 4217 code such as USD); +2 more',
    });
    expect(Object.keys(three.body).sort()).toEqual(['description', 'signature', 'status', 'timestamp', 'version']);
  });

  it('names every problem on a v1.3 call too', async () => {
    const answer = await v13(gw.url, 'POST', '/api/v1.3/subscription-plan', gw.merchant, {
      prices: [{ amount: 1, currency: 'USD' }],
      billing_cycle: 'fortnightly',
    });
    expect(answer.body).toMatchObject({
      status: 10,
      description: expect.stringMatching(/^Missing required field: name; Invalid field: billing_cycle \(expected /),
    });
  });
});

describe.each(storeKinds())('/healthz on %s', (kind) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(kind);
  });
  afterAll(async () => {
    await gw?.close();
  });

  const health = async () => {
    const response = await fetch(`${gw.url}/healthz`);
    return { http_status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  it('answers 503 with the envelope of its own once the store cannot be reached', async () => {
    expect(await health()).toEqual({ http_status: 200, body: { status: 'ok', store: kind } });
    // The store's connections are closed under the running gateway (SQLite: both file handles;
    // PostgreSQL: the whole pool), so every query, /healthz's included, fails from now on.
    await gw.gateway.deps.store.close();
    expect(await health()).toEqual({ http_status: 503, body: { status: 'unavailable', store: kind } });
    // A signed call then fails as our fault, never the merchant's: HTTP 500, status -1.
    const sale = await postJson(gw.url, '/api/process', saleA(gw.merchant));
    expect(sale.http_status).toBe(500);
    expect(sale.body).toMatchObject({ status: -1, description: 'Internal error' });
  });
});

// PostgreSQL restarted or an administrator killed the sessions: connections die under queries in
// flight. The gateway must survive it (a connection's error is not a crash), answer those requests
// as its own failure, and serve again on fresh connections.
describe.runIf(storeKinds().includes('postgres'))('connections cut by PostgreSQL', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway('postgres');
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('survives pg_terminate_backend during a burst of sales and serves again afterwards', async () => {
    const database = new URL(gw.database_url!).pathname.slice(1);
    const admin = new pg.Client({ connectionString: ADMIN_DATABASE_URL });
    await admin.connect();
    try {
      const burst = Array.from({ length: 40 }, (_, i) =>
        postSigned(gw.url, '/api/process', saleA(gw.merchant, { order_id: `cut-${i}` }), gw.merchant.secret),
      );
      await new Promise((resolve) => setTimeout(resolve, 20));
      const { rows } = await admin.query(
        'select count(pg_terminate_backend(pid))::int as n from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
        [database],
      );
      expect((rows[0] as { n: number }).n).toBeGreaterThan(0);
      const answers = await Promise.all(burst);
      for (const answer of answers) {
        // Committed and answered, or failed as the gateway's own fault: never a merchant-side error for a cut connection.
        if (answer.http_status === 200) expect(answer.body, JSON.stringify(answer.body)).toMatchObject({ status: 0 });
        else expect(answer).toMatchObject({ http_status: 500, body: { status: -1 } });
      }
      // Every status 0 is a stored transaction.
      for (const [i, answer] of answers.entries()) {
        if (answer.body.status !== 0) continue;
        const row = await gw.gateway.deps.store.transactions.findByKey(gw.merchant.merchant_id, 'sale', `cut-${i}`);
        expect(row?.trace_id).toBe(answer.body.trace_id);
      }
    } finally {
      await admin.end();
    }
    // Still alive, and on new connections.
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
    const after = await postSigned(gw.url, '/api/process', saleA(gw.merchant, { order_id: 'after-cut' }), gw.merchant.secret);
    expect(after.body).toMatchObject({ status: 0, transaction_status: 'approved' });
  });
});
