// Random trace_ids in the store (issue 30 item 7; domain/trace-id.ts, store/sql/fresh-trace-id.ts)
// on a real SQLite file and a real PostgreSQL database: new rows get drawn ids, not in sequence;
// a draw that is taken is drawn again (alone, in a transaction, and in SQLite's group commit),
// never confused with the idempotency key taken; too many taken draws are a fault that writes
// nothing; and the lists that went by trace_id page through rows with random ids, every row
// once, in the order of their creation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RANDOM_TRACE_ID_END, RANDOM_TRACE_ID_MIN, randomTraceIds, TRACE_ID_TRIES } from '../../src/domain/trace-id.js';
import type { TransactionPageKey } from '../../src/domain/transaction-search.js';
import type { TransactionRow } from '../../src/domain/transaction-record.js';
import type { SqlStore } from '../../src/store/sql-store.js';
import { TraceIdsExhausted } from '../../src/store/sql/fresh-trace-id.js';
import type { Store } from '../../src/store/store.js';
import {
  cashierSessionFixture,
  merchantFixture,
  openTestStore,
  type TestStore,
  transactionFixture,
  uniqueId,
} from '../support/store-fixture.js';
import { storeKinds } from '../support/stores.js';

const NOW = 1_800_000_000_000;

/** Newest first by creation time, then trace_id: the order of the back office's search. */
const newestFirst = (a: TransactionRow, b: TransactionRow) => b.created_at_ms - a.created_at_ms || b.trace_id - a.trace_id;

describe.each(storeKinds())('random trace_ids on %s', (kind) => {
  /** Draws the test queued first, then random ones. */
  const queued: number[] = [];
  let handle: TestStore;
  let store: Store;
  let merchant_id: string;

  beforeAll(async () => {
    handle = await openTestStore(kind, { trace_ids: { next: () => queued.shift() ?? randomTraceIds.next() } });
    store = handle.store;
    const merchant = merchantFixture();
    await store.merchants.insert(merchant);
    merchant_id = merchant.merchant_id;
  });
  afterAll(async () => {
    await handle?.cleanup();
  });

  const reserve = (overrides: Parameters<typeof transactionFixture>[1] = {}) =>
    store.transactions.reserveWithChange(transactionFixture(merchant_id, overrides), 'request accepted');
  /** A trace_id no row has yet (a draw meeting one of the few rows here: about 10^-7). */
  const freeId = () => randomTraceIds.next();

  it('gives new rows drawn trace_ids, spread over [10^9, 2·10^9) and not in sequence', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 30; i += 1) ids.push((await reserve())!.trace_id);
    for (const id of ids) {
      expect(id).toBeGreaterThanOrEqual(RANDOM_TRACE_ID_MIN);
      expect(id).toBeLessThan(RANDOM_TRACE_ID_END);
      expect(await store.transactions.get(id)).toMatchObject({ trace_id: id, merchant_id });
    }
    expect(new Set(ids).size).toBe(30);
    // Rows made one after the other: their ids neither climb nor sit next to each other.
    expect([...ids].sort((a, b) => a - b)).not.toEqual(ids);
    const steps = ids.slice(1).map((id, i) => Math.abs(id - ids[i]!));
    expect(steps.filter((step) => step < 1000)).toEqual([]);
  });

  it('draws again when the drawn trace_id is taken: reserveWithChange, reserve, insertIfAbsent', async () => {
    const taken = (await reserve())!.trace_id;
    const fresh = [freeId(), freeId(), freeId()];
    queued.push(taken, fresh[0]!);
    const reserved = (await reserve({ order_id: uniqueId('again') }))!;
    expect(reserved.trace_id).toBe(fresh[0]);
    expect(await store.transactions.listStatusChanges(fresh[0]!)).toEqual([
      { from_status: '', to_status: 'pending', reason: 'request accepted', at_ms: reserved.created_at_ms },
    ]);
    // The taken row has its own first change only: the failed draw wrote nothing of the new row.
    expect(await store.transactions.listStatusChanges(taken)).toHaveLength(1);
    queued.push(taken, fresh[1]!);
    expect((await store.transactions.reserve(transactionFixture(merchant_id)))!.trace_id).toBe(fresh[1]);
    queued.push(taken, taken, fresh[2]!);
    expect(await store.transactions.insertIfAbsent(transactionFixture(merchant_id))).toBe(fresh[2]);
    expect(queued).toEqual([]);
  });

  it('reserveOrHolder draws again when the drawn trace_id is taken, and tells a taken id from a taken key', async () => {
    const taken = (await reserve())!;
    const fresh = freeId();
    queued.push(taken.trace_id, fresh);
    const order_id = uniqueId('holder');
    const reserved = await store.transactions.reserveOrHolder(transactionFixture(merchant_id, { order_id }), 'request accepted');
    expect(reserved).toMatchObject({ kind: 'inserted', row: { trace_id: fresh, order_id } });
    expect(queued).toEqual([]);
    // The key taken (its holder answered), even when the id drawn is the holder's own.
    queued.push(fresh);
    const replay = await store.transactions.reserveOrHolder(transactionFixture(merchant_id, { order_id }), 'request accepted');
    expect(replay).toMatchObject({ kind: 'taken', holder: { trace_id: fresh, order_id } });
    expect(await store.transactions.listStatusChanges(fresh)).toHaveLength(1);
    queued.length = 0; // SQLite reads the key first and draws nothing
  });

  it('draws again inside a transaction, which goes on (on PostgreSQL a failed statement would have ended it)', async () => {
    const taken = (await reserve())!.trace_id;
    const fresh = freeId();
    queued.push(taken, fresh);
    const order_id = uniqueId('in-tx');
    const row = await store.transaction(async (tx) => {
      const reserved = await tx.transactions.reserveWithChange(transactionFixture(merchant_id, { order_id }), 'request accepted');
      await tx.transactions.update(reserved!.trace_id, { description: 'written after the draw again' });
      return tx.transactions.get(reserved!.trace_id);
    });
    expect(row).toMatchObject({ trace_id: fresh, order_id, description: 'written after the draw again' });
    expect(await store.transactions.get(fresh)).toMatchObject({ description: 'written after the draw again' });
  });

  it('answers null for a key taken, also when the drawn trace_id is taken too', async () => {
    const first = (await reserve())!;
    queued.push(freeId());
    expect(await reserve({ order_id: first.order_id, request_fingerprint: 'another' })).toBeNull();
    queued.push(first.trace_id);
    expect(await reserve({ order_id: first.order_id, request_fingerprint: 'another' })).toBeNull();
    queued.length = 0;
    expect(await store.transactions.findByKey(merchant_id, 'sale', first.order_id)).toMatchObject({
      trace_id: first.trace_id,
      request_fingerprint: 'fp-1',
    });
  });

  it(`gives up after ${TRACE_ID_TRIES} taken draws with a fault, writing nothing`, async () => {
    const taken = (await reserve())!.trace_id;
    const order_id = uniqueId('exhausted');
    queued.push(...new Array<number>(TRACE_ID_TRIES).fill(taken));
    await expect(reserve({ order_id })).rejects.toBeInstanceOf(TraceIdsExhausted);
    expect(queued).toEqual([]);
    queued.push(...new Array<number>(TRACE_ID_TRIES).fill(taken));
    await expect(
      store.transaction((tx) => tx.transactions.reserveWithChange(transactionFixture(merchant_id, { order_id }), 'request accepted')),
    ).rejects.toThrow(`no free trace_id in ${TRACE_ID_TRIES} draws`);
    expect(await store.transactions.findByKey(merchant_id, 'sale', order_id)).toBeNull();
    // The next insert draws as usual.
    expect(await reserve({ order_id })).toMatchObject({ order_id });
  });

  it('concurrent inserts drawing the same trace_id each get one of their own (SQLite: in one group commit)', async () => {
    const shared = freeId();
    const own = [freeId(), freeId(), freeId(), freeId()];
    // Each insert draws `shared` first; whoever is first keeps it, the others draw again.
    queued.push(shared, shared, shared, shared, shared, ...own);
    const before = kind === 'sqlite' ? (store as SqlStore).groupCommitStats()! : null;
    const rows = await Promise.all(Array.from({ length: 5 }, () => reserve()));
    const ids = rows.map((row) => row!.trace_id);
    expect(ids.filter((id) => id === shared)).toHaveLength(1);
    expect(new Set(ids).size).toBe(5);
    expect(ids.filter((id) => id !== shared).sort()).toEqual([...own].sort());
    for (const id of ids) expect(await store.transactions.listStatusChanges(id)).toHaveLength(1);
    if (before) {
      const after = (store as SqlStore).groupCommitStats()!;
      // Five units committed in fewer batches: the draws again ran inside a shared batch.
      expect(after.units - before.units).toBe(5);
      expect(after.batches - before.batches).toBeLessThan(5);
    }
  });

  it('pages the search across page boundaries: every row once, newest first, with rows of one millisecond', async () => {
    const shop = merchantFixture();
    await store.merchants.insert(shop);
    const made: TransactionRow[] = [];
    // 23 rows, three to a millisecond, inserted oldest first; their trace_ids say nothing of that.
    for (let i = 0; i < 23; i += 1)
      made.push(
        (await store.transactions.reserveWithChange(
          transactionFixture(shop.merchant_id, { created_at_ms: NOW + Math.floor(i / 3), updated_at_ms: NOW }),
          'request accepted',
        ))!,
      );
    const expected = [...made].sort(newestFirst).map((row) => row.trace_id);
    for (const page_rows of [5, 3, 1]) {
      const seen: number[] = [];
      let before: TransactionPageKey | null = null;
      for (let page = 0; page < 30; page += 1) {
        const rows = await store.transactions.search({ merchant_id: shop.merchant_id }, before, page_rows);
        seen.push(...rows.map((row) => row.trace_id));
        if (rows.length < page_rows) break;
        before = rows[rows.length - 1]!;
      }
      expect(seen).toEqual(expected);
    }
    // The operators' search over every merchant pages the same way (transactions_created_trace).
    const all = await store.transactions.search({ merchant_id: null, created_from_ms: NOW, created_before_ms: NOW + 8 }, null, 100);
    const first = await store.transactions.search({ merchant_id: null, created_from_ms: NOW, created_before_ms: NOW + 8 }, null, 4);
    const rest = await store.transactions.search(
      { merchant_id: null, created_from_ms: NOW, created_before_ms: NOW + 8 },
      first[first.length - 1]!,
      100,
    );
    expect([...first, ...rest].map((row) => row.trace_id)).toEqual(all.map((row) => row.trace_id));
    expect(all.map((row) => row.trace_id)).toEqual(expect.arrayContaining(expected));
  });

  it("pages the operator's payout list oldest first across page boundaries, with rows of one millisecond", async () => {
    const shop = merchantFixture();
    await store.merchants.insert(shop);
    const status = 'requested' as const;
    const made: TransactionRow[] = [];
    for (let i = 0; i < 11; i += 1)
      made.push(
        (await store.transactions.reserveWithChange(
          transactionFixture(shop.merchant_id, { transaction_type: 'payout', status, created_at_ms: NOW - 1000 + Math.floor(i / 2) }),
          'request accepted',
        ))!,
      );
    const mine = new Set(made.map((row) => row.trace_id));
    const expected = [...made].sort((a, b) => newestFirst(b, a)).map((row) => row.trace_id);
    const seen: number[] = [];
    let after: TransactionPageKey | null = null;
    for (let page = 0; page < 100; page += 1) {
      const rows = await store.transactions.listPayoutsByStatus(status, after, 4);
      seen.push(...rows.map((row) => row.trace_id).filter((id) => mine.has(id)));
      if (rows.length < 4) break;
      after = rows[rows.length - 1]!;
    }
    expect(seen).toEqual(expected);
  });

  it("lists a cashier session's transactions in the order they were made, also within one millisecond", async () => {
    const session = cashierSessionFixture(merchant_id, NOW);
    const { session_id } = session;
    await store.cashier.insertSession(session);
    // A declined attempt and its cascade attempt in one millisecond, the later one with the lower
    // trace_id: the list must not be by trace_id. Then a later attempt.
    const high = 1_999_000_000 + Math.floor(Math.random() * 900_000);
    const low = 1_000_000_000 + Math.floor(Math.random() * 900_000);
    queued.push(high, low);
    const declined = (await reserve({ cashier_session_id: session_id, status: 'pending', created_at_ms: NOW + 5 }))!;
    const cascade = (await reserve({
      cashier_session_id: session_id,
      created_at_ms: NOW + 5,
      cascade_root: declined.trace_id,
      cascade_level: 1,
    }))!;
    const later = (await reserve({ cashier_session_id: session_id, created_at_ms: NOW + 6 }))!;
    expect([declined.trace_id, cascade.trace_id]).toEqual([high, low]);
    expect((await store.cashier.listTransactions(session_id)).map((row) => row.trace_id)).toEqual([
      declined.trace_id,
      cascade.trace_id,
      later.trace_id,
    ]);
  });
});
