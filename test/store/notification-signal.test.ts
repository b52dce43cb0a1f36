// Store.onNotificationCommitted, which wakes the delivery worker: it fires once a notification
// commits (inside a transaction: after the commit), never for a rolled-back one. And
// Store.leaseWithCommits (SQLite's group commit): the worker's lease at the end of a batch that
// made a notification due, which spares that batch's wakes when it saw every due notification.
import { describe, expect, it } from 'vitest';
import type { CommitLease, Store, UnitOfWork } from '../../src/store/store.js';
import { notificationFixture, transactionFixture, withStoreAndMerchant } from '../support/store-fixture.js';
import { storeKinds } from '../support/stores.js';

describe.each(storeKinds())('notification commit signal on %s', (kind) => {
  let store: Store;
  let merchant_id: string;
  withStoreAndMerchant(kind, (started) => ({ store, merchant_id } = started));

  const notification = (trace_id: number) => notificationFixture(trace_id, merchant_id, 1, 1);

  it('offers a lease with the commits only where transactions commit in groups', () => {
    expect(store.leaseWithCommits === null).toBe(kind === 'postgres');
  });

  it('fires after commit, not before, and not on rollback; resend fires too', async () => {
    let fired = 0;
    const off = store.onNotificationCommitted(() => {
      fired += 1;
    });
    const trace_id = (await store.transactions.insertIfAbsent(transactionFixture(merchant_id)))!;
    let id = 0;
    await store.transaction(async (tx) => {
      id = await tx.notifications.insert(notification(trace_id));
      expect(fired).toBe(0);
    });
    expect(fired).toBe(1);

    await expect(
      store.transaction(async (tx) => {
        await tx.notifications.insert(notification(trace_id));
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(fired).toBe(1);

    await store.notifications.insert(notification(trace_id));
    expect(fired).toBe(2);
    expect(await store.notifications.reschedule(id, 5, 5)).toBe(true);
    expect(fired).toBe(3);
    expect(await store.notifications.reschedule(987_654_321, 5, 5)).toBe(false);
    expect(fired).toBe(3);
    off();
    await store.notifications.insert(notification(trace_id));
    expect(fired).toBe(3);
  });
});

describe('a lease at the end of each commit batch (SQLite group commit)', () => {
  let store: Store;
  let merchant_id: string;
  withStoreAndMerchant('sqlite', (started) => ({ store, merchant_id } = started));

  const due = (trace_id: number) => notificationFixture(trace_id, merchant_id, 1, 1);

  it('leases in the batch that wrote the notification, and wakes nobody when it saw all that was due', async () => {
    let fired = 0;
    const off_signal = store.onNotificationCommitted(() => {
      fired += 1;
    });
    const ends: boolean[] = [];
    let leased_ids: number[] = [];
    let ask = 8;
    let fail = false;
    const lease = async (tx: UnitOfWork): Promise<CommitLease> => {
      const rows = await tx.notifications.lease({ due_ms: 10, wall_ms: 10 }, ask, 60_000, 'batch-end');
      if (fail) throw new Error('the lease fails after writing');
      leased_ids = rows.map((row) => row.id);
      return { saw_all_due: rows.length < ask, ended: (committed) => ends.push(committed) };
    };
    const off_lease = store.leaseWithCommits!(lease);
    expect(() => store.leaseWithCommits!(lease)).toThrow(/already registered/);

    // A transaction that writes nothing of notifications: no lease at its batch's end.
    const trace_id = (await store.transactions.insertIfAbsent(transactionFixture(merchant_id)))!;
    await store.transaction(async (tx) => tx.transactions.get(trace_id));
    expect(ends).toEqual([]);

    const id = await store.transaction((tx) => tx.notifications.insert(due(trace_id)));
    // Leased in the same batch: committed with it, the end told of the commit, no wake.
    expect(leased_ids).toEqual([id]);
    expect(ends).toEqual([true]);
    expect((await store.notifications.get(id))?.lease_owner).toBe('batch-end');
    expect(fired).toBe(0);

    // A lease that filled all it asked for may have left some due: the batch's units wake the worker.
    ask = 1;
    const second = (await store.transactions.insertIfAbsent(transactionFixture(merchant_id)))!;
    const id_2 = await store.transaction((tx) => tx.notifications.insert(due(second)));
    expect(leased_ids).toEqual([id_2]);
    expect(fired).toBe(1);

    // A lease that fails is undone alone: the notification commits unleased, and the worker is woken.
    ask = 8;
    fail = true;
    const third = (await store.transactions.insertIfAbsent(transactionFixture(merchant_id)))!;
    const id_3 = await store.transaction((tx) => tx.notifications.insert(due(third)));
    expect((await store.notifications.get(id_3))?.lease_owner).toBeNull();
    expect(fired).toBe(2);
    expect(ends).toEqual([true, true]);

    off_lease();
    fail = false;
    const fourth = (await store.transactions.insertIfAbsent(transactionFixture(merchant_id)))!;
    await store.transaction((tx) => tx.notifications.insert(due(fourth)));
    expect(ends).toEqual([true, true]);
    expect(fired).toBe(3);
    off_signal();
  });
});
