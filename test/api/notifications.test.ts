// Status notifications (spec §6, issue 4) end to end: a real gateway, real sales, and a real
// local HTTP receiver standing for the merchant, which checks every signature with its own
// implementation (support/notification-merchant.ts) and signs its replies. On each store.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changeStatus } from '../../src/domain/transaction-state.js';
import { postSigned } from '../support/client.js';
import { saleA, saleB, VISA } from '../support/bodies.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../support/gateway.js';
import { type MerchantReceiver, type ReceiverReply, startMerchantReceiver } from '../support/merchant-receiver.js';
import { merchantVerify, notificationOf, signedReply, sleep, waitUntil } from '../support/notification-merchant.js';
import { transactionFixture } from '../support/store-fixture.js';
import { storeKinds } from '../support/stores.js';

/** Resends after 1 s, a 2 s send time-out (roomy on a loaded machine), a 50 ms poll: nothing waits for minutes. */
const FAST = {
  PAYGATE_NOTIFY_RETRY_SECONDS: '1',
  PAYGATE_NOTIFY_POLL_MS: '50',
  PAYGATE_OUTBOUND_TIMEOUT_MS: '2000',
  PAYGATE_SANDBOX_SETTLE_SECONDS: '1',
};

const REQUIRED_COMMON = [
  'transaction_type', 'transaction_status', 'trace_id', 'pin', 'amount', 'currency', 'charge_amount', 'charge_currency',
  'payment_method', 'payment_processor', 'merchant_id', 'version', 'timestamp', 'signature',
];

interface AttemptView {
  attempt_no: number;
  at: string;
  duration_ms: number;
  http_status: number | null;
  reply_excerpt: string | null;
  outcome: string;
  reason: string;
}
interface NotificationView {
  id: number;
  trace_id: number;
  transaction_status: string;
  state: string;
  attempt_count: number;
  next_attempt_at: string | null;
  last_error: string | null;
  body: Record<string, unknown>;
  attempts: AttemptView[];
}

async function operatorGet(base: string, trace_id: unknown, token: string | null = ADMIN_TOKEN) {
  const response = await fetch(`${base}/operator/transactions/${trace_id}/notifications`, {
    headers: token === null ? {} : { authorization: `Bearer ${token}` },
  });
  return { http_status: response.status, body: (await response.json()) as { notifications: NotificationView[] } & Record<string, unknown> };
}

async function operatorResend(base: string, id: unknown, token: string | null = ADMIN_TOKEN) {
  const response = await fetch(`${base}/operator/notifications/${id}/resend`, {
    method: 'POST',
    headers: token === null ? {} : { authorization: `Bearer ${token}` },
  });
  return { http_status: response.status, body: (await response.json()) as { notification: NotificationView } & Record<string, unknown> };
}

/** The operator's view of a transaction's notifications once `ready` holds for it. */
async function viewWhen(base: string, trace_id: unknown, ready: (n: NotificationView[]) => boolean, what: string): Promise<NotificationView[]> {
  return waitUntil(async () => {
    const view = await operatorGet(base, trace_id);
    return view.http_status === 200 && ready(view.body.notifications) ? view.body.notifications : undefined;
  }, what);
}

async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe.each(storeKinds())('notifications on %s', (kind) => {
  let gw: TestGateway;
  let receiver: MerchantReceiver;
  let secret: string;
  const extra_receivers: MerchantReceiver[] = [];

  beforeAll(async () => {
    receiver = await startMerchantReceiver();
    gw = await startTestGateway(kind, { env: FAST });
    secret = gw.merchant.secret;
  });
  afterAll(async () => {
    await gw?.close();
    await receiver?.close();
    for (const r of extra_receivers) await r.close();
  });

  const sale = (body: Record<string, unknown>) => postSigned(gw.url, '/api/process', body, secret);
  const ack = () => signedReply(secret);
  /** Replies with `first` to the first request to `path`, then a signed status 0. */
  const firstThenAck = (path: string, first: () => ReceiverReply | Promise<ReceiverReply>) => receiver.setReply(path, () => (
    receiver.requestsTo(path).length === 1 ? first() : ack()
  ));

  it('delivers a variant A (application_key, 1.2) notification signed, with every required field', async () => {
    const path = '/notify/variant-a';
    receiver.setReply(path, ack());
    const answer = await sale(saleA(gw.merchant, { notification_url: `${receiver.url}${path}`, variable1: 'cart-7' }));
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'approved' });
    const request = await receiver.waitForRequest((r) => r.path === path, 15_000);
    const body = notificationOf(request);
    expect(request.method).toBe('POST');
    expect(request.headers['content-type']).toMatch(/^application\/json/);
    expect(merchantVerify(body, secret)).toBe(true);
    for (const field of [...REQUIRED_COMMON, 'application_key']) expect(body[field], field).not.toBeUndefined();
    expect(body).toMatchObject({
      transaction_type: 'sale', transaction_status: 'approved', trace_id: answer.body.trace_id, application_key: gw.merchant.application_key,
      merchant_id: gw.merchant.merchant_id, pin: 'cust-42', amount: 1999, currency: 'USD', charge_amount: 1999, charge_currency: 'USD',
      payment_method: 'card', payment_processor: 'sandbox', version: '1.2', card_number: '411111******1111',
      card_token: answer.body.card_token, variable1: 'cart-7', error_code: '0',
    });
    expect(body.frontend).toBeUndefined();
    expect(typeof body.timestamp).toBe('number');
    expect(request.body).not.toContain(VISA);

    const [notification] = await viewWhen(gw.url, answer.body.trace_id, (n) => n[0]?.state === 'delivered', 'delivered state');
    expect(notification).toMatchObject({ state: 'delivered', attempt_count: 1, last_error: null, next_attempt_at: null, transaction_status: 'approved' });
    expect(notification!.attempts).toMatchObject([{ attempt_no: 1, outcome: 'delivered', http_status: 200, reason: 'acknowledged (status 0)' }]);
    expect(notification!.body.card_token).toBe('[redacted]');
  });

  it('delivers a variant B (frontend, 1.1) notification signed, with every required field', async () => {
    const path = '/notify/variant-b';
    receiver.setReply(path, ack());
    const answer = await sale(saleB(gw.merchant, { notification_url: `${receiver.url}${path}` }));
    const body = notificationOf(await receiver.waitForRequest((r) => r.path === path, 15_000));
    expect(merchantVerify(body, secret)).toBe(true);
    for (const field of [...REQUIRED_COMMON, 'frontend']) expect(body[field], field).not.toBeUndefined();
    expect(body).toMatchObject({
      frontend: gw.merchant.frontend, version: '1.1', trace_id: answer.body.trace_id, amount: 2500, currency: 'EUR',
      charge_amount: 2500, charge_currency: 'EUR', card_number: '555555******4444',
    });
    expect(body.application_key).toBeUndefined();
    await viewWhen(gw.url, answer.body.trace_id, (n) => n[0]?.state === 'delivered', 'delivered state');
  });

  describe('resends until acknowledged, each resend identical', () => {
    const cases: [string, () => ReceiverReply | Promise<ReceiverReply>, RegExp][] = [
      ['status -1', () => signedReply(secret, -1, 'Internal error'), /merchant error \(status -1\)/],
      ['a garbage reply', () => ({ status: 200, body: null, raw: 'thanks!! <html>' }), /not recognized \(not JSON\)/],
      ['HTTP 500', () => ({ status: 500, body: { error: 'boom' } }), /^HTTP 500$/],
      ['an unsigned reply', () => ({ status: 200, body: { status: 0, description: 'OK', version: '1.2', timestamp: 1 } }), /not signed/],
      ['a reply signed with another secret', () => signedReply('not-the-merchant-secret'), /signature invalid/],
      ['a time-out', () => new Promise<ReceiverReply>(() => undefined), /timed out/],
    ];
    it.concurrent.each(cases.map((c, i) => [...c, i] as const))('after %s', async (_name, first, reason, i) => {
      const path = `/notify/retry-${i}`;
      firstThenAck(path, first);
      const answer = await sale(saleA(gw.merchant, { notification_url: `${receiver.url}${path}` }));
      const [notification] = await viewWhen(gw.url, answer.body.trace_id, (n) => n[0]?.state === 'delivered', `delivery after ${_name}`);
      const requests = receiver.requestsTo(path);
      expect(requests).toHaveLength(2);
      expect(requests[1]!.body).toBe(requests[0]!.body);
      expect(notificationOf(requests[1]!).trace_id).toBe(answer.body.trace_id);
      expect(merchantVerify(notificationOf(requests[1]!), secret)).toBe(true);
      expect(notification!.attempt_count).toBe(2);
      expect(notification!.attempts[0]).toMatchObject({ attempt_no: 1, outcome: 'retry' });
      expect(notification!.attempts[0]!.reason).toMatch(reason);
      expect(notification!.attempts[1]).toMatchObject({ attempt_no: 2, outcome: 'delivered', http_status: 200 });
    });

    it.concurrent('after a refused connection, once the merchant is back', async () => {
      const port = await closedPort();
      const answer = await sale(saleA(gw.merchant, { notification_url: `http://127.0.0.1:${port}/notify` }));
      const [pending] = await viewWhen(gw.url, answer.body.trace_id, (n) => (n[0]?.attempts.length ?? 0) >= 1, 'first attempt');
      expect(pending).toMatchObject({ state: 'pending', last_error: 'connection refused' });
      expect(pending!.attempts[0]).toMatchObject({ outcome: 'retry', http_status: null, reason: 'connection refused' });
      expect(pending!.next_attempt_at).not.toBeNull();
      const back = await startMerchantReceiver({ port });
      extra_receivers.push(back);
      back.setReply('/notify', ack());
      const [delivered] = await viewWhen(gw.url, answer.body.trace_id, (n) => n[0]?.state === 'delivered', 'delivery once back');
      expect(delivered!.attempts.at(-1)).toMatchObject({ outcome: 'delivered' });
      const body = notificationOf(back.requestsTo('/notify')[0]!);
      expect(merchantVerify(body, secret)).toBe(true);
      expect(body.trace_id).toBe(answer.body.trace_id);
    });

    it.concurrent('but not after status 1: a refusal is recorded and not resent', async () => {
      const path = '/notify/refuses';
      receiver.setReply(path, signedReply(secret, 1, 'Deposit limit exceeded'));
      const answer = await sale(saleA(gw.merchant, { notification_url: `${receiver.url}${path}` }));
      const [notification] = await viewWhen(gw.url, answer.body.trace_id, (n) => n[0]?.state !== 'pending', 'the refusal');
      expect(notification).toMatchObject({ state: 'refused', attempt_count: 1, next_attempt_at: null });
      expect(notification!.last_error).toMatch(/refused by merchant \(status 1\): Deposit limit exceeded/);
      expect(notification!.attempts).toMatchObject([{ outcome: 'refused', http_status: 200 }]);
      await sleep(1_500); // longer than the 1 s resend delay
      expect(receiver.requestsTo(path)).toHaveLength(1);
    });
  });

  it.concurrent('delivers the notifications of one transaction in order: the second waits for the first', async () => {
    const path = '/notify/in-order';
    firstThenAck(path, () => signedReply(secret, -1, 'busy'));
    const answer = await sale(saleA(gw.merchant, { cvv: '333', notification_url: `${receiver.url}${path}` }));
    expect(answer.body).toMatchObject({ transaction_status: 'pending_async' });
    await receiver.waitForRequest((r) => r.path === path, 15_000);
    // The customer approves while the first notification (pending_async) waits for its resend.
    const approve = await fetch(answer.body.redirect_url as string, {
      method: 'POST', body: new URLSearchParams({ action: 'approve' }), redirect: 'manual',
    });
    expect(approve.status).toBe(303);
    const notifications = await viewWhen(gw.url, answer.body.trace_id, (n) => n.length === 2 && n.every((x) => x.state === 'delivered'), 'both delivered');
    expect(notifications.map((n) => n.transaction_status)).toEqual(['pending_async', 'approved']);
    const seen = receiver.requestsTo(path).map((r) => notificationOf(r).transaction_status);
    expect(seen).toEqual(['pending_async', 'pending_async', 'approved']);
  });

  it.concurrent('notifies an asynchronous outcome: CVV 222 answers pending, the approval is notified later', async () => {
    const path = '/notify/async';
    receiver.setReply(path, ack());
    const answer = await sale(saleA(gw.merchant, { cvv: '222', notification_url: `${receiver.url}${path}` }));
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'pending' });
    const request = await receiver.waitForRequest((r) => r.path === path, 15_000);
    const body = notificationOf(request);
    expect(merchantVerify(body, secret)).toBe(true);
    expect(body).toMatchObject({ trace_id: answer.body.trace_id, transaction_status: 'approved', charge_amount: 1999, charge_currency: 'USD' });
    await viewWhen(gw.url, answer.body.trace_id, (n) => n.length === 1 && n[0]!.state === 'delivered', 'delivered state');
  });

  it.concurrent('operator API: 401 without the token; shows every attempt; resends the same content on demand', async () => {
    const path = '/notify/operator';
    receiver.setReply(path, ack());
    const answer = await sale(saleA(gw.merchant, { notification_url: `${receiver.url}${path}` }));
    const [notification] = await viewWhen(gw.url, answer.body.trace_id, (n) => n[0]?.state === 'delivered', 'delivered state');

    expect((await operatorGet(gw.url, answer.body.trace_id, null)).http_status).toBe(401);
    expect((await operatorGet(gw.url, answer.body.trace_id, 'wrong-token-0123456789')).http_status).toBe(401);
    expect((await operatorResend(gw.url, notification!.id, null)).http_status).toBe(401);
    expect((await operatorGet(gw.url, 999_999_999)).http_status).toBe(404);
    expect((await operatorGet(gw.url, 'abc')).http_status).toBe(400);
    expect((await operatorResend(gw.url, 999_999_999)).http_status).toBe(404);

    const resent = await operatorResend(gw.url, notification!.id);
    expect(resent.http_status).toBe(200);
    expect(resent.body.notification).toMatchObject({ id: notification!.id, state: 'pending' });
    const [again] = await viewWhen(gw.url, answer.body.trace_id, (n) => n[0]?.state === 'delivered' && n[0].attempt_count === 2, 'second delivery');
    expect(again!.attempts.map((a) => a.outcome)).toEqual(['delivered', 'delivered']);
    const requests = receiver.requestsTo(path);
    expect(requests).toHaveLength(2);
    expect(requests[1]!.body).toBe(requests[0]!.body);
    for (const attempt of again!.attempts) {
      expect(attempt.reply_excerpt).toContain('"status":0');
      expect(attempt.reply_excerpt).not.toMatch(/[0-9a-f]{96}/);
      expect(Number.isNaN(Date.parse(attempt.at))).toBe(false);
    }

    const openapi = (await (await fetch(`${gw.url}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(openapi.paths)).toEqual(expect.arrayContaining(['/operator/transactions/{trace_id}/notifications', '/operator/notifications/{id}/resend']));
  });
});

describe.each(storeKinds())('notification schedule and bound on %s (sandbox clock, default 300 s / 72 h)', (kind) => {
  let gw: TestGateway;
  let receiver: MerchantReceiver;
  beforeAll(async () => {
    receiver = await startMerchantReceiver();
    gw = await startTestGateway(kind, { env: { PAYGATE_NOTIFY_POLL_MS: '50' } });
  });
  afterAll(async () => {
    await gw?.close();
    await receiver?.close();
  });

  async function advance(seconds: number): Promise<void> {
    const response = await fetch(`${gw.url}/sandbox/clock`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ advance_seconds: seconds }),
    });
    expect(response.status).toBe(200);
  }

  it('resends after 300 s of gateway time and marks the notification failed once 72 h have passed', async () => {
    const path = '/notify/always-500';
    receiver.setReply(path, { status: 500, body: { error: 'down' } });
    const answer = await postSigned(gw.url, '/api/process', saleA(gw.merchant, { notification_url: `${receiver.url}${path}` }), gw.merchant.secret);
    const [first] = await viewWhen(gw.url, answer.body.trace_id, (n) => n[0]?.attempt_count === 1, 'first attempt');
    expect(first).toMatchObject({ state: 'pending', last_error: 'HTTP 500' });
    const waited_ms = Date.parse(first!.next_attempt_at!) - Date.parse(first!.attempts[0]!.at);
    expect(waited_ms).toBeGreaterThanOrEqual(299_000);
    expect(waited_ms).toBeLessThanOrEqual(301_000);

    await advance(300);
    const [second] = await viewWhen(gw.url, answer.body.trace_id, (n) => n[0]?.attempt_count === 2, 'the resend after 300 s');
    expect(second).toMatchObject({ state: 'pending' });
    expect(receiver.requestsTo(path)[1]!.body).toBe(receiver.requestsTo(path)[0]!.body);

    await advance(72 * 3600);
    const [failed] = await viewWhen(gw.url, answer.body.trace_id, (n) => n[0]?.state === 'failed', 'failed state');
    expect(failed).toMatchObject({ state: 'failed', attempt_count: 3, last_error: 'HTTP 500', next_attempt_at: null });
    expect(receiver.requestsTo(path)).toHaveLength(3);
  });
});

describe.each(storeKinds())('outbound safety in live mode on %s', (kind) => {
  let receiver: MerchantReceiver;
  const gateways: TestGateway[] = [];
  beforeAll(async () => {
    receiver = await startMerchantReceiver();
  });
  afterAll(async () => {
    for (const g of gateways) await g.close();
    await receiver?.close();
  });

  /** Live mode has no sandbox processor: the transaction and its status change are written directly. */
  async function notifyVia(gw: TestGateway, url: string): Promise<number> {
    const merchant = await gw.createMerchant();
    return gw.gateway.deps.store.transaction(async (tx) => {
      const trace_id = (await tx.insertTransactionIfAbsent(transactionFixture(merchant.merchant_id, { notification_url: url })))!;
      const row = (await tx.getTransaction(trace_id))!;
      const outcome = await changeStatus(tx, row, { to: 'approved', reason: 'test' }, gw.gateway.clock.now_ms());
      expect(outcome.kind).toBe('changed');
      return trace_id;
    });
  }

  it('refuses loopback destinations (IP literal and a name resolving to one) unless PAYGATE_ALLOW_PRIVATE_URLS=true', async () => {
    const live = await startTestGateway(kind, { env: { ...FAST, PAYGATE_ENV: 'live' } });
    gateways.push(live);
    receiver.setReply('/live', { status: 200, body: {} });
    const port = new URL(receiver.url).port;
    for (const url of [`http://127.0.0.1:${port}/live`, `http://localhost:${port}/live`, `http://[::1]:${port}/live`]) {
      const trace_id = await notifyVia(live, url);
      const [notification] = await viewWhen(live.url, trace_id, (n) => (n[0]?.attempt_count ?? 0) >= 1, `attempt to ${url}`);
      expect(notification, url).toMatchObject({ state: 'pending', last_error: 'destination not allowed' });
      expect(notification!.attempts[0]).toMatchObject({ outcome: 'retry', http_status: null, reason: 'destination not allowed' });
    }
    expect(receiver.requestsTo('/live')).toHaveLength(0);

    const allowed = await startTestGateway(kind, { env: { ...FAST, PAYGATE_ENV: 'live', PAYGATE_ALLOW_PRIVATE_URLS: 'true' } });
    gateways.push(allowed);
    const allowed_path = '/live-allowed';
    const trace_id = await notifyVia(allowed, `${receiver.url}${allowed_path}`);
    await receiver.waitForRequest((r) => r.path === allowed_path, 15_000);
    const [notification] = await viewWhen(allowed.url, trace_id, (n) => (n[0]?.attempt_count ?? 0) >= 1, 'attempt with private URLs allowed');
    // The receiver answers an unsigned {} here: reached, and resent as unrecognized.
    expect(notification!.attempts[0]).toMatchObject({ http_status: 200, reason: 'reply not signed' });
  });
});
