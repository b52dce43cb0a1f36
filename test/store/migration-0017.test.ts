// Migration 0017 (the back office's lists of processor webhook events) on a database an older
// release left behind: built with the migrations up to 0016 and holding events already. After
// migrating, the lists find those events in their order, and each list's plan reads its index
// in that order (no sort of the gateway's events; on PostgreSQL with sequential scans priced out,
// so the plan shows whether the index can serve the list at all).
import type { Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { ProcessorEventOutcome } from '../../src/domain/gateway-record.js';
import { migrateTo } from '../../src/store/migrations/index.js';
import { processorEventLists } from '../../src/store/sql/merchants.js';
import { databaseAt, indexNames, queryPlan as plan } from '../support/old-database.js';
import { gatewayFixture } from '../support/store-fixture.js';
import { storeKinds } from '../support/stores.js';

const T0 = 1_800_000_000_000;

describe.each(storeKinds())('migration 0017 on %s', (kind) => {
  it('indexes the events by transaction and by gateway (and outcome), and each list reads its index newest first', async () => {
    const db = await databaseAt(kind, '0016_backoffice_idle_timeout');
    expect(await indexNames(db, kind, 'processor_events')).toEqual([]);
    await db.insertInto('merchants').values({ merchant_id: 'm-0017', secret_sealed: 'v1:sealed', created_at_ms: T0 }).execute();
    await db
      .insertInto('gateways')
      .values(gatewayFixture('m-0017', { gateway_id: 'gw-0017', connector: 'checkout' }))
      .execute();
    const event = (event_id: string, trace_id: number | null, outcome: ProcessorEventOutcome, received_at_ms: number) => ({
      gateway_id: 'gw-0017',
      event_id,
      event_type: 'payment_captured',
      trace_id,
      outcome,
      received_at_ms,
    });
    await db
      .insertInto('processor_events')
      .values([
        event('evt-a', 7, 'applied', T0),
        event('evt-b', null, 'unmatched', T0 + 1),
        event('evt-c', 7, 'unchanged', T0 + 2),
        event('evt-d', null, 'unmatched', T0 + 3),
        event('evt-e', 8, 'applied', T0 + 4),
      ])
      .execute();

    await migrateTo(db as unknown as Kysely<unknown>, kind, '0017_processor_event_lists');
    expect(await indexNames(db, kind, 'processor_events')).toEqual([
      'processor_events_gateway',
      'processor_events_gateway_outcome',
      'processor_events_trace',
    ]);

    const ids = async (query: { execute(): Promise<{ event_id: string }[]> }) => (await query.execute()).map((row) => row.event_id);
    const of_transaction = processorEventLists.ofTransaction(db, 7, 50);
    const of_gateway = processorEventLists.ofGateway(db, 'gw-0017', null, 50);
    const unmatched = processorEventLists.ofGateway(db, 'gw-0017', 'unmatched', 50);
    expect(await ids(of_transaction)).toEqual(['evt-c', 'evt-a']);
    expect(await ids(of_gateway)).toEqual(['evt-e', 'evt-d', 'evt-c', 'evt-b', 'evt-a']);
    expect(await ids(unmatched)).toEqual(['evt-d', 'evt-b']);

    for (const [query, index] of [
      [of_transaction, 'processor_events_trace'],
      [of_gateway, 'processor_events_gateway'],
      [unmatched, 'processor_events_gateway_outcome'],
    ] as const) {
      const lines = await plan(db, kind, query.compile());
      expect([index, lines]).toEqual([index, expect.arrayContaining([expect.stringMatching(new RegExp(`\\b${index}\\b`))])]);
      // Read in the index's order and stopped at the limit: nothing sorts the gateway's events.
      expect([index, lines.filter((line) => /USE TEMP B-TREE|\bSort\b/.test(line))]).toEqual([index, []]);
    }
  });
});
