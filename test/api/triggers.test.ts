// The sandbox's flow triggers (docs/triggers.md), on each store, through the real HTTP server, with
// the example shop (packages/example-shop) as the merchant's notification endpoint: every trigger
// ends in the notification it names, received by the shop and verified there by the SDK's handler
// (its signature, or a subscription event's Gt-Authentication header), and the body the trigger
// reports as sent is the one the shop received. The gateway runs without PAYGATE_ADMIN_TOKEN: the
// sandbox's own token opens the endpoint. `paygate trigger` runs as a process against it, finding
// the gateway by HOST/PORT and the token in the store. And the refusals, with nothing made.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReceivedMessage, RunningShop } from '../../packages/example-shop/src/shop.js';
import { NOTIFICATION_PATH, startShop } from '../../packages/example-shop/src/shop.js';
import { SANDBOX_TRIGGERS, type TriggerDefinition } from '../../src/domain/sandbox-triggers.js';
import { postJson } from '../support/client.js';
import { startTestGateway, type TestGateway, TEST_MASTER_KEY } from '../support/gateway.js';
import { waitUntil } from '../support/notification-merchant.js';
import { storeKinds } from '../support/stores.js';
import { CLI_ENTRY } from '../support/build.js';

const CLI = [CLI_ENTRY, 'trigger'];

/** `paygate trigger …` as a process. Never spawnSync: it would freeze this process, whose gateway the command calls. */
function runCli(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('error', reject);
    child.once('exit', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

/** The shop's verified message that is the trigger's end, for this run's transaction or subscription. */
function endReceived(shop: RunningShop, trigger: TriggerDefinition, answer: Record<string, unknown>): ReceivedMessage | undefined {
  const end = trigger.ends_in;
  return shop
    .received()
    .find((message) =>
      end.kind === 'subscription'
        ? message.kind === 'subscription_event' &&
          message.event.event === end.event &&
          message.event.subscription_id === answer.subscription_id
        : message.kind === 'transaction' &&
          message.notification.trace_id === answer.trace_id &&
          message.notification.transaction_type === end.transaction_type &&
          message.notification.transaction_status === end.status,
    );
}

describe.each(storeKinds())('sandbox flow triggers on %s', (kind) => {
  let gw: TestGateway;
  let shop: RunningShop;
  let token: string;
  let notification_url: string;
  beforeAll(async () => {
    gw = await startTestGateway(kind, {
      env: {
        // No operator token: the sandbox makes its own (issue 28).
        PAYGATE_ADMIN_TOKEN: '',
        // The sandbox's delays, short: the flows that wait for them end within a second or two.
        PAYGATE_SANDBOX_SETTLE_SECONDS: '1',
        PAYGATE_SANDBOX_ISSUER_TIMEOUT_SECONDS: '1',
        PAYGATE_BILLING_POLL_MS: '100',
      },
    });
    token = gw.gateway.deps.config.admin_token!;
    shop = await startShop({
      paygate: { base_url: gw.url, merchant_id: gw.merchant.merchant_id, secret: gw.merchant.secret, frontend: gw.merchant.frontend },
      port: 0,
      log: () => undefined,
    });
    notification_url = `${shop.url}${NOTIFICATION_PATH}`;
  });
  afterAll(async () => {
    await shop?.close();
    await gw?.close();
  });

  const trigger = (name: string, body: Record<string, unknown>, headers = { authorization: `Bearer ${token}` }) =>
    postJson(gw.url, `/sandbox/triggers/${name}`, body, headers);

  it('the sandbox made its own admin token, which opens the triggers', () => {
    expect(token).toMatch(/^sbx_adm_[A-Za-z0-9_-]{43}$/);
  });

  it.each(SANDBOX_TRIGGERS.map((t) => [t.name, t] as const))(
    '%s ends in the notification it names, received and verified by the example shop',
    async (name, definition) => {
      const answer = await trigger(name, { merchant_id: gw.merchant.merchant_id, notification_url });
      expect(answer.http_status, JSON.stringify(answer.body)).toBe(200);
      const body = answer.body;
      expect(body).toMatchObject({ status: 0, trigger: name, merchant_id: gw.merchant.merchant_id, reached: true });
      const named = body.notification as Record<string, any>;
      const end = definition.ends_in;
      expect(named.reports).toBe(end.kind === 'transaction' ? `${end.transaction_type} ${end.status}` : end.event);
      if (end.kind === 'transaction') {
        expect(body.trace_id).toEqual(expect.any(Number));
        expect(named.trace_id).toBe(body.trace_id);
        expect(body.status_now).toBe(end.status);
      } else {
        expect(body.subscription_id).toMatch(/^sub_/);
        expect(named.subscription_id).toBe(body.subscription_id);
      }
      // The shop's endpoint had it, verified: its handler only sees a message whose signature holds.
      const received = await waitUntil(() => endReceived(shop, definition, body), `the shop's ${name} message`);
      const message = received.kind === 'transaction' ? received.notification : received.event;
      // What the trigger reports as sent is what arrived, field for field.
      expect(message).toEqual(named.body);
      // The gateway read the shop's signed reply: the shop refuses what it did not sell (an order
      // or a subscription it never made), which ends the notification, as its reply says.
      expect(named.attempts).toBeGreaterThanOrEqual(1);
      expect(named.state).toBe('refused');
      expect(received.refused).toBe(end.kind === 'transaction' ? 'Unknown order' : 'This shop sells no subscriptions');
      if (end.kind === 'subscription') expect(named.headers['gt-authentication']).toMatch(/^[0-9a-f]{96}$/);
      else expect(message).toMatchObject({ trace_id: body.trace_id, signature: expect.stringMatching(/^[0-9a-f]{96}$/) });
      // Every other notification the flow reports was sent to the same endpoint.
      for (const sent of body.notifications as Record<string, any>[]) expect(sent.url).toBe(notification_url);
    },
  );

  it('the flows are real: a refund trigger refunds a stored sale, a renewal charges a stored card', async () => {
    const refund = await trigger('refund.approved', { merchant_id: gw.merchant.merchant_id, notification_url });
    const refund_row = await gw.gateway.deps.store.transactions.get(refund.body.trace_id as number);
    expect(refund_row).toMatchObject({ transaction_type: 'refund', status: 'approved', merchant_id: gw.merchant.merchant_id });
    const sale_row = await gw.gateway.deps.store.transactions.get(Number(refund_row!.reference_id));
    expect(sale_row).toMatchObject({ transaction_type: 'sale', status: 'approved', refund_reserved_minor: sale_row!.amount_minor });

    const renewed = await trigger('subscription.renewed', { merchant_id: gw.merchant.merchant_id, notification_url });
    const charge = await gw.gateway.deps.store.transactions.get(renewed.body.trace_id as number);
    expect(charge).toMatchObject({ transaction_type: 'sale', status: 'approved', merchant_id: gw.merchant.merchant_id });
    const subscription = await gw.gateway.deps.store.subscriptions.get(gw.merchant.merchant_id, renewed.body.subscription_id as string);
    expect(subscription).toMatchObject({ status: 'active', cycles_charged: 1, last_trace_id: charge!.trace_id });
  });

  it('paygate trigger: calls the gateway of HOST/PORT with the token from the store, prints the trace_id and the body sent', async () => {
    const port = new URL(gw.url).port;
    const env = {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: port,
      PAYGATE_DATA_DIR: gw.data_dir,
      PAYGATE_ADMIN_TOKEN: '',
      ...(gw.database_url ? { DATABASE_URL: gw.database_url, PAYGATE_MASTER_KEY: TEST_MASTER_KEY } : {}),
    };
    // No --notification-url: the merchant's latest one (the shop's, from the tests above).
    const ran = await runCli(['sale.approved', '--merchant-id', gw.merchant.merchant_id], env);
    expect(ran.status, ran.stderr).toBe(0);
    const trace_id = Number(/^trace_id: (\d+)$/m.exec(ran.stdout)?.[1]);
    expect(trace_id).toBeGreaterThan(0);
    expect(ran.stdout).toContain(`sale.approved: transaction ${trace_id} notified sale approved to ${notification_url} (refused: `);
    expect(ran.stdout).toMatch(/notification \d+: sale approved <- the trigger's, POST \S+: refused after 1 attempt/);
    // The body as sent, pretty-printed: the shop received the same.
    const printed = JSON.parse(/^(\{\n[\s\S]*?\n\})$/m.exec(ran.stdout)![1]!) as Record<string, unknown>;
    expect(printed).toMatchObject({ trace_id, transaction_status: 'approved', merchant_id: gw.merchant.merchant_id });
    const received = await waitUntil(
      () => shop.received().find((m) => m.kind === 'transaction' && m.notification.trace_id === trace_id),
      'the CLI trigger at the shop',
    );
    expect(received.kind === 'transaction' && received.notification).toEqual(printed);
  });

  it('refusals: no token, an unknown trigger, merchant or field, a merchant with no notification_url yet; nothing is made', async () => {
    const merchant_id = gw.merchant.merchant_id;
    const before = await gw.gateway.deps.store.transactions.search({ merchant_id: null }, null, 1);
    expect(await trigger('sale.approved', { merchant_id }, {} as never)).toMatchObject({ http_status: 401, body: { status: 11 } });
    expect(await trigger('sale.approved', { merchant_id }, { authorization: 'Bearer not-the-sandbox-token-at-all' })).toMatchObject({
      http_status: 401,
    });
    expect(await trigger('sale.nothing', { merchant_id })).toMatchObject({
      http_status: 404,
      body: { status: 20, description: 'Unknown trigger: sale.nothing (GET /sandbox/triggers lists them)' },
    });
    expect(await trigger('sale.approved', { merchant_id: 'nobody-here' })).toMatchObject({
      http_status: 404,
      body: { status: 11, description: 'No such merchant' },
    });
    expect(await trigger('sale.approved', {})).toMatchObject({
      http_status: 400,
      body: { status: 10, description: 'Missing required field: merchant_id' },
    });
    expect(await trigger('sale.approved', { merchant_id, notification_url: 'ftp://shop.example/x' })).toMatchObject({
      http_status: 400,
      body: { status: 10, description: 'Invalid field: notification_url (expected an http(s) URL of up to 256 characters)' },
    });
    const fresh = await gw.createMerchant();
    expect(await trigger('sale.approved', { merchant_id: fresh.merchant_id })).toMatchObject({
      http_status: 400,
      body: { status: 10, description: "Missing required field: notification_url (none of the merchant's recent transactions had one)" },
    });
    const after = await gw.gateway.deps.store.transactions.search({ merchant_id: null }, null, 1);
    expect(after[0]?.trace_id).toBe(before[0]?.trace_id);
  });

  it('GET /sandbox/triggers and paygate trigger --list name every trigger, one line each', async () => {
    const listed = await fetch(`${gw.url}/sandbox/triggers`).then((r) => r.json() as Promise<{ triggers: { name: string }[] }>);
    expect(listed.triggers.map((t) => t.name)).toEqual(SANDBOX_TRIGGERS.map((t) => t.name));
    const ran = await runCli(['--list']);
    expect(ran.status, ran.stderr).toBe(0);
    const lines = ran.stdout.trim().split('\n');
    expect(lines.map((line) => line.split(/\s+/)[0])).toEqual(SANDBOX_TRIGGERS.map((t) => t.name));
    for (const [i, line] of lines.entries()) expect(line).toContain(SANDBOX_TRIGGERS[i]!.summary);
  });
});
