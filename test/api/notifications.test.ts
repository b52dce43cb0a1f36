// Status notifications (spec §6, issue 4) end to end: a real gateway, real sales, and a real
// local HTTP receiver standing for the merchant, which checks every signature with its own
// implementation (support/notification-merchant.ts) and signs its replies. On each store.
import dns from 'node:dns';
import fs from 'node:fs';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changeStatus } from '../../src/transitions/transaction.js';
import { checkedLookup } from '../../src/outbound/post.js';
import { CashierCustomer, initPayIn, openSession, textOf } from '../support/cashier.js';
import { postSigned } from '../support/client.js';
import { saleA, saleB, VISA } from '../support/bodies.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../support/gateway.js';
import { type MerchantReceiver, type ReceiverReply, startMerchantReceiver } from '../support/merchant-receiver.js';
import { merchantVerify, notificationOf, signedReply, sleep, waitUntil } from '../support/notification-merchant.js';
import { transactionFixture } from '../support/store-fixture.js';
import { storeKinds } from '../support/stores.js';
import { createPlanVia, sha384, subscribeVia, tokenize } from '../support/v13.js';

/** Resends after 1 s, a 2 s send time-out (roomy on a loaded machine), a 50 ms poll: nothing waits for minutes. */
const FAST = {
  PAYGATE_NOTIFY_RETRY_SECONDS: '1',
  PAYGATE_NOTIFY_POLL_MS: '50',
  PAYGATE_OUTBOUND_TIMEOUT_MS: '2000',
  PAYGATE_SANDBOX_SETTLE_SECONDS: '1',
};

const REQUIRED_COMMON = [
  'transaction_type',
  'transaction_status',
  'trace_id',
  'pin',
  'amount',
  'currency',
  'charge_amount',
  'charge_currency',
  'payment_method',
  'payment_processor',
  'merchant_id',
  'version',
  'timestamp',
  'signature',
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
  kind: string;
  trace_id: number | null;
  subscription_id: string | null;
  event: string | null;
  transaction_status: string;
  state: string;
  attempt_count: number;
  next_attempt_at: string | null;
  in_flight: boolean;
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
async function viewWhen(
  base: string,
  trace_id: unknown,
  ready: (n: NotificationView[]) => boolean,
  what: string,
): Promise<NotificationView[]> {
  return waitUntil(async () => {
    const view = await operatorGet(base, trace_id);
    return view.http_status === 200 && ready(view.body.notifications) ? view.body.notifications : undefined;
  }, what);
}

async function operatorGetSubscription(base: string, subscription_id: string, token: string | null = ADMIN_TOKEN) {
  const response = await fetch(`${base}/operator/subscriptions/${subscription_id}/notifications`, {
    headers: token === null ? {} : { authorization: `Bearer ${token}` },
  });
  return { http_status: response.status, body: (await response.json()) as { notifications: NotificationView[] } & Record<string, unknown> };
}

/**
 * Holds every reply to `path` until the test releases it: an attempt stays in flight (the
 * merchant has the request, the gateway waits for the answer) for as long as the test needs.
 */
function holdReplies(receiver: MerchantReceiver, path: string): { release(reply: ReceiverReply): void; readonly held: () => number } {
  const waiting: ((reply: ReceiverReply) => void)[] = [];
  receiver.setReply(path, () => new Promise<ReceiverReply>((resolve) => waiting.push(resolve)));
  return {
    release(reply) {
      for (const resolve of waiting.splice(0)) resolve(reply);
    },
    held: () => waiting.length,
  };
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
  const firstThenAck = (path: string, first: () => ReceiverReply | Promise<ReceiverReply>) =>
    receiver.setReply(path, () => (receiver.requestsTo(path).length === 1 ? first() : ack()));

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
      transaction_type: 'sale',
      transaction_status: 'approved',
      trace_id: answer.body.trace_id,
      application_key: gw.merchant.application_key,
      merchant_id: gw.merchant.merchant_id,
      pin: 'cust-42',
      amount: 1999,
      currency: 'USD',
      charge_amount: 1999,
      charge_currency: 'USD',
      payment_method: 'card',
      payment_processor: 'sandbox',
      version: '1.2',
      card_number: '411111******1111',
      card_token: answer.body.card_token,
      variable1: 'cart-7',
      error_code: '0',
    });
    expect(body.frontend).toBeUndefined();
    expect(typeof body.timestamp).toBe('number');
    expect(request.body).not.toContain(VISA);

    const [notification] = await viewWhen(gw.url, answer.body.trace_id, (n) => n[0]?.state === 'delivered', 'delivered state');
    expect(notification).toMatchObject({
      state: 'delivered',
      attempt_count: 1,
      last_error: null,
      next_attempt_at: null,
      transaction_status: 'approved',
    });
    expect(notification!.attempts).toMatchObject([
      { attempt_no: 1, outcome: 'delivered', http_status: 200, reason: 'acknowledged (status 0)' },
    ]);
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
      frontend: gw.merchant.frontend,
      version: '1.1',
      trace_id: answer.body.trace_id,
      amount: 2500,
      currency: 'EUR',
      charge_amount: 2500,
      charge_currency: 'EUR',
      card_number: '555555******4444',
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

  it.concurrent(
    'a failed informational notification is superseded by the later status: never resent, and the final one goes out at once',
    async () => {
      const path = '/notify/in-order';
      // The merchant asks for the pending_async one again every time (status -1), so however late
      // the approval comes on a slow host it can only end superseded, never delivered by a resend.
      receiver.setReply(path, (request) =>
        notificationOf(request).transaction_status === 'pending_async' ? signedReply(secret, -1, 'busy') : ack(),
      );
      const answer = await sale(saleA(gw.merchant, { cvv: '333', notification_url: `${receiver.url}${path}` }));
      expect(answer.body).toMatchObject({ transaction_status: 'pending_async' });
      await receiver.waitForRequest((r) => r.path === path, 15_000);
      // The customer approves while the first notification (pending_async) waits for its resend.
      const approve = await fetch(answer.body.redirect_url as string, {
        method: 'POST',
        body: new URLSearchParams({ action: 'approve' }),
        redirect: 'manual',
      });
      expect(approve.status).toBe(303);
      const notifications = await viewWhen(
        gw.url,
        answer.body.trace_id,
        (n) => n.length === 2 && n[1]!.state === 'delivered',
        'the approval delivered',
      );
      expect(notifications.map((n) => n.transaction_status)).toEqual(['pending_async', 'approved']);
      expect(notifications[0]).toMatchObject({ state: 'superseded', last_error: 'superseded by a later status of the transaction' });
      await sleep(1_500); // longer than the 1 s resend delay: the superseded one is not sent again
      const seen = receiver.requestsTo(path).map((r) => notificationOf(r).transaction_status);
      // pending_async as often as it was tried before the approval, then the approval once, and nothing after it.
      expect(seen.at(-1)).toBe('approved');
      expect(seen.slice(0, -1).length).toBeGreaterThanOrEqual(1);
      expect(new Set(seen.slice(0, -1))).toEqual(new Set(['pending_async']));
    },
  );

  it.concurrent('notifies an asynchronous outcome: CVV 222 answers pending, the approval is notified later', async () => {
    const path = '/notify/async';
    receiver.setReply(path, ack());
    const answer = await sale(saleA(gw.merchant, { cvv: '222', notification_url: `${receiver.url}${path}` }));
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'pending' });
    const request = await receiver.waitForRequest((r) => r.path === path, 15_000);
    const body = notificationOf(request);
    expect(merchantVerify(body, secret)).toBe(true);
    expect(body).toMatchObject({
      trace_id: answer.body.trace_id,
      transaction_status: 'approved',
      charge_amount: 1999,
      charge_currency: 'USD',
    });
    await viewWhen(gw.url, answer.body.trace_id, (n) => n.length === 1 && n[0]!.state === 'delivered', 'delivered state');
  });

  it.concurrent('notifies an asynchronous decline: CVV 223 answers pending, the rejection is notified later, signed', async () => {
    const path = '/notify/async-decline';
    receiver.setReply(path, ack());
    const answer = await sale(saleA(gw.merchant, { cvv: '223', notification_url: `${receiver.url}${path}` }));
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'pending' });
    const request = await receiver.waitForRequest((r) => r.path === path, 15_000);
    const body = notificationOf(request);
    expect(merchantVerify(body, secret)).toBe(true);
    // A body changed after signing no longer verifies: the check above is a real one.
    expect(merchantVerify({ ...body, transaction_status: 'approved' }, secret)).toBe(false);
    expect(body).toMatchObject({
      trace_id: answer.body.trace_id,
      transaction_type: 'sale',
      transaction_status: 'rejected',
      amount: 1999,
      currency: 'USD',
      charge_amount: 1999,
      charge_currency: 'USD',
      version: '1.2',
      card_number: '411111******1111',
    });
    expect(String(body.error_details)).toMatch(/Declined by the asynchronous processor/);
    expect(body.card_token).toBeUndefined(); // only approved sales carry one
    const [notification] = await viewWhen(
      gw.url,
      answer.body.trace_id,
      (n) => n.length === 1 && n[0]!.state === 'delivered',
      'delivered state',
    );
    expect(notification).toMatchObject({ kind: 'transaction', transaction_status: 'rejected', attempt_count: 1 });
    // The pending answer itself was never notified: the merchant saw one notification, the final one.
    expect(receiver.requestsTo(path).map((r) => notificationOf(r).transaction_status)).toEqual(['rejected']);
  });

  it('operator API for subscription events: listed with their attempts (trace_id null), resent on demand', async () => {
    const path = '/notify/subscription-events';
    // The first send fails (HTTP 503), the resend is acknowledged.
    firstThenAck(path, () => ({ status: 503, body: { error: 'maintenance' } }));
    const plan = await createPlanVia(gw.url, gw.merchant, { name: `Operator view ${Date.now()}` });
    const card_token = await tokenize(gw.url, gw.merchant, 'cust-sub-view');
    const created = await subscribeVia(gw.url, gw.merchant, plan, card_token, {
      cid: 'cust-sub-view',
      notification_url: `${receiver.url}${path}`,
    });
    const subscription_id = String(created.subscription_id);

    const allDelivered = (count: number) => async () => {
      const view = await operatorGetSubscription(gw.url, subscription_id);
      const { notifications } = view.body;
      return view.http_status === 200 &&
        notifications.length > 0 &&
        notifications.every((n) => n.state === 'delivered') &&
        notifications.reduce((sum, n) => sum + n.attempt_count, 0) === count
        ? view.body
        : undefined;
    };
    // subscription.created (sent twice) and the first charge's subscription.renewed, in order.
    const delivered = await waitUntil(allDelivered(3), "the subscription's events delivered");
    expect(delivered).toMatchObject({ status: 0, subscription_id });
    expect(delivered.notifications.map((n) => n.event)).toEqual(['subscription.created', 'subscription.renewed']);
    for (const n of delivered.notifications) expect(n).toMatchObject({ kind: 'subscription_event', trace_id: null, subscription_id });
    const [event] = delivered.notifications;
    expect(event).toMatchObject({
      kind: 'subscription_event',
      trace_id: null,
      subscription_id,
      event: 'subscription.created',
      transaction_status: 'active',
      state: 'delivered',
      attempt_count: 2,
      last_error: null,
      in_flight: false,
    });
    expect(event!.body).toMatchObject({
      event: 'subscription.created',
      subscription_id,
      merchant_id: gw.merchant.merchant_id,
      version: '1.3',
    });
    expect(event!.attempts).toMatchObject([
      { attempt_no: 1, outcome: 'retry', http_status: 503, reason: 'HTTP 503' },
      { attempt_no: 2, outcome: 'delivered', http_status: 200 },
    ]);

    // The operator's resend works for an event too: the same bytes and the same Gt-Authentication again.
    const resent = await operatorResend(gw.url, event!.id);
    expect(resent.http_status).toBe(200);
    expect(resent.body.notification).toMatchObject({ id: event!.id, kind: 'subscription_event', trace_id: null, state: 'pending' });
    const after = await waitUntil(allDelivered(4), 'the operator-requested delivery');
    expect(after.notifications.map((n) => n.attempt_count)).toEqual([3, 1]);
    const requests = receiver.requestsTo(path).filter((r) => notificationOf(r).event === 'subscription.created');
    expect(requests).toHaveLength(3);
    expect(new Set(requests.map((r) => r.body)).size).toBe(1);
    expect(new Set(requests.map((r) => r.headers['gt-authentication'])).size).toBe(1);
    // The header verifies with the merchant's own computation (decisions.md §2).
    const body = notificationOf(requests[2]!);
    const signed = ['event', 'merchant_id', 'application_key', 'cid', 'plan_id', 'subscription_id', 'subscription_status', 'timestamp']
      .map((name) => String(body[name] ?? ''))
      .join('');
    expect(requests[2]!.headers['gt-authentication']).toBe(sha384(`${signed}${secret}`));

    // Not listed under a transaction, and the route guards like the others.
    expect((await operatorGetSubscription(gw.url, subscription_id, null)).http_status).toBe(401);
    expect((await operatorGetSubscription(gw.url, subscription_id, 'wrong-token-0123456789')).http_status).toBe(401);
    const unknown = await operatorGetSubscription(gw.url, 'sub_000000000000000000000000');
    expect(unknown.http_status).toBe(404);
    expect(unknown.body).toMatchObject({ status: 31 });
    expect((await operatorGetSubscription(gw.url, 'no%20such')).http_status).toBe(400);
    const openapi = (await (await fetch(`${gw.url}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(openapi.paths)).toContain('/operator/subscriptions/{subscription_id}/notifications');
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
    const [again] = await viewWhen(
      gw.url,
      answer.body.trace_id,
      (n) => n[0]?.state === 'delivered' && n[0].attempt_count === 2,
      'second delivery',
    );
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
    expect(Object.keys(openapi.paths)).toEqual(
      expect.arrayContaining(['/operator/transactions/{trace_id}/notifications', '/operator/notifications/{id}/resend']),
    );
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
    const answer = await postSigned(
      gw.url,
      '/api/process',
      saleA(gw.merchant, { notification_url: `${receiver.url}${path}` }),
      gw.merchant.secret,
    );
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

    // A manual resend of this notification, far past its 72 h, gets a whole bound of its own: it
    // fails once more and is resent on the schedule, rather than failed again after one attempt.
    const resent = await operatorResend(gw.url, failed!.id);
    expect(resent.http_status).toBe(200);
    const [after_resend] = await viewWhen(gw.url, answer.body.trace_id, (n) => n[0]?.attempt_count === 4, "the operator's resend");
    expect(after_resend).toMatchObject({ state: 'pending', last_error: 'HTTP 500' });
    const wait_ms = Date.parse(after_resend!.next_attempt_at!) - Date.parse(after_resend!.attempts[3]!.at);
    expect(wait_ms).toBeGreaterThanOrEqual(299_000);
    expect(wait_ms).toBeLessThanOrEqual(301_000);
    await advance(300);
    const [fifth] = await viewWhen(
      gw.url,
      answer.body.trace_id,
      (n) => n[0]?.attempt_count === 5,
      "the scheduled resend after the operator's",
    );
    expect(fifth).toMatchObject({ state: 'pending' });
    // And the fresh bound ends like the first: 72 h after the resend.
    await advance(72 * 3600);
    const [failed_again] = await viewWhen(gw.url, answer.body.trace_id, (n) => n[0]?.state === 'failed', 'failed again after 72 h');
    expect(failed_again).toMatchObject({ attempt_count: 6, next_attempt_at: null });
    expect(new Set(receiver.requestsTo(path).map((r) => r.body)).size).toBe(1);
  });

  it('advancing the sandbox clock during an attempt does not end its lease: no second send while the first is in flight', async () => {
    const path = '/notify/held-while-clock-moves';
    const hold = holdReplies(receiver, path);
    // Stamped with the gateway's clock: an earlier test may have moved it (the 60-second window follows it).
    const timestamp = Math.floor(gw.gateway.clock.now_ms() / 1000);
    const answer = await postSigned(
      gw.url,
      '/api/process',
      saleA(gw.merchant, { notification_url: `${receiver.url}${path}`, timestamp }),
      gw.merchant.secret,
    );
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'approved' });
    await receiver.waitForRequest((r) => r.path === path, 15_000);
    // The lease (60 s) and the bound (72 h) both lie far behind the gateway clock after this.
    await advance(100 * 3600);
    // 40 poll rounds of the worker (every 50 ms) while the first attempt is still waiting for its reply.
    await sleep(2_000);
    expect(receiver.requestsTo(path)).toHaveLength(1);
    const [in_flight] = (await operatorGet(gw.url, answer.body.trace_id)).body.notifications;
    expect(in_flight).toMatchObject({ state: 'pending', attempt_count: 0, in_flight: true });
    // A manual resend now would race the attempt in flight: refused with a clear answer, nothing changed.
    const conflict = await operatorResend(gw.url, in_flight!.id);
    expect(conflict.http_status).toBe(409);
    expect(conflict.body).toMatchObject({
      status: 16,
      notification: { id: in_flight!.id, state: 'pending', in_flight: true, attempt_count: 0 },
    });
    expect(String(conflict.body.description)).toMatch(/in flight/);

    hold.release(signedReply(gw.merchant.secret));
    const [delivered] = await viewWhen(gw.url, answer.body.trace_id, (n) => n[0]?.state === 'delivered', 'delivery of the held attempt');
    expect(delivered).toMatchObject({ attempt_count: 1, in_flight: false });
    expect(delivered!.attempts).toMatchObject([{ attempt_no: 1, outcome: 'delivered' }]);
    await sleep(500);
    expect(receiver.requestsTo(path)).toHaveLength(1);

    // Once the attempt has ended, the same resend is accepted and sends it again.
    const resent = await operatorResend(gw.url, in_flight!.id);
    expect(resent.http_status).toBe(200);
    await waitUntil(() => receiver.requestsTo(path).length === 2 && hold.held() === 1, 'the resend, held at the merchant');
    hold.release(signedReply(gw.merchant.secret));
    const [again] = await viewWhen(
      gw.url,
      answer.body.trace_id,
      (n) => n[0]?.state === 'delivered' && n[0].attempt_count === 2,
      'the resend delivered',
    );
    expect(again!.attempts.map((a) => a.outcome)).toEqual(['delivered', 'delivered']);
    expect(receiver.requestsTo(path)).toHaveLength(2);
    expect(receiver.requestsTo(path)[1]!.body).toBe(receiver.requestsTo(path)[0]!.body);
  });
});

/** Names the live-mode tests resolve, without any DNS query, to private and link-local addresses. */
const FAKE_HOSTS: Record<string, readonly string[]> = {
  'merchant-lan.test': ['192.168.7.7'],
  'merchant-private.test': ['10.1.2.3'],
  'metadata.test': ['169.254.169.254'],
  'mixed.test': ['10.0.0.5', '169.254.1.1', 'fd00::5'],
};

interface OutboundGuard {
  /** Connections the guard stopped: anything that would have left the machine. */
  readonly blocked: string[];
  /** Names answered by the fake resolver. */
  readonly faked: string[];
  restore(): void;
}

function isLoopback(address: string): boolean {
  return /^127\./.test(address) || address === '::1' || /^::ffff:127\./i.test(address);
}

/**
 * For the live-mode tests, in this test process (the gateway runs in it): no connection may leave
 * the machine, whatever the gateway does. A TCP connect to an IP literal other than loopback, or to
 * a name whose lookup answers such an address, is recorded and failed before it connects. dns.lookup
 * (which the gateway's checked lookup calls) answers FAKE_HOSTS from the table and fails every other
 * name but localhost, so no DNS query is sent either. A gateway that refuses a destination itself,
 * before connecting, leaves `blocked` empty.
 */
function guardOutbound(fake_hosts: Record<string, readonly string[]>): OutboundGuard {
  const blocked: string[] = [];
  const faked: string[] = [];
  const dns_module = dns as unknown as { lookup: (...args: unknown[]) => void };
  const original_lookup = dns_module.lookup;
  const original_connect = net.Socket.prototype.connect;
  type Callback = (error: NodeJS.ErrnoException | null, address?: unknown, family?: number) => void;

  dns_module.lookup = (hostname: unknown, options: unknown, callback?: unknown): void => {
    const done = (typeof options === 'function' ? options : callback) as Callback;
    const all = typeof options === 'object' && options !== null && (options as dns.LookupOptions).all === true;
    const addresses = typeof hostname === 'string' ? fake_hosts[hostname] : undefined;
    if (addresses) {
      faked.push(hostname as string);
      const entries = addresses.map((address) => ({ address, family: net.isIPv6(address) ? 6 : 4 }));
      process.nextTick(() => (all ? done(null, entries) : done(null, entries[0]!.address, entries[0]!.family)));
      return;
    }
    if (hostname === 'localhost' || (typeof hostname === 'string' && net.isIP(hostname) !== 0)) {
      if (typeof options === 'function') original_lookup.call(dns, hostname, options);
      else original_lookup.call(dns, hostname, options, callback);
      return;
    }
    process.nextTick(() =>
      done(Object.assign(new Error(`getaddrinfo ENOTFOUND ${String(hostname)} (no DNS in this test)`), { code: 'ENOTFOUND' })),
    );
  };

  net.Socket.prototype.connect = function guardedConnect(this: net.Socket, ...args: unknown[]): net.Socket {
    const refuse = (what: string): net.Socket => {
      blocked.push(what);
      process.nextTick(() => this.destroy(Object.assign(new Error(`test guard: no connection to ${what}`), { code: 'ETESTGUARD' })));
      return this;
    };
    const first = Array.isArray(args[0]) ? (args[0] as unknown[])[0] : args[0];
    if (typeof first !== 'object' || first === null) {
      const host = typeof args[1] === 'string' ? args[1] : 'localhost';
      if (host !== 'localhost' && !isLoopback(host)) return refuse(host);
      return (original_connect as (...a: unknown[]) => net.Socket).apply(this, args);
    }
    const options = first as { host?: string; path?: string; lookup?: (...a: unknown[]) => void };
    if (typeof options.path === 'string') return (original_connect as (...a: unknown[]) => net.Socket).apply(this, args); // a Unix socket
    const host = options.host ?? 'localhost';
    if (net.isIP(host) !== 0) {
      if (!isLoopback(host)) return refuse(host);
    } else {
      const lookup = options.lookup ?? dns_module.lookup;
      options.lookup = (hostname: unknown, lookup_options: unknown, callback_arg: unknown) =>
        lookup(hostname, lookup_options, (error: NodeJS.ErrnoException | null, address: unknown, family?: number) => {
          const callback = callback_arg as Callback;
          if (error) return callback(error, address, family);
          const list = Array.isArray(address) ? (address as { address: string }[]).map((a) => a.address) : [String(address)];
          const outside = list.filter((a) => !isLoopback(a));
          if (outside.length > 0) {
            blocked.push(`${String(hostname)} → ${outside.join(', ')}`);
            return callback(Object.assign(new Error('test guard: no connection outside loopback'), { code: 'ETESTGUARD' }));
          }
          return callback(null, address, family);
        });
    }
    return (original_connect as (...a: unknown[]) => net.Socket).apply(this, args);
  } as typeof net.Socket.prototype.connect;

  return {
    blocked,
    faked,
    restore() {
      dns_module.lookup = original_lookup;
      net.Socket.prototype.connect = original_connect;
    },
  };
}

describe.each(storeKinds())('outbound safety in live mode on %s', (kind) => {
  let receiver: MerchantReceiver;
  let guard: OutboundGuard;
  const gateways: TestGateway[] = [];
  beforeAll(async () => {
    receiver = await startMerchantReceiver();
    // Make sure the fake resolver is the one the gateway's lookup calls before any test name is
    // resolved (probed with localhost, which the real resolver answers from /etc/hosts).
    const probe: Record<string, readonly string[]> = { localhost: ['10.9.9.9'] };
    const probing = guardOutbound(probe);
    const answer = await new Promise<unknown>((resolve) => {
      checkedLookup(true)('localhost', { all: true }, (error, address) => resolve(error ?? address));
    });
    probing.restore();
    expect(answer).toEqual([{ address: '10.9.9.9', family: 4 }]);
    guard = guardOutbound(FAKE_HOSTS);
  });
  afterAll(async () => {
    for (const g of gateways) await g.close();
    await receiver?.close();
    guard?.restore();
  });

  /** Live mode has no sandbox processor: the transaction and its status change are written directly. */
  async function notifyVia(gw: TestGateway, url: string): Promise<number> {
    const merchant = await gw.createMerchant();
    return gw.gateway.deps.store.transaction(async (tx) => {
      const trace_id = (await tx.transactions.insertIfAbsent(transactionFixture(merchant.merchant_id, { notification_url: url })))!;
      const row = (await tx.transactions.get(trace_id))!;
      const outcome = await changeStatus(tx, row, { to: 'approved', reason: 'test' }, gw.gateway.clock.now_ms());
      expect(outcome.kind).toBe('changed');
      return trace_id;
    });
  }

  it('refuses loopback destinations (IP literal and a name resolving to one) at once, never resent, unless PAYGATE_ALLOW_PRIVATE_URLS=true', async () => {
    const live = await startTestGateway(kind, { env: { ...FAST, PAYGATE_ENV: 'live' } });
    gateways.push(live);
    receiver.setReply('/live', { status: 200, body: {} });
    const port = new URL(receiver.url).port;
    for (const url of [`http://127.0.0.1:${port}/live`, `http://localhost:${port}/live`, `http://[::1]:${port}/live`]) {
      const trace_id = await notifyVia(live, url);
      const [notification] = await viewWhen(live.url, trace_id, (n) => (n[0]?.attempt_count ?? 0) >= 1, `attempt to ${url}`);
      // Failed at once: no resend can reach a destination the policy refuses.
      expect(notification, url).toMatchObject({ state: 'failed', last_error: 'destination not allowed', attempt_count: 1 });
      expect(notification!.attempts[0]).toMatchObject({ outcome: 'undeliverable', http_status: null, reason: 'destination not allowed' });
    }
    expect(receiver.requestsTo('/live')).toHaveLength(0);

    const allowed = await startTestGateway(kind, { env: { ...FAST, PAYGATE_ENV: 'live', PAYGATE_ALLOW_PRIVATE_URLS: 'true' } });
    gateways.push(allowed);
    const allowed_path = '/live-allowed';
    const trace_id = await notifyVia(allowed, `${receiver.url}${allowed_path}`);
    await receiver.waitForRequest((r) => r.path === allowed_path, 15_000);
    const [notification] = await viewWhen(
      allowed.url,
      trace_id,
      (n) => (n[0]?.attempt_count ?? 0) >= 1,
      'attempt with private URLs allowed',
    );
    // The receiver answers an unsigned {} here: reached, and resent as unrecognized.
    expect(notification!.attempts[0]).toMatchObject({ http_status: 200, reason: 'reply not signed' });
    expect(guard.blocked).toEqual([]);
  });

  it('refuses private and link-local destinations, IP literals and names resolving to them, without connecting', async () => {
    const live = await startTestGateway(kind, { env: { ...FAST, PAYGATE_ENV: 'live' } });
    gateways.push(live);
    const literals = [
      'http://10.20.30.40/notify',
      'http://192.168.1.20:8080/notify',
      'http://172.16.5.4/notify',
      'http://169.254.169.254/latest/meta-data',
      'http://[fe80::1]/notify',
      'http://[fd12:3456::1]/notify',
      'http://[::ffff:10.0.0.1]/notify',
    ];
    const names = [
      'http://merchant-lan.test/notify',
      'https://merchant-private.test:8443/notify',
      'http://metadata.test/latest/meta-data',
      'http://mixed.test/notify',
    ];
    const checked = await Promise.all(
      [...literals, ...names].map(async (url) => {
        const trace_id = await notifyVia(live, url);
        const [notification] = await viewWhen(live.url, trace_id, (n) => (n[0]?.attempt_count ?? 0) >= 1, `attempt to ${url}`);
        return { url, notification: notification! };
      }),
    );
    for (const { url, notification } of checked) {
      expect(notification, url).toMatchObject({ state: 'failed', last_error: 'destination not allowed', attempt_count: 1 });
      expect(notification.attempts[0], url).toMatchObject({
        outcome: 'undeliverable',
        http_status: null,
        reply_excerpt: null,
        reason: 'destination not allowed',
      });
      // An IP literal is refused before any socket exists.
      if (literals.includes(url)) expect(notification.attempts[0]!.duration_ms, url).toBe(0);
    }
    // The names were resolved (by the fake resolver) and refused on their addresses; nothing connected anywhere.
    expect(new Set(guard.faked)).toEqual(new Set(Object.keys(FAKE_HOSTS)));
    expect(guard.blocked).toEqual([]);
  });

  it("refuses a cashier session's validation_url on a private or link-local address: the payment is refused, nothing connects", async () => {
    const live = await startTestGateway(kind, { env: { ...FAST, PAYGATE_ENV: 'live' } });
    gateways.push(live);
    // The merchant's gateway, as live mode would reach it: a connector that stands for any
    // processor and fails the test if the payment ever gets that far.
    const processor_calls: string[] = [];
    const now_ms = Date.now();
    await live.gateway.deps.store.merchants.insertGateway({
      gateway_id: 'a1'.repeat(16),
      merchant_id: live.merchant.merchant_id,
      connector: 'sandbox',
      currencies: 'USD',
      mit_enabled: 1,
      hold_payouts: 0,
      settings_sealed: null,
      created_at_ms: now_ms,
      updated_at_ms: now_ms,
    });
    const standIn = new Proxy(
      { name: 'sandbox', cashier_texts: undefined },
      {
        get: (target, property) =>
          property in target
            ? target[property as 'name']
            : () => {
                processor_calls.push(String(property));
                throw new Error('the processor was reached although the validation request was refused');
              },
      },
    );
    const connectors = live.gateway.deps.connectors as unknown as {
      runsHere: (name: string) => boolean;
      forGateway: (gateway: unknown) => unknown;
    };
    connectors.runsHere = () => true;
    connectors.forGateway = () => standIn;
    // The shop's own URLs are public in live mode (a loopback one is refused when the request arrives).
    const shop = { notification_url: 'http://shop.test/notify', return_url: 'http://shop.test/return' };
    // An IP literal outside public space is refused when the session is opened: nothing is stored.
    for (const validation_url of [
      'http://10.0.0.7/validate',
      'http://169.254.169.254/validate',
      'http://[fd00::7]/validate',
      'http://localhost:9/validate',
    ]) {
      const answer = await openSession(live, '/api/init-pay-in', initPayIn(live.merchant, receiver.url, { ...shop, validation_url }));
      expect(answer.body, validation_url).toMatchObject({
        status: 10,
        description: 'Invalid field: validation_url (a loopback, private or link-local address)',
      });
    }
    // A name is resolved only when the gateway connects: the payment is refused then.
    const urls = ['http://merchant-lan.test/validate', 'http://metadata.test/validate'];
    for (const validation_url of urls) {
      const answer = await openSession(live, '/api/init-pay-in', initPayIn(live.merchant, receiver.url, { ...shop, validation_url }));
      expect(answer.body, validation_url).toMatchObject({ status: 0 });
      const customer = new CashierCustomer(live.url);
      const page = await customer.login(answer.body.redirect_url as string);
      const refused = await customer.payByCard(page.text, { amount: '10' });
      expect(refused.status, validation_url).toBe(200);
      expect(textOf(refused.text), validation_url).toMatch(/could not confirm this payment/);
    }
    expect(receiver.requestsTo('/validate')).toHaveLength(0);
    expect(processor_calls).toEqual([]);
    expect(guard.blocked).toEqual([]);
    // The reason is on record for the operator: the address policy, not a failed connection.
    const reasons = await waitUntil(() => {
      const lines = fs
        .readFileSync(live.log_file, 'utf8')
        .split('\n')
        .filter((line) => line.includes('"validation request"'));
      return lines.length >= urls.length ? lines.map((line) => (JSON.parse(line) as { reason?: string }).reason) : undefined;
    }, 'the validation requests in the log');
    expect(reasons).toEqual(urls.map(() => 'destination not allowed'));
  });
});
