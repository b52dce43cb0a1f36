// PostgreSQL's held batches (store/sql/held-batches.ts), through Store.holdWrites on a real
// PostgreSQL: held sales that arrive together are written by fewer statements, each sale as it
// would be written alone (its row, its status changes in order, its notification, leased or not);
// a key or trace_id taken fails that sale alone, twins and a trace_id drawn twice in one statement
// included; a statement that fails for one bad sale is written again sale by sale, so only the bad
// one fails.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NotificationRow } from '../../src/domain/notification-record.js';
import { randomTraceIds } from '../../src/domain/trace-id.js';
import { newNotificationRow } from '../../src/notifications/schedule.js';
import { SqlStore } from '../../src/store/sql-store.js';
import { type Store, type UnitOfWork, WritesNotHeld } from '../../src/store/store.js';
import { openHeldTestStore } from '../support/held-store.js';
import { type TestStore, transactionFixture } from '../support/store-fixture.js';
import { storeKinds } from '../support/stores.js';

const AT_MS = 1_700_000_000_000;

describe.runIf(storeKinds().includes('postgres'))('held batches on postgres', () => {
  const queued: number[] = [];
  let handle: TestStore;
  let store: Store;
  let merchant_id: string;
  let signals = 0;

  beforeAll(async () => {
    ({ handle, merchant_id } = await openHeldTestStore('postgres', queued, () => {
      signals += 1;
    }));
    store = handle.store;
  });
  afterAll(async () => {
    await handle?.cleanup();
  });

  const stats = () => {
    if (!(store instanceof SqlStore) || !store.held_batches) throw new Error('not a PostgreSQL SqlStore');
    return { ...store.held_batches.stats };
  };
  const hold = <T>(work: (uow: UnitOfWork) => Promise<T>) => store.holdWrites!(work);

  /** A held sale as the sandbox makes it: reserved, then approved with a notification (none when `bare`). */
  function sale(order_id: string, options: { merchant?: string; bare?: boolean } = {}) {
    const merchant = options.merchant ?? merchant_id;
    return hold(async (uow) => {
      const reserved = await uow.transactions.reserveOrHolder(
        transactionFixture(merchant, { order_id, notification_url: 'http://127.0.0.1:9/notify' }),
        'request accepted',
      );
      if (reserved.kind !== 'inserted') throw new Error('held reservation not inserted');
      const trace_id = reserved.row.trace_id;
      if (!options.bare) {
        const notification = newNotificationRow(
          { trace_id, merchant_id: merchant, url: 'http://127.0.0.1:9/notify' },
          { trace_id, status: 'approved', order_id },
          AT_MS + 5,
        );
        await uow.transactions.changeStatus(
          trace_id,
          'pending',
          { status: 'approved', error_code: '0' },
          'processor answered',
          AT_MS + 5,
          notification,
        );
        await uow.transactions.changeStatus(trace_id, 'approved', { status: 'chargeback' }, 'disputed at once', AT_MS + 6);
      }
      return reserved.row;
    });
  }

  async function expectWritten(order_id: string, bare = false) {
    const row = await store.transactions.findByKey(merchant_id, 'sale', order_id);
    expect(row, order_id).toMatchObject({ order_id, status: bare ? 'pending' : 'chargeback' });
    const changes = await store.transactions.listStatusChanges(row!.trace_id);
    expect(changes.map((change) => change.to_status)).toEqual(bare ? ['pending'] : ['pending', 'approved', 'chargeback']);
    const notifications = await store.notifications.listOfTransaction(row!.trace_id);
    expect(notifications.map((n) => JSON.parse(n.payload_json).order_id)).toEqual(bare ? [] : [order_id]);
    return { row: row!, notifications };
  }

  it('writes sales that arrive together in fewer statements, each as it would be written alone', async () => {
    const before = stats();
    const signals_before = signals;
    const order_ids = Array.from({ length: 40 }, (_, i) => `batch-${i}`);
    // Two bare reservations among them: another shape, its own statement.
    const written = await Promise.all(order_ids.map((order_id, i) => sale(order_id, { bare: i % 20 === 7 })));
    const after = stats();
    expect(after.units - before.units).toBe(40);
    expect(after.statements - before.statements).toBeLessThan(40);
    for (const [i, order_id] of order_ids.entries()) {
      const { row } = await expectWritten(order_id, i % 20 === 7);
      expect(row.trace_id).toBe(written[i]!.trace_id);
    }
    // Unleased notifications: the listeners are woken once a statement has written any.
    expect(signals).toBeGreaterThan(signals_before);
  });

  it('twins in one statement and a key already taken: those sales alone are refused, the rest written', async () => {
    const holder = (await store.transactions.reserveWithChange(
      transactionFixture(merchant_id, { order_id: 'twin-taken' }),
      'request accepted',
    ))!;
    const outcomes = await Promise.allSettled([
      sale('twin-a'),
      sale('twin-shared'),
      sale('twin-taken'),
      sale('twin-shared'),
      sale('twin-b'),
    ]);
    const refused = outcomes.filter((outcome) => outcome.status === 'rejected');
    expect(refused.map((outcome) => (outcome as PromiseRejectedResult).reason)).toEqual([
      new WritesNotHeld('the key or the trace_id was taken'),
      new WritesNotHeld('the key or the trace_id was taken'),
    ]);
    expect(outcomes[2]!.status).toBe('rejected');
    expect(outcomes[1]!.status === 'rejected' || outcomes[3]!.status === 'rejected').toBe(true);
    for (const order_id of ['twin-a', 'twin-shared', 'twin-b']) await expectWritten(order_id);
    // The holder is untouched, and the refused twin left nothing: one row, one notification.
    expect(await store.transactions.get(holder.trace_id)).toEqual(holder);
    const shared = await expectWritten('twin-shared');
    expect(shared.notifications).toHaveLength(1);
  });

  it.each([
    ['approved, with a notification', false],
    ['bare reservations', true],
  ])('two sales that drew the same trace_id (%s): the second is refused, nothing of it joins the first', async (_label, bare) => {
    const trace_id = randomTraceIds.next();
    queued.push(trace_id, trace_id);
    const [a, b] = [`same-id-a-${bare}`, `same-id-b-${bare}`];
    const outcomes = await Promise.allSettled([sale(a, { bare }), sale(b, { bare })]);
    expect(outcomes.map((outcome) => outcome.status).sort()).toEqual(['fulfilled', 'rejected']);
    const refused = outcomes.find((outcome) => outcome.status === 'rejected') as PromiseRejectedResult;
    expect(refused.reason).toEqual(new WritesNotHeld('the key or the trace_id was taken'));
    const [winner, loser] = outcomes[0]!.status === 'fulfilled' ? [a, b] : [b, a];
    // The winner has its own changes and notification, none of the loser's.
    const { row, notifications } = await expectWritten(winner, bare);
    expect(row.trace_id).toBe(trace_id);
    expect(notifications).toHaveLength(bare ? 0 : 1);
    expect(await store.transactions.findByKey(merchant_id, 'sale', loser)).toBeNull();
  });

  it('a statement failing for one sale is written again sale by sale: only that sale fails', async () => {
    const before = stats();
    // An unknown merchant breaks the transactions' foreign key: the whole statement fails.
    const outcomes = await Promise.allSettled([sale('lone-a'), sale('lone-bad', { merchant: 'no-such-merchant' }), sale('lone-b')]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(String((outcomes[1] as PromiseRejectedResult).reason)).toMatch(/foreign key/);
    const after = stats();
    // The three together, then each again alone.
    expect(after.statements - before.statements).toBe(4);
    await expectWritten('lone-a');
    await expectWritten('lone-b');
    expect(await store.transactions.findByKey('no-such-merchant', 'sale', 'lone-bad')).toBeNull();
  });

  it('leases the notifications it has slots for in the same statement, the rest written unleased', async () => {
    const ended: (NotificationRow | null)[] = [];
    let claimed = 0;
    const remove = store.leaseOnInsert!(() => {
      if (claimed >= 2) return null;
      claimed += 1;
      return { owner: 'worker-test', lease_until_ms: AT_MS + 60_000, ended: (row) => ended.push(row) };
    });
    try {
      const before = stats();
      await Promise.all(['lease-0', 'lease-1', 'lease-2', 'lease-3'].map((order_id) => sale(order_id)));
      expect(stats().statements - before.statements).toBeLessThan(4);
      const rows = await Promise.all(['lease-0', 'lease-1', 'lease-2', 'lease-3'].map((order_id) => expectWritten(order_id)));
      const notifications = rows.map(({ notifications }) => notifications[0]!);
      const leased = notifications.filter((n) => n.lease_owner === 'worker-test');
      expect(leased).toHaveLength(2);
      for (const n of leased) expect(n.lease_until_ms).toBe(AT_MS + 60_000);
      expect(notifications.filter((n) => n.lease_owner === null && n.lease_until_ms === null)).toHaveLength(2);
      // Each claim is handed its stored row, every column with its type.
      expect([...ended].sort((a, b) => a!.id - b!.id)).toEqual([...leased].sort((a, b) => a.id - b.id));
    } finally {
      remove();
    }
  });
});
