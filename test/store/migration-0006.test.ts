// Migration 0006 (one active subscription per customer, plan price and card) on a database an
// older release left behind: built with the migrations up to 0005, holding two identical
// active subscriptions (possible before the unique index). Migrating to the latest keeps the
// older one active, makes the newer one inactive and not due, and the index then refuses
// another active twin, on SQLite and on PostgreSQL.
import type { Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { migrateTo } from '../../src/store/migrations/index.js';
import type { NewSubscriptionRow } from '../../src/store/schema.js';
import { databaseAt, indexNames } from '../support/old-database.js';
import { storeKinds } from '../support/stores.js';

const T0 = 1_800_000_000_000;

function subscriptionRow(subscription_id: string, created_at_ms: number, overrides: Partial<NewSubscriptionRow> = {}): NewSubscriptionRow {
  return {
    subscription_id,
    merchant_id: 'm-0006',
    application_key: 'app-0006',
    plan_id: 'plan_0006',
    price_id: 'price_0006',
    cid: 'cust-42',
    card_token: 'tok0006',
    amount_minor: 1999,
    currency: 'USD',
    notification_url: 'https://merchant.example/subs',
    status: 'active',
    billing_cycle: 'monthly',
    anchor_at_ms: created_at_ms,
    expiration_cycles: null,
    retries_number: 3,
    retries_delay_days: 1,
    cycles_charged: 0,
    attempt: 0,
    next_charge_at_ms: created_at_ms,
    lease_until_ms: null,
    lease_owner: null,
    last_trace_id: null,
    last_error: null,
    version: 0,
    created_at_ms,
    updated_at_ms: created_at_ms,
    ended_at_ms: null,
    ...overrides,
  };
}

describe.each(storeKinds())('migration 0006 on %s', (kind) => {
  it('keeps the oldest of two identical active subscriptions active, makes the newer inactive, then refuses another active twin', async () => {
    const db = await databaseAt(kind, '0005_due_work_indexes');
    expect(await indexNames(db, kind, 'subscriptions')).not.toContain('subscriptions_one_active');

    await db.insertInto('merchants').values({ merchant_id: 'm-0006', secret_sealed: 'v1:sealed', created_at_ms: T0 }).execute();
    await db
      .insertInto('card_vault')
      .values({
        card_token: 'tok0006',
        merchant_id: 'm-0006',
        pin: 'cust-42',
        pan_sealed: 'v1:sealed-pan',
        pan_fingerprint: 'fp',
        card_masked: '411111******1111',
        card_exp: '12/2035',
        card_brand: 'VISA',
        created_at_ms: T0,
      })
      .execute();
    await db
      .insertInto('subscription_plans')
      .values({
        plan_id: 'plan_0006',
        merchant_id: 'm-0006',
        name: 'Gold',
        description: null,
        billing_cycle: 'monthly',
        trial_period: 0,
        trial_period_cycle: 'days',
        expiration_cycles: null,
        retries_number: 3,
        retries_delay_days: 1,
        status: 'active',
        created_at_ms: T0,
        updated_at_ms: T0,
      })
      .execute();
    await db
      .insertInto('subscription_prices')
      .values({ price_id: 'price_0006', plan_id: 'plan_0006', currency: 'USD', amount_minor: 1999, position: 0 })
      .execute();
    // Two identical active subscriptions, as a retried create could make before the index existed.
    // The newer one is inserted first, so row order cannot stand in for age.
    await db
      .insertInto('subscriptions')
      .values(subscriptionRow('sub_newer', T0 + 5_000))
      .execute();
    await db.insertInto('subscriptions').values(subscriptionRow('sub_older', T0)).execute();

    await migrateTo(db as unknown as Kysely<unknown>, kind, null);
    expect(await indexNames(db, kind, 'subscriptions')).toContain('subscriptions_one_active');

    const rows = (
      await db.selectFrom('subscriptions').select(['subscription_id', 'status', 'next_charge_at_ms']).orderBy('subscription_id').execute()
    )
      // PostgreSQL's driver gives bigint as text here (the store installs its own parser).
      .map((r) => ({ ...r, next_charge_at_ms: r.next_charge_at_ms === null ? null : Number(r.next_charge_at_ms) }));
    expect(rows).toEqual([
      { subscription_id: 'sub_newer', status: 'inactive', next_charge_at_ms: null },
      { subscription_id: 'sub_older', status: 'active', next_charge_at_ms: T0 },
    ]);

    // The index refuses a third active twin...
    await expect(
      db
        .insertInto('subscriptions')
        .values(subscriptionRow('sub_third', T0 + 9_000))
        .execute(),
    ).rejects.toThrow(/unique|duplicate/i);
    // ...and reactivating the demoted one by hand too.
    await expect(
      db.updateTable('subscriptions').set({ status: 'active', next_charge_at_ms: T0 }).where('subscription_id', '=', 'sub_newer').execute(),
    ).rejects.toThrow(/unique|duplicate/i);
    // It covers active subscriptions only: an inactive twin, or an active one with another card, is accepted.
    await db
      .insertInto('subscriptions')
      .values(subscriptionRow('sub_inactive', T0 + 9_000, { status: 'inactive', next_charge_at_ms: null }))
      .execute();
    await db
      .insertInto('card_vault')
      .values({
        card_token: 'tok0006b',
        merchant_id: 'm-0006',
        pin: 'cust-42',
        pan_sealed: 'v1:sealed-pan',
        pan_fingerprint: 'fp2',
        card_masked: '555555******4444',
        card_exp: '12/2035',
        card_brand: 'MasterCard',
        created_at_ms: T0,
      })
      .execute();
    await db
      .insertInto('subscriptions')
      .values(subscriptionRow('sub_other_card', T0 + 9_000, { card_token: 'tok0006b' }))
      .execute();
    const active = await db
      .selectFrom('subscriptions')
      .select('subscription_id')
      .where('status', '=', 'active')
      .orderBy('subscription_id')
      .execute();
    expect(active.map((r) => r.subscription_id)).toEqual(['sub_older', 'sub_other_card']);
  });
});
