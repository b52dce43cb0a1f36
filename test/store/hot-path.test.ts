// The store under the sale's hot path (issue 7): the reservation insert that answers its row, the
// embedded store's two connections (store/sqlite-driver.ts: plain reads never wait for an open
// transaction and never see its writes; writes outside a transaction wait for it), and the
// merchant cache (domain/merchants.ts: found merchants kept briefly, unknown ones never), and the
// plan of the notification lease.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { Sealer } from '../../src/crypto/sealer.js';
import { MerchantDirectory } from '../../src/domain/merchants.js';
import { openSqliteStore } from '../../src/store/open.js';
import { leaseNotificationsQuery } from '../../src/store/sql-store.js';
import { SqlText } from '../../src/store/sql-text.js';
import { TwoConnectionSqliteDialect } from '../../src/store/sqlite-driver.js';
import type { Store } from '../../src/store/store.js';
import { transactionFixture, withStoreAndMerchant } from '../support/store-fixture.js';
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
    const reserved = await store.transaction((tx) => tx.reserveTransaction(row));
    expect(reserved).not.toBeNull();
    expect(reserved).toEqual(await store.getTransaction(reserved!.trace_id));
    expect(reserved).toMatchObject({ order_id: row.order_id, status: 'pending', refund_reserved_minor: 0, amount_minor: 1999 });
    expect(await store.reserveTransaction({ ...row, request_fingerprint: 'another' })).toBeNull();
    expect((await store.findTransactionByKey(merchant_id, 'sale', row.order_id))!.request_fingerprint).toBe(row.request_fingerprint);
  });

  it('a plain read outside a transaction never sees the uncommitted writes of an open one', async () => {
    const row = transactionFixture(merchant_id);
    const inserted = deferred();
    const release = deferred();
    const open = store.transaction(async (tx) => {
      await tx.insertTransactionIfAbsent(row);
      inserted.resolve();
      await release.promise;
    });
    await inserted.promise;
    // The transaction is open and holds the writer: this read answers at once, without its row.
    expect(await store.findTransactionByKey(merchant_id, 'sale', row.order_id)).toBeNull();
    expect(await store.countMerchants()).toBeGreaterThan(0);
    release.resolve();
    await open;
    expect(await store.findTransactionByKey(merchant_id, 'sale', row.order_id)).not.toBeNull();
  });

  it('inside a transaction, reads see its own writes', async () => {
    const row = transactionFixture(merchant_id);
    const seen = await store.transaction(async (tx) => {
      const trace_id = await tx.insertTransactionIfAbsent(row);
      return (await tx.getTransaction(trace_id!))?.order_id;
    });
    expect(seen).toBe(row.order_id);
  });

  it.runIf(kind === 'sqlite')('a write outside a transaction waits for the open transaction, then applies', async () => {
    const trace_id = (await store.insertTransactionIfAbsent(transactionFixture(merchant_id)))!;
    const order: string[] = [];
    const inside = deferred();
    const release = deferred();
    const open = store.transaction(async (tx) => {
      await tx.updateTransaction(trace_id, { description: 'inside' });
      inside.resolve();
      await release.promise;
      order.push('commit');
    });
    await inside.promise;
    const outside = store.updateTransaction(trace_id, { description: 'outside' }).then(() => order.push('outside'));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(order).toEqual([]);
    release.resolve();
    await Promise.all([open, outside]);
    expect(order).toEqual(['commit', 'outside']);
    expect((await store.getTransaction(trace_id))!.description).toBe('outside');
  });

  it('a rolled-back transaction leaves nothing and lets the next one in', async () => {
    const row = transactionFixture(merchant_id);
    await expect(store.transaction(async (tx) => {
      await tx.insertTransactionIfAbsent(row);
      throw new Error('rolled back');
    })).rejects.toThrow('rolled back');
    expect(await store.findTransactionByKey(merchant_id, 'sale', row.order_id)).toBeNull();
    expect(await store.transaction((tx) => tx.insertTransactionIfAbsent(row))).toEqual(expect.any(Number));
  });

  it('the merchant cache keeps found merchants briefly, never unknown ones, and forgets on invalidate', async () => {
    const sealer = new Sealer(Buffer.alloc(32, 7));
    const directory = new MerchantDirectory(store, sealer, 60_000);
    const reader = new MerchantDirectory(store, sealer);
    // Unknown now, created by "another process" (another directory), then known at once.
    expect(await directory.find('cache-shop')).toBeNull();
    const created = await reader.create({ merchant_id: 'cache-shop', secret: 'cache-secret-1' }, Date.now());
    expect(created.kind).toBe('created');
    const found = await directory.find('cache-shop');
    expect(found).toMatchObject({ merchant_id: 'cache-shop', secret: 'cache-secret-1' });
    // Kept: a gateway change is not seen until invalidate().
    const gateway_id = found!.gateways[0]!.gateway_id;
    await store.setGatewayHoldPayouts(gateway_id, true);
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
        const plan = (db.prepare(`explain query plan ${query.sql}`).all(...query.parameters) as { detail: string }[]).map((row) => row.detail);
        // The outer UPDATE: by rowid from the candidate list. With a re-check of `state` there,
        // SQLite chose `SEARCH notifications USING INDEX notifications_due (state=?)`: every
        // pending notification, thousands while resends wait, read on each lease.
        expect(plan).toContain('SEARCH notifications USING INTEGER PRIMARY KEY (rowid=?)');
        expect(plan.filter((line) => /^(SCAN|SEARCH) notifications\b/.test(line))).toEqual(['SEARCH notifications USING INTEGER PRIMARY KEY (rowid=?)']);
        // The candidates: a range of the due index, never a scan of the table.
        expect(plan).toContain('SEARCH n USING INDEX notifications_due (state=? AND next_attempt_at_ms<?)');
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

describe('direct statements on SQLite (sqlite-driver.ts DirectSqlite)', () => {
  it('run a transaction\'s statements on the writer it holds, and refuse a writer statement when no transaction is open', async () => {
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
      await expect(db.transaction().execute(async () => {
        direct.inTransaction(text.insert('notes', { note: 'rolled back' }));
        throw new Error('fail');
      })).rejects.toThrow('fail');
      expect(direct.read(text.selectAll('notes', { note: 'rolled back' })).rows).toEqual([]);
    } finally {
      await db.destroy();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
