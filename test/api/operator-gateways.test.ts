// The operator API for gateways (decisions.md §13) over real HTTP, on both stores, in live mode:
// create a merchant's Checkout.com gateway, list and show it without its secrets, replace its
// credentials (the next payment uses them), disable it (no new payment; status 15 says so) and
// enable it again; name it (its label: a default, given at create, changed); bad input is 400
// naming the field, what it expects and what came, and creates nothing; no token, 401. A live
// gateway logs at start-up each merchant with no usable gateway.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refundC, saleA } from '../support/bodies.js';
import { postSigned } from '../support/client.js';
import { startTestGateway } from '../support/gateway.js';
import { createTestDatabase } from '../support/postgres.js';
import {
  CHECKOUT_WEBHOOK_SECRET,
  type LiveCheckout,
  LIVE_ENV,
  liveSale,
  operatorCall,
  PROCESSING_CHANNEL,
  startLiveCheckout,
} from '../support/live-checkout.js';
import { waitUntil } from '../support/notification-merchant.js';
import { storeKinds } from '../support/stores.js';

describe.each(storeKinds())('operator API for gateways on %s', (kind) => {
  let live: LiveCheckout;
  beforeAll(async () => {
    live = await startLiveCheckout(kind);
  });
  afterAll(async () => {
    await live?.close();
  });

  const op = (method: string, path: string, body?: unknown) => operatorCall(live.gw, method, path, body);
  const sale = (overrides: Record<string, unknown> = {}) =>
    live.process(liveSale(live, saleA(live.merchant, { gateway: live.gateway, ...overrides })));

  it('shows and lists a gateway with its settings that are not secret and the names of those that are, never a secret', async () => {
    const shown = await op('GET', `/operator/gateways/${live.gateway}`);
    expect(shown.status).toBe(200);
    expect(shown.body).toMatchObject({
      status: 0,
      gateway: live.gateway,
      gateway_id: live.gateway,
      merchant_id: live.merchant.merchant_id,
      connector: 'checkout',
      processor: 'checkout',
      currencies: ['USD', 'EUR', 'GBP'],
      enabled: true,
      usable_here: true,
      webhook_url: live.webhook_url,
      settings: { processing_channel_id: PROCESSING_CHANNEL, base_url: live.fake.url, three_ds: 'never' },
      secret_settings: ['secret_key', 'webhook_secret'],
    });
    expect(live.webhook_url).toBe(`${live.gw.url}/webhooks/checkout/${live.gateway}`);
    const listed = await op('GET', `/operator/gateways?merchant_id=${live.merchant.merchant_id}`);
    expect((listed.body.gateways as unknown[]).map((g) => (g as { gateway: string }).gateway)).toEqual([live.gateway]);
    for (const answer of [shown, listed]) {
      expect(JSON.stringify(answer.body)).not.toContain(live.fake.secret_key);
      expect(JSON.stringify(answer.body)).not.toContain(CHECKOUT_WEBHOOK_SECRET);
    }
    // Nor does any log line of the gateway hold them (the creation request included).
    const log = fs.readFileSync(live.gw.log_file, 'utf8');
    expect(log).not.toContain(live.fake.secret_key);
    expect(log).not.toContain(CHECKOUT_WEBHOOK_SECRET);
  });

  it('refuses bad input with 400 naming the field and creates nothing; 401 without the token', async () => {
    const before = (await op('GET', '/operator/gateways')).body.gateways;
    const settings = {
      secret_key: live.fake.secret_key,
      processing_channel_id: PROCESSING_CHANNEL,
      webhook_secret: CHECKOUT_WEBHOOK_SECRET,
      base_url: live.fake.url,
    };
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ connector: 'checkout', currencies: ['USD'], settings }, /Invalid field: merchant_id/],
      [
        { merchant_id: live.merchant.merchant_id, connector: 'worldpay', currencies: ['USD'], settings },
        /Invalid field: connector \(expected one of sandbox, checkout, stripe(, [a-z, ]+)?\)/,
      ],
      [
        { merchant_id: live.merchant.merchant_id, connector: 'sandbox' },
        /Invalid field: connector \(sandbox gateways take no payments in live mode\)/,
      ],
      [{ merchant_id: live.merchant.merchant_id, connector: 'checkout', settings }, /Invalid field: currencies \(required/],
      [{ merchant_id: live.merchant.merchant_id, connector: 'checkout', currencies: 'USD', settings }, /Invalid field: currencies/],
      [
        {
          merchant_id: live.merchant.merchant_id,
          connector: 'checkout',
          currencies: ['USD'],
          settings: { ...settings, webhook_secret: 'short' },
        },
        /^Invalid field: webhook_secret \(expected 16 to 256 printable characters without spaces, got a value of 5 characters that does not fit \(not shown: the setting is secret\)\)$/,
      ],
      [
        {
          merchant_id: live.merchant.merchant_id,
          connector: 'checkout',
          currencies: ['USD'],
          settings: { ...settings, processing_channel_id: 'pc_123' },
        },
        /^Invalid field: processing_channel_id \(expected pc_ followed by 26 lowercase letters or digits, got "pc_123"\)$/,
      ],
      [
        { merchant_id: live.merchant.merchant_id, connector: 'checkout', currencies: ['USD'], settings, label: 'L'.repeat(65) },
        /^Invalid field: label \(expected text of 1 to 64 characters, got 65\)$/,
      ],
      [
        { merchant_id: live.merchant.merchant_id, connector: 'checkout', currencies: ['USD'], settings: { ...settings, secret_key: 42 } },
        /Invalid field: settings.secret_key \(expected text\)/,
      ],
      [{ merchant_id: live.merchant.merchant_id, connector: 'checkout', currencies: ['USD'], settings: [] }, /Invalid field: settings/],
    ];
    for (const [body, description] of cases) {
      const answer = await op('POST', '/operator/gateways', body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.description).toMatch(description);
      expect(JSON.stringify(answer.body)).not.toContain(live.fake.secret_key);
    }
    expect(
      (await op('POST', '/operator/gateways', { merchant_id: 'nobody', connector: 'checkout', currencies: ['USD'], settings })).status,
    ).toBe(404);
    expect((await op('GET', '/operator/gateways')).body.gateways).toEqual(before);
    const anonymous = await fetch(`${live.gw.url}/operator/gateways`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(anonymous.status).toBe(401);
    expect((await fetch(`${live.gw.url}/operator/gateways/${live.gateway}`)).status).toBe(401);
  });

  it('disabled: no new payment (status 15 says so), its transactions still refund; enabled again: payments again', async () => {
    const paid = await sale({ amount: 1500 });
    expect(paid.body).toMatchObject({ transaction_status: 'approved' });
    await live.fake.waitForEvent((e) => e.payment_id === paid.body.transaction_id && e.type === 'payment_captured');
    expect((await op('POST', `/operator/gateways/${live.gateway}`, { enabled: false })).body).toMatchObject({
      status: 0,
      enabled: false,
      description: 'Gateway disabled: it takes no new payments',
    });
    expect((await sale()).body).toMatchObject({ status: 15, description: `Gateway unavailable: gateway ${live.gateway} is disabled` });
    const refund = await live.process(liveSale(live, refundC(live.merchant, paid.body.trace_id, { amount: 500, currency: 'USD' })));
    expect(refund.body).toMatchObject({ status: 0, transaction_status: 'pending' });
    await live.settled(refund.body.trace_id as number, 'approved');
    expect((await op('POST', `/operator/gateways/${live.gateway}`, { enabled: true })).body).toMatchObject({ enabled: true });
    expect((await sale()).body).toMatchObject({ status: 0, transaction_status: 'approved' });
  });

  it('new credentials take effect with the next payment; the old ones are gone', async () => {
    const replaced = await op('PUT', `/operator/gateways/${live.gateway}/settings`, {
      settings: { secret_key: 'sk_sbox_not_the_right_key_01' },
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({
      status: 0,
      secret_settings: ['secret_key', 'webhook_secret'],
      settings: { processing_channel_id: PROCESSING_CHANNEL },
    });
    expect(JSON.stringify(replaced.body)).not.toContain('sk_sbox_not_the_right_key_01');
    const refused = await sale();
    expect(refused.body).toMatchObject({ status: 0, transaction_status: 'error', error_code: '401' });
    expect(live.fake.requests.at(-1)!.headers.authorization).toBe('Bearer sk_sbox_not_the_right_key_01');
    expect((await op('PUT', `/operator/gateways/${live.gateway}/settings`, { settings: { three_ds: 'maybe' } })).status).toBe(400);
    expect((await op('PUT', `/operator/gateways/${live.gateway}/settings`, { settings: {} })).status).toBe(400);
    expect((await op('PUT', `/operator/gateways/${'a'.repeat(32)}/settings`, { settings: { three_ds: 'always' } })).status).toBe(404);
    await op('PUT', `/operator/gateways/${live.gateway}/settings`, { settings: { secret_key: live.fake.secret_key } });
    expect((await sale()).body).toMatchObject({ status: 0, transaction_status: 'approved' });
  });

  it('names a gateway by its label: "<connector> <first 8 of the id>" by default, given at create, changed by POST, 1 to 64 characters', async () => {
    const path = `/operator/gateways/${live.gateway}`;
    expect((await op('GET', path)).body.label).toBe(`checkout ${live.gateway.slice(0, 8)}`);
    const renamed = await op('POST', path, { label: '  Checkout main  ' });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({
      status: 0,
      description: 'Gateway renamed',
      gateway: live.gateway,
      label: 'Checkout main',
      enabled: true,
    });
    for (const [label, description] of [
      ['x'.repeat(65), 'Invalid field: label (expected text of 1 to 64 characters, got 65)'],
      ['', 'Invalid field: label (expected text of 1 to 64 characters, got nothing)'],
      [42, 'Invalid field: label (expected text of 1 to 64 characters)'],
    ] as const) {
      const refused = await op('POST', path, { label, enabled: false });
      expect([refused.status, refused.body.description]).toEqual([400, description]);
    }
    // A refused label changed nothing else the request asked.
    expect((await op('GET', path)).body).toMatchObject({ label: 'Checkout main', enabled: true });
    const created = await op('POST', '/operator/gateways', {
      merchant_id: live.merchant.merchant_id,
      connector: 'checkout',
      label: 'Checkout second',
      currencies: ['USD'],
      settings: {
        secret_key: live.fake.secret_key,
        processing_channel_id: PROCESSING_CHANNEL,
        webhook_secret: CHECKOUT_WEBHOOK_SECRET,
        base_url: live.fake.url,
      },
    });
    expect([created.status, created.body.label]).toEqual([201, 'Checkout second']);
    const listed = await op('GET', `/operator/gateways?merchant_id=${live.merchant.merchant_id}`);
    expect((listed.body.gateways as { label: string }[]).map((g) => g.label)).toEqual(['Checkout main', 'Checkout second']);
  });
});

describe.each(storeKinds())('live start-up on %s', (kind) => {
  it('logs each merchant that has no usable gateway, once, naming it', async () => {
    const database = kind === 'postgres' ? await createTestDatabase() : undefined;
    const first = await startTestGateway(kind, { env: LIVE_ENV, ...(database ? { database } : {}) });
    const without = await first.createMerchant({ merchant_id: `bare-${kind}` });
    expect(without.gateway).toBeNull();
    await first.close();
    // The same database and data folder again: a new start reads the merchants.
    const again = await startTestGateway(kind, { env: LIVE_ENV, data_dir: first.data_dir, ...(database ? { database } : {}) });
    try {
      const lines = await waitUntil(() => {
        const log = fs.existsSync(again.log_file) ? fs.readFileSync(again.log_file, 'utf8') : '';
        const found = log.split('\n').filter((line) => line.includes('has no usable gateway'));
        return found.length >= 2 ? found : undefined;
      }, 'the start-up warnings');
      const named = lines.map((line) => (JSON.parse(line) as { merchant_id: string }).merchant_id).sort();
      expect(named).toEqual([first.merchant.merchant_id, `bare-${kind}`].sort());
      expect(lines[0]).toMatch(/paygate gateway create/);
      const answer = await postSigned(again.url, '/api/process', saleA(without), without.secret);
      expect(answer.body).toMatchObject({ status: 15, description: 'Gateway unavailable: this merchant has no gateway yet' });
    } finally {
      await again.close();
      await database?.drop();
    }
  });
});
