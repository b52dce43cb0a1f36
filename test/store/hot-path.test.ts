// The store under the sale's hot path (issue 7): the reservation insert that answers its row, the
// embedded store's two connections (store/sqlite-driver.ts: plain reads never wait for an open
// transaction and never see its writes; writes outside a transaction wait for it), and the
// merchant cache (domain/merchants.ts: found merchants kept briefly, unknown ones never), and the
// plan of the notification lease on both stores.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { CompiledQuery, Kysely, sql } from 'kysely';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Sealer } from '../../src/crypto/sealer.js';
import { MerchantDirectory } from '../../src/operations/merchant-directory.js';
import { starterGateway } from '../../src/connectors/registry.js';
import { migrateTo } from '../../src/store/migrations/index.js';
import { openSqliteConnections, openSqliteStore } from '../../src/store/open.js';
import { leaseNotificationsQuery, SqlStore } from '../../src/store/sql-store.js';
import { SqlText } from '../../src/store/sql-text.js';
import { TwoConnectionSqliteDialect } from '../../src/store/sqlite-driver.js';
import { type Database, type NewTransactionRow, TRANSACTION_COLUMN_DEFAULTS } from '../../src/store/schema.js';
import type { Store } from '../../src/store/store.js';
import { freshDatabase } from '../support/old-database.js';
import { merchantFixture, notificationFixture, transactionFixture, withStoreAndMerchant } from '../support/store-fixture.js';
import { storeKinds } from '../support/stores.js';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe.each(storeKinds())('hot path of the store on %s', (kind) => {
  let store: Store;
  let merchant_id: string;
  withStoreAndMerchant(kind, (started) => ({ store, merchant_id } = started));

  it('reserveTransaction answers the stored row, and null when the idempotency key is taken', async () => {
    const row = transactionFixture(merchant_id);
    const reserved = await store.transaction((tx) => tx.transactions.reserve(row));
    expect(reserved).not.toBeNull();
    expect(reserved).toEqual(await store.transactions.get(reserved!.trace_id));
    expect(reserved).toMatchObject({ order_id: row.order_id, status: 'pending', refund_reserved_minor: 0, amount_minor: 1999 });
    expect(await store.transactions.reserve({ ...row, request_fingerprint: 'another' })).toBeNull();
    expect((await store.transactions.findByKey(merchant_id, 'sale', row.order_id))!.request_fingerprint).toBe(row.request_fingerprint);
  });

  it('reserveTransaction answers exactly the row read back, whichever columns the insert leaves out or sets', async () => {
    // SQLite builds the answer from the insert instead of reading it (schema.ts
    // TRANSACTION_COLUMN_DEFAULTS); PostgreSQL answers RETURNING *. Either must be the stored row.
    const optional = Object.keys(TRANSACTION_COLUMN_DEFAULTS).filter(
      (column) => column !== 'cashier_session_id',
    ) as (keyof NewTransactionRow)[];
    const text = fc.string({ unit: 'grapheme', maxLength: 40 });
    const integer = fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER });
    const value = (column: string): fc.Arbitrary<string | number> =>
      ['reference_id', 'challenge_expires_at_ms', 'cascade_root'].includes(column)
        ? integer
        : column === 'refund_reserved_minor'
          ? fc.integer({ min: 0, max: 1999 })
          : column === 'cascade_level'
            ? fc.integer({ min: 0, max: 5 })
            : text;
    /** The columns that take no null (they have a default). */
    const not_null = new Set(['refund_reserved_minor', 'cascade_level']);
    // Left out, null (where the column allows it) or a value.
    const choice = (column: string): fc.Arbitrary<string | number | null | undefined> =>
      fc.option(not_null.has(column) ? value(column) : fc.option(value(column)), { nil: undefined });
    const choices = fc.record(Object.fromEntries(optional.map((column) => [column, choice(column)])));
    let run = 0;
    await fc.assert(
      fc.asyncProperty(choices, fc.boolean(), async (chosen, in_transaction) => {
        run += 1;
        const row = transactionFixture(merchant_id);
        for (const column of optional) delete row[column];
        Object.assign(row, chosen);
        if (typeof row.challenge_token_hash === 'string') row.challenge_token_hash += `-${run}`; // unique column
        const reserved = in_transaction
          ? await store.transaction((tx) => tx.transactions.reserve(row))
          : await store.transactions.reserve(row);
        expect(reserved).not.toBeNull();
        expect(reserved).toStrictEqual(await store.transactions.get(reserved!.trace_id));
      }),
      { numRuns: 60 },
    );
  });

  it('a plain read outside a transaction never sees the uncommitted writes of an open one', async () => {
    const row = transactionFixture(merchant_id);
    const inserted = deferred();
    const release = deferred();
    const open = store.transaction(async (tx) => {
      await tx.transactions.insertIfAbsent(row);
      inserted.resolve();
      await release.promise;
    });
    await inserted.promise;
    // The transaction is open and holds the writer: this read answers at once, without its row.
    expect(await store.transactions.findByKey(merchant_id, 'sale', row.order_id)).toBeNull();
    expect(await store.merchants.count()).toBeGreaterThan(0);
    release.resolve();
    await open;
    expect(await store.transactions.findByKey(merchant_id, 'sale', row.order_id)).not.toBeNull();
  });

  it('inside a transaction, reads see its own writes', async () => {
    const row = transactionFixture(merchant_id);
    const seen = await store.transaction(async (tx) => {
      const trace_id = await tx.transactions.insertIfAbsent(row);
      return (await tx.transactions.get(trace_id!))?.order_id;
    });
    expect(seen).toBe(row.order_id);
  });

  it.runIf(kind === 'sqlite')('a write outside a transaction waits for the open transaction, then applies', async () => {
    const trace_id = (await store.transactions.insertIfAbsent(transactionFixture(merchant_id)))!;
    const order: string[] = [];
    const inside = deferred();
    const release = deferred();
    const open = store.transaction(async (tx) => {
      await tx.transactions.update(trace_id, { description: 'inside' });
      inside.resolve();
      await release.promise;
      order.push('commit');
    });
    await inside.promise;
    const outside = store.transactions.update(trace_id, { description: 'outside' }).then(() => order.push('outside'));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(order).toEqual([]);
    release.resolve();
    await Promise.all([open, outside]);
    expect(order).toEqual(['commit', 'outside']);
    expect((await store.transactions.get(trace_id))!.description).toBe('outside');
  });

  it('a rolled-back transaction leaves nothing and lets the next one in', async () => {
    const row = transactionFixture(merchant_id);
    await expect(
      store.transaction(async (tx) => {
        await tx.transactions.insertIfAbsent(row);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await store.transactions.findByKey(merchant_id, 'sale', row.order_id)).toBeNull();
    expect(await store.transaction((tx) => tx.transactions.insertIfAbsent(row))).toEqual(expect.any(Number));
  });

  it('the merchant cache keeps found merchants briefly, never unknown ones, and forgets on invalidate', async () => {
    const sealer = new Sealer(Buffer.alloc(32, 7));
    const directory = new MerchantDirectory(store, sealer, 60_000);
    const reader = new MerchantDirectory(store, sealer);
    // Unknown now, created by "another process" (another directory), then known at once.
    expect(await directory.find('cache-shop')).toBeNull();
    const created = await reader.create({ merchant_id: 'cache-shop', secret: 'cache-secret-1' }, Date.now(), starterGateway('sandbox'));
    expect(created.kind).toBe('created');
    const found = await directory.find('cache-shop');
    expect(found).toMatchObject({ merchant_id: 'cache-shop', secret: 'cache-secret-1' });
    // Kept: a gateway change is not seen until invalidate().
    const gateway_id = found!.gateways[0]!.gateway_id;
    await store.merchants.setGatewayHoldPayouts(gateway_id, true);
    expect((await directory.find('cache-shop'))!.gateways[0]!.hold_payouts).toBe(false);
    expect((await reader.find('cache-shop'))!.gateways[0]!.hold_payouts).toBe(true);
    directory.invalidate();
    expect((await directory.find('cache-shop'))!.gateways[0]!.hold_payouts).toBe(true);
  });
});

describe('leasing notifications on SQLite', () => {
  it('reads only due rows: the update finds its candidates by primary key, not by walking every pending notification', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-lease-plan-'));
    const file = path.join(dir, 'paygate.sqlite');
    const store = openSqliteStore(file);
    try {
      await store.migrate();
      const query = leaseNotificationsQuery(new SqlText('sqlite'), { due_ms: 1, wall_ms: 1 }, 32, 1000, 'owner');
      const db = new BetterSqlite3(file, { readonly: true });
      try {
        const plan = (db.prepare(`explain query plan ${query.sql}`).all(...query.parameters) as { detail: string }[]).map(
          (row) => row.detail,
        );
        // The outer UPDATE: by rowid from the candidate list. With a re-check of `state` there,
        // SQLite chose `SEARCH notifications USING INDEX notifications_due (state=?)`: every
        // pending notification, thousands while resends wait, read on each lease.
        expect(plan).toContain('SEARCH notifications USING INTEGER PRIMARY KEY (rowid=?)');
        expect(plan.filter((line) => /^(SCAN|SEARCH) notifications\b/.test(line))).toEqual([
          'SEARCH notifications USING INTEGER PRIMARY KEY (rowid=?)',
        ]);
        // The candidates: a range of the pending-only due index, in the lease's order (no sort),
        // each checked for an older pending notification of its transaction (one probe of
        // notifications_trace, whose entries end with the id: migration 0026) or of its
        // subscription (one probe of a pending-only index); never a scan of the table.
        expect(plan).toContain('SEARCH n USING INDEX notifications_pending_due (next_attempt_at_ms<?)');
        expect(plan).toContain('SEARCH older USING INDEX notifications_trace (trace_id=? AND rowid<?)');
        expect(plan).toContain('SEARCH older USING COVERING INDEX notifications_pending_subscription (subscription_id=? AND id<?)');
        expect(plan.filter((line) => line.startsWith('USE TEMP B-TREE'))).toEqual([]);
        expect(plan.filter((line) => line.startsWith('SCAN ') && line !== 'SCAN candidates')).toEqual([]);
      } finally {
        db.close();
      }
    } finally {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('LIMIT parameters on SQLite', () => {
  // SQLite (3.53, as better-sqlite3 ships it) reads a bare `limit ?`'s value while planning, and
  // so plans the statement anew each time that parameter is bound: every run of a cached
  // statement was compiled again (the lease's candidates 35 µs a run against 4). sqlite-driver.ts
  // writes Kysely's LIMITs as `limit ? + 0`, sql/dialect.ts boundLimit the hand-written lease's.
  const bare_limit = /\blimit \?(?! \+ 0)/i;

  it('are never a bare parameter in any statement the store prepares, and still limit', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-limits-'));
    const { writer, reader } = openSqliteConnections(path.join(dir, 'paygate.sqlite'));
    const prepared: string[] = [];
    for (const connection of [writer, reader]) {
      const prepare = connection.prepare.bind(connection);
      connection.prepare = ((text: string) => {
        prepared.push(text);
        return prepare(text);
      }) as typeof connection.prepare;
    }
    const dialect = new TwoConnectionSqliteDialect(writer, reader);
    const store = new SqlStore(new Kysely<Database>({ dialect }), 'sqlite', { group_commit: true, direct: dialect.direct() });
    try {
      await store.migrate();
      expect(await store.merchants.insert(merchantFixture('m-limit'))).toBe('created');
      const trace_ids: number[] = [];
      for (let i = 0; i < 5; i += 1) {
        const reserved = await store.transactions.reserve(transactionFixture('m-limit'));
        trace_ids.push(reserved!.trace_id);
      }
      await store.transaction(async (tx) => {
        for (const trace_id of trace_ids) await tx.notifications.insert(notificationFixture(trace_id, 'm-limit', 0, 0));
      });
      const leased = await store.notifications.lease({ due_ms: 10, wall_ms: 10 }, 3, 1_000, 'owner');
      expect(leased).toHaveLength(3);
      expect(await store.transactions.findStuck(Number.MAX_SAFE_INTEGER, 2)).toHaveLength(2);
      expect(await store.merchants.listIds(1)).toEqual(['m-limit']);
      await store.backoffice.listUsers(null, 10);
      await store.requestLog.searchRequestLogs(
        { merchant_id: null, path: null, api_status: null, trace_id: null, from_ms: null, to_ms: null, before: null },
        10,
      );

      expect(prepared.filter((text) => /\blimit\b/i.test(text)).length).toBeGreaterThanOrEqual(5);
      expect(prepared.filter((text) => bare_limit.test(text))).toEqual([]);
    } finally {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('are left as they are on PostgreSQL, which plans them once per connection (pg-prepared.ts)', () => {
    const query = leaseNotificationsQuery(new SqlText('postgres'), { due_ms: 1, wall_ms: 1 }, 32, 1000, 'owner');
    expect(query.sql).toMatch(/limit \$3 for update skip locked/);
  });
});

describe.runIf(storeKinds().includes('postgres'))('leasing notifications on PostgreSQL', () => {
  // The sale benchmark's outbox: resends waiting for later, a backlog of due notifications, and
  // statistics that have not caught up with a table filled seconds ago (no ANALYZE). Before
  // migration 0008 PostgreSQL checked each due candidate for an older pending notification of
  // its transaction with a BitmapAnd over every pending row: 16,580 buffers and 135 ms for one
  // lease here, 45,000 buffers and 430 ms in the benchmark. Buffer counts, unlike times, do not
  // depend on how busy the machine is.
  const T0 = 1_800_000_000_000;
  const DUE = 1_600;
  const WAITING = 6_000;
  const DELIVERED = 2_000;
  const LIMIT = 32;

  it('reads a few buffers per due candidate, however many resends wait, and leases the oldest due ones', async () => {
    const opened = await freshDatabase('postgres');
    const { db } = opened;
    try {
      await migrateTo(db as unknown as Kysely<unknown>, 'postgres', null);
      const t0 = sql.lit(T0);
      await sql`insert into merchants (merchant_id, secret_sealed, created_at_ms) values ('m-lease', 's', 0)`.execute(db);
      await sql`insert into transactions (merchant_id, transaction_type, order_id, request_fingerprint, api_version, identity_kind,
          identity_value, gateway_id, payment_processor, payment_method, status, amount_minor, currency, charge_amount_minor,
          charge_currency, pin, created_at_ms, updated_at_ms)
        select 'm-lease', 'sale', 'o-' || g, 'f', '1.2', 'application_key', 'a', 'gw', 'sandbox', 'card', 'approved', 100, 'USD', 100,
          'USD', 'p', ${t0}, ${t0}
        from generate_series(1, ${sql.lit(DELIVERED + WAITING + DUE)}) as g`.execute(db);
      // In trace order: delivered ones, then resends due in five minutes, then the due backlog.
      await sql`insert into notifications (kind, trace_id, merchant_id, url, payload_json, state, next_attempt_at_ms, attempts,
          created_at_ms, updated_at_ms, bound_from_ms)
        select 'transaction', trace_id, 'm-lease', 'http://127.0.0.1:9/', '{}',
          case when rank <= ${sql.lit(DELIVERED)} then 'delivered' else 'pending' end,
          case when rank <= ${sql.lit(DELIVERED + WAITING)} then ${t0} + 300000 else ${t0} end, 1, ${t0}, ${t0}, ${t0}
        from (select trace_id, row_number() over (order by trace_id) as rank from transactions) as t`.execute(db);
      const expected = await sql<{ id: number }>`select id from notifications where state = 'pending' and next_attempt_at_ms <= ${t0}
        order by next_attempt_at_ms, id limit ${sql.lit(LIMIT)}`.execute(db);
      expect(expected.rows).toHaveLength(LIMIT);

      const query = leaseNotificationsQuery(new SqlText('postgres'), { due_ms: T0, wall_ms: T0 }, LIMIT, 60_000, 'owner');
      const explained = await db.executeQuery<{ 'QUERY PLAN': [{ Plan: { 'Shared Hit Blocks': number; 'Shared Read Blocks': number } }] }>(
        CompiledQuery.raw(`explain (analyze, buffers, format json) ${query.sql}`, [...query.parameters]),
      );
      const top = explained.rows[0]!['QUERY PLAN'][0].Plan;
      const buffers = top['Shared Hit Blocks'] + top['Shared Read Blocks'];
      // A bitmap of the due rows plus two short probes each, and the updates: about 3,900 here.
      expect(buffers).toBeLessThan(3 * DUE + 1_500);

      const leased = await sql<{ id: number }>`select id from notifications where lease_owner = 'owner' order by id`.execute(db);
      expect(leased.rows.map((row) => Number(row.id))).toEqual(expected.rows.map((row) => Number(row.id)));
    } finally {
      await opened.close();
    }
  });
});

describe('direct statements on SQLite (sqlite-driver.ts DirectSqlite)', () => {
  it("run a transaction's statements on the writer it holds, and refuse a writer statement when no transaction is open", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-direct-'));
    const writer = new BetterSqlite3(path.join(dir, 'p.sqlite'));
    writer.pragma('journal_mode = WAL');
    const reader = new BetterSqlite3(path.join(dir, 'p.sqlite'));
    reader.pragma('query_only = ON');
    const dialect = new TwoConnectionSqliteDialect(writer, reader);
    const db = new Kysely<Record<string, { id: number; note: string }>>({ dialect });
    const direct = dialect.direct();
    const text = new SqlText('sqlite');
    try {
      await sql`create table notes (id integer primary key, note text not null)`.execute(db);
      expect(() => direct.inTransaction(text.insert('notes', { note: 'outside' }))).toThrow(/no transaction open/);
      expect(() => direct.read(text.insert('notes', { note: 'to the reader' }))).toThrow(/only a plain SELECT/);
      await db.transaction().execute(async () => {
        direct.inTransaction(text.insert('notes', { note: 'inside' }));
        // Not committed yet: the reader does not see it, the writer does.
        expect(direct.read(text.selectAll('notes', { note: 'inside' })).rows).toEqual([]);
        expect(direct.inTransaction(text.selectAll('notes', { note: 'inside' })).rows).toEqual([{ id: 1, note: 'inside' }]);
      });
      expect(direct.read(text.selectAll('notes', { note: 'inside' })).rows).toEqual([{ id: 1, note: 'inside' }]);
      // A failed transaction takes its direct statements with it.
      await expect(
        db.transaction().execute(async () => {
          direct.inTransaction(text.insert('notes', { note: 'rolled back' }));
          throw new Error('fail');
        }),
      ).rejects.toThrow('fail');
      expect(direct.read(text.selectAll('notes', { note: 'rolled back' })).rows).toEqual([]);
    } finally {
      await db.destroy();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('prepared statements on SQLite (sqlite-driver.ts StatementCache)', () => {
  it('stay few however the request log batches vary, and a statement of very long text is not kept', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-statements-'));
    const { writer, reader } = openSqliteConnections(path.join(dir, 'paygate.sqlite'));
    const dialect = new TwoConnectionSqliteDialect(writer, reader);
    const db = new Kysely<Database>({ dialect });
    const store = new SqlStore(db, 'sqlite', { group_commit: true, direct: dialect.direct() });
    const row = (i: number) => ({
      merchant_id: null,
      method: 'GET',
      route: '/healthz',
      path: '/healthz',
      operation: null,
      http_code: 200,
      api_status: null,
      description: null,
      trace_id: null,
      latency_ms: 1,
      created_at_ms: i,
      request_json: null,
      answer_json: null,
    });
    const batch = (size: number) =>
      store.transaction((tx) => tx.requestLog.insertRequestLogs(Array.from({ length: size }, (_, i) => row(i))));
    try {
      await store.migrate();
      // Every statement shape once (and the transaction's own commands).
      await batch(64 + 16 + 4 + 1);
      const prepared = dialect.preparedStatements();
      // A batch of each size from 1 to 150 was a statement of its own before (141 MB for 500 sizes).
      for (let size = 1; size <= 150; size += 1) await batch(size);
      expect(dialect.preparedStatements()).toBe(prepared);
      expect(Number((await sql<{ n: number }>`select count(*) as n from request_log`.execute(db)).rows[0]!.n)).toBe(85 + (150 * 151) / 2);

      const counted = dialect.preparedStatements();
      const long_text = `select 42 as answer /* ${'x'.repeat(9_000)} */`;
      expect((await sql.raw<{ answer: number }>(long_text).execute(db)).rows).toEqual([{ answer: 42 }]);
      expect(dialect.preparedStatements()).toBe(counted);
    } finally {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
