// Store.holdWrites (store/sql/held-writes.ts) on both stores: a held transaction, its status
// changes and its notification are written when the work ends, in one commit (PostgreSQL: one
// statement; SQLite: one unit of the group commit), the row once in its final status; what the
// unit cannot hold, and a key or trace_id found taken at the end, throw WritesNotHeld with nothing
// of the transaction written; the notification signal fires once the write is done, never for
// work that fails. SQLite holds a card new to the vault too; PostgreSQL writes it at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NotificationRow } from '../../src/domain/notification-record.js';
import { newNotificationRow } from '../../src/notifications/schedule.js';
import { type Store, type UnitOfWork, WritesNotHeld } from '../../src/store/store.js';
import { openHeldTestStore } from '../support/held-store.js';
import { cardFixture, type TestStore, transactionFixture } from '../support/store-fixture.js';
import { storeKinds } from '../support/stores.js';
import { countTransactionUpdates, type TransactionUpdates } from '../support/transaction-updates.js';

const AT_MS = 1_700_000_000_000;

describe.each(storeKinds())('held writes on %s', (kind) => {
  const queued: number[] = [];
  let handle: TestStore;
  let store: Store;
  let merchant_id: string;
  let signals = 0;

  beforeAll(async () => {
    ({ handle, merchant_id } = await openHeldTestStore(kind, queued, () => {
      signals += 1;
    }));
    store = handle.store;
    if (handle.sqlite_path) updates = countTransactionUpdates(handle.sqlite_path);
  });
  afterAll(async () => {
    updates?.close();
    await handle?.cleanup();
  });

  /** SQLite: every UPDATE of a transactions row, counted by a trigger of the test's own. */
  let updates: TransactionUpdates | null = null;

  const hold = <T>(work: (uow: UnitOfWork) => Promise<T>) => store.holdWrites!(work);
  const notification = (trace_id: number) =>
    newNotificationRow({ trace_id, merchant_id, url: 'http://127.0.0.1:9/notify' }, { trace_id, status: 'approved' }, AT_MS + 5);

  /** Reserves a sale and approves it, as the in-process sale does; answers the row as reserved. */
  async function saleWork(uow: UnitOfWork, order_id: string, pin = `pin-${order_id}`) {
    const reserved = await uow.transactions.reserveOrHolder(
      transactionFixture(merchant_id, { order_id, notification_url: 'http://127.0.0.1:9/notify' }),
      'request accepted',
    );
    if (reserved.kind !== 'inserted') throw new Error('held reservation not inserted');
    const card_token = await uow.cards.tokenFor(cardFixture(merchant_id, { pin }));
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
    // Inserted in its final status, never updated (the trigger counts updates on SQLite).
    if (updates) {
      expect(updates.of(done.reserved.trace_id)).toBe(0);
      await store.transactions.changeStatus(done.reserved.trace_id, 'approved', { status: 'chargeback' }, 'the trigger counts', AT_MS + 9);
      expect(updates.of(done.reserved.trace_id)).toBe(1);
    }
  });

  it('holds a card new to the vault with the transaction on SQLite, and writes it at once on PostgreSQL', async () => {
    let in_vault_during_work: unknown = 'not read';
    const done = await hold(async (uow) => {
      const made = await saleWork(uow, 'card-1');
      in_vault_during_work = await store.cards.get(merchant_id, made.card_token!);
      return made;
    });
    if (kind === 'sqlite') expect(in_vault_during_work).toBeNull();
    else expect(in_vault_during_work).toMatchObject({ card_token: done.card_token, pin: 'pin-card-1' });
    expect(await store.cards.get(merchant_id, done.card_token!)).toMatchObject({ pin: 'pin-card-1', pan_fingerprint: 'pan-fp' });
    expect(await store.transactions.get(done.reserved.trace_id)).toMatchObject({ card_token: done.card_token });
    // Known now: the same card again answers the stored token and holds nothing.
    const again = await hold((uow) => saleWork(uow, 'card-2', 'pin-card-1'));
    expect(again.card_token).toBe(done.card_token);
  });

  it.runIf(kind === 'sqlite')(
    'a held card stored by another sale before the write: WritesNotHeld, nothing of the sale written',
    async () => {
      let token_held: string | null = null;
      const outcome = await hold(async (uow) => {
        const made = await saleWork(uow, 'card-race');
        token_held = made.card_token;
        // Another sale stores the same card meanwhile, under its own token.
        await store.cards.tokenFor(cardFixture(merchant_id, { pin: 'pin-card-race' }));
        return made;
      }).catch((error: unknown) => error);
      expect(outcome).toEqual(new WritesNotHeld('the card was stored meanwhile'));
      expect(await store.transactions.findByKey(merchant_id, 'sale', 'card-race')).toBeNull();
      expect(await store.cards.get(merchant_id, token_held!)).toBeNull();
      expect(await store.cards.find(merchant_id, 'pin-card-race', 'pan-fp', '12/2030')).not.toBeNull();
    },
  );

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
      // SQLite held the new card too; PostgreSQL wrote it at once (harmless beside no sale).
      const card = await store.cards.find(merchant_id, `pin-${order_id}`, 'pan-fp', '12/2030');
      if (kind === 'sqlite') expect(card).toBeNull();
      else expect(card).not.toBeNull();
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

  describe.runIf(kind === 'postgres')('with a lease claimed for the notification (Store.leaseOnInsert)', () => {
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
