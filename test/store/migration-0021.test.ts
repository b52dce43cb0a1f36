// Migration 0021 (gateway labels, the instance record) on a database an older release left
// behind: built with the migrations up to 0020 and holding two gateways. After migrating, each is
// named "<connector> <first 8 of its id>", a gateway inserted without a label gets the same
// default (never the column's empty one), labels are read by id, and the instance record is
// written and replaced by the last instance to start.
import type { Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { migrateTo } from '../../src/store/migrations/index.js';
import { SqlStore } from '../../src/store/sql-store.js';
import { databaseAt } from '../support/old-database.js';
import { storeKinds } from '../support/stores.js';

const T0 = 1_800_000_000_000;

describe.each(storeKinds())('migration 0021 on %s', (kind) => {
  it('names every existing gateway, defaults a new one, and keeps the last instance to start', async () => {
    const db = await databaseAt(kind, '0020_sandbox_admin_token');
    await db.insertInto('merchants').values({ merchant_id: 'm-0021', secret_sealed: 'x', created_at_ms: T0 }).execute();
    const old = db as unknown as Kysely<Record<string, Record<string, unknown>>>;
    for (const [gateway_id, connector] of [
      ['0123456789abcdef0123456789abcdef', 'checkout'],
      ['fedcba9876543210fedcba9876543210', 'sandbox'],
    ] as const) {
      // The row as 0020 knew it, without a label.
      await old
        .insertInto('gateways')
        .values({
          gateway_id,
          merchant_id: 'm-0021',
          connector,
          currencies: 'USD',
          mit_enabled: 1,
          hold_payouts: 0,
          created_at_ms: T0,
          settings_sealed: null,
          enabled: 1,
          updated_at_ms: T0,
        })
        .execute();
    }

    await migrateTo(db as unknown as Kysely<unknown>, kind, '0021_gateway_labels');
    // The store over the migrated database (migrate() finds nothing left to do); not closed here: databaseAt closes it.
    const store = new SqlStore(db, kind, { group_commit: false });
    expect((await store.merchants.listGateways('m-0021')).map((g) => [g.gateway_id, g.label])).toEqual([
      ['0123456789abcdef0123456789abcdef', 'checkout 01234567'],
      ['fedcba9876543210fedcba9876543210', 'sandbox fedcba98'],
    ]);
    expect(
      await store.merchants.insertGateway({
        gateway_id: 'aaaabbbbccccddddeeeeffff00001111',
        merchant_id: 'm-0021',
        connector: 'stripe',
        currencies: 'EUR',
        mit_enabled: 1,
        hold_payouts: 0,
        created_at_ms: T0,
        settings_sealed: null,
        updated_at_ms: T0,
      }),
    ).toBe('created');
    expect(
      await store.merchants.gatewayLabels(['aaaabbbbccccddddeeeeffff00001111', '0123456789abcdef0123456789abcdef', 'no-such-gateway']),
    ).toEqual(
      new Map([
        ['aaaabbbbccccddddeeeeffff00001111', 'stripe aaaabbbb'],
        ['0123456789abcdef0123456789abcdef', 'checkout 01234567'],
      ]),
    );
    expect(await store.merchants.updateGateway('0123456789abcdef0123456789abcdef', { label: 'Checkout EU', updated_at_ms: T0 })).toBe(true);
    expect((await store.merchants.getGateway('0123456789abcdef0123456789abcdef'))?.label).toBe('Checkout EU');

    expect(await store.instance.lastInstance()).toBeNull();
    // This plain pool leaves int8 as text (the store's own pool parses it: store/open.ts).
    const last = async () => {
      const record = await store.instance.lastInstance();
      return record && { ...record, started_at_ms: Number(record.started_at_ms) };
    };
    const first = { public_url: 'http://127.0.0.1:8080', public_url_configured: false, environment: 'sandbox', started_at_ms: T0 };
    await store.instance.recordInstance(first);
    expect(await last()).toEqual(first);
    const second = { public_url: 'https://pay.example.com', public_url_configured: true, environment: 'live', started_at_ms: T0 + 1 };
    await store.instance.recordInstance(second);
    expect(await last()).toEqual(second);
  });
});
