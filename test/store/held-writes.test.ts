// Store.holdWrites (store/sql/held-writes.ts) on a real PostgreSQL database: a held transaction,
// its status changes and its notification are written when the work ends, as one statement, the
// row once in its final status; what the unit cannot hold, and a key or trace_id found taken at
// the end, throw WritesNotHeld with nothing of the transaction written; the notification signal
// fires once the write is done, never for work that fails. SQLite has no held unit (its
// transactions commit in groups).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NotificationRow } from '../../src/domain/notification-record.js';
import { randomTraceIds } from '../../src/domain/trace-id.js';
import { newNotificationRow } from '../../src/notifications/schedule.js';
import { type Store, type UnitOfWork, WritesNotHeld } from '../../src/store/store.js';
import { cardFixture, merchantFixture, openTestStore, type TestStore, transactionFixture } from '../support/store-fixture.js';
import { storeKinds } from '../support/stores.js';

const AT_MS = 1_700_000_000_000;

describe('held writes on SQLite', () => {
  it('there are none: transactions commit in groups instead', async () => {
    const handle = await openTestStore('sqlite');
    try {
      expect(handle.store.holdWrites).toBeNull();
      expect(handle.store.leaseOnInsert).toBeNull();
      expect(handle.store.groups_commits).toBe(true);
    } finally {
      await handle.cleanup();
    }
  });
});

describe.runIf(storeKinds().includes('postgres'))('held writes on postgres', () => {
  const queued: number[] = [];
  let handle: TestStore;
  let store: Store;
  let merchant_id: string;
  let signals = 0;

  beforeAll(async () => {
    handle = await openTestStore('postgres', { trace_ids: { next: () => queued.shift() ?? randomTraceIds.next() } });
    store = handle.store;
    const merchant = merchantFixture();
    await store.merchants.insert(merchant);
    merchant_id = merchant.merchant_id;
    store.onNotificationCommitted(() => {
      signals += 1;
    });
  });
  afterAll(async () => {
    await handle?.cleanup();
  });

  const hold = <T>(work: (uow: UnitOfWork) => Promise<T>) => store.holdWrites!(work);
  const notification = (trace_id: number) =>
    newNotificationRow({ trace_id, merchant_id, url: 'http://127.0.0.1:9/notify' }, { trace_id, status: 'approved' }, AT_MS + 5);

  /** Reserves a sale and approves it, as the in-process sale does; answers the row as reserved. */
  async function saleWork(uow: UnitOfWork, order_id: string) {
    const reserved = await uow.transactions.reserveOrHolder(
      transactionFixture(merchant_id, { order_id, notification_url: 'http://127.0.0.1:9/notify' }),
      'request accepted',
    );
    if (reserved.kind !== 'inserted') throw new Error('held reservation not inserted');
    const card_token = await uow.cards.tokenFor(cardFixture(merchant_id, { pin: `pin-${order_id}` }));
    const changed = await uow.transactions.changeStatus(
      reserved.row.trace_id,
      'pending',
      { status: 'approved', psp_transaction_id: 'sbx_1', error_code: '0', card_token, answer_json: '{"held":true}' },
      'processor answered',
      AT_MS + 5,
      notification(reserved.row.trace_id),
    );
    return { reserved: reserved.row, changed, card_token };
  }

  it('writes nothing until the work ends, then the row in its final status, its changes in order and its notification', async () => {
    const signals_before = signals;
    let seen_before_end: unknown = 'not read';
    const done = await hold(async (uow) => {
      const made = await saleWork(uow, 'held-1');
      // Nothing is in the database yet: another connection does not find the row.
      seen_before_end = await store.transactions.get(made.reserved.trace_id);
      expect(signals).toBe(signals_before);
      return made;
    });
    expect(seen_before_end).toBeNull();
    expect(done.changed).toBe(true);
    const row = await store.transactions.get(done.reserved.trace_id);
    expect(row).toMatchObject({
      order_id: 'held-1',
      status: 'approved',
      psp_transaction_id: 'sbx_1',
      card_token: done.card_token,
      answer_json: '{"held":true}',
      created_at_ms: done.reserved.created_at_ms,
    });
    // The row as the work saw it reserved is the stored row before its change: every column, with its type.
    expect(row).toEqual({
      ...done.reserved,
      status: 'approved',
      psp_transaction_id: 'sbx_1',
      error_code: '0',
      card_token: done.card_token,
      answer_json: '{"held":true}',
    });
    expect(await store.transactions.listStatusChanges(done.reserved.trace_id)).toEqual([
      { from_status: '', to_status: 'pending', reason: 'request accepted', at_ms: done.reserved.created_at_ms },
      { from_status: 'pending', to_status: 'approved', reason: 'processor answered', at_ms: AT_MS + 5 },
    ]);
    const notifications = await store.notifications.listOfTransaction(done.reserved.trace_id);
    expect(notifications.map((n) => [n.state, n.url, n.bound_from_ms])).toEqual([['pending', 'http://127.0.0.1:9/notify', AT_MS + 5]]);
    expect(signals).toBe(signals_before + 1);
  });

  it('refuses what it cannot hold, a read included, and writes nothing of the transaction', async () => {
    for (const [what, extra] of [
      [
        'transactions.insertDueAction',
        (uow: UnitOfWork, trace_id: number) =>
          uow.transactions.insertDueAction({
            trace_id,
            kind: 'processor_lookup',
            due_at_ms: AT_MS,
            expected_status: 'approved',
            to_status: '',
            error_code: null,
            error_details: null,
          }),
      ],
      ['transactions.get', (uow: UnitOfWork, trace_id: number) => uow.transactions.get(trace_id)],
      ['cashier.getSession', (uow: UnitOfWork) => uow.cashier.getSession('cs_x')],
      ['notifications.insert', (uow: UnitOfWork, trace_id: number) => uow.notifications.insert(notification(trace_id))],
    ] as const) {
      const order_id = `refused-${what}`;
      let trace_id = 0;
      const outcome = await hold(async (uow) => {
        trace_id = (await saleWork(uow, order_id)).reserved.trace_id;
        await extra(uow, trace_id);
        return 'written';
      }).catch((error: unknown) => error);
      expect(outcome).toBeInstanceOf(WritesNotHeld);
      expect((outcome as Error).message).toBe(`not held: ${what}`);
      expect(await store.transactions.get(trace_id)).toBeNull();
      expect(await store.transactions.findByKey(merchant_id, 'sale', order_id)).toBeNull();
      expect(await store.transactions.listStatusChanges(trace_id)).toEqual([]);
      expect(await store.notifications.listOfTransaction(trace_id)).toEqual([]);
    }
  });

  it('refuses a second transaction and a second notification', async () => {
    const second_transaction = await hold(async (uow) => {
      await saleWork(uow, 'second-a');
      await uow.transactions.reserveOrHolder(transactionFixture(merchant_id, { order_id: 'second-b' }), 'request accepted');
    }).catch((error: unknown) => error);
    expect(second_transaction).toEqual(new WritesNotHeld('a second transaction'));
    const second_notification = await hold(async (uow) => {
      const { reserved } = await saleWork(uow, 'second-c');
      await uow.transactions.changeStatus(
        reserved.trace_id,
        'approved',
        { status: 'chargeback' },
        'again',
        AT_MS + 6,
        notification(reserved.trace_id),
      );
    }).catch((error: unknown) => error);
    expect(second_notification).toEqual(new WritesNotHeld('a second notification'));
    for (const order_id of ['second-a', 'second-b', 'second-c'])
      expect(await store.transactions.findByKey(merchant_id, 'sale', order_id)).toBeNull();
  });

  it('a compare-and-set on the held row that no longer holds answers false, as the store would', async () => {
    const done = await hold(async (uow) => {
      const { reserved } = await saleWork(uow, 'stale-1');
      return uow.transactions.changeStatus(reserved.trace_id, 'pending', { status: 'rejected' }, 'late', AT_MS + 7);
    });
    expect(done).toBe(false);
    expect(await store.transactions.findByKey(merchant_id, 'sale', 'stale-1')).toMatchObject({ status: 'approved' });
  });

  it('finds the key taken at the end, or the drawn trace_id taken: WritesNotHeld, and the row there is untouched', async () => {
    const holder = (await store.transactions.reserveWithChange(
      transactionFixture(merchant_id, { order_id: 'taken-1' }),
      'request accepted',
    ))!;
    const signals_before = signals;
    const key_taken = await hold((uow) => saleWork(uow, 'taken-1')).catch((error: unknown) => error);
    expect(key_taken).toEqual(new WritesNotHeld('the key or the trace_id was taken'));
    expect(await store.transactions.get(holder.trace_id)).toEqual(holder);
    expect(await store.transactions.listStatusChanges(holder.trace_id)).toHaveLength(1);
    // The next draw is the holder's trace_id, under another key.
    queued.push(holder.trace_id);
    const id_taken = await hold((uow) => saleWork(uow, 'taken-2')).catch((error: unknown) => error);
    expect(id_taken).toEqual(new WritesNotHeld('the key or the trace_id was taken'));
    expect(await store.transactions.findByKey(merchant_id, 'sale', 'taken-2')).toBeNull();
    expect(await store.transactions.get(holder.trace_id)).toEqual(holder);
    expect(await store.notifications.listOfTransaction(holder.trace_id)).toEqual([]);
    expect(signals).toBe(signals_before);
  });

  describe('with a lease claimed for the notification (Store.leaseOnInsert)', () => {
    /** Each claim answered, and what its `ended` was told; `slots` claims are answered, the rest refused. */
    function claims(slots: number) {
      const ended: (NotificationRow | null)[] = [];
      let claimed = 0;
      const remove = store.leaseOnInsert!(() => {
        if (claimed >= slots) return null;
        claimed += 1;
        return { owner: 'worker-test', lease_until_ms: AT_MS + 60_000, ended: (row) => ended.push(row) };
      });
      return { ended, claimed: () => claimed, remove };
    }

    it('writes the notification leased in the same statement and hands its row to the claim, with no signal', async () => {
      const claim = claims(1);
      try {
        expect(() => store.leaseOnInsert!(() => null)).toThrow(/already registered/);
        const signals_before = signals;
        const done = await hold((uow) => saleWork(uow, 'leased-1'));
        const stored = await store.notifications.listOfTransaction(done.reserved.trace_id);
        expect(stored).toHaveLength(1);
        expect(stored[0]).toMatchObject({ state: 'pending', attempts: 0, lease_owner: 'worker-test', lease_until_ms: AT_MS + 60_000 });
        // The row handed over is the stored one, every column with its type: the worker sends it as leased.
        expect(claim.ended).toEqual([stored[0]]);
        // Leased already: no lease round is woken for it.
        expect(signals).toBe(signals_before);

        // No slot free: written unleased, and the listeners woken for a round, as before.
        const unleased = await hold((uow) => saleWork(uow, 'leased-2'));
        expect(claim.claimed()).toBe(1);
        expect(await store.notifications.listOfTransaction(unleased.reserved.trace_id)).toMatchObject([
          { state: 'pending', lease_owner: null, lease_until_ms: null },
        ]);
        expect(signals).toBe(signals_before + 1);
      } finally {
        claim.remove();
      }
    });

    it('frees the claimed slot when the write wrote nothing, and claims none for work without a notification', async () => {
      const claim = claims(5);
      try {
        await store.transactions.reserveWithChange(transactionFixture(merchant_id, { order_id: 'leased-taken' }), 'request accepted');
        const taken = await hold((uow) => saleWork(uow, 'leased-taken')).catch((error: unknown) => error);
        expect(taken).toEqual(new WritesNotHeld('the key or the trace_id was taken'));
        expect(claim.ended).toEqual([null]);
        // A reservation alone (no status change with a notification) takes no slot.
        await hold(async (uow) => {
          await uow.transactions.reserveOrHolder(transactionFixture(merchant_id, { order_id: 'leased-bare' }), 'request accepted');
        });
        expect(claim.claimed()).toBe(1);
        expect(await store.transactions.findByKey(merchant_id, 'sale', 'leased-bare')).toMatchObject({ status: 'pending' });
      } finally {
        claim.remove();
      }
      // Removed: the next held notification is written unleased.
      const after = await hold((uow) => saleWork(uow, 'leased-after'));
      expect(await store.notifications.listOfTransaction(after.reserved.trace_id)).toMatchObject([{ lease_owner: null }]);
    });
  });
});
