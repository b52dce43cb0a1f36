// Migration 0008 (pending-only notification indexes) on a database an older release left behind:
// built with the migrations up to 0007 and holding an outbox (pending, delivered, due later, two
// of one transaction). Migrating to the latest swaps the indexes, and the lease, run on the
// migrated database, takes exactly what it took before: due, pending, oldest of its transaction.
import { type Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { NotificationState } from '../../src/domain/notification-record.js';
import { migrateTo } from '../../src/store/migrations/index.js';
import { leaseNotificationsQuery } from '../../src/store/sql-store.js';
import { SqlText } from '../../src/store/sql-text.js';
import { databaseAt, indexNames } from '../support/old-database.js';
import { storeKinds } from '../support/stores.js';

const T0 = 1_800_000_000_000;

describe.each(storeKinds())('migration 0008 on %s', (kind) => {
  it('replaces notifications_due by pending-only indexes, and leases the same notifications as before', async () => {
    const db = await databaseAt(kind, '0007_notification_bound');
    const notificationIndexes = () => indexNames(db, kind, 'notifications');
    expect(await notificationIndexes()).toContain('notifications_due');

    await db.insertInto('merchants').values({ merchant_id: 'm-0008', secret_sealed: 'v1:sealed', created_at_ms: T0 }).execute();
    const traces: number[] = [];
    for (const order_id of ['o-two-pending', 'o-delivered', 'o-later']) {
      const inserted = await db
        .insertInto('transactions')
        .values({
          merchant_id: 'm-0008',
          transaction_type: 'sale',
          order_id,
          request_fingerprint: 'fp',
          api_version: '1.2',
          identity_kind: 'application_key',
          identity_value: 'app',
          gateway_id: 'gw',
          payment_processor: 'sandbox',
          payment_method: 'card',
          status: 'approved',
          amount_minor: 100,
          currency: 'USD',
          charge_amount_minor: 100,
          charge_currency: 'USD',
          pin: 'p',
          created_at_ms: T0,
          updated_at_ms: T0,
        })
        .returning('trace_id')
        .executeTakeFirstOrThrow();
      traces.push(Number(inserted.trace_id));
    }
    const [two_pending, delivered, later] = traces as [number, number, number];
    const notification = (trace_id: number, state: NotificationState, next_attempt_at_ms: number) => ({
      trace_id,
      merchant_id: 'm-0008',
      url: 'https://merchant.example/notify',
      payload_json: '{}',
      state,
      next_attempt_at_ms,
      lease_until_ms: null,
      lease_owner: null,
      last_error: null,
      created_at_ms: T0,
      updated_at_ms: T0,
      bound_from_ms: T0,
    });
    const ids: number[] = [];
    for (const row of [
      notification(two_pending, 'pending', T0),
      notification(two_pending, 'pending', T0),
      notification(delivered, 'delivered', T0),
      notification(later, 'pending', T0 + 300_000),
    ]) {
      ids.push(Number((await db.insertInto('notifications').values(row).returning('id').executeTakeFirstOrThrow()).id));
    }

    await migrateTo(db as unknown as Kysely<unknown>, kind, null);
    // SQLite's notifications_pending_trace went again in migration 0026 (notifications_trace serves its probe there).
    expect(await notificationIndexes()).toEqual([
      'notifications_pending_due',
      'notifications_pending_subscription',
      ...(kind === 'postgres' ? ['notifications_pending_trace'] : []),
      'notifications_subscription',
      'notifications_trace',
    ]);

    // Due now: the first of the transaction with two pending (the second waits behind it); not
    // the delivered one, not the one due in five minutes.
    const lease = leaseNotificationsQuery(new SqlText(kind), { due_ms: T0, wall_ms: T0 }, 10, 60_000, 'owner');
    const leased = await db.executeQuery<{ id: number }>(lease);
    expect(leased.rows.map((row) => Number(row.id))).toEqual([ids[0]]);
    const later_lease = leaseNotificationsQuery(new SqlText(kind), { due_ms: T0 + 300_000, wall_ms: T0 + 1 }, 10, 60_000, 'owner');
    expect((await db.executeQuery<{ id: number }>(later_lease)).rows.map((row) => Number(row.id))).toEqual([ids[3]]);
  });
});
