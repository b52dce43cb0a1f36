// Migration 0026 (issue 29, item 1) on a database an older release left behind, built with the
// migrations up to 0025. On SQLite notifications_pending_trace is gone, and a notification waiting
// behind an older pending one of its transaction, written before the migration, is still held
// back until that one is out of pending (the in-order check now reads notifications_trace). On
// PostgreSQL the migration changes nothing.
import type { Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { migrateTo } from '../../src/store/migrations/index.js';
import { leaseNotificationsQuery } from '../../src/store/sql/notifications.js';
import { SqlStore } from '../../src/store/sql-store.js';
import { SqlText } from '../../src/store/sql-text.js';
import { databaseAt, indexNames, queryPlan } from '../support/old-database.js';
import { notificationFixture, transactionFixture } from '../support/store-fixture.js';
import { storeKinds } from '../support/stores.js';

const T0 = 1_800_000_000_000;

describe.each(storeKinds())('migration 0026 on %s', (kind) => {
  it('drops the pending-only trace index on SQLite alone, and delivery per transaction stays in order', async () => {
    const db = await databaseAt(kind, '0025_lighter_writes');
    expect(await indexNames(db, kind, 'notifications')).toContain('notifications_pending_trace');
    await db.insertInto('merchants').values({ merchant_id: 'm-0026', secret_sealed: 'v1:sealed', created_at_ms: T0 }).execute();
    const { trace_id } = await db
      .insertInto('transactions')
      .values(transactionFixture('m-0026', { order_id: 'in-order' }))
      .returning('trace_id')
      .executeTakeFirstOrThrow();
    const first = await db
      .insertInto('notifications')
      .values(notificationFixture(Number(trace_id), 'm-0026', T0, T0))
      .returning('id')
      .executeTakeFirstOrThrow();
    const second = await db
      .insertInto('notifications')
      .values(notificationFixture(Number(trace_id), 'm-0026', T0, T0 + 1))
      .returning('id')
      .executeTakeFirstOrThrow();

    await migrateTo(db as unknown as Kysely<unknown>, kind, '0026_sqlite_one_trace_index');
    const indexes = await indexNames(db, kind, 'notifications');
    if (kind === 'sqlite') {
      expect(indexes).not.toContain('notifications_pending_trace');
      expect(indexes).toContain('notifications_trace');
      // The lease's in-order check is one probe of notifications_trace (its entries end with id, the rowid).
      const plan = await queryPlan(db, kind, leaseNotificationsQuery(new SqlText(kind), { due_ms: T0, wall_ms: T0 }, 32, 1000, 'o'));
      expect(plan).toContain('SEARCH older USING INDEX notifications_trace (trace_id=? AND rowid<?)');
    } else {
      expect(indexes).toContain('notifications_pending_trace');
    }

    const store = new SqlStore(db, kind, { group_commit: false });
    const lease = (now_ms: number) => store.notifications.lease({ due_ms: now_ms, wall_ms: now_ms }, 10, 60_000, 'owner-0026');
    // Only the older one: the later waits behind it.
    expect((await lease(T0 + 10)).map((n) => Number(n.id))).toEqual([Number(first.id)]);
    await db.updateTable('notifications').set({ state: 'delivered', lease_owner: null }).where('id', '=', first.id).execute();
    expect((await lease(T0 + 20)).map((n) => Number(n.id))).toEqual([Number(second.id)]);
  });
});
