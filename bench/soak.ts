// The memory soak of issue 29 (item 4), started by bench/soak-run.ts, usually inside a network and
// mount namespace of its own (unshare, no root needed) whose /etc/resolv.conf names a name server
// on 127.0.0.53 that this process runs and that never answers: getaddrinfo's lookups of the
// notification hosts under dead-dns.example then time out as they do when a merchant's name
// server is down (the resolver's own time-out, 5 s, twice), with nothing stood in for.
//
// It starts a sandbox gateway (SQLite, core 0) and sends it, spread evenly for `duration_s`:
// sales (one in five notifying a host whose lookup times out, one of 100 such names; the others
// a local receiver that acknowledges each), partial refunds of approved sales, checkout orders
// (init-checkout) and find-order for them, and back-office reads (a staff user signed in, the
// transactions list). Notifications that fail are retried every 10 s (PAYGATE_NOTIFY_RETRY_SECONDS),
// so the dead names' lookups keep being asked for, as in the issue's report, until their bound
// (PAYGATE_NOTIFY_MAX_AGE_SECONDS, compressed too). The gateway's RSS is read from /proc each
// second. Prints one JSON line: the samples and what was sent and answered.
//
// argv: a plan file (SoakPlan, JSON).
import { spawnSync } from 'node:child_process';
import dgram from 'node:dgram';
import dns from 'node:dns';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { signBody } from '../src/domain/signing.js';
import { type HeapProbe, heapGrowth, largestKinds, probeHeap } from './heap-probe.js';
import {
  cpuSeconds,
  CUSTOMER,
  GATEWAY_CLI,
  GATEWAY_NODE_FLAGS,
  type Merchant,
  metricTotal,
  percentile,
  placed,
  ROOT,
  scrapeMetrics,
  signed,
  stop,
  waitHealthy,
  WORK,
} from './harness.js';

export interface SoakPlan {
  readonly port: number;
  readonly receiver_port: number;
  readonly data_dir: string;
  readonly duration_s: number;
  /** The first heap probe is taken 30 s before this (the second at the end, once the load has stopped). */
  readonly warm_up_s: number;
  /**
   * Both probes take a heap snapshot, and what grew between them is listed (BENCH_SOAK_DIFF=1). A
   * diagnosis, not the measurement: the first snapshot leaves tens of MB of native memory behind.
   */
  readonly diff_snapshots: boolean;
  /** Whether this process runs the never-answering name server (inside the namespace). */
  readonly dead_dns: boolean;
  /** Requests a second of each kind. */
  readonly rates: Readonly<Record<Kind, number>>;
  /** PAYGATE_NOTIFY_MAX_AGE_SECONDS: how long a failing notification is sent again. */
  readonly notify_max_age_s: number;
}

export type Kind = 'sale' | 'refund' | 'checkout' | 'find' | 'backoffice';

export interface KindStats {
  sent: number;
  answered: number;
  errors: number;
  statuses: Record<string, number>;
  latencies_ms: number[];
}

const plan = JSON.parse(fs.readFileSync(process.argv[2]!, 'utf8')) as SoakPlan;
const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef';
const PASSWORD = 'bench staff password 0123';
const STAFF = 'staff@bench.example';
const DEAD_NAMES = 100;
/** Approved sales and open orders remembered for refunds and find-order, at most. */
const REMEMBERED_MAX = 5_000;

// The name server that never answers: it reads each query and drops it.
let queries_dropped = 0;
if (plan.dead_dns) {
  const server = dgram.createSocket('udp4');
  server.on('message', () => {
    queries_dropped += 1;
  });
  await new Promise<void>((resolve) => server.bind(53, '127.0.0.53', resolve));
  server.unref();
}
// One lookup timed, as the gateway's lookups will be (getaddrinfo through this namespace's resolv.conf).
const probe_started = performance.now();
const probe = new Promise<{ code: string | null; ms: number }>((resolve) =>
  dns.lookup('probe.dead-dns.example', { all: true }, (error) =>
    resolve({ code: error ? (error.code ?? 'error') : null, ms: Math.round(performance.now() - probe_started) }),
  ),
);

const env: Record<string, string> = {
  PAYGATE_DATA_DIR: plan.data_dir,
  PORT: String(plan.port),
  PAYGATE_LOG_LEVEL: 'warn',
  PAYGATE_ADMIN_TOKEN: ADMIN_TOKEN,
  PAYGATE_RATE_LIMIT_ADDRESS_PER_MINUTE: '0',
  PAYGATE_RATE_LIMIT_MERCHANT_PER_MINUTE: '0',
  PAYGATE_NOTIFY_RETRY_SECONDS: '10',
  // SQLite's page cache fills as the file is read, then stays (docs/limits.md §7): at the default
  // 16 MB a connection that takes the soak's first eight minutes or so and reads as growth. 2 MB
  // fills within the warm-up, so what grows after it is something else.
  PAYGATE_SQLITE_CACHE_MB: '2',
  // The 72-hour bound on a notification's attempts, compressed as the retry schedule is: a
  // notification to a dead host is given up 60 s after its sale, so the notifications waiting to be
  // sent again level off (at some 8 dead sales a second × 60 s) within the warm-up, as a production
  // gateway's do after 72 hours. Without it they grew all soak long, and with them the attempts a
  // second (to some 470 a second by its end): work growing, not memory kept.
  PAYGATE_NOTIFY_MAX_AGE_SECONDS: String(plan.notify_max_age_s),
};
const cli = (args: string[]) => {
  const done = spawnSync(process.execPath, [GATEWAY_CLI, ...args], { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8' });
  if (done.status !== 0) throw new Error(`paygate ${args.slice(0, 2).join(' ')} failed: ${done.stderr}`);
  return JSON.parse(done.stdout.trim().split('\n').pop()!) as Record<string, unknown>;
};
const merchant = cli(['merchant', 'create', '--merchant-id', 'soak', '--secret', 'soak-secret-0123']) as unknown as Merchant;
cli(['user', 'create', '--email', STAFF, '--password', PASSWORD, '--role', 'merchant', '--merchant-id', 'soak']);
const gateway = placed(0, process.execPath, [...GATEWAY_NODE_FLAGS, GATEWAY_CLI, 'start'], env);
let gateway_output = '';
// BENCH_SOAK_GATEWAY_LOG=file keeps all the gateway printed (with BENCH_EXTRA_NODE_FLAGS=--trace-gc, its collections).
const gateway_log = process.env.BENCH_SOAK_GATEWAY_LOG ? fs.createWriteStream(process.env.BENCH_SOAK_GATEWAY_LOG) : null;
const keep = (chunk: Buffer) => {
  gateway_output = (gateway_output + chunk.toString()).slice(-4000);
  gateway_log?.write(chunk);
};
gateway.stdout?.on('data', keep);
gateway.stderr?.on('data', keep);
const base = `http://127.0.0.1:${plan.port}`;
await waitHealthy(base).catch((error: unknown) => {
  throw new Error(`${String(error)}: ${gateway_output}`);
});

// The merchant's site: every notification acknowledged with a signed status 0.
const notified = new Set<number>();
const receiver = http.createServer((request, response) => {
  let text = '';
  request.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  request.on('end', () => {
    try {
      notified.add((JSON.parse(text) as { trace_id: number }).trace_id);
    } catch {
      // counted as missing
    }
    const reply: Record<string, unknown> = { status: 0, description: 'OK', version: '1.2', timestamp: Math.floor(Date.now() / 1000) };
    reply.signature = signBody(reply, merchant.secret);
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reply));
  });
});
await new Promise<void>((resolve) => receiver.listen(plan.receiver_port, '127.0.0.1', resolve));
const notify_url = `http://127.0.0.1:${plan.receiver_port}/notify`;

// A staff user of the merchant, signed in as a browser would: the sign-in page's CSRF token and cookie, then the form.
const cookies = new Map<string, string>();
const remember = (response: Response) => {
  for (const line of response.headers.getSetCookie()) {
    const pair = line.split(';')[0]!;
    cookies.set(pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1));
  }
};
const cookieHeader = () => [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
const sign_in_page = await fetch(`${base}/backoffice/`, { redirect: 'manual' });
remember(sign_in_page);
const csrf = /name="_csrf" value="([^"]+)"/.exec(await sign_in_page.text())?.[1] ?? '';
const signed_in = await fetch(`${base}/backoffice/sign-in`, {
  method: 'POST',
  redirect: 'manual',
  headers: { cookie: cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams({ email: STAFF, password: PASSWORD, _csrf: csrf }).toString(),
});
remember(signed_in);
if (signed_in.status !== 303) throw new Error(`back-office sign-in answered ${signed_in.status}`);

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
const stats = Object.fromEntries(
  (['sale', 'refund', 'checkout', 'find', 'backoffice'] as const).map((kind) => [
    kind,
    { sent: 0, answered: 0, errors: 0, statuses: {}, latencies_ms: [] } as KindStats,
  ]),
) as Record<Kind, KindStats>;
const approved: number[] = [];
/** The first heap probe stops the gateway for a fraction of a second; requests sent then, or just after, keep no latency. */
const PROBE_SETTLE_MS = 5_000;
let probing = false;
let probe_ended = Number.NEGATIVE_INFINITY;
const probes: HeapProbe[] = [];
const orders: string[] = [];
let seq = 0;
const timestamp = () => Math.floor(Date.now() / 1000);
const remembered = (list: unknown[], item: unknown) => {
  list.push(item);
  if (list.length > REMEMBERED_MAX) list.shift();
};

function send(kind: Kind, method: string, url_path: string, body: string | null, headers: Record<string, string>): Promise<string> {
  const kind_stats = stats[kind];
  kind_stats.sent += 1;
  const started = performance.now();
  return new Promise((resolve) => {
    const request = http.request(
      `${base}${url_path}`,
      {
        method,
        agent,
        headers: body === null ? headers : { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          text += chunk;
        });
        response.on('end', () => {
          kind_stats.answered += 1;
          // A request that met the heap probe's pause measures the probe, not the gateway.
          if (!probing && started >= probe_ended + PROBE_SETTLE_MS) kind_stats.latencies_ms.push(performance.now() - started);
          const status = kind === 'backoffice' ? `HTTP ${response.statusCode}` : (/"status":(-?\d+)/.exec(text)?.[1] ?? 'unreadable');
          kind_stats.statuses[status] = (kind_stats.statuses[status] ?? 0) + 1;
          resolve(text);
        });
      },
    );
    request.on('error', () => {
      kind_stats.errors += 1;
      resolve('');
    });
    request.end(body ?? undefined);
  });
}

const actions: Record<Kind, () => Promise<unknown>> = {
  async sale() {
    seq += 1;
    const i = seq;
    const answer = await send(
      'sale',
      'POST',
      '/api/process',
      signed(
        {
          merchant_id: merchant.merchant_id,
          application_key: merchant.application_key,
          transaction_type: 'sale',
          order_id: `soak-${i}`,
          amount: 1999,
          currency: 'USD',
          card_number: '4111111111111111',
          card_exp: '12/2035',
          cvv: '568',
          pin: `cust-${i % 1000}`,
          ...CUSTOMER,
          return_url: 'https://merchant.example/return',
          // One in five to a host whose name server never answers.
          notification_url: i % 5 === 0 ? `http://hook-${i % DEAD_NAMES}.dead-dns.example/notify` : notify_url,
          timestamp: timestamp(),
          version: '1.2',
        },
        merchant.secret,
      ),
      {},
    );
    const trace_id = /"trace_id":(\d+)/.exec(answer)?.[1];
    if (trace_id !== undefined && answer.includes('"transaction_status":"approved"')) remembered(approved, Number(trace_id));
  },
  async refund() {
    const reference_id = approved.shift();
    if (reference_id === undefined) return;
    seq += 1;
    await send(
      'refund',
      'POST',
      '/api/process',
      signed(
        {
          merchant_id: merchant.merchant_id,
          frontend: merchant.frontend,
          transaction_type: 'refund',
          order_id: `soak-refund-${seq}`,
          reference_id,
          amount: 500,
          currency: 'USD',
          card_number: '4111111111111111',
          card_exp: '12/2035',
          pin: 'cust-1',
          email: CUSTOMER.email,
          requester_ip: CUSTOMER.requester_ip,
          country: CUSTOMER.country,
          first_name: CUSTOMER.first_name,
          last_name: CUSTOMER.last_name,
          state: 'LN',
          zip: CUSTOMER.zip,
          notification_url: notify_url,
          timestamp: timestamp(),
          version: '1.1',
        },
        merchant.secret,
      ),
      {},
    );
  },
  async checkout() {
    seq += 1;
    const order_id = `soak-order-${seq}`;
    const answer = await send(
      'checkout',
      'POST',
      '/api/init-checkout',
      signed(
        {
          merchant_id: merchant.merchant_id,
          frontend: merchant.frontend,
          order_id,
          amount: 1999,
          currency: 'USD',
          pin: `cust-${seq % 1000}`,
          payment_method: 'card',
          ...CUSTOMER,
          return_url: 'https://merchant.example/return',
          notification_url: notify_url,
          timestamp: timestamp(),
          version: '1.1',
        },
        merchant.secret,
      ),
      {},
    );
    if (answer.includes('"status":0')) remembered(orders, order_id);
  },
  async find() {
    const order_id = orders[Math.floor(Math.random() * orders.length)];
    if (order_id === undefined) return;
    await send(
      'find',
      'POST',
      '/api/find-order',
      signed(
        { merchant_id: merchant.merchant_id, frontend: merchant.frontend, order_id, timestamp: timestamp(), version: '1.1' },
        merchant.secret,
      ),
      {},
    );
  },
  async backoffice() {
    await send('backoffice', 'GET', '/backoffice/transactions', null, { cookie: cookieHeader() });
  },
};

// RSS each second, and the load in 10 ms ticks, each kind at its rate.
const rss_samples: { t_s: number; rss_mb: number }[] = [];
const cpu_before = cpuSeconds(gateway.pid);
const started_ms = Date.now();
const sample = () => {
  const status = fs.readFileSync(`/proc/${gateway.pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN);
  rss_samples.push({ t_s: (Date.now() - started_ms) / 1000, rss_mb: kb / 1024 });
};
sample();
const sampler = setInterval(sample, 1000);
// The queued work, read from /metrics every 30 s: the notifications waiting to be sent (again) and
// the attempts made so far. Growth in RSS while these grow is work growing; while they are level, it is not.
const BACKLOG_EVERY_MS = 30_000;
const backlog_samples: { t_s: number; pending: number; attempts: number }[] = [];
const backlog_sampler = setInterval(() => {
  const t_s = (Date.now() - started_ms) / 1000;
  void scrapeMetrics(base).then((text) => {
    if (text === '') return;
    backlog_samples.push({
      t_s,
      pending: metricTotal(text, 'paygate_backlog', 'queue="notifications_pending"'),
      attempts: metricTotal(text, 'paygate_notification_attempts_total'),
    });
  });
}, BACKLOG_EVERY_MS);
const pending = new Set<Promise<unknown>>();
const owed: Record<Kind, number> = { sale: 0, refund: 0, checkout: 0, find: 0, backoffice: 0 };
const TICK_MS = 10;
// The first heap probe, 30 s into the load, long before the warm-up's end: its forced collections
// drop RSS by some 40 MB, and V8 grows its heap back over the following minute, so the probe must
// not fall near the part of the soak whose RSS is measured.
const FIRST_PROBE_AT_S = 30;
const first_probe = new Promise<void>((resolve) => {
  setTimeout(
    () => {
      probing = true;
      probeHeap(gateway.pid!, (Date.now() - started_ms) / 1000, { snapshot: plan.diff_snapshots })
        .then((probe) => probes.push(probe))
        .catch((error: unknown) => process.stderr.write(`heap probe failed: ${String(error)}\n`))
        .finally(() => {
          probing = false;
          probe_ended = performance.now();
          resolve();
        });
    },
    Math.min(plan.warm_up_s / 2, FIRST_PROBE_AT_S) * 1000,
  );
});
await new Promise<void>((resolve) => {
  const ticker = setInterval(() => {
    if (Date.now() - started_ms >= plan.duration_s * 1000) {
      clearInterval(ticker);
      resolve();
      return;
    }
    for (const kind of Object.keys(owed) as Kind[]) {
      owed[kind] += (plan.rates[kind] * TICK_MS) / 1000;
      for (; owed[kind] >= 1; owed[kind] -= 1) {
        const sent = actions[kind]();
        pending.add(sent);
        void sent.finally(() => pending.delete(sent));
      }
    }
  }, TICK_MS);
});
clearInterval(sampler);
clearInterval(backlog_sampler);
const gateway_cpu_s = cpuSeconds(gateway.pid) - cpu_before;
await Promise.race([Promise.all([...pending]), new Promise((resolve) => setTimeout(resolve, 15_000))]);
await first_probe;
// The second, once the load has stopped and its answers are in: what is still alive then is kept, not in flight.
await probeHeap(gateway.pid!, (Date.now() - started_ms) / 1000, { snapshot: true })
  .then((probe) => probes.push(probe))
  .catch((error: unknown) => process.stderr.write(`heap probe failed: ${String(error)}\n`));
const metrics = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }).then((r) => r.text());
const probe_result = await Promise.race([
  probe,
  new Promise((resolve) => setTimeout(() => resolve({ code: 'still waiting', ms: null }), 1_000)),
]);
await stop(gateway);
agent.destroy();
receiver.closeAllConnections();
receiver.close();

const summary = Object.fromEntries(
  Object.entries(stats).map(([kind, s]) => [
    kind,
    { sent: s.sent, answered: s.answered, errors: s.errors, statuses: s.statuses, p99_ms: percentile(s.latencies_ms, 99) },
  ]),
);
process.stdout.write(
  `${JSON.stringify({
    rss_samples,
    backlog_samples,
    kinds: summary,
    gateway_cpu_s,
    notified_local: notified.size,
    dead_dns: plan.dead_dns,
    queries_dropped,
    probe: probe_result,
    metrics: metrics
      .split('\n')
      .filter((line) => /^paygate_(notification_attempts_total|backlog|notification_oldest_due_seconds)\b/.test(line)),
    data_dir: path.basename(plan.data_dir),
    heap_probes: probes.map(({ by_kind: _, ...rest }) => rest),
    heap_largest: probes.length === 2 ? largestKinds(probes[1]!, 12) : [],
    heap_growth: probes.length === 2 && plan.diff_snapshots ? heapGrowth(probes[0]!, probes[1]!, 12) : [],
  })}\n`,
);
// harness.ts made a work directory on import that this process does not use (bench/run.ts removes the plan's).
fs.rmSync(WORK, { recursive: true, force: true });
process.exit(0);
