// After a run of card traffic (sales, a refund, a 3-D Secure challenge, tokenize, card payouts of
// variants D and E, a payout held for approval and then released, a direct payout), no full PAN,
// no CVV and no merchant secret in clear is found anywhere the gateway wrote: its log file, the
// SQLite files (database and WAL), or any PostgreSQL table, the request log's rows among them.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../../src/domain/merchants.js';
import { postJson, postSigned, signed } from '../support/client.js';
import { refundC, saleA } from '../support/bodies.js';
import { storedText, tableRows } from '../support/database-scan.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../support/gateway.js';
import { direct, payoutD, payoutE } from '../support/payout-bodies.js';
import { storeKinds } from '../support/stores.js';

const PAN = '4000056655665556';
const CVV = '7391'; // distinctive and not a sandbox outcome code: approves
const CHALLENGE_CVV = '333';
const ACCOUNT = 'DE02120300000000202051';

function containsCvv(text: string, cvv: string): boolean {
  return new RegExp(`(^|[^0-9A-Za-z+/])${cvv}([^0-9A-Za-z+/]|$)`).test(text);
}

describe.each(storeKinds())('no card data or secrets at rest or in logs on %s', (kind) => {
  let gw: TestGateway;
  /** A merchant whose gateway holds payouts for approval. */
  let holder: CreatedMerchant;
  let challenge_token = '';
  const held_trace_ids: number[] = [];
  beforeAll(async () => {
    gw = await startTestGateway(kind);
    holder = await gw.createMerchant();
    const post = (path_: string, body: Record<string, unknown>, merchant = gw.merchant) => postSigned(gw.url, path_, body, merchant.secret);
    const approved = (answer: { body: Record<string, unknown> }, status = 'approved') => {
      expect(answer.body, JSON.stringify(answer.body)).toMatchObject({ status: 0, transaction_status: status });
    };
    const operator = (path_: string, body: Record<string, unknown>) =>
      fetch(`${gw.url}${path_}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_TOKEN}` },
        body: JSON.stringify(body),
      });

    // Sales, a refund, a rejected sale, a 3-D Secure challenge, tokenize.
    const sale = await post('/api/process', saleA(gw.merchant, { card_number: PAN, cvv: CVV }));
    approved(sale);
    approved(await post('/api/process', refundC(gw.merchant, sale.body.trace_id, { card_number: PAN })));
    approved(await post('/api/process', saleA(gw.merchant, { card_number: PAN, cvv: '000' })), 'rejected');
    const challenge = await post('/api/process', saleA(gw.merchant, { card_number: PAN, cvv: CHALLENGE_CVV }));
    challenge_token = String(challenge.body.redirect_url).split('/').pop()!;
    await fetch(String(challenge.body.redirect_url));
    expect(
      (
        await post('/api/tokenize', {
          merchant_id: gw.merchant.merchant_id,
          application_key: gw.merchant.application_key,
          pin: 'cust-9',
          card_number: PAN,
          card_exp: '10/2033',
          timestamp: Math.floor(Date.now() / 1000),
          version: '1.2',
        })
      ).body.status,
    ).toBe(0);
    // Card payouts: variant D (encrypted, CVV included, under both sets of names) and E (plain, with a CVV).
    const card = { card_number: PAN, card_exp: '10/2033', cvv: CVV };
    approved(await post('/api/process', payoutD(gw.merchant, {}, card)));
    approved(await post('/api/process', payoutD(gw.merchant, {}, card, 'plain')));
    approved(await post('/api/process', payoutE(gw.merchant, { card_number: PAN, card_exp: '10/2033', cvv: CVV })));
    // Payouts held for approval: the card waits in the vault; one is released and paid, one stays held.
    expect((await operator(`/operator/gateways/${holder.gateway}`, { hold_payouts: true })).status).toBe(200);
    for (const make of [() => payoutD(holder, {}, card), () => payoutE(holder, { card_number: PAN, card_exp: '10/2033', cvv: CVV })]) {
      const held = await post('/api/process', make(), holder);
      approved(held, 'requested');
      held_trace_ids.push(held.body.trace_id as number);
    }
    const released = await operator(`/operator/payouts/${held_trace_ids[0]!}/approve`, {});
    expect(await released.json()).toMatchObject({ status: 0, transaction_status: 'approved' });
    // A direct payout to a bank account.
    approved(await post('/api/direct', direct(gw.merchant, { data_account_number: ACCOUNT })));
    // A bad-signature request with card data must not reach the log either.
    await postJson(gw.url, '/api/process', signed(saleA(gw.merchant, { card_number: PAN, cvv: CVV }), 'wrong-secret'));
    await postJson(gw.url, '/api/process', signed(payoutE(gw.merchant, { card_number: PAN, cvv: CVV }), 'wrong-secret'));
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('ran every kind of traffic the scan is about', async () => {
    const payouts = await tableRows(gw, 'transactions', { transaction_type: 'payout' });
    const statuses = payouts.map((row) => `${String(row.payment_method)}:${String(row.status)}`).sort();
    expect(statuses).toEqual(
      ['bank:approved', 'card:approved', 'card:approved', 'card:approved', 'card:approved', 'card:requested'].sort(),
    );
    // The payout still held keeps its card in the vault, sealed.
    const held = await gw.gateway.deps.store.transactions.get(held_trace_ids[1]!);
    expect(held).toMatchObject({ status: 'requested', card_masked: '400005******5556' });
  });

  it('keeps PAN, CVV, secrets, signatures and tokens out of the log', async () => {
    await gw.gateway.app.close(); // flushes the request logs
    await new Promise((resolve) => setTimeout(resolve, 200));
    const log = fs.readFileSync(gw.log_file, 'utf8');
    expect(log).toContain('signed request'); // the bodies were logged, redacted
    expect(log).toContain('[redacted]');
    expect(log).toContain('"transaction_type":"payout"'); // payout bodies among them
    expect(log).not.toContain(PAN);
    expect(containsCvv(log, CVV)).toBe(false);
    expect(log).not.toContain(challenge_token);
    expect(log).not.toContain(gw.merchant.secret);
    expect(log).not.toContain(holder.secret);
    expect(log).not.toContain(ADMIN_TOKEN);
    expect(log).not.toContain(ACCOUNT);
    expect(log).not.toMatch(/"signature":"[0-9a-f]{96}"/);
    // Under any name and at any depth, a CVV or a ciphertext is logged only as [redacted].
    expect(log).not.toMatch(/"(cvv|cvv_encrypted|card_number_encrypted|card_exp_encrypted)":"(?!\[redacted\])/);
  });

  it('keeps PAN, CVV and merchant secrets out of the database', async () => {
    // The request log (issue 28) holds every request above, masked: written before the scan.
    await gw.gateway.deps.request_log.flush();
    const logged = JSON.stringify(await tableRows(gw, 'request_log'));
    expect(logged).toContain('400005******5556');
    expect(logged).toContain('"transaction_type\\":\\"payout');
    expect(logged).not.toContain(challenge_token);
    expect(logged).not.toContain(ACCOUNT);
    expect(logged).not.toContain(ADMIN_TOKEN);
    const stored = await storedText(gw);
    expect(stored.length).toBeGreaterThan(0);
    expect(stored).toContain('400005******5556'); // the masked form is there
    expect(stored).not.toContain(PAN);
    expect(containsCvv(stored, CVV)).toBe(false);
    expect(stored).not.toMatch(/"cvv"/);
    expect(stored).not.toContain(gw.merchant.secret);
    expect(stored).not.toContain(holder.secret);
    // The secrets are kept sealed: the merchant rows hold something, just not the secret.
    for (const merchant of [gw.merchant, holder]) {
      const [row] = await tableRows(gw, 'merchants', { merchant_id: merchant.merchant_id });
      expect(JSON.stringify(row)).not.toContain(merchant.secret);
      expect(String(row!.secret_sealed).length).toBeGreaterThan(merchant.secret.length);
    }
  });
});
