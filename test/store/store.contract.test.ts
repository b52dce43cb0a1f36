// The store contract: one suite, run against a real SQLite file and a real PostgreSQL
// database. Whatever the domain relies on (idempotency key, refund limit, compare-and-set,
// atomic transactions, leases) is checked here on both.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProcessorEventOutcome } from '../../src/domain/gateway-record.js';
import type { OrderStatus } from '../../src/domain/order-state.js';
import type { TransactionStatus } from '../../src/domain/transaction-state.js';
import type { Store, UnitOfWork } from '../../src/store/store.js';
import { type AttemptFinish, FINISH_BATCH_MAX, type FinishOutcome, type NotificationStore } from '../../src/store/notification-store.js';
import {
  cardFixture,
  cashierSessionFixture,
  merchantFixture,
  notificationFixture,
  openTestStore,
  type TestStore,
  transactionFixture,
  uniqueId,
  gatewayFixture,
} from '../support/store-fixture.js';
import { storeKinds } from '../support/stores.js';

const NOW = 1_800_000_000_000;

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** One time for both clocks of a lease round (gateway and wall clock agree here unless a test says otherwise). */
function at(ms: number) {
  return { due_ms: ms, wall_ms: ms };
}

/** One attempt through finishAttempts, as the delivery worker records a batch of one. */
async function finishOne(
  notifications: NotificationStore,
  notification_id: number,
  owner: string,
  patch: AttemptFinish['patch'],
  attempt: AttemptFinish['attempt'],
  now_ms: number,
): Promise<FinishOutcome> {
  expect(attempt.notification_id).toBe(notification_id);
  const outcomes = await notifications.finishAttempts([{ owner, patch, attempt }], now_ms);
  expect(outcomes).toHaveLength(1);
  return outcomes[0]!;
}

describe.each(storeKinds())('store contract on %s', (kind) => {
  let handle: TestStore;
  let store: Store;

  beforeAll(async () => {
    handle = await openTestStore(kind);
    store = handle.store;
  });
  afterAll(async () => {
    await handle?.cleanup();
  });

  async function newMerchant(): Promise<string> {
    const merchant = merchantFixture();
    expect(await store.merchants.insert(merchant)).toBe('created');
    return merchant.merchant_id;
  }

  async function newTransaction(merchant_id: string, overrides: Parameters<typeof transactionFixture>[1] = {}): Promise<number> {
    const trace_id = await store.transactions.insertIfAbsent(transactionFixture(merchant_id, overrides));
    expect(trace_id).toEqual(expect.any(Number));
    return trace_id!;
  }

  describe('migrations', () => {
    it('running migrate again is harmless and keeps the data', async () => {
      const merchant_id = await newMerchant();
      const trace_id = await newTransaction(merchant_id);
      await store.migrate();
      await store.migrate();
      await store.ping();
      expect((await store.merchants.get(merchant_id))?.merchant_id).toBe(merchant_id);
      expect((await store.transactions.get(trace_id))?.merchant_id).toBe(merchant_id);
    });
  });

  describe('merchants', () => {
    it('inserting an existing merchant_id answers exists and changes nothing', async () => {
      const first = merchantFixture();
      expect(await store.merchants.insert(first)).toBe('created');
      const before = await store.merchants.get(first.merchant_id);
      const count = await store.merchants.count();
      expect(before).toMatchObject({
        merchant_id: first.merchant_id,
        secret_sealed: first.secret_sealed,
        applications: first.applications,
        frontends: first.frontends,
      });
      expect(before?.gateways.map((g) => g.gateway_id)).toEqual([first.gateways[0]!.gateway_id]);

      const second = merchantFixture(first.merchant_id, {
        secret_sealed: 'v1:another',
        applications: ['other-app'],
        frontends: [{ name: 'other-front', currency: 'EUR' }],
        gateways: [gatewayFixture(first.merchant_id, { gateway_id: uniqueId('gw'), currencies: 'GBP', mit_enabled: 0, hold_payouts: 1 })],
      });
      expect(await store.merchants.insert(second)).toBe('exists');
      expect(await store.transaction((tx) => tx.merchants.insert(second))).toBe('exists');
      expect(await store.merchants.get(first.merchant_id)).toEqual(before);
      expect(await store.merchants.count()).toBe(count);
    });

    it('an unknown merchant is null', async () => {
      expect(await store.merchants.get(uniqueId('nobody'))).toBeNull();
    });
  });

  describe('merchant credentials (migration 0014)', () => {
    it('a new merchant is enabled with no previous secret', async () => {
      const merchant_id = await newMerchant();
      expect(await store.merchants.get(merchant_id)).toMatchObject({
        disabled_at_ms: null,
        previous_secret_sealed: null,
        previous_secret_until_ms: null,
      });
    });

    it('rollMerchantSecret moves the current sealed secret to previous and sets the new one; rolling again drops the older one', async () => {
      const merchant_id = await newMerchant();
      const first = (await store.merchants.get(merchant_id))!.secret_sealed;
      expect(await store.merchants.rollSecret(merchant_id, 'v1:second', NOW + 3_600_000)).toBe(true);
      expect(await store.merchants.get(merchant_id)).toMatchObject({
        secret_sealed: 'v1:second',
        previous_secret_sealed: first,
        previous_secret_until_ms: NOW + 3_600_000,
      });
      // Inside a transaction too (UnitOfWork), and only one previous secret is kept.
      expect(await store.transaction((tx) => tx.merchants.rollSecret(merchant_id, 'v1:third', NOW))).toBe(true);
      expect(await store.merchants.get(merchant_id)).toMatchObject({
        secret_sealed: 'v1:third',
        previous_secret_sealed: 'v1:second',
        previous_secret_until_ms: NOW,
      });
    });

    it('rollMerchantSecret of an unknown merchant is false and writes nothing', async () => {
      const before = await store.merchants.count();
      expect(await store.merchants.rollSecret(uniqueId('nobody'), 'v1:x', NOW)).toBe(false);
      expect(await store.merchants.count()).toBe(before);
    });

    it('10 concurrent rolls apply one after another: none loses the secret rolled before it', async () => {
      const merchant_id = await newMerchant();
      const first = (await store.merchants.get(merchant_id))!.secret_sealed;
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) => store.merchants.rollSecret(merchant_id, `v1:concurrent-${i}`, NOW + i)),
      );
      expect(results.every(Boolean)).toBe(true);
      const after = (await store.merchants.get(merchant_id))!;
      expect(after.secret_sealed).toMatch(/^v1:concurrent-\d$/);
      // Applied one after the other: the last roll's previous is the roll before it, never the first
      // secret (ten rolls pushed it out) and never its own.
      expect(after.previous_secret_sealed).toMatch(/^v1:concurrent-\d$/);
      expect(after.previous_secret_sealed).not.toBe(after.secret_sealed);
      expect(after.previous_secret_sealed).not.toBe(first);
    });

    it('setMerchantDisabled sets, keeps the first time of a repeated disable, and clears', async () => {
      const merchant_id = await newMerchant();
      expect(await store.merchants.setDisabled(merchant_id, NOW)).toBe(true);
      expect((await store.merchants.get(merchant_id))?.disabled_at_ms).toBe(NOW);
      expect(await store.merchants.setDisabled(merchant_id, NOW + 5_000)).toBe(true);
      expect((await store.merchants.get(merchant_id))?.disabled_at_ms).toBe(NOW);
      expect(await store.transaction((tx) => tx.merchants.setDisabled(merchant_id, null))).toBe(true);
      expect((await store.merchants.get(merchant_id))?.disabled_at_ms).toBeNull();
      expect(await store.merchants.setDisabled(uniqueId('nobody'), NOW)).toBe(false);
    });

    it('listMerchants pages by merchant_id after the given one, with counts and disabled_at_ms', async () => {
      const prefix = `list${uniqueId('p').replace('-', '')}`;
      const ids = ['a', 'b', 'c'].map((s) => `${prefix}${s}`);
      for (const id of ids) expect(await store.merchants.insert(merchantFixture(id))).toBe('created');
      await store.merchants.insertGateway(gatewayFixture(ids[1]!, { gateway_id: uniqueId('gw') }));
      await store.merchants.setDisabled(ids[2]!, NOW);

      const first = await store.merchants.list(prefix, 2);
      expect(first).toEqual([
        {
          merchant_id: ids[0],
          created_at_ms: 1_700_000_000_000,
          disabled_at_ms: null,
          application_count: 1,
          frontend_count: 1,
          gateway_count: 1,
        },
        {
          merchant_id: ids[1],
          created_at_ms: 1_700_000_000_000,
          disabled_at_ms: null,
          application_count: 1,
          frontend_count: 1,
          gateway_count: 2,
        },
      ]);
      const next = await store.merchants.list(first.at(-1)!.merchant_id, 2);
      expect(next[0]).toEqual({
        merchant_id: ids[2],
        created_at_ms: 1_700_000_000_000,
        disabled_at_ms: NOW,
        application_count: 1,
        frontend_count: 1,
        gateway_count: 1,
      });
      // The first page starts at the smallest merchant_id; the whole list is in order, each once.
      const all: string[] = [];
      for (let after = ''; ;) {
        const page = await store.merchants.list(after, 7);
        all.push(...page.map((m) => m.merchant_id));
        if (page.length < 7) break;
        after = page.at(-1)!.merchant_id;
      }
      expect(all).toEqual(await store.merchants.listIds(10_000));
      expect(all).toEqual(expect.arrayContaining(ids));
      expect(await store.merchants.list(prefix, 0)).toEqual([]);
    });
  });

  describe('idempotency key (merchant_id, transaction_type, order_id)', () => {
    it('a second row with the same key is refused and the first is kept', async () => {
      const merchant_id = await newMerchant();
      const row = transactionFixture(merchant_id, { request_fingerprint: 'first' });
      const trace_id = await store.transactions.insertIfAbsent(row);
      expect(trace_id).toEqual(expect.any(Number));
      expect(await store.transactions.insertIfAbsent({ ...row, request_fingerprint: 'second', amount_minor: 5 })).toBeNull();
      const kept = await store.transactions.findByKey(merchant_id, 'sale', row.order_id);
      expect(kept).toMatchObject({ trace_id, request_fingerprint: 'first', amount_minor: 1999, status: 'pending' });
      expect(kept?.refund_reserved_minor).toBe(0);
    });

    it('the same order_id with another type or another merchant is a different key', async () => {
      const merchant_id = await newMerchant();
      const other_merchant = await newMerchant();
      const order_id = uniqueId('order');
      const sale = await store.transactions.insertIfAbsent(transactionFixture(merchant_id, { order_id }));
      const refund = await store.transactions.insertIfAbsent(
        transactionFixture(merchant_id, { order_id, transaction_type: 'refund', reference_id: sale }),
      );
      const other = await store.transactions.insertIfAbsent(transactionFixture(other_merchant, { order_id }));
      expect([sale, refund, other].every((id) => typeof id === 'number')).toBe(true);
      expect(new Set([sale, refund, other]).size).toBe(3);
      expect((await store.transactions.findByKey(merchant_id, 'refund', order_id))?.trace_id).toBe(refund);
      expect((await store.transactions.findByKey(other_merchant, 'sale', order_id))?.trace_id).toBe(other);
      expect(await store.transactions.findByKey(merchant_id, 'payout', order_id)).toBeNull();
    });

    it('reserveTransactionWithChange writes the row and its first status change together, and nothing for a taken key', async () => {
      const merchant_id = await newMerchant();
      const row = transactionFixture(merchant_id, { request_fingerprint: 'first' });
      const reserved = await store.transactions.reserveWithChange(row, 'request accepted');
      expect(reserved).toEqual(await store.transactions.get(reserved!.trace_id));
      expect(reserved).toMatchObject({ order_id: row.order_id, status: 'pending', refund_reserved_minor: 0 });
      expect(await store.transactions.listStatusChanges(reserved!.trace_id)).toEqual([
        { from_status: '', to_status: 'pending', reason: 'request accepted', at_ms: row.created_at_ms },
      ]);
      expect(await store.transactions.reserveWithChange({ ...row, request_fingerprint: 'second' }, 'request accepted')).toBeNull();
      expect(await store.transactions.listStatusChanges(reserved!.trace_id)).toHaveLength(1);
      expect((await store.transactions.findByKey(merchant_id, 'sale', row.order_id))!.request_fingerprint).toBe('first');
      // Inside a transaction that rolls back, neither the row nor its change remains.
      const other = transactionFixture(merchant_id);
      await expect(
        store.transaction(async (tx) => {
          expect(await tx.transactions.reserveWithChange(other, 'request accepted')).not.toBeNull();
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      expect(await store.transactions.findByKey(merchant_id, 'sale', other.order_id)).toBeNull();
    });

    it('reserveOrHolder writes the row and its first change, and answers the holder of a taken key without writing', async () => {
      const merchant_id = await newMerchant();
      const row = transactionFixture(merchant_id, { request_fingerprint: 'first' });
      const first = await store.transactions.reserveOrHolder(row, 'request accepted');
      if (first.kind !== 'inserted') throw new Error(`expected an insert, got ${first.kind}`);
      expect(first.row).toEqual(await store.transactions.get(first.row.trace_id));
      expect(await store.transactions.listStatusChanges(first.row.trace_id)).toHaveLength(1);
      const again = await store.transactions.reserveOrHolder({ ...row, request_fingerprint: 'second' }, 'request accepted');
      expect(again).toEqual({ kind: 'taken', holder: first.row });
      expect(await store.transactions.listStatusChanges(first.row.trace_id)).toHaveLength(1);
      // The same order_id under another transaction type is another key.
      const refund = await store.transactions.reserveOrHolder({ ...row, transaction_type: 'refund' }, 'request accepted');
      expect(refund.kind).toBe('inserted');
      // Twenty at once: one row inserted, every other call answered with that row.
      const key = transactionFixture(merchant_id);
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          store.transactions.reserveOrHolder({ ...key, request_fingerprint: `attempt-${i}` }, 'request accepted'),
        ),
      );
      const inserted = results.filter((r) => r.kind === 'inserted');
      expect(inserted).toHaveLength(1);
      const winner = inserted[0]!.row;
      for (const result of results) if (result.kind === 'taken') expect(result.holder?.trace_id).toBe(winner.trace_id);
      expect(await store.transactions.listStatusChanges(winner.trace_id)).toHaveLength(1);
      // Inside a transaction (the in-process sale's, which looks the key up before it), the same
      // answers: on SQLite the insert itself finds the key taken there.
      const inside = transactionFixture(merchant_id, { request_fingerprint: 'inside' });
      const [made, repeated] = await store.transaction(async (tx) => [
        await tx.transactions.reserveOrHolder(inside, 'request accepted'),
        await tx.transactions.reserveOrHolder({ ...inside, request_fingerprint: 'inside again' }, 'request accepted'),
      ]);
      if (made?.kind !== 'inserted') throw new Error(`expected an insert, got ${made?.kind}`);
      expect(repeated).toEqual({ kind: 'taken', holder: made.row });
      expect(await store.transactions.listStatusChanges(made.row.trace_id)).toHaveLength(1);
    });

    it('20 concurrent reserveTransactionWithChange calls of one key give one row with one status change', async () => {
      const merchant_id = await newMerchant();
      const row = transactionFixture(merchant_id);
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          store.transactions.reserveWithChange({ ...row, request_fingerprint: `attempt-${i}` }, 'request accepted'),
        ),
      );
      const winners = results.filter((r) => r !== null);
      expect(winners).toHaveLength(1);
      expect(await store.transactions.listStatusChanges(winners[0]!.trace_id)).toHaveLength(1);
    });

    it('20 concurrent inserts of one key in transactions give exactly one row', async () => {
      const merchant_id = await newMerchant();
      const row = transactionFixture(merchant_id);
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          store.transaction(async (tx) => {
            // Read first, as the sale does, to widen the window between check and insert.
            const existing = await tx.transactions.findByKey(merchant_id, 'sale', row.order_id);
            const inserted = await tx.transactions.insertIfAbsent({ ...row, request_fingerprint: `attempt-${i}` });
            return existing ? null : inserted;
          }),
        ),
      );
      const winners = results.filter((r) => r !== null);
      expect(winners).toHaveLength(1);
      const kept = await store.transactions.findByKey(merchant_id, 'sale', row.order_id);
      expect(kept?.trace_id).toBe(winners[0]);
    });
  });

  describe('refund reservation', () => {
    it('never exceeds the sale amount and releases back', async () => {
      const merchant_id = await newMerchant();
      const sale = await newTransaction(merchant_id, { amount_minor: 100, status: 'approved' });
      expect(await store.transactions.reserveRefund(sale, 60)).toBe(true);
      expect(await store.transactions.reserveRefund(sale, 41)).toBe(false);
      expect((await store.transactions.get(sale))?.refund_reserved_minor).toBe(60);
      expect(await store.transactions.reserveRefund(sale, 40)).toBe(true);
      expect(await store.transactions.reserveRefund(sale, 1)).toBe(false);
      expect((await store.transactions.get(sale))?.refund_reserved_minor).toBe(100);
      await store.transactions.releaseRefund(sale, 40);
      expect((await store.transactions.get(sale))?.refund_reserved_minor).toBe(60);
      expect(await store.transactions.reserveRefund(sale, 40)).toBe(true);
    });

    it('20 concurrent reservations of 30 on a 100 sale: exactly 3 succeed', async () => {
      const merchant_id = await newMerchant();
      const sale = await newTransaction(merchant_id, { amount_minor: 100, status: 'approved' });
      const results = await Promise.all(
        Array.from({ length: 20 }, () => store.transaction((tx) => tx.transactions.reserveRefund(sale, 30))),
      );
      expect(results.filter(Boolean)).toHaveLength(3);
      expect((await store.transactions.get(sale))?.refund_reserved_minor).toBe(90);
    });

    it('the database CHECK refuses a reservation above the amount or below zero, written directly', async () => {
      const merchant_id = await newMerchant();
      const sale = await newTransaction(merchant_id, { amount_minor: 100 });
      await expect(store.transactions.update(sale, { refund_reserved_minor: 101 })).rejects.toThrow(/check|constraint/i);
      await expect(store.transactions.update(sale, { refund_reserved_minor: -1 })).rejects.toThrow(/check|constraint/i);
      await expect(store.transactions.update(sale, { amount_minor: 0 })).rejects.toThrow(/check|constraint/i);
      expect(await store.transactions.get(sale)).toMatchObject({ refund_reserved_minor: 0, amount_minor: 100 });
      await store.transactions.update(sale, { refund_reserved_minor: 100 });
      expect((await store.transactions.get(sale))?.refund_reserved_minor).toBe(100);
    });
  });

  describe('compare-and-set on status', () => {
    it('updateTransactionIfStatus only changes a row in the expected status', async () => {
      const merchant_id = await newMerchant();
      const trace_id = await newTransaction(merchant_id, { status: 'pending' });
      expect(await store.transactions.updateIfStatus(trace_id, 'pending_async', { status: 'approved', error_code: 'x' })).toBe(false);
      expect(await store.transactions.get(trace_id)).toMatchObject({ status: 'pending', error_code: null });
      expect(
        await store.transactions.updateIfStatus(trace_id, 'pending', { status: 'approved', error_code: '0', updated_at_ms: NOW }),
      ).toBe(true);
      expect(await store.transactions.get(trace_id)).toMatchObject({ status: 'approved', error_code: '0', updated_at_ms: NOW });
      expect(await store.transactions.updateIfStatus(trace_id, 'pending', { status: 'rejected' })).toBe(false);
      expect((await store.transactions.get(trace_id))?.status).toBe('approved');
    });

    it('an unknown trace_id changes nothing', async () => {
      expect(await store.transactions.updateIfStatus(987_654_321, 'pending', { status: 'approved' })).toBe(false);
    });

    it('changeTransactionStatus writes the status row only with the change it records', async () => {
      const merchant_id = await newMerchant();
      const trace_id = await newTransaction(merchant_id, { status: 'pending' });
      const change = (from: TransactionStatus, to: TransactionStatus, reason: string, at_ms: number) =>
        store.transaction((tx) =>
          tx.transactions.changeStatus(trace_id, from, { status: to, error_code: '0', updated_at_ms: at_ms }, reason, at_ms),
        );
      expect(await change('pending_async', 'approved', 'stale', NOW)).toBe(false);
      expect(await store.transactions.listStatusChanges(trace_id)).toEqual([]);
      expect(await change('pending', 'approved', 'processor answered', NOW + 1)).toBe(true);
      expect(await store.transactions.get(trace_id)).toMatchObject({ status: 'approved', error_code: '0', updated_at_ms: NOW + 1 });
      expect(await change('pending', 'rejected', 'too late', NOW + 2)).toBe(false);
      expect(await store.transactions.listStatusChanges(trace_id)).toEqual([
        { from_status: 'pending', to_status: 'approved', reason: 'processor answered', at_ms: NOW + 1 },
      ]);
      // Rolled back with its transaction, row and status row alike.
      await expect(
        store.transaction(async (tx) => {
          expect(await tx.transactions.changeStatus(trace_id, 'approved', { status: 'reversed' }, 'refund', NOW + 3)).toBe(true);
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      expect((await store.transactions.get(trace_id))?.status).toBe('approved');
      expect(await store.transactions.listStatusChanges(trace_id)).toHaveLength(1);
      expect(
        await store.transaction((tx) => tx.transactions.changeStatus(987_654_321, 'pending', { status: 'approved' }, 'none', NOW)),
      ).toBe(false);
    });

    it('changeTransactionStatus writes its notification only with the change, exactly as given, and wakes the worker after the commit', async () => {
      const merchant_id = await newMerchant();
      const trace_id = await newTransaction(merchant_id, { status: 'pending' });
      const notification = {
        ...notificationFixture(trace_id, merchant_id, NOW + 5, NOW),
        payload_json: JSON.stringify({ trace_id, status: 'approved' }),
      };
      let woken = 0;
      const stop = store.onNotificationCommitted(() => {
        woken += 1;
      });
      try {
        const change = (from: TransactionStatus, to: TransactionStatus, at_ms: number) =>
          store.transaction((tx) =>
            tx.transactions.changeStatus(trace_id, from, { status: to, updated_at_ms: at_ms }, 'test', at_ms, notification),
          );
        expect(await change('pending_async', 'approved', NOW)).toBe(false);
        expect(await store.notifications.listOfTransaction(trace_id)).toEqual([]);
        expect(woken).toBe(0);
        expect(await change('pending', 'approved', NOW + 1)).toBe(true);
        expect(woken).toBe(1);
        const [stored, ...others] = await store.notifications.listOfTransaction(trace_id);
        expect(others).toEqual([]);
        expect(stored).toMatchObject({
          ...notification,
          kind: 'transaction',
          subscription_id: null,
          attempts: 0,
          bound_from_ms: NOW,
          id: expect.any(Number),
        });
        // Rolled back with its transaction: no notification, no wake-up.
        await expect(
          store.transaction(async (tx) => {
            expect(await tx.transactions.changeStatus(trace_id, 'approved', { status: 'reversed' }, 'test', NOW + 2, notification)).toBe(
              true,
            );
            throw new Error('rolled back');
          }),
        ).rejects.toThrow('rolled back');
        expect(await store.notifications.listOfTransaction(trace_id)).toHaveLength(1);
        expect(woken).toBe(1);
      } finally {
        stop();
      }
    });

    it('of 10 concurrent changes from the same status, exactly one wins', async () => {
      const merchant_id = await newMerchant();
      const trace_id = await newTransaction(merchant_id, { status: 'pending' });
      const targets: TransactionStatus[] = [
        'approved',
        'rejected',
        'error',
        'declined',
        'approved',
        'rejected',
        'error',
        'declined',
        'approved',
        'rejected',
      ];
      const results = await Promise.all(
        targets.map((to) => store.transaction((tx) => tx.transactions.updateIfStatus(trace_id, 'pending', { status: to }))),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      expect((await store.transactions.get(trace_id))?.status).toBe(targets[results.indexOf(true)]);
    });
  });

  describe('transactions', () => {
    it('a transaction that throws rolls back every write', async () => {
      const merchant_id = await newMerchant();
      const existing = await newTransaction(merchant_id, { amount_minor: 100, status: 'approved' });
      const order_id = uniqueId('order');
      const new_merchant = merchantFixture();
      let inserted: number | null = null;
      const failure = new Error('boom after writes');
      await expect(
        store.transaction(async (tx) => {
          expect(await tx.merchants.insert(new_merchant)).toBe('created');
          inserted = await tx.transactions.insertIfAbsent(transactionFixture(merchant_id, { order_id }));
          expect(inserted).toEqual(expect.any(Number));
          await tx.transactions.insertStatusChange({
            trace_id: inserted!,
            from_status: 'pending',
            to_status: 'approved',
            reason: 'test',
            at_ms: NOW,
          });
          await tx.notifications.insert(notificationFixture(inserted!, merchant_id, NOW, NOW));
          await tx.transactions.insertDueAction({
            trace_id: inserted!,
            kind: 'processor_result',
            due_at_ms: NOW,
            expected_status: 'pending',
            to_status: 'approved',
            error_code: null,
            error_details: null,
          });
          expect(await tx.transactions.reserveRefund(existing, 50)).toBe(true);
          expect(await tx.transactions.updateIfStatus(existing, 'approved', { status: 'reversed' })).toBe(true);
          await tx.cards.insertIfAbsent(cardFixture(merchant_id, { card_token: 'rolled-back-token' }));
          await tx.sandboxClock.setOffset(123_456);
          // Visible inside the transaction:
          expect((await tx.transactions.get(existing))?.status).toBe('reversed');
          throw failure;
        }),
      ).rejects.toBe(failure);

      expect(await store.merchants.get(new_merchant.merchant_id)).toBeNull();
      expect(await store.transactions.findByKey(merchant_id, 'sale', order_id)).toBeNull();
      expect(await store.transactions.listStatusChanges(inserted!)).toEqual([]);
      expect(await store.notifications.listOfTransaction(inserted!)).toEqual([]);
      expect((await store.transactions.claimDueActions(NOW + 1, 100)).filter((a) => a.trace_id === inserted)).toEqual([]);
      expect(await store.transactions.get(existing)).toMatchObject({ status: 'approved', refund_reserved_minor: 0 });
      expect(await store.cards.get(merchant_id, 'rolled-back-token')).toBeNull();
      expect(await store.sandboxClock.getOffset()).not.toBe(123_456);
    });

    it('a transaction that returns commits everything', async () => {
      const merchant_id = await newMerchant();
      const trace_id = await store.transaction(async (tx) => {
        const id = await tx.transactions.insertIfAbsent(transactionFixture(merchant_id));
        await tx.transactions.insertStatusChange({
          trace_id: id!,
          from_status: 'pending',
          to_status: 'approved',
          reason: 'committed',
          at_ms: NOW,
        });
        return id!;
      });
      expect(await store.transactions.listStatusChanges(trace_id)).toEqual([
        { from_status: 'pending', to_status: 'approved', reason: 'committed', at_ms: NOW },
      ]);
    });
  });

  describe('due actions', () => {
    it('claimDueActions returns due, unfinished actions in due order; markDueActionDone removes them', async () => {
      const merchant_id = await newMerchant();
      const t1 = await newTransaction(merchant_id);
      const t2 = await newTransaction(merchant_id);
      const t3 = await newTransaction(merchant_id);
      const base = NOW + 10_000_000; // after any other test's actions
      const action = (trace_id: number, due_at_ms: number) => ({
        trace_id,
        kind: 'processor_result' as const,
        due_at_ms,
        expected_status: 'pending' as const,
        to_status: 'approved' as const,
        error_code: null,
        error_details: null,
      });
      await store.transactions.insertDueAction(action(t2, base + 2000));
      await store.transactions.insertDueAction(action(t1, base + 1000));
      await store.transactions.insertDueAction(action(t3, base + 5000));
      await store.transactions.insertDueAction(action(t1, base + 9000)); // same (trace_id, kind): ignored
      const mine = <T extends { trace_id: number }>(rows: T[]): T[] => rows.filter((r) => [t1, t2, t3].includes(r.trace_id));

      const due = mine(await store.transactions.claimDueActions(base + 2500, 100));
      expect(due.map((a) => [a.trace_id, a.due_at_ms])).toEqual([
        [t1, base + 1000],
        [t2, base + 2000],
      ]);
      expect(due[0]).toMatchObject({ kind: 'processor_result', expected_status: 'pending', to_status: 'approved', done: 0 });

      await store.transactions.markDueActionDone(due[0]!.id);
      expect(mine(await store.transactions.claimDueActions(base + 2500, 100)).map((a) => a.trace_id)).toEqual([t2]);
      expect(mine(await store.transactions.claimDueActions(base + 5000, 100)).map((a) => a.trace_id)).toEqual([t2, t3]);
      await store.transaction(async (tx) => {
        for (const a of mine(await tx.transactions.claimDueActions(base + 5000, 100))) await tx.transactions.markDueActionDone(a.id);
      });
      expect(mine(await store.transactions.claimDueActions(base + 100_000, 100))).toEqual([]);
    });

    it('claimDueActions respects the limit', async () => {
      const merchant_id = await newMerchant();
      const before = (await store.transactions.claimDueActions(NOW, 1000)).length;
      for (let i = 0; i < 3; i += 1) {
        const t = await newTransaction(merchant_id);
        await store.transactions.insertDueAction({
          trace_id: t,
          kind: 'challenge_timeout',
          due_at_ms: NOW - 1000 + i,
          expected_status: 'pending',
          to_status: 'rejected',
          error_code: null,
          error_details: null,
        });
      }
      expect(await store.transactions.claimDueActions(NOW, 1000)).toHaveLength(before + 3);
      expect(await store.transactions.claimDueActions(NOW, 2)).toHaveLength(2);
    });

    it.runIf(kind === 'postgres')('two open transactions claim disjoint sets (SKIP LOCKED)', async () => {
      const merchant_id = await newMerchant();
      const base = NOW + 50_000_000;
      // Earlier tests left due actions behind; finish them so only this test's rows are due.
      for (const left of await store.transactions.claimDueActions(base + 10, 10_000)) await store.transactions.markDueActionDone(left.id);
      const ids: number[] = [];
      for (let i = 0; i < 6; i += 1) {
        const t = await newTransaction(merchant_id);
        ids.push(t);
        await store.transactions.insertDueAction({
          trace_id: t,
          kind: 'processor_result',
          due_at_ms: base + i,
          expected_status: 'pending',
          to_status: 'approved',
          error_code: null,
          error_details: null,
        });
      }
      const a_claimed = deferred();
      const release_a = deferred();
      const a = store.transaction(async (tx) => {
        const rows = (await tx.transactions.claimDueActions(base + 10, 3)).map((r) => r.trace_id);
        a_claimed.resolve();
        await release_a.promise;
        return rows;
      });
      await a_claimed.promise;
      const b = await store.transaction(async (tx) => (await tx.transactions.claimDueActions(base + 10, 100)).map((r) => r.trace_id));
      release_a.resolve();
      const a_rows = await a;
      expect(a_rows).toHaveLength(3);
      expect(a_rows.every((id) => ids.includes(id))).toBe(true);
      expect(a_rows.filter((id) => b.includes(id))).toEqual([]);
      expect(new Set([...a_rows, ...b.filter((id) => ids.includes(id))])).toEqual(new Set(ids));
    });
  });

  describe('notification leases', () => {
    /** `count` due notifications, each of its own transaction (one transaction's are delivered in order). */
    async function notifications(count: number, next_attempt_at_ms: number): Promise<number[]> {
      const merchant_id = await newMerchant();
      const ids: number[] = [];
      for (let i = 0; i < count; i += 1) {
        const trace_id = await newTransaction(merchant_id);
        ids.push(await store.notifications.insert(notificationFixture(trace_id, merchant_id, next_attempt_at_ms, NOW)));
      }
      return ids;
    }

    /** Two notifications of one transaction, both due at `next_attempt_at_ms`: the second is held back while the first is pending. */
    async function twoOfOneTransaction(next_attempt_at_ms: number): Promise<{ first: number; second: number }> {
      const merchant_id = await newMerchant();
      const trace_id = await newTransaction(merchant_id);
      const first = await store.notifications.insert(notificationFixture(trace_id, merchant_id, next_attempt_at_ms, NOW));
      const second = await store.notifications.insert(notificationFixture(trace_id, merchant_id, next_attempt_at_ms, NOW));
      return { first, second };
    }

    it("a transaction's later notification is not leased while an older one is pending", async () => {
      const t0 = NOW + 700_000_000;
      const { first, second } = await twoOfOneTransaction(t0);
      const leasedOf = (rows: { id: number }[]) => rows.map((r) => r.id).filter((id) => id === first || id === second);

      expect(leasedOf(await store.notifications.lease(at(t0), 100, 1000, 'o'))).toEqual([first]);
      const attempt = (no: number, id: number) => ({
        notification_id: id,
        attempt_no: no,
        started_at_ms: t0,
        duration_ms: 1,
        http_status: 500,
        reply_excerpt: null,
        outcome: 'retry' as const,
        reason: 'HTTP 500',
      });
      // While the first is being sent, the second waits behind it.
      expect(leasedOf(await store.notifications.lease(at(t0 + 10), 100, 1000, 'o'))).toEqual([]);
      // The first fails: with a newer notification of its transaction it is superseded, not
      // retried (docs/notifications.md §5), in the same step, so the second goes out next.
      expect(
        await finishOne(
          store.notifications,
          first,
          'o',
          { state: 'pending', next_attempt_at_ms: t0 + 5000, last_error: 'HTTP 500', attempts: 1 },
          attempt(1, first),
          t0 + 10,
        ),
      ).toBe('superseded');
      expect(leasedOf(await store.notifications.lease(at(t0 + 10), 100, 1000, 'o'))).toEqual([second]);
      // The newest has nothing newer: a failed attempt leaves it pending, due again later.
      expect(
        await finishOne(
          store.notifications,
          second,
          'o',
          { state: 'pending', next_attempt_at_ms: t0 + 5000, last_error: 'HTTP 500', attempts: 1 },
          attempt(1, second),
          t0 + 10,
        ),
      ).toBe('finished');
      expect(await store.notifications.get(second)).toMatchObject({
        state: 'pending',
        next_attempt_at_ms: t0 + 5000,
        last_error: 'HTTP 500',
      });
    });

    it('a later status supersedes the older notifications not being sent; one being sent is superseded when its attempt fails', async () => {
      const t0 = NOW + 710_000_000;
      const merchant_id = await newMerchant();
      const trace_id = await newTransaction(merchant_id, { status: 'pending' });
      const change = (from: TransactionStatus, to: TransactionStatus, at_ms: number) =>
        store.transaction((tx) =>
          tx.transactions.changeStatus(
            trace_id,
            from,
            { status: to, updated_at_ms: at_ms },
            'test',
            at_ms,
            notificationFixture(trace_id, merchant_id, at_ms, NOW),
          ),
        );
      expect(await change('pending', 'pending_async', t0)).toBe(true);
      const [informational] = await store.notifications.listOfTransaction(trace_id);
      // Waiting for its resend (not leased): the later status supersedes it in the same transaction.
      expect(await change('pending_async', 'approved', t0 + 1)).toBe(true);
      const [older, latest] = await store.notifications.listOfTransaction(trace_id);
      expect(older).toMatchObject({
        id: informational!.id,
        state: 'superseded',
        last_error: 'superseded by a later status of the transaction',
        updated_at_ms: t0 + 1,
      });
      expect(latest).toMatchObject({ state: 'pending' });
      // Nothing holds the latest back now.
      expect((await store.notifications.lease(at(t0 + 1), 100, 1000, 'w')).map((r) => r.id)).toContain(latest!.id);
      // Being sent when the next status arrives: left alone then, superseded when its attempt fails.
      expect(await change('approved', 'reversed', t0 + 2)).toBe(true);
      const after = await store.notifications.listOfTransaction(trace_id);
      expect(after.map((n) => n.state)).toEqual(['superseded', 'pending', 'pending']);
      const failed = {
        notification_id: latest!.id,
        attempt_no: 1,
        started_at_ms: t0 + 2,
        duration_ms: 1,
        http_status: 500,
        reply_excerpt: null,
        outcome: 'retry' as const,
        reason: 'HTTP 500',
      };
      expect(
        await finishOne(
          store.notifications,
          latest!.id,
          'w',
          { state: 'pending', next_attempt_at_ms: t0 + 5000, last_error: 'HTTP 500', attempts: 1 },
          failed,
          t0 + 3,
        ),
      ).toBe('superseded');
      // Its attempt is recorded all the same, and the supersede is part of the same step.
      expect(await store.notifications.listAttempts(latest!.id)).toEqual([failed]);
      expect(await store.notifications.get(latest!.id)).toMatchObject({
        state: 'superseded',
        last_error: 'superseded by a later status of the transaction',
        attempts: 1,
        lease_owner: null,
        updated_at_ms: t0 + 3,
      });
      expect((await store.notifications.listOfTransaction(trace_id)).map((n) => n.state)).toEqual(['superseded', 'superseded', 'pending']);
      // The newest has nothing newer: a failed attempt leaves it pending for its resend.
      expect((await store.notifications.lease(at(t0 + 4), 100, 1000, 'w2')).map((r) => r.id)).toContain(after[2]!.id);
      expect(
        await finishOne(
          store.notifications,
          after[2]!.id,
          'w2',
          { state: 'pending', next_attempt_at_ms: t0 + 5000, last_error: 'HTTP 500', attempts: 1 },
          { ...failed, notification_id: after[2]!.id, started_at_ms: t0 + 4 },
          t0 + 4,
        ),
      ).toBe('finished');
      expect(await store.notifications.get(after[2]!.id)).toMatchObject({ state: 'pending', attempts: 1, lease_owner: null });
    });

    it('a leased row is not leased again by another owner until the lease ends', async () => {
      const t0 = NOW + 100_000_000;
      const ids = await notifications(3, t0);
      const not_yet = await notifications(1, t0 + 60_000);
      const lease_ms = 30_000;
      const leasedIds = (rows: { id: number }[]) =>
        rows
          .map((r) => r.id)
          .filter((id) => ids.includes(id) || not_yet.includes(id))
          .sort((x, y) => x - y);

      const a = await store.notifications.lease(at(t0), 100, lease_ms, 'owner-a');
      expect(leasedIds(a)).toEqual(ids);
      for (const row of a.filter((r) => ids.includes(r.id)))
        expect(row).toMatchObject({ lease_owner: 'owner-a', lease_until_ms: t0 + lease_ms });

      expect(leasedIds(await store.notifications.lease(at(t0 + 1000), 100, lease_ms, 'owner-b'))).toEqual([]);
      expect(leasedIds(await store.notifications.lease(at(t0 + lease_ms), 100, lease_ms, 'owner-b'))).toEqual([]);
      for (const id of ids) expect((await store.notifications.get(id))?.lease_owner).toBe('owner-a');

      const b = await store.notifications.lease(at(t0 + lease_ms + 1), 100, lease_ms, 'owner-b');
      expect(leasedIds(b)).toEqual(ids);
      for (const id of ids)
        expect(await store.notifications.get(id)).toMatchObject({ lease_owner: 'owner-b', lease_until_ms: t0 + 2 * lease_ms + 1 });

      // Due later: leased once it is due.
      expect(leasedIds(await store.notifications.lease(at(t0 + 60_000), 100, lease_ms, 'owner-c'))).toEqual(not_yet);
    });

    it('never leases more than the limit', async () => {
      const t0 = NOW + 800_000_000;
      // Earlier tests left due notifications behind; lease them away first.
      await store.notifications.lease(at(t0), 10_000, 1_000_000_000, 'drain');
      const ids = await notifications(10, t0);
      const first = await store.notifications.lease(at(t0), 4, 30_000, 'limited');
      expect(first).toHaveLength(4);
      expect(first.map((r) => r.id)).toEqual(ids.slice(0, 4));
      const leased_in_db = [];
      for (const id of ids) if ((await store.notifications.get(id))?.lease_owner === 'limited') leased_in_db.push(id);
      expect(leased_in_db).toEqual(ids.slice(0, 4));
      expect((await store.notifications.lease(at(t0), 4, 30_000, 'next')).map((r) => r.id)).toEqual(ids.slice(4, 8));
    });

    it('only pending notifications are leased', async () => {
      const t0 = NOW + 200_000_000;
      const [id] = await notifications(1, t0);
      const leased = await store.notifications.lease(at(t0), 100, 1000, 'owner-a');
      expect(leased.map((r) => r.id)).toContain(id);
      const attempt = {
        notification_id: id!,
        attempt_no: 1,
        started_at_ms: t0,
        duration_ms: 5,
        http_status: 200,
        reply_excerpt: 'OK',
        outcome: 'delivered' as const,
        reason: 'merchant answered OK',
      };
      expect(
        await finishOne(
          store.notifications,
          id!,
          'owner-a',
          { state: 'delivered', next_attempt_at_ms: t0, last_error: null, attempts: 1 },
          attempt,
          t0,
        ),
      ).toBe('finished');
      expect((await store.notifications.lease(at(t0 + 5000), 100, 1000, 'owner-b')).map((r) => r.id)).not.toContain(id);
    });

    it('concurrent leasers get disjoint sets and together everything due', async () => {
      const t0 = NOW + 300_000_000;
      const ids = await notifications(20, t0);
      const owners = ['w1', 'w2', 'w3', 'w4'];
      const results = await Promise.all(owners.map((owner) => store.notifications.lease(at(t0), 100, 30_000, owner)));
      const sets = results.map((rows) => rows.map((r) => r.id).filter((id) => ids.includes(id)));
      const all = sets.flat();
      expect(new Set(all).size).toBe(all.length);
      expect(new Set(all)).toEqual(new Set(ids));
      for (const [i, set] of sets.entries()) {
        for (const id of set) expect((await store.notifications.get(id))?.lease_owner).toBe(owners[i]);
      }
    });

    it.runIf(kind === 'postgres')('on PostgreSQL, two leasers in open transactions get disjoint sets', async () => {
      const t0 = NOW + 400_000_000;
      // Earlier tests left due notifications behind; lease them away so only this test's rows are due.
      await store.notifications.lease(at(t0), 10_000, 1_000_000_000, 'drain');
      const ids = await notifications(10, t0);
      const a_leased = deferred();
      const release_a = deferred();
      const a = store.transaction(async (tx) => {
        const rows = (await tx.notifications.lease(at(t0), 4, 30_000, 'tx-a')).map((r) => r.id);
        a_leased.resolve();
        await release_a.promise;
        return rows;
      });
      await a_leased.promise;
      // B runs while A still holds its row locks: SKIP LOCKED must hand it other rows, at once.
      const b = await store.transaction(async (tx) => (await tx.notifications.lease(at(t0), 100, 30_000, 'tx-b')).map((r) => r.id));
      release_a.resolve();
      const a_rows = (await a).filter((id) => ids.includes(id));
      const b_rows = b.filter((id) => ids.includes(id));
      expect(a_rows).toHaveLength(4);
      expect(b_rows).toHaveLength(6);
      expect(a_rows.filter((id) => b_rows.includes(id))).toEqual([]);
      for (const id of a_rows) expect((await store.notifications.get(id))?.lease_owner).toBe('tx-a');
      for (const id of b_rows) expect((await store.notifications.get(id))?.lease_owner).toBe('tx-b');
    });

    it('finishNotificationAttempt by the wrong owner changes nothing', async () => {
      const t0 = NOW + 500_000_000;
      const [id] = await notifications(1, t0);
      await store.notifications.lease(at(t0), 100, 30_000, 'owner-a');
      const before = await store.notifications.get(id!);
      expect(before).toMatchObject({ lease_owner: 'owner-a', attempts: 0, state: 'pending' });
      const attempt = {
        notification_id: id!,
        attempt_no: 1,
        started_at_ms: t0,
        duration_ms: 12,
        http_status: 500,
        reply_excerpt: 'err',
        outcome: 'retry' as const,
        reason: 'HTTP 500',
      };
      const patch = { state: 'pending' as const, next_attempt_at_ms: t0 + 300_000, last_error: 'HTTP 500', attempts: 1 };

      expect(await finishOne(store.notifications, id!, 'owner-b', patch, attempt, t0 + 100)).toBe('lease_lost');
      expect(await store.notifications.get(id!)).toEqual(before);
      expect(await store.notifications.listAttempts(id!)).toEqual([]);

      expect(await finishOne(store.notifications, id!, 'owner-a', patch, attempt, t0 + 100)).toBe('finished');
      expect(await store.notifications.get(id!)).toMatchObject({
        state: 'pending',
        attempts: 1,
        last_error: 'HTTP 500',
        next_attempt_at_ms: t0 + 300_000,
        lease_owner: null,
        lease_until_ms: null,
        updated_at_ms: t0 + 100,
      });
      expect(await store.notifications.listAttempts(id!)).toEqual([attempt]);
      // The lease is gone: the old owner cannot finish it a second time.
      expect(await finishOne(store.notifications, id!, 'owner-a', { ...patch, attempts: 2 }, { ...attempt, attempt_no: 2 }, t0 + 200)).toBe(
        'lease_lost',
      );
      expect(await store.notifications.listAttempts(id!)).toHaveLength(1);
    });

    it('finishNotificationAttempt is atomic: an attempt that cannot be recorded leaves the notification as it was', async () => {
      const t0 = NOW + 510_000_000;
      const [id] = await notifications(1, t0);
      await store.notifications.lease(at(t0), 100, 30_000, 'owner-a');
      const attempt = {
        notification_id: id!,
        attempt_no: 1,
        started_at_ms: t0,
        duration_ms: 12,
        http_status: 500,
        reply_excerpt: 'err',
        outcome: 'retry' as const,
        reason: 'HTTP 500',
      };
      const patch = { state: 'pending' as const, next_attempt_at_ms: t0 + 300_000, last_error: 'HTTP 500', attempts: 1 };
      expect(await finishOne(store.notifications, id!, 'owner-a', patch, attempt, t0 + 100)).toBe('finished');
      await store.notifications.lease(at(t0 + 300_000), 100, 30_000, 'owner-a');
      const before = await store.notifications.get(id!);
      // Attempt number 1 again breaks notification_attempts_once: the state change must not stay either.
      await expect(
        finishOne(store.notifications, id!, 'owner-a', { ...patch, state: 'delivered', attempts: 2 }, attempt, t0 + 300_100),
      ).rejects.toThrow();
      expect(await store.notifications.get(id!)).toEqual(before);
      expect(await store.notifications.listAttempts(id!)).toEqual([attempt]);
      // Inside a transaction it takes part in that transaction.
      const second = { ...attempt, attempt_no: 2, started_at_ms: t0 + 300_000 };
      expect(
        await store.transaction((tx) => finishOne(tx.notifications, id!, 'owner-a', { ...patch, attempts: 2 }, second, t0 + 300_100)),
      ).toBe('finished');
      expect(await store.notifications.listAttempts(id!)).toEqual([attempt, second]);
    });

    it('finishAttempts records many attempts at once, each with its own outcome, all or none', async () => {
      const t0 = NOW + 520_000_000;
      const { first: older, second: newer } = await twoOfOneTransaction(t0);
      const [delivered, lost, retried] = await notifications(3, t0);
      const mine = [older, delivered, lost, retried];
      const leased = (await store.notifications.lease(at(t0), 100, 30_000, 'batch-a')).map((r) => r.id);
      expect(mine.every((id) => leased.includes(id!))).toBe(true);
      expect(leased).not.toContain(newer);
      const attempt = (id: number, no: number, started_at_ms: number) => ({
        notification_id: id,
        attempt_no: no,
        started_at_ms,
        duration_ms: 3,
        http_status: no === 1 ? 500 : 200,
        reply_excerpt: `it's "quoted", {braced} \\ and ünïcode`,
        outcome: 'retry' as const,
        reason: 'HTTP 500',
      });
      const failed = { state: 'pending' as const, next_attempt_at_ms: t0 + 60_000, last_error: 'HTTP 500', attempts: 1 };
      const batch = [
        { owner: 'batch-a', patch: failed, attempt: attempt(older, 1, t0) },
        {
          owner: 'batch-a',
          patch: { state: 'delivered' as const, next_attempt_at_ms: t0, last_error: null, attempts: 1 },
          attempt: attempt(delivered!, 1, t0),
        },
        { owner: 'batch-b', patch: failed, attempt: attempt(lost!, 1, t0) },
        { owner: 'batch-a', patch: failed, attempt: attempt(retried!, 1, t0) },
      ];
      expect(await store.notifications.finishAttempts(batch, t0 + 5)).toEqual(['superseded', 'finished', 'lease_lost', 'finished']);
      expect(await store.notifications.get(older)).toMatchObject({
        state: 'superseded',
        attempts: 1,
        lease_owner: null,
        updated_at_ms: t0 + 5,
      });
      expect(await store.notifications.get(delivered!)).toMatchObject({
        state: 'delivered',
        last_error: null,
        attempts: 1,
        lease_owner: null,
      });
      expect(await store.notifications.get(lost!)).toMatchObject({ state: 'pending', attempts: 0, lease_owner: 'batch-a' });
      expect(await store.notifications.get(retried!)).toMatchObject({
        state: 'pending',
        next_attempt_at_ms: t0 + 60_000,
        last_error: 'HTTP 500',
      });
      for (const [index, id] of mine.entries())
        expect(await store.notifications.listAttempts(id!)).toEqual(index === 2 ? [] : [batch[index]!.attempt]);

      // All or none: an attempt that cannot be recorded (its number again) leaves every row of the batch as it was.
      expect((await store.notifications.lease(at(t0 + 60_000), 100, 30_000, 'batch-a')).map((r) => r.id)).toContain(retried);
      const before = await Promise.all([lost!, retried!].map((id) => store.notifications.get(id)));
      const again = { ...failed, attempts: 2 };
      await expect(
        store.notifications.finishAttempts(
          [
            { owner: 'batch-a', patch: again, attempt: attempt(lost!, 1, t0 + 60_000) },
            { owner: 'batch-a', patch: again, attempt: attempt(retried!, 1, t0 + 60_000) },
          ],
          t0 + 60_005,
        ),
      ).rejects.toThrow();
      expect(await Promise.all([lost!, retried!].map((id) => store.notifications.get(id)))).toEqual(before);
      expect(await store.notifications.listAttempts(lost!)).toEqual([]);

      // Bounded, and each notification once.
      const many = Array.from({ length: FINISH_BATCH_MAX + 1 }, (_, i) => ({
        owner: 'batch-a',
        patch: again,
        attempt: attempt(i + 1, 1, t0),
      }));
      await expect(store.notifications.finishAttempts(many, t0)).rejects.toThrow(/at most/);
      await expect(store.notifications.finishAttempts([batch[3]!, batch[3]!], t0)).rejects.toThrow(/twice/);
      expect(await store.notifications.finishAttempts([], t0)).toEqual([]);
    });

    it('finishAttempts says when the notification it took out of pending held back a later one', async () => {
      const t0 = NOW + 530_000_000;
      const { first, second } = await twoOfOneTransaction(t0);
      const [alone] = await notifications(1, t0);
      const delivered = { state: 'delivered' as const, next_attempt_at_ms: t0, last_error: null, attempts: 1 };
      const attempt = (id: number) => ({
        notification_id: id,
        attempt_no: 1,
        started_at_ms: t0,
        duration_ms: 2,
        http_status: 200,
        reply_excerpt: null,
        outcome: 'delivered' as const,
        reason: 'OK',
      });
      const leased = (await store.notifications.lease(at(t0), 100, 30_000, 'next-a')).map((r) => r.id);
      expect(leased).toEqual(expect.arrayContaining([first, alone]));
      expect(leased).not.toContain(second);
      // The first of two held the second back; a notification alone held nothing.
      expect(
        await store.notifications.finishAttempts(
          [
            { owner: 'next-a', patch: delivered, attempt: attempt(first) },
            { owner: 'next-a', patch: delivered, attempt: attempt(alone!) },
          ],
          t0 + 1,
        ),
      ).toEqual(['finished_with_next', 'finished']);
      // The second, last of its transaction, holds nothing back either.
      expect((await store.notifications.lease(at(t0 + 2), 100, 30_000, 'next-a')).map((r) => r.id)).toContain(second);
      expect(await finishOne(store.notifications, second, 'next-a', delivered, attempt(second), t0 + 3)).toBe('finished');
    });

    it('rescheduleNotification makes a notification due again', async () => {
      const t0 = NOW + 600_000_000;
      const [id] = await notifications(1, t0 + 1_000_000);
      expect((await store.notifications.lease(at(t0), 100, 1000, 'o')).map((r) => r.id)).not.toContain(id);
      expect(await store.notifications.reschedule(id!, t0, t0)).toBe(true);
      expect((await store.notifications.lease(at(t0), 100, 1000, 'o')).map((r) => r.id)).toContain(id);
      expect(await store.notifications.reschedule(987_654_321, t0, t0)).toBe(false);
    });

    it('due times are read on the gateway clock, leases on the wall clock', async () => {
      // The gateway clock far ahead of the wall clock, as after POST /sandbox/clock.
      const wall = NOW + 900_000_000;
      const gateway = wall + 72 * 3600 * 1000;
      const lease_ms = 30_000;
      const ids = await notifications(2, wall);
      const [later] = await notifications(1, gateway + 1);
      const mine = (rows: { id: number }[]) =>
        rows
          .map((r) => r.id)
          .filter((id) => ids.includes(id) || id === later)
          .sort((x, y) => x - y);

      const a = await store.notifications.lease({ due_ms: gateway, wall_ms: wall }, 100, lease_ms, 'clock-a');
      expect(mine(a)).toEqual(ids); // due by the gateway clock; `later` is not, whatever the wall clock says
      for (const id of ids)
        expect(await store.notifications.get(id)).toMatchObject({
          lease_owner: 'clock-a',
          lease_until_ms: wall + lease_ms,
          updated_at_ms: gateway,
        });
      // The gateway clock jumps another 72 h: the leases, on the wall clock, still hold.
      expect(
        mine(await store.notifications.lease({ due_ms: gateway + 72 * 3600 * 1000, wall_ms: wall + 1000 }, 100, lease_ms, 'clock-b')),
      ).toEqual([later]);
      expect(
        mine(await store.notifications.lease({ due_ms: gateway + 72 * 3600 * 1000, wall_ms: wall + lease_ms }, 100, lease_ms, 'clock-b')),
      ).toEqual([]);
      // Once the wall clock passes the lease, another owner may take them over.
      expect(mine(await store.notifications.lease({ due_ms: gateway, wall_ms: wall + lease_ms + 1 }, 100, lease_ms, 'clock-c'))).toEqual(
        ids,
      );
    });

    it('insertNotification starts the resend bound at creation', async () => {
      const [id] = await notifications(1, NOW);
      expect(await store.notifications.get(id!)).toMatchObject({ created_at_ms: NOW, bound_from_ms: NOW });
      const merchant_id = await newMerchant();
      const explicit = await store.notifications.insert({
        ...notificationFixture(await newTransaction(merchant_id), merchant_id, NOW, NOW),
        bound_from_ms: NOW + 5,
      });
      expect((await store.notifications.get(explicit))?.bound_from_ms).toBe(NOW + 5);
    });

    it('rescheduleNotification leaves an attempt in flight alone, and after the lease gives a fresh bound and drops the ended lease', async () => {
      const t0 = NOW + 1_000_000_000;
      const wall = t0 - 5_000_000; // the wall clock behind the gateway clock, as in a sandbox moved forward
      const lease_ms = 30_000;
      const [id] = await notifications(1, t0);
      const leased = await store.notifications.lease({ due_ms: t0, wall_ms: wall }, 100, lease_ms, 'sender');
      expect(leased.map((r) => r.id)).toContain(id);
      const before = await store.notifications.get(id!);

      // In flight: refused, nothing changed, whatever the gateway clock says.
      expect(await store.notifications.reschedule(id!, t0 + 99_000_000, t0 + 99_000_000, wall + 1000)).toBe(false);
      expect(await store.notifications.reschedule(id!, t0 + 99_000_000, t0 + 99_000_000, wall + lease_ms)).toBe(false);
      // Without a wall-clock time, any lease held refuses it.
      expect(await store.notifications.reschedule(id!, t0 + 99_000_000, t0 + 99_000_000)).toBe(false);
      expect(await store.notifications.get(id!)).toEqual(before);

      // The lease has ended (its process died): rescheduled with a fresh bound, the ended lease dropped.
      const resend_at = t0 + 4 * 24 * 3600 * 1000;
      expect(await store.notifications.reschedule(id!, resend_at, resend_at, wall + lease_ms + 1)).toBe(true);
      expect(await store.notifications.get(id!)).toMatchObject({
        state: 'pending',
        next_attempt_at_ms: resend_at,
        bound_from_ms: resend_at,
        created_at_ms: NOW,
        lease_owner: null,
        lease_until_ms: null,
        updated_at_ms: resend_at,
      });
      // The old owner can no longer record over the resend.
      const attempt = {
        notification_id: id!,
        attempt_no: 1,
        started_at_ms: t0,
        duration_ms: 1,
        http_status: 500,
        reply_excerpt: null,
        outcome: 'retry' as const,
        reason: 'HTTP 500',
      };
      expect(
        await finishOne(
          store.notifications,
          id!,
          'sender',
          { state: 'failed', next_attempt_at_ms: t0, last_error: 'HTTP 500', attempts: 1 },
          attempt,
          t0,
        ),
      ).toBe('lease_lost');
      expect((await store.notifications.get(id!))?.state).toBe('pending');
    });
  });

  describe('card vault', () => {
    it('insertCardIfAbsent twice keeps one row, the first', async () => {
      const merchant_id = await newMerchant();
      const first = cardFixture(merchant_id, { card_token: uniqueId('tok') });
      const second = cardFixture(merchant_id, { card_token: uniqueId('tok'), pan_sealed: 'v1:other' });
      await store.cards.insertIfAbsent(first);
      await store.cards.insertIfAbsent(second);
      await store.transaction((tx) => tx.cards.insertIfAbsent(second));
      expect(await store.cards.find(merchant_id, first.pin, first.pan_fingerprint, first.card_exp)).toEqual(first);
      expect(await store.cards.get(merchant_id, first.card_token)).toEqual(first);
      expect(await store.cards.get(merchant_id, second.card_token)).toBeNull();
    });

    it("tokenFor answers the new row's token, then the stored one's, in and out of a transaction, and one token for twins", async () => {
      const merchant_id = await newMerchant();
      const first = cardFixture(merchant_id, { card_token: uniqueId('tok') });
      expect(await store.cards.tokenFor(first)).toBe(first.card_token);
      expect(await store.cards.tokenFor({ ...first, card_token: uniqueId('tok'), pan_sealed: 'v1:other' })).toBe(first.card_token);
      expect(await store.transaction((tx) => tx.cards.tokenFor({ ...first, card_token: uniqueId('tok') }))).toBe(first.card_token);
      expect(await store.cards.find(merchant_id, first.pin, first.pan_fingerprint, first.card_exp)).toEqual(first);
      // Another expiry is another card.
      const renewed = cardFixture(merchant_id, { card_token: uniqueId('tok'), card_exp: '01/2033' });
      expect(await store.cards.tokenFor(renewed)).toBe(renewed.card_token);
      // Ten at once for one new card: one row, every caller its token.
      const twin = cardFixture(merchant_id, { pin: uniqueId('pin') });
      const tokens = await Promise.all(Array.from({ length: 10 }, () => store.cards.tokenFor({ ...twin, card_token: uniqueId('tok') })));
      expect(new Set(tokens).size).toBe(1);
      expect((await store.cards.find(merchant_id, twin.pin, twin.pan_fingerprint, twin.card_exp))?.card_token).toBe(tokens[0]);
    });

    it("knownToken answers only tokens seen committed: after tokenFor, at its transaction's commit, never from a rollback", async () => {
      const merchant_id = await newMerchant();
      const known = (card: { pin: string; pan_fingerprint: string; card_exp: string }) =>
        store.cards.knownToken(merchant_id, card.pin, card.pan_fingerprint, card.card_exp);
      // Outside a transaction: known once tokenFor answered.
      const first = cardFixture(merchant_id, { pin: uniqueId('pin') });
      expect(known(first)).toBeNull();
      expect(await store.cards.tokenFor(first)).toBe(first.card_token);
      expect(known(first)).toBe(first.card_token);
      expect(known({ ...first, card_exp: '01/2033' })).toBeNull();
      // A transaction that rolls back teaches nothing, and its card is not stored.
      const rolled_back = cardFixture(merchant_id, { pin: uniqueId('pin') });
      const failure = new Error('roll back');
      await expect(
        store.transaction(async (tx) => {
          expect(await tx.cards.tokenFor(rolled_back)).toBe(rolled_back.card_token);
          throw failure;
        }),
      ).rejects.toBe(failure);
      expect(known(rolled_back)).toBeNull();
      const after_rollback = { ...rolled_back, card_token: uniqueId('tok') };
      expect(await store.cards.tokenFor(after_rollback)).toBe(after_rollback.card_token);
      expect(known(rolled_back)).toBe(after_rollback.card_token);
      // In a transaction: known when it has committed, not before.
      const committed = cardFixture(merchant_id, { pin: uniqueId('pin') });
      await store.transaction(async (tx) => {
        expect(await tx.cards.tokenFor(committed)).toBe(committed.card_token);
        expect(tx.cards.knownToken(merchant_id, committed.pin, committed.pan_fingerprint, committed.card_exp)).toBeNull();
      });
      expect(known(committed)).toBe(committed.card_token);
      // The same answer the vault gives, for another merchant's same card nothing.
      expect(await store.cards.tokenFor({ ...committed, card_token: uniqueId('tok') })).toBe(known(committed));
      expect(store.cards.knownToken(await newMerchant(), committed.pin, committed.pan_fingerprint, committed.card_exp)).toBeNull();
    });

    it('a different expiry, pin or merchant is another card; tokens are scoped to their merchant', async () => {
      const merchant_id = await newMerchant();
      const other_merchant = await newMerchant();
      const base = cardFixture(merchant_id, { card_token: uniqueId('tok') });
      const renewed = cardFixture(merchant_id, { card_token: uniqueId('tok'), card_exp: '01/2032' });
      const other_pin = cardFixture(merchant_id, { card_token: uniqueId('tok'), pin: 'cust-43' });
      const other = cardFixture(other_merchant, { card_token: uniqueId('tok') });
      for (const card of [base, renewed, other_pin, other]) await store.cards.insertIfAbsent(card);
      for (const card of [base, renewed, other_pin, other]) expect(await store.cards.get(card.merchant_id, card.card_token)).toEqual(card);
      expect(await store.cards.get(other_merchant, base.card_token)).toBeNull();
      expect(await store.cards.get(merchant_id, other.card_token)).toBeNull();
    });
  });

  describe('sandbox clock offset', () => {
    it('is 0 until set, then reads back what was set', async () => {
      // Fresh store per kind: nothing set it yet except the rolled-back transaction above.
      expect(await store.sandboxClock.getOffset()).toBe(0);
      await store.sandboxClock.setOffset(5_000);
      expect(await store.sandboxClock.getOffset()).toBe(5_000);
      await store.transaction((tx) => tx.sandboxClock.setOffset(86_400_000));
      expect(await store.sandboxClock.getOffset()).toBe(86_400_000);
    });
  });

  describe('cashier orders', () => {
    it("findOrderRead answers find-order's columns and the order's leading transaction, in one statement, only for that merchant", async () => {
      const merchant_id = await newMerchant();
      const other_merchant = await newMerchant();
      const { session_id, order_id, ...rest } = cashierSessionFixture(merchant_id, NOW);
      expect(await store.cashier.insertSession({ session_id, order_id, ...rest })).toBe('created');
      const summary = {
        session_id,
        kind: 'checkout',
        identity_kind: 'frontend',
        identity_value: 'shop-front',
        order_status: 'pending',
        expires_at_ms: NOW + 900_000,
      };
      expect(await store.cashier.findOrderRead(merchant_id, order_id)).toEqual({ summary, leading: null });
      expect(await store.cashier.findSessionByOrder(merchant_id, order_id)).toMatchObject(summary);
      expect(await store.cashier.findOrderRead(other_merchant, order_id)).toBeNull();
      expect(await store.cashier.findOrderRead(merchant_id, uniqueId('order'))).toBeNull();

      // Attempts of one millisecond (a decline and the cascade attempt after it): inserted in order,
      // whatever their drawn trace_ids say.
      const attempt = async (status: TransactionStatus, at_ms: number) => {
        const row = await store.transactions.reserveWithChange(
          transactionFixture(merchant_id, { cashier_session_id: session_id, created_at_ms: at_ms, updated_at_ms: at_ms }),
          'request accepted',
        );
        if (status !== 'pending') {
          await store.transaction((tx) => tx.transactions.changeStatus(row!.trace_id, 'pending', { status }, 'test', at_ms));
        }
        return (await store.transactions.get(row!.trace_id))!;
      };
      const declined = await attempt('declined', NOW + 10);
      // A pending order reads no transaction: a merchant polling it is answered from the summary.
      expect((await store.cashier.findOrderRead(merchant_id, order_id))!.leading).toBeNull();
      const close = (order_status: OrderStatus) =>
        store.cashier.updateSessionIf(session_id, {}, { order_status, updated_at_ms: NOW + 20, closed_at_ms: NOW + 20 });
      expect(await close('rejected')).toBe(true);
      const leading = async () => (await store.cashier.findOrderRead(merchant_id, order_id))!;
      expect(await leading()).toEqual({ summary: { ...summary, order_status: 'rejected' }, leading: declined });
      const errored = [];
      for (let i = 0; i < 6; i += 1) errored.push(await attempt(i % 2 === 0 ? 'error' : 'cancelled', NOW + 30));
      // Every attempt failed: the newest, the last inserted of its millisecond.
      expect((await leading()).leading).toEqual(errored.at(-1));
      const approved = await attempt('approved', NOW + 30);
      await attempt('rejected', NOW + 30);
      await attempt('declined', NOW + 40);
      // The newest that did not fail, however many failed after it.
      expect(await close('approved')).toBe(true);
      expect(await leading()).toEqual({ summary: { ...summary, order_status: 'approved' }, leading: approved });
    });
  });

  describe('status changes', () => {
    it("lists a transaction's changes in order", async () => {
      const merchant_id = await newMerchant();
      const trace_id = await newTransaction(merchant_id);
      const ops: UnitOfWork = store;
      await ops.transactions.insertStatusChange({
        trace_id,
        from_status: 'pending',
        to_status: 'pending_async',
        reason: 'challenge',
        at_ms: NOW,
      });
      await ops.transactions.insertStatusChange({
        trace_id,
        from_status: 'pending_async',
        to_status: 'approved',
        reason: 'approved by customer',
        at_ms: NOW + 1,
      });
      expect(await store.transactions.listStatusChanges(trace_id)).toEqual([
        { from_status: 'pending', to_status: 'pending_async', reason: 'challenge', at_ms: NOW },
        { from_status: 'pending_async', to_status: 'approved', reason: 'approved by customer', at_ms: NOW + 1 },
      ]);
    });
  });

  describe('back office (migration 0015)', () => {
    it("finds a cashier transaction by the merchant's order_id, filters by each field, and pages newest first by creation time", async () => {
      const merchant_id = await newMerchant();
      const other = await newMerchant();
      const cashier = await newTransaction(merchant_id, { cashier_order_id: 'shop-order-7', amount_minor: 500, created_at_ms: NOW });
      const plain = await newTransaction(merchant_id, {
        order_id: 'plain-1',
        amount_minor: 1500,
        status: 'declined',
        created_at_ms: NOW + 86_400_000,
      });
      await newTransaction(other, { order_id: 'shop-order-7', amount_minor: 500 });
      const search = (filter: Record<string, unknown>, before: { created_at_ms: number; trace_id: number } | null = null) =>
        store.transactions.search({ merchant_id, ...filter }, before, 10).then((rows) => rows.map((r) => r.trace_id));
      expect(await search({ order_id: 'shop-order-7' })).toEqual([cashier]);
      expect(await search({ order_id: 'plain-1' })).toEqual([plain]);
      expect(await search({})).toEqual([plain, cashier]);
      expect(await search({}, { created_at_ms: NOW + 86_400_000, trace_id: plain })).toEqual([cashier]);
      expect(await search({ status: 'declined' })).toEqual([plain]);
      expect(await search({ amount_min_minor: 501 })).toEqual([plain]);
      expect(await search({ amount_max_minor: 500 })).toEqual([cashier]);
      expect(await search({ created_from_ms: NOW + 1 })).toEqual([plain]);
      expect(await search({ created_before_ms: NOW + 1 })).toEqual([cashier]);
      expect(await search({ trace_id: cashier, transaction_type: 'sale', gateway_id: `gw-${merchant_id}` })).toEqual([cashier]);
      expect(await search({ transaction_type: 'refund' })).toEqual([]);
      expect(await search({ pin: 'nobody' })).toEqual([]);
      const everyone = await store.transactions.search({ merchant_id: null, order_id: 'shop-order-7' }, null, 10);
      expect(everyone.map((r) => r.merchant_id).sort()).toEqual([merchant_id, other].sort());
    });

    it("lists a sale's refunds and a cascade's attempts in order", async () => {
      const merchant_id = await newMerchant();
      const sale = await newTransaction(merchant_id);
      const refunds = [
        // Oldest first by creation time: trace_ids are drawn at random and tell nothing of order.
        await newTransaction(merchant_id, { transaction_type: 'refund', reference_id: sale, created_at_ms: NOW + 2 }),
        await newTransaction(merchant_id, { transaction_type: 'refund', reference_id: sale, created_at_ms: NOW + 1 }),
      ];
      expect((await store.transactions.listRefundsOf(sale, 10)).map((r) => r.trace_id)).toEqual([refunds[1], refunds[0]]);
      const retry = await newTransaction(merchant_id, { cascade_root: sale, cascade_level: 1 });
      expect((await store.transactions.listCascade(sale, 10)).map((r) => [r.trace_id, r.cascade_level])).toEqual([
        [sale, 0],
        [retry, 1],
      ]);
      expect((await store.transactions.listCascade(refunds[0]!, 10)).map((r) => r.trace_id)).toEqual([refunds[0]]);
    });

    it("sums a merchant's transactions per UTC day, type, status and currency", async () => {
      const merchant_id = await newMerchant();
      const day = Math.floor(NOW / 86_400_000);
      await newTransaction(merchant_id, { amount_minor: 100, status: 'approved', created_at_ms: day * 86_400_000 });
      await newTransaction(merchant_id, { amount_minor: 250, status: 'approved', created_at_ms: day * 86_400_000 + 86_399_999 });
      await newTransaction(merchant_id, { amount_minor: 999, status: 'approved', created_at_ms: (day + 1) * 86_400_000 });
      await newTransaction(merchant_id, { amount_minor: 7, status: 'approved', created_at_ms: day * 86_400_000 - 1 });
      const rows = await store.transactions.activitySince(merchant_id, day * 86_400_000);
      expect(rows.map((r) => [r.day - day, r.transaction_type, r.status, r.currency, r.count, r.amount_minor]).sort()).toEqual([
        [0, 'sale', 'approved', 'USD', 2, 350],
        [1, 'sale', 'approved', 'USD', 1, 999],
      ]);
      expect(await store.transactions.countByStatus(merchant_id, 'sale', 'approved')).toBe(4);
    });

    it('keeps users unique by e-mail, sessions until they expire, and sign-in locks until their time', async () => {
      const merchant_id = await newMerchant();
      const email = `${uniqueId('user')}@example.com`;
      const user = { user_id: uniqueId('usr'), email, password_hash: 'x', role: 'merchant' as const, merchant_id, created_at_ms: NOW };
      expect(await store.backoffice.insertUser(user)).toBe('created');
      expect(await store.backoffice.insertUser({ ...user, user_id: uniqueId('usr') })).toBe('exists');
      // The role and merchant go together (a CHECK): an operator with a merchant is refused by the database.
      await expect(
        store.backoffice.insertUser({ ...user, user_id: uniqueId('usr'), email: `op-${email}`, role: 'operator' }),
      ).rejects.toThrow();
      const session = uniqueId('session');
      await store.backoffice.saveSession(session, user.user_id, '{"a":1}', NOW + 1000, NOW);
      expect(await store.backoffice.getSession(session, NOW + 999)).toEqual({
        user_id: user.user_id,
        data_json: '{"a":1}',
        last_seen_at_ms: NOW,
      });
      expect(await store.backoffice.getSession(session, NOW + 1000)).toBeNull();
      await store.backoffice.saveSession(session, user.user_id, '{"a":2}', NOW + 5000, NOW);
      expect((await store.backoffice.getSession(session, NOW + 1000))?.data_json).toBe('{"a":2}');
      expect(await store.backoffice.setUserDisabled(user.user_id, NOW)).toBe(true);
      expect(await store.backoffice.getSession(session, NOW)).toBeNull();
      expect(await store.backoffice.setUserDisabled('nobody', NOW)).toBe(false);

      await expect(store.backoffice.touchSession(session, NOW, NOW)).resolves.toBe(false);

      for (let i = 0; i < 3; i += 1) await store.backoffice.recordSignInFailure(email, '127.0.0.1', NOW + i);
      expect(await store.backoffice.countSignInFailures(email, NOW + 1)).toBe(2);
      await store.backoffice.lockSignIn(email, NOW + 60_000);
      expect(await store.backoffice.signInLockedUntil(email, NOW + 59_999)).toBe(NOW + 60_000);
      expect(await store.backoffice.signInLockedUntil(email, NOW + 60_000)).toBeNull();
      await store.backoffice.clearSignInFailures(email);
      expect(await store.backoffice.countSignInFailures(email, 0)).toBe(0);
    });

    it("records a session's last use only while it is not idle, and ends an idle one for one caller only", async () => {
      const user = {
        user_id: uniqueId('usr'),
        email: `${uniqueId('idle')}@example.com`,
        password_hash: 'x',
        role: 'operator' as const,
        merchant_id: null,
        created_at_ms: NOW,
      };
      await store.backoffice.insertUser(user);
      const session = uniqueId('session');
      await store.backoffice.saveSession(session, user.user_id, '{}', NOW + 8 * 3600_000, NOW);
      // Not idle (last seen at or after idle_since_ms): a use is recorded, and the session is not ended.
      expect(await store.backoffice.touchSession(session, NOW + 60_000, NOW)).toBe(true);
      expect((await store.backoffice.getSession(session, NOW + 60_000))?.last_seen_at_ms).toBe(NOW + 60_000);
      expect(await store.backoffice.endIdleSession(session, NOW + 60_000)).toBe(false);
      // Idle (last seen before idle_since_ms): a late use does not bring it back; the first to end it is told so, the second not.
      expect(await store.backoffice.touchSession(session, NOW + 120_000, NOW + 60_001)).toBe(false);
      expect((await store.backoffice.getSession(session, NOW + 120_000))?.last_seen_at_ms).toBe(NOW + 60_000);
      expect(await store.backoffice.endIdleSession(session, NOW + 60_001)).toBe(true);
      expect(await store.backoffice.endIdleSession(session, NOW + 60_001)).toBe(false);
      expect(await store.backoffice.getSession(session, NOW + 120_000)).toBeNull();
      // Saving the session (a sign-in) is a use too.
      await store.backoffice.saveSession(session, user.user_id, '{}', NOW + 8 * 3600_000, NOW + 180_000);
      expect((await store.backoffice.getSession(session, NOW + 180_000))?.last_seen_at_ms).toBe(NOW + 180_000);
    });

    it("lists a transaction's processor events and a gateway's (all, or of one outcome) newest first, at most the limit (migration 0017)", async () => {
      const merchant_id = await newMerchant();
      const other = await newMerchant();
      const gateway_id = `gw-${merchant_id}`;
      const sale = await newTransaction(merchant_id);
      const second = await newTransaction(merchant_id);
      const event = (
        event_id: string,
        trace_id: number | null,
        outcome: ProcessorEventOutcome,
        received_at_ms: number,
        gateway = gateway_id,
      ) => ({ gateway_id: gateway, event_id, event_type: `type-of-${event_id}`, trace_id, outcome, received_at_ms });
      const recorded = [
        event('evt-1', sale, 'applied', NOW),
        event('evt-2', sale, 'unchanged', NOW + 1),
        event('evt-3', null, 'unmatched', NOW + 2),
        event('evt-4', second, 'ignored', NOW + 3),
        // Two in the same millisecond: event_id decides, the same on both databases.
        event('evt-5a', sale, 'unchanged', NOW + 4),
        event('evt-5b', sale, 'unchanged', NOW + 4),
        event('evt-6', null, 'unmatched', NOW + 5),
        // Another gateway's, of the same event id: never in this gateway's lists.
        event('evt-3', null, 'unmatched', NOW + 9, `gw-${other}`),
      ];
      for (const row of recorded) expect(await store.merchants.insertProcessorEvent(row)).toBe(true);
      const ids = (rows: { event_id: string }[]) => rows.map((r) => r.event_id);

      const of_sale = await store.merchants.listProcessorEventsOf(sale, 10);
      expect(ids(of_sale)).toEqual(['evt-5b', 'evt-5a', 'evt-2', 'evt-1']);
      // Whole rows, times and trace_ids as numbers on PostgreSQL too.
      expect(of_sale[3]).toEqual(recorded[0]);
      expect(ids(await store.merchants.listProcessorEventsOf(sale, 2))).toEqual(['evt-5b', 'evt-5a']);
      expect(ids(await store.merchants.listProcessorEventsOf(second, 10))).toEqual(['evt-4']);
      expect(await store.merchants.listProcessorEventsOf(await newTransaction(merchant_id), 10)).toEqual([]);

      expect(ids(await store.merchants.listGatewayProcessorEvents(gateway_id, null, 10))).toEqual([
        'evt-6',
        'evt-5b',
        'evt-5a',
        'evt-4',
        'evt-3',
        'evt-2',
        'evt-1',
      ]);
      expect(ids(await store.merchants.listGatewayProcessorEvents(gateway_id, null, 3))).toEqual(['evt-6', 'evt-5b', 'evt-5a']);
      expect(await store.merchants.listGatewayProcessorEvents(gateway_id, 'unmatched', 10)).toEqual([recorded[6], recorded[2]]);
      expect(ids(await store.merchants.listGatewayProcessorEvents(gateway_id, 'unmatched', 1))).toEqual(['evt-6']);
      expect(ids(await store.merchants.listGatewayProcessorEvents(gateway_id, 'applied', 10))).toEqual(['evt-1']);
      expect(ids(await store.merchants.listGatewayProcessorEvents(gateway_id, 'unchanged', 10))).toEqual(['evt-5b', 'evt-5a', 'evt-2']);
      expect(ids(await store.merchants.listGatewayProcessorEvents(gateway_id, 'ignored', 10))).toEqual(['evt-4']);
      expect(await store.merchants.listGatewayProcessorEvents(`gw-${other}`, null, 10)).toEqual([recorded[7]]);
      expect(await store.merchants.listGatewayProcessorEvents(`gw-${other}`, 'applied', 10)).toEqual([]);
      expect(await store.merchants.listGatewayProcessorEvents('no-such-gateway', null, 10)).toEqual([]);
    });

    it("pages the audit log newest first, one merchant's lines or all", async () => {
      const merchant_id = await newMerchant();
      for (let i = 0; i < 3; i += 1) {
        await store.backoffice.insertAudit({
          at_ms: NOW + i,
          user_id: null,
          email: 'a@x',
          role: null,
          merchant_id,
          action: `act-${i}`,
          target: null,
          address: '::1',
          outcome: 'done',
          detail: null,
        });
      }
      const page = await store.backoffice.listAudit(merchant_id, null, 2);
      expect(page.map((a) => a.action)).toEqual(['act-2', 'act-1']);
      expect((await store.backoffice.listAudit(merchant_id, page[1]!.id, 2)).map((a) => a.action)).toEqual(['act-0']);
    });
  });
  describe('request log', () => {
    it('writes a batch of any size whole and in its order (a few fixed-size statements, sql/request-log.ts)', async () => {
      const merchant_id = uniqueId('rlog');
      // 157 = 2×64 + 16 + 3×4 + 1: every statement size, more than one of some.
      const rows = Array.from({ length: 157 }, (_, i) => ({
        merchant_id,
        method: 'POST',
        route: '/api/process',
        path: '/api/process',
        operation: 'sale',
        http_code: 200,
        api_status: 0,
        description: `row ${i}`,
        trace_id: null,
        latency_ms: i,
        // Every row of one millisecond: only their ids can tell the batch's order.
        created_at_ms: NOW,
        request_json: null,
        answer_json: null,
      }));
      await store.transaction((tx) => tx.requestLog.insertRequestLogs(rows));
      const filter = { merchant_id, api_status: null, trace_id: null, from_ms: null, to_ms: null, path: null, before: null };
      const listed = await store.requestLog.searchRequestLogs(filter, 500);
      // Newest first: by id, descending, within the one millisecond.
      expect(listed.map((row) => row.description)).toEqual(rows.map((row) => row.description).reverse());
      const ids = listed.map((row) => row.id);
      expect(ids).toEqual([...ids].sort((a, b) => b - a));
      await store.transaction((tx) => tx.requestLog.insertRequestLogs([]));
      expect(await store.requestLog.searchRequestLogs(filter, 500)).toHaveLength(157);
    });
  });
});
