// `npm run bench:statements`: counts the PostgreSQL statements (each one round trip) a sandbox
// sale costs, by shape, and writes them to bench/STATEMENTS.md (issue 29, item 2). A gateway in
// this process on a fresh database, with the benchmark's settings (background pollers at their
// defaults, notifications to a closed port: each tried once and rescheduled), takes SALES sales
// from CONCURRENCY clients at once; every statement node-postgres sends meanwhile is counted,
// the background pollers' included, and divided by the sales answered. Counts, not times: they
// are the same on a busy machine, so a change to the sale's statements shows here exactly.
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
  });
  const gateway = await startGateway(config, { logger: createLogger({ level: 'warn' }), announce: () => undefined });
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
    answered = 0;
    counting = true;
    const started_ms = Date.now();
    await run(SALES);
    // The sales' notification attempts (each refused at once by the closed port).
    await new Promise((resolve) => setTimeout(resolve, 1000));
    counting = false;
    const seconds = (Date.now() - started_ms) / 1000;
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
    ].join('\n');
    fs.writeFileSync(path.join(import.meta.dirname, 'STATEMENTS.md'), text);
    process.stdout.write(text);
  } finally {
    await gateway.close();
    await database.drop();
    fs.rmSync(data_dir, { recursive: true, force: true });
  }
}

await main();
