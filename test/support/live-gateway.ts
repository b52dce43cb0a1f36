// A live gateway (PAYGATE_ENV=live) with one merchant whose processor gateway points at a fake
// processor on 127.0.0.1 (test/support/checkout/, test/support/stripe/), created the way an
// operator would: through the operator API, over real HTTP. The merchant's site is a real local
// server that receives the signed notifications. Time-outs and lookup waits are short so that the
// tests run in seconds (a processor call gives up after 5 s, the processor is asked again every
// second, a transaction is taken for interrupted after 6 s); the failure tests shorten them
// further (FAILURE_ENV). live-checkout.ts and live-stripe.ts add each processor's fake.
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import type { CreatedMerchant } from '../../src/domain/merchants.js';
import type { TransactionRow } from '../../src/store/schema.js';
import { postSigned, type Answer } from './client.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway, type TestGatewayOptions } from './gateway.js';
import { type MerchantReceiver, startMerchantReceiver } from './merchant-receiver.js';
import { merchantVerify, notificationOf, signedReply, waitUntil } from './notification-merchant.js';
import type { StoreKind } from './stores.js';

/** The processor's timings in these tests (see the file's header). */
export const LIVE_ENV: Readonly<Record<string, string>> = {
  PAYGATE_ENV: 'live',
  // The fake processors and the merchant's site are on 127.0.0.1 (decisions.md §13: tests set it).
  PAYGATE_ALLOW_PRIVATE_URLS: 'true',
  PAYGATE_PROCESSOR_TIMEOUT_MS: '5000',
  PAYGATE_STUCK_PROCESSING_SECONDS: '6',
  PAYGATE_PROCESSOR_LOOKUP_SECONDS: '1',
  PAYGATE_NOTIFY_RETRY_SECONDS: '1',
  PAYGATE_NOTIFY_POLL_MS: '50',
};

/** For the failure tests: a processor that holds its answer is given up on after 1.5 s. */
export const FAILURE_ENV: Readonly<Record<string, string>> = {
  PAYGATE_PROCESSOR_TIMEOUT_MS: '1500',
  PAYGATE_STUCK_PROCESSING_SECONDS: '3',
};

export interface LiveGateway {
  readonly gw: TestGateway;
  readonly receiver: MerchantReceiver;
  readonly merchant: CreatedMerchant;
  /** The merchant's processor gateway id. */
  readonly gateway: string;
  /** Where the processor sends its webhooks for that gateway. */
  readonly webhook_url: string;
  /** A signed request to /api/process (or another path) as the merchant. */
  process(body: Record<string, unknown>, path?: string): Promise<Answer>;
  row(trace_id: number): Promise<TransactionRow>;
  /** The notifications the merchant's site received for a trace_id, oldest first. */
  notifications(trace_id: number): Record<string, unknown>[];
  /** Waits until the transaction has this status and its signed notification of it reached the merchant. */
  settled(trace_id: number, status: string, timeout_ms?: number): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

/** A call to the operator API with the admin token: its status and body. */
export async function operatorCall(
  gw: TestGateway,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${gw.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? null : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** The processor gateway the operator adds for the merchant. */
export interface GatewayToAdd {
  readonly connector: string;
  readonly currencies: readonly string[];
  readonly settings: Readonly<Record<string, string>>;
}

/** Starts the live gateway and the merchant's site, and adds the merchant's processor gateway. */
export async function startLiveGateway(kind: StoreKind, options: TestGatewayOptions, add: GatewayToAdd): Promise<LiveGateway> {
  const receiver = await startMerchantReceiver();
  const gw = await startTestGateway(kind, { ...options, env: { ...LIVE_ENV, ...options.env } });
  const merchant = gw.merchant;
  // Live mode: the merchant starts with no gateway; the operator adds the processor's.
  expect(merchant.gateway).toBeNull();
  receiver.setReply('/notify', signedReply(merchant.secret));
  const created = await operatorCall(gw, 'POST', '/operator/gateways', { merchant_id: merchant.merchant_id, ...add });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const notifications = (trace_id: number) =>
    receiver
      .requestsTo('/notify', 'POST')
      .map(notificationOf)
      .filter((n) => Number(n.trace_id) === trace_id);
  const row = async (trace_id: number) => {
    const found = await gw.gateway.deps.store.transactions.get(trace_id);
    if (!found) throw new Error(`no transaction ${trace_id}`);
    return found;
  };
  return {
    gw,
    receiver,
    merchant,
    gateway: created.body.gateway as string,
    webhook_url: created.body.webhook_url as string,
    process: (body, path = '/api/process') => postSigned(gw.url, path, body, merchant.secret),
    row,
    notifications,
    async settled(trace_id, status, timeout_ms = 15_000) {
      const notification = await waitUntil(
        async () => {
          const current = await row(trace_id);
          if (current.status !== status) return undefined;
          return notifications(trace_id).find((n) => n.transaction_status === status);
        },
        `transaction ${trace_id} ${status} and notified`,
        timeout_ms,
      );
      // Signed with the merchant's secret (decisions §1), like every notification.
      expect(merchantVerify(notification, merchant.secret), `notification of ${trace_id} signed`).toBe(true);
      return notification;
    },
    async close() {
      await gw.close();
      await receiver.close();
    },
  };
}

/** A sale body (variant A) for the live merchant, its notification sent to the merchant's site. */
export function liveSale(live: Pick<LiveGateway, 'merchant' | 'receiver'>, base: Record<string, unknown>): Record<string, unknown> {
  return { ...base, notification_url: `${live.receiver.url}/notify`, return_url: `${live.receiver.url}/return` };
}

/** What every fake processor lets a test hold and check (test/support/fake-processor/). */
interface FakeWithEvents {
  holdEvents(hold: boolean): void;
  releaseHeldEvents(): Promise<void>;
  readonly violations: readonly unknown[];
}

/**
 * A describe block's live gateway: started once before its tests and closed after them; after
 * each test the fake's held webhooks are released and its record of requests or answers that broke
 * the processor's published API description must be empty.
 */
export function withLiveGateway<T extends { readonly fake: FakeWithEvents; close(): Promise<void> }>(
  start: () => Promise<T>,
  started: (live: T) => void,
): void {
  let live: T | undefined;
  beforeAll(async () => {
    live = await start();
    started(live);
  });
  afterAll(async () => {
    await live?.close();
  });
  afterEach(async () => {
    live!.fake.holdEvents(false);
    await live!.fake.releaseHeldEvents();
    expect(live!.fake.violations).toEqual([]);
  });
}
