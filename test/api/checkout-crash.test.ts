// After a crash the processor is asked before anything is decided (issue 14 §4): a live gateway
// process is killed with SIGKILL between its reservation of a sale and Checkout.com's answer,
// after Checkout.com (the fake) charged the card. Restarted, the stuck-transaction sweep looks the
// payment up and records it approved, with its notification, instead of closing it as error; the
// merchant's retry of the same request answers that outcome; the card was charged once. The
// gateway runs as an operator runs it (`paygate start` in its own process), its merchant and
// Checkout.com gateway made with `paygate merchant create` and `paygate gateway create`.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { saleA } from '../support/bodies.js';
import { type FakeCheckout, startFakeCheckout } from '../support/checkout/fake.js';
import { type ChildGateway, spawnGateway } from '../support/child-gateway.js';
import { postSigned } from '../support/client.js';
import { TEST_MASTER_KEY } from '../support/gateway.js';
import { CHECKOUT_WEBHOOK_SECRET, PROCESSING_CHANNEL } from '../support/live-checkout.js';
import { type MerchantReceiver, startMerchantReceiver } from '../support/merchant-receiver.js';
import { notificationOf, signedReply, sleep, waitUntil } from '../support/notification-merchant.js';
import { createTestDatabase } from '../support/postgres.js';
import { storeKinds } from '../support/stores.js';
import { CLI_ENTRY } from '../support/build.js';

const CLI = [CLI_ENTRY];
const cleanups: (() => Promise<void> | void)[] = [];

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

function paygate(args: string[], env: Record<string, string>): Record<string, unknown> {
  const result = spawnSync(process.execPath, [...CLI, ...args], { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 30_000 });
  expect(result.status, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

describe.each(storeKinds())('a live gateway killed during a Checkout.com call, on %s', (kind) => {
  it('asks Checkout.com once restarted, and records the charge it finds as approved, notified once', async () => {
    const data_dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-checkout-crash-'));
    cleanups.push(() => fs.rmSync(data_dir, { recursive: true, force: true }));
    const fake: FakeCheckout = await startFakeCheckout();
    cleanups.push(() => fake.close());
    const receiver: MerchantReceiver = await startMerchantReceiver();
    cleanups.push(() => receiver.close());
    const env: Record<string, string> = {
      PAYGATE_DATA_DIR: data_dir,
      PAYGATE_ENV: 'live',
      PAYGATE_ALLOW_PRIVATE_URLS: 'true',
      PAYGATE_LOG_LEVEL: 'warn',
      PAYGATE_LOG_FILE: path.join(data_dir, 'gateway.log'),
      // The processor call outlives the kill by far; the sweep takes a sale for interrupted after 5 s.
      PAYGATE_PROCESSOR_TIMEOUT_MS: '4000',
      PAYGATE_STUCK_PROCESSING_SECONDS: '5',
      PAYGATE_DUE_WORK_POLL_MS: '100',
      PAYGATE_NOTIFY_POLL_MS: '100',
    };
    if (kind === 'postgres') {
      const database = await createTestDatabase();
      cleanups.push(() => database.drop());
      env.DATABASE_URL = database.url;
      env.PAYGATE_MASTER_KEY = TEST_MASTER_KEY;
    }
    const merchant = paygate(['merchant', 'create', '--merchant-id', 'crash-shop', '--secret', 'crash-shop-secret-1'], env);
    const gateway = paygate(
      [
        'gateway',
        'create',
        '--merchant-id',
        'crash-shop',
        '--connector',
        'checkout',
        '--currencies',
        'USD',
        '--setting',
        `secret_key=${fake.secret_key}`,
        '--setting',
        `processing_channel_id=${PROCESSING_CHANNEL}`,
        '--setting',
        `webhook_secret=${CHECKOUT_WEBHOOK_SECRET}`,
        '--setting',
        `base_url=${fake.url}`,
      ],
      env,
    );
    receiver.setReply('/notify', signedReply('crash-shop-secret-1'));
    // Its webhooks never arrive: what the restarted gateway learns, it learns by asking.
    fake.holdEvents(true);

    let child: ChildGateway = await spawnGateway(env);
    cleanups.push(() => child.kill('SIGKILL'));
    const body = saleA(merchant as never, {
      gateway: gateway.gateway,
      amount: 3100,
      notification_url: `${receiver.url}/notify`,
      return_url: `${receiver.url}/return`,
    });
    // Checkout.com processes the payment and holds its answer; the gateway dies waiting for it.
    fake.failNext('POST /payments', 'timeout');
    const lost = postSigned(child.url, '/api/process', body, 'crash-shop-secret-1').catch(() => null);
    await waitUntil(() => fake.paymentsWithReference(body.order_id as string).length === 1, 'the payment at Checkout.com');
    await child.kill('SIGKILL');
    expect(await lost).toBeNull();

    child = await spawnGateway(env);
    // Until the sweep has asked, the same request waits for the first (never a second charge).
    const notification = await waitUntil(
      () =>
        receiver
          .requestsTo('/notify', 'POST')
          .map(notificationOf)
          .find((n) => n.order_id === body.order_id),
      'the notification after the restart',
      30_000,
    );
    const payment = fake.paymentsWithReference(body.order_id as string)[0]!;
    expect(notification).toMatchObject({ transaction_status: 'approved', transaction_id: payment.id, amount: 3100 });
    // Asked by reference (the answer, and so the payment id, was lost with the process).
    expect(fake.requestsTo('GET /payments').some((r) => r.query.reference === body.order_id)).toBe(true);
    const replay = await postSigned(
      child.url,
      '/api/process',
      { ...body, timestamp: (body.timestamp as number) + 1 },
      'crash-shop-secret-1',
    );
    expect(replay.body).toMatchObject({ status: 0, transaction_status: 'approved', transaction_id: payment.id });
    expect(fake.paymentsWithReference(body.order_id as string)).toHaveLength(1);
    await sleep(300);
    expect(
      receiver
        .requestsTo('/notify', 'POST')
        .map(notificationOf)
        .filter((n) => n.order_id === body.order_id),
    ).toHaveLength(1);
    expect(fake.violations).toEqual([]);
  });
});
