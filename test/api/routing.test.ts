// Routing rules (issue 17, decisions.md §13) over real HTTP, on both stores: a merchant with a
// sandbox gateway, a second sandbox gateway and a Checkout.com one (the fake), rules managed
// through the operator API, a BIN table loaded; each condition (currency, amount range, card
// brand, BIN country) and the priorities send a sale to the gateway they name; `gateway` in the
// request overrides the rules; a payment no rule matches is refused with status 15 saying so.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { saleA } from '../support/bodies.js';
import { type FakeCheckout, startFakeCheckout } from '../support/checkout/fake.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { CHECKOUT_WEBHOOK_SECRET, operatorCall, PROCESSING_CHANNEL } from '../support/live-checkout.js';
import { postSigned } from '../support/client.js';
import { direct } from '../support/payout-bodies.js';
import { storeKinds } from '../support/stores.js';
import { CLI_ENTRY } from '../support/build.js';

describe.each(storeKinds())('routing rules on %s', (kind) => {
  let gw: TestGateway;
  let fake: FakeCheckout;
  let first: string;
  let second: string;
  let checkout: string;
  beforeAll(async () => {
    fake = await startFakeCheckout();
    gw = await startTestGateway(kind);
    first = gw.merchant.gateway!;
    const created = await operatorCall(gw, 'POST', '/operator/gateways', {
      merchant_id: gw.merchant.merchant_id,
      connector: 'sandbox',
      currencies: ['USD', 'EUR', 'GBP'],
    });
    expect(created.status).toBe(201);
    second = created.body.gateway as string;
    const cko = await operatorCall(gw, 'POST', '/operator/gateways', {
      merchant_id: gw.merchant.merchant_id,
      connector: 'checkout',
      currencies: ['USD', 'EUR'],
      settings: {
        secret_key: fake.secret_key,
        processing_channel_id: PROCESSING_CHANNEL,
        webhook_secret: CHECKOUT_WEBHOOK_SECRET,
        base_url: fake.url,
      },
    });
    expect(cko.status).toBe(201);
    checkout = cko.body.gateway as string;
    await gw.gateway.deps.store.transaction((tx) =>
      tx.merchants.replaceBinRanges([
        { prefix: '411111', country: 'GB' },
        { prefix: '42424242', country: 'DE' },
        { prefix: '424242', country: 'FR' },
      ]),
    );
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });

  const rules = `/operator/merchants/${'demo-merchant'}/routing-rules`;
  /** The gateway a sale went to. */
  async function routedTo(overrides: Record<string, unknown>): Promise<string> {
    const answer = await postSigned(gw.url, '/api/process', saleA(gw.merchant, overrides), gw.merchant.secret);
    expect(answer.body, JSON.stringify(answer.body)).toMatchObject({ status: 0 });
    return (await gw.gateway.deps.store.transactions.get(answer.body.trace_id as number))!.gateway_id;
  }

  it('without rules: the first gateway taking the currency', async () => {
    expect(gw.merchant.merchant_id).toBe('demo-merchant');
    expect(await routedTo({ currency: 'USD' })).toBe(first);
  });

  it('each condition and the priorities route a sale; a named gateway overrides the rules', async () => {
    const add = async (rule: Record<string, unknown>) => {
      const answer = await operatorCall(gw, 'POST', rules, rule);
      expect(answer.status, JSON.stringify(answer.body)).toBe(201);
      return (answer.body.rule as { rule_id: string }).rule_id;
    };
    await add({ gateway: second, priority: 10, currencies: ['EUR'] });
    await add({ gateway: checkout, priority: 20, card_brands: ['mastercard'] });
    await add({ gateway: checkout, priority: 30, bin_countries: ['DE'] });
    await add({ gateway: second, priority: 40, amount_min: 100_000, amount_max: 500_000 });
    const fallback = await add({ gateway: first, priority: 100 });
    const listed = await operatorCall(gw, 'GET', rules);
    expect((listed.body.rules as { priority: number }[]).map((r) => r.priority)).toEqual([10, 20, 30, 40, 100]);
    expect((listed.body.rules as Record<string, unknown>[])[1]).toMatchObject({
      gateway: checkout,
      card_brands: ['MasterCard'],
      currencies: null,
    });

    expect(await routedTo({ currency: 'EUR' })).toBe(second);
    expect(await routedTo({ currency: 'USD', card_number: '5555555555554444' })).toBe(checkout);
    // BIN 42424242 is German, the longest prefix known (424242 alone says France).
    expect(await routedTo({ currency: 'USD', card_number: '4242424242424242' })).toBe(checkout);
    expect(await routedTo({ currency: 'USD', amount: 150_000 })).toBe(second);
    expect(await routedTo({ currency: 'USD', amount: 500_001 })).toBe(first);
    // A British Visa of a small amount matches only the rule without conditions.
    expect(await routedTo({ currency: 'USD' })).toBe(first);
    // The request's gateway wins over every rule.
    expect(await routedTo({ currency: 'EUR', gateway: first })).toBe(first);
    // A rule's gateway that does not take the currency is passed over: GBP goes to the next matching one.
    expect(await routedTo({ currency: 'GBP', card_number: '5555555555554444' })).toBe(first);

    // No rule matches: refused, saying so.
    expect((await operatorCall(gw, 'DELETE', `${rules}/${fallback}`)).status).toBe(200);
    const refused = await postSigned(gw.url, '/api/process', saleA(gw.merchant, { currency: 'USD' }), gw.merchant.secret);
    expect(refused.body).toMatchObject({
      status: 15,
      description: 'Gateway unavailable: no routing rule of this merchant matches this payment',
    });
    expect((await operatorCall(gw, 'DELETE', `${rules}/${fallback}`)).status).toBe(404);
    for (const rule of (await operatorCall(gw, 'GET', rules)).body.rules as { rule_id: string }[])
      await operatorCall(gw, 'DELETE', `${rules}/${rule.rule_id}`);
  });

  it('a rule naming payout methods routes those payouts only: bank accounts and e-wallets to different gateways, sales to the default', async () => {
    const add = async (rule: Record<string, unknown>) => {
      const answer = await operatorCall(gw, 'POST', rules, rule);
      expect(answer.status, JSON.stringify(answer.body)).toBe(201);
      return answer.body.rule as { rule_id: string; payout_methods: string[] | null };
    };
    const wallet_rule = await add({ gateway: second, priority: 10, payout_methods: ['EWALLET'] });
    expect(wallet_rule.payout_methods).toEqual(['ewallet']);
    await add({ gateway: first, priority: 20, payout_methods: ['bank_account', 'paypal'] });
    await add({ gateway: checkout, priority: 100 });
    const payout = async (overrides: Record<string, unknown>) => {
      const answer = await postSigned(gw.url, '/api/direct', direct(gw.merchant, { gateway: undefined, ...overrides }), gw.merchant.secret);
      expect(answer.body, JSON.stringify(answer.body)).toMatchObject({ status: 0 });
      return (await gw.gateway.deps.store.transactions.get(answer.body.trace_id as number))!.gateway_id;
    };
    expect(await payout({})).toBe(first);
    expect(await payout({ data_method: 'ewallet', data_account_number: 'wallet42' })).toBe(second);
    // A sale matches no payout rule: it goes to the rule without conditions.
    expect(await routedTo({ currency: 'USD' })).toBe(checkout);
    const refused = await operatorCall(gw, 'POST', rules, { gateway: first, priority: 1, payout_methods: ['cash'] });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain('payout_methods');
    for (const rule of (await operatorCall(gw, 'GET', rules)).body.rules as { rule_id: string }[])
      await operatorCall(gw, 'DELETE', `${rules}/${rule.rule_id}`);
  });

  it("refuses a rule naming another merchant's gateway, an unknown code or an empty range, with 400 naming the field", async () => {
    const other = await gw.createMerchant();
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ gateway: other.gateway, priority: 1 }, /Invalid field: gateway \(not a gateway of this merchant\)/],
      [{ gateway: first, priority: 1, currencies: ['XXX'] }, /Invalid field: currencies \(XXX is not one of the ISO 4217 codes\)/],
      [
        { gateway: first, priority: 1, card_brands: ['Visa', 'Amex', 'Unknown'] },
        /Invalid field: card_brands \(Unknown is not one of the card brands/,
      ],
      [{ gateway: first, priority: 1, bin_countries: ['Germany'] }, /Invalid field: bin_countries/],
      [{ gateway: first, priority: 1, amount_min: 10, amount_max: 9 }, /Invalid field: amount_min \(not more than max-amount\)/],
      [{ gateway: first, priority: -1 }, /Invalid field: priority/],
      [{ gateway: first }, /Missing required field: priority/],
    ];
    for (const [rule, description] of cases) {
      const answer = await operatorCall(gw, 'POST', rules, rule);
      expect(answer.status, JSON.stringify(rule)).toBe(400);
      expect(answer.body.description).toMatch(description);
    }
    expect((await operatorCall(gw, 'POST', '/operator/merchants/nobody/routing-rules', { gateway: first, priority: 1 })).status).toBe(404);
    expect((await operatorCall(gw, 'GET', rules)).body.rules).toEqual([]);
    const anonymous = await fetch(`${gw.url}${rules}`);
    expect(anonymous.status).toBe(401);
  });
});

describe('routing rules and BINs from the CLI', () => {
  it('adds, lists and deletes rules and loads a BIN table, refusing a bad line with its number', async () => {
    const { spawnSync } = await import('node:child_process');
    const fs = await import('node:fs');
    const os = await import('node:os');
    const path = await import('node:path');
    const data_dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-route-cli-'));
    const env = { ...process.env, PAYGATE_DATA_DIR: data_dir };
    const paygate = (args: string[]) => spawnSync(process.execPath, [CLI_ENTRY, ...args], { env, encoding: 'utf8', timeout: 30_000 });
    try {
      const merchant = JSON.parse(paygate(['merchant', 'create', '--merchant-id', 'route-shop']).stdout) as { gateway: string };
      const added = paygate([
        'route',
        'add',
        '--merchant-id',
        'route-shop',
        '--gateway',
        merchant.gateway,
        '--priority',
        '5',
        '--currency',
        'usd,EUR',
        '--card-brand',
        'visa',
        '--bin-country',
        'gb',
      ]);
      expect(added.status, added.stderr).toBe(0);
      const rule = JSON.parse(added.stdout) as Record<string, unknown>;
      expect(rule).toMatchObject({
        merchant_id: 'route-shop',
        gateway: merchant.gateway,
        priority: 5,
        currencies: ['USD', 'EUR'],
        card_brands: ['VISA'],
        bin_countries: ['GB'],
      });
      expect(paygate(['route', 'list', '--merchant-id', 'route-shop', '--json']).stdout.trim().split('\n')).toHaveLength(1);
      const bad = paygate(['route', 'add', '--merchant-id', 'route-shop', '--gateway', merchant.gateway, '--priority', 'high']);
      expect(bad.status).toBe(2);
      expect(bad.stderr).toMatch(/--priority/);
      fs.writeFileSync(path.join(data_dir, 'bins.csv'), '# prefix,country\n411111,GB\n555555,us\n\n');
      const loaded = paygate(['bins', 'load', '--file', path.join(data_dir, 'bins.csv')]);
      expect(loaded.status, loaded.stderr).toBe(0);
      expect(JSON.parse(loaded.stdout)).toEqual({ bin_prefixes: 2 });
      fs.writeFileSync(path.join(data_dir, 'bad.csv'), '411111,GB\n41,GB\n');
      const refused = paygate(['bins', 'load', '--file', path.join(data_dir, 'bad.csv')]);
      expect(refused.status).toBe(2);
      expect(refused.stderr).toMatch(/line 2: expected "prefix,country" with a prefix of 6 to 8 digits; nothing was loaded/);
      expect(paygate(['route', 'delete', '--merchant-id', 'route-shop', '--rule', String(rule.rule_id)]).status).toBe(0);
      expect(paygate(['route', 'list', '--merchant-id', 'route-shop', '--json']).stdout).toBe('');
    } finally {
      fs.rmSync(data_dir, { recursive: true, force: true });
    }
  }, 120_000);
});
