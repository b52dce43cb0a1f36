// The delivery worker's slots (notifications/worker.ts): a slot is an HTTP attempt in flight, free
// again once the attempt has ended, not once it is recorded; the attempts still to be recorded are
// bounded too. The gateway's own worker is stopped; a worker of the test's runs over the gateway's
// real SQLite store, whose recording of ended attempts the test holds, and sends over real HTTP to
// a local merchant receiver.
import { afterEach, describe, expect, it } from 'vitest';
import pino from 'pino';
import { wallClock } from '../../src/domain/clock.js';
import { startNotificationWorker, type NotificationWorker } from '../../src/notifications/worker.js';
import { outboundConnections } from '../../src/outbound/post.js';
import type { Store } from '../../src/store/store.js';
import { postSigned } from '../support/client.js';
import { notificationFixture, transactionFixture } from '../support/store-fixture.js';
import { orderId, saleA } from '../support/bodies.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { storeKinds } from '../support/stores.js';
import { type MerchantReceiver, startMerchantReceiver } from '../support/merchant-receiver.js';
import { signedReply, sleep, waitUntil } from '../support/notification-merchant.js';

let gw: TestGateway | null = null;
let receiver: MerchantReceiver | null = null;
let worker: NotificationWorker | null = null;
let release_recordings: (() => void) | null = null;

afterEach(async () => {
  // A failed test may leave recordings held: the worker's stop waits for them.
  release_recordings?.();
  release_recordings = null;
  await worker?.stop();
  await gw?.close();
  await receiver?.close();
  worker = null;
  gw = null;
  receiver = null;
});

/** `target` with its method `name` replaced by `around(the original, its arguments)`; everything else as it is. */
function intercepting<T extends object>(
  target: T,
  name: string,
  around: (original: (...args: unknown[]) => unknown, args: unknown[]) => unknown,
): T {
  return new Proxy(target, {
    get(inner, key, receiver_) {
      const value = Reflect.get(inner, key, receiver_) as unknown;
      if (key !== name || typeof value !== 'function') return value;
      return (...args: unknown[]) => around((...a: unknown[]) => (value as (...b: unknown[]) => unknown).apply(inner, a), args);
    },
  });
}

/** A new sale at the test's gateway, its notification sent to `notification_url`. */
function postSale(notification_url: string) {
  return postSigned(gw!.url, '/api/process', saleA(gw!.merchant, { order_id: orderId(), notification_url }), gw!.merchant.secret);
}

/** The gateway's store, but each recording of ended attempts waits until `release()`. */
function heldRecordings(store: Store): { store: Store; release(): void; readonly held: () => number } {
  let let_go: (() => void) | null = null;
  let gate = new Promise<void>((resolve) => (let_go = resolve));
  let held = 0;
  const notifications = intercepting(store.notifications, 'finishAttempts', async (original, args) => {
    held += 1;
    await gate;
    return original(...args);
  });
  const wrapped = new Proxy(store, {
    get: (target, name, receiver_) => (name === 'notifications' ? notifications : Reflect.get(target, name, receiver_)),
  });
  return {
    store: wrapped,
    release() {
      let_go?.();
      gate = Promise.resolve();
    },
    held: () => held,
  };
}

async function setUp(sales: number): Promise<{ recordings: ReturnType<typeof heldRecordings> }> {
  receiver = await startMerchantReceiver();
  gw = await startTestGateway('sqlite', { env: { PAYGATE_REQUEST_LOG_DAYS: '0' } });
  await gw.gateway.notifications.stop();
  const secret = gw.merchant.secret;
  receiver.setReply('/notify', () => signedReply(secret));
  for (let i = 0; i < sales; i++) {
    const answer = await postSale(`${receiver.url}/notify`);
    expect(answer.body.status).toBe(0);
  }
  const recordings = heldRecordings(gw.gateway.deps.store);
  release_recordings = () => recordings.release();
  return { recordings };
}

/**
 * The gateway's store, counting the worker's lease rounds: the transactions begun through it (a
 * round's on SQLite) and the leases taken outside one (a round's on PostgreSQL, whose one
 * statement needs no transaction). A lease at the end of a commit batch is neither.
 */
function countedRounds(store: Store): {
  store: Store;
  readonly count: () => number;
  readonly transactions: () => number;
  readonly leases: () => number;
} {
  let transactions = 0;
  let leases = 0;
  const notifications = intercepting(store.notifications, 'lease', (original, args) => {
    leases += 1;
    return original(...args);
  });
  const counting = intercepting(store, 'transaction', (original, args) => {
    transactions += 1;
    return original(...args);
  });
  const wrapped = new Proxy(counting, {
    get: (target, name, receiver_) => (name === 'notifications' ? notifications : Reflect.get(target, name, receiver_)),
  });
  return { store: wrapped, count: () => transactions + leases, transactions: () => transactions, leases: () => leases };
}

function startWorker(store: Store, concurrency: number, poll_ms = 50): NotificationWorker {
  const merchant = gw!.merchant;
  return startNotificationWorker({
    store,
    clock: wallClock,
    lease_clock: wallClock,
    logger: pino({ level: 'silent' }),
    secretOf: async (merchant_id) => (merchant_id === merchant.merchant_id ? merchant.secret : null),
    policy: { timeout_ms: 5_000, max_reply_bytes: 64 * 1024, allow_private: true, connections: outboundConnections() },
    schedule: { retry_seconds: [300], max_age_seconds: 3_600 },
    poll_ms,
    lease_ms: 60_000,
    concurrency,
  });
}

describe('the delivery worker’s slots', () => {
  it('takes a slot when a lease is written: a lease at the end of the same commit batch never reuses it', async () => {
    receiver = await startMerchantReceiver();
    gw = await startTestGateway('sqlite', { env: { PAYGATE_REQUEST_LOG_DAYS: '0' } });
    await gw.gateway.notifications.stop();
    const store = gw.gateway.deps.store;
    const secret = gw.merchant.secret;
    // Every reply held until released: an attempt keeps its slot meanwhile.
    let let_go: () => void = () => undefined;
    const replies_held = new Promise<void>((resolve) => (let_go = resolve));
    release_recordings = let_go;
    receiver.setReply('/notify', async () => {
      await replies_held;
      return signedReply(secret);
    });
    worker = startWorker(store, 1, 60_000);
    await sleep(100);
    await worker.idle();
    const notification = async () => {
      const trace_id = (await store.transactions.insertIfAbsent(transactionFixture(gw!.merchant.merchant_id)))!;
      return { ...notificationFixture(trace_id, gw!.merchant.merchant_id, Date.now() - 1_000, Date.now()), url: `${receiver!.url}/notify` };
    };
    const [first, second] = [await notification(), await notification()];
    // Committed outside a transaction: due, though nothing told this worker.
    await store.notifications.insert(first);
    // In one turn of the event loop: a lease round, and a unit of work that writes another due
    // notification, join one commit batch. The round takes the one slot; the lease at the batch's
    // end must find it taken.
    worker.wake();
    await store.transaction((tx) => tx.notifications.insert(second));
    await waitUntil(() => receiver!.requestsTo('/notify').length >= 1, 'the first notification sent');
    await sleep(300);
    expect(receiver.requestsTo('/notify')).toHaveLength(1);
    let_go();
    await waitUntil(() => receiver!.requestsTo('/notify').length === 2, 'the second sent once the slot is free');
    await worker.idle();
  });

  it('sends the next notification once an attempt has ended, while that attempt still waits to be recorded', async () => {
    const { recordings } = await setUp(2);
    worker = startWorker(recordings.store, 1);
    // One slot: both are sent, though the first attempt's recording is held throughout.
    await waitUntil(() => receiver!.requestsTo('/notify').length === 2, 'both notifications sent with one slot');
    expect(recordings.held()).toBeGreaterThanOrEqual(1);
    recordings.release();
    await worker.idle();
    const states = await Promise.all(
      receiver!.requestsTo('/notify').map(async (request) => {
        const trace_id = Number((request.json as Record<string, unknown>).trace_id);
        return (await gw!.gateway.deps.store.notifications.listOfTransaction(trace_id)).map((n) => n.state);
      }),
    );
    expect(states).toEqual([['delivered'], ['delivered']]);
  });

  it('sends no more than one slot’s worth beyond its slots while recordings are held, and the rest once they are not', async () => {
    const { recordings } = await setUp(5);
    worker = startWorker(recordings.store, 1);
    await waitUntil(() => receiver!.requestsTo('/notify').length >= 2, 'two notifications sent');
    // Two ended attempts wait to be recorded (one per slot, and the slot's own): nothing more is leased.
    await sleep(300);
    expect(receiver!.requestsTo('/notify')).toHaveLength(2);
    recordings.release();
    await waitUntil(() => receiver!.requestsTo('/notify').length === 5, 'the other three sent');
    await worker.idle();
    const trace_ids = new Set(receiver!.requestsTo('/notify').map((request) => (request.json as Record<string, unknown>).trace_id));
    expect(trace_ids.size).toBe(5);
  });

  it('leases what a commit batch made due in that batch: at an even pace no lease round of its own, no wake', async () => {
    receiver = await startMerchantReceiver();
    gw = await startTestGateway('sqlite', { env: { PAYGATE_REQUEST_LOG_DAYS: '0' } });
    await gw.gateway.notifications.stop();
    const store = gw.gateway.deps.store;
    const counted = countedRounds(store);
    // No poll within the test: every round is the start's, a wake's, or one the worker chose.
    worker = startWorker(counted.store, 4, 60_000);
    // The start's poll (a timer at 0) has run its round by then.
    await sleep(100);
    await worker.idle();
    const rounds_at_start = counted.count();
    const sales = 5;
    for (let i = 0; i < sales; i++) {
      // A closed port: each attempt fails at once and stays pending for a resend minutes later.
      const answer = await postSale('http://127.0.0.1:9/notify');
      expect(answer.body.status).toBe(0);
      // No wake: the gateway's signal wakes its own (stopped) worker, not this one.
      const trace_id = Number(answer.body.trace_id);
      await waitUntil(
        async () => (await store.notifications.listOfTransaction(trace_id)).some((n) => n.attempts === 1 && n.lease_owner === null),
        `the attempt of sale ${i + 1} recorded`,
      );
      await sleep(50);
    }
    // Each notification was leased at the end of its sale's commit batch (Store.leaseWithCommits),
    // so the worker began no transaction of its own. Before, each cost a lease round after the
    // sale's commit; and before that, its attempt's end and its recording began one more each.
    expect(counted.count() - rounds_at_start).toBe(0);

    // Delivered, a sale's one notification lets nothing go: its recording begins no round either.
    receiver.setReply('/notify', () => signedReply(gw!.merchant.secret));
    for (let i = 0; i < 3; i++) {
      const answer = await postSale(`${receiver.url}/notify`);
      const trace_id = Number(answer.body.trace_id);
      await waitUntil(
        async () => (await store.notifications.listOfTransaction(trace_id)).some((n) => n.state === 'delivered'),
        `the delivery of sale ${i + 1} recorded`,
      );
      await sleep(50);
    }
    expect(counted.count() - rounds_at_start).toBe(0);

    // A recording that lets a transaction's later notification go leases that one at once, with
    // no wake or poll: two notifications of one sale, the later held back until the first is delivered.
    const sent_before = receiver.requestsTo('/notify').length;
    // The first one's reply is held until the later one is written: it is still pending then.
    let let_go: () => void = () => undefined;
    const reply_held = new Promise<void>((resolve) => (let_go = resolve));
    release_recordings = let_go;
    receiver.setReply('/notify', async () => {
      await reply_held;
      return signedReply(gw!.merchant.secret);
    });
    const sale = await postSale(`${receiver.url}/notify`);
    expect(sale.body.status).toBe(0);
    const trace_id = Number(sale.body.trace_id);
    // Leased at the end of the sale's batch, and sent.
    await waitUntil(() => receiver!.requestsTo('/notify').length === sent_before + 1, 'the sale’s notification sent');
    const [first] = await store.notifications.listOfTransaction(trace_id);
    const { id: _id, ...copy } = first!;
    await store.notifications.insert({ ...copy, state: 'pending', attempts: 0, lease_until_ms: null, lease_owner: null });
    // A round now finds the later one held back by the first, still pending.
    worker.wake();
    await sleep(100);
    expect(receiver.requestsTo('/notify')).toHaveLength(sent_before + 1);
    let_go();
    await waitUntil(
      () => receiver!.requestsTo('/notify').length === sent_before + 2,
      'both notifications of the sale sent, the later after the first',
    );
    await waitUntil(
      async () => (await store.notifications.listOfTransaction(trace_id)).every((n) => n.state === 'delivered'),
      'both recorded as delivered',
    );
  });

  it.runIf(storeKinds().includes('postgres'))(
    'on PostgreSQL writes a sale’s notification leased in the sale’s own statement: no lease round, no wake, each sent once',
    async () => {
      receiver = await startMerchantReceiver();
      gw = await startTestGateway('postgres', { env: { PAYGATE_REQUEST_LOG_DAYS: '0' } });
      await gw.gateway.notifications.stop();
      const store = gw.gateway.deps.store;
      const secret = gw.merchant.secret;
      receiver.setReply('/notify', () => signedReply(secret));
      const counted = countedRounds(store);
      let wakes = 0;
      // Wired as main.ts wires the gateway's own worker (stopped here): a commit that wrote a notification wakes it.
      const stop_counting_wakes = store.onNotificationCommitted(() => {
        wakes += 1;
        worker?.wake();
      });
      try {
        // No poll within the test: every round is the start's, a wake's, or one the worker chose.
        worker = startWorker(counted.store, 2, 60_000);
        await sleep(100);
        await worker.idle();
        // More sales at once than the worker has slots: those beyond them are written unleased and
        // leased by a round, once a slot is free.
        const sales = 6;
        const answers = await Promise.all(Array.from({ length: sales }, () => postSale(`${receiver!.url}/notify`)));
        for (const answer of answers) expect(answer.body.status).toBe(0);
        await waitUntil(() => receiver!.requestsTo('/notify').length >= sales, 'every sale’s notification sent');
        for (const answer of answers)
          await waitUntil(
            async () => (await store.notifications.listOfTransaction(Number(answer.body.trace_id))).every((n) => n.state === 'delivered'),
            `the delivery of sale ${String(answer.body.trace_id)} recorded`,
          );
        const trace_ids = receiver.requestsTo('/notify').map((request) => (request.json as Record<string, unknown>).trace_id);
        expect(new Set(trace_ids).size).toBe(sales);
        expect(trace_ids).toHaveLength(sales);
        // The first sale at least found a slot free and went out leased, with no wake; only those
        // the two slots could not take woke the worker for a round.
        expect(wakes).toBeLessThan(sales);

        // One at a time, a slot is always free: no round, no wake at all.
        const rounds_before = counted.count();
        const wakes_before = wakes;
        for (let i = 0; i < 3; i++) {
          const answer = await postSale(`${receiver.url}/notify`);
          expect(answer.body.status).toBe(0);
          await waitUntil(
            async () => (await store.notifications.listOfTransaction(Number(answer.body.trace_id))).every((n) => n.state === 'delivered'),
            `the delivery of sale ${i + 1} recorded`,
          );
        }
        expect(counted.count() - rounds_before).toBe(0);
        expect(wakes - wakes_before).toBe(0);
        expect(receiver.requestsTo('/notify')).toHaveLength(sales + 3);

        // A notification written otherwise is leased by a round: one statement, no transaction around it.
        const trace_id = (await store.transactions.insertIfAbsent(transactionFixture(gw.merchant.merchant_id)))!;
        await store.notifications.insert({
          ...notificationFixture(trace_id, gw.merchant.merchant_id, Date.now() - 1_000, Date.now()),
          url: `${receiver.url}/notify`,
        });
        const [transactions_before, leases_before] = [counted.transactions(), counted.leases()];
        worker.wake();
        await waitUntil(() => receiver!.requestsTo('/notify').length === sales + 4, 'the notification written otherwise sent');
        expect(counted.leases() - leases_before).toBe(1);
        expect(counted.transactions() - transactions_before).toBe(0);
      } finally {
        stop_counting_wakes();
      }
    },
  );
});
