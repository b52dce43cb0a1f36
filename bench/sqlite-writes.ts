// `npm run bench:sqlite-writes`: the CPU the store spends on a sandbox sale's writes on SQLite,
// apart from HTTP, signing and everything else a sale costs (issue 29, item 1), and written to
// bench/SQLITE-WRITES.md. The full benchmark's sale row moves with the host by more than a change
// to the sale's statements is worth (bench/COMPARE.md); this runs only the store, in this
// process, so its spread is small enough to see one.
//
// Each way of writing a sale runs on a store of its own (a fresh file, the real driver, group
// commit and fsync thread): WAVES waves of CONCURRENCY sales at once (so that the group commit
// batches them as it batches a busy gateway's), the sale's unit of work as operations/sale.ts
// runs it (reserve, the card vault, the approved change with its notification), cards from
// CARDS customers. The first WARM_UP_WAVES are not counted. The process's CPU (the fsync and
// checkpoint threads' included) is divided by the sales measured. The ways alternate, ROUNDS
// times; each cell is the median, then the lowest and highest.
//
// Environment: BENCH_SQLITE_WRITES_ROUNDS (3), BENCH_SQLITE_WRITES_WAVES (500).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Kysely, SqliteDialect } from 'kysely';
import BetterSqlite3 from 'better-sqlite3';
import { newNotificationRow } from '../src/notifications/schedule.js';
import { migrateTo } from '../src/store/migrations/index.js';
import { openSqliteStore } from '../src/store/open.js';
import { type Store, type UnitOfWork, WritesNotHeld } from '../src/store/store.js';
import { cardFixture, merchantFixture, transactionFixture } from '../test/support/store-fixture.js';

const ROUNDS = Number(process.env.BENCH_SQLITE_WRITES_ROUNDS ?? 3);
const WAVES = Number(process.env.BENCH_SQLITE_WRITES_WAVES ?? 500);
const WARM_UP_WAVES = 50;
const CONCURRENCY = 20;
const CARDS = 1000;

interface Way {
  readonly name: string;
  /** The last migration the store's file is built with (null: all). */
  readonly schema: string | null;
  /** Runs one sale's unit of work on `store`. */
  readonly sale: (store: Store, work: (uow: UnitOfWork) => Promise<void>) => Promise<void>;
}

const WAYS: readonly Way[] = [
  {
    name: 'one transaction, schema of migration 0025 (before 0d02e30)',
    schema: '0025_lighter_writes',
    sale: (store, work) => store.transaction(work),
  },
  {
    name: 'held (Store.holdWrites), schema of migration 0025',
    schema: '0025_lighter_writes',
    sale: held,
  },
  { name: 'held, schema of migration 0026 (this build)', schema: null, sale: held },
];

/** As operations/sale.ts: held, and in one transaction when the held write found its key or trace_id taken (a draw that met a stored one). */
function held(store: Store, work: (uow: UnitOfWork) => Promise<void>): Promise<void> {
  return store.holdWrites!(work).catch((error: unknown) => {
    if (error instanceof WritesNotHeld) return store.transaction(work);
    throw error;
  });
}

/** A sandbox sale's writes, as operations/sale.ts makes them: reserve, vault the card, approve with a notification. */
async function saleWork(uow: UnitOfWork, merchant_id: string, n: number, now_ms: number): Promise<void> {
  const reserved = await uow.transactions.reserveOrHolder(
    transactionFixture(merchant_id, { notification_url: 'http://127.0.0.1:9/notify', created_at_ms: now_ms, updated_at_ms: now_ms }),
    'request accepted',
  );
  if (reserved.kind !== 'inserted') throw new Error('reservation not inserted');
  const pin = `customer-${n % CARDS}`;
  const card_token =
    uow.cards.knownToken(merchant_id, pin, 'pan-fp', '12/2030') ?? (await uow.cards.tokenFor(cardFixture(merchant_id, { pin })));
  const trace_id = reserved.row.trace_id;
  const answer_json = JSON.stringify({ status: 0, trace_id, transaction_status: 'approved', description: 'x'.repeat(400) });
  const changed = await uow.transactions.changeStatus(
    trace_id,
    'pending',
    { status: 'approved', psp_transaction_id: `sbx_${trace_id}`, error_code: '0', card_token, answer_json },
    'processor answered',
    now_ms,
    newNotificationRow({ trace_id, merchant_id, url: 'http://127.0.0.1:9/notify' }, { trace_id, status: 'approved' }, now_ms),
  );
  if (!changed) throw new Error('approval not written');
}

/** One way's run on a fresh file: CPU microseconds a sale, over the waves after the warm-up. */
async function runWay(way: Way): Promise<number> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-sqlite-writes-'));
  const file = path.join(dir, 'paygate.sqlite');
  try {
    const plain = new Kysely<unknown>({ dialect: new SqliteDialect({ database: new BetterSqlite3(file) }) });
    await migrateTo(plain, 'sqlite', way.schema);
    await plain.destroy();
    const store = openSqliteStore(file);
    try {
      const merchant = merchantFixture();
      await store.merchants.insert(merchant);
      let n = 0;
      let cpu_start = process.cpuUsage();
      for (let wave = 0; wave < WARM_UP_WAVES + WAVES; wave++) {
        if (wave === WARM_UP_WAVES) cpu_start = process.cpuUsage();
        const now_ms = Date.now();
        const sales = [];
        for (let i = 0; i < CONCURRENCY; i++) {
          n += 1;
          const sale_n = n;
          sales.push(way.sale(store, (uow) => saleWork(uow, merchant.merchant_id, sale_n, now_ms)));
        }
        await Promise.all(sales);
      }
      const cpu = process.cpuUsage(cpu_start);
      return (cpu.user + cpu.system) / (WAVES * CONCURRENCY);
    } finally {
      await store.close();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function main(): Promise<void> {
  if (!Number.isInteger(ROUNDS) || ROUNDS < 1 || ROUNDS > 20) throw new Error('BENCH_SQLITE_WRITES_ROUNDS must be 1 to 20');
  if (!Number.isInteger(WAVES) || WAVES < 10 || WAVES > 10_000) throw new Error('BENCH_SQLITE_WRITES_WAVES must be 10 to 10000');
  const started = new Date();
  const load_before = os.loadavg()[0]!;
  const results = new Map<string, number[]>(WAYS.map((way) => [way.name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const way of WAYS) {
      const us = await runWay(way);
      results.get(way.name)!.push(us);
      console.log(`round ${round + 1}: ${way.name}: ${us.toFixed(1)} µs a sale`);
    }
  }
  const rows = WAYS.map((way) => {
    const values = results.get(way.name)!;
    return `| ${way.name} | ${median(values).toFixed(1)} (${Math.min(...values).toFixed(1)}-${Math.max(...values).toFixed(1)}) |`;
  });
  const text = [
    "# A SQLite sale's writes, by the store alone",
    '',
    `Written by \`npm run bench:sqlite-writes\` on ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC: ${ROUNDS} round(s), the ways alternating, each ${WAVES} waves of ${CONCURRENCY} sales at once after ${WARM_UP_WAVES} not counted, cards of ${CARDS} customers (bench/sqlite-writes.ts). ${os.cpus()[0]?.model ?? 'unknown CPU'}, ${os.cpus().length} cores, Node ${process.version}; load average (1 min) ${load_before.toFixed(2)} before, ${os.loadavg()[0]!.toFixed(2)} after.`,
    '',
    "The process's CPU (the fsync and checkpoint threads' included) for the store's part of a sandbox sale: its unit of work (reserve, the card vault, the approved status change with its notification) through the real store on a fresh SQLite file, group commit on. No HTTP, signing, request log or notification delivery.",
    '',
    '| way | CPU µs a sale: median (lowest-highest) |',
    '|---|---:|',
    ...rows,
    '',
  ].join('\n');
  fs.writeFileSync(path.join(import.meta.dirname, 'SQLITE-WRITES.md'), text);
  console.log(text);
}

await main();
