// The SDK's handler for what the gateway sends, on plain Node http, Express and Fastify, fed by a
// real gateway: real notifications of real sales, a validation request of a real cashier deposit,
// a subscription event, the operator's test notification. Each reply is the one the gateway takes
// (it records the notification delivered, refused, or resends it). Every message received is also
// held against the webhook schemas of /openapi.json, which the SDK's types are generated from.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Ajv, type ValidateFunction } from 'ajv';
import express from 'express';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createWebhookHandler,
  type PaygateClient,
  type SubscriptionEventNotification,
  type TransactionNotification,
  type ValidationRequest,
  type WebhookError,
  type WebhookHandler,
  type WebhookHandlerOptions,
  signBody,
} from '@paygate/sdk';
import { ADMIN_TOKEN, type TestGateway } from '../../../test/support/gateway.js';
import { CashierCustomer, textOf } from '../../../test/support/cashier.js';
import { waitUntil } from '../../../test/support/notification-merchant.js';
import { CARD, clientFor, orderId, saleFields, withGateway } from './support.js';

/** What a handler received, by kind, and what it reported. */
interface Inbox {
  transactions: TransactionNotification[];
  validations: ValidationRequest[];
  events: SubscriptionEventNotification[];
  tests: TransactionNotification[];
  errors: WebhookError[];
}

function newInbox(): Inbox {
  return { transactions: [], validations: [], events: [], tests: [], errors: [] };
}

function handlerFor(secret: string, inbox: Inbox, overrides: Partial<WebhookHandlerOptions> = {}): WebhookHandler {
  return createWebhookHandler({
    secret,
    on_transaction: (n) => void inbox.transactions.push(n),
    on_validation: (v) => {
      inbox.validations.push(v);
      return { accept: true };
    },
    on_subscription_event: (e) => void inbox.events.push(e),
    on_test_notification: (n) => void inbox.tests.push(n),
    on_error: (e) => void inbox.errors.push(e),
    ...overrides,
  });
}

interface Listening {
  readonly url: string;
  close(): Promise<void>;
}

async function listen(server: http.Server): Promise<Listening> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function operator(gw: TestGateway, path: string, init: RequestInit = {}): Promise<Record<string, unknown>> {
  const response = await fetch(`${gw.url}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(init.body ? { 'content-type': 'application/json' } : {}) },
  });
  return (await response.json()) as Record<string, unknown>;
}

interface NotificationView {
  state: string;
  attempt_count: number;
  last_error: string | null;
  transaction_status: string;
}

async function notificationsOf(gw: TestGateway, trace_id: number): Promise<NotificationView[]> {
  return (await operator(gw, `/operator/transactions/${trace_id}/notifications`)).notifications as NotificationView[];
}

/** Waits until the gateway has recorded the transaction's last notification in `state`. */
async function settled(gw: TestGateway, trace_id: number, state: string): Promise<NotificationView> {
  return waitUntil(async () => {
    const last = (await notificationsOf(gw, trace_id)).at(-1);
    return last?.state === state ? last : undefined;
  }, `notification of ${trace_id} ${state}`);
}

describe('webhook handler fed by a real gateway', () => {
  let gw: TestGateway;
  let client: PaygateClient;
  const schemas: Record<string, ValidateFunction> = {};
  const received: { kind: string; body: unknown }[] = [];
  withGateway((started) => (gw = started));

  beforeAll(async () => {
    client = clientFor(gw, gw.merchant);
    const doc = (await (await fetch(`${gw.url}/openapi.json`)).json()) as {
      webhooks: Record<string, { post: { requestBody: { content: { 'application/json': { schema: object } } } } }>;
    };
    const ajv = new Ajv({ strict: false, allErrors: true });
    for (const [name, hook] of Object.entries(doc.webhooks))
      schemas[name] = ajv.compile(hook.post.requestBody.content['application/json'].schema);
  });
  afterAll(() => {
    client.close();
    // Every message any handler received in this file matches its schema in /openapi.json, extra fields refused.
    const names: Record<string, string> = {
      transaction: 'transactionNotification',
      test: 'transactionNotification',
      validation: 'validationRequest',
      event: 'subscriptionEvent',
    };
    expect(received.length).toBeGreaterThan(5);
    for (const { kind, body } of received) {
      const validate = schemas[names[kind]!]!;
      expect(validate(body), `${kind}: ${JSON.stringify(validate.errors)} in ${JSON.stringify(body)}`).toBe(true);
    }
  });

  /** Records every message for the schema check (and signature: the schemas require one where the body is signed). */
  const recording = (inbox: Inbox): Partial<WebhookHandlerOptions> => ({
    on_transaction: (n) => {
      inbox.transactions.push(n);
      received.push({ kind: 'transaction', body: n });
    },
    on_validation: (v) => {
      inbox.validations.push(v);
      received.push({ kind: 'validation', body: v });
      return { accept: true };
    },
    on_subscription_event: (e) => {
      inbox.events.push(e);
      received.push({ kind: 'event', body: e });
    },
    on_test_notification: (n) => {
      inbox.tests.push(n);
      received.push({ kind: 'test', body: n });
    },
  });

  describe('plain Node http', () => {
    const inbox = newInbox();
    let site: Listening;
    let handler: WebhookHandler;
    beforeAll(async () => {
      handler = handlerFor(gw.merchant.secret, inbox, recording(inbox));
      site = await listen(http.createServer((request, response) => void handler.node(request, response)));
    });
    afterAll(() => site.close());

    it("a sale's notification arrives typed and verified; the signed reply makes the gateway record it delivered", async () => {
      const answer = await client.sale(saleFields({ notification_url: `${site.url}/paygate` }));
      if (answer.kind !== 'ok') throw new Error(JSON.stringify(answer));
      const trace_id = answer.answer.trace_id!;
      const notification = await waitUntil(() => inbox.transactions.find((n) => n.trace_id === trace_id), 'the notification');
      expect(notification).toMatchObject({
        transaction_type: 'sale',
        transaction_status: 'approved',
        version: '1.2',
        amount: 1999,
        card_number: '411111******1111',
      });
      // The discriminant narrows the variant: a 1.2 notification names the application_key.
      if (notification.version === '1.2') expect(notification.application_key).toBe(gw.merchant.application_key);
      expect(await settled(gw, trace_id, 'delivered')).toMatchObject({ attempt_count: 1 });
    });

    it('a 3-D Secure sale notifies pending_async, then the final status after the customer approves', async () => {
      const answer = await client.sale(saleFields({ cvv: '333', notification_url: `${site.url}/paygate` }));
      if (answer.kind !== 'ok') throw new Error(JSON.stringify(answer));
      const { trace_id, redirect_url } = answer.answer;
      // The customer approves on the sandbox's 3-D Secure page (a plain form).
      const page = await (await fetch(redirect_url!)).text();
      const action = new URL(/action="([^"]+)"/.exec(page)![1]!.replace(/&amp;/g, '&'), redirect_url!).href;
      await fetch(action, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'action=approve',
      });
      const statuses = await waitUntil(() => {
        const mine = inbox.transactions.filter((n) => n.trace_id === trace_id).map((n) => n.transaction_status);
        return mine.includes('approved') ? mine : undefined;
      }, 'the approval');
      expect(statuses).toEqual(['pending_async', 'approved']);
    });

    it('an authorization notifies authorized; its partial capture approved with the captured amount; a chargeback the disputed amount; a void cancelled', async () => {
      const notify = { notification_url: `${site.url}/paygate` };
      const statusesOf = (trace_id: number) => inbox.transactions.filter((n) => n.trace_id === trace_id);
      const held = await client.authorize(saleFields({ amount: 4000, ...notify }));
      if (held.kind !== 'ok') throw new Error(JSON.stringify(held));
      const trace_id = held.answer.trace_id!;
      await waitUntil(() => statusesOf(trace_id).length === 1 || undefined, 'the authorization');
      expect(statusesOf(trace_id)[0]).toMatchObject({ transaction_type: 'authorize', transaction_status: 'authorized', amount: 4000 });

      const captured = await client.capture({ reference_id: trace_id, amount: 2500 });
      expect(captured).toMatchObject({ kind: 'ok', answer: { transaction_status: 'approved' } });
      await waitUntil(() => statusesOf(trace_id).length === 2 || undefined, 'the capture');
      expect(statusesOf(trace_id)[1]).toMatchObject({
        transaction_type: 'authorize',
        transaction_status: 'approved',
        amount: 2500,
        charge_amount: 2500,
      });

      // The processor's side of a dispute, made now by the sandbox's trigger, for part of the captured amount.
      const dispute = await operator(gw, `/sandbox/transactions/${trace_id}/chargeback`, {
        method: 'POST',
        body: JSON.stringify({ amount: 1000 }),
      });
      expect(dispute).toMatchObject({ status: 0, trace_id, transaction_status: 'chargeback' });
      await waitUntil(() => statusesOf(trace_id).length === 3 || undefined, 'the chargeback');
      expect(statusesOf(trace_id)[2]).toMatchObject({ transaction_type: 'authorize', transaction_status: 'chargeback', amount: 1000 });
      await settled(gw, trace_id, 'delivered');

      const other = await client.authorize(saleFields({ ...notify }));
      if (other.kind !== 'ok') throw new Error(JSON.stringify(other));
      expect(await client.void({ reference_id: other.answer.trace_id! })).toMatchObject({
        kind: 'ok',
        answer: { transaction_status: 'cancelled' },
      });
      await waitUntil(() => statusesOf(other.answer.trace_id!).length === 2 || undefined, 'the void');
      expect(statusesOf(other.answer.trace_id!).map((n) => [n.transaction_type, n.transaction_status])).toEqual([
        ['authorize', 'authorized'],
        ['authorize', 'cancelled'],
      ]);
    });

    it("a refund made at the processor: of the whole sale, reversed; of part of it, a refund transaction of the sale's order", async () => {
      const notify = { notification_url: `${site.url}/paygate` };
      const whole = await client.sale(saleFields({ ...notify }));
      if (whole.kind !== 'ok') throw new Error(JSON.stringify(whole));
      const whole_id = whole.answer.trace_id!;
      expect(await operator(gw, `/sandbox/transactions/${whole_id}/reversal`, { method: 'POST' })).toMatchObject({
        status: 0,
        transaction_status: 'reversed',
      });
      const reversed = await waitUntil(
        () => inbox.transactions.find((n) => n.trace_id === whole_id && n.transaction_status === 'reversed'),
        'the reversal',
      );
      expect(reversed).toMatchObject({ transaction_type: 'sale', amount: 1999 });

      const part = await client.sale(saleFields({ ...notify }));
      if (part.kind !== 'ok') throw new Error(JSON.stringify(part));
      const part_id = part.answer.trace_id!;
      const made = await operator(gw, `/sandbox/transactions/${part_id}/reversal`, {
        method: 'POST',
        body: JSON.stringify({ amount: 500 }),
      });
      expect(made).toMatchObject({ status: 0, trace_id: part_id, transaction_status: 'approved' });
      const refund = await waitUntil(() => inbox.transactions.find((n) => n.trace_id === made.refund_trace_id), 'the refund');
      const sale_notification = inbox.transactions.find((n) => n.trace_id === part_id)!;
      expect(refund).toMatchObject({
        transaction_type: 'refund',
        transaction_status: 'approved',
        amount: 500,
        reference_id: part_id,
        order_id: sale_notification.order_id,
      });
    });

    it("the operator's test notification is told apart from a real one", async () => {
      const answer = await operator(gw, `/operator/merchants/${gw.merchant.merchant_id}/test-notification`, {
        method: 'POST',
        body: JSON.stringify({ url: `${site.url}/paygate` }),
      });
      expect(answer).toMatchObject({ status: 0, delivered: true });
      expect(inbox.tests.at(-1)).toMatchObject({ trace_id: 0, test: '1' });
    });

    it('a message not signed with the secret is refused with 401 and reaches no function; too large is 413; GET is 405', async () => {
      const before = inbox.transactions.length;
      const forged: Record<string, unknown> = { ...inbox.transactions[0]!, transaction_status: 'approved', amount: 1 };
      forged.signature = signBody({ ...forged, signature: undefined }, 'not-the-secret');
      const refused = await fetch(`${site.url}/paygate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(forged),
      });
      expect(refused.status).toBe(401);
      expect(await refused.json()).toEqual({ status: 2, description: 'Invalid signature' });
      const unsigned = await fetch(`${site.url}/paygate`, { method: 'POST', body: JSON.stringify({ ...forged, signature: undefined }) });
      expect(unsigned.status).toBe(401);
      const large = await fetch(`${site.url}/paygate`, { method: 'POST', body: JSON.stringify({ padding: 'x'.repeat(70_000) }) });
      expect(large.status).toBe(413);
      expect((await fetch(`${site.url}/paygate`)).status).toBe(405);
      expect(inbox.transactions.length).toBe(before);
      expect(inbox.errors.map((e) => e.message)).toEqual(
        expect.arrayContaining(['signature does not verify', 'message is not signed', 'body over 65536 bytes']),
      );
    });
  });

  describe('a secret roll (docs/security.md §5)', () => {
    it('during the grace: the client on the old secret is answered with it, the handler takes the notification signed with the new one', async () => {
      const merchant = await gw.createMerchant();
      const rolled = await operator(gw, `/operator/merchants/${merchant.merchant_id}/roll-secret`, {
        method: 'POST',
        body: JSON.stringify({ grace_seconds: 3600 }),
      });
      const new_secret = rolled.secret as string;
      expect(new_secret).not.toBe(merchant.secret);
      const inbox = newInbox();
      const handler = handlerFor(merchant.secret, inbox, { ...recording(inbox), other_secrets: [new_secret] });
      const site = await listen(http.createServer((request, response) => void handler.node(request, response)));
      const old_client = clientFor(gw, merchant);
      try {
        const sale = await old_client.sale(saleFields({ notification_url: `${site.url}/paygate` }));
        if (sale.kind !== 'ok') throw new Error(JSON.stringify(sale));
        await settled(gw, sale.answer.trace_id!, 'delivered');
        expect(inbox.transactions.map((n) => n.trace_id)).toEqual([sale.answer.trace_id]);
      } finally {
        old_client.close();
        await site.close();
      }
    });
  });

  describe('Express', () => {
    const inbox = newInbox();
    const failures: string[] = [];
    let site: Listening;
    beforeAll(async () => {
      let failed_once = false;
      const handler = handlerFor(gw.merchant.secret, inbox, {
        ...recording(inbox),
        on_transaction: (n) => {
          // The first delivery of a sale whose variable1 asks for it fails: the gateway must resend it.
          if (n.variable1 === 'fail once' && !failed_once) {
            failed_once = true;
            failures.push(n.order_id);
            throw new Error('database unavailable');
          }
          if (n.variable1 === 'refuse') return { refuse: 'Unknown order' };
          inbox.transactions.push(n);
          received.push({ kind: 'transaction', body: n });
        },
      });
      const app = express();
      // With express.json() before it (the body arrives parsed) and without (the handler reads the stream).
      app.post('/parsed', express.json(), handler.express);
      app.post('/raw', handler.express);
      site = await listen(http.createServer(app));
    });
    afterAll(() => site.close());

    it('with and without express.json() before the handler', async () => {
      for (const path of ['/parsed', '/raw']) {
        const answer = await client.sale(saleFields({ notification_url: `${site.url}${path}` }));
        if (answer.kind !== 'ok') throw new Error(JSON.stringify(answer));
        await settled(gw, answer.answer.trace_id!, 'delivered');
        expect(
          inbox.transactions.some((n) => n.trace_id === answer.answer.trace_id),
          path,
        ).toBe(true);
      }
    });

    it('a function that throws answers status -1: the gateway sends the notification again and it is delivered', async () => {
      const answer = await client.sale(saleFields({ notification_url: `${site.url}/raw`, variable1: 'fail once' }));
      if (answer.kind !== 'ok') throw new Error(JSON.stringify(answer));
      const last = await settled(gw, answer.answer.trace_id!, 'delivered');
      expect(last.attempt_count).toBe(2);
      expect(failures).toHaveLength(1);
      expect(inbox.errors.some((e) => e.message === 'the transaction function failed: database unavailable')).toBe(true);
    });

    it('a refusal is status 1: recorded refused by the gateway and not sent again', async () => {
      const answer = await client.sale(saleFields({ notification_url: `${site.url}/parsed`, variable1: 'refuse' }));
      if (answer.kind !== 'ok') throw new Error(JSON.stringify(answer));
      const last = await settled(gw, answer.answer.trace_id!, 'refused');
      expect(last.last_error).toContain('Unknown order');
    });
  });

  describe('Fastify', () => {
    const inbox = newInbox();
    let app: FastifyInstance;
    let url: string;
    beforeAll(async () => {
      const handler = handlerFor(gw.merchant.secret, inbox, {
        ...recording(inbox),
        on_validation: (request) => {
          inbox.validations.push(request);
          received.push({ kind: 'validation', body: request });
          return request.amount > 5000 ? { refuse: 'Deposits above 50.00 need a verified account' } : { accept: true };
        },
      });
      app = Fastify();
      app.route(handler.fastifyRoute('/paygate'));
      app.post('/subscriptions', { bodyLimit: handler.max_body_bytes }, handler.fastify);
      url = await app.listen({ port: 0, host: '127.0.0.1' });
    });
    afterAll(() => app.close());

    it("a cashier deposit: the validation request is accepted, the deposit made and notified; one over the limit is refused with the shop's text", async () => {
      const session = await client.initPayIn({
        currency: 'USD',
        country: 'GB',
        pin: orderId('payer'),
        payment_method: 'card',
        first_name: 'Jane',
        last_name: 'Doe',
        dob: '1990-04-12',
        email: 'jane@example.com',
        phone: 441234567890,
        address: '1 Main Street',
        city: 'London',
        zip: 'SW1A 1AA',
        requester_ip: '203.0.113.7',
        return_url: 'https://shop.example/return',
        validation_url: `${url}/paygate`,
        notification_url: `${url}/paygate`,
      });
      if (session.kind !== 'ok') throw new Error(JSON.stringify(session));
      const customer = new CashierCustomer(gw.url);
      const page = await customer.login(session.answer.redirect_url!);
      const refused = await customer.payByCard(page.text, { ...CARD, amount: '75.00' });
      expect(textOf(refused.text)).toContain('Deposits above 50.00 need a verified account');
      const paid = await customer.payByCard((await customer.get('/cashier')).text, { ...CARD, amount: '20.00' });
      expect(paid.status).toBe(303);
      const validation = inbox.validations.at(-1)!;
      expect(validation).toMatchObject({
        transaction_type: 'sale',
        transaction_status: 'pending',
        amount: 2000,
        auth_token: session.answer.auth_token,
      });
      const notified = await waitUntil(
        () => inbox.transactions.find((n) => n.order_id === validation.order_id && n.transaction_status === 'approved'),
        'the deposit',
      );
      expect(notified.auth_token).toBe(session.answer.auth_token);
    });

    it('a subscription event, authenticated by its Gt-Authentication header, answered with one', async () => {
      const plan = await client.createPlan({
        name: 'Events',
        prices: [{ amount: 300, currency: 'USD' }],
        billing_cycle: 'weekly',
        trial_period: 7,
      });
      const token = await client.tokenize({ pin: 'cust-events', card_number: CARD.card_number, card_exp: CARD.card_exp });
      if (plan.kind !== 'ok' || token.kind !== 'ok') throw new Error('plan or token refused');
      const created = await client.createSubscription({
        plan_id: plan.answer.plan_id,
        price_id: plan.answer.prices[0]!.price_id,
        cid: orderId('cid'),
        card_token: token.answer.card_token!,
        notification_url: `${url}/subscriptions`,
      });
      if (created.kind !== 'ok') throw new Error(JSON.stringify(created));
      const event = await waitUntil(() => inbox.events.find((e) => e.subscription_id === created.answer.subscription_id), 'the event');
      expect(event).toMatchObject({ event: 'subscription.created', subscription_status: 'active', version: '1.3', price: { amount: 300 } });
      const recorded = await waitUntil(async () => {
        const list = (await operator(gw, `/operator/subscriptions/${created.answer.subscription_id}/notifications`))
          .notifications as NotificationView[];
        return list[0]?.state === 'delivered' ? list[0] : undefined;
      }, 'the event delivered');
      expect(recorded.attempt_count).toBe(1);
    });
  });
});
