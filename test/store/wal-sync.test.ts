// The embedded store's commits are made durable off the event loop (store/wal-sync.ts): the writer
// runs with synchronous=NORMAL and each commit's caller hears of it only once an fsync of the WAL
// that began after its COMMIT has ended. What must hold: no write and no answer is acknowledged
// before that fsync ends, even though the commit is already visible to reads; one fsync covers
// every commit made while the one before it ran; a failed fsync refuses every write and every
// answer after it. These tests hold the fsync (a syncer that waits for the test's word) and watch
// what waits: the class alone, then a real gateway over real HTTP and a real SQLite file.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { type FileSyncer, fsyncThread, WalSync } from '../../src/store/wal-sync.js';
import { openSqliteStore } from '../../src/store/open.js';
import { Kysely, sql } from 'kysely';
import { TwoConnectionSqliteDialect } from '../../src/store/sqlite-driver.js';
import { postSigned } from '../support/client.js';
import { orderId, refundC, saleA } from '../support/bodies.js';
import { payoutE } from '../support/payout-bodies.js';
import type { TestGateway } from '../support/gateway.js';
import { startTestGateway } from '../support/gateway.js';
import { planBody, v13 } from '../support/v13.js';

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) fs.rmSync(folder, { recursive: true, force: true });
});
function folder(): string {
  const made = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-wal-sync-'));
  folders.push(made);
  return made;
}

/** A syncer whose fsyncs wait while it is held; each really syncs (on its own thread) once let go. */
class HeldSyncer implements FileSyncer {
  private readonly real = fsyncThread();
  private held: Promise<void> | null = null;
  private let_go: (() => void) | null = null;
  private failing: Error | null = null;
  calls = 0;
  hold(): void {
    this.held = new Promise((resolve) => {
      this.let_go = resolve;
    });
  }
  release(): void {
    this.let_go?.();
    this.held = null;
  }
  failNext(error: Error): void {
    this.failing = error;
  }
  async sync(fd: number): Promise<void> {
    this.calls += 1;
    if (this.held) await this.held;
    if (this.failing) throw this.failing;
    await this.real.sync(fd);
  }
  close(): Promise<void> {
    return this.real.close();
  }
}

const settled = async <T>(promise: Promise<T>) => {
  let state: 'pending' | 'resolved' | 'rejected' = 'pending';
  promise.then(
    () => (state = 'resolved'),
    () => (state = 'rejected'),
  );
  // Long enough for a thread's fsync to end many times over; what is watched must not happen at all.
  await new Promise((resolve) => setTimeout(resolve, 50));
  return state;
};

/**
 * What a promise that must settle did within `bound_ms`. A positive outcome gets a generous bound:
 * on a busy machine a real fsync, and the answer after it, can take longer than settled's 50 ms.
 * What it checks still fails when the promise waits for something held (it never settles).
 */
const settledWithin = async <T>(promise: Promise<T>, bound_ms = 10_000) => {
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    promise.then(
      () => 'resolved' as const,
      () => 'rejected' as const,
    ),
    new Promise<'pending'>((resolve) => {
      timer = setTimeout(() => resolve('pending'), bound_ms);
    }),
  ]);
  clearTimeout(timer);
  return outcome;
};

describe('WalSync', () => {
  function walFile(): string {
    const file = path.join(folder(), 'db-wal');
    fs.writeFileSync(file, 'frames');
    return file;
  }

  it('resolves a commit only once an fsync begun after it has ended, and says when nothing is waiting', async () => {
    const syncer = new HeldSyncer();
    const wal = new WalSync(walFile(), syncer);
    expect(wal.durable()).toBeNull();
    syncer.hold();
    const first = wal.committed();
    expect(await settled(first)).toBe('pending');
    const readers_wait = wal.durable();
    expect(readers_wait).not.toBeNull();
    expect(await settled(readers_wait!)).toBe('pending');
    syncer.release();
    await first;
    await readers_wait;
    expect(wal.durable()).toBeNull();
    expect(wal.stats).toEqual({ syncs: 1, commits: 1 });
    await wal.close();
  });

  it('covers every commit made while an fsync runs with the next one, not one each', async () => {
    const syncer = new HeldSyncer();
    const wal = new WalSync(walFile(), syncer);
    syncer.hold();
    const first = wal.committed();
    // Made while the first fsync runs: not covered by it (their frames may have come after it began).
    const later = [wal.committed(), wal.committed(), wal.committed(), wal.committed()];
    expect(await settled(first)).toBe('pending');
    syncer.release();
    await first;
    await Promise.all(later);
    expect(syncer.calls).toBe(2);
    expect(wal.stats).toEqual({ syncs: 2, commits: 5 });
    await wal.close();
  });

  it('after a failed fsync refuses every waiter, every later commit and every reader, for good', async () => {
    const syncer = new HeldSyncer();
    const wal = new WalSync(walFile(), syncer);
    await wal.committed();
    syncer.failNext(Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' }));
    const waiting = [wal.committed(), wal.committed()];
    for (const result of await Promise.allSettled(waiting)) {
      expect(result.status).toBe('rejected');
      expect(String((result as PromiseRejectedResult).reason)).toMatch(/could not be synced to disk: EIO/);
    }
    await expect(wal.committed()).rejects.toThrow(/could not be synced/);
    await expect(wal.durable()!).rejects.toThrow(/could not be synced/);
    await wal.close();
  });

  it('refuses a commit when the WAL file cannot be opened, instead of calling it durable', async () => {
    const wal = new WalSync(path.join(folder(), 'missing-wal'), new HeldSyncer());
    await expect(wal.committed()).rejects.toThrow(/could not be synced to disk: ENOENT/);
    await wal.close();
  });
});

describe('fsyncThread', () => {
  it('syncs an open file and reports a descriptor that is not one', async () => {
    const file = path.join(folder(), 'f');
    fs.writeFileSync(file, 'x');
    const fd = fs.openSync(file, 'r+');
    const thread = fsyncThread();
    await thread.sync(fd);
    fs.closeSync(fd);
    await expect(thread.sync(fd)).rejects.toThrow(/EBADF/);
    await thread.close();
  });
});

describe('the embedded store over WalSync', () => {
  it('acknowledges no write before the fsync after it, though a read sees it committed', async () => {
    const dir = folder();
    const syncer = new HeldSyncer();
    const store = openSqliteStore(path.join(dir, 'paygate.sqlite'), { file_syncer: syncer });
    await store.migrate();
    const calls_after_migrations = syncer.calls;
    expect(calls_after_migrations).toBeGreaterThan(0);

    syncer.hold();
    const written = store.sandboxClock.setOffset(86_400_000);
    expect(await settled(written)).toBe('pending');
    // Committed and visible already: what a reader would answer from must wait (store.durable).
    expect(await store.sandboxClock.getOffset()).toBe(86_400_000);
    expect(store.durable()).not.toBeNull();
    syncer.release();
    await written;
    expect(store.durable()).toBeNull();
    expect(syncer.calls).toBeGreaterThan(calls_after_migrations);
    await store.close();
  });
});

describe('the driver: a commit that changed nothing', () => {
  /** The driver over a fresh file, with its fsyncs counted and held at will, and a table of one row. */
  async function driver() {
    const file = path.join(folder(), 'd.sqlite');
    const writer = new BetterSqlite3(file);
    writer.pragma('journal_mode = WAL');
    writer.pragma('synchronous = NORMAL');
    const reader = new BetterSqlite3(file);
    reader.pragma('query_only = ON');
    const syncer = new HeldSyncer();
    const db = new Kysely<any>({ dialect: new TwoConnectionSqliteDialect(writer, reader, new WalSync(`${file}-wal`, syncer)) });
    await sql`create table t (a integer primary key, b integer)`.execute(db);
    await sql`insert into t values (1, 0)`.execute(db);
    return { db, syncer };
  }

  it('costs no fsync once everything before it is on disk; a commit that changed rows, or may have (DDL), waits for one', async () => {
    const { db, syncer } = await driver();
    syncer.hold();
    const calls = syncer.calls;
    // Nothing changed, in a transaction and outside one, RETURNING or not: answered with the fsync held.
    const unchanged = (async () => {
      await db.transaction().execute(async (trx) => {
        await sql`update t set b = 1 where a = 99 returning a`.execute(trx);
        await sql`select * from t`.execute(trx);
      });
      await sql`update t set b = 1 where a = 99`.execute(db);
      await sql`delete from t where a = 99`.execute(db);
    })();
    expect(await settledWithin(unchanged)).toBe('resolved');
    expect(syncer.calls).toBe(calls);
    // Each of these changed something: not acknowledged while its fsync is held.
    const writes = [
      () => db.transaction().execute(async (trx) => sql`update t set b = b + 1 where a = 1 returning a`.execute(trx)),
      () => sql`update t set b = b + 1 where a = 1`.execute(db),
      () => db.transaction().execute(async (trx) => sql`insert into t (b) values (5)`.execute(trx)),
      () => sql`create table u (x integer)`.execute(db),
    ];
    for (const write of writes) {
      const pending = write();
      expect(await settled(pending)).toBe('pending');
      syncer.release();
      await pending;
      syncer.hold();
    }
    syncer.release();
    await db.destroy();
  });

  it("waits for the fsync of another's commit it may have read", async () => {
    const { db, syncer } = await driver();
    syncer.hold();
    const write = sql`update t set b = 7 where a = 1`.execute(db);
    expect(await settled(write)).toBe('pending');
    const read_only = db.transaction().execute(async (trx) => sql<{ b: number }>`select b from t where a = 1`.execute(trx));
    expect(await settled(read_only)).toBe('pending');
    syncer.release();
    expect((await read_only).rows).toEqual([{ b: 7 }]);
    await write;
    await db.destroy();
  });
});

describe('a gateway on the embedded store', () => {
  it('answers neither a sale nor a replay of it read from the store before the WAL holding it is synced', () =>
    withHeldGateway(async (gw, syncer) => {
      const body = saleA(gw.merchant, { order_id: orderId() });
      syncer.hold();
      const sale = postSigned(gw.url, '/api/process', body, gw.merchant.secret);
      // Wait until the sale is committed (visible to another connection) while its fsync is held.
      const committed = await committedRow(gw, 'select status from transactions where merchant_id = ? and order_id = ?', [
        gw.merchant.merchant_id,
        body.order_id,
      ]);
      expect(committed).toEqual({ status: 'approved' });
      // The same request again is a replay, answered from the committed row without writing: it waits too.
      const replay = postSigned(gw.url, '/api/process', body, gw.merchant.secret);
      expect(await settled(sale)).toBe('pending');
      expect(await settled(replay)).toBe('pending');
      syncer.release();
      const [first, again] = await Promise.all([sale, replay]);
      expect(first.body.status).toBe(0);
      expect(again.body.status).toBe(0);
      expect(again.body.trace_id).toBe(first.body.trace_id);
    }));

  it('answers no v1.3 read (the header-signed pipeline) of a plan before the WAL holding the plan is synced', () =>
    withHeldGateway(async (gw, syncer) => {
      const PLANS = '/api/v1.3/subscription-plan';
      const name = `Held plan ${orderId()}`;
      syncer.hold();
      const created = v13(gw.url, 'POST', PLANS, gw.merchant, planBody({ name }));
      const committed = await committedRow(gw, 'select plan_id from subscription_plans where merchant_id = ? and name = ?', [
        gw.merchant.merchant_id,
        name,
      ]);
      expect(committed).toBeDefined();
      // A read writes nothing of its own; it lists the plan another request committed, so it waits
      // for that commit's fsync like the commit's own answer.
      const listed = v13(gw.url, 'GET', PLANS, gw.merchant, { page: 1, page_size: 10 });
      expect(await settled(created)).toBe('pending');
      expect(await settled(listed)).toBe('pending');
      syncer.release();
      const [plan, list] = await Promise.all([created, listed]);
      expect(plan.body.status).toBe(0);
      expect(list.body.status).toBe(0);
      expect(JSON.stringify(list.body)).toContain(String(plan.body.plan_id));
    }));

  // The other side (Reply.from_own_commit): an answer that reports only the request's own commit,
  // on disk before the operation returned, does not wait for commits other requests made after it.
  // Each request's fsync is held; once it is let go, a later commit of another's is still being
  // synced (held too). Were the answer to wait for everything committed so far, it would wait for
  // that one as well.
  it('answers a new sale, refund and payout once their own commit is on disk, not after later commits of others', () =>
    withHeldGateway(async (gw, syncer) => {
      const processed = (body: Record<string, unknown>) =>
        answeredAheadOfLaterCommit(gw, syncer, () => postSigned(gw.url, '/api/process', body, gw.merchant.secret), {
          sql: "select status from transactions where merchant_id = ? and order_id = ? and status <> 'pending'",
          params: [gw.merchant.merchant_id, body.order_id],
        });
      const sale = await processed(saleA(gw.merchant, { order_id: orderId() }));
      expect(sale).toMatchObject({ status: 0, transaction_status: 'approved' });
      const refund = await processed(refundC(gw.merchant, sale.trace_id, { amount: 100 }));
      expect(refund).toMatchObject({ status: 0, transaction_status: 'approved' });
      const payout = await processed(payoutE(gw.merchant));
      expect(payout).toMatchObject({ status: 0, transaction_status: 'approved' });
    }));

  it('answers a capture and a void done at the processor once their own commit is on disk, not after later commits of others', () =>
    withHeldGateway(async (gw, syncer) => {
      const act = async (url: '/api/capture' | '/api/void', amount?: number) => {
        const authorized = await postSigned(
          gw.url,
          '/api/process',
          saleA(gw.merchant, { order_id: orderId(), transaction_type: 'authorize', amount: 1000 }),
          gw.merchant.secret,
        );
        expect(authorized.body).toMatchObject({ status: 0, transaction_status: 'authorized' });
        const trace_id = authorized.body.trace_id as number;
        const body = {
          merchant_id: gw.merchant.merchant_id,
          application_key: gw.merchant.application_key,
          version: '1.2',
          timestamp: Math.floor(Date.now() / 1000),
          reference_id: trace_id,
          ...(amount === undefined ? {} : { amount }),
        };
        return answeredAheadOfLaterCommit(gw, syncer, () => postSigned(gw.url, url, body, gw.merchant.secret), {
          sql: "select status from transactions where trace_id = ? and status <> 'authorized'",
          params: [trace_id],
        });
      };
      expect(await act('/api/capture', 600)).toMatchObject({ status: 0, transaction_status: 'approved' });
      expect(await act('/api/void')).toMatchObject({ status: 0, transaction_status: 'cancelled' });
    }));
});

/**
 * Sends a request with fsyncs held, commits another write after it, lets only the first fsync go:
 * the answer must come while the second is still held. `final` finds the request's final write.
 */
async function answeredAheadOfLaterCommit(
  gw: TestGateway,
  syncer: HeldSyncer,
  send: () => ReturnType<typeof postSigned>,
  final: { readonly sql: string; readonly params: unknown[] },
): Promise<Record<string, unknown>> {
  syncer.hold();
  const answer = send();
  // Until its final status is committed (visible to another connection) with its fsync held.
  // A refund, payout, capture or void commits its reservation first: those earlier fsyncs are let go.
  const committed = await committedRow(gw, final.sql, final.params, () => {
    syncer.release();
    syncer.hold();
  });
  expect(committed).toBeDefined();
  expect(await settled(answer)).toBe('pending');
  const later = gw.gateway.deps.store.sandboxClock.setOffset(0);
  expect(await settled(later)).toBe('pending');
  // The fsync covering the request's commit ends; the next one, covering the later commit, is held.
  syncer.release();
  syncer.hold();
  expect(await settledWithin(answer)).toBe('resolved');
  expect(await settled(later)).toBe('pending');
  syncer.release();
  await later;
  return (await answer).body;
}

/**
 * A gateway on the embedded store whose fsyncs the test holds (its own notification worker stopped,
 * so that nothing else commits), closed after `test` with every fsync let go.
 */
async function withHeldGateway(test: (gw: TestGateway, syncer: HeldSyncer) => Promise<void>): Promise<void> {
  const syncer = new HeldSyncer();
  const gw = await startTestGateway('sqlite', { file_syncer: syncer, env: { PAYGATE_REQUEST_LOG_DAYS: '0' } });
  try {
    await gw.gateway.notifications.stop();
    await test(gw, syncer);
  } finally {
    syncer.release();
    await gw.close();
  }
}

/**
 * The row `sql` finds through a connection of its own (so only once committed), polled every 10 ms
 * for up to 2 s; `between` runs before each wait. Undefined when it never appears.
 */
async function committedRow(gw: TestGateway, sql: string, params: unknown[], between?: () => void): Promise<unknown> {
  const db = new BetterSqlite3(path.join(gw.data_dir, 'paygate.sqlite'), { readonly: true });
  try {
    const row = db.prepare(sql);
    for (let i = 0; i < 200; i++) {
      const found = row.get(...params);
      if (found !== undefined) return found;
      between?.();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return row.get(...params);
  } finally {
    db.close();
  }
}
