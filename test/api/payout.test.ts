// POST /api/process card payouts: variant D (encrypted card data, application_key, 1.2) and
// variant E (plain card data, frontend, 1.1), through the real HTTP server, on each store.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decryptCardField, encryptCardField } from '../../src/domain/card-encryption.js';
import { verifyBody } from '../../src/domain/signing.js';
import { MASTERCARD, orderId, VISA } from '../support/bodies.js';
import { nowSeconds, postJson, postSigned, signed } from '../support/client.js';
import { withStoppedClock } from '../support/clock.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { payoutD, payoutE, without } from '../support/payout-bodies.js';
import { storeKinds } from '../support/stores.js';
import { loadVectors } from '../support/vectors.js';

const UNREADABLE_STATUS = 17;

describe('card encryption vector (decisions.md §3)', () => {
  const vector = loadVectors().card_encryption;
  it.each(vector.fields.map((f) => [f.name, f]))('%s encrypts to the vector and the vector decrypts', (_name, field) => {
    expect(encryptCardField(field.plain, vector.secret, vector.timestamp)).toBe(field.encrypted);
    expect(decryptCardField(field.encrypted, vector.secret, vector.timestamp)).toEqual({ ok: true, value: field.plain });
  });
  it('the vector does not decrypt with another timestamp or secret', () => {
    const [pan] = vector.fields;
    const other_time = decryptCardField(pan!.encrypted, vector.secret, vector.timestamp + 1);
    expect(other_time.ok && other_time.value === pan!.plain).toBe(false);
    const other_key = decryptCardField(pan!.encrypted, 'other-secret', vector.timestamp);
    expect(other_key.ok && other_key.value === pan!.plain).toBe(false);
  });
});

describe.each(storeKinds())('card payout on %s', (kind) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(kind, { env: { PAYGATE_SANDBOX_SETTLE_SECONDS: '1' } });
  });
  afterAll(async () => {
    await gw?.close();
  });

  const post = (body: Record<string, unknown>, secret = gw.merchant.secret) => postSigned(gw.url, '/api/process', body, secret);
  const stored = (order_id: unknown) => gw.gateway.deps.store.transactions.findByKey(gw.merchant.merchant_id, 'payout', order_id as string);

  async function waitForStatus(trace_id: number, status: string, timeout_ms = 10_000): Promise<void> {
    const deadline = Date.now() + timeout_ms;
    for (;;) {
      const row = await gw.gateway.deps.store.transactions.get(trace_id);
      if (row?.status === status) return;
      if (Date.now() > deadline) throw new Error(`trace ${trace_id} still ${row?.status}, expected ${status}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  describe('variant D (encrypted)', () => {
    it('approves with the *_encrypted names, stores only the masked card and answers no redirect_url', async () => {
      const body = payoutD(gw.merchant, { variable1: 'payout-ref-1' });
      const answer = await post(body);
      expect(answer.http_status).toBe(200);
      expect(answer.body).toMatchObject({
        status: 0,
        transaction_status: 'approved',
        payment_processor: 'sandbox',
        error_code: '0',
        version: '1.2',
      });
      expect(answer.body).not.toHaveProperty('redirect_url');
      expect(answer.body).not.toHaveProperty('card_token');
      expect(answer.body.error_details).toMatch(/^\[TEST\]/);
      expect(verifyBody(answer.body, gw.merchant.secret)).toBe(true);
      const row = await gw.gateway.deps.store.transactions.get(answer.body.trace_id as number);
      expect(row).toMatchObject({
        transaction_type: 'payout',
        status: 'approved',
        payment_method: 'card',
        card_masked: '411111******1111',
        card_exp: '12/2035',
        card_brand: 'VISA',
        amount_minor: 5000,
        gateway_id: gw.merchant.gateway,
        card_token: null,
      });
      expect(row!.card_fingerprint).toMatch(/^[0-9a-f]{64}$/);
      expect(JSON.stringify(row)).not.toContain(VISA);
      const [notification] = await gw.gateway.deps.store.notifications.listOfTransaction(row!.trace_id);
      const payload = JSON.parse(notification!.payload_json) as Record<string, unknown>;
      expect(payload).toMatchObject({
        transaction_type: 'payout',
        transaction_status: 'approved',
        order_id: body.order_id,
        card_number: '411111******1111',
        application_key: gw.merchant.application_key,
        variable1: 'payout-ref-1',
        version: '1.2',
      });
      expect(JSON.stringify(payload)).not.toContain(VISA);
    });

    it('accepts the ciphertexts under the plain names card_number / card_exp / cvv', async () => {
      const answer = await post(payoutD(gw.merchant, {}, { card_number: MASTERCARD, card_exp: '06/2034', cvv: '123' }, 'plain'));
      expect(answer.body).toMatchObject({ status: 0, transaction_status: 'approved' });
      const row = await gw.gateway.deps.store.transactions.get(answer.body.trace_id as number);
      expect(row).toMatchObject({ card_masked: '555555******4444', card_exp: '06/2034', card_brand: 'MasterCard' });
    });

    it('accepts an encrypted cvv under cvv_encrypted and the same value under both names', async () => {
      const body = payoutD(gw.merchant, {}, { ...{ card_number: VISA, card_exp: '12/2035' }, cvv: '4321' });
      const answer = await post({ ...body, card_number: body.card_number_encrypted });
      expect(answer.body).toMatchObject({ status: 0, transaction_status: 'approved' });
    });

    it.each([
      [1400, 'rejected', /Payout rejected/],
      [1500, 'error', /Processor error/],
      [1313, 'pending', /processing/i],
    ])('amount %s gives %s', async (amount, transaction_status, details) => {
      const answer = await post(payoutD(gw.merchant, { amount }));
      expect(answer.body).toMatchObject({ status: 0, transaction_status });
      expect(answer.body.error_details).toMatch(details);
      expect(await gw.gateway.deps.store.transactions.get(answer.body.trace_id as number)).toMatchObject({ status: transaction_status });
    });

    it('settles amount 1313 as approved a little later and records that notification', async () => {
      const answer = await post(payoutD(gw.merchant, { amount: 1313 }));
      const trace_id = answer.body.trace_id as number;
      await waitForStatus(trace_id, 'approved');
      const notifications = await gw.gateway.deps.store.notifications.listOfTransaction(trace_id);
      expect(notifications.map((n) => (JSON.parse(n.payload_json) as { transaction_status: string }).transaction_status)).toEqual([
        'approved',
      ]);
    });

    it('rejects a decrypted card that fails Luhn or has expired, as stored transactions', async () => {
      const luhn = await post(payoutD(gw.merchant, {}, { card_number: '4111111111111112', card_exp: '12/2035' }));
      expect(luhn.body).toMatchObject({ status: 0, transaction_status: 'rejected', error_code: '1' });
      const expired = await post(payoutD(gw.merchant, {}, { card_number: VISA, card_exp: '01/2020' }));
      expect(expired.body).toMatchObject({ status: 0, transaction_status: 'rejected' });
      expect(expired.body.error_details).toMatch(/expired/i);
    });

    it('gives every unreadable ciphertext one byte-identical answer and stores nothing', async () => {
      const timestamp = nowSeconds();
      const secret = gw.merchant.secret;
      const good_pan = encryptCardField(VISA, secret, timestamp);
      const good_exp = encryptCardField('12/2035', secret, timestamp);
      const raw = Buffer.from(good_pan, 'base64');
      const flip = (index: number) => {
        const copy = Buffer.from(raw);
        copy[index] = copy[index]! ^ 0x01;
        return copy.toString('base64');
      };
      const vector = loadVectors().card_encryption;
      const cases: Record<string, Record<string, unknown>> = {
        'tampered last block (bad padding)': { card_number_encrypted: flip(raw.length - 1) },
        'tampered first block (garbled digits)': { card_number_encrypted: flip(0) },
        'truncated by one block': { card_number_encrypted: raw.subarray(0, 16).toString('base64') },
        'truncated mid-block': { card_number_encrypted: raw.subarray(0, 20).toString('base64') },
        'truncated text': { card_number_encrypted: good_pan.slice(0, -4) },
        'not base64': { card_number_encrypted: '!!not*base64!!' },
        'base64 with bad padding': { card_number_encrypted: 'abc=' },
        'wrong key': { card_number_encrypted: encryptCardField(VISA, 'not-the-merchant-secret', timestamp) },
        // (A ciphertext made for a nearby timestamp is not in this list: in CBC the IV only XORs
        // the first block, so it may decrypt to other digits; the processor then rejects it.)
        'the decisions.md vector (its own timestamp)': { card_number_encrypted: vector.fields[0]!.encrypted },
        'ciphertext of a non-card value': { card_number_encrypted: encryptCardField('hello world', secret, timestamp) },
        'ciphertext of a too-short number': { card_number_encrypted: encryptCardField('41111111', secret, timestamp) },
        'expiry that is not MM/YYYY': { card_exp_encrypted: encryptCardField('2035-12', secret, timestamp) },
        'expiry tampered': { card_exp_encrypted: Buffer.from(good_exp, 'base64').subarray(0, 15).toString('base64') },
        'cvv that is not 3-4 digits': { cvv_encrypted: encryptCardField('12345', secret, timestamp) },
        'cvv wrong key': { cvv_encrypted: encryptCardField('123', 'not-the-merchant-secret', timestamp) },
        'plain card data where ciphertext belongs': { card_number_encrypted: VISA, card_exp_encrypted: '12/2035' },
      };
      const answers: { name: string; status: unknown; description: unknown; keys: string[] }[] = [];
      for (const [name, overrides] of Object.entries(cases)) {
        const body = payoutD(gw.merchant, { timestamp, card_number_encrypted: good_pan, card_exp_encrypted: good_exp, ...overrides });
        const answer = await post(body);
        expect(answer.http_status, name).toBe(200);
        answers.push({ name, status: answer.body.status, description: answer.body.description, keys: Object.keys(answer.body).sort() });
        expect(await stored(body.order_id), name).toBeNull();
      }
      const [first] = answers;
      expect(first!.status).toBe(UNREADABLE_STATUS);
      expect(first!.description).toMatch(/^Card data unreadable/);
      for (const answer of answers) {
        expect({ status: answer.status, description: answer.description, keys: answer.keys }, answer.name).toEqual({
          status: first!.status,
          description: first!.description,
          keys: first!.keys,
        });
      }
      // And the same body with the good ciphertexts goes through.
      const control = await post(payoutD(gw.merchant, { timestamp, card_number_encrypted: good_pan, card_exp_encrypted: good_exp }));
      expect(control.body).toMatchObject({ status: 0, transaction_status: 'approved' });
    });

    it('names a missing, over-long or doubled card field and stores nothing', async () => {
      const base = payoutD(gw.merchant);
      const cases: [Record<string, unknown>, RegExp][] = [
        [without(base, 'card_number_encrypted'), /^Missing required field: card_number_encrypted$/],
        [without(base, 'card_exp_encrypted'), /^Missing required field: card_exp_encrypted$/],
        [{ ...base, card_number_encrypted: 'A'.repeat(257) }, /^Invalid field: card_number_encrypted \(expected .*256/],
        [{ ...base, card_exp_encrypted: '' }, /^Invalid field: card_exp_encrypted/],
        [{ ...base, card_number_encrypted: 12345 }, /^Invalid field: card_number_encrypted/],
        [
          { ...base, card_number: encryptCardField(MASTERCARD, gw.merchant.secret, base.timestamp as number) },
          /^Invalid field: card_number \(given twice/,
        ],
        [without(base, 'gateway'), /^Missing required field: gateway$/],
        [without(base, 'state'), /^Missing required field: state$/],
        [{ ...base, version: '1.1' }, /^Invalid field: version/],
      ];
      for (const [body, description] of cases) {
        const answer = await post({ ...body, order_id: orderId('bad') });
        expect(answer.body.status, String(description)).toBe(10);
        expect(answer.body.description).toMatch(description);
        expect(answer.body.trace_id).toBeUndefined();
      }
    });

    it('replays an identical payout re-encrypted under a new timestamp, and refuses different content', async () => {
      const body = payoutD(gw.merchant);
      const first = await post(body);
      expect(first.body).toMatchObject({ status: 0, transaction_status: 'approved' });
      // Same content, a later timestamp: every ciphertext differs (the timestamp is the IV).
      const again_body = payoutD(gw.merchant, { order_id: body.order_id, timestamp: (body.timestamp as number) + 1 });
      expect(again_body.card_number_encrypted).not.toBe(body.card_number_encrypted);
      const again = await post(again_body);
      expect(again.body).toMatchObject({ status: 0, trace_id: first.body.trace_id, transaction_status: 'approved' });
      const other_card = await post(payoutD(gw.merchant, { order_id: body.order_id }, { card_number: MASTERCARD, card_exp: '12/2035' }));
      expect(other_card.body).toMatchObject({ status: 12, description: 'Duplicate order_id' });
      const other_amount = await post({ ...body, amount: 5001 });
      expect(other_amount.body).toMatchObject({ status: 12, description: 'Duplicate order_id' });
      expect(await gw.gateway.deps.store.notifications.listOfTransaction(first.body.trace_id as number)).toHaveLength(1);
    });

    it('gives 20 concurrent identical payouts one trace_id, one stored payout and one notification', async () => {
      const body = signed(payoutD(gw.merchant, { order_id: orderId('concurrent') }), gw.merchant.secret);
      const answers = await Promise.all(Array.from({ length: 20 }, () => postJson(gw.url, '/api/process', body)));
      expect(answers.every((a) => a.body.status === 0 && a.body.transaction_status === 'approved')).toBe(true);
      const trace_ids = new Set(answers.map((a) => a.body.trace_id));
      expect(trace_ids.size).toBe(1);
      const row = await stored(body.order_id);
      expect(row?.trace_id).toBe([...trace_ids][0]);
      expect(await gw.gateway.deps.store.notifications.listOfTransaction(row!.trace_id)).toHaveLength(1);
    });

    it("refuses a gateway that is not the merchant's or does not take the currency", async () => {
      const other = await gw.createMerchant();
      expect((await post(payoutD(gw.merchant, { gateway: other.gateway }))).body.status).toBe(15);
      expect((await post(payoutD(gw.merchant, { currency: 'NZD' }))).body.status).toBe(15);
    });

    it('refuses a timestamp outside the window before decrypting', async () => {
      const body = payoutD(gw.merchant, { timestamp: nowSeconds(-120) });
      expect((await post(body)).body).toMatchObject({ status: 1, description: 'Timestamp expired' });
    });
  });

  describe('variant E (plain)', () => {
    it('approves in the frontend form with version 1.1', async () => {
      const body = payoutE(gw.merchant);
      const answer = await post(body);
      expect(answer.body).toMatchObject({
        status: 0,
        transaction_status: 'approved',
        version: '1.1',
        payment_processor: 'sandbox',
        error_code: '0',
      });
      expect(typeof answer.body.transaction_id).toBe('string');
      expect(answer.body).not.toHaveProperty('redirect_url');
      const row = await stored(body.order_id);
      expect(row).toMatchObject({ status: 'approved', identity_kind: 'frontend', card_masked: '411111******1111', api_version: '1.1' });
      const [notification] = await gw.gateway.deps.store.notifications.listOfTransaction(row!.trace_id);
      expect(JSON.parse(notification!.payload_json)).toMatchObject({
        frontend: gw.merchant.frontend,
        version: '1.1',
        transaction_type: 'payout',
      });
    });

    it.each([
      [1400, 'rejected'],
      [1500, 'error'],
      [1313, 'pending'],
      [1, 'approved'],
    ])('amount %s gives %s', async (amount, transaction_status) => {
      const answer = await post(payoutE(gw.merchant, { amount }));
      expect(answer.body).toMatchObject({ status: 0, transaction_status });
    });

    it('rejects a Luhn-invalid card and a past expiry', async () => {
      expect((await post(payoutE(gw.merchant, { card_number: '4111111111111112' }))).body).toMatchObject({
        status: 0,
        transaction_status: 'rejected',
      });
      expect((await post(payoutE(gw.merchant, { card_exp: '02/2021' }))).body).toMatchObject({ status: 0, transaction_status: 'rejected' });
    });

    it('names the missing or invalid field and stores nothing', async () => {
      const cases: [Record<string, unknown>, RegExp][] = [
        [without(payoutE(gw.merchant), 'gateway'), /^Missing required field: gateway$/],
        [without(payoutE(gw.merchant), 'card_number'), /^Missing required field: card_number$/],
        [payoutE(gw.merchant, { card_number: 'abc' }), /^Invalid field: card_number/],
        [payoutE(gw.merchant, { card_exp: '13/2030' }), /^Invalid field: card_exp/],
        [payoutE(gw.merchant, { amount: -5 }), /^Invalid field: amount/],
        [payoutE(gw.merchant, { version: '1.2' }), /^Invalid field: version/],
        [payoutE(gw.merchant, { transaction_type: 'payout2' }), /^Invalid field: transaction_type/],
      ];
      for (const [body, description] of cases) {
        const answer = await post(body);
        expect(answer.body.status, String(description)).toBe(10);
        expect(answer.body.description).toMatch(description);
        expect(await stored(body.order_id)).toBeNull();
      }
    });

    it('replays the same payout and refuses different content under the same order_id', async () => {
      const body = payoutE(gw.merchant);
      const first = await post(body);
      const again = await post({ ...body, timestamp: nowSeconds() + 1 });
      expect(again.body).toMatchObject({ status: 0, trace_id: first.body.trace_id, transaction_status: first.body.transaction_status });
      expect((await post({ ...body, card_exp: '11/2035' })).body).toMatchObject({ status: 12, description: 'Duplicate order_id' });
    });

    it('keeps payouts and sales apart: the same order_id may be a sale and a payout', async () => {
      const order_id = orderId('shared');
      const payout = await post(payoutE(gw.merchant, { order_id }));
      expect(payout.body).toMatchObject({ status: 0, transaction_status: 'approved' });
      const { saleB } = await import('../support/bodies.js');
      const sale = await post(saleB(gw.merchant, { order_id }));
      expect(sale.body).toMatchObject({ status: 0, transaction_status: 'approved' });
      expect(sale.body.trace_id).not.toBe(payout.body.trace_id);
    });
  });

  it('accepts a timestamp 59 s and 60 s off and refuses 61 s off, in both directions, for variants D and E', async () => {
    // The gateway's clock stands still for the test, so no second boundary can move the edge.
    await withStoppedClock(gw.gateway, async (now_s) => {
      for (const [variant, make] of [
        ['D', payoutD],
        ['E', payoutE],
      ] as const) {
        for (const offset of [-60, -59, 59, 60]) {
          const answer = await post(make(gw.merchant, { timestamp: now_s + offset }));
          expect(answer.body, `${variant} offset ${offset}`).toMatchObject({ status: 0, transaction_status: 'approved' });
        }
        for (const offset of [-61, 61]) {
          const body = make(gw.merchant, { timestamp: now_s + offset });
          const answer = await post(body);
          expect(answer.body, `${variant} offset ${offset}`).toMatchObject({ status: 1, description: 'Timestamp expired' });
          expect(await stored(body.order_id)).toBeNull();
        }
      }
    });
  });

  it('never writes the PAN of an encrypted or plain payout to the log', async () => {
    const pan = '4000056655665556';
    await post(payoutD(gw.merchant, {}, { card_number: pan, card_exp: '10/2033', cvv: '7391' }));
    await post(payoutD(gw.merchant, {}, { card_number: pan, card_exp: '10/2033' }, 'plain'));
    await post(payoutE(gw.merchant, { card_number: pan }));
    await gw.gateway.app.close(); // flushes the request logs
    await new Promise((resolve) => setTimeout(resolve, 200));
    const log = fs.readFileSync(gw.log_file, 'utf8');
    expect(log).toContain('signed request');
    expect(log).not.toContain(pan);
    expect(/(^|[^0-9A-Za-z+/])7391([^0-9A-Za-z+/]|$)/.test(log)).toBe(false);
  });
});
