// POST /api/process sales (variants A and B) through the real HTTP server, on each store.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unixSeconds } from '../../src/domain/clock.js';
import { verifyBody } from '../../src/domain/signing.js';
import { UNKNOWN_CREDENTIALS } from '../../src/http/route.js';
import { panFingerprint } from '../../src/operations/card-vault.js';
import { nowSeconds, postJson, postSigned, signed } from '../support/client.js';
import { orderId, saleA, saleB, VISA } from '../support/bodies.js';
import { withStoppedClock } from '../support/clock.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { storeKinds } from '../support/stores.js';

describe.each(storeKinds())('sale on %s', (kind) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(kind);
  });
  afterAll(async () => {
    await gw?.close();
  });

  const sale = (body: Record<string, unknown>) => postSigned(gw.url, '/api/process', body, gw.merchant.secret);

  it('approves a variant A sale, answers signed with a stored trace_id and a card_token', async () => {
    const answer = await sale(saleA(gw.merchant));
    expect(answer.http_status).toBe(200);
    expect(answer.body).toMatchObject({
      status: 0,
      transaction_status: 'approved',
      payment_processor: 'sandbox',
      error_code: '0',
      version: '1.2',
      redirect_url: null,
    });
    expect(answer.body.error_details).toMatch(/^\[TEST\]/);
    expect(typeof answer.body.card_token).toBe('string');
    expect(verifyBody(answer.body, gw.merchant.secret)).toBe(true);
    const row = await gw.gateway.deps.store.transactions.get(answer.body.trace_id as number);
    expect(row).toMatchObject({ status: 'approved', amount_minor: 1999, currency: 'USD', card_masked: '411111******1111' });
  });

  it('approves a variant B sale in the frontend form with version 1.1', async () => {
    const answer = await sale(saleB(gw.merchant));
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'approved', version: '1.1' });
  });

  it.each([
    ['000', 'rejected', /Do not honor/],
    ['801', 'rejected', /Insufficient funds/],
    ['900', 'rejected', /Lost card/],
    ['901', 'rejected', /Stolen card/],
    ['444', 'error', /Processor error/],
    ['222', 'pending', /asynchronous/i],
    ['223', 'pending', /asynchronous/i],
  ])('CVV %s gives %s', async (cvv, transaction_status, details) => {
    const answer = await sale(saleA(gw.merchant, { cvv }));
    expect(answer.body).toMatchObject({ status: 0, transaction_status });
    expect(answer.body.error_details).toMatch(details);
    expect(answer.body.card_token).toBeUndefined();
    expect(await gw.gateway.deps.store.transactions.get(answer.body.trace_id as number)).toMatchObject({ status: transaction_status });
  });

  it('answers 3-D Secure CVVs with pending_async and a redirect_url to the sandbox page', async () => {
    for (const cvv of ['333', '300']) {
      const answer = await sale(saleA(gw.merchant, { cvv }));
      expect(answer.body).toMatchObject({ status: 0, transaction_status: 'pending_async', error_code: '0' });
      expect(answer.body.redirect_url).toMatch(new RegExp(`^${gw.url}/sandbox/3ds/[A-Za-z0-9_-]{20,}$`));
      const page = await fetch(answer.body.redirect_url as string);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('Approve');
    }
  });

  it('rejects a Luhn-invalid card and a past expiry as stored transactions', async () => {
    const bad_luhn = await sale(saleA(gw.merchant, { card_number: '4111111111111112' }));
    expect(bad_luhn.body).toMatchObject({ status: 0, transaction_status: 'rejected', error_code: '1' });
    expect(typeof bad_luhn.body.trace_id).toBe('number');
    const expired = await sale(saleA(gw.merchant, { card_exp: '01/2020' }));
    expect(expired.body).toMatchObject({ status: 0, transaction_status: 'rejected' });
    expect(expired.body.error_details).toMatch(/expired/i);
  });

  it('names the missing or invalid field with a positive status and writes nothing', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ amount: undefined }, /Missing required field: amount/],
      [{ amount: '19.99' }, /Invalid field: amount/],
      [{ amount: 19.99 }, /Invalid field: amount/],
      [{ amount: 0 }, /Invalid field: amount/],
      [{ currency: 'XYZ' }, /Invalid field: currency/],
      [{ card_number: '4111-1111' }, /Invalid field: card_number/],
      [{ card_exp: '13/2030' }, /Invalid field: card_exp/],
      [{ email: 'x'.repeat(45) + '@example.com' }, /Invalid field: email/],
      [{ first_name: 'J'.repeat(26) }, /Invalid field: first_name/],
      [{ order_id: 'o'.repeat(51) }, /Invalid field: order_id/],
      [{ requester_ip: '999.1.1.1' }, /Invalid field: requester_ip/],
      [{ country: 'GBR' }, /Invalid field: country/],
      [{ version: '1.1' }, /Invalid field: version/],
      [{ transaction_type: 'capture' }, /Invalid field: transaction_type/],
    ];
    for (const [overrides, description] of cases) {
      const body = saleA(gw.merchant, overrides);
      for (const key of Object.keys(overrides)) if (overrides[key] === undefined) delete body[key];
      const answer = await sale(body);
      expect(answer.http_status).toBe(200);
      expect(answer.body.status, JSON.stringify(overrides)).toBeGreaterThan(0);
      expect(answer.body.description).toMatch(description);
      expect(answer.body.trace_id).toBeUndefined();
      expect(await gw.gateway.deps.store.transactions.findByKey(gw.merchant.merchant_id, 'sale', body.order_id as string)).toBeNull();
    }
  });

  describe('variant B (frontend, version 1.1) failure paths', () => {
    const stored = (body: Record<string, unknown>) =>
      gw.gateway.deps.store.transactions.findByKey(gw.merchant.merchant_id, 'sale', body.order_id as string);

    it('names a missing, over-long or mistyped field with a positive status and stores nothing', async () => {
      const cases: [Record<string, unknown>, RegExp][] = [
        [{ state: undefined }, /^Missing required field: state$/],
        [{ state: 'LND' }, /^Invalid field: state \(expected a 2-character/],
        [{ frontend: 'f'.repeat(257) }, /^Invalid field: frontend \(expected text of 1 to 256/],
        [{ card_number: undefined }, /^Missing required field: card_number$/],
        [{ cvv: '12' }, /^Invalid field: cvv \(expected 3 or 4 digits\)$/],
        [{ currency: 'eur' }, /^Invalid field: currency/],
        [{ zip: 'SW1A 1AA 1234567' }, /^Invalid field: zip/],
        [{ notification_url: 'ftp://merchant.example/n' }, /^Invalid field: notification_url/],
      ];
      for (const [overrides, description] of cases) {
        const body = saleB(gw.merchant, overrides);
        for (const key of Object.keys(overrides)) if (overrides[key] === undefined) delete body[key];
        const answer = await sale(body);
        expect(answer.http_status).toBe(200);
        expect(answer.body, JSON.stringify(overrides)).toMatchObject({ status: 10, version: '1.1' });
        expect(answer.body.description).toMatch(description);
        expect(verifyBody(answer.body, gw.merchant.secret)).toBe(true);
        expect(answer.body.trace_id).toBeUndefined();
        expect(await stored(body)).toBeNull();
      }
    });

    it('takes a sale without cvv but rejects it as a stored transaction (no customer-initiated sale without CVV)', async () => {
      const pan = '5105105105105100'; // a card no other test of this file uses
      const body = saleB(gw.merchant, { card_number: pan });
      delete body.cvv;
      const answer = await sale(body);
      expect(answer.body).toMatchObject({ status: 0, transaction_status: 'rejected', error_code: '1', version: '1.1' });
      expect(answer.body.error_details).toBe('[TEST] CVV required for a customer-initiated sale');
      expect(answer.body.card_token).toBeUndefined();
      expect(await stored(body)).toMatchObject({ trace_id: answer.body.trace_id, status: 'rejected', identity_kind: 'frontend' });
      // Nothing was vaulted for it.
      const { sealer, store } = gw.gateway.deps;
      expect(await store.cards.find(gw.merchant.merchant_id, 'cust-42', panFingerprint(sealer, pan), '06/2034')).toBeNull();
    });

    it("answers an unknown frontend, another merchant's frontend and an unknown merchant alike, revealing nothing", async () => {
      const other = await gw.createMerchant();
      const unknown = saleB(gw.merchant, { frontend: 'no-such-frontend' });
      const foreign = saleB(gw.merchant, { frontend: other.frontend });
      const unknown_answer = await sale(unknown);
      const foreign_answer = await sale(foreign);
      const nobody = await postSigned(gw.url, '/api/process', saleB({ ...gw.merchant, merchant_id: 'nobody-at-all' }), 'some-secret');
      for (const answer of [unknown_answer, foreign_answer, nobody]) {
        expect(answer.http_status).toBe(200);
        expect(answer.body).toMatchObject({ status: 11, description: UNKNOWN_CREDENTIALS, version: '1.1' });
        expect(answer.body.trace_id).toBeUndefined();
      }
      // Same fields, same words: only the signature (the merchant is known) and the timestamp differ.
      const bare = (b: Record<string, unknown>) => {
        const { signature: _s, timestamp: _t, ...rest } = b;
        return rest;
      };
      expect(bare(foreign_answer.body)).toEqual(bare(unknown_answer.body));
      expect(bare(nobody.body)).toEqual(bare(unknown_answer.body));
      expect(verifyBody(unknown_answer.body, gw.merchant.secret)).toBe(true);
      expect(nobody.body.signature).toBeUndefined();
      expect(await stored(unknown)).toBeNull();
      expect(await stored(foreign)).toBeNull();
      expect(await gw.gateway.deps.store.transactions.findByKey(other.merchant_id, 'sale', foreign.order_id as string)).toBeNull();
    });

    it('refuses a version other than 1.1 in the frontend form', async () => {
      for (const version of ['1.2', '1.0', '']) {
        const body = saleB(gw.merchant, { version });
        const answer = await sale(body);
        expect(answer.body, version).toMatchObject({ status: 10 });
        expect(answer.body.description).toMatch(/^Invalid field: version \(expected exactly "1\.1"\)$/);
        expect(await stored(body)).toBeNull();
      }
      const missing = saleB(gw.merchant);
      delete missing.version;
      expect((await sale(missing)).body).toMatchObject({ status: 10, description: 'Missing required field: version' });
    });

    it('refuses a bad signature and a timestamp outside the window, storing nothing', async () => {
      const body = signed(saleB(gw.merchant), gw.merchant.secret);
      const tampered = await postJson(gw.url, '/api/process', { ...body, amount: 2501 });
      expect(tampered.body).toMatchObject({ status: 2, description: expect.stringMatching(/^Invalid signature/), version: '1.1' });
      expect(verifyBody(tampered.body, gw.merchant.secret)).toBe(true);
      const late = saleB(gw.merchant, { timestamp: unixSeconds(gw.gateway.clock) - 600 });
      expect((await sale(late)).body).toMatchObject({ status: 1, description: 'Timestamp expired', version: '1.1' });
      expect(await stored(body)).toBeNull();
      expect(await stored(late)).toBeNull();
    });
  });

  it("answers with the client's version only when the route takes it, else with the route's own", async () => {
    // Invalid versions are not echoed: the answer says the version the endpoint speaks.
    for (const version of ['9.9', 'x'.repeat(16), '<b>1.2</b>', '1.2 ']) {
      const answer = await sale(saleA(gw.merchant, { version }));
      expect(answer.body, version).toMatchObject({ status: 10, version: '1.2' });
      expect(answer.body.description).toMatch(/^Invalid field: version/);
      expect(verifyBody(answer.body, gw.merchant.secret)).toBe(true);
    }
    // Not a string at all, on an error found before the fields are read (bad signature).
    const body = signed(saleA(gw.merchant, { version: 12 }), gw.merchant.secret);
    const bad_signature = await postJson(gw.url, '/api/process', { ...body, amount: 1 });
    expect(bad_signature.body).toMatchObject({ status: 2, version: '1.2' });
    // An unknown merchant, unsigned: still the route's version, not the client's.
    const nobody = await postSigned(
      gw.url,
      '/api/process',
      saleA({ ...gw.merchant, merchant_id: 'nobody-at-all' }, { version: 'evil' }),
      'x',
    );
    expect(nobody.body).toMatchObject({ status: 11, version: '1.2' });
    // A version this route takes is echoed even where the variant wants the other one.
    const other_variant = await sale(saleA(gw.merchant, { version: '1.1' }));
    expect(other_variant.body).toMatchObject({ status: 10, version: '1.1' });
    expect(other_variant.body.description).toMatch(/^Invalid field: version \(expected exactly "1\.2"\)$/);
  });

  it('keeps the card in the vault only when the sale can still be approved', async () => {
    const { sealer, store } = gw.gateway.deps;
    const vaulted = async (pan: string) => store.cards.find(gw.merchant.merchant_id, 'cust-42', panFingerprint(sealer, pan), '12/2035');
    await sale(saleA(gw.merchant, { card_number: '4000000000000002', cvv: '000' }));
    expect(await vaulted('4000000000000002')).toBeNull();
    await sale(saleA(gw.merchant, { card_number: '4000000000000010', cvv: '333' }));
    expect(await vaulted('4000000000000010')).not.toBeNull();
    const approved = await sale(saleA(gw.merchant, { card_number: '4000000000000028' }));
    expect((await vaulted('4000000000000028'))?.card_token).toBe(approved.body.card_token);
  });

  it('refuses nested values by name before checking the signature', async () => {
    const body = { ...saleA(gw.merchant), variable1: { nested: true }, signature: '0'.repeat(96) };
    const answer = await postJson(gw.url, '/api/process', body);
    expect(answer.body).toMatchObject({ status: 10 });
    expect(answer.body.description).toMatch(/Invalid field: variable1 \(nested/);
    expect(verifyBody(answer.body, gw.merchant.secret)).toBe(true);
  });

  it('accepts IPv6 requester_ip (decisions.md §5 correction)', async () => {
    const answer = await sale(saleA(gw.merchant, { requester_ip: '2001:db8::1' }));
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'approved' });
  });

  it('refuses a bad signature with a signed positive status', async () => {
    const body = signed(saleA(gw.merchant), gw.merchant.secret);
    const answer = await postJson(gw.url, '/api/process', { ...body, amount: 2000 });
    expect(answer.body).toMatchObject({ status: 2, description: expect.stringMatching(/^Invalid signature/) });
    expect(verifyBody(answer.body, gw.merchant.secret)).toBe(true);
    const short = await postJson(gw.url, '/api/process', { ...body, signature: 'abc' });
    expect(short.body).toMatchObject({ status: 2 });
  });

  it('refuses an unknown merchant or application key alike, revealing nothing', async () => {
    const unknown_merchant = await postSigned(gw.url, '/api/process', saleA({ ...gw.merchant, merchant_id: 'nobody' }), 'x');
    const wrong_app = await postSigned(gw.url, '/api/process', saleA({ ...gw.merchant, application_key: 'other-app' }), gw.merchant.secret);
    expect(unknown_merchant.body.status).toBe(11);
    expect(wrong_app.body.status).toBe(11);
    expect(unknown_merchant.body.description).toBe(wrong_app.body.description);
    expect(unknown_merchant.body.signature).toBeUndefined();
  });

  it('accepts a timestamp 59 s and 60 s off and refuses 61 s off, in both directions', async () => {
    // The gateway's clock stands still for the test: a second boundary passing between signing and
    // the gateway reading its clock cannot turn 61 s into 60 s (or 59 s into 60 s).
    await withStoppedClock(gw.gateway, async (now_s) => {
      for (const offset of [-60, -59, 59, 60]) {
        const answer = await sale(saleA(gw.merchant, { timestamp: now_s + offset }));
        expect(answer.body, `offset ${offset}`).toMatchObject({ status: 0, transaction_status: 'approved' });
      }
      for (const offset of [-61, 61]) {
        const body = saleA(gw.merchant, { timestamp: now_s + offset });
        const answer = await sale(body);
        expect(answer.body, `offset ${offset}`).toMatchObject({ status: 1, description: 'Timestamp expired', version: '1.2' });
        expect(await gw.gateway.deps.store.transactions.findByKey(gw.merchant.merchant_id, 'sale', body.order_id as string)).toBeNull();
      }
    });
  });

  it("refuses a gateway that is not the merchant's", async () => {
    const other = await gw.createMerchant();
    const answer = await sale(saleA(gw.merchant, { gateway: other.gateway }));
    expect(answer.body.status).toBe(15);
    const own = await sale(saleA(gw.merchant, { gateway: gw.merchant.gateway }));
    expect(own.body).toMatchObject({ status: 0, transaction_status: 'approved' });
  });

  it('handles minor units per currency without multiplying (JPY 0, BHD 3 decimals)', async () => {
    for (const [currency, amount] of [
      ['JPY', 1999],
      ['BHD', 1999],
    ] as const) {
      const answer = await sale(saleA(gw.merchant, { currency, amount }));
      const row = await gw.gateway.deps.store.transactions.get(answer.body.trace_id as number);
      expect(row).toMatchObject({ amount_minor: amount, charge_amount_minor: amount, currency, charge_currency: currency });
    }
  });

  it('replays an identical request with the same trace_id and refuses different content', async () => {
    const body = saleA(gw.merchant);
    const first = await sale(body);
    const again = await sale({ ...body, timestamp: nowSeconds() + 1 });
    expect(again.body).toMatchObject({ status: 0, trace_id: first.body.trace_id, transaction_status: 'approved' });
    const changed = await sale({ ...body, amount: 2000 });
    expect(changed.body).toMatchObject({ status: 12, description: 'Duplicate order_id' });
    const notifications = await gw.gateway.deps.store.notifications.listOfTransaction(first.body.trace_id as number);
    expect(notifications).toHaveLength(1);
  });

  it('gives 20 concurrent identical sales exactly one trace_id', async () => {
    const body = signed(saleA(gw.merchant, { order_id: orderId('concurrent') }), gw.merchant.secret);
    const answers = await Promise.all(Array.from({ length: 20 }, () => postJson(gw.url, '/api/process', body)));
    const trace_ids = new Set(answers.map((a) => a.body.trace_id));
    expect(answers.every((a) => a.body.status === 0)).toBe(true);
    expect(trace_ids.size).toBe(1);
    const row = await gw.gateway.deps.store.transactions.findByKey(gw.merchant.merchant_id, 'sale', body.order_id as string);
    expect(row?.trace_id).toBe([...trace_ids][0]);
    expect(await gw.gateway.deps.store.notifications.listOfTransaction(row!.trace_id)).toHaveLength(1);
  });

  it('records the notification of the status change with the masked card and card_token', async () => {
    const answer = await sale(saleA(gw.merchant, { variable1: 'cart-7' }));
    const [notification] = await gw.gateway.deps.store.notifications.listOfTransaction(answer.body.trace_id as number);
    const payload = JSON.parse(notification!.payload_json) as Record<string, unknown>;
    expect(payload).toMatchObject({
      transaction_type: 'sale',
      transaction_status: 'approved',
      trace_id: answer.body.trace_id,
      application_key: gw.merchant.application_key,
      card_number: '411111******1111',
      card_token: answer.body.card_token,
      charge_amount: 1999,
      charge_currency: 'USD',
      variable1: 'cart-7',
      version: '1.2',
    });
    expect(JSON.stringify(payload)).not.toContain(VISA);
  });
});
