// The adyen connector against the fake Adyen over real HTTP on 127.0.0.1 (decisions §17): sales
// approved, refused and through 3-D Secure (the fake's page, then completeReturn with the
// redirectResult), an authorization captured and one voided (accepted, then the CAPTURE /
// CANCELLATION notification), a refund (received, then REFUND), bank payouts submitted and
// confirmed with the two keys (PAYOUT_THIRDPARTY paid or failed), a CHARGEBACK read as a
// dispute, a forged HMAC refused, and the failures (time-out, 5xx, reset, garbage) read as
// unknown outcomes while the idempotency key keeps a retry from paying twice. Every message the
// fake saw or sent is checked against Adyen's descriptions (fake.violations stays empty), and no
// API key is ever written to the logs.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectorOptions, loadConfig } from '../../src/config.js';
import { adyenDefinition } from '../../src/connectors/adyen/connector.js';
import { validIban } from '../../src/domain/payee.js';
import {
  type CardSaleRequest,
  type Connector,
  type ConnectorContext,
  type DirectPayoutRequest,
  type LookupRequest,
  NO_CUSTOMER,
  type WebhookEvent,
} from '../../src/connectors/connector.js';
import { CardData } from '../../src/domain/cards.js';
import { AdjustableClock } from '../../src/domain/clock.js';
import { ProcessorHttp } from '../../src/outbound/processor-http.js';
import { type AdyenEvent, type FakeAdyen, startFakeAdyen, THREEDS_CARD } from '../support/adyen/fake.js';
import { notificationHmac } from '../support/adyen/hmac.js';

const GATEWAY_ID = 'a'.repeat(32);
const TIMEOUT_MS = 1500;

let fake: FakeAdyen;
let connector: Connector;
let receiver: http.Server;
let receiver_url: string;
const received: string[] = [];
const logged: string[] = [];
const writes = { out: process.stdout.write.bind(process.stdout), err: process.stderr.write.bind(process.stderr) };
let seq = 0;

function connectorAt(base_url: string, timeout_ms = TIMEOUT_MS): Connector {
  const context: ConnectorContext = {
    options: connectorOptions(loadConfig({})),
    clock: new AdjustableClock(),
    public_url: () => 'https://pay.example.com',
    http: new ProcessorHttp({ timeout_ms, connect_timeout_ms: 500, max_reply_bytes: 256 * 1024, allow_private: true }),
  };
  return adyenDefinition.create(
    {
      api_key: fake.api_key,
      merchant_account: fake.merchant_account,
      hmac_key: fake.hmac_key,
      payout_api_key: fake.payout_api_key,
      payout_reviewer_api_key: fake.payout_reviewer_api_key,
      base_url,
    },
    context,
    GATEWAY_ID,
  );
}

function sale(overrides: Partial<CardSaleRequest> = {}, pan = '4111111111111111', holder: string | null = 'Ada Lovelace'): CardSaleRequest {
  seq += 1;
  const [first, last] = holder === null ? [null, null] : [holder.split(' ')[0] ?? null, holder.split(' ').slice(1).join(' ') || null];
  return {
    trace_id: 9000 + seq,
    reference: `ORDER-${seq}-${Date.now()}`,
    merchant_id: 'merchant-1',
    amount_minor: 1000,
    currency: 'EUR',
    card: new CardData(pan, { month: 3, year: 2030 }, '737'),
    customer: { ...NO_CUSTOMER, first_name: first, last_name: last },
    initiated_by: 'customer',
    mit_retry: false,
    return_to: { success_url: `${receiver_url}/back?outcome=success`, failure_url: `${receiver_url}/back?outcome=failure` },
    capture: true,
    ...overrides,
  };
}

function payout(data: Record<string, string> = {}): DirectPayoutRequest {
  seq += 1;
  return {
    trace_id: 9500 + seq,
    reference: `PAYOUT-${seq}-${Date.now()}`,
    amount_minor: 2500,
    currency: 'EUR',
    method: 'bank_account',
    data: {
      data_iban: 'NL91ABNA0417164300',
      data_owner_name: 'Ada Lovelace',
      data_country_code: 'NL',
      data_email: 'ada@example.com',
      data_date_of_birth: '1990-12-10',
      ...data,
    },
    customer_present: true,
  };
}

/** The notification about `psp` with this eventCode, once delivered, read by the connector. */
async function notified(eventCode: string, matches: (e: AdyenEvent) => boolean): Promise<WebhookEvent> {
  const event = await fake.waitForEvent((e) => e.eventCode === eventCode && matches(e));
  expect(event.state).toBe('delivered');
  const reading = await connector.readWebhook!(Buffer.from(event.body), {});
  if (reading.kind !== 'event') throw new Error(`not an event: ${JSON.stringify(reading)}`);
  return reading.event;
}

async function approvedPsp(request: CardSaleRequest): Promise<string> {
  const result = await connector.sale(request);
  if (result.kind !== 'approved') throw new Error(`not approved: ${result.kind}`);
  return result.psp_transaction_id;
}

beforeAll(async () => {
  // Everything written to stdout and stderr while these tests run, to look for the keys in.
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    logged.push(String(chunk));
    return (writes.out as (...a: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    logged.push(String(chunk));
    return (writes.err as (...a: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stderr.write;
  // The gateway's notification endpoint stand-in: Adyen wants the body [accepted].
  receiver = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      received.push(Buffer.concat(chunks).toString('utf8'));
      response.writeHead(200, { 'content-type': 'text/plain' }).end('[accepted]');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiver_url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  fake = await startFakeAdyen({ webhook_url: `${receiver_url}/notifications` });
  connector = connectorAt(fake.url);
  // The fake checks each request and answer against Adyen's description, compiling each schema
  // the first time it meets it: a second or more in a loaded suite, longer than the tests' short
  // time-out. One sale with a patient connector compiles the payment's schemas first.
  expect(await connectorAt(fake.url, 30_000).sale(sale())).toMatchObject({ kind: 'approved' });
});

afterEach(() => {
  const found = [...fake.violations];
  fake.clearViolations();
  expect(found).toEqual([]);
});

afterAll(async () => {
  process.stdout.write = writes.out;
  process.stderr.write = writes.err;
  await fake?.close();
  await new Promise<void>((resolve) => receiver?.close(() => resolve()));
  const all = logged.join('');
  for (const key of [fake.api_key, fake.payout_api_key, fake.payout_reviewer_api_key, fake.hmac_key]) expect(all).not.toContain(key);
});

describe('adyen connector: card sales', () => {
  it('approves a sale (Authorised), sent with the card in paymentMethod and the idempotency key', async () => {
    const request = sale();
    const result = await connector.sale(request);
    expect(result).toMatchObject({ kind: 'approved', charge_amount_minor: 1000, charge_currency: 'EUR' });
    const sent = fake.requestsTo('payments').at(-1)!;
    expect(sent.idempotency_key).toBe(`paygate-${GATEWAY_ID}-${request.trace_id}-sale`);
    expect(JSON.parse(sent.body).paymentMethod).toMatchObject({ type: 'scheme', number: '4111111111111111', cvc: '737' });
    const event = await notified('AUTHORISATION', (e) => e.pspReference === (result as { psp_transaction_id: string }).psp_transaction_id);
    expect(event.result).toMatchObject({ kind: 'approved' });
    expect(event.match.reference).toBe(request.reference);
  });

  it('reads a refusal as rejected, with a soft or hard decline from refusalReason', async () => {
    expect(await connector.sale(sale({}, '4111111111111111', 'NOT_ENOUGH_BALANCE'))).toMatchObject({
      kind: 'rejected',
      error_code: '12',
      error_details: 'Not enough balance',
      decline: 'soft',
    });
    expect(await connector.sale(sale({}, '4111111111111111', 'STOLEN_CARD'))).toMatchObject({ kind: 'rejected', decline: 'hard' });
    expect(await connector.sale(sale({}, '4111111111111111', 'ERROR'))).toMatchObject({ kind: 'error' });
  });

  it('sends the customer to 3-D Secure and completes on return with the redirectResult', async () => {
    const request = sale({}, THREEDS_CARD);
    const result = await connector.sale(request);
    if (result.kind !== 'redirect') throw new Error(result.kind);
    const page = await fetch(result.redirect_url);
    expect(await page.text()).toContain('Approve');
    const back = await fetch(`${result.redirect_url}/approve`, { method: 'POST', redirect: 'manual' });
    const location = new URL(back.headers.get('location')!);
    expect(location.origin + location.pathname).toBe(`${receiver_url}/back`);
    const redirectResult = location.searchParams.get('redirectResult')!;
    const completion = {
      ...lookupOf(request, 'sale', result.psp_transaction_id),
      outcome: 'success' as const,
      params: { redirectResult },
      idempotency_key: `paygate-${GATEWAY_ID}-${request.trace_id}-details`,
    };
    expect(await connector.completeReturn!(completion)).toMatchObject({ kind: 'approved', psp_transaction_id: result.psp_transaction_id });
    // Asked again (a later check): the same answer, nothing charged twice.
    expect(await connector.completeReturn!(completion)).toMatchObject({ kind: 'approved' });
    expect(fake.payment(result.psp_transaction_id)?.captured_minor).toBe(1000);
  });

  it('reads a failed 3-D Secure as rejected', async () => {
    const request = sale({}, THREEDS_CARD);
    const result = await connector.sale(request);
    if (result.kind !== 'redirect') throw new Error(result.kind);
    const back = await fetch(`${result.redirect_url}/fail`, { method: 'POST', redirect: 'manual' });
    const redirectResult = new URL(back.headers.get('location')!).searchParams.get('redirectResult')!;
    const completed = await connector.completeReturn!({
      ...lookupOf(request, 'sale', result.psp_transaction_id),
      outcome: 'success',
      params: { redirectResult },
      idempotency_key: 'k-fail',
    });
    expect(completed).toMatchObject({ kind: 'rejected', psp_transaction_id: result.psp_transaction_id });
  });
});

function lookupOf(request: CardSaleRequest, type: LookupRequest['transaction_type'], psp: string | null): LookupRequest {
  return {
    trace_id: request.trace_id,
    reference: request.reference,
    transaction_type: type,
    psp_transaction_id: psp,
    sale_psp_transaction_id: null,
    amount_minor: request.amount_minor,
    currency: request.currency,
  };
}

describe('adyen connector: authorizations, refunds, disputes', () => {
  it('captures an authorization: accepted, then CAPTURE is read as captured', async () => {
    const request = sale({ capture: false });
    const psp = await approvedPsp(request);
    expect(JSON.parse(fake.requestsTo('payments').at(-1)!.body).additionalData).toEqual({ manualCapture: 'true' });
    const action = {
      trace_id: request.trace_id,
      reference: request.reference,
      psp_transaction_id: psp,
      authorized_minor: 1000,
      currency: 'EUR',
    };
    const capture = await connector.authorizations!.capture({ ...action, amount_minor: 600, idempotency_key: `cap-${psp}` });
    expect(capture).toMatchObject({ kind: 'accepted' });
    expect(fake.requestsTo('captures').at(-1)!.idempotency_key).toBe(`cap-${psp}`);
    const event = await notified('CAPTURE', (e) => e.originalReference === psp);
    expect(event.payment_event).toEqual({ kind: 'captured', psp_payment_id: psp, amount_minor: 600 });
    expect(event.result).toBeNull();
  });

  it('voids an authorization: accepted, then CANCELLATION is read as voided', async () => {
    const request = sale({ capture: false });
    const psp = await approvedPsp(request);
    const action = {
      trace_id: request.trace_id,
      reference: request.reference,
      psp_transaction_id: psp,
      authorized_minor: 1000,
      currency: 'EUR',
    };
    expect(await connector.authorizations!.void({ ...action, idempotency_key: `void-${psp}` })).toMatchObject({ kind: 'accepted' });
    const event = await notified('CANCELLATION', (e) => e.originalReference === psp);
    expect(event.payment_event).toEqual({ kind: 'voided', psp_payment_id: psp });
  });

  it('refunds: received (pending), then REFUND approves it; a Customer Area refund is a refund event of the payment', async () => {
    const request = sale();
    const psp = await approvedPsp(request);
    const refund = await connector.refund({
      trace_id: request.trace_id + 100_000,
      reference: request.reference,
      sale_psp_transaction_id: psp,
      sale_trace_id: request.trace_id,
      amount_minor: 400,
      currency: 'EUR',
    });
    if (refund.kind !== 'pending') throw new Error(refund.kind);
    const event = await notified('REFUND', (e) => e.pspReference === refund.psp_transaction_id);
    expect(event.match).toMatchObject({ psp_transaction_id: refund.psp_transaction_id, transaction_type: 'refund' });
    expect(event.result).toMatchObject({ kind: 'approved', charge_amount_minor: 400 });
    expect(event.payment_event).toMatchObject({ kind: 'refunded', psp_payment_id: psp, amount_minor: 400 });
    const outside = await fake.customerAreaRefund(psp, 100);
    const reading = await connector.readWebhook!(Buffer.from(outside.body), {});
    expect(reading).toMatchObject({
      kind: 'event',
      event: { payment_event: { kind: 'refunded', psp_payment_id: psp, amount_minor: 100 } },
    });
  });

  it('reads CHARGEBACK as a dispute opened and CHARGEBACK_REVERSED as won', async () => {
    const psp = await approvedPsp(sale());
    const opened = await fake.chargeback(psp, 'CHARGEBACK', { amount_minor: 1000 });
    const reading = await connector.readWebhook!(Buffer.from(opened.body), {});
    expect(reading).toMatchObject({
      kind: 'event',
      event: {
        result: null,
        payment_event: { kind: 'dispute', psp_payment_id: psp, dispute: { stage: 'opened', amount_minor: 1000, currency: 'EUR' } },
      },
    });
    const won = await fake.chargeback(psp, 'CHARGEBACK_REVERSED');
    expect(await connector.readWebhook!(Buffer.from(won.body), {})).toMatchObject({
      event: { payment_event: { dispute: { stage: 'won' } } },
    });
  });

  it('refuses a notification whose HMAC does not verify, and a batch holding one forged item', async () => {
    const psp = await approvedPsp(sale());
    const event = await fake.waitForEvent((e) => e.pspReference === psp);
    const forged = JSON.parse(event.body) as { notificationItems: { NotificationRequestItem: Record<string, unknown> }[] };
    const item = forged.notificationItems[0]!.NotificationRequestItem;
    item.amount = { value: 999_999, currency: 'EUR' };
    expect(await connector.readWebhook!(Buffer.from(JSON.stringify(forged)), {})).toEqual({ kind: 'bad_signature' });
    // Signed with another key.
    const other = { ...item, additionalData: { hmacSignature: notificationHmac(item as never, '00'.repeat(32)) } };
    expect(
      await connector.readWebhook!(
        Buffer.from(JSON.stringify({ live: 'false', notificationItems: [{ NotificationRequestItem: other }] })),
        {},
      ),
    ).toEqual({
      kind: 'bad_signature',
    });
    const genuine = (JSON.parse(event.body) as typeof forged).notificationItems[0]!;
    const batch = { live: 'false', notificationItems: [genuine, { NotificationRequestItem: other }] };
    expect(await connector.readWebhook!(Buffer.from(JSON.stringify(batch)), {})).toEqual({ kind: 'bad_signature' });
    expect(received.length).toBeGreaterThan(0);
  });
});

describe('adyen connector: bank payouts', () => {
  it('checks the data_ fields (IBAN mod-97, country code)', () => {
    expect(validIban('NL91ABNA0417164300')).toBe(true);
    expect(validIban('NL92ABNA0417164300')).toBe(false);
    expect(connector.direct!.check(payout().data)).toEqual({ ok: true, payment_method: 'bank_account' });
    expect(connector.direct!.check(payout({ data_iban: 'NL92ABNA0417164300' }).data)).toMatchObject({
      ok: false,
      problem: { field: 'data_iban' },
    });
    expect(connector.direct!.check(payout({ data_country_code: 'nl' }).data)).toMatchObject({
      ok: false,
      problem: { field: 'data_country_code' },
    });
  });

  it('submits with the payout key, confirms with the reviewer key: pending, then PAYOUT_THIRDPARTY approves it', async () => {
    const result = await connector.direct!.payout(payout({ data_bic: 'ABNANL2A' }));
    if (result.kind !== 'pending') throw new Error(JSON.stringify(result));
    expect(fake.requestsTo('storeDetailAndSubmitThirdParty').at(-1)!.headers['x-api-key']).toBe(fake.payout_api_key);
    expect(fake.requestsTo('confirmThirdParty').at(-1)!.headers['x-api-key']).toBe(fake.payout_reviewer_api_key);
    expect(fake.payout(result.psp_transaction_id)?.status).toBe('confirmed');
    await fake.settlePayout(result.psp_transaction_id, 'paid');
    const event = await notified('PAYOUT_THIRDPARTY', (e) => e.pspReference === result.psp_transaction_id);
    expect(event.match).toMatchObject({ transaction_type: 'payout', psp_transaction_id: result.psp_transaction_id });
    expect(event.result).toMatchObject({ kind: 'approved', charge_amount_minor: 2500 });
  });

  it('reads a failed payout (PAYOUT_THIRDPARTY success false) as rejected', async () => {
    const result = await connector.direct!.payout(payout());
    if (result.kind !== 'pending') throw new Error(result.kind);
    await fake.settlePayout(result.psp_transaction_id, 'failed');
    const event = await notified('PAYOUT_THIRDPARTY', (e) => e.pspReference === result.psp_transaction_id);
    expect(event.result).toMatchObject({ kind: 'rejected', error_details: 'Account is closed' });
  });

  it('answers lookups honestly: Adyen has none', async () => {
    expect(await connector.lookup(lookupOf(sale(), 'sale', null))).toMatchObject({ kind: 'unavailable' });
  });
});

describe('adyen connector: failures', () => {
  it('a time-out is unknown, and asking again with the same key pays once', async () => {
    const request = sale();
    fake.failNext('payments', 'timeout');
    expect(await connector.sale(request)).toMatchObject({ kind: 'unknown' });
    const again = await connector.sale(request);
    expect(again).toMatchObject({ kind: 'approved' });
    const ours = fake.requestsTo('payments').filter((r) => JSON.parse(r.body).reference === request.reference);
    expect(new Set(ours.map((r) => r.idempotency_key)).size).toBe(1);
    const psps = new Set(ours.map((r) => (r.answer_body ? (JSON.parse(r.answer_body) as { pspReference: string }).pspReference : null)));
    expect(psps.size).toBe(1);
  });

  it('a reset after processing and a garbled answer are unknown; a 500 then a success is one payment', async () => {
    fake.failNext('payments', 'reset_after_processing');
    expect(await connector.sale(sale())).toMatchObject({ kind: 'unknown' });
    fake.failNext('payments', 'garbage');
    expect(await connector.sale(sale())).toMatchObject({ kind: 'unknown' });
    // A 5xx is retried once with the same key (client.ts).
    fake.failNext('payments', 'http_500');
    expect(await connector.sale(sale())).toMatchObject({ kind: 'approved' });
    fake.failNext('payments', 'http_503');
    fake.failNext('payments', 'http_503');
    expect(await connector.sale(sale())).toMatchObject({ kind: 'unknown' });
  });

  it('a reset before processing and a capture timed out are unknown (the request may have arrived); 5xx twice is unknown', async () => {
    fake.failNext('payments', 'reset_before_processing');
    expect(await connector.sale(sale())).toMatchObject({ kind: 'unknown' });
    const request = sale({ capture: false });
    const psp = await approvedPsp(request);
    fake.failNext('captures', 'timeout');
    const action = {
      trace_id: request.trace_id,
      reference: request.reference,
      psp_transaction_id: psp,
      authorized_minor: 1000,
      currency: 'EUR',
    };
    expect(await connector.authorizations!.capture({ ...action, amount_minor: 1000, idempotency_key: `c-${psp}` })).toMatchObject({
      kind: 'unknown',
    });
    fake.failNext('payments', 'http_500');
    fake.failNext('payments', 'http_500');
    expect(await connector.sale(sale())).toMatchObject({ kind: 'unknown' });
  });

  it('an unreachable Adyen fails at once: nothing was charged', async () => {
    const closed = connectorAt('http://127.0.0.1:1');
    expect(await closed.sale(sale())).toMatchObject({ kind: 'error', error_code: 'unreachable' });
  });

  it('a payout whose confirmation times out is unknown with its pspReference (never paid twice)', async () => {
    fake.failNext('confirmThirdParty', 'timeout');
    const result = await connector.direct!.payout(payout());
    expect(result).toMatchObject({ kind: 'unknown' });
    expect((result as { psp_transaction_id: string | null }).psp_transaction_id).not.toBeNull();
  });
});
