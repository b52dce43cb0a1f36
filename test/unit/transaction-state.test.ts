// The transaction state machine: the transition tables exactly (every status x every status),
// and changeStatus against a real SQLite store: one atomic change with its audit row and
// notification, refusals and stale rows that write nothing, refund reservations released.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AUTHORIZE_TRANSITIONS,
  DEPOSIT_TRANSITIONS,
  FINAL_STATUSES,
  PAYOUT_TRANSITIONS,
  type TransactionStatus,
  isTransactionStatus,
  isTransitionAllowed,
  statusForResult,
} from '../../src/domain/transaction-state.js';
import { changeStatus } from '../../src/transitions/transaction.js';
import type { TransactionRow } from '../../src/store/schema.js';
import type { Store } from '../../src/store/store.js';
import { merchantFixture, openTestStore, type TestStore, transactionFixture } from '../support/store-fixture.js';

// Written out from docs/statuses.md, independently of the source tables.
const DEPOSIT: Record<string, string[]> = {
  pending: ['pending_async', 'authorized', 'approved', 'declined', 'rejected', 'error'],
  pending_async: ['approved', 'declined', 'rejected', 'cancelled', 'error'],
  authorized: ['approved', 'rejected', 'cancelled', 'error'],
  approved: ['chargeback', 'reversed', 'cancelled'],
  declined: [],
  rejected: [],
  error: [],
  chargeback: [],
  reversed: [],
  cancelled: [],
};
// An authorization (decisions §16): approved by the processor is authorized; captured is approved; voided is cancelled.
const AUTHORIZE: Record<string, string[]> = {
  pending: ['pending_async', 'authorized', 'declined', 'rejected', 'error'],
  pending_async: ['authorized', 'declined', 'rejected', 'cancelled', 'error'],
  authorized: ['approved', 'cancelled', 'rejected', 'error'],
  approved: ['chargeback', 'reversed'],
  declined: [],
  rejected: [],
  error: [],
  chargeback: [],
  reversed: [],
  cancelled: [],
};
const PAYOUT: Record<string, string[]> = {
  pending: ['requested', 'pending_async', 'in progress', 'approved', 'declined', 'rejected', 'cancelled', 'error'],
  requested: ['authorized', 'rejected', 'cancelled'],
  pending_async: ['approved', 'rejected', 'cancelled', 'error'],
  authorized: ['in progress', 'approved', 'rejected', 'cancelled', 'error'],
  'in progress': ['approved', 'rejected', 'error'],
  approved: ['reversed'],
  declined: [],
  rejected: [],
  reversed: [],
  cancelled: [],
  error: [],
};
const KNOWN = [...new Set([...Object.keys(DEPOSIT), ...Object.keys(PAYOUT)])];
const UNKNOWN = ['', 'APPROVED', 'approved ', 'in_progress', 'settled', 'constructor', '__proto__', 'toString', 'hasOwnProperty'];
const ALL = [...KNOWN, ...UNKNOWN];

/** A status of the tables written out above, as the state machine types it. */
function statusOf(text: string): TransactionStatus {
  if (!isTransactionStatus(text)) throw new Error(`not a transaction status: ${text}`);
  return text;
}

function allowed(table: Record<string, string[]>, from: string, to: string): boolean {
  return Object.prototype.hasOwnProperty.call(table, from) && table[from]!.includes(to);
}

function pairs(table: Record<string, string[]>, want: boolean): [string, string][] {
  const out: [string, string][] = [];
  for (const from of ALL) for (const to of ALL) if (allowed(table, from, to) === want) out.push([from, to]);
  return out;
}

describe('transition tables', () => {
  it('the exported tables are the documented ones', () => {
    expect(DEPOSIT_TRANSITIONS).toEqual(DEPOSIT);
    expect(AUTHORIZE_TRANSITIONS).toEqual(AUTHORIZE);
    expect(PAYOUT_TRANSITIONS).toEqual(PAYOUT);
    expect([...FINAL_STATUSES].sort()).toEqual(['approved', 'cancelled', 'chargeback', 'declined', 'error', 'rejected', 'reversed']);
  });

  for (const [type, table] of [
    ['sale', DEPOSIT],
    ['refund', DEPOSIT],
    ['authorize', AUTHORIZE],
    ['payout', PAYOUT],
  ] as const) {
    it(`isTransitionAllowed for ${type} matches the table for all ${ALL.length} x ${ALL.length} pairs`, () => {
      const mismatches: string[] = [];
      for (const from of ALL) {
        for (const to of ALL) {
          let got: boolean | string;
          try {
            got = isTransitionAllowed(type, from, to);
          } catch (error) {
            got = `threw ${(error as Error).message}`;
          }
          if (got !== allowed(table, from, to)) mismatches.push(`${JSON.stringify(from)} -> ${JSON.stringify(to)}: ${String(got)}`);
        }
      }
      expect(mismatches).toEqual([]);
      expect(pairs(table, true).length).toBe(Object.values(table).reduce((n, tos) => n + tos.length, 0));
    });
  }

  it("a processor's approval is authorized for an authorization and approved for everything else", () => {
    expect(statusForResult('authorize', 'approved')).toBe('authorized');
    for (const type of ['sale', 'refund', 'payout'] as const) expect(statusForResult(type, 'approved')).toBe('approved');
    for (const type of ['sale', 'authorize', 'refund', 'payout'] as const) {
      expect(statusForResult(type, 'rejected')).toBe('rejected');
      expect(statusForResult(type, 'error')).toBe('error');
    }
    // The table refuses an authorization moved straight to approved, so a path that forgets statusForResult fails loudly.
    expect(isTransitionAllowed('authorize', 'pending', 'approved')).toBe(false);
    expect(isTransitionAllowed('authorize', 'pending_async', 'approved')).toBe(false);
  });

  it('final statuses have no way out, and nothing returns to pending', () => {
    for (const table of [DEPOSIT, AUTHORIZE, PAYOUT]) {
      for (const from of ['declined', 'rejected', 'error', 'reversed', 'cancelled']) expect(table[from]).toEqual([]);
      for (const tos of Object.values(table)) expect(tos).not.toContain('pending');
    }
  });
});

describe('changeStatus on a real SQLite store', () => {
  let handle: TestStore;
  let store: Store;
  let merchant_id: string;
  const NOW = 1_800_000_000_000;

  beforeAll(async () => {
    handle = await openTestStore('sqlite');
    store = handle.store;
    const merchant = merchantFixture();
    merchant_id = merchant.merchant_id;
    await store.merchants.insert(merchant);
  });
  afterAll(async () => {
    await handle?.cleanup();
  });

  async function row(overrides: Parameters<typeof transactionFixture>[1]): Promise<TransactionRow> {
    const trace_id = await store.transactions.insertIfAbsent(
      transactionFixture(merchant_id, {
        notification_url: 'https://merchant.example/notify',
        ...overrides,
      }),
    );
    return (await store.transactions.get(trace_id!))!;
  }

  async function traces(trace_id: number) {
    return {
      row: await store.transactions.get(trace_id),
      changes: await store.transactions.listStatusChanges(trace_id),
      notifications: await store.notifications.listOfTransaction(trace_id),
    };
  }

  for (const [type, table] of [
    ['sale', DEPOSIT],
    ['payout', PAYOUT],
  ] as const) {
    it(`every allowed ${type} change writes the status, one status_changes row and one notification`, async () => {
      for (const [from, to] of pairs(table, true)) {
        const before = await row({ transaction_type: type, status: statusOf(from) });
        const outcome = await store.transaction((tx) => changeStatus(tx, before, { to: statusOf(to), reason: `test ${from}->${to}` }, NOW));
        expect(outcome.kind, `${from} -> ${to}`).toBe('changed');
        if (outcome.kind === 'changed') expect(outcome.row).toMatchObject({ trace_id: before.trace_id, status: to, updated_at_ms: NOW });
        const after = await traces(before.trace_id);
        expect(after.row).toMatchObject({ status: to, updated_at_ms: NOW });
        expect(after.changes).toEqual([{ from_status: from, to_status: to, reason: `test ${from}->${to}`, at_ms: NOW }]);
        expect(after.notifications).toHaveLength(1);
        expect(after.notifications[0]).toMatchObject({
          trace_id: before.trace_id,
          merchant_id,
          url: 'https://merchant.example/notify',
          state: 'pending',
          next_attempt_at_ms: NOW,
          attempts: 0,
          lease_owner: null,
        });
        expect(JSON.parse(after.notifications[0]!.payload_json)).toMatchObject({
          transaction_type: type,
          transaction_status: to,
          trace_id: before.trace_id,
          order_id: before.order_id,
          timestamp: NOW / 1000,
        });
      }
    });
  }

  it('without a notification_url, the change writes no notification', async () => {
    const before = await row({ status: 'pending', notification_url: null });
    const outcome = await store.transaction((tx) => changeStatus(tx, before, { to: 'approved', reason: 'processor answered' }, NOW));
    expect(outcome.kind).toBe('changed');
    const after = await traces(before.trace_id);
    expect(after.row?.status).toBe('approved');
    expect(after.changes).toHaveLength(1);
    expect(after.notifications).toEqual([]);
  });

  it('writes the patch together with the status', async () => {
    const before = await row({ status: 'pending' });
    await store.transaction((tx) =>
      changeStatus(
        tx,
        before,
        {
          to: 'rejected',
          reason: 'processor declined',
          patch: { error_code: '1', error_details: '[TEST] Do not honor', psp_transaction_id: 'psp-1' },
        },
        NOW,
      ),
    );
    const after = await traces(before.trace_id);
    expect(after.row).toMatchObject({
      status: 'rejected',
      error_code: '1',
      error_details: '[TEST] Do not honor',
      psp_transaction_id: 'psp-1',
    });
    expect(JSON.parse(after.notifications[0]!.payload_json)).toMatchObject({
      transaction_status: 'rejected',
      error_code: '1',
      error_details: '[TEST] Do not honor',
      transaction_id: 'psp-1',
    });
  });

  it('is all-or-nothing: when the enclosing transaction fails, no status, audit row or notification remains', async () => {
    const before = await row({ status: 'pending' });
    const failure = new Error('later step failed');
    await expect(
      store.transaction(async (tx) => {
        const outcome = await changeStatus(tx, before, { to: 'approved', reason: 'processor answered' }, NOW);
        expect(outcome.kind).toBe('changed');
        throw failure;
      }),
    ).rejects.toBe(failure);
    const after = await traces(before.trace_id);
    expect(after.row).toEqual(before);
    expect(after.changes).toEqual([]);
    expect(after.notifications).toEqual([]);
  });

  for (const [type, table] of [
    ['sale', DEPOSIT],
    ['payout', PAYOUT],
  ] as const) {
    it(`every refused ${type} change answers not_allowed and writes nothing`, async () => {
      for (const from of Object.keys(table)) {
        const before = await row({ transaction_type: type, status: statusOf(from) });
        for (const to of ALL.filter((t) => !allowed(table, from, t))) {
          const outcome = await store.transaction((tx) =>
            changeStatus(tx, before, { to: to as TransactionStatus, reason: 'refused' }, NOW),
          );
          expect(outcome, `${from} -> ${to}`).toEqual({ kind: 'not_allowed', from });
        }
        const after = await traces(before.trace_id);
        expect(after.row).toEqual(before);
        expect(after.changes).toEqual([]);
        expect(after.notifications).toEqual([]);
      }
    });
  }

  it('a stale row (status changed underneath) answers stale and writes nothing', async () => {
    const stale = await row({ status: 'pending' });
    expect(await store.transactions.updateIfStatus(stale.trace_id, 'pending', { status: 'pending_async' })).toBe(true);
    const current = await store.transactions.get(stale.trace_id);

    // pending -> approved is allowed by the table, but the row is no longer pending.
    const outcome = await store.transaction((tx) => changeStatus(tx, stale, { to: 'approved', reason: 'late processor answer' }, NOW));
    expect(outcome).toEqual({ kind: 'stale' });
    const after = await traces(stale.trace_id);
    expect(after.row).toEqual(current);
    expect(after.row?.status).toBe('pending_async');
    expect(after.changes).toEqual([]);
    expect(after.notifications).toEqual([]);
  });

  it('of two racing changes from the same row, one wins and the other is stale', async () => {
    const before = await row({ status: 'pending_async' });
    const outcomes = await Promise.all([
      store.transaction((tx) => changeStatus(tx, before, { to: 'approved', reason: 'customer approved' }, NOW)),
      store.transaction((tx) => changeStatus(tx, before, { to: 'rejected', reason: 'timed out' }, NOW)),
    ]);
    expect(outcomes.map((o) => o.kind).sort()).toEqual(['changed', 'stale']);
    const after = await traces(before.trace_id);
    expect(after.changes).toHaveLength(1);
    expect(after.notifications).toHaveLength(1);
    expect(after.row?.status).toBe(after.changes[0]!.to_status);
  });

  describe('refund reservations', () => {
    async function saleWithRefund(amount: number, refund_status: TransactionStatus = 'pending') {
      const sale = await row({ status: 'approved', amount_minor: 1000 });
      expect(await store.transactions.reserveRefund(sale.trace_id, amount)).toBe(true);
      const refund = await row({ transaction_type: 'refund', reference_id: sale.trace_id, amount_minor: amount, status: refund_status });
      return { sale, refund };
    }
    const reserved = async (trace_id: number) => (await store.transactions.get(trace_id))?.refund_reserved_minor;

    for (const to of ['rejected', 'declined', 'error'] as const) {
      it(`a refund that ends ${to} gives its reservation back to the sale`, async () => {
        const { sale, refund } = await saleWithRefund(300);
        expect(await reserved(sale.trace_id)).toBe(300);
        const outcome = await store.transaction((tx) => changeStatus(tx, refund, { to, reason: 'processor refused' }, NOW));
        expect(outcome.kind).toBe('changed');
        expect(await reserved(sale.trace_id)).toBe(0);
      });
    }

    it('an approved refund keeps its reservation; reversing it later gives it back', async () => {
      const { sale, refund } = await saleWithRefund(250);
      const approved = await store.transaction((tx) => changeStatus(tx, refund, { to: 'approved', reason: 'processor answered' }, NOW));
      expect(approved.kind).toBe('changed');
      expect(await reserved(sale.trace_id)).toBe(250);
      if (approved.kind !== 'changed') return;
      await store.transaction((tx) => changeStatus(tx, approved.row, { to: 'reversed', reason: 'processor reversed it' }, NOW + 1));
      expect(await reserved(sale.trace_id)).toBe(0);
    });

    it('a refund cancelled while waiting releases; one that goes to pending_async does not yet', async () => {
      const { sale, refund } = await saleWithRefund(400);
      const waiting = await store.transaction((tx) => changeStatus(tx, refund, { to: 'pending_async', reason: 'challenge' }, NOW));
      expect(await reserved(sale.trace_id)).toBe(400);
      if (waiting.kind !== 'changed') throw new Error('expected a change');
      await store.transaction((tx) => changeStatus(tx, waiting.row, { to: 'cancelled', reason: 'cancelled' }, NOW + 1));
      expect(await reserved(sale.trace_id)).toBe(0);
    });

    it('a refused or stale change releases nothing', async () => {
      const { sale, refund } = await saleWithRefund(200);
      expect((await store.transaction((tx) => changeStatus(tx, refund, { to: 'chargeback', reason: 'x' }, NOW))).kind).toBe('not_allowed');
      expect(await store.transactions.updateIfStatus(refund.trace_id, 'pending', { status: 'approved' })).toBe(true);
      expect((await store.transaction((tx) => changeStatus(tx, refund, { to: 'rejected', reason: 'late' }, NOW))).kind).toBe('stale');
      expect(await reserved(sale.trace_id)).toBe(200);
    });

    it('a failed sale does not touch any reservation', async () => {
      const { sale } = await saleWithRefund(100);
      const other = await row({ status: 'pending', reference_id: sale.trace_id });
      await store.transaction((tx) => changeStatus(tx, other, { to: 'rejected', reason: 'declined' }, NOW));
      expect(await reserved(sale.trace_id)).toBe(100);
    });

    it('the release rolls back with the status change', async () => {
      const { sale, refund } = await saleWithRefund(300);
      await expect(
        store.transaction(async (tx) => {
          await changeStatus(tx, refund, { to: 'rejected', reason: 'processor refused' }, NOW);
          throw new Error('abort');
        }),
      ).rejects.toThrow('abort');
      expect(await reserved(sale.trace_id)).toBe(300);
      expect((await store.transactions.get(refund.trace_id))?.status).toBe('pending');
    });
  });
});
