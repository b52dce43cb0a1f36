// POST /api/tokenize (decisions.md §9): a card_token without a charge, through the real HTTP
// server, on each store: the token a subscription then charges, the card checks, named field
// errors, the signature, the merchant scope, and no full PAN at rest.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unixSeconds } from '../../src/domain/clock.js';
import type { CreatedMerchant } from '../../src/domain/merchants.js';
import { verifyBody } from '../../src/domain/signing.js';
import { panFingerprint } from '../../src/operations/card-vault.js';
import { renewalOrderId } from '../../src/operations/subscription-renewal.js';
import { runBillingOnce } from '../../src/workers/subscription-billing.js';
import { postJson, postSigned, signed } from '../support/client.js';
import { storedText, tableRows } from '../support/database-scan.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { storeKinds } from '../support/stores.js';
import { createPlanVia, priceIdOf, v13 } from '../support/v13.js';

const PAN = '4000056655665556';
const MASKED = '400005******5556';

describe.each(storeKinds())('tokenize on %s', (kind) => {
  let gw: TestGateway;
  beforeAll(async () => {
    // Billing is driven by the test (runBillingOnce), not by the worker's timer.
    gw = await startTestGateway(kind, { env: { PAYGATE_BILLING_POLL_MS: '60000' } });
  });
  afterAll(async () => {
    await gw?.close();
  });

  const now = () => unixSeconds(gw.gateway.clock);
  function body(merchant: CreatedMerchant, overrides: Record<string, unknown> = {}): Record<string, unknown> {
    const fields: Record<string, unknown> = {
      merchant_id: merchant.merchant_id,
      application_key: merchant.application_key,
      pin: 'cust-42',
      card_number: PAN,
      card_exp: '10/2033',
      timestamp: now(),
      version: '1.2',
      ...overrides,
    };
    for (const key of Object.keys(overrides)) if (overrides[key] === undefined) delete fields[key];
    return fields;
  }
  const tokenize = (merchant: CreatedMerchant, overrides: Record<string, unknown> = {}) =>
    postSigned(gw.url, '/api/tokenize', body(merchant, overrides), merchant.secret);
  const vaulted = (merchant: CreatedMerchant) => tableRows(gw, 'card_vault', { merchant_id: merchant.merchant_id });
  const transactionsOf = (merchant: CreatedMerchant) => tableRows(gw, 'transactions', { merchant_id: merchant.merchant_id });

  it('stores the card without a charge and answers a signed card_token with the masked card', async () => {
    const merchant = await gw.createMerchant();
    const answer = await tokenize(merchant);
    expect(answer.http_status).toBe(200);
    expect(answer.body).toMatchObject({ status: 0, description: 'Card stored', card_number: MASKED, card_exp: '10/2033', version: '1.2' });
    expect(answer.body.card_token).toMatch(/^[A-Za-z0-9]{1,32}$/);
    expect(verifyBody(answer.body, merchant.secret)).toBe(true);
    const [row, ...more] = await vaulted(merchant);
    expect(more).toHaveLength(0);
    expect(row).toMatchObject({
      card_token: answer.body.card_token,
      pin: 'cust-42',
      card_masked: MASKED,
      card_exp: '10/2033',
      card_brand: 'VISA',
    });
    expect(row!.pan_fingerprint).toBe(panFingerprint(gw.gateway.deps.sealer, PAN));
    expect(JSON.stringify(row)).not.toContain(PAN);
    // Without a charge: no transaction at all for this merchant.
    expect(await transactionsOf(merchant)).toHaveLength(0);
    // The same card for the same customer is the same token; another customer gets their own.
    expect((await tokenize(merchant)).body.card_token).toBe(answer.body.card_token);
    const other_customer = await tokenize(merchant, { pin: 'cust-43' });
    expect(other_customer.body.status).toBe(0);
    expect(other_customer.body.card_token).not.toBe(answer.body.card_token);
    expect(await vaulted(merchant)).toHaveLength(2);
  });

  it('gives a card_token that a subscription accepts and its renewal charges (the vaulted card, no CVV)', async () => {
    const merchant = await gw.createMerchant();
    const card_token = (await tokenize(merchant)).body.card_token as string;
    const plan = await createPlanVia(gw.url, merchant);
    const created = await v13(
      gw.url,
      'POST',
      '/api/v1.3/subscription',
      merchant,
      {
        plan_id: plan.plan_id,
        price_id: priceIdOf(plan),
        cid: 'cust-42',
        card_token,
        notification_url: 'https://merchant.example/subs',
      },
      { timestamp: now() },
    );
    expect(created.body).toMatchObject({ status: 0 });
    const subscription_id = String(created.body.subscription_id);
    await runBillingOnce({ deps: gw.gateway.deps, poll_ms: 0, lease_ms: 300_000, owner: 'tokenize-test' });
    const charge = await gw.gateway.deps.store.transactions.findByKey(merchant.merchant_id, 'sale', renewalOrderId(subscription_id, 1, 0));
    expect(charge).toMatchObject({
      transaction_type: 'sale',
      status: 'approved',
      card_token,
      card_masked: MASKED,
      card_exp: '10/2033',
      amount_minor: 1999,
      currency: 'USD',
    });
    expect((await transactionsOf(merchant)).map((row) => Number(row.trace_id))).toEqual([charge!.trace_id]);
    // The charge read back through the API carries the token's masked card.
    const read = await postSigned(
      gw.url,
      '/api/transaction-status',
      {
        merchant_id: merchant.merchant_id,
        application_key: merchant.application_key,
        trace_id: charge!.trace_id,
        timestamp: now(),
        version: '1.2',
      },
      merchant.secret,
    );
    expect(read.body).toMatchObject({ status: 0, transaction_status: 'approved', card_number: MASKED });
  });

  it('refuses a card that fails the Luhn check or has expired, by name, and vaults nothing', async () => {
    const merchant = await gw.createMerchant();
    const luhn = await tokenize(merchant, { card_number: '4000056655665557' });
    expect(luhn.body).toMatchObject({ status: 10, description: 'Invalid field: card_number (fails the Luhn check)', version: '1.2' });
    expect(luhn.body.card_token).toBeUndefined();
    const expired = await tokenize(merchant, { card_exp: '01/2020' });
    expect(expired.body).toMatchObject({ status: 10, description: 'Invalid field: card_exp (the card has expired)' });
    expect(expired.body.card_token).toBeUndefined();
    expect(await vaulted(merchant)).toHaveLength(0);
  });

  it('names each missing, mistyped or over-long field and vaults nothing', async () => {
    const merchant = await gw.createMerchant();
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ pin: undefined }, /^Missing required field: pin$/],
      [{ pin: 'p'.repeat(51) }, /^Invalid field: pin \(expected text of 1 to 50 characters\)$/],
      [{ card_number: undefined }, /^Missing required field: card_number$/],
      [{ card_number: '4'.repeat(20) }, /^Invalid field: card_number \(expected 12 to 19 digits\)$/],
      [{ card_number: 4000056655665556 }, /^Invalid field: card_number/],
      [{ card_exp: undefined }, /^Missing required field: card_exp$/],
      [{ card_exp: '13/2030' }, /^Invalid field: card_exp/],
      [{ card_exp: '10/2033/01' }, /^Invalid field: card_exp/],
      [{ application_key: undefined }, /^Missing required field: application_key$/],
      [{ application_key: 'a'.repeat(33) }, /^Invalid field: application_key \(expected text of 1 to 32 characters\)$/],
      [{ version: undefined }, /^Missing required field: version$/],
      [{ version: '1.1' }, /^Invalid field: version \(expected exactly "1\.2"\)$/],
      [{ timestamp: undefined }, /^Missing required field: timestamp$/],
      [{ timestamp: '1763740800' }, /^Invalid field: timestamp/],
    ];
    for (const [overrides, description] of cases) {
      const answer = await tokenize(merchant, overrides);
      expect(answer.http_status).toBe(200);
      expect(answer.body, JSON.stringify(overrides)).toMatchObject({ status: 10, version: '1.2' });
      expect(answer.body.description).toMatch(description);
      expect(verifyBody(answer.body, merchant.secret)).toBe(true);
      expect(answer.body.card_token).toBeUndefined();
    }
    expect(await vaulted(merchant)).toHaveLength(0);
  });

  it('refuses a bad signature, an expired timestamp and an unknown application key, vaulting nothing', async () => {
    const merchant = await gw.createMerchant();
    const request = signed(body(merchant), merchant.secret);
    const tampered = await postJson(gw.url, '/api/tokenize', { ...request, pin: 'cust-99' });
    expect(tampered.body).toMatchObject({ status: 2, description: expect.stringMatching(/^Invalid signature/), version: '1.2' });
    expect(verifyBody(tampered.body, merchant.secret)).toBe(true);
    const wrong_secret = await postJson(gw.url, '/api/tokenize', signed(body(merchant), 'not-the-secret'));
    expect(wrong_secret.body).toMatchObject({ status: 2 });
    const missing = await postJson(gw.url, '/api/tokenize', body(merchant));
    expect(missing.body).toMatchObject({ status: 2 });
    expect((await tokenize(merchant, { timestamp: now() - 61 })).body).toMatchObject({ status: 1, description: 'Timestamp expired' });
    const unknown_app = await tokenize(merchant, { application_key: 'not-this-merchants' });
    expect(unknown_app.body).toMatchObject({
      status: 11,
      description: 'Authentication failed: unknown merchant_id, application_key or frontend',
    });
    expect(await vaulted(merchant)).toHaveLength(0);
  });

  it('scopes a token to its merchant: another merchant can neither use it nor see the card', async () => {
    const owner = await gw.createMerchant();
    const stranger = await gw.createMerchant();
    const card_token = (await tokenize(owner)).body.card_token as string;
    // The stranger's subscription with the owner's token: "card token not found", as for a made-up token.
    const plan = await createPlanVia(gw.url, stranger);
    const subscribe = (token: string) =>
      v13(
        gw.url,
        'POST',
        '/api/v1.3/subscription',
        stranger,
        {
          plan_id: plan.plan_id,
          price_id: priceIdOf(plan),
          cid: 'cust-42',
          card_token: token,
          notification_url: 'https://merchant.example/subs',
        },
        { timestamp: now() },
      );
    const foreign = await subscribe(card_token);
    const made_up = await subscribe('f'.repeat(32));
    expect(foreign.body).toMatchObject({ status: 18, description: 'Card token not found' });
    expect({ ...made_up.body, timestamp: 0 }).toEqual({ ...foreign.body, timestamp: 0 });
    // The same card tokenized by the stranger is the stranger's own, separate token.
    const own = await tokenize(stranger);
    expect(own.body.status).toBe(0);
    expect(own.body.card_token).not.toBe(card_token);
    expect((await vaulted(stranger)).map((row) => row.card_token)).toEqual([own.body.card_token]);
    expect((await vaulted(owner)).map((row) => row.card_token)).toEqual([card_token]);
    // The stranger's credentials cannot tokenize in the owner's name.
    const impostor = await postSigned(gw.url, '/api/tokenize', body(owner, { application_key: stranger.application_key }), owner.secret);
    expect(impostor.body).toMatchObject({ status: 11 });
  });

  it('keeps no full PAN in the database, only the masked card and the sealed one', async () => {
    const merchant = await gw.createMerchant();
    const answer = await tokenize(merchant, { pin: 'scan-me' });
    expect(answer.body.status).toBe(0);
    const [row] = await vaulted(merchant);
    expect(String(row!.pan_sealed)).not.toContain(PAN);
    expect(String(row!.pan_sealed).length).toBeGreaterThan(0);
    const stored = await storedText(gw);
    expect(stored).toContain(MASKED);
    expect(stored).not.toContain(PAN);
    // Nor split by a separator, as some formats write it.
    expect(stored).not.toContain('4000 0566 5566 5556');
    expect(stored).not.toContain('4000-0566-5566-5556');
  });
});
