// `npm run bench:statements`: counts the PostgreSQL statements (each one round trip) a sandbox
// sale costs, by shape, and writes them to bench/STATEMENTS.md (issue 29, item 2). A gateway in
// this process on a fresh database, with the benchmark's settings (background pollers at their
// defaults, notifications to a closed port: each tried once and rescheduled), takes SALES sales
// from CONCURRENCY clients at once; every statement node-postgres sends meanwhile is counted,
// the background pollers' included, and divided by the sales answered. Counts, not times: they
// are the same on a busy machine, so a change to the sale's statements shows here exactly.
//
// Beside the statements it reads what PostgreSQL wrote for them: WAL records, full-page images
// and bytes (pg_stat_wal, cluster-wide: nothing else may run meanwhile) and each table's row
// writes (pg_stat_user_tables), both per sale. A backend reports its counts when it goes idle
// or ends, so the warm-up's are let settle (PGSTAT_IDLE_INTERVAL is 10 s) and the run's are read
// once the gateway has closed its sessions.
//
// Environment: BENCH_STATEMENT_SALES (2000), BENCH_STATEMENT_CONCURRENCY (50),
// PAYGATE_TEST_DATABASE_URL (the server; a database is created and dropped).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logging.js';
import { startGateway } from '../src/main.js';
import { signBody } from '../src/domain/signing.js';
import { createTestDatabase } from '../test/support/postgres.js';
import { saleA } from '../test/support/bodies.js';

const SALES = Number(process.env.BENCH_STATEMENT_SALES ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_STATEMENT_CONCURRENCY ?? 50);
const WARM_UP_SALES = 50;
/** What a statement is counted under: its text with parameters and spacing folded, cut to this length. */
const SHAPE_CHARS = 120;

/** Long enough for every idle backend to have reported its statistics (PostgreSQL waits 10 s). */
const STATS_SETTLE_MS = 11_000;

const counts = new Map<string, number>();
let counting = false;
// Every query of every pooled client goes through Client.prototype.query.
const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
(pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown }).query = function (this: pg.Client, ...args: unknown[]) {
  if (counting) {
    const first = args[0] as string | { text?: string } | undefined;
    const text = typeof first === 'string' ? first : (first?.text ?? '?');
    const shape = text
      .replace(/\s+/g, ' ')
      .replace(/\$\d+(::\w+)?/g, '?')
      .trim()
      .slice(0, SHAPE_CHARS);
    counts.set(shape, (counts.get(shape) ?? 0) + 1);
  }
  return query.apply(this, args);
};

async function main(): Promise<void> {
  const database = await createTestDatabase();
  const data_dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-statements-'));
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    PAYGATE_DATA_DIR: data_dir,
    DATABASE_URL: database.url,
    PAYGATE_MASTER_KEY: 'c'.repeat(64),
    PAYGATE_LOG_LEVEL: 'warn',
    // As npm run bench: the merchant's and the address's request limits off.
    PAYGATE_RATE_LIMIT_ADDRESS_PER_MINUTE: '0',
    PAYGATE_RATE_LIMIT_MERCHANT_PER_MINUTE: '0',
  });
  const gateway = await startGateway(config, { logger: createLogger({ level: 'warn' }), announce: () => undefined });
  let closed = false;
  try {
    const merchant = gateway.demo_merchant;
    if (!merchant) throw new Error('no demo merchant');
    let answered = 0;
    let sent = 0;
    const sale = async (): Promise<void> => {
      // As npm run bench: a thousand customers, so a card is vaulted once and then found.
      sent += 1;
      const body = saleA(merchant, {
        cvv: '568',
        pin: `cust-${sent % 1000}`,
        notification_url: 'http://127.0.0.1:9/paygate-bench',
        timestamp: Math.floor(Date.now() / 1000),
      });
      const response = await fetch(`${gateway.url}/api/process`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...body, signature: signBody(body, merchant.secret) }),
      });
      const answer = (await response.json()) as { status?: number };
      if (answer.status !== 0) throw new Error(`sale answered ${JSON.stringify(answer)}`);
      answered += 1;
    };
    const run = async (total: number) => {
      let started = 0;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (started < total) {
            started += 1;
            await sale();
          }
        }),
      );
    };
    await run(WARM_UP_SALES);
    await new Promise((resolve) => setTimeout(resolve, STATS_SETTLE_MS));
    const writes_before = await readWrites(database.url);
    answered = 0;
    counting = true;
    const started_ms = Date.now();
    await run(SALES);
    // The sales' notification attempts (each refused at once by the closed port).
    await new Promise((resolve) => setTimeout(resolve, 1000));
    counting = false;
    const seconds = (Date.now() - started_ms) / 1000;
    await gateway.close();
    closed = true;
    const writes = diffWrites(writes_before, await readWrites(database.url));
    const rows = [...counts].sort((a, b) => b[1] - a[1]);
    const total = rows.reduce((sum, [, n]) => sum + n, 0);
    const text = [
      '# PostgreSQL statements per sale',
      '',
      `Written by \`npm run bench:statements\` on ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC: ${answered} sandbox sales (CVV 568, a new order_id each, a thousand customers' cards as in \`npm run bench\`) from ${CONCURRENCY} clients at once in ${seconds.toFixed(1)} s, on PostgreSQL with the default settings; every statement sent meanwhile (the background pollers' too, and each sale's notification attempt to a closed port) divided by the sales answered.`,
      '',
      `**${(total / answered).toFixed(2)} statements per sale** (each a round trip).`,
      '',
      '| per sale | statement |',
      '|---:|---|',
      ...rows.map(([shape, n]) => `| ${(n / answered).toFixed(2)} | \`${shape.replace(/\|/g, '\\|')}\` |`),
      '',
      '## What PostgreSQL wrote for them',
      '',
      `Per sale, over the same run: WAL from pg_stat_wal (the whole server's; nothing else ran), row writes from pg_stat_user_tables. The warm-up's ${WARM_UP_SALES} sales are not counted.`,
      '',
      '| per sale | WAL records | full-page images | WAL bytes |',
      '|---|---:|---:|---:|',
      `| | ${(writes.wal_records / answered).toFixed(1)} | ${(writes.wal_fpi / answered).toFixed(2)} | ${Math.round(writes.wal_bytes / answered)} |`,
      '',
      '| table | rows inserted | rows updated | of them HOT (no index touched) | rows deleted |',
      '|---|---:|---:|---:|---:|',
      ...writes.tables.map(
        (t) =>
          `| ${t.name} | ${(t.inserted / answered).toFixed(2)} | ${(t.updated / answered).toFixed(2)} | ${(t.hot_updated / answered).toFixed(2)} | ${(t.deleted / answered).toFixed(2)} |`,
      ),
      '',
    ].join('\n');
    fs.writeFileSync(path.join(import.meta.dirname, 'STATEMENTS.md'), text);
    process.stdout.write(text);
  } finally {
    if (!closed) await gateway.close();
    await database.drop();
    fs.rmSync(data_dir, { recursive: true, force: true });
  }
}

interface TableWrites {
  name: string;
  inserted: number;
  updated: number;
  hot_updated: number;
  deleted: number;
}
interface Writes {
  wal_records: number;
  wal_fpi: number;
  wal_bytes: number;
  tables: TableWrites[];
}

async function readWrites(url: string): Promise<Writes> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const [wal] = (
      await client.query<{ r: number; f: number; b: number }>(
        'select wal_records::float8 as r, wal_fpi::float8 as f, wal_bytes::float8 as b from pg_stat_wal',
      )
    ).rows;
    const { rows } = await client.query<TableWrites>(
      'select relname as name, n_tup_ins::float8 as inserted, n_tup_upd::float8 as updated, n_tup_hot_upd::float8 as hot_updated, n_tup_del::float8 as deleted from pg_stat_user_tables',
    );
    if (!wal) throw new Error('pg_stat_wal answered no row');
    return { wal_records: wal.r, wal_fpi: wal.f, wal_bytes: wal.b, tables: rows };
  } finally {
    await client.end();
  }
}

/** What was written between two readings; tables with no writes left out, the most written first. */
function diffWrites(before: Writes, after: Writes): Writes {
  const earlier = new Map(before.tables.map((t) => [t.name, t]));
  const tables = after.tables
    .map((t) => {
      const b = earlier.get(t.name);
      return {
        name: t.name,
        inserted: t.inserted - (b?.inserted ?? 0),
        updated: t.updated - (b?.updated ?? 0),
        hot_updated: t.hot_updated - (b?.hot_updated ?? 0),
        deleted: t.deleted - (b?.deleted ?? 0),
      };
    })
    .filter((t) => t.inserted + t.updated + t.deleted > 0)
    .sort((a, b) => b.inserted + b.updated + b.deleted - (a.inserted + a.updated + a.deleted));
  return {
    wal_records: after.wal_records - before.wal_records,
    wal_fpi: after.wal_fpi - before.wal_fpi,
    wal_bytes: after.wal_bytes - before.wal_bytes,
    tables,
  };
}

await main();
