// Migration 0024 (random trace_ids) on a database an older release left behind: built with the
// migrations up to 0022 and holding transactions numbered in sequence. After migrating, every
// row keeps its trace_id, the indexes that ordered by trace_id alone are replaced by ones in
// (created_at_ms, trace_id) order, which the lists' plans read, and the store draws new ids above
// every old one; the old and new rows list together by creation time. A database holding a
// trace_id where drawn ones start is refused.
import { type Kysely, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { RANDOM_TRACE_ID_MIN } from '../../src/domain/trace-id.js';
import { migrateTo } from '../../src/store/migrations/index.js';
import { SqlStore, transactionScans } from '../../src/store/sql-store.js';
import { databaseAt, indexNames, queryPlan as plan } from '../support/old-database.js';
import { transactionFixture } from '../support/store-fixture.js';
import { storeKinds } from '../support/stores.js';

const T0 = 1_800_000_000_000;

describe.each(storeKinds())('migration 0024 on %s', (kind) => {
  it('keeps every trace_id, orders the indexes by creation time, and new rows get drawn ids above the old ones', async () => {
    const db = await databaseAt(kind, '0022_request_log');
    await db.insertInto('merchants').values({ merchant_id: 'm-0024', secret_sealed: 'v1:sealed', created_at_ms: T0 }).execute();
    const old: { trace_id: number; order_id: string }[] = [];
    for (let i = 0; i < 5; i += 1) {
      const row = transactionFixture('m-0024', {
        order_id: `old-${i}`,
        transaction_type: i === 4 ? 'payout' : 'sale',
        status: i === 4 ? 'requested' : 'approved',
        created_at_ms: T0 + i * 1000,
        updated_at_ms: T0 + i * 1000,
      });
      const { trace_id } = await db.insertInto('transactions').values(row).returning('trace_id').executeTakeFirstOrThrow();
      old.push({ trace_id: Number(trace_id), order_id: row.order_id });
    }
    // The database numbered them: 1, 2, 3…
    expect(old.map((row) => row.trace_id)).toEqual([1, 2, 3, 4, 5]);

    await migrateTo(db as unknown as Kysely<unknown>, kind, '0024_random_trace_ids');
    const kept = await db.selectFrom('transactions').select(['trace_id', 'order_id']).orderBy('trace_id').execute();
    expect(kept.map((row) => ({ trace_id: Number(row.trace_id), order_id: row.order_id }))).toEqual(old);
    const indexes = await indexNames(db, kind, 'transactions');
    expect(indexes).toEqual(
      expect.arrayContaining([
        'transactions_created_trace',
        'transactions_merchant_created',
        'transactions_payouts_created',
        'transactions_pending_created',
      ]),
    );
    for (const gone of ['transactions_created', 'transactions_merchant_trace', 'transactions_payouts', 'transactions_pending'])
      expect(indexes).not.toContain(gone);

    // The store over the migrated database (migrate() finds nothing left to do); databaseAt closes it.
    const store = new SqlStore(db, kind, { group_commit: false });
    const made = await store.transactions.reserveWithChange(
      transactionFixture('m-0024', { order_id: 'new-0', created_at_ms: T0 + 2500, updated_at_ms: T0 + 2500 }),
      'request accepted',
    );
    const new_id = Number(made!.trace_id);
    expect(new_id).toBeGreaterThanOrEqual(RANDOM_TRACE_ID_MIN);
    expect((await store.transactions.get(3))?.order_id).toBe('old-2');
    // Newest first by creation time, the new row among the old ones where its time puts it.
    const page = await store.transactions.search({ merchant_id: 'm-0024' }, null, 3);
    expect(page.map((row) => Number(row.trace_id))).toEqual([5, 4, new_id]);
    const rest = await store.transactions.search({ merchant_id: 'm-0024' }, page[2]!, 10);
    expect(rest.map((row) => Number(row.trace_id))).toEqual([3, 2, 1]);

    // Each list reads its index (on PostgreSQL with sequential scans priced out).
    const uses = (index: string) => expect.arrayContaining([expect.stringContaining(index)]);
    const key = { created_at_ms: T0 + 3000, trace_id: 4 };
    expect(await plan(db, kind, transactionScans.search(db, { merchant_id: 'm-0024' }, key, 10).compile())).toEqual(
      uses('transactions_merchant_created'),
    );
    expect(await plan(db, kind, transactionScans.search(db, { merchant_id: null }, key, 10).compile())).toEqual(
      uses('transactions_created_trace'),
    );
    expect(await plan(db, kind, transactionScans.payoutsByStatus(db, 'requested', key, 10).compile())).toEqual(
      uses('transactions_payouts_created'),
    );
    expect(await plan(db, kind, transactionScans.interruptedPayouts(db, T0, 10).compile())).toEqual(uses('transactions_payouts_created'));
    expect(await plan(db, kind, transactionScans.stuck(db, T0, 10).compile())).toEqual(uses('transactions_pending_created'));
  });

  it('refuses a database holding a trace_id where drawn ones start', async () => {
    const db = await databaseAt(kind, '0022_request_log');
    await db.insertInto('merchants').values({ merchant_id: 'm-0024', secret_sealed: 'v1:sealed', created_at_ms: T0 }).execute();
    await sql`insert into transactions (trace_id, merchant_id, transaction_type, order_id, request_fingerprint, api_version,
        identity_kind, identity_value, gateway_id, payment_processor, payment_method, status, amount_minor, currency,
        charge_amount_minor, charge_currency, pin, created_at_ms, updated_at_ms)
      values (${RANDOM_TRACE_ID_MIN}, 'm-0024', 'sale', 'far', 'fp', '1.2', 'application_key', 'a', 'gw', 'sandbox', 'card',
        'approved', 100, 'USD', 100, 'USD', 'p', ${T0}, ${T0})`.execute(db);
    await expect(migrateTo(db as unknown as Kysely<unknown>, kind, '0024_random_trace_ids')).rejects.toThrow(
      `transactions hold trace_id ${RANDOM_TRACE_ID_MIN}, at or above ${RANDOM_TRACE_ID_MIN}`,
    );
  });
});
