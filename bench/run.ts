// `npm run bench`: measures, in one run on this machine, the ceiling (a bare Fastify endpoint)
// against the gateway's signed sale, an idempotent replay, find-order (when present) and
// notification lag, on the embedded store and on PostgreSQL. Figures go to bench/RESULTS.md.
// Server and load run in separate processes, pinned to different cores when possible.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { signBody } from '../src/domain/signing.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const PG_ADMIN_URL = process.env.PAYGATE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const MASTER_KEY = 'b'.repeat(64);
const CAN_PIN = os.cpus().length >= 2 && spawnSync('taskset', ['-c', '0', 'true']).status === 0;
const WORK = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-bench-'));

interface LoadResult {
  requests_per_s: number; total: number; latency_p50_ms: number; latency_p99_ms: number;
  errors: number; timeouts: number; non_2xx: number; notifications_expected: number; notifications_received: number;
}

interface Row {
  name: string; rps: number; p50: number; p99: number; rss_mb: number | null; ratio: number | null; note: string;
}

function pinned(core: number, command: string, args: string[], env: Record<string, string> = {}): ChildProcess {
  const full = CAN_PIN ? ['taskset', ['-c', String(core), command, ...args]] as const : [command, args] as const;
  return spawn(full[0], [...full[1]], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
}

function waitForLine(child: ChildProcess, pattern: RegExp, timeout_ms = 30_000): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${pattern}: ${seen.slice(-500)}`)), timeout_ms);
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      const match = pattern.exec(seen);
      if (match) {
        clearTimeout(timer);
        child.stdout?.off('data', onData);
        resolve(match);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => { seen += chunk.toString(); });
  });
}

async function waitHealthy(base: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (await fetch(`${base}/healthz`).then((r) => r.ok, () => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${base} never became healthy`);
}

function peakRssMb(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    // The pinned process is taskset's child when pinning; find the node process in the tree.
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /VmHWM:\s+(\d+) kB/.exec(status);
    return match ? Math.round(Number(match[1]) / 1024) : null;
  } catch {
    return null;
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  await new Promise((resolve) => { child.once('exit', resolve); setTimeout(resolve, 5000); });
}

async function runLoad(plan: Record<string, unknown>): Promise<LoadResult> {
  const plan_file = path.join(WORK, `plan-${randomBytes(4).toString('hex')}.json`);
  fs.writeFileSync(plan_file, JSON.stringify(plan));
  const child = pinned(1, process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench/load.ts'), plan_file]);
  let out = '';
  let err = '';
  child.stdout?.on('data', (c: Buffer) => { out += c.toString(); });
  child.stderr?.on('data', (c: Buffer) => { err += c.toString(); });
  const code = await new Promise<number>((resolve) => child.once('exit', (c) => resolve(c ?? 1)));
  if (code !== 0) throw new Error(`load failed: ${err}`);
  return JSON.parse(out.trim().split('\n').pop()!) as LoadResult;
}

interface Merchant { merchant_id: string; secret: string; application_key: string; frontend: string }

function saleBodies(merchant: Merchant, count: number, notification_url: string): string[] {
  const timestamp = Math.floor(Date.now() / 1000);
  const bodies: string[] = [];
  const run = randomBytes(4).toString('hex');
  for (let i = 0; i < count; i += 1) {
    const body: Record<string, unknown> = {
      merchant_id: merchant.merchant_id, application_key: merchant.application_key, transaction_type: 'sale',
      order_id: `bench-${run}-${i}`, amount: 1999, currency: 'USD', card_number: '4111111111111111', card_exp: '12/2035',
      cvv: '568', pin: `cust-${i % 1000}`, dob: '1990-04-12', email: 'jane@example.com', phone: 441234567890,
      requester_ip: '203.0.113.7', address: '1 Main Street', city: 'London', country: 'GB', first_name: 'Jane',
      last_name: 'Doe', zip: 'SW1A 1AA', return_url: 'https://merchant.example/return', notification_url,
      timestamp, version: '1.2',
    };
    body.signature = signBody(body, merchant.secret);
    bodies.push(JSON.stringify(body));
  }
  return bodies;
}

function writeBodies(bodies: string[]): string {
  const file = path.join(WORK, `bodies-${randomBytes(4).toString('hex')}.json`);
  fs.writeFileSync(file, JSON.stringify(bodies));
  return file;
}

interface GatewayProcess { child: ChildProcess; url: string; merchant: Merchant; data_dir: string; database_url: string | null; drop(): Promise<void> }

async function startGateway(kind: 'sqlite' | 'postgres', port: number): Promise<GatewayProcess> {
  const data_dir = fs.mkdtempSync(path.join(WORK, `${kind}-`));
  let database_url: string | null = null;
  let db_name = '';
  if (kind === 'postgres') {
    db_name = `paygate_bench_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
    await admin.connect();
    await admin.query(`create database ${db_name}`);
    await admin.end();
    const url = new URL(PG_ADMIN_URL);
    url.pathname = `/${db_name}`;
    database_url = url.toString();
  }
  const env: Record<string, string> = {
    PAYGATE_DATA_DIR: data_dir, PORT: String(port), PAYGATE_LOG_LEVEL: 'warn',
    ...(database_url ? { DATABASE_URL: database_url, PAYGATE_MASTER_KEY: MASTER_KEY } : {}),
  };
  const created = spawnSync(process.execPath, ['dist/cli.js', 'merchant', 'create', '--merchant-id', 'bench', '--secret', 'bench-secret-0123'],
    { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8' });
  if (created.status !== 0) throw new Error(`merchant create failed: ${created.stderr}`);
  const merchant = JSON.parse(created.stdout) as Merchant;
  const child = pinned(0, process.execPath, ['dist/cli.js', 'start'], env);
  const url = `http://127.0.0.1:${port}`;
  await waitHealthy(url);
  return {
    child, url, merchant, data_dir, database_url,
    async drop() {
      await stop(child);
      if (db_name) {
        const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
        await admin.connect();
        await admin.query(`drop database if exists ${db_name} with (force)`);
        await admin.end();
      }
    },
  };
}

function nodePid(child: ChildProcess): number | undefined {
  if (!CAN_PIN) return child.pid;
  // taskset execs the command in place, so the pid is the node process itself.
  return child.pid;
}

function percentile(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function main(): Promise<void> {
  const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('build failed');
  const rows: Row[] = [];
  const notes: string[] = [];
  const base_port = 21_000 + Math.floor(Math.random() * 10_000);

  // 1. Ceiling.
  const ceiling = pinned(0, process.execPath, ['--import', 'tsx', 'bench/ceiling-server.ts', String(base_port)]);
  await waitForLine(ceiling, /listening (\d+)/);
  const probe_merchant: Merchant = { merchant_id: 'bench', secret: 'bench-secret-0123', application_key: 'x', frontend: 'x' };
  const ceiling_bodies = writeBodies(saleBodies(probe_merchant, 2000, 'http://127.0.0.1:1/notify'));
  await runLoad({ url: `http://127.0.0.1:${base_port}`, path: '/api/process', bodies_file: ceiling_bodies, connections: CONNECTIONS, duration_s: 2 });
  const ceiling_result = await runLoad({ url: `http://127.0.0.1:${base_port}`, path: '/api/process', bodies_file: ceiling_bodies, connections: CONNECTIONS, duration_s: DURATION_S });
  rows.push({ name: 'ceiling: bare Fastify, same JSON', rps: ceiling_result.requests_per_s, p50: ceiling_result.latency_p50_ms, p99: ceiling_result.latency_p99_ms, rss_mb: peakRssMb(nodePid(ceiling)), ratio: 1, note: '' });
  await stop(ceiling);
  const ceiling_rps = ceiling_result.requests_per_s;
  const body_count = Math.max(5000, Math.ceil(ceiling_rps * DURATION_S * 0.8));

  for (const kind of ['sqlite', 'postgres'] as const) {
    const gateway = await startGateway(kind, base_port + (kind === 'sqlite' ? 1 : 2));
    try {
      const silent = 'http://127.0.0.1:9/notify'; // discard port: deliveries fail fast, off the measured path
      const sale = await runLoad({ url: gateway.url, path: '/api/process', bodies_file: writeBodies(saleBodies(gateway.merchant, body_count, silent)), connections: CONNECTIONS, duration_s: DURATION_S });
      const target = kind === 'sqlite' ? 0.25 : 0.15;
      rows.push({
        name: `sale on ${kind} (CVV 568, new order_id each)`, rps: sale.requests_per_s, p50: sale.latency_p50_ms, p99: sale.latency_p99_ms,
        rss_mb: peakRssMb(nodePid(gateway.child)), ratio: sale.requests_per_s / ceiling_rps,
        note: `target ≥ ${target * 100}% of ceiling${kind === 'sqlite' ? ', p99 < 15 ms' : ''}; errors ${sale.errors}, non-2xx ${sale.non_2xx}`,
      });
      if (kind === 'sqlite') {
        const replay_body = saleBodies(gateway.merchant, 1, silent);
        await fetch(`${gateway.url}/api/process`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: replay_body[0] });
        const replay = await runLoad({ url: gateway.url, path: '/api/process', bodies_file: writeBodies(replay_body), connections: CONNECTIONS, duration_s: DURATION_S });
        rows.push({ name: 'idempotent replay on sqlite', rps: replay.requests_per_s, p50: replay.latency_p50_ms, p99: replay.latency_p99_ms, rss_mb: peakRssMb(nodePid(gateway.child)), ratio: replay.requests_per_s / ceiling_rps, note: '' });

        const rate = Math.max(1, Math.floor(sale.requests_per_s * 0.8));
        const receiver_port = base_port + 5;
        const receipts_file = path.join(WORK, 'receipts.json');
        const lag_bodies = saleBodies(gateway.merchant, Math.ceil(rate * DURATION_S * 1.2), `http://127.0.0.1:${receiver_port}/notify`);
        const lag = await runLoad({ url: gateway.url, path: '/api/process', bodies_file: writeBodies(lag_bodies), connections: CONNECTIONS, duration_s: DURATION_S, overall_rate: rate, receiver_port, receipts_file });
        const receipts = JSON.parse(fs.readFileSync(receipts_file, 'utf8')) as Record<string, number>;
        await stop(gateway.child);
        const db = new BetterSqlite3(path.join(gateway.data_dir, 'paygate.sqlite'), { readonly: true });
        const committed = db.prepare(`select trace_id, updated_at_ms from transactions where order_id like 'bench-%' and status = 'approved'`).all() as { trace_id: number; updated_at_ms: number }[];
        db.close();
        const lags = committed.filter((r) => receipts[r.trace_id] !== undefined).map((r) => receipts[r.trace_id]! - r.updated_at_ms);
        rows.push({
          name: `notification lag at 80% of max sale rate (${rate}/s)`, rps: lag.requests_per_s, p50: percentile(lags, 50) ?? NaN, p99: percentile(lags, 99) ?? NaN,
          rss_mb: null, ratio: null,
          note: `lag = receipt - commit; target p99 < 100 ms; ${lag.notifications_received}/${lag.notifications_expected} answered sales notified within the run`,
        });
      }
    } finally {
      await gateway.drop();
    }
  }
  notes.push('find-order: not measured yet (the hosted cashier and find-order are not in this build).');
  writeResults(rows, notes);
  fs.rmSync(WORK, { recursive: true, force: true });
}

function writeResults(rows: Row[], notes: string[]): void {
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const lines = [
    '# Benchmark results',
    '',
    `Written by \`npm run bench\` on ${new Date().toISOString().slice(0, 10)}.`,
    '',
    `- Machine: ${cpu}, ${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.platform()} ${os.release()}`,
    `- Node ${process.version}; ${CONNECTIONS} connections; ${DURATION_S} s per run; server and load ${CAN_PIN ? 'pinned to cores 0 and 1 (taskset)' : 'not pinned'}`,
    '- Every acknowledged sale is committed with SQLite synchronous=FULL (or PostgreSQL defaults) before its answer.',
    '',
    '| run | requests/s | p50 ms | p99 ms | peak RSS MB | ratio to ceiling | notes |',
    '|---|---:|---:|---:|---:|---:|---|',
    ...rows.map((r) => `| ${r.name} | ${Math.round(r.rps)} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${r.rss_mb ?? ''} | ${r.ratio === null ? '' : `${(r.ratio * 100).toFixed(1)}%`} | ${r.note} |`),
    '',
    ...notes.map((n) => `- ${n}`),
    '',
  ];
  fs.writeFileSync(path.join(ROOT, 'bench/RESULTS.md'), lines.join('\n'));
  process.stdout.write(lines.join('\n'));
}

function fmt(value: number): string {
  return Number.isFinite(value) ? value.toFixed(1) : '';
}

await main();
