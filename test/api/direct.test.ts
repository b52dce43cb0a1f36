// POST /api/direct: payouts to a bank account or the sandbox e-wallet, through the real HTTP
// server, on each store. The wallet page is driven here over HTTP; test/browser/wallet.test.ts
// drives it as a person would.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyBody } from '../../src/domain/signing.js';
import { orderId } from '../support/bodies.js';
import { nowSeconds, postJson, postSigned } from '../support/client.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../support/gateway.js';
import { direct, without } from '../support/payout-bodies.js';
import { storeKinds } from '../support/stores.js';

describe.each(storeKinds())('direct payout on %s', (kind) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(kind, { env: { PAYGATE_SANDBOX_SETTLE_SECONDS: '1' } });
  });
  afterAll(async () => {
    await gw?.close();
  });

  const post = (body: Record<string, unknown>) => postSigned(gw.url, '/api/direct', body, gw.merchant.secret);
  const stored = (order_id: unknown) => gw.gateway.deps.store.transactions.findByKey(gw.merchant.merchant_id, 'payout', order_id as string);
  const payloads = async (trace_id: number) =>
    (await gw.gateway.deps.store.notifications.listOfTransaction(trace_id)).map(
      (n) => JSON.parse(n.payload_json) as Record<string, unknown>,
    );

  async function waitForStatus(trace_id: number, status: string, timeout_ms = 10_000): Promise<void> {
    const deadline = Date.now() + timeout_ms;
    for (;;) {
      const row = await gw.gateway.deps.store.transactions.get(trace_id);
      if (row?.status === status) return;
      if (Date.now() > deadline) throw new Error(`trace ${trace_id} still ${row?.status}, expected ${status}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Posts the wallet page's form as the browser would. */
  async function walletAnswer(redirect_url: string, action: string): Promise<Response> {
    return fetch(redirect_url, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ action }).toString(),
    });
  }

  it('approves a bank payout, answers payout with payment_method and an integer error_code, and stores the data_ fields', async () => {
    const body = direct(gw.merchant, { variable1: 'v-one', variable2: 'v-two', variable3: 'v-three', data_reference: 'invoice 42' });
    const answer = await post(body);
    expect(answer.http_status).toBe(200);
    expect(answer.body).toMatchObject({
      status: 0,
      transaction_status: 'approved',
      transaction_type: 'payout',
      payment_method: 'bank',
      payment_processor: 'sandbox',
      error_code: 0,
      redirect_url: null,
      version: '1.2',
    });
    expect(answer.body.error_details).toMatch(/^\[TEST\]/);
    expect(verifyBody(answer.body, gw.merchant.secret)).toBe(true);
    const row = await stored(body.order_id);
    expect(row).toMatchObject({
      trace_id: answer.body.trace_id,
      transaction_type: 'payout',
      payment_method: 'bank',
      status: 'approved',
      currency: 'EUR',
    });
    expect(JSON.parse(row!.data_json!)).toEqual({
      data_account_number: 'DE89370400440532013000',
      data_bank_code: 'COBADEFF',
      data_reference: 'invoice 42',
    });
    expect(JSON.parse(row!.variables_json!)).toEqual({ variable1: 'v-one', variable2: 'v-two', variable3: 'v-three' });
    const [payload] = await payloads(row!.trace_id);
    expect(payload).toMatchObject({
      transaction_type: 'payout',
      transaction_status: 'approved',
      payment_method: 'bank',
      order_id: body.order_id,
      variable1: 'v-one',
      variable2: 'v-two',
      variable3: 'v-three',
    });
  });

  it('takes transaction_type sale as a payout: stored and answered as payout', async () => {
    const body = direct(gw.merchant, { transaction_type: 'sale' });
    const answer = await post(body);
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'approved', transaction_type: 'payout' });
    expect(await stored(body.order_id)).toMatchObject({ transaction_type: 'payout' });
    expect(await gw.gateway.deps.store.transactions.findByKey(gw.merchant.merchant_id, 'sale', body.order_id as string)).toBeNull();
  });

  it.each([
    [1400, 'rejected', 1],
    [1500, 'error', 1],
    [1313, 'pending', 0],
  ])('amount %s gives %s', async (amount, transaction_status, error_code) => {
    const answer = await post(direct(gw.merchant, { amount }));
    expect(answer.body).toMatchObject({ status: 0, transaction_status, error_code, payment_method: 'bank' });
  });

  it('settles amount 1313 as approved later and notifies it', async () => {
    const answer = await post(direct(gw.merchant, { amount: 1313, variable1: 'late' }));
    await waitForStatus(answer.body.trace_id as number, 'approved');
    const [payload] = await payloads(answer.body.trace_id as number);
    expect(payload).toMatchObject({ transaction_status: 'approved', variable1: 'late' });
  });

  it('names a missing or too-long data_account_number, and other bad data_ fields, storing nothing', async () => {
    const cases: [Record<string, unknown>, string | RegExp][] = [
      [without(direct(gw.merchant), 'data_account_number'), 'Missing required field: data_account_number'],
      [direct(gw.merchant, { data_account_number: '' }), 'Missing required field: data_account_number'],
      [direct(gw.merchant, { data_account_number: 'A'.repeat(35) }), /^Invalid field: data_account_number \(expected .*34 characters\)$/],
      [direct(gw.merchant, { data_bank_code: 'COBA-DE-FF' }), /^Invalid field: data_bank_code \(expected /],
      [direct(gw.merchant, { data_bank_code: 'B'.repeat(12) }), /^Invalid field: data_bank_code \(expected /],
      [direct(gw.merchant, { data_method: 'crypto' }), 'Invalid field: data_method (expected bank or ewallet)'],
      [direct(gw.merchant, { data_Account: 'x' }), /^Invalid field: data_Account \(expected a name of data_/],
      [direct(gw.merchant, { [`data_${'x'.repeat(40)}`]: 'x' }), /^Invalid field: data_x+\.\.\. \(expected a name of data_/],
      [direct(gw.merchant, { data_note: 'n'.repeat(257) }), 'Invalid field: data_note (expected text of up to 256 characters)'],
      [direct(gw.merchant, { data_note: 12 }), 'Invalid field: data_note (expected text of up to 256 characters)'],
      [direct(gw.merchant, { data_note: 'line\nbreak' }), 'Invalid field: data_note (control characters are not allowed)'],
      [
        direct(gw.merchant, Object.fromEntries(Array.from({ length: 19 }, (_, i) => [`data_extra_${i}`, 'x']))),
        'Too many data_ fields: at most 20 are accepted',
      ],
      [direct(gw.merchant, { gateway: 'g'.repeat(33) }), /^Invalid field: gateway/],
      [without(direct(gw.merchant), 'pin'), 'Missing required field: pin'],
      [direct(gw.merchant, { transaction_type: 'refund' }), /^Invalid field: transaction_type \(expected payout or sale/],
      [direct(gw.merchant, { version: '1.1' }), /^Invalid field: version/],
      [direct(gw.merchant, { variable1: 'v'.repeat(257) }), /^Invalid field: variable1/],
    ];
    for (const [body, description] of cases) {
      const answer = await post(body);
      expect(answer.http_status).toBe(200);
      expect(answer.body.status, String(description)).toBe(10);
      if (typeof description === 'string') expect(answer.body.description).toBe(description);
      else expect(answer.body.description).toMatch(description);
      expect(answer.body.trace_id).toBeUndefined();
      expect(await stored(body.order_id)).toBeNull();
    }
  });

  it("without `gateway` a direct payout goes where the routing picks (decisions §17): here the merchant's one gateway", async () => {
    const answer = await post(without(direct(gw.merchant), 'gateway'));
    expect(answer.body).toMatchObject({ status: 0 });
    expect((await gw.gateway.deps.store.transactions.get(answer.body.trace_id as number))!.gateway_id).toBe(gw.merchant.gateway);
  });

  it('accepts exactly 20 data_ fields and the limits of account number and value length', async () => {
    const extras = Object.fromEntries(Array.from({ length: 18 }, (_, i) => [`data_extra_${i}`, 'v'.repeat(256)]));
    const answer = await post(direct(gw.merchant, { ...extras, data_account_number: 'A'.repeat(34) }));
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'approved' });
  });

  it("refuses a gateway that is not the merchant's", async () => {
    const other = await gw.createMerchant();
    const answer = await post(direct(gw.merchant, { gateway: other.gateway }));
    expect(answer.body.status).toBe(15);
    expect(answer.body.description).toMatch(/Gateway unavailable/);
  });

  it('replays the same payout (sale or payout alike) and refuses different content', async () => {
    const body = direct(gw.merchant);
    const first = await post(body);
    const again = await post({ ...body, transaction_type: 'sale', timestamp: nowSeconds() + 1 });
    expect(again.body).toMatchObject({
      status: 0,
      trace_id: first.body.trace_id,
      transaction_status: 'approved',
      payment_method: 'bank',
      error_code: 0,
      transaction_type: 'payout',
    });
    const changed = await post({ ...body, data_account_number: 'GB29NWBK60161331926819' });
    expect(changed.body).toMatchObject({ status: 12, description: 'Duplicate order_id' });
    expect(await payloads(first.body.trace_id as number)).toHaveLength(1);
  });

  it('gives 10 concurrent identical payouts one trace_id', async () => {
    const body = direct(gw.merchant, { order_id: orderId('concurrent') });
    const answers = await Promise.all(Array.from({ length: 10 }, () => post(body)));
    expect(answers.every((a) => a.body.status === 0)).toBe(true);
    expect(new Set(answers.map((a) => a.body.trace_id)).size).toBe(1);
  });

  describe('sandbox e-wallet', () => {
    it('answers pending_async with a redirect_url to the wallet page; Confirm approves and redirects to return_url', async () => {
      const body = direct(gw.merchant, { data_method: 'ewallet', data_account_number: 'wallet-jane-0042', variable1: 'w1' });
      const answer = await post(body);
      expect(answer.body).toMatchObject({ status: 0, transaction_status: 'pending_async', payment_method: 'ewallet', error_code: 0 });
      const redirect_url = answer.body.redirect_url as string;
      expect(redirect_url).toMatch(new RegExp(`^${gw.url}/sandbox/wallet/[A-Za-z0-9_-]{20,}$`));
      const page = await fetch(redirect_url);
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).toContain('>Confirm</button>');
      expect(html).toContain('>Cancel</button>');
      expect(html).toContain('************0042');
      expect(html).not.toContain('wallet-jane-0042');
      expect(html).not.toMatch(/<script/i);
      const confirmed = await walletAnswer(redirect_url, 'confirm');
      expect(confirmed.status).toBe(303);
      expect(confirmed.headers.get('location')).toBe(body.return_url);
      const row = await stored(body.order_id);
      expect(row).toMatchObject({ status: 'approved', error_code: '0' });
      const notified = await payloads(row!.trace_id);
      expect(notified.map((p) => p.transaction_status)).toEqual(['pending_async', 'approved']);
      expect(notified[1]).toMatchObject({ payment_method: 'ewallet', variable1: 'w1' });
      // A second click changes nothing; the page now says it is closed.
      expect((await walletAnswer(redirect_url, 'cancel')).status).toBe(303);
      expect(await stored(body.order_id)).toMatchObject({ status: 'approved' });
      expect(await (await fetch(redirect_url)).text()).toContain('approved');
      // A replay repeats the original answer.
      const replay = await post({ ...body, timestamp: nowSeconds() + 1 });
      expect(replay.body).toMatchObject({ trace_id: answer.body.trace_id, transaction_status: 'pending_async', redirect_url });
    });

    it('Cancel cancels the payout', async () => {
      const body = direct(gw.merchant, { data_method: 'ewallet' });
      const answer = await post(body);
      const cancelled = await walletAnswer(answer.body.redirect_url as string, 'cancel');
      expect(cancelled.status).toBe(303);
      expect(await stored(body.order_id)).toMatchObject({ status: 'cancelled', error_code: '1' });
      expect((await payloads(answer.body.trace_id as number)).map((p) => p.transaction_status)).toEqual(['pending_async', 'cancelled']);
    });

    it('amounts 1400 and 1500 fail at once, without a wallet page', async () => {
      expect((await post(direct(gw.merchant, { data_method: 'ewallet', amount: 1400 }))).body).toMatchObject({
        transaction_status: 'rejected',
        redirect_url: null,
      });
      expect((await post(direct(gw.merchant, { data_method: 'ewallet', amount: 1500 }))).body).toMatchObject({
        transaction_status: 'error',
        redirect_url: null,
      });
    });

    it('a wallet token opens no 3-D Secure page, an unknown token no wallet page, a bad action changes nothing', async () => {
      const answer = await post(direct(gw.merchant, { data_method: 'ewallet' }));
      const redirect_url = answer.body.redirect_url as string;
      const token = redirect_url.split('/').pop()!;
      expect((await fetch(`${gw.url}/sandbox/3ds/${token}`)).status).toBe(404);
      expect(
        (
          await fetch(`${gw.url}/sandbox/3ds/${token}`, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: 'action=approve',
          })
        ).status,
      ).toBe(404);
      expect((await fetch(`${gw.url}/sandbox/wallet/unknown-token-123456`)).status).toBe(404);
      expect((await walletAnswer(redirect_url, 'approve')).status).toBe(400);
      expect(await gw.gateway.deps.store.transactions.get(answer.body.trace_id as number)).toMatchObject({ status: 'pending_async' });
    });

    // Last: moves the gateway's clock 15 minutes on.
    it('rejects an unanswered wallet payout after 15 minutes and closes the page', async () => {
      const answer = await post(direct(gw.merchant, { data_method: 'ewallet' }));
      const trace_id = answer.body.trace_id as number;
      const moved = await postJson(gw.url, '/sandbox/clock', { advance_seconds: 15 * 60 }, { authorization: `Bearer ${ADMIN_TOKEN}` });
      expect(moved.http_status).toBe(200);
      await waitForStatus(trace_id, 'rejected');
      expect(await gw.gateway.deps.store.transactions.get(trace_id)).toMatchObject({ error_details: '[TEST] Transaction timed out' });
      const redirect_url = answer.body.redirect_url as string;
      const page = await (await fetch(redirect_url)).text();
      expect(page).not.toContain('>Confirm</button>');
      await walletAnswer(redirect_url, 'confirm');
      expect(await gw.gateway.deps.store.transactions.get(trace_id)).toMatchObject({ status: 'rejected' });
    });
  });

  // Last: closes the app to flush its log.
  it('keeps account numbers and wallet tokens out of the log', async () => {
    await gw.gateway.app.close();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const log = fs.readFileSync(gw.log_file, 'utf8');
    expect(log).toContain('signed request');
    expect(log).not.toContain('DE89370400440532013000');
    expect(log).not.toContain('wallet-jane-0042');
    expect(log).not.toMatch(/\/sandbox\/wallet\/[A-Za-z0-9_-]{20,}/);
  });
});
