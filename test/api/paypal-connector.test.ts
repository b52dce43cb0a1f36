// The `paypal` connector called directly (no gateway) over real HTTP against the fake PayPal on
// 127.0.0.1: the access token fetched once and renewed, a deposit created, approved at the fake
// and captured on the buyer's return (cancelled when they cancel), refunds, payouts (SUCCESS,
// RETURNED, UNCLAIMED then claimed), webhooks verified by the verify call (a forged one refused),
// and failures (time-out, 5xx, reset, garbage) that end in `unknown` or a retry, never a second
// capture. The fake checks every message against PayPal's descriptions: fake.violations stays empty.
import http from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectorOptions, loadConfig } from '../../src/config.js';
import type { Connector, LookupRequest, ReturnRequest, WalletDepositRequest, WebhookReading } from '../../src/connectors/connector.js';
import { paypalDefinition } from '../../src/connectors/paypal/connector.js';
import { AdjustableClock } from '../../src/domain/clock.js';
import { ProcessorHttp } from '../../src/outbound/processor-http.js';
import { type FakePayPal, startFakePayPal } from '../support/paypal/fake.js';

const GATEWAY_ID = 'p'.repeat(32);
const TIMEOUT_MS = 1500;

let fake: FakePayPal;
let connector: Connector;
let clock: AdjustableClock;
let receiver: http.Server;
let receiver_url = '';
/** What the connector made of each webhook the fake delivered. */
const readings: WebhookReading[] = [];
const logged: string[] = [];
let seq = 0;

function make(base_url: string, webhook_id = fake.webhook_id): Connector {
  clock = new AdjustableClock();
  return paypalDefinition.create(
    { client_id: fake.client_id, client_secret: fake.client_secret, webhook_id, base_url },
    {
      options: connectorOptions(loadConfig({})),
      clock,
      public_url: () => 'https://pay.example.com',
      http: new ProcessorHttp({ timeout_ms: TIMEOUT_MS, connect_timeout_ms: 500, max_reply_bytes: 256 * 1024, allow_private: true }),
    },
    GATEWAY_ID,
  );
}

function deposit(amount_minor = 1250): WalletDepositRequest {
  seq += 1;
  return {
    trace_id: 9000 + seq,
    reference: `PP-${seq}-${Date.now()}`,
    amount_minor,
    currency: 'EUR',
    wallet_id: '',
    return_to: { success_url: `${receiver_url}/back?outcome=success`, failure_url: `${receiver_url}/back?outcome=failure` },
  };
}

function returnOf(request: WalletDepositRequest, order_id: string, outcome: 'success' | 'failure'): ReturnRequest {
  return {
    trace_id: request.trace_id,
    reference: request.reference,
    transaction_type: 'sale',
    psp_transaction_id: order_id,
    sale_psp_transaction_id: null,
    amount_minor: request.amount_minor,
    currency: request.currency,
    outcome,
    params: { token: order_id },
    idempotency_key: `capture-${GATEWAY_ID}-${request.trace_id}`,
  };
}

async function created(request = deposit()): Promise<string> {
  const result = await connector.walletDeposit!(request);
  expect(result).toMatchObject({ kind: 'redirect', redirect_url: expect.stringContaining('/checkoutnow?token=') });
  return result.kind === 'redirect' ? result.psp_transaction_id : '';
}

/** Approves through the approval page as a browser would: GET the page, POST its Approve form. */
async function approveInPage(order_id: string): Promise<string> {
  const page = await fetch(`${fake.url}/checkoutnow?token=${order_id}`);
  expect(await page.text()).toContain('id="approve"');
  const answer = await fetch(`${fake.url}/checkoutnow/approve?token=${order_id}`, { method: 'POST', redirect: 'manual' });
  expect(answer.status).toBe(303);
  return answer.headers.get('location') ?? '';
}

async function approvedDeposit(amount_minor = 1250): Promise<{ request: WalletDepositRequest; order_id: string }> {
  const request = deposit(amount_minor);
  const order_id = await created(request);
  await approveInPage(order_id);
  expect(await connector.completeReturn!(returnOf(request, order_id, 'success'))).toMatchObject({
    kind: 'approved',
    psp_transaction_id: order_id,
    charge_amount_minor: amount_minor,
  });
  return { request, order_id };
}

beforeAll(async () => {
  fake = await startFakePayPal();
  receiver = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      void Promise.resolve(connector.readWebhook!(Buffer.concat(chunks), request.headers as Record<string, string>)).then((reading) => {
        readings.push(reading);
        response.writeHead(reading.kind === 'bad_signature' ? 401 : 200).end();
      });
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiver_url = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
  fake.setWebhookEndpoint(`${receiver_url}/webhooks/paypal`);
  connector = make(fake.url);
  // Everything the connector's process writes to its console is kept, to look for secrets in it.
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream);
    stream.write = ((chunk: unknown, ...rest: unknown[]) => {
      logged.push(String(chunk));
      return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof stream.write;
  }
});

afterEach(() => {
  const found = [...fake.violations];
  fake.clearViolations();
  expect(found).toEqual([]);
});

afterAll(async () => {
  await fake?.close();
  await new Promise((resolve) => receiver?.close(resolve));
});

describe('paypal connector against the fake PayPal', () => {
  it('fetches one access token for many calls, renews it before it expires and once more on a 401', async () => {
    connector = make(fake.url);
    const before = fake.tokens_issued;
    await created();
    await created();
    expect(fake.tokens_issued - before).toBe(1);
    clock.set_offset_ms(9 * 3_600_000);
    await created();
    expect(fake.tokens_issued - before).toBe(2);
    fake.expireTokens();
    await created();
    expect(fake.tokens_issued - before).toBe(3);
    for (const r of fake.requestsTo('token')) expect(r.body).toBe('grant_type=client_credentials');
  });

  it('a deposit approved by the buyer is captured on their return, once, however often they come back', async () => {
    const { request, order_id } = await approvedDeposit();
    expect(fake.order(order_id)).toMatchObject({ status: 'COMPLETED', custom_id: `paygate-${request.trace_id}` });
    expect(await connector.completeReturn!(returnOf(request, order_id, 'success'))).toMatchObject({ kind: 'approved' });
    expect(fake.order(order_id)!.captures).toHaveLength(1);
    const lookup = await connector.lookup({ ...returnOf(request, order_id, 'success') } as LookupRequest);
    expect(lookup).toMatchObject({ kind: 'found', result: { kind: 'approved', psp_transaction_id: order_id } });
    await fake.waitForEvent((e) => e.type === 'PAYMENT.CAPTURE.COMPLETED' && e.body.includes(order_id));
  });

  it('the approval page sends the buyer to return_url, and Cancel to cancel_url; a cancelled order is cancelled', async () => {
    const request = deposit();
    const order_id = await created(request);
    const cancel = await fetch(`${fake.url}/checkoutnow/cancel?token=${order_id}`, { method: 'POST', redirect: 'manual' });
    expect(cancel.headers.get('location')).toContain('/back?outcome=failure');
    expect(await connector.completeReturn!(returnOf(request, order_id, 'failure'))).toMatchObject({
      kind: 'cancelled',
      psp_transaction_id: order_id,
    });
    expect(fake.order(order_id)!.captures).toHaveLength(0);
    // Back by the success URL without approving: still pending, nothing captured.
    expect(await connector.completeReturn!(returnOf(request, order_id, 'success'))).toMatchObject({ kind: 'pending' });
    const other = await created();
    expect(await approveInPage(other)).toMatch(/\/back\?outcome=success&token=.+&PayerID=/);
  });

  it('refunds a captured deposit; a refund made in the dashboard becomes a refunded payment event', async () => {
    const { request, order_id } = await approvedDeposit(2000);
    const refund = {
      trace_id: request.trace_id + 500,
      reference: request.reference,
      sale_psp_transaction_id: order_id,
      sale_trace_id: request.trace_id,
      amount_minor: 500,
      currency: 'EUR',
    };
    const result = await connector.refund(refund);
    expect(result).toMatchObject({ kind: 'approved', charge_amount_minor: 500 });
    // The same refund asked again (PayPal-Request-Id) is the same refund.
    expect(await connector.refund(refund)).toMatchObject({ kind: 'approved', psp_transaction_id: result.psp_transaction_id });
    expect(fake.refunds.filter((r) => r.custom_id === `paygate-${refund.trace_id}`)).toHaveLength(1);
    const ours = await fake.waitForEvent((e) => e.type === 'PAYMENT.CAPTURE.REFUNDED' && e.resource_id === result.psp_transaction_id);
    expect(ours.status).toBe(200);
    const capture_id = fake.order(order_id)!.captures[0]!.id;
    const dashboard_id = await fake.refundFromDashboard(capture_id, '3.00');
    const reading = readings.find((r) => r.kind === 'event' && r.event.match.psp_transaction_id === dashboard_id);
    expect(reading).toMatchObject({
      kind: 'event',
      event: {
        match: { trace_id: null, transaction_type: 'refund' },
        payment_event: { kind: 'refunded', psp_payment_id: order_id, psp_refund_id: dashboard_id, amount_minor: 300 },
      },
    });
  });

  it('payouts: SUCCESS approved, RETURNED rejected, UNCLAIMED pending until claimed; the same batch never twice', async () => {
    const payout = (trace_id: number, recipient = 'EMAIL', receiver = 'buyer@example.com') => ({
      trace_id,
      reference: `PO-${trace_id}`,
      amount_minor: 1500,
      currency: 'USD',
      method: 'paypal',
      data: { data_recipient_type: recipient, data_receiver: receiver },
      customer_present: true,
    });
    expect(connector.direct!.check({ data_recipient_type: 'EMAIL', data_receiver: 'nope' })).toMatchObject({
      ok: false,
      problem: { field: 'data_receiver' },
    });
    expect(connector.direct!.check({ data_recipient_type: 'PHONE', data_receiver: '+4915112345678' })).toEqual({
      ok: true,
      payment_method: 'paypal',
    });
    const outcomes = [
      { status: 'SUCCESS', result: 'approved' },
      { status: 'RETURNED', result: 'rejected' },
      { status: 'BLOCKED', result: 'rejected' },
      { status: 'FAILED', result: 'rejected' },
    ] as const;
    for (const [i, { status, result }] of outcomes.entries()) {
      const trace_id = 30_000 + seq * 10 + i;
      const sent = await connector.direct!.payout(payout(trace_id));
      expect(sent).toMatchObject({ kind: 'pending' });
      const batch_id = sent.psp_transaction_id!;
      const item = fake.payoutItemsOf(batch_id)[0]!;
      await fake.settlePayoutItem(item.payout_item_id, status);
      const lookup: LookupRequest = {
        trace_id,
        reference: `PO-${trace_id}`,
        transaction_type: 'payout',
        psp_transaction_id: batch_id,
        sale_psp_transaction_id: null,
        amount_minor: 1500,
        currency: 'USD',
      };
      expect(await connector.lookup(lookup)).toMatchObject({ kind: 'found', result: { kind: result } });
      expect(readings.at(-1)).toMatchObject({
        kind: 'event',
        event: { match: { trace_id, psp_transaction_id: batch_id, transaction_type: 'payout' }, result: { kind: result } },
      });
    }
    const trace_id = 31_000 + seq;
    const sent = await connector.direct!.payout(payout(trace_id, 'PAYPAL_ID', 'ABCDEFGH12345'));
    const item = fake.payoutItemsOf(sent.psp_transaction_id!)[0]!;
    await fake.settlePayoutItem(item.payout_item_id, 'UNCLAIMED');
    const lookup: LookupRequest = {
      trace_id,
      reference: 'x',
      transaction_type: 'payout',
      psp_transaction_id: sent.psp_transaction_id,
      sale_psp_transaction_id: null,
      amount_minor: 1500,
      currency: 'USD',
    };
    expect(await connector.lookup(lookup)).toMatchObject({ kind: 'found', result: { kind: 'pending' } });
    expect(readings.at(-1)).toMatchObject({ kind: 'event', event: { result: null } });
    await fake.settlePayoutItem(item.payout_item_id, 'SUCCESS');
    expect(await connector.lookup(lookup)).toMatchObject({ kind: 'found', result: { kind: 'approved' } });
    // The same payout sent again: PayPal-Request-Id replays the first batch; nothing new is paid.
    const again = await connector.direct!.payout(payout(trace_id, 'PAYPAL_ID', 'ABCDEFGH12345'));
    expect(again.psp_transaction_id).toBe(sent.psp_transaction_id);
    expect(fake.payout_items.filter((i) => i.sender_item_id === `paygate-${trace_id}`)).toHaveLength(1);
  });

  it('webhooks are verified by PayPal: a forged or replayed-with-another-id one is refused', async () => {
    const { order_id } = await approvedDeposit();
    const event = await fake.waitForEvent((e) => e.type === 'PAYMENT.CAPTURE.COMPLETED' && e.body.includes(order_id));
    expect(event.status).toBe(200);
    expect(readings.find((r) => r.kind === 'event' && r.event.event_id === event.id)).toMatchObject({
      event: { match: { psp_transaction_id: order_id, transaction_type: 'sale' }, result: { kind: 'approved' } },
    });
    expect(await fake.sendRaw(event.body.replace('COMPLETED', 'DECLINED'), event.signature)).toBe(401);
    expect(await fake.sendRaw(event.body, 'forged-signature')).toBe(401);
    // A gateway with another webhook_id does not take the fake's events.
    const saved = connector;
    connector = make(fake.url, 'WHSOMEONEELSE');
    expect(await fake.redeliver(event.id)).toBe(401);
    connector = saved;
  });

  it.each(['timeout', 'http_500', 'reset_after_processing', 'garbage'] as const)(
    'a capture that suffers %s is unknown or retried, and asking again never captures twice',
    async (mode) => {
      const request = deposit();
      const order_id = await created(request);
      await fake.approve(order_id);
      fake.failNext('orders.capture', mode);
      const first = await connector.completeReturn!(returnOf(request, order_id, 'success'));
      if (mode === 'http_500') expect(first).toMatchObject({ kind: 'approved' });
      else expect(first).toMatchObject({ kind: 'unknown' });
      expect(await connector.completeReturn!(returnOf(request, order_id, 'success'))).toMatchObject({
        kind: 'approved',
        psp_transaction_id: order_id,
      });
      expect(fake.order(order_id)!.captures).toHaveLength(1);
    },
  );

  it.each(['timeout', 'reset_after_processing', 'garbage'] as const)('an order create that suffers %s is unknown', async (mode) => {
    fake.failNext('orders.create', mode);
    expect(await connector.walletDeposit!(deposit())).toMatchObject({ kind: 'unknown' });
  });

  it('never writes the client secret or an access token to its output', () => {
    const text = logged.join('');
    expect(text).not.toContain(fake.client_secret);
    for (const r of fake.requestsTo('token')) {
      const token = JSON.parse(r.answer_body ?? '{}').access_token as string | undefined;
      if (token) expect(text).not.toContain(token);
    }
  });
});
