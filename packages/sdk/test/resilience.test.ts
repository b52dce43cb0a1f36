// What the SDK does when the way to the gateway fails, the clock is off, or an answer cannot be
// trusted. A TCP proxy between the client and a real gateway breaks connections as planned: refused,
// cut after the gateway processed the request, held past the time-out, reset on a reused
// connection, an answer changed on the way. Retries must give one transaction (the gateway's
// idempotency on order_id), never retry a call that is not idempotent once it may have arrived, and
// an answer that does not verify must never come back as an answer.
import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import {
  AnswerSignatureError,
  ClockSkewError,
  GatewayHttpError,
  GatewayUnreachableError,
  type PaygateClient,
  type RetryNotice,
  UnexpectedAnswerError,
} from '@paygate/sdk';
import { freePort } from '../../../test/support/child-gateway.js';
import type { TestGateway } from '../../../test/support/gateway.js';
import { clientFor, type FlakyProxy, saleFields, startFlakyProxy, withGateway } from './support.js';

describe('SDK when things go wrong', () => {
  let gw: TestGateway;
  withGateway((started) => (gw = started));
  const opened: { proxies: FlakyProxy[]; clients: PaygateClient[] } = { proxies: [], clients: [] };
  afterEach(async () => {
    for (const client of opened.clients.splice(0)) client.close();
    await Promise.all(opened.proxies.splice(0).map((proxy) => proxy.close()));
  });

  async function proxied(
    options: Parameters<typeof clientFor>[2] = {},
  ): Promise<{ proxy: FlakyProxy; client: PaygateClient; retries: RetryNotice[] }> {
    const proxy = await startFlakyProxy(gw.url);
    const retries: RetryNotice[] = [];
    const client = clientFor(proxy, gw.merchant, { on_retry: (notice) => retries.push(notice), ...options });
    opened.proxies.push(proxy);
    opened.clients.push(client);
    return { proxy, client, retries };
  }

  describe('retries', () => {
    it('connection refused: retried until the gateway is there, then answered', async () => {
      const port = await freePort();
      const retries: RetryNotice[] = [];
      const client = clientFor({ url: `http://127.0.0.1:${port}` }, gw.merchant, {
        retry_backoff_ms: 300,
        on_retry: (notice) => {
          retries.push(notice);
          // The gateway comes up (behind a proxy on that port) while the client waits.
          if (retries.length === 1) void startFlakyProxy(gw.url, port).then((proxy) => opened.proxies.push(proxy));
        },
      });
      opened.clients.push(client);
      const outcome = await client.sale(saleFields());
      expect(outcome).toMatchObject({ kind: 'ok', answer: { transaction_status: 'approved' } });
      expect(retries[0]).toMatchObject({ attempt: 1, reason: 'connection_refused' });
    });

    it('connection refused every time: GatewayUnreachableError after 1 + retries attempts, nothing processed', async () => {
      const port = await freePort();
      const client = clientFor({ url: `http://127.0.0.1:${port}` }, gw.merchant, { retries: 3 });
      opened.clients.push(client);
      const error = await client
        .createPlan({ name: 'Never', prices: [{ amount: 100, currency: 'USD' }], billing_cycle: 'monthly' })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(GatewayUnreachableError);
      expect(error).toMatchObject({ reason: 'connection_refused', attempts: 4, maybe_processed: false });
    });

    it('cut off after the gateway processed the sale: sent again with the same order_id, one transaction, the same answer', async () => {
      const { proxy, client, retries } = await proxied();
      proxy.plan('reset_after_forwarding');
      const fields = saleFields();
      const outcome = await client.sale(fields);
      if (outcome.kind !== 'ok') throw new Error(JSON.stringify(outcome));
      expect(retries).toEqual([expect.objectContaining({ attempt: 1, reason: 'connection_reset' })]);
      // Both attempts reached the gateway; its idempotency (merchant, sale, order_id) made one transaction.
      expect(proxy.forwarded()).toBe(2);
      const stored = await gw.gateway.deps.store.transactions.findByKey(gw.merchant.merchant_id, 'sale', fields.order_id);
      expect(stored?.trace_id).toBe(outcome.answer.trace_id);
      expect(stored?.status).toBe('approved');
    });

    it('no answer within timeout_ms: the attempt is abandoned and sent again; the encrypted payout too (new timestamp, new ciphertext, same payout)', async () => {
      const { proxy, client, retries } = await proxied({ timeout_ms: 400 });
      proxy.plan('hold_answer');
      const started = performance.now();
      const sale = await client.sale(saleFields());
      expect(sale.kind).toBe('ok');
      expect(performance.now() - started).toBeGreaterThanOrEqual(400);
      expect(retries[0]).toMatchObject({ reason: 'timeout' });
      proxy.plan('hold_answer');
      const order_id = `payout-${Date.now()}`;
      const payout = await client.payout({
        order_id,
        amount: 900,
        currency: 'USD',
        card_number: '4111111111111111',
        card_exp: '12/2035',
        gateway: gw.merchant.gateway!,
        pin: 'cust-42',
        dob: '1990-04-12',
        email: 'jane@example.com',
        phone: 441234567890,
        requester_ip: '203.0.113.7',
        address: '1 Main Street',
        city: 'London',
        country: 'GB',
        first_name: 'Jane',
        last_name: 'Doe',
        zip: 'SW1A 1AA',
        state: 'LN',
        return_url: 'https://shop.example/return',
        notification_url: 'https://shop.example/notify',
      });
      if (payout.kind !== 'ok') throw new Error(JSON.stringify(payout));
      const stored = await gw.gateway.deps.store.transactions.findByKey(gw.merchant.merchant_id, 'payout', order_id);
      expect(stored?.trace_id).toBe(payout.answer.trace_id);
    });

    it("no answer ever: GatewayUnreachableError (timeout, may have been processed) within the attempts' time", async () => {
      const { proxy, client } = await proxied({ timeout_ms: 300, retries: 2 });
      proxy.plan('hold_answer', 'hold_answer', 'hold_answer');
      const started = performance.now();
      const error = await client.sale(saleFields()).catch((e: unknown) => e);
      expect(error).toMatchObject({ name: 'GatewayUnreachableError', reason: 'timeout', attempts: 3, maybe_processed: true });
      expect(performance.now() - started).toBeLessThan(3 * 300 + 2_000);
    });

    it('a call that is not idempotent (plan create) is not sent again once it may have arrived', async () => {
      const { proxy, client, retries } = await proxied();
      proxy.plan('reset_after_forwarding');
      const name = `Once ${Date.now()}`;
      const error = await client
        .createPlan({ name, prices: [{ amount: 100, currency: 'USD' }], billing_cycle: 'monthly' })
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ name: 'GatewayUnreachableError', reason: 'connection_reset', attempts: 1, maybe_processed: true });
      expect(retries).toEqual([]);
      // It did arrive: the plan exists once, which a blind retry would have made twice.
      const plans = await client.listPlans({ page_size: 100 });
      if (plans.kind !== 'ok') throw new Error(JSON.stringify(plans));
      expect(plans.answer.plans.filter((plan) => plan.name === name)).toHaveLength(1);
    });

    it('a kept-alive connection reset when reused is retried at once on a new one, even for a call that is not idempotent', async () => {
      const { proxy, client, retries } = await proxied({ retries: 0 });
      proxy.plan('reset_when_reused');
      expect((await client.sale(saleFields())).kind).toBe('ok');
      const name = `Stale ${Date.now()}`;
      const created = await client.createPlan({ name, prices: [{ amount: 100, currency: 'USD' }], billing_cycle: 'monthly' });
      expect(created.kind).toBe('ok');
      expect(retries).toEqual([{ attempt: 1, reason: 'connection_reset', wait_ms: 0 }]);
      expect(proxy.connections()).toBe(2);
    });
  });

  describe('the clock', () => {
    it("a clock 2 minutes behind: ClockSkewError saying by how much, measured on the gateway's answer", async () => {
      const client = clientFor(gw, gw.merchant, { now_ms: () => Date.now() - 120_000 });
      opened.clients.push(client);
      const error = await client.sale(saleFields()).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ClockSkewError);
      expect((error as ClockSkewError).skew_s).toBeGreaterThanOrEqual(-122);
      expect((error as ClockSkewError).skew_s).toBeLessThanOrEqual(-118);
      expect((error as Error).message).toMatch(/this machine's clock is 1(19|20|21) s behind the gateway's/);
    });

    it('5 minutes ahead, on a v1.3 call as well', async () => {
      const client = clientFor(gw, gw.merchant, { now_ms: () => Date.now() + 300_000 });
      opened.clients.push(client);
      const error = await client.listPlans().catch((e: unknown) => e);
      expect(error).toMatchObject({ name: 'ClockSkewError', description: 'Timestamp expired' });
      expect(Math.abs((error as ClockSkewError).skew_s - 300)).toBeLessThanOrEqual(2);
    });
  });

  describe('answers that cannot be trusted', () => {
    it('an answer changed on the way (approved made rejected) is an AnswerSignatureError, never an answer', async () => {
      const { proxy, client } = await proxied();
      proxy.tamper = (answer) => answer.replace('"approved"', '"rejected"');
      proxy.plan('tamper');
      const error = await client.sale(saleFields()).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AnswerSignatureError);
      expect(error).toMatchObject({ unverified_status: 0 });
    });

    it('a v1.3 answer whose status was changed does not verify against its Gt-Authentication header', async () => {
      const { proxy, client } = await proxied();
      proxy.tamper = (answer) => answer.replace('"status":30', '"status":0');
      proxy.plan('tamper');
      await expect(client.getPlan('plan_unknown')).rejects.toBeInstanceOf(AnswerSignatureError);
    });

    it("the wrong secret: the gateway's answer (status 2, signed with the real one) does not verify", async () => {
      const client = clientFor(gw, { ...gw.merchant, secret: 'not-the-secret' });
      opened.clients.push(client);
      const error = await client.sale(saleFields()).catch((e: unknown) => e);
      expect(error).toMatchObject({ name: 'AnswerSignatureError', unverified_status: 2 });
      expect((error as Error).message).toMatch(/secret is wrong/);
      await expect(client.getPlan('plan_x')).rejects.toThrow(/Gt-Authentication header does not verify/);
    });

    it('an unknown merchant gets an unsigned answer: AnswerSignatureError naming merchant_id', async () => {
      const client = clientFor(gw, { ...gw.merchant, merchant_id: 'nobody-here' });
      opened.clients.push(client);
      const error = await client.sale(saleFields()).catch((e: unknown) => e);
      expect(error).toMatchObject({ name: 'AnswerSignatureError', unverified_status: 11 });
      expect((error as Error).message).toMatch(/not signed .*check merchant_id/);
    });

    it('an HTTP error answer (a body over 64 KiB: 413) is a GatewayHttpError, not retried', async () => {
      const { proxy, client, retries } = await proxied();
      const error = await client.sale(saleFields({ variable1: 'x'.repeat(70_000) })).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(GatewayHttpError);
      expect(error).toMatchObject({ http_status: 413, status: 22 });
      expect(retries).toEqual([]);
      expect(proxy.forwarded()).toBe(1);
    });

    it('an answer over max_answer_bytes, or not JSON, is an UnexpectedAnswerError', async () => {
      const { proxy, client } = await proxied({ max_answer_bytes: 2048 });
      proxy.tamper = (answer) => answer + ' '.repeat(4096);
      proxy.plan('tamper');
      await expect(client.sale(saleFields())).rejects.toBeInstanceOf(UnexpectedAnswerError);
      proxy.tamper = () => 'Service temporarily unavailable';
      proxy.plan('tamper');
      await expect(client.sale(saleFields())).rejects.toThrow(/not a JSON object/);
    });
  });
});
