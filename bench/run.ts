// `npm run bench`: measures, in one run on this machine, the ceiling (a bare Fastify endpoint
// answering the same JSON) against the gateway: signed sales, an idempotent replay, find-order
// and notification lag (at 50% and 80% of the maximum rate of sales whose notifications are all
// delivered, measured just before) on the embedded store; the same sales with group commit off
// (PAYGATE_GROUP_COMMIT=off, the before/after comparison); sales on PostgreSQL with 1, 2 and 4
// processes (PAYGATE_WORKERS). Figures and the targets of issue 7 go to bench/RESULTS.md. Then
// issue 29's live path (live.ts: sales through the checkout connector to a fake processor with
// 100 ms of latency, one gateway's processor hanging) and memory soak (soak-run.ts, soak.ts),
// each in a section of its own (sections.ts). Server and load run in separate processes, pinned
// to different cores when possible.
//
// Environment: BENCH_DURATION_S (10), BENCH_CONNECTIONS (50), BENCH_ORDERS (1000 checkout
// orders for find-order), PAYGATE_TEST_DATABASE_URL (PostgreSQL server; its runs are skipped
// when it is unreachable), BENCH_ONLY (a comma list of sale, replay, find, sqlite (all three),
// lag, off, postgres, live, soak: runs only those parts (the ceiling too when one of the first
// seven is among them) and prints the figures; RESULTS.md is left alone but for the sections of
// live and soak, which are rewritten in place), BENCH_LIVE_CONNECTIONS (500),
// BENCH_LIVE_LATENCY_MS (100: the fake processor's), BENCH_LIVE_TIMEOUT_MS (2000: the gateway's
// PAYGATE_PROCESSOR_TIMEOUT_MS in the live rows), BENCH_SOAK_S (900), BENCH_SOAK_WARMUP_S (300),
// BENCH_CPU_PROF_DIR (a V8 CPU profile of each of the sale, replay and find-order runs on SQLite,
// of the first sale run on PostgreSQL and of live.ts's saturated run is written there:
// cpu-profile.ts), BENCH_SKIP_BUILD=1 (measures dist/ as it is), BENCH_GATEWAY_DIST (the gateway
// build to measure instead of dist/: compare.ts), BENCH_POSTGRES_ROWS=pinned (of the PostgreSQL
// sale rows only the first, one process pinned, and the floor: what item 2 measures, for compare.ts).
import { type ChildProcess, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import {
  BENCH_ADMIN_TOKEN,
  CAN_PIN,
  CLOCK_TICKS,
  CUSTOMER,
  cpuProfile,
  cpuSeconds,
  fmt,
  GATEWAY_CLI,
  GATEWAY_NODE_FLAGS,
  type LoadResult,
  type Merchant,
  peakRssMb,
  percentile,
  type Placement,
  placed,
  processTree,
  ROOT,
  type Row,
  runLoad,
  saleBodies,
  signed,
  statusNote,
  stop,
  type Target,
  waitForLine,
  waitHealthy,
  watchEventLoop,
  WORK,
  writeBodies,
} from './harness.js';
import { liveSection } from './live.js';
import { type SectionName, withSection } from './sections.js';
import { soakSection } from './soak-run.js';
import { ADMIN_DATABASE_URL, createTestDatabase, postgresAvailable, type TestDatabase } from '../test/support/postgres.js';
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const ORDERS = Number(process.env.BENCH_ORDERS ?? 1000);
const MASTER_KEY = 'b'.repeat(64);
const ONLY = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',').map((part) => part.trim())) : null;
/** BENCH_ONLY's parts; `sqlite` is sale, replay and find together. */
const runs = (part: 'sale' | 'replay' | 'find' | 'sqlite' | 'lag' | 'off' | 'postgres' | 'live' | 'soak') =>
  ONLY === null || ONLY.has(part) || (['sale', 'replay', 'find'].includes(part) && ONLY.has('sqlite'));
/** The live rows (bench/live.ts): connections, the fake processor's latency, the gateway's processor time-out. */
const LIVE_CONNECTIONS = Number(process.env.BENCH_LIVE_CONNECTIONS ?? 500);
const LIVE_LATENCY_MS = Number(process.env.BENCH_LIVE_LATENCY_MS ?? 100);
const LIVE_TIMEOUT_MS = Number(process.env.BENCH_LIVE_TIMEOUT_MS ?? 2_000);
/**
 * How long the fake processors keep an idle connection (advertised in Keep-Alive): 60 s, the
 * idle time-out of common load balancers in front of processors' APIs. Below about 2 s undici
 * (the gateway's outbound client) opens a connection for every request instead.
 */
const LIVE_KEEP_ALIVE_MS = Number(process.env.BENCH_LIVE_KEEP_ALIVE_MS ?? 60_000);
/**
 * The memory soak (bench/soak.ts): its length and the warm-up its growth is measured after. Ten
 * minutes measured after five of warm-up: under the soak's mix a gateway's RSS settles over its
 * first seven minutes or so (V8 compiling the paths it meets and sizing its heap; a 20-minute soak
 * in bench/RESULTS.md, the thirty-ninth session), and a shorter warm-up reads the end of that as growth.
 */
const SOAK_S = Number(process.env.BENCH_SOAK_S ?? 900);
const SOAK_WARM_UP_S = Number(process.env.BENCH_SOAK_WARMUP_S ?? 300);
/** Everything below this line in RESULTS.md is written by hand and kept by the next run. */
const NOTES_MARKER = '<!-- Written by hand below this line; npm run bench keeps it. -->';

/**
 * CPU seconds of every PostgreSQL process on this machine (by process name), ended backends
 * included (the postmaster's children's time): the server's share of a PostgreSQL run, when the
 * server is local. null when no such process is visible.
 */
function postgresCpuSeconds(): number | null {
  let ticks = 0;
  let seen = false;
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (!stat.includes('(postgres)')) continue;
      const fields = stat.replace(/^.*\) /, '').split(' ');
      // utime, stime, cutime, cstime (fields 14 to 17 of stat): ended backends count in the postmaster's cutime.
      ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
      seen = true;
    } catch {
      // gone
    }
  }
  return seen ? ticks / CLOCK_TICKS : null;
}

/** The next transaction id PostgreSQL will hand out: read-only transactions take none, so its growth counts write transactions (commits). */
async function nextTransactionId(database_url: string): Promise<number> {
  const client = new pg.Client({ connectionString: database_url });
  await client.connect();
  try {
    const result = await client.query<{ xmax: string }>('select pg_snapshot_xmax(pg_current_snapshot())::text as xmax');
    return Number(result.rows[0]!.xmax);
  } finally {
    await client.end();
  }
}

/**
 * The two transactions item 2's allowance is measured against, each run by pgbench with as many
 * clients as the sale runs' connections: `tpcb`, pgbench's own transaction (what it runs unless
 * given a script: TPC-B-like, three UPDATEs, a SELECT and an INSERT, one commit) on a database of
 * scale = clients, as pgbench's documentation asks (fewer branches than clients would measure
 * their row locks); `insert`, the smallest write there is (one INSERT of one row of two columns
 * under one index), the strictest reading.
 */
type PgbenchWorkload = 'tpcb' | 'insert';

/**
 * What PostgreSQL's own processes spend on one commit of `workload`, on a database of its own:
 * the unit issue 29's item 2 measures a sale's PostgreSQL CPU against. Only the timed run's CPU
 * counts, not pgbench's initialisation. null when pgbench is not installed or the server is not local.
 */
async function pgbenchCpuMsPerCommit(workload: PgbenchWorkload): Promise<{ cpu_ms: number; commits: number } | null> {
  if (spawnSync('pgbench', ['--version']).status !== 0) return null;
  const database = await createTestDatabase();
  const url = new URL(database.url);
  try {
    let workload_args: string[];
    if (workload === 'insert') {
      const setup = new pg.Client({ connectionString: url.toString() });
      await setup.connect();
      await setup.query('create table commit_probe (id bigserial primary key, at_ms bigint not null)');
      await setup.end();
      const script = path.join(WORK, 'commit-probe.sql');
      fs.writeFileSync(script, 'insert into commit_probe (at_ms) values (1);\n');
      workload_args = ['-n', '-f', script];
    } else {
      // Server-side generation (G) of scale × 100 000 accounts: some seconds, not counted.
      const init = spawnSync('pgbench', ['-i', '-q', '-I', 'dtGvp', '-s', String(CONNECTIONS), url.toString()], { encoding: 'utf8' });
      if (init.status !== 0) return null;
      // -n: the initialisation vacuumed already; a vacuum in the timed run would count.
      workload_args = ['-n'];
    }
    const cpu_before = postgresCpuSeconds();
    const run = spawnSync(
      CAN_PIN ? 'taskset' : 'pgbench',
      [
        ...(CAN_PIN ? ['-c', '1', 'pgbench'] : []),
        ...workload_args,
        '-c',
        String(CONNECTIONS),
        '-j',
        '1',
        '-T',
        String(DURATION_S),
        url.toString(),
      ],
      { encoding: 'utf8' },
    );
    const cpu_after = postgresCpuSeconds();
    const commits = Number(/number of transactions actually processed: (\d+)/.exec(run.stdout)?.[1] ?? 0);
    if (run.status !== 0 || commits === 0 || cpu_before === null || cpu_after === null) return null;
    return { cpu_ms: ((cpu_after - cpu_before) * 1000) / commits, commits };
  } finally {
    await database.drop().catch(() => undefined);
  }
}

/** Where Debian's PostgreSQL puts its Unix socket. */
const PG_SOCKET_DIR = '/var/run/postgresql';

function isLocalServer(url: string): boolean {
  const host = new URL(url).hostname;
  return host === '127.0.0.1' || host === 'localhost' || host === '[::1]';
}

interface GatewayProcess {
  child: ChildProcess;
  url: string;
  merchant: Merchant;
  data_dir: string;
  database_url: string | null;
  drop(): Promise<void>;
}

async function startGateway(
  kind: 'sqlite' | 'postgres',
  port: number,
  options: { env?: Record<string, string>; where?: Placement; unix_socket?: string } = {},
): Promise<GatewayProcess> {
  const data_dir = fs.mkdtempSync(path.join(WORK, `${kind}-`));
  let database_url: string | null = null;
  let database: TestDatabase | null = null;
  if (kind === 'postgres') {
    database = await createTestDatabase();
    const url = new URL(database.url);
    // Over the server's Unix socket instead of TCP (a local server): node-postgres takes the directory as the host.
    if (options.unix_socket) url.searchParams.set('host', options.unix_socket);
    database_url = url.toString();
  }
  const env: Record<string, string> = {
    PAYGATE_DATA_DIR: data_dir,
    PORT: String(port),
    PAYGATE_LOG_LEVEL: 'warn',
    // The load comes from one address and one merchant: the rate limits would measure themselves.
    PAYGATE_RATE_LIMIT_ADDRESS_PER_MINUTE: '0',
    PAYGATE_RATE_LIMIT_MERCHANT_PER_MINUTE: '0',
    // For /metrics: the event-loop delay load shedding reads, sampled during each measured run.
    PAYGATE_ADMIN_TOKEN: BENCH_ADMIN_TOKEN,
    ...(database_url ? { DATABASE_URL: database_url, PAYGATE_MASTER_KEY: MASTER_KEY } : {}),
    ...options.env,
  };
  const created = spawnSync(
    process.execPath,
    [GATEWAY_CLI, 'merchant', 'create', '--merchant-id', 'bench', '--secret', 'bench-secret-0123'],
    { cwd: ROOT, env: { ...process.env, ...env, PAYGATE_WORKERS: '1' }, encoding: 'utf8' },
  );
  if (created.status !== 0) throw new Error(`merchant create failed: ${created.stderr}`);
  const merchant = JSON.parse(created.stdout) as Merchant;
  const node_flags = process.env.BENCH_NODE_FLAGS?.split(' ').filter(Boolean) ?? [];
  const child = placed(options.where ?? 0, process.execPath, [...GATEWAY_NODE_FLAGS, ...node_flags, GATEWAY_CLI, 'start'], env);
  let output = '';
  child.stdout?.on('data', (c: Buffer) => {
    output = (output + c.toString()).slice(-4000);
  });
  child.stderr?.on('data', (c: Buffer) => {
    output = (output + c.toString()).slice(-4000);
  });
  const url = `http://127.0.0.1:${port}`;
  await waitHealthy(url).catch((error: unknown) => {
    throw new Error(`${String(error)}: ${output}`);
  });
  const workers = Number(env.PAYGATE_WORKERS ?? 1);
  // Every worker listening: the primary has forked them all and each answers.
  const deadline = Date.now() + 30_000;
  while (workers > 1 && processTree(child.pid).length < workers + 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  await new Promise((r) => setTimeout(r, workers > 1 ? 1000 : 200));
  return {
    child,
    url,
    merchant,
    data_dir,
    database_url,
    async drop() {
      await stop(child);
      await database?.drop();
    },
  };
}

/**
 * Runs a load against a gateway and measures its CPU use, memory and event-loop delay too. With
 * BENCH_CPU_PROF_DIR, `profile_as` names the V8 CPU profile of exactly this run
 * (`<profile_as>.cpuprofile`, by cpu-profile.ts on the load's core).
 */
async function measure(
  gateway: GatewayProcess,
  plan: Record<string, unknown>,
  profile_as?: string,
): Promise<{ load: LoadResult; cpu_ms: number; rss_mb: number | null; loop_delay_max_ms: number | null }> {
  const profiled = profile_as ? await cpuProfile(gateway.child.pid, profile_as) : null;
  const cpu_before = cpuSeconds(gateway.child.pid);
  const running = runLoad(plan);
  const loop_delay_max_ms = await watchEventLoop(gateway.url, running);
  const load = await running;
  const cpu_ms = ((cpuSeconds(gateway.child.pid) - cpu_before) * 1000) / Math.max(1, load.total);
  await profiled?.();
  return { load, cpu_ms, rss_mb: peakRssMb(gateway.child.pid), loop_delay_max_ms };
}

/** "; event-loop delay at most 3.2 ms" for a row's note (what load shedding compares with its 200 ms). */
function loopNote(measured: { loop_delay_max_ms: number | null }): string {
  return measured.loop_delay_max_ms === null ? '' : `; event-loop delay at most ${measured.loop_delay_max_ms.toFixed(1)} ms`;
}

/** The merchant of the ceiling's and the floor's bodies: they check no key, the floor the signature. */
const PROBE_MERCHANT: Merchant = { merchant_id: 'bench', secret: 'bench-secret-0123', application_key: 'x', frontend: 'x' };

/**
 * The floor (bench/floor-server.ts) under the ceiling's load: a sale with nothing but what no
 * durable signed sale can skip, to tell which CPU targets the gateway misses and which nobody could
 * meet here. Its bodies are new sales, enough for its rate; CPU counts its process alone.
 */
async function measureFloor(port: number, merchant: Merchant, notification_url: string, ceiling_rps: number, on_postgres = false) {
  const database = on_postgres ? await createTestDatabase() : null;
  const database_url = database?.url ?? null;
  const server = placed(0, process.execPath, ['--import', 'tsx', 'bench/floor-server.ts', String(port)], {
    FLOOR_SECRET: merchant.secret,
    ...(database_url ? { FLOOR_DATABASE_URL: database_url } : {}),
  });
  try {
    await waitForLine(server, /listening (\d+)/);
    const floor_plan = { url: `http://127.0.0.1:${port}`, path: '/api/process', connections: CONNECTIONS };
    await runLoad({ ...floor_plan, bodies_file: writeBodies(saleBodies(merchant, 5_000, notification_url)), duration_s: WARM_UP_S });
    const count = Math.min(150_000, Math.max(5_000, Math.ceil(ceiling_rps * 0.4 * DURATION_S * 1.3)));
    const bodies_file = writeBodies(saleBodies(merchant, count, notification_url));
    await new Promise((resolve) => setTimeout(resolve, 500)); // the warm-up's last attempts recorded
    const xid_before = database_url ? await nextTransactionId(database_url) : 0;
    const server_cpu_before = database_url ? postgresCpuSeconds() : null;
    const cpu_before = cpuSeconds(server.pid);
    const load = await runLoad({ ...floor_plan, bodies_file, duration_s: DURATION_S });
    const cpu_s = cpuSeconds(server.pid) - cpu_before;
    const server_cpu_after = database_url ? postgresCpuSeconds() : null;
    const per = (value: number) => value / Math.max(1, load.total);
    const approved = load.statuses['0'] ?? 0;
    return {
      load,
      approved_per_s: approved / DURATION_S,
      cpu_ms: per(cpu_s * 1000),
      rss_mb: peakRssMb(server.pid),
      server_cpu_ms: server_cpu_before !== null && server_cpu_after !== null ? per((server_cpu_after - server_cpu_before) * 1000) : null,
      commits_per_sale: database_url ? per((await nextTransactionId(database_url)) - xid_before) : null,
    };
  } finally {
    await stop(server);
    await database?.drop();
  }
}

/** Seconds of sales sent to a fresh gateway before a measured sale run, and not counted (as the ceiling's 2 s). */
const WARM_UP_S = 3;

/**
 * Warms a fresh gateway up like the ceiling (its first seconds run code V8 has not compiled yet:
 * measured, a cold 10 s sale run spends about a third of its CPU in the optimising compiler's
 * threads), with sales of their own (new order_ids), then waits until their notification
 * attempts are done (`quiet`), so that neither counts against the measured run.
 */
async function warmUp(
  plan: Record<string, unknown>,
  merchant: Merchant,
  notification_url: string,
  quiet: () => Promise<void>,
): Promise<void> {
  await runLoad({ ...plan, bodies_file: writeBodies(saleBodies(merchant, 5_000, notification_url)), duration_s: WARM_UP_S });
  await quiet();
}

/** waitForNoDueNotifications on the gateway's own store, SQLite or PostgreSQL. */
function quietGateway(gateway: GatewayProcess): Promise<void> {
  return gateway.database_url === null
    ? waitForNoDueNotifications(path.join(gateway.data_dir, 'paygate.sqlite'), 120_000)
    : waitForNoDuePostgresNotifications(gateway.database_url, 120_000);
}

async function waitForNoDuePostgresNotifications(database_url: string, timeout_ms: number): Promise<void> {
  const client = new pg.Client({ connectionString: database_url });
  await client.connect();
  try {
    const deadline_ms = Date.now() + timeout_ms;
    for (;;) {
      const due = await client.query<{ n: string }>(
        `select count(*) as n from notifications where state = 'pending' and next_attempt_at_ms <= $1`,
        [Date.now()],
      );
      if (Number(due.rows[0]!.n) === 0) return;
      if (Date.now() >= deadline_ms) throw new Error(`notifications still due after ${timeout_ms} ms`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  } finally {
    await client.end();
  }
}

/** Waits (bounded) until no pending notification is due now: a backlog would count against the next run. */
async function waitForNoDueNotifications(file: string, timeout_ms: number): Promise<void> {
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    const due = db.prepare(`select count(*) as n from notifications where state = 'pending' and next_attempt_at_ms <= ?`);
    const deadline_ms = Date.now() + timeout_ms;
    while ((due.get(Date.now()) as { n: number }).n > 0) {
      if (Date.now() >= deadline_ms) throw new Error(`notifications still due after ${timeout_ms} ms`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  } finally {
    db.close();
  }
}

/** A customer without JavaScript: logs in with the redirect_url and pays the checkout by card (CVV 568). */
async function payCheckout(gateway_url: string, redirect_url: string): Promise<void> {
  let cookie = '';
  const request = async (url: string, init: RequestInit = {}) => {
    const response = await fetch(url.startsWith('http') ? url : `${gateway_url}${url}`, {
      ...init,
      headers: { ...(init.headers ?? {}), ...(cookie ? { cookie } : {}) },
      redirect: 'manual',
    });
    const set = response.headers.get('set-cookie');
    if (set) cookie = set.split(';')[0]!;
    return { status: response.status, location: response.headers.get('location'), text: await response.text() };
  };
  let page = await request(redirect_url);
  for (let i = 0; i < 5 && page.status === 303 && page.location; i += 1) page = await request(page.location);
  const csrf = /name="csrf" value="([^"]+)"/.exec(page.text)?.[1];
  if (!csrf) throw new Error(`no payment form: ${page.text.slice(0, 300)}`);
  const paid = await request('/cashier/pay', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrf, method: 'card', card_number: '4111111111111111', card_exp: '12/35', cvv: '568' }).toString(),
  });
  if (paid.status !== 303) throw new Error(`payment not accepted: ${paid.status} ${paid.text.slice(0, 300)}`);
}

/** Opens `count` checkout orders (init-checkout) and pays every other one; returns their order_ids. */
async function openOrders(gateway: GatewayProcess, count: number): Promise<string[]> {
  const run = randomBytes(4).toString('hex');
  const order_ids = Array.from({ length: count }, (_, i) => `order-${run}-${i}`);
  let next = 0;
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (next < count) {
        const i = next;
        next += 1;
        const answer = await fetch(`${gateway.url}/api/init-checkout`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: signed(
            {
              merchant_id: gateway.merchant.merchant_id,
              frontend: gateway.merchant.frontend,
              order_id: order_ids[i],
              amount: 1999,
              currency: 'USD',
              pin: `cust-${run}-${i}`,
              payment_method: 'card',
              ...CUSTOMER,
              return_url: 'https://merchant.example/return',
              notification_url: 'http://127.0.0.1:9/notify',
              timestamp: Math.floor(Date.now() / 1000),
              version: '1.1',
            },
            gateway.merchant.secret,
          ),
        }).then((r) => r.json() as Promise<{ status: number; redirect_url: string; description: string }>);
        if (answer.status !== 0) throw new Error(`init-checkout failed: ${JSON.stringify(answer)}`);
        if (i % 2 === 0) await payCheckout(gateway.url, answer.redirect_url);
      }
    }),
  );
  return order_ids;
}

function findOrderBodies(merchant: Merchant, order_ids: readonly string[]): string[] {
  const timestamp = Math.floor(Date.now() / 1000);
  return order_ids.map((order_id) =>
    signed({ merchant_id: merchant.merchant_id, frontend: merchant.frontend, order_id, timestamp, version: '1.1' }, merchant.secret),
  );
}

async function main(): Promise<void> {
  // BENCH_SKIP_BUILD=1 measures dist/ as it is (an instrumented build, say).
  if (process.env.BENCH_SKIP_BUILD !== '1') {
    const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
    if (build.status !== 0) throw new Error('build failed');
  }
  const rows: Row[] = [];
  const targets: Target[] = [];
  const notes: string[] = [];
  const base_port = 21_000 + Math.floor(Math.random() * 10_000);
  const started_at = new Date();
  const load_before = os.loadavg()[0]!;
  const plan = (gateway: GatewayProcess, bodies_file: string, extra: Record<string, unknown> = {}) => ({
    url: gateway.url,
    path: '/api/process',
    bodies_file,
    connections: CONNECTIONS,
    duration_s: DURATION_S,
    ...extra,
  });
  const silent = 'http://127.0.0.1:9/notify'; // discard port: each notification attempt fails at once and is retried in 5 min

  // 1. Ceiling, for the rows of issue 7 (the live and soak parts need none).
  const issue_7 = (['sale', 'replay', 'find', 'lag', 'off', 'postgres'] as const).some((part) => runs(part));
  let ceiling_rps = Number.NaN;
  let floor: Awaited<ReturnType<typeof measureFloor>> | null = null;
  if (issue_7) {
    const ceiling = placed(0, process.execPath, ['--import', 'tsx', 'bench/ceiling-server.ts', String(base_port)]);
    await waitForLine(ceiling, /listening (\d+)/);
    const ceiling_bodies = writeBodies(saleBodies(PROBE_MERCHANT, 2000, silent));
    const ceiling_plan = {
      url: `http://127.0.0.1:${base_port}`,
      path: '/api/process',
      bodies_file: ceiling_bodies,
      connections: CONNECTIONS,
    };
    await runLoad({ ...ceiling_plan, duration_s: 2 });
    const ceiling_cpu_before = cpuSeconds(ceiling.pid);
    const ceiling_result = await runLoad({ ...ceiling_plan, duration_s: DURATION_S });
    rows.push({
      name: 'ceiling: bare Fastify, same JSON',
      rps: ceiling_result.requests_per_s,
      p50: ceiling_result.latency_p50_ms,
      p99: ceiling_result.latency_p99_ms,
      rss_mb: peakRssMb(ceiling.pid),
      cpu_ms: ((cpuSeconds(ceiling.pid) - ceiling_cpu_before) * 1000) / Math.max(1, ceiling_result.total),
      ratio: 1,
      note: '',
    });
    await stop(ceiling);
    ceiling_rps = ceiling_result.requests_per_s;
    if (runs('sale')) floor = await measureFloor(base_port + 50, PROBE_MERCHANT, silent, ceiling_rps);
  }
  const ratio = (rps: number) => rps / ceiling_rps;
  const pct = (value: number) => `${(value * 100).toFixed(1)}%`;
  if (floor !== null) {
    rows.push({
      name: 'floor: the least a durable signed sale costs (bench/floor-server.ts: schema, signature, sealed PAN, one SQLite row and its notification committed in groups, signed answer)',
      rps: floor.approved_per_s,
      p50: floor.load.latency_p50_ms,
      p99: floor.load.latency_p99_ms,
      rss_mb: floor.rss_mb,
      cpu_ms: floor.cpu_ms,
      ratio: ratio(floor.approved_per_s),
      note: `requests/s counts new sales committed (status 0) only; ${statusNote(floor.load, ['0'])}`,
    });
  }
  // Enough distinct orders that none is sent twice in a run.
  const sale_count = (rate: number) => Math.max(5_000, Math.ceil(rate * DURATION_S * 1.3));
  let sale_capacity = ceiling_rps * 0.5;

  // 2. The embedded store: sale, replay, find-order, notification lag (group commit on, the default).
  if (runs('sale') || runs('replay') || runs('find')) {
    const gateway = await startGateway('sqlite', base_port + 1);
    try {
      // A sale run leaves thousands of notifications not yet tried; their first attempts (each
      // failing at once at the closed port) would run during the next run and count against it.
      // Measured: replay 0.41–0.46 CPU ms/req right after the sale run, 0.26–0.30 alone.
      const quiet = () => quietGateway(gateway);
      if (runs('sale')) {
        await warmUp(plan(gateway, ''), gateway.merchant, silent, quiet);
        const sale = await measure(
          gateway,
          plan(gateway, writeBodies(saleBodies(gateway.merchant, sale_count(sale_capacity), silent))),
          'sale-sqlite',
        );
        sale_capacity = sale.load.requests_per_s;
        rows.push({
          name: 'sale on SQLite (CVV 568, new order_id each; group commit on)',
          rps: sale.load.requests_per_s,
          p50: sale.load.latency_p50_ms,
          p99: sale.load.latency_p99_ms,
          rss_mb: sale.rss_mb,
          cpu_ms: sale.cpu_ms,
          ratio: ratio(sale.load.requests_per_s),
          note: `${statusNote(sale.load, ['0'])}${loopNote(sale)}`,
        });
        targets.push({
          target: "SQLite sale ≥ 25% of the ceiling's requests/s",
          measured: pct(ratio(sale.load.requests_per_s)),
          met: ratio(sale.load.requests_per_s) >= 0.25,
        });
        targets.push({
          target: "SQLite sale ≥ 20% of the ceiling's requests/s (issue 29, item 1)",
          measured: pct(ratio(sale.load.requests_per_s)) + (floor === null ? '' : `; the floor ${pct(ratio(floor.approved_per_s))}`),
          met: ratio(sale.load.requests_per_s) >= 0.2,
        });
        if (floor !== null) {
          notes.push(
            `The floor (bench/floor-server.ts: only what no durable signed sale can skip) answered ${Math.round(floor.approved_per_s)} new sales/s, ` +
              `${pct(ratio(floor.approved_per_s))} of the ceiling, at ${floor.cpu_ms.toFixed(3)} CPU ms a request against the gateway's ${sale.cpu_ms.toFixed(3)}: ` +
              (ratio(floor.approved_per_s) < 0.2
                ? 'a durable sale at 20% of the ceiling is beyond this machine, whatever the gateway does.'
                : `a sale at 20% of the ceiling is within this machine's reach; the gateway spends ${(sale.cpu_ms - floor.cpu_ms).toFixed(3)} CPU ms a sale above the floor.`),
          );
        }
        targets.push({
          target: `SQLite sale p99 ≤ 30 ms at ${CONNECTIONS} connections (issue 29, item 1)`,
          measured: `${sale.load.latency_p99_ms} ms` + (floor === null ? '' : `; the floor ${floor.load.latency_p99_ms} ms`),
          met: sale.load.latency_p99_ms <= 30,
        });
        targets.push({
          target: `SQLite sale p99 < 15 ms at ${CONNECTIONS} connections`,
          measured: `${sale.load.latency_p99_ms} ms`,
          met: sale.load.latency_p99_ms < 15,
        });
      }

      if (runs('replay')) {
        const replay_body = saleBodies(gateway.merchant, 1, silent);
        await fetch(`${gateway.url}/api/process`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: replay_body[0]!,
        });
        await quiet();
        const replay = await measure(gateway, plan(gateway, writeBodies(replay_body)), 'replay-sqlite');
        rows.push({
          name: 'idempotent replay on SQLite (the same sale again)',
          rps: replay.load.requests_per_s,
          p50: replay.load.latency_p50_ms,
          p99: replay.load.latency_p99_ms,
          rss_mb: replay.rss_mb,
          cpu_ms: replay.cpu_ms,
          ratio: ratio(replay.load.requests_per_s),
          note: statusNote(replay.load, ['0']),
        });
      }

      if (runs('find')) {
        const order_ids = await openOrders(gateway, ORDERS);
        await quiet();
        const find = await measure(
          gateway,
          { ...plan(gateway, writeBodies(findOrderBodies(gateway.merchant, order_ids))), path: '/api/find-order' },
          'find-order-sqlite',
        );
        rows.push({
          name: `find-order on SQLite (${ORDERS} checkout orders, half paid)`,
          rps: find.load.requests_per_s,
          p50: find.load.latency_p50_ms,
          p99: find.load.latency_p99_ms,
          rss_mb: find.rss_mb,
          cpu_ms: find.cpu_ms,
          ratio: ratio(find.load.requests_per_s),
          note: `${statusNote(find.load, ['0', '3'])} (0: found, paid; 3: still open)`,
        });
        targets.push({
          target: 'find-order ≥ 50% of the ceiling',
          measured: pct(ratio(find.load.requests_per_s)),
          met: ratio(find.load.requests_per_s) >= 0.5,
        });
      }
    } finally {
      await gateway.drop();
    }
  }

  // Notification lag, on a gateway of its own: the sales above left thousands of notifications to
  // a closed port, whose resends (due 5 minutes later) would otherwise share the worker.
  //
  // "80% of the maximum sale rate" is taken of a maximum measured under the lag runs' own
  // conditions: on this gateway, just before them, sales as fast as they are answered while a
  // receiver acknowledges every notification. Taken of the closed-port sale run above (another
  // gateway, minutes earlier, its deliveries failing at once), 80% landed anywhere from well
  // below to above what this gateway then sustained, as the machine's speed drifted: the same
  // code measured 41 ms and 3.4 s.
  if (runs('lag')) {
    const gateway = await startGateway('sqlite', base_port + 3);
    try {
      const max_receiver_port = base_port + 8;
      await warmUp(plan(gateway, ''), gateway.merchant, silent, () => quietGateway(gateway));
      const max_bodies = saleBodies(gateway.merchant, sale_count(sale_capacity), `http://127.0.0.1:${max_receiver_port}/notify`);
      const sale = await measure(
        gateway,
        plan(gateway, writeBodies(max_bodies), {
          receiver_port: max_receiver_port,
          receipts_file: path.join(WORK, 'receipts-max.json'),
          merchant_secret: gateway.merchant.secret,
        }),
      );
      rows.push({
        name: 'sale on SQLite with every notification delivered to a local receiver (the maximum the lag runs take fractions of)',
        rps: sale.load.requests_per_s,
        p50: sale.load.latency_p50_ms,
        p99: sale.load.latency_p99_ms,
        rss_mb: sale.rss_mb,
        cpu_ms: sale.cpu_ms,
        ratio: ratio(sale.load.requests_per_s),
        note: `${statusNote(sale.load, ['0'])}; ${sale.load.notifications_received}/${sale.load.notifications_expected} answered sales notified within the run`,
      });
      // Notifications the receiver did not get before it stopped are retried 5 minutes later: only
      // those still being sent could share the worker with the lag runs. Wait until none is due.
      await waitForNoDueNotifications(path.join(gateway.data_dir, 'paygate.sqlite'), 30_000);
      // At half the maximum sale rate (headroom left), then at the target's 80%. Half first: a
      // backlog left by the busier run would otherwise count against it.
      const lag_runs: { fraction: number; rate: number; load: Awaited<ReturnType<typeof measure>>; receipts: Record<string, number> }[] =
        [];
      // A short warm-up first (discarded): a fresh process answers its first seconds slower (JIT).
      for (const [index, { fraction, warm_up }] of [
        { fraction: 0.5, warm_up: true },
        { fraction: 0.5, warm_up: false },
        { fraction: 0.8, warm_up: false },
      ].entries()) {
        const rate = Math.max(1, Math.floor(sale.load.requests_per_s * fraction));
        const receiver_port = base_port + 5 + index;
        const receipts_file = path.join(WORK, `receipts-${index}.json`);
        const lag_bodies = saleBodies(gateway.merchant, sale_count(rate), `http://127.0.0.1:${receiver_port}/notify`);
        const load = await measure(
          gateway,
          plan(gateway, writeBodies(lag_bodies), {
            overall_rate: rate,
            receiver_port,
            receipts_file,
            merchant_secret: gateway.merchant.secret,
            ...(warm_up ? { duration_s: 3 } : {}),
          }),
        );
        if (!warm_up)
          lag_runs.push({ fraction, rate, load, receipts: JSON.parse(fs.readFileSync(receipts_file, 'utf8')) as Record<string, number> });
      }
      await stop(gateway.child);
      const db = new BetterSqlite3(path.join(gateway.data_dir, 'paygate.sqlite'), { readonly: true });
      // The approved status change of each sale: its commit is at most a group-commit batch later.
      const committed = db
        .prepare(`select trace_id, updated_at_ms from transactions where order_id like 'bench-%' and status = 'approved'`)
        .all() as { trace_id: number; updated_at_ms: number }[];
      db.close();
      for (const { fraction, rate, load: lag, receipts } of lag_runs) {
        const lags = committed.filter((r) => receipts[r.trace_id] !== undefined).map((r) => receipts[r.trace_id]! - r.updated_at_ms);
        const lag_p99 = percentile(lags, 99);
        rows.push({
          name: `notification lag on SQLite while sales run at ${fraction * 100}% of their maximum (${rate}/s)`,
          rps: lag.load.requests_per_s,
          p50: percentile(lags, 50) ?? NaN,
          p99: lag_p99 ?? NaN,
          rss_mb: lag.rss_mb,
          cpu_ms: lag.cpu_ms,
          ratio: null,
          note: `p50/p99 are the lag (receipt − status change), not request latency (request p99 ${lag.load.latency_p99_ms} ms); ${lag.load.notifications_received}/${lag.load.notifications_expected} answered sales notified within the run`,
        });
        if (fraction === 0.8) {
          targets.push({
            target: 'notification lag p99 < 100 ms at 80% of the maximum sale rate',
            measured: lag_p99 === null ? 'none received' : `${lag_p99} ms`,
            met: lag_p99 !== null && lag_p99 < 100,
          });
        }
      }
    } finally {
      await gateway.drop();
    }
  }

  // 3. Group commit off: the same sales, every transaction committed (and synced) alone.
  if (runs('off')) {
    const gateway = await startGateway('sqlite', base_port + 2, { env: { PAYGATE_GROUP_COMMIT: 'off' } });
    try {
      await warmUp(plan(gateway, ''), gateway.merchant, silent, () => quietGateway(gateway));
      const sale = await measure(gateway, plan(gateway, writeBodies(saleBodies(gateway.merchant, sale_count(sale_capacity), silent))));
      rows.push({
        name: 'sale on SQLite, group commit off (PAYGATE_GROUP_COMMIT=off)',
        rps: sale.load.requests_per_s,
        p50: sale.load.latency_p50_ms,
        p99: sale.load.latency_p99_ms,
        rss_mb: sale.rss_mb,
        cpu_ms: sale.cpu_ms,
        ratio: ratio(sale.load.requests_per_s),
        note: statusNote(sale.load, ['0']),
      });
    } finally {
      await gateway.drop();
    }
  }

  // 4. PostgreSQL: one process on the server's core (the target), then 1, 2 and 4 processes left to the scheduler.
  let postgres_pinned: { gateway_cpu_ms: number; server_cpu_ms: number | null; commits_per_sale: number } | null = null;
  if (!runs('postgres')) {
    // Left out by BENCH_ONLY.
  } else if (await postgresAvailable()) {
    const all_rows = process.env.BENCH_POSTGRES_ROWS !== 'pinned';
    const every: { workers: number; where: Placement; unix_socket?: string }[] = [
      { workers: 1, where: 0 },
      { workers: 1, where: 'any' },
      { workers: 2, where: 'any' },
      { workers: 4, where: 'any' },
      // A server on the same machine is best reached over its Unix socket (docs/operations.md): no TCP on either side.
      ...(isLocalServer(ADMIN_DATABASE_URL) && fs.existsSync(`${PG_SOCKET_DIR}/.s.PGSQL.5432`)
        ? [{ workers: 1, where: 0 as Placement, unix_socket: PG_SOCKET_DIR }]
        : []),
    ];
    const series = all_rows ? every : every.slice(0, 1);
    for (const [index, { workers, where, unix_socket }] of series.entries()) {
      const gateway = await startGateway('postgres', base_port + 10 + index, {
        env: { PAYGATE_WORKERS: String(workers) },
        where,
        ...(unix_socket ? { unix_socket } : {}),
      });
      try {
        await warmUp(plan(gateway, ''), gateway.merchant, silent, () => quietGateway(gateway));
        const bodies_file = writeBodies(saleBodies(gateway.merchant, sale_count(sale_capacity), silent));
        const xid_before = await nextTransactionId(gateway.database_url!);
        const server_cpu_before = postgresCpuSeconds();
        const sale = await measure(gateway, plan(gateway, bodies_file), index === 0 ? 'sale-postgres' : undefined);
        const server_cpu_after = postgresCpuSeconds();
        const commits_per_sale = ((await nextTransactionId(gateway.database_url!)) - xid_before) / Math.max(1, sale.load.total);
        // Read before the gateway's pool closes: its backends are still running, their time their own.
        const server_note =
          server_cpu_before !== null && server_cpu_after !== null
            ? `; PostgreSQL's own processes: ${(((server_cpu_after - server_cpu_before) * 1000) / Math.max(1, sale.load.total)).toFixed(2)} CPU ms/req`
            : '';
        const placement =
          (where === 0 ? 'pinned to core 0 like the ceiling' : 'not pinned') +
          (unix_socket ? `, over the Unix socket (${unix_socket})` : '');
        rows.push({
          name: `sale on PostgreSQL, ${workers} process${workers > 1 ? 'es (PAYGATE_WORKERS)' : ''}, ${placement}`,
          rps: sale.load.requests_per_s,
          p50: sale.load.latency_p50_ms,
          p99: sale.load.latency_p99_ms,
          rss_mb: sale.rss_mb,
          cpu_ms: sale.cpu_ms,
          ratio: ratio(sale.load.requests_per_s),
          note: `${statusNote(sale.load, ['0'])}${server_note}${loopNote(sale)}`,
        });
        if (index === 0) {
          targets.push({
            target: 'PostgreSQL sale ≥ 15% of the ceiling',
            measured: pct(ratio(sale.load.requests_per_s)),
            met: ratio(sale.load.requests_per_s) >= 0.15,
          });
          postgres_pinned = {
            gateway_cpu_ms: sale.cpu_ms,
            server_cpu_ms:
              server_cpu_before !== null && server_cpu_after !== null
                ? ((server_cpu_after - server_cpu_before) * 1000) / Math.max(1, sale.load.total)
                : null,
            commits_per_sale,
          };
        }
      } finally {
        await gateway.drop();
      }
    }
    // Issue 29, item 2: the gateway's CPU per PostgreSQL sale against SQLite's, and PostgreSQL's
    // own CPU per sale against what it spends on the commits a sale makes (pgbench's own
    // transaction, and its smallest write as the strictest reading).
    const sqlite_sale = rows.find((row) => row.name.startsWith('sale on SQLite (CVV'));
    if (postgres_pinned !== null) {
      const pinned = postgres_pinned as { gateway_cpu_ms: number; server_cpu_ms: number | null; commits_per_sale: number };
      const probes = { tpcb: await pgbenchCpuMsPerCommit('tpcb'), insert: await pgbenchCpuMsPerCommit('insert') };
      // The floor on PostgreSQL: the least a notified sale costs there, on both sides, beside SQLite's.
      const pg_floor = await measureFloor(base_port + 51, PROBE_MERCHANT, silent, ceiling_rps, true);
      const sqlite_floor = floor as Awaited<ReturnType<typeof measureFloor>> | null;
      rows.push({
        name: 'floor on PostgreSQL (bench/floor-server.ts: the same least sale, one statement and one commit, its attempt another), pinned to core 0',
        rps: pg_floor.approved_per_s,
        p50: pg_floor.load.latency_p50_ms,
        p99: pg_floor.load.latency_p99_ms,
        rss_mb: pg_floor.rss_mb,
        cpu_ms: pg_floor.cpu_ms,
        ratio: ratio(pg_floor.approved_per_s),
        note:
          `requests/s counts new sales committed (status 0) only; ${statusNote(pg_floor.load, ['0'])}` +
          (pg_floor.server_cpu_ms === null ? '' : `; PostgreSQL's own processes: ${pg_floor.server_cpu_ms.toFixed(2)} CPU ms/req`) +
          (pg_floor.commits_per_sale === null ? '' : `; ${pg_floor.commits_per_sale.toFixed(2)} commits a sale`),
      });
      const floors_ratio = sqlite_floor === null ? null : pg_floor.cpu_ms / sqlite_floor.cpu_ms;
      targets.push({
        target: "PostgreSQL sale's gateway CPU ≤ 1.5× the SQLite sale's (issue 29)",
        measured:
          (sqlite_sale?.cpu_ms != null
            ? `${pinned.gateway_cpu_ms.toFixed(2)} ms against ${sqlite_sale.cpu_ms.toFixed(2)} ms (${(pinned.gateway_cpu_ms / sqlite_sale.cpu_ms).toFixed(2)}×)`
            : 'no SQLite sale in this run') +
          (floors_ratio === null
            ? ''
            : `; the floors ${pg_floor.cpu_ms.toFixed(2)} against ${sqlite_floor!.cpu_ms.toFixed(2)} ms (${floors_ratio.toFixed(2)}×)`),
        met: sqlite_sale?.cpu_ms != null ? pinned.gateway_cpu_ms <= 1.5 * sqlite_sale.cpu_ms : null,
      });
      if (floors_ratio !== null) {
        notes.push(
          `The floors' own CPU: ${pg_floor.cpu_ms.toFixed(3)} ms a sale on PostgreSQL against ${sqlite_floor!.cpu_ms.toFixed(3)} on SQLite ` +
            `(${floors_ratio.toFixed(2)}×): what talking to a server costs a sale that does nothing else` +
            (floors_ratio > 1.5 ? ", more than item 2's 1.5× before the gateway adds anything." : '.'),
        );
      }
      const transactions: Record<PgbenchWorkload, string> = {
        tpcb: "pgbench's own transaction (TPC-B-like: three UPDATEs, a SELECT, an INSERT)",
        insert: 'the smallest write (one INSERT of one row), the strictest reading',
      };
      // Item 2's allowance: 1.5 × PostgreSQL's CPU a pgbench commit × the commits a sale makes.
      const allowance = (probe: { cpu_ms: number } | null, commits: number | null): number | null =>
        probe === null || commits === null ? null : 1.5 * probe.cpu_ms * commits;
      for (const workload of ['tpcb', 'insert'] as const) {
        const probe = probes[workload];
        const allowed_ms = allowance(probe, pinned.commits_per_sale);
        const floor_allowed_ms = allowance(probe, pg_floor.commits_per_sale);
        targets.push({
          target: `PostgreSQL's own CPU per sale ≤ 1.5× pgbench's per commit × the commits a sale makes (issue 29); pgbench running ${transactions[workload]}`,
          measured:
            (probe === null || pinned.server_cpu_ms === null
              ? 'pgbench or the server’s CPU not available'
              : `${pinned.server_cpu_ms.toFixed(2)} ms against 1.5 × ${probe.cpu_ms.toFixed(3)} ms × ${pinned.commits_per_sale.toFixed(2)} commits = ${allowed_ms!.toFixed(2)} ms`) +
            (floor_allowed_ms === null || pg_floor.server_cpu_ms === null
              ? ''
              : `; the floor ${pg_floor.server_cpu_ms.toFixed(2)} against ${floor_allowed_ms.toFixed(2)} ms (${pg_floor.commits_per_sale!.toFixed(2)} commits)`),
          met: probe === null || pinned.server_cpu_ms === null ? null : pinned.server_cpu_ms <= allowed_ms!,
        });
        // Held sales share their commits (store/sql/held-batches.ts): the commits counted a sale
        // fall below one, and the allowance with them, though each sale still needs its own row
        // durably committed. The same bound counting one commit a sale, beside the counted one.
        if (pinned.commits_per_sale < 1) {
          const one_commit_ms = allowance(probe, 1);
          targets.push({
            target: `PostgreSQL's own CPU per sale ≤ 1.5× pgbench's per commit × one commit a sale (issue 29; sales share commits here, see the note); pgbench running ${transactions[workload]}`,
            measured:
              probe === null || pinned.server_cpu_ms === null
                ? 'pgbench or the server’s CPU not available'
                : `${pinned.server_cpu_ms.toFixed(2)} ms against 1.5 × ${probe.cpu_ms.toFixed(3)} ms × 1 commit = ${one_commit_ms!.toFixed(2)} ms`,
            met: probe === null || pinned.server_cpu_ms === null ? null : pinned.server_cpu_ms <= one_commit_ms!,
          });
        }
      }
      const { tpcb, insert } = probes;
      if (tpcb !== null || insert !== null)
        notes.push(
          `pgbench (${CONNECTIONS} clients, ${DURATION_S} s, pinned to core 1; PostgreSQL's CPU over the timed run only): ` +
            [
              tpcb === null
                ? null
                : `its own TPC-B-like transaction on a database of scale ${CONNECTIONS}, ${tpcb.commits} commits, ${tpcb.cpu_ms.toFixed(3)} ms of PostgreSQL's CPU each`,
              insert === null
                ? null
                : `one INSERT of one row a transaction, ${insert.commits} commits, ${insert.cpu_ms.toFixed(3)} ms each`,
            ]
              .filter((part) => part !== null)
              .join('; ') +
            `. A sale made ${pinned.commits_per_sale.toFixed(2)} commits (write transactions, counted by PostgreSQL's transaction ids over the pinned run; the background pollers' and the notification attempts' included); the floor's sale ${pg_floor.commits_per_sale === null ? 'not counted' : pg_floor.commits_per_sale.toFixed(2)}.` +
            (pinned.commits_per_sale < 1
              ? ` Fewer than one: the sales held while the gateway's statements are in flight share the next statement and its commit (store/sql/held-batches.ts), so the allowance by commits counted shrinks as PostgreSQL's work a sale does; the rows "× one commit a sale" read the bound as a sale written alone would need it.`
              : ''),
        );
      const floor_strict_ms = allowance(insert, pg_floor.commits_per_sale);
      if (insert !== null && pg_floor.server_cpu_ms !== null && floor_strict_ms !== null) {
        notes.push(
          `PostgreSQL's own CPU for the floor's sale: ${pg_floor.server_cpu_ms.toFixed(3)} ms against the strictest allowance, 1.5 × ${insert.cpu_ms.toFixed(3)} ms × ${pg_floor.commits_per_sale!.toFixed(2)} commits = ${floor_strict_ms.toFixed(3)} ms: ` +
            (pg_floor.server_cpu_ms > floor_strict_ms
              ? 'even the least notified sale costs PostgreSQL more than that, whatever the gateway does.'
              : 'the least notified sale is within it; a sale writes its row under more indexes, its status changes and its notification.'),
        );
      }
    }
  } else {
    notes.push(`PostgreSQL not reachable at ${ADMIN_DATABASE_URL}: its runs were skipped.`);
    targets.push({ target: 'PostgreSQL sale ≥ 15% of the ceiling', measured: 'not run', met: null });
  }
  notes.push(
    `Load average (1 min) ${load_before.toFixed(2)} before the run, ${os.loadavg()[0]!.toFixed(2)} after it; other work on the machine shows up in every figure.`,
  );

  // 5. Issue 29: the live path and the memory soak, each in a section of its own (sections.ts).
  const sections: Partial<Record<SectionName, string>> = {};
  if (runs('live')) {
    sections.live = await liveSection({
      base_port: base_port + 20,
      duration_s: DURATION_S,
      connections: LIVE_CONNECTIONS,
      processor_latency_ms: LIVE_LATENCY_MS,
      processor_timeout_ms: LIVE_TIMEOUT_MS,
      processor_keep_alive_ms: LIVE_KEEP_ALIVE_MS,
    });
  }
  if (runs('soak')) sections.soak = await soakSection({ base_port: base_port + 30, duration_s: SOAK_S, warm_up_s: SOAK_WARM_UP_S });
  writeResults(rows, targets, notes, started_at, { whole_file: ONLY === null, issue_7, sections });
  fs.rmSync(WORK, { recursive: true, force: true });
}

/**
 * A whole run (no BENCH_ONLY) rewrites RESULTS.md above the hand-written notes; BENCH_ONLY
 * rewrites the sections of the parts it ran that have one (live, soak) and nothing else.
 */
function writeResults(
  rows: Row[],
  targets: Target[],
  notes: string[],
  started_at: Date,
  written: { whole_file: boolean; issue_7: boolean; sections: Partial<Record<SectionName, string>> },
): void {
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const results_file = path.join(ROOT, 'bench/RESULTS.md');
  const previous = fs.existsSync(results_file) ? fs.readFileSync(results_file, 'utf8') : '';
  const kept = previous.includes(NOTES_MARKER) ? previous.slice(previous.indexOf(NOTES_MARKER) + NOTES_MARKER.length) : '\n';
  const lines = [
    '# Benchmark results',
    '',
    `Written by \`npm run bench\` on ${started_at.toISOString().slice(0, 16).replace('T', ' ')} UTC.`,
    '',
    `- Machine: ${cpu}, ${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.platform()} ${os.release()}`,
    `- Node ${process.version}; autocannon with ${CONNECTIONS} connections; ${DURATION_S} s per run; ${CAN_PIN ? 'gateway (and ceiling) pinned to core 0, load to core 1 (taskset), unless a row says otherwise; PostgreSQL runs on both cores' : 'not pinned (taskset unavailable or one core)'}`,
    "- Every acknowledged sale is committed before its answer: SQLite WAL, each commit's WAL synced to disk before anyone hears of it (src/store/wal-sync.ts, on a thread of its own; checkpoints on another, src/store/wal-checkpoint.ts), PostgreSQL with its defaults (synchronous_commit on).",
    `- Each gateway gets ${WARM_UP_S} s of sales of its own before its first measured run (the ceiling 2 s), not counted, and the measured run starts once their notification attempts are done: a fresh process spends its first seconds compiling (V8), and without the warm-up that cost (about a quarter of a cold 10 s sale run's CPU) counted against the sale rows until 2026-11-27.`,
    "- Sale notifications go to a closed port (each attempt fails at once and is retried in 5 minutes), except in the lag runs and the sale run before them (every notification delivered), where a local receiver acknowledges each with a signed status 0. The lag runs' 50% and 80% are of that run's rate: what the gateway sustains while delivering its notifications. The replay and find-order runs share the sale run's gateway and start once none of its notifications is due (each tried once), so that those attempts do not count against them.",
    '- "CPU ms/req" is the gateway\'s own CPU time (all its processes) divided by the requests it answered.',
    '',
    '| run | requests/s | p50 ms | p99 ms | CPU ms/req | peak RSS MB | ratio to ceiling | answers |',
    '|---|---:|---:|---:|---:|---:|---:|---|',
    ...rows.map(
      (r) =>
        `| ${r.name} | ${Math.round(r.rps)} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${r.cpu_ms === null ? '' : r.cpu_ms.toFixed(2)} | ${r.rss_mb ?? ''} | ${r.ratio === null ? '' : `${(r.ratio * 100).toFixed(1)}%`} | ${r.note} |`,
    ),
    '',
    '## Targets of issues 7 and 29 in this run',
    '',
    '| target | measured | met |',
    '|---|---:|---|',
    ...targets.map((t) => `| ${t.target} | ${t.measured} | ${t.met === null ? 'not measured' : t.met ? 'yes' : '**no**'} |`),
    '',
    ...notes.map((n) => `- ${n}`),
    '',
  ];
  const sections = Object.values(written.sections);
  if (written.whole_file) {
    fs.writeFileSync(results_file, [...lines, ...sections.flatMap((s) => [s, '']), NOTES_MARKER].join('\n') + kept);
  } else if (sections.length > 0) {
    let text = previous;
    for (const [name, content] of Object.entries(written.sections)) text = withSection(text, name as SectionName, content, NOTES_MARKER);
    fs.writeFileSync(results_file, text);
  }
  process.stdout.write(`${[...(written.issue_7 ? lines : []), ...sections].join('\n')}\n`);
}

await main();
