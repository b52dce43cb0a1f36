// The v1.3 subscription API through the real HTTP server, on each store: the Gt-Authentication
// header (decisions.md §2), plans (create, update, read, list) and subscriptions (create, read,
// list, cancel, activate), every call's success and failure paths.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CardData } from '../../src/domain/cards.js';
import type { CreatedMerchant } from '../../src/domain/merchants.js';
import { signBody } from '../../src/domain/signing.js';
import { answerHeaderSignature, requestHeaderSignature } from '../../src/http/route.js';
import { classifyReply } from '../../src/notifications/sender.js';
import { subscriptionEventSignature } from '../../src/notifications/subscription-event.js';
import { vaultCard } from '../../src/operations/card-vault.js';
import { nowSeconds } from '../support/client.js';
import { MASTERCARD, VISA } from '../support/bodies.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { withStoppedClock } from '../support/clock.js';
import { storeKinds } from '../support/stores.js';
import { loadVectors } from '../support/vectors.js';
import { createPlanVia, gtRequestHeader, planBody, priceIdOf, sha384, subscribeVia, tokenize, v13 } from '../support/v13.js';

const PLANS = '/api/v1.3/subscription-plan';
const SUBS = '/api/v1.3/subscription';

describe('Gt-Authentication vector (decisions.md §2)', () => {
  const vector = loadVectors().header_signature;

  it('signs merchant_id + application_key + timestamp + secret as the documented value', () => {
    expect(requestHeaderSignature(vector.merchant_id, vector.application_key, String(vector.timestamp), vector.secret)).toBe(
      vector.signature,
    );
    expect(gtRequestHeader(vector.merchant_id, vector.application_key, vector.timestamp, vector.secret)).toBe(vector.signature);
    expect(vector.signature).toBe('a02f7d25db2abcccf1551cedb595e76261e58f915d904ad4fd977ac9a3e43e5f66bae50fa7c3dbe739af1d6996159c0c');
  });

  it('signs answers over status + timestamp + secret', () => {
    expect(answerHeaderSignature(0, vector.timestamp, vector.secret)).toBe(sha384(`0${vector.timestamp}${vector.secret}`));
    expect(answerHeaderSignature(-1, vector.timestamp, vector.secret)).toBe(sha384(`-1${vector.timestamp}${vector.secret}`));
  });
});

describe('subscription event signing and replies (decisions.md §2)', () => {
  const secret = 'demo-secret';
  const payload = {
    event: 'subscription.renewed',
    merchant_id: 'demo-merchant',
    application_key: 'demo-app',
    subscription_id: 'sub_1',
    plan_id: 'plan_1',
    cid: 'cust-42',
    subscription_status: 'active',
    price: { price_id: 'price_1', amount: 1999, currency: 'USD' },
    version: '1.3',
    timestamp: 1763740800,
  };

  it('signs event + merchant_id + application_key + cid + plan_id + subscription_id + subscription_status + timestamp + secret', () => {
    expect(subscriptionEventSignature(payload, secret)).toBe(
      sha384('subscription.reneweddemo-merchantdemo-appcust-42plan_1sub_1active1763740800demo-secret'),
    );
  });

  it('accepts a reply authenticated by its Gt-Authentication header or by a body signature; refuses anything else', () => {
    const reply = { status: 0, description: 'OK', version: '1.3', timestamp: 1763740801 };
    const header = sha384(`0${reply.timestamp}${secret}`);
    expect(classifyReply(200, JSON.stringify(reply), secret, header).outcome).toBe('delivered');
    expect(classifyReply(200, JSON.stringify(reply), secret, sha384(`0${reply.timestamp}other`)).outcome).toBe('retry');
    expect(classifyReply(200, JSON.stringify(reply), secret, null)).toMatchObject({ outcome: 'retry', reason: 'reply not signed' });
    expect(classifyReply(200, JSON.stringify({ ...reply, signature: signBody(reply, secret) }), secret, null).outcome).toBe('delivered');
    const refused = { ...reply, status: 1, description: 'unknown subscription' };
    expect(classifyReply(200, JSON.stringify(refused), secret, sha384(`1${reply.timestamp}${secret}`)).outcome).toBe('refused');
    const failed = { ...reply, status: -1 };
    expect(classifyReply(200, JSON.stringify(failed), secret, sha384(`-1${reply.timestamp}${secret}`)).outcome).toBe('retry');
    // Transaction notifications never take the header: without the argument the body signature is required.
    expect(classifyReply(200, JSON.stringify(reply), secret).outcome).toBe('retry');
  });
});

describe.each(storeKinds())('v1.3 subscription API on %s', (kind) => {
  let gw: TestGateway;
  let other: CreatedMerchant;
  let card_token: string;

  beforeAll(async () => {
    gw = await startTestGateway(kind, { env: { PAYGATE_BILLING_POLL_MS: '60000' } });
    other = await gw.createMerchant();
    card_token = await tokenize(gw.url, gw.merchant);
  });
  afterAll(async () => {
    await gw?.close();
  });

  const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, fields: Record<string, unknown> = {}, options = {}) =>
    v13(gw.url, method, path, gw.merchant, fields, options);

  /** A merchant whose EUR gateway has MIT disabled (and its USD gateway enabled). */
  async function merchantWithoutMitEur(): Promise<CreatedMerchant> {
    const merchant_id = `nomit-${randomBytes(4).toString('hex')}`;
    const secret = 'no-mit-secret-0123';
    const { store, sealer } = gw.gateway.deps;
    await store.transaction((tx) =>
      tx.merchants.insert({
        merchant_id,
        secret_sealed: sealer.seal(secret, `merchant-secret:${merchant_id}`),
        applications: ['nomit-app'],
        frontends: [{ name: 'nomit-front', currency: 'USD' }],
        gateways: [
          {
            gateway_id: `${merchant_id}-mit`,
            merchant_id,
            connector: 'sandbox',
            currencies: 'USD',
            mit_enabled: 1,
            hold_payouts: 0,
            settings_sealed: null,
            created_at_ms: Date.now(),
            updated_at_ms: Date.now(),
          },
          {
            gateway_id: `${merchant_id}-cit`,
            merchant_id,
            connector: 'sandbox',
            currencies: 'USD,EUR',
            mit_enabled: 0,
            hold_payouts: 0,
            settings_sealed: null,
            created_at_ms: Date.now(),
            updated_at_ms: Date.now(),
          },
        ],
        created_at_ms: Date.now(),
      }),
    );
    return { merchant_id, secret, application_key: 'nomit-app', frontend: 'nomit-front', currency: 'USD', gateway: `${merchant_id}-mit` };
  }

  /**
   * A card_token of the merchant's whose card has expired since it was stored (tokenize refuses
   * an expired card, so it is vaulted as a card that was valid when stored).
   */
  async function expiredCardToken(merchant_id: string, pin = 'cust-42'): Promise<string> {
    const { store, sealer, clock } = gw.gateway.deps;
    return store.transaction((tx) =>
      vaultCard(tx, sealer, merchant_id, pin, new CardData(VISA, { month: 1, year: 2021 }, null), clock.now_ms()),
    );
  }

  describe('authentication and the envelope', () => {
    it('answers with a verified Gt-Authentication header, version 1.3 and a timestamp', async () => {
      const answer = await call('GET', PLANS);
      expect(answer.http_status).toBe(200);
      expect(answer.body).toMatchObject({ status: 0, version: '1.3' });
      expect(typeof answer.body.timestamp).toBe('number');
      expect(answer.header).toBe(sha384(`0${String(answer.body.timestamp)}${gw.merchant.secret}`));
      expect(answer.body.signature).toBeUndefined();
    });

    it('refuses a wrong, missing or uppercase header with status 2, answered with a header', async () => {
      const timestamp = nowSeconds();
      const good = gtRequestHeader(gw.merchant.merchant_id, gw.merchant.application_key, timestamp, gw.merchant.secret);
      for (const header of [
        gtRequestHeader(gw.merchant.merchant_id, gw.merchant.application_key, timestamp, 'wrong-secret'),
        null,
        good.toUpperCase(),
        good.slice(0, 95),
        'x',
      ]) {
        const answer = await call('POST', PLANS, planBody(), { timestamp, header });
        expect(answer.body, String(header)).toMatchObject({ status: 2 });
        expect(answer.body.description).toMatch(/signature/i);
        expect(answer.header).not.toBeNull();
      }
      expect((await gw.gateway.deps.store.subscriptions.listPlans(gw.merchant.merchant_id, { offset: 0, limit: 100 })).total).toBe(0);
    });

    it("refuses a header computed over another timestamp than the body's", async () => {
      const answer = await call(
        'GET',
        PLANS,
        {},
        {
          header: gtRequestHeader(gw.merchant.merchant_id, gw.merchant.application_key, nowSeconds() - 5, gw.merchant.secret),
          timestamp: nowSeconds(),
        },
      );
      expect(answer.body.status).toBe(2);
    });

    it('accepts 59 s off and refuses 61 s off, in both directions', async () => {
      // The gateway's clock stands still mid-second, so no second boundary can flip the edge.
      await withStoppedClock(gw.gateway, async (now_s) => {
        for (const offset of [-59, 59]) expect((await call('GET', PLANS, {}, { timestamp: now_s + offset })).body.status).toBe(0);
        for (const offset of [-61, 61]) {
          const answer = await call('POST', PLANS, planBody(), { timestamp: now_s + offset });
          expect(answer.body).toMatchObject({ status: 1, description: 'Timestamp expired' });
        }
      });
    });

    it('answers an unknown merchant and a foreign application_key alike, the unknown merchant without a header', async () => {
      const unknown = await v13(gw.url, 'GET', PLANS, { ...gw.merchant, merchant_id: 'nobody-here' });
      const foreign_app = await v13(gw.url, 'GET', PLANS, { ...gw.merchant, application_key: other.application_key });
      expect(unknown.body.status).toBe(11);
      expect(foreign_app.body.status).toBe(11);
      expect(unknown.body.description).toBe(foreign_app.body.description);
      expect(unknown.header).toBeNull();
    });

    it('names a missing or mistyped merchant_id, application_key, timestamp or version with a positive status', async () => {
      const cases: [Record<string, unknown>, string[], RegExp][] = [
        [{}, ['merchant_id'], /Missing required field: merchant_id/],
        [{}, ['application_key'], /Missing required field: application_key/],
        [{ application_key: 'a'.repeat(33) }, [], /Invalid field: application_key/],
        [{}, ['timestamp'], /Missing required field: timestamp/],
        [{ timestamp: String(nowSeconds()) }, [], /Invalid field: timestamp/],
        [{ version: 'v1.2' }, [], /Invalid field: version/],
      ];
      for (const [fields, omit, description] of cases) {
        const answer = await call('POST', PLANS, planBody(fields), { omit });
        expect(answer.body.status, JSON.stringify(fields)).toBe(10);
        expect(answer.body.description).toMatch(description);
      }
      expect((await call('POST', PLANS, planBody({ version: '1.3' }))).body.status).toBe(0);
      expect((await call('POST', PLANS, planBody(), { omit: ['version'] })).body.status).toBe(0);
    });

    it('answers 400 for a body that is not a JSON object and 405 for a wrong method', async () => {
      const response = await fetch(`${gw.url}${PLANS}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '[1]' });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ status: 23, version: '1.3' });
      const wrong = await fetch(`${gw.url}${PLANS}`, { method: 'DELETE' });
      expect(wrong.status).toBe(405);
    });

    it('documents the v1.3 routes in /openapi.json with the Gt-Authentication header', async () => {
      const openapi = (await (await fetch(`${gw.url}/openapi.json`)).json()) as {
        paths: Record<string, Record<string, { security?: Record<string, string[]>[] }>>;
        components: { securitySchemes: Record<string, { type: string; in: string; name: string }> };
      };
      expect(openapi.components.securitySchemes.gtAuthentication).toMatchObject({
        type: 'apiKey',
        in: 'header',
        name: 'Gt-Authentication',
      });
      for (const [path, method] of [
        [PLANS, 'post'],
        [`${PLANS}/{planId}`, 'put'],
        [`${PLANS}/{planId}`, 'get'],
        [SUBS, 'post'],
        [SUBS, 'get'],
        [`${SUBS}/{subscriptionId}`, 'get'],
        [`${SUBS}/{subscriptionId}/cancel`, 'post'],
        [`${SUBS}/{subscriptionId}/activate`, 'post'],
      ] as const) {
        expect(openapi.paths[path]?.[method]?.security, `${method} ${path}`).toContainEqual({ gtAuthentication: [] });
      }
    });
  });

  describe('plans', () => {
    it('creates a plan with a price_id per price and the documented defaults', async () => {
      const answer = await call('POST', PLANS, planBody());
      expect(answer.body).toMatchObject({
        status: 0,
        description: 'Plan created',
        name: 'Gold monthly',
        plan_description: 'Everything, every month',
        billing_cycle: 'monthly',
        trial_period: 0,
        trial_period_cycle: 'days',
        expiration_cycles: null,
        retries_number: 3,
        retries_delay_days: 1,
        subscription_plan_status: 'active',
        version: '1.3',
      });
      expect(answer.body.plan_id).toMatch(/^[A-Za-z0-9_-]{1,32}$/);
      const prices = answer.body.prices as { price_id: string; amount: number; currency: string }[];
      expect(prices.map((p) => [p.amount, p.currency])).toEqual([
        [1999, 'USD'],
        [1799, 'EUR'],
      ]);
      expect(new Set(prices.map((p) => p.price_id)).size).toBe(2);
      for (const price of prices) expect(price.price_id).toMatch(/^[A-Za-z0-9_-]{1,32}$/);
    });

    it('takes every option: trial in days or months, expiration_cycles, retries, an inactive start', async () => {
      const answer = await call(
        'POST',
        PLANS,
        planBody({
          billing_cycle: 'every_3_months',
          trial_period: 2,
          trial_period_cycle: 'months',
          expiration_cycles: 4,
          retries_number: 0,
          retries_delay_days: 5,
          subscription_plan_status: 'inactive',
          prices: [{ amount: 500, currency: 'JPY' }],
        }),
      );
      expect(answer.body).toMatchObject({
        status: 0,
        billing_cycle: 'every_3_months',
        trial_period: 2,
        trial_period_cycle: 'months',
        expiration_cycles: 4,
        retries_number: 0,
        retries_delay_days: 5,
        subscription_plan_status: 'inactive',
      });
    });

    it('names each missing or invalid field with a positive status and stores nothing', async () => {
      const before = (await gw.gateway.deps.store.subscriptions.listPlans(gw.merchant.merchant_id, { offset: 0, limit: 100 })).total;
      const cases: [Record<string, unknown>, RegExp][] = [
        [{ name: undefined }, /Missing required field: name/],
        [{ name: 'n'.repeat(33) }, /Invalid field: name/],
        [{ description: 'd'.repeat(257) }, /Invalid field: description/],
        [{ prices: undefined }, /Missing required field: prices/],
        [{ prices: [] }, /Invalid field: prices/],
        [{ prices: 'USD 19.99' }, /Invalid field: prices/],
        [{ prices: [{ amount: 0, currency: 'USD' }] }, /Invalid field: prices/],
        [{ prices: [{ amount: 19.99, currency: 'USD' }] }, /Invalid field: prices/],
        [{ prices: [{ amount: 100, currency: 'XYZ' }] }, /Invalid field: prices/],
        [{ prices: [{ amount: 100, currency: 'USD', extra: 1 }] }, /Invalid field: prices/],
        [
          {
            prices: [
              { amount: 100, currency: 'USD' },
              { amount: 200, currency: 'USD' },
            ],
          },
          /Invalid field: prices \(USD appears more than once/,
        ],
        [{ billing_cycle: 'daily' }, /Invalid field: billing_cycle/],
        [{ billing_cycle: undefined }, /Missing required field: billing_cycle/],
        [{ trial_period: -1 }, /Invalid field: trial_period/],
        [{ trial_period_cycle: 'years' }, /Invalid field: trial_period_cycle/],
        [{ expiration_cycles: '3' }, /Invalid field: expiration_cycles/],
        [{ retries_number: 11 }, /Invalid field: retries_number/],
        [{ retries_delay_days: 0 }, /Invalid field: retries_delay_days/],
        [{ subscription_plan_status: 'deleted' }, /Invalid field: subscription_plan_status/],
      ];
      for (const [overrides, description] of cases) {
        const body = planBody(overrides);
        for (const key of Object.keys(overrides)) if (overrides[key] === undefined) delete body[key];
        const answer = await call('POST', PLANS, body);
        expect(answer.http_status).toBe(200);
        expect(answer.body.status, JSON.stringify(overrides)).toBe(10);
        expect(answer.body.description).toMatch(description);
      }
      expect((await gw.gateway.deps.store.subscriptions.listPlans(gw.merchant.merchant_id, { offset: 0, limit: 100 })).total).toBe(before);
    });

    it("takes only currencies of the merchant's gateways with MIT enabled", async () => {
      const not_on_gateway = await call('POST', PLANS, planBody({ prices: [{ amount: 100, currency: 'NZD' }] }));
      expect(not_on_gateway.body.status).toBe(34);
      expect(not_on_gateway.body.description).toMatch(/NZD/);
      const nomit = await merchantWithoutMitEur();
      const eur = await v13(
        gw.url,
        'POST',
        PLANS,
        nomit,
        planBody({
          prices: [
            { amount: 100, currency: 'USD' },
            { amount: 100, currency: 'EUR' },
          ],
        }),
      );
      expect(eur.body.status).toBe(34);
      expect(eur.body.description).toMatch(/EUR/);
      const usd = await v13(gw.url, 'POST', PLANS, nomit, planBody({ prices: [{ amount: 100, currency: 'USD' }] }));
      expect(usd.body.status).toBe(0);
    });

    it('updates name, description and status (spec §4.9) and answers plan_id, prices, status', async () => {
      const plan = await createPlanVia(gw.url, gw.merchant);
      const answer = await call('PUT', `${PLANS}/${String(plan.plan_id)}`, {
        name: 'Gold+',
        description: 'More',
        subscription_plan_status: 'inactive',
      });
      expect(answer.body).toMatchObject({
        status: 0,
        plan_id: plan.plan_id,
        name: 'Gold+',
        plan_description: 'More',
        subscription_plan_status: 'inactive',
        prices: plan.prices,
      });
      const read = await call('GET', `${PLANS}/${String(plan.plan_id)}`);
      expect(read.body).toMatchObject({ status: 0, name: 'Gold+', subscription_plan_status: 'inactive' });
      const back = await call('PUT', `${PLANS}/${String(plan.plan_id)}`, { subscription_plan_status: 'active' });
      expect(back.body).toMatchObject({ status: 0, subscription_plan_status: 'active', name: 'Gold+' });
      const nothing = await call('PUT', `${PLANS}/${String(plan.plan_id)}`);
      expect(nothing.body).toMatchObject({ status: 0, name: 'Gold+' });
    });

    it('answers a failed plan-update validation with status -1 naming the field (spec §7)', async () => {
      const plan = await createPlanVia(gw.url, gw.merchant);
      const path = `${PLANS}/${String(plan.plan_id)}`;
      const cases: [Record<string, unknown>, string[], RegExp][] = [
        [{ application_key: '' }, [], /Missing required field: application_key/],
        [{}, ['application_key'], /Missing required field: application_key/],
        [{}, ['timestamp'], /Missing required field: timestamp/],
        [{ subscription_plan_status: 'paused' }, [], /Invalid field: subscription_plan_status/],
        [{ name: 'n'.repeat(33) }, [], /Invalid field: name/],
        [{ name: 42 }, [], /Invalid field: name/],
        [{ version: '2.0' }, [], /Invalid field: version/],
      ];
      for (const [fields, omit, description] of cases) {
        const answer = await call('PUT', path, fields, { omit });
        expect(answer.http_status).toBe(200);
        expect(answer.body.status, JSON.stringify(fields)).toBe(-1);
        expect(answer.body.description).toMatch(description);
        expect(answer.header).not.toBeNull();
      }
      expect((await call('GET', path)).body).toMatchObject({ name: 'Gold monthly', subscription_plan_status: 'active' });
      // Authentication failures stay positive: they are not validation.
      expect((await call('PUT', path, {}, { header: 'f'.repeat(96) })).body.status).toBe(2);
    });

    it("answers another merchant's plan exactly like a missing one", async () => {
      const plan = await createPlanVia(gw.url, gw.merchant);
      const missing_read = await v13(gw.url, 'GET', `${PLANS}/plan_doesnotexist`, other);
      const foreign_read = await v13(gw.url, 'GET', `${PLANS}/${String(plan.plan_id)}`, other);
      const missing_update = await v13(gw.url, 'PUT', `${PLANS}/plan_doesnotexist`, other, { name: 'mine' });
      const foreign_update = await v13(gw.url, 'PUT', `${PLANS}/${String(plan.plan_id)}`, other, { name: 'mine' });
      for (const answer of [missing_read, foreign_read, missing_update, foreign_update]) {
        expect(answer.body).toMatchObject({ status: 30, description: 'Plan not found' });
        expect(Object.keys(answer.body).sort()).toEqual(['description', 'status', 'timestamp', 'version']);
      }
      expect((await call('GET', `${PLANS}/${String(plan.plan_id)}`)).body.name).toBe('Gold monthly');
      expect((await call('GET', `${PLANS}/${'x'.repeat(40)}`)).body.status).toBe(30);
    });

    it('deletes a plan: answered once, then never read, listed, updated or subscribed', async () => {
      const plan = await createPlanVia(gw.url, gw.merchant);
      const path = `${PLANS}/${String(plan.plan_id)}`;
      const deleted = await call('PUT', path, { subscription_plan_status: 'deleted' });
      expect(deleted.body).toMatchObject({ status: 0, subscription_plan_status: 'deleted' });
      expect((await call('GET', path)).body.status).toBe(30);
      expect((await call('PUT', path, { subscription_plan_status: 'active' })).body.status).toBe(30);
      const listed = await call('GET', PLANS, { page_size: 100 });
      expect((listed.body.plans as { plan_id: string }[]).some((p) => p.plan_id === plan.plan_id)).toBe(false);
      const subscribe = await call('POST', SUBS, {
        plan_id: plan.plan_id,
        price_id: priceIdOf(plan),
        cid: 'c1',
        card_token,
        notification_url: 'https://merchant.example/s',
      });
      expect(subscribe.body).toMatchObject({ status: -1, description: 'Plan not found' });
    });

    it("lists only the merchant's own plans, a page at a time, at most 100 per page", async () => {
      const lister = await gw.createMerchant();
      const created: string[] = [];
      for (let i = 0; i < 5; i += 1) created.push(String((await createPlanVia(gw.url, lister, { name: `Plan ${i}` })).plan_id));
      const first = await v13(gw.url, 'GET', PLANS, lister, { page: 1, page_size: 2 });
      const third = await v13(gw.url, 'GET', PLANS, lister, { page: 3, page_size: 2 });
      expect(first.body).toMatchObject({ status: 0, page: 1, page_size: 2, total: 5 });
      expect((first.body.plans as { plan_id: string }[]).map((p) => p.plan_id)).toEqual(created.slice(0, 2));
      expect((third.body.plans as { plan_id: string }[]).map((p) => p.plan_id)).toEqual(created.slice(4));
      const all = await v13(gw.url, 'GET', PLANS, lister);
      expect(all.body).toMatchObject({ page: 1, page_size: 20, total: 5 });
      expect((await v13(gw.url, 'GET', PLANS, lister, { page_size: 100 })).body.status).toBe(0);
      for (const [fields, field] of [
        [{ page_size: 101 }, 'page_size'],
        [{ page_size: 0 }, 'page_size'],
        [{ page: 0 }, 'page'],
        [{ page: 'last' }, 'page'],
      ] as const) {
        const answer = await v13(gw.url, 'GET', PLANS, lister, fields);
        expect(answer.body.status, JSON.stringify(fields)).toBe(10);
        expect(answer.body.description).toContain(`Invalid field: ${field}`);
      }
      const others = await v13(gw.url, 'GET', PLANS, other, { page_size: 100 });
      expect((others.body.plans as { plan_id: string }[]).some((p) => created.includes(p.plan_id))).toBe(false);
    });
  });

  describe('subscriptions', () => {
    let plan: Record<string, unknown>;
    beforeAll(async () => {
      plan = await createPlanVia(gw.url, gw.merchant, { trial_period: 7 });
    });
    const subscribe = (fields: Record<string, unknown> = {}, options = {}) =>
      call(
        'POST',
        SUBS,
        {
          plan_id: plan.plan_id,
          price_id: priceIdOf(plan),
          cid: 'cust-42',
          card_token,
          notification_url: 'https://merchant.example/subs',
          ...fields,
        },
        options,
      );

    it('creates an active subscription and answers the fields of spec §4.8', async () => {
      const answer = await subscribe();
      expect(answer.body).toMatchObject({
        status: 0,
        plan_id: plan.plan_id,
        cid: 'cust-42',
        subscription_status: 'active',
        version: '1.3',
        cycles_charged: 0,
        price: { price_id: priceIdOf(plan), amount: 1999, currency: 'USD' },
      });
      expect(answer.body.subscription_id).toMatch(/^[A-Za-z0-9_-]{1,32}$/);
      expect(answer.body.next_charge_at).toBe(Number(answer.body.created_at) + 7 * 86_400);
      expect(answer.header).not.toBeNull();
    });

    it('takes activate as a JSON boolean or the text true / false (decisions.md §10)', async () => {
      for (const [activate, status] of [
        [true, 'active'],
        ['true', 'active'],
        [false, 'inactive'],
        ['false', 'inactive'],
        [null, 'active'],
      ] as const) {
        const answer = await subscribe({ activate });
        expect(answer.body, String(activate)).toMatchObject({ status: 0, subscription_status: status });
        if (status === 'inactive') expect(answer.body.next_charge_at).toBeNull();
      }
      for (const activate of ['yes', 1, 'TRUE']) {
        const answer = await subscribe({ activate });
        expect(answer.body.status).toBe(10);
        expect(answer.body.description).toMatch(/Invalid field: activate/);
      }
    });

    it("charges in the price's currency", async () => {
      const answer = await subscribe({ price_id: priceIdOf(plan, 'EUR') });
      expect(answer.body).toMatchObject({ status: 0, price: { amount: 1799, currency: 'EUR' } });
    });

    it("answers an unknown plan_id, or another merchant's, with status -1 (spec §7)", async () => {
      const foreign_plan = await createPlanVia(gw.url, other);
      const unknown = await subscribe({ plan_id: 'plan_doesnotexist' });
      const foreign = await subscribe({ plan_id: foreign_plan.plan_id, price_id: priceIdOf(foreign_plan) });
      for (const answer of [unknown, foreign]) {
        expect(answer.http_status).toBe(200);
        expect(answer.body).toMatchObject({ status: -1, description: 'Plan not found', version: '1.3' });
        expect(answer.header).not.toBeNull();
      }
    });

    it("refuses an inactive plan, a price of another plan, and a card_token that is not the merchant's", async () => {
      const inactive = await createPlanVia(gw.url, gw.merchant, { subscription_plan_status: 'inactive' });
      expect((await subscribe({ plan_id: inactive.plan_id, price_id: priceIdOf(inactive) })).body.status).toBe(32);
      expect((await subscribe({ price_id: priceIdOf(inactive) })).body.status).toBe(33);
      const others_token = await tokenize(gw.url, other, 'other-cust', MASTERCARD);
      const foreign_card = await subscribe({ card_token: others_token });
      const unknown_card = await subscribe({ card_token: 'a'.repeat(32) });
      expect(foreign_card.body).toMatchObject({ status: 18 });
      expect(unknown_card.body).toEqual({ ...foreign_card.body, timestamp: unknown_card.body.timestamp });
      const total = (
        await gw.gateway.deps.store.subscriptions.list(
          gw.merchant.merchant_id,
          { plan_id: String(inactive.plan_id) },
          { offset: 0, limit: 10 },
        )
      ).total;
      expect(total).toBe(0);
    });

    it('refuses a card_token whose card has expired, and stores nothing', async () => {
      const cid = `expired-${randomBytes(3).toString('hex')}`;
      const expired = await expiredCardToken(gw.merchant.merchant_id);
      const answer = await subscribe({ cid, card_token: expired });
      expect(answer.body).toMatchObject({ status: 10, description: 'Invalid field: card_token (the card has expired)', version: '1.3' });
      expect(answer.header).not.toBeNull();
      expect((await gw.gateway.deps.store.subscriptions.list(gw.merchant.merchant_id, { cid }, { offset: 0, limit: 10 })).total).toBe(0);
      // The same customer's valid card is taken.
      expect((await subscribe({ cid })).body).toMatchObject({ status: 0, subscription_status: 'active' });
    });

    it('refuses a price whose currency no gateway with MIT enabled takes any more (status 34), and stores nothing', async () => {
      // The plan was created while EUR was billable; the merchant's EUR gateway has MIT disabled now.
      const nomit = await merchantWithoutMitEur();
      const now_ms = gw.gateway.clock.now_ms();
      const plan_id = `plan_${randomBytes(12).toString('hex')}`;
      const prices = [
        { price_id: `price_${randomBytes(12).toString('hex')}`, plan_id, currency: 'USD', amount_minor: 1000, position: 0 },
        { price_id: `price_${randomBytes(12).toString('hex')}`, plan_id, currency: 'EUR', amount_minor: 900, position: 1 },
      ];
      await gw.gateway.deps.store.transaction((tx) =>
        tx.subscriptions.insertPlan(
          {
            plan_id,
            merchant_id: nomit.merchant_id,
            name: 'Old plan',
            description: null,
            billing_cycle: 'monthly',
            trial_period: 0,
            trial_period_cycle: 'days',
            expiration_cycles: null,
            retries_number: 3,
            retries_delay_days: 1,
            status: 'active',
            created_at_ms: now_ms,
            updated_at_ms: now_ms,
          },
          prices,
        ),
      );
      const token = await tokenize(gw.url, nomit);
      const fields = { plan_id, cid: 'cust-eur', card_token: token, notification_url: 'https://merchant.example/subs' };
      const eur = await v13(gw.url, 'POST', SUBS, nomit, { ...fields, price_id: prices[1]!.price_id });
      expect(eur.body).toMatchObject({ status: 34 });
      expect(eur.body.description).toBe(
        "Currency not allowed: EUR is not taken by any of this merchant's gateways with merchant-initiated transactions enabled",
      );
      expect((await gw.gateway.deps.store.subscriptions.list(nomit.merchant_id, {}, { offset: 0, limit: 10 })).total).toBe(0);
      // Its USD price still takes subscriptions.
      const usd = await v13(gw.url, 'POST', SUBS, nomit, { ...fields, price_id: prices[0]!.price_id });
      expect(usd.body).toMatchObject({ status: 0, price: { currency: 'USD', amount: 1000 } });
    });

    it('names each missing or invalid field', async () => {
      const cases: [Record<string, unknown>, RegExp][] = [
        [{ plan_id: undefined }, /Missing required field: plan_id/],
        [{ price_id: undefined }, /Missing required field: price_id/],
        [{ cid: undefined }, /Missing required field: cid/],
        [{ cid: 'c'.repeat(33) }, /Invalid field: cid/],
        [{ card_token: undefined }, /Missing required field: card_token/],
        [{ card_token: 'not a token!' }, /Invalid field: card_token/],
        [{ notification_url: undefined }, /Missing required field: notification_url/],
        [{ notification_url: `https://merchant.example/${'n'.repeat(30)}` }, /Invalid field: notification_url/],
        [{ notification_url: 'ftp://merchant.example/x' }, /Invalid field: notification_url/],
        [{ plan_id: 'p'.repeat(33) }, /Invalid field: plan_id/],
      ];
      for (const [overrides, description] of cases) {
        const fields: Record<string, unknown> = {
          plan_id: plan.plan_id,
          price_id: priceIdOf(plan),
          cid: 'cust-42',
          card_token,
          notification_url: 'https://merchant.example/subs',
          ...overrides,
        };
        for (const key of Object.keys(overrides)) if (overrides[key] === undefined) delete fields[key];
        const answer = await call('POST', SUBS, fields);
        expect(answer.body.status, JSON.stringify(overrides)).toBe(10);
        expect(answer.body.description).toMatch(description);
      }
    });

    it("reads a subscription; another merchant's answers exactly like a missing one", async () => {
      const created = await subscribeVia(gw.url, gw.merchant, plan, card_token);
      const read = await call('GET', `${SUBS}/${String(created.subscription_id)}`);
      expect(read.body).toMatchObject({
        status: 0,
        subscription_id: created.subscription_id,
        subscription_status: 'active',
        price: created.price,
      });
      const foreign = await v13(gw.url, 'GET', `${SUBS}/${String(created.subscription_id)}`, other);
      const missing = await v13(gw.url, 'GET', `${SUBS}/sub_doesnotexist`, other);
      for (const answer of [foreign, missing]) {
        expect(answer.body).toMatchObject({ status: 31, description: 'Subscription not found' });
        expect(Object.keys(answer.body).sort()).toEqual(['description', 'status', 'timestamp', 'version']);
      }
    });

    it("lists subscriptions newest first with filters and page limits, only the merchant's own", async () => {
      const lister = await gw.createMerchant();
      // Two cards: one active subscription per customer, price and card, so "even" pays the second with another card.
      const tokens = [await tokenize(gw.url, lister), await tokenize(gw.url, lister, 'cust-43')];
      const lister_plan = await createPlanVia(gw.url, lister);
      const ids: string[] = [];
      for (let i = 0; i < 4; i += 1) {
        const created = await subscribeVia(gw.url, lister, lister_plan, tokens[Math.floor(i / 2)]!, {
          cid: i % 2 === 0 ? 'even' : 'odd',
          activate: i < 3,
        });
        ids.push(String(created.subscription_id));
      }
      const all = await v13(gw.url, 'GET', SUBS, lister, { page_size: 100 });
      expect(all.body).toMatchObject({ status: 0, total: 4, page: 1, page_size: 100 });
      expect(new Set((all.body.subscriptions as { subscription_id: string }[]).map((s) => s.subscription_id))).toEqual(new Set(ids));
      const even = await v13(gw.url, 'GET', SUBS, lister, { cid: 'even' });
      expect(even.body.total).toBe(2);
      const inactive = await v13(gw.url, 'GET', SUBS, lister, { subscription_status: 'inactive' });
      expect((inactive.body.subscriptions as { subscription_id: string }[]).map((s) => s.subscription_id)).toEqual([ids[3]]);
      const by_plan = await v13(gw.url, 'GET', SUBS, lister, { plan_id: lister_plan.plan_id, page_size: 3, page: 2 });
      expect(by_plan.body).toMatchObject({ total: 4, page: 2, page_size: 3 });
      expect((by_plan.body.subscriptions as unknown[]).length).toBe(1);
      expect((await v13(gw.url, 'GET', SUBS, lister, { page_size: 101 })).body.status).toBe(10);
      expect((await v13(gw.url, 'GET', SUBS, lister, { subscription_status: 'paused' })).body.description).toMatch(
        /Invalid field: subscription_status/,
      );
      const foreign = await v13(gw.url, 'GET', SUBS, other, { plan_id: lister_plan.plan_id });
      expect(foreign.body).toMatchObject({ status: 0, total: 0, subscriptions: [] });
    });

    it('a retried create answers the subscription it made: one active subscription per customer, price and card', async () => {
      const cid = `retry-${Date.now()}`;
      const first = await subscribe({ cid });
      const again = await subscribe({ cid });
      expect(first.body).toMatchObject({ status: 0, description: 'Subscription created' });
      // Answered with the subscription, and a description that says nothing new was made.
      expect(again.body).toMatchObject({
        status: 0,
        description: 'Subscription already exists: the same request was received before; nothing new was created',
        subscription_id: first.body.subscription_id,
        subscription_status: 'active',
        created_at: first.body.created_at,
      });
      const events = await gw.gateway.deps.store.notifications.listOfSubscription(String(first.body.subscription_id));
      expect(events).toHaveLength(1);
      // The same customer, price and card with other details: refused, naming the subscription.
      const other_url = await subscribe({ cid, notification_url: 'https://merchant.example/other' });
      expect(other_url.body).toMatchObject({ status: 36 });
      expect(other_url.body.description).toContain(String(first.body.subscription_id));
      // Another price, or an inactive one, is another subscription.
      expect((await subscribe({ cid, price_id: priceIdOf(plan, 'EUR') })).body.subscription_id).not.toBe(first.body.subscription_id);
      const inactive = await subscribe({ cid, activate: false });
      expect(inactive.body).toMatchObject({ status: 0, subscription_status: 'inactive' });
      expect(inactive.body.subscription_id).not.toBe(first.body.subscription_id);
      // Once cancelled, the customer can subscribe to the price again.
      expect((await call('POST', `${SUBS}/${String(first.body.subscription_id)}/cancel`, {})).body.status).toBe(0);
      const renewed = await subscribe({ cid });
      expect(renewed.body).toMatchObject({ status: 0, subscription_status: 'active' });
      expect(renewed.body.subscription_id).not.toBe(first.body.subscription_id);
    });

    it('ten identical creates at the same moment make one subscription', async () => {
      const cid = `burst-${Date.now()}`;
      const answers = await Promise.all(Array.from({ length: 10 }, () => subscribe({ cid })));
      expect(answers.map((a) => a.body.status)).toEqual(Array(10).fill(0));
      expect(new Set(answers.map((a) => a.body.subscription_id)).size).toBe(1);
      // One of them made it; the other nine say they found it.
      expect(answers.map((a) => a.body.description).sort()).toEqual([
        ...Array(9).fill('Subscription already exists: the same request was received before; nothing new was created'),
        'Subscription created',
      ]);
      const listed = await call('GET', SUBS, { cid });
      expect(listed.body.total).toBe(1);
    });

    it('cancels: no charge is scheduled; cancelling again answers the same; another merchant cannot', async () => {
      const created = await subscribeVia(gw.url, gw.merchant, plan, card_token);
      const path = `${SUBS}/${String(created.subscription_id)}/cancel`;
      const foreign = await v13(gw.url, 'POST', path, other);
      expect(foreign.body).toMatchObject({ status: 31, description: 'Subscription not found' });
      const canceled = await call('POST', path);
      expect(canceled.body).toMatchObject({
        status: 0,
        description: 'Subscription canceled',
        subscription_status: 'canceled',
        next_charge_at: null,
      });
      expect(typeof canceled.body.ended_at).toBe('number');
      const again = await call('POST', path);
      expect(again.body).toMatchObject({ status: 0, description: 'Subscription was already canceled', subscription_status: 'canceled' });
      expect((await call('POST', `${SUBS}/sub_doesnotexist/cancel`)).body.status).toBe(31);
      const changes = await gw.gateway.deps.store.subscriptions.listChanges(String(created.subscription_id));
      expect(changes.map((c) => [c.from_status, c.to_status, c.event])).toEqual([
        ['', 'active', 'subscription.created'],
        ['active', 'canceled', 'subscription.canceled'],
      ]);
    });

    it('cancels an inactive subscription too', async () => {
      const created = await subscribeVia(gw.url, gw.merchant, plan, card_token, { activate: false });
      const canceled = await call('POST', `${SUBS}/${String(created.subscription_id)}/cancel`);
      expect(canceled.body).toMatchObject({ status: 0, subscription_status: 'canceled' });
    });

    describe('activate (POST /api/v1.3/subscription/{subscriptionId}/activate)', () => {
      const activate = (id: unknown, fields: Record<string, unknown> = {}) => call('POST', `${SUBS}/${String(id)}/activate`, fields);
      const uniqueCid = (prefix: string) => `${prefix}-${randomBytes(3).toString('hex')}`;

      it('activates an inactive subscription: active, due when the trial ends counted from now (it was never charged), recorded and notified', async () => {
        const created = await subscribe({ activate: false, cid: uniqueCid('act') });
        expect(created.body).toMatchObject({ status: 0, subscription_status: 'inactive', next_charge_at: null });
        const id = String(created.body.subscription_id);
        const answer = await activate(id);
        expect(answer.body).toMatchObject({
          status: 0,
          description: 'Subscription activated',
          subscription_id: id,
          subscription_status: 'active',
          cycles_charged: 0,
          version: '1.3',
        });
        expect(answer.header).toBe(sha384(`0${String(answer.body.timestamp)}${gw.merchant.secret}`));
        // The plan's 7-day trial, from the activation.
        expect(Math.abs(Number(answer.body.next_charge_at) - (Number(answer.body.timestamp) + 7 * 86_400))).toBeLessThanOrEqual(1);
        const row = (await gw.gateway.deps.store.subscriptions.get(gw.merchant.merchant_id, id))!;
        expect(row).toMatchObject({ status: 'active', attempt: 0, card_token, anchor_at_ms: row.next_charge_at_ms });
        const changes = await gw.gateway.deps.store.subscriptions.listChanges(id);
        expect(changes.map((c) => [c.from_status, c.to_status, c.event])).toEqual([
          ['', 'inactive', 'subscription.created'],
          ['inactive', 'active', 'subscription.activated'],
        ]);
        const events = (await gw.gateway.deps.store.notifications.listOfSubscription(id)).map(
          (n) => JSON.parse(n.payload_json) as Record<string, unknown>,
        );
        expect(events.map((e) => e.event)).toEqual(['subscription.created', 'subscription.activated']);
        expect(events[1]).toMatchObject({ subscription_status: 'active', next_charge_at: answer.body.next_charge_at, subscription_id: id });

        // Already active: answered as it is; nothing changes, nothing is notified.
        const again = await activate(id);
        expect(again.body).toMatchObject({
          status: 0,
          description: 'Subscription is already active',
          subscription_status: 'active',
          next_charge_at: answer.body.next_charge_at,
        });
        expect(await gw.gateway.deps.store.subscriptions.listChanges(id)).toHaveLength(2);
        expect(await gw.gateway.deps.store.notifications.listOfSubscription(id)).toHaveLength(2);
        // An active subscription's card is not changed by activate.
        const other_card = await tokenize(gw.url, gw.merchant, 'cust-42', MASTERCARD);
        const change_card = await activate(id, { card_token: other_card });
        expect(change_card.body.status).toBe(10);
        expect(change_card.body.description).toMatch(/^Invalid field: card_token \(the subscription is already active/);
        expect((await gw.gateway.deps.store.subscriptions.get(gw.merchant.merchant_id, id))!.card_token).toBe(card_token);
      });

      it("refuses a canceled subscription (final); another merchant's or an unknown one is not found", async () => {
        const created = await subscribe({ activate: false, cid: uniqueCid('act') });
        const id = String(created.body.subscription_id);
        for (const answer of [
          await v13(gw.url, 'POST', `${SUBS}/${id}/activate`, other),
          await activate('sub_doesnotexist'),
          await activate('x'.repeat(40)),
        ]) {
          expect(answer.body).toMatchObject({ status: 31, description: 'Subscription not found' });
          expect(Object.keys(answer.body).sort()).toEqual(['description', 'status', 'timestamp', 'version']);
        }
        expect((await gw.gateway.deps.store.subscriptions.get(gw.merchant.merchant_id, id))!.status).toBe('inactive');
        expect((await call('POST', `${SUBS}/${id}/cancel`)).body.status).toBe(0);
        const refused = await activate(id);
        expect(refused.body).toMatchObject({
          status: 35,
          description: 'Subscription has ended (canceled); it cannot be activated',
          subscription_status: 'canceled',
          next_charge_at: null,
        });
        expect((await gw.gateway.deps.store.subscriptions.get(gw.merchant.merchant_id, id))!.status).toBe('canceled');
        expect((await gw.gateway.deps.store.subscriptions.listChanges(id)).map((c) => c.event)).toEqual([
          'subscription.created',
          'subscription.canceled',
        ]);
      });

      it("takes the customer's other card; refuses a card not in the merchant's vault, an expired card, and a second active subscription", async () => {
        const cid = uniqueCid('card');
        const other_card = await tokenize(gw.url, gw.merchant, 'cust-42', MASTERCARD);
        const inactive = String((await subscribe({ activate: false, cid })).body.subscription_id);
        const others_token = await tokenize(gw.url, other, 'other-cust', MASTERCARD);
        expect((await activate(inactive, { card_token: others_token })).body).toMatchObject({
          status: 18,
          description: 'Card token not found',
        });
        expect((await activate(inactive, { card_token: 'a'.repeat(32) })).body).toMatchObject({ status: 18 });
        expect((await activate(inactive, { card_token: await expiredCardToken(gw.merchant.merchant_id) })).body).toMatchObject({
          status: 10,
          description: 'Invalid field: card_token (the card has expired)',
        });
        expect((await activate(inactive, { card_token: 'not a token!' })).body.description).toMatch(/^Invalid field: card_token/);
        // An active subscription of the same customer and price with the other card: activating this one with that card would make a twin.
        const twin = await subscribe({ cid, card_token: other_card });
        const duplicate = await activate(inactive, { card_token: other_card });
        expect(duplicate.body).toMatchObject({ status: 36 });
        expect(duplicate.body.description).toContain(String(twin.body.subscription_id));
        expect(await gw.gateway.deps.store.subscriptions.get(gw.merchant.merchant_id, inactive)).toMatchObject({
          status: 'inactive',
          card_token,
        });
        // With its own card there is no twin: activated.
        expect((await activate(inactive)).body).toMatchObject({ status: 0, description: 'Subscription activated' });
        // Another inactive one of another customer is activated with the other card, which it is charged from now on.
        const second = String((await subscribe({ activate: false, cid: uniqueCid('card') })).body.subscription_id);
        expect((await activate(second, { card_token: other_card })).body).toMatchObject({ status: 0, subscription_status: 'active' });
        expect(await gw.gateway.deps.store.subscriptions.get(gw.merchant.merchant_id, second)).toMatchObject({
          status: 'active',
          card_token: other_card,
        });
        expect((await gw.gateway.deps.store.subscriptions.listChanges(second)).at(-1)!.reason).toBe(
          'activated by the merchant with another card',
        );
      });
    });
  });
});
