// Master-key rotation (issue 30 item 4; docs/production.md "Master-key rotation"), on each store,
// as an operator runs it: a store with thousands of vaulted cards, a merchant's secret, a
// gateway's sealed settings and a subscription on a vaulted card; `paygate master-key rotate`
// run as its own process and killed (-9) halfway; every value then opens with one of the two
// keys, and the store serves; the run again goes on from where it stopped and ends with no value
// under the old key; retire; then a gateway with ONLY the new key serves all of it: signed
// requests (the merchant's secret), an idempotent replay and a refund's card match made before
// the rotation (fingerprints kept), a renewal charging the vaulted card, a sale through the
// gateway whose settings were re-sealed; and one with only the old key is refused at start.
// PostgreSQL: online, two instances holding both keys serve sales throughout, and follow the
// switch. SQLite: the embedded store's key files, its gateway stopped (the command says so).
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { keyIdOf, Sealer } from '../../src/crypto/sealer.js';
import { CardData, parseExpiry } from '../../src/domain/cards.js';
import type { CreatedMerchant } from '../../src/domain/merchants.js';
import { gatewaySettingsPurpose } from '../../src/connectors/registry.js';
import { openVaultedPan, vaultCard } from '../../src/operations/card-vault.js';
import { renewalOrderId } from '../../src/operations/subscription-renewal.js';
import { runBillingOnce } from '../../src/workers/subscription-billing.js';
import { refundC, saleA } from '../support/bodies.js';
import { nowSeconds, postSigned } from '../support/client.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { createTestDatabase, type TestDatabase } from '../support/postgres.js';
import { openTestStore, runCli, sealedValues, unopened } from '../support/sealed-scan.js';
import { storeKinds } from '../support/stores.js';
import { createPlanVia, priceIdOf, v13 } from '../support/v13.js';

const BULK_CARDS = 3000;
const BULK_PAN = '4000056655665556';
const OLD_KEY = Buffer.alloc(32, 0x11);
const NEW_KEY = Buffer.alloc(32, 0x22);
/** Every gateway of this test: the switch followed quickly; billing only when the test runs it. */
const GATEWAY_ENV = { PAYGATE_KEY_REFRESH_MS: '200', PAYGATE_BILLING_POLL_MS: '60000' };

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

async function until(what: string, check: () => Promise<boolean>, timeout_ms = 60_000): Promise<void> {
  const deadline = Date.now() + timeout_ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function sale(gw: TestGateway, merchant: CreatedMerchant, overrides: Record<string, unknown> = {}) {
  const answer = await postSigned(gw.url, '/api/process', saleA(merchant, overrides), merchant.secret);
  expect(answer.body, JSON.stringify(answer.body)).toMatchObject({ status: 0, transaction_status: 'approved' });
  return answer.body;
}

describe.each(storeKinds())('master-key rotation on %s', (kind) => {
  it('killed halfway and resumed: every value opens throughout, then the new key alone serves what the old one sealed', async () => {
    const database: TestDatabase | null = kind === 'postgres' ? await createTestDatabase() : null;
    if (database) cleanups.push(() => database.drop());
    // PostgreSQL: keys from the environment. SQLite: the embedded store's key file (master.key).
    const old_env = database ? { PAYGATE_MASTER_KEY: OLD_KEY.toString('hex') } : {};
    const both_env = database ? { PAYGATE_MASTER_KEY: NEW_KEY.toString('hex'), PAYGATE_MASTER_KEY_PREVIOUS: OLD_KEY.toString('hex') } : {};
    const a = await startTestGateway(kind, { database: database ?? undefined, env: { ...GATEWAY_ENV, ...old_env } });
    let a_open = true;
    cleanups.push(async () => {
      if (a_open) await a.close();
    });
    const store_env: Record<string, string> = database ? { DATABASE_URL: database.url } : { PAYGATE_DATA_DIR: a.data_dir };
    const key_file = path.join(a.data_dir, 'master.key');
    const old_key = database ? OLD_KEY : Buffer.from(fs.readFileSync(key_file, 'utf8').trim(), 'hex');
    const old_id = keyIdOf(old_key);
    const deps = a.gateway.deps;
    const merchant = await a.createMerchant();

    // Before: a sale (its card vaulted), kept for its replay and refund; a subscription on its card.
    const first_body = saleA(merchant);
    const first = await postSigned(a.url, '/api/process', first_body, merchant.secret);
    expect(first.body).toMatchObject({ status: 0, transaction_status: 'approved' });
    const card_token = first.body.card_token as string;
    const plan = await createPlanVia(a.url, merchant);
    const subscription = await v13(
      a.url,
      'POST',
      '/api/v1.3/subscription',
      merchant,
      { plan_id: plan.plan_id, price_id: priceIdOf(plan), cid: 'cust-42', card_token, notification_url: 'https://merchant.example/subs' },
      { timestamp: nowSeconds() },
    );
    expect(subscription.body).toMatchObject({ status: 0 });
    // The merchant's gateway gets sealed settings: every sale through it opens them.
    const gateway_id = merchant.gateway!;
    await deps.store.merchants.updateGateway(gateway_id, {
      settings_sealed: deps.sealer.seal(JSON.stringify({ note: 'rotation' }), gatewaySettingsPurpose(gateway_id)),
      updated_at_ms: Date.now(),
    });
    await sale(a, merchant);
    // Thousands of vaulted cards, one customer each.
    const expiry = parseExpiry('10/2033')!;
    const bulk: string[] = [];
    for (let from = 0; from < BULK_CARDS; from += 500) {
      await deps.store.transaction(async (tx) => {
        for (let i = from; i < from + 500; i += 1) {
          bulk.push(await vaultCard(tx, deps.sealer, merchant.merchant_id, `bulk-${i}`, new CardData(BULK_PAN, expiry, null), Date.now()));
        }
      });
    }
    const bulk_tokens = new Set(bulk);
    const bulk_zero = bulk[0]!;

    const store = openTestStore(store_env);
    cleanups.push(() => store.close());
    const total = (await sealedValues(store)).length;
    expect(total).toBeGreaterThan(BULK_CARDS);
    expect((await sealedValues(store)).every((v) => v.key_id === old_id)).toBe(true);

    // The instances that serve during the rotation: PostgreSQL, two holding both keys (the roll
    // of step 1). They go on sealing under the old key until the switch: the other instances may
    // not hold the new one yet. SQLite: the command refuses while the gateway runs.
    const serving: TestGateway[] = [];
    if (database) {
      for (let i = 0; i < 2; i += 1) serving.push(await startTestGateway(kind, { database, env: { ...GATEWAY_ENV, ...both_env } }));
      cleanups.push(async () => {
        for (const gw of serving) await gw.close();
      });
      await sale(serving[0]!, merchant, { pin: 'before-switch' });
      const before_switch = (await sealedValues(store)).filter(
        (v) => v.table === 'card_vault' && v.row.merchant_id === merchant.merchant_id,
      );
      expect(new Set(before_switch.map((v) => v.key_id))).toEqual(new Set([old_id]));
    } else {
      const refused = runCli(['master-key', 'rotate'], store_env);
      expect(await refused.exited).toBe(75);
      expect(refused.output().stderr).toContain('a gateway is running on the data folder');
    }
    await a.close();
    a_open = false;

    // Sales while the rotation runs (PostgreSQL), each vaulting a new card.
    let stopping = false;
    let served = 0;
    const senders = serving.map(async (gw, n) => {
      while (!stopping) {
        await sale(gw, merchant, { pin: `during-${n}-${served}` });
        served += 1;
      }
    });

    const rotate_env = { ...store_env, ...GATEWAY_ENV, ...both_env };
    const killed = runCli(['master-key', 'rotate', '--batch-size', '25', '--pause-ms', '20', '--json'], rotate_env);
    await until('some batches of card_vault', async () => {
      const progress = (await store.masterKeys.rotationProgress()).find((p) => p.table === 'card_vault');
      return progress !== undefined && progress.resealed >= 300;
    });
    killed.child.kill('SIGKILL');
    expect(await killed.exited).toBeNull();
    const progress = (await store.masterKeys.rotationProgress()).find((p) => p.table === 'card_vault')!;
    expect(progress.done).toBe(false);

    // Halfway: every value opens with one of the two keys, both keys hold some, and every bulk
    // card up to the recorded key is under the new one (each batch committed whole, with its key).
    const new_key = database ? NEW_KEY : Buffer.from(fs.readFileSync(key_file, 'utf8').trim(), 'hex');
    const new_id = keyIdOf(new_key);
    expect(new_id).not.toBe(old_id);
    const halfway = await sealedValues(store);
    expect(unopened(halfway, new Sealer({ current: new_key, previous: old_key }))).toEqual([]);
    const vault = halfway.filter((v) => v.table === 'card_vault');
    expect(vault.filter((v) => v.key_id === new_id).length).toBeGreaterThanOrEqual(300);
    expect(vault.filter((v) => v.key_id === old_id).length).toBeGreaterThan(0);
    const cursor = String(progress.after![0]);
    const bulk_done = vault.filter((v) => bulk_tokens.has(String(v.row.key[0])) && String(v.row.key[0]) <= cursor);
    expect(bulk_done.length).toBeGreaterThanOrEqual(250);
    expect(bulk_done.filter((v) => v.key_id !== new_id)).toEqual([]);
    expect((await store.masterKeys.state())?.sealing_key_id).toBe(new_id);
    const old_at_halfway = halfway.filter((v) => v.key_id === old_id).length;
    if (database) {
      // The serving instances follow the switch: what they seal now is under the new key.
      const after_switch = await sale(serving[1]!, merchant, { pin: 'after-switch' });
      const probe = (await sealedValues(store)).filter((v) => v.table === 'card_vault' && v.row.key[0] === after_switch.card_token);
      expect(probe.map((v) => v.key_id)).toEqual([new_id]);
    }

    // A half-rotated store serves: PostgreSQL's instances did all along; SQLite's gateway starts
    // with master.key (new) and master.key.previous (old).
    if (!database) {
      expect(fs.existsSync(`${key_file}.previous`)).toBe(true);
      const m = await startTestGateway(kind, { data_dir: a.data_dir, env: GATEWAY_ENV });
      await sale(m, merchant, { pin: 'halfway' });
      await m.close();
    }

    // Again: it goes on from the recorded key and ends with nothing under the old one.
    const resumed = runCli(['master-key', 'rotate', '--batch-size', '200', '--json'], rotate_env);
    expect(await resumed.exited, resumed.output().stderr).toBe(0);
    const report = JSON.parse(resumed.output().stdout) as Record<string, unknown>;
    expect(report).toMatchObject({ key_id: new_id, previous_key_id: old_id, switched: false, remaining: 0 });
    expect(report.by_key).toEqual([{ key_id: new_id, values: expect.any(Number) }]);
    expect(report.resealed as number).toBeGreaterThan(0);
    // Resumed, not started over: it re-sealed exactly what was still under the old key.
    expect(report.resealed).toBe(old_at_halfway);
    expect(old_at_halfway).toBeLessThan(halfway.length - 300);
    expect(`${resumed.output().stdout}${resumed.output().stderr}`).not.toContain(new_key.toString('hex'));
    stopping = true;
    await Promise.all(senders);
    if (database) expect(served).toBeGreaterThan(0);
    for (const gw of serving.splice(0)) await gw.close();
    const after_rotation = await sealedValues(store);
    expect(after_rotation.filter((v) => v.key_id !== new_id)).toEqual([]);

    // Retire: the old key goes (the key file's .previous deleted).
    const retired = runCli(['master-key', 'retire', '--json'], rotate_env);
    expect(await retired.exited, retired.output().stderr).toBe(0);
    expect(JSON.parse(retired.output().stdout)).toMatchObject({ retired: true, remaining: 0, sealing_key_id: new_id });
    if (!database) expect(fs.existsSync(`${key_file}.previous`)).toBe(false);

    // An instance with only the old key is refused at start, naming the key id it lacks.
    await expect(
      startTestGateway(kind, {
        database: database ?? undefined,
        data_dir: a.data_dir,
        env: { ...GATEWAY_ENV, PAYGATE_MASTER_KEY: old_key.toString('hex') },
      }),
    ).rejects.toThrow(new RegExp(`seals under master key ${new_id}`));

    // Only the new key from here on.
    const new_env = database ? { PAYGATE_MASTER_KEY: NEW_KEY.toString('hex') } : {};
    const d = await startTestGateway(kind, { database: database ?? undefined, data_dir: a.data_dir, env: { ...GATEWAY_ENV, ...new_env } });
    cleanups.push(() => d.close());
    const only_new = new Sealer(new_key);
    expect(unopened(after_rotation, only_new)).toEqual([]);
    for (const v of after_rotation.filter((x) => x.table === 'card_vault').slice(0, 50)) {
      expect(openVaultedPan(only_new, v.row.merchant_id!, v.sealed)).toMatch(/^\d{16}$/);
    }
    // A signed request of the merchant's secret; the replay of the sale made before the rotation
    // (its request fingerprint matches); its refund (the card fingerprint matches).
    const replay = await postSigned(d.url, '/api/process', { ...first_body, timestamp: nowSeconds() }, merchant.secret);
    expect(replay.body).toMatchObject({ status: 0, trace_id: first.body.trace_id, transaction_status: 'approved' });
    const refund = await postSigned(d.url, '/api/process', refundC(merchant, first.body.trace_id), merchant.secret);
    expect(refund.body).toMatchObject({ status: 0, transaction_status: 'approved' });
    // The same card of the same customer is the card vaulted before: the same token.
    const tokenized = await postSigned(
      d.url,
      '/api/tokenize',
      {
        merchant_id: merchant.merchant_id,
        application_key: merchant.application_key,
        pin: 'bulk-0',
        card_number: BULK_PAN,
        card_exp: '10/2033',
        timestamp: nowSeconds(),
        version: '1.2',
      },
      merchant.secret,
    );
    expect(tokenized.body).toMatchObject({ status: 0, card_token: bulk_zero });
    // The renewal charges the card vaulted before the rotation; a sale opens the gateway's settings.
    const subscription_id = String(subscription.body.subscription_id);
    await runBillingOnce({ deps: d.gateway.deps, poll_ms: 0, lease_ms: 300_000, owner: 'rotation-test' });
    const charge = await d.gateway.deps.store.transactions.findByKey(merchant.merchant_id, 'sale', renewalOrderId(subscription_id, 1, 0));
    expect(charge).toMatchObject({ status: 'approved', card_token });
    await sale(d, merchant, { pin: 'after' });
    expect((await sealedValues(store)).filter((v) => v.key_id !== new_id)).toEqual([]);
  }, 300_000);
});
