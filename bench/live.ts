// The live path of issue 29 (item 3), for `npm run bench` (BENCH_ONLY part `live`): sales
// through the `checkout` connector to the fake Checkout.com (bench/fake-checkout.ts) answering
// after 100 ms, on a live-mode gateway set up as an operator does (`paygate merchant create`,
// `paygate gateway create` with the connector's base_url pointing at the fake).
//
// 1. Merchant A alone at BENCH_LIVE_CONNECTIONS (500) connections, as fast as answered: its
//    throughput against what the gateway's CPU allows (its own CPU time per sale in the same run:
//    1000 / CPU ms per sale, per core it has) or connections / latency, whichever is lower; and
//    its p99 against the processor's latency plus 50 ms.
// 2. The same sales at 80% and at 50% of that throughput, spread evenly: the latency when not
//    saturated (CALM_FRACTIONS).
// 3. Two merchants, each on its own gateway with its own processor (A → fake A, B → fake B): the
//    split of sales between gateways is by merchant. Each sends at a rate that, with both
//    answering, keeps about half the gateway's core busy (PAIR_CORE_SHARE, from the 50% row's CPU
//    per sale; at most 25% of run 1's throughput each), spread evenly; first with both processors
//    answering, then with B's hanging (every request left unanswered until the gateway's
//    time-out, BENCH_LIVE_TIMEOUT_MS). A's approved sales per second and p99 are compared; B's
//    breaker and requests in flight are read from /metrics (admin token) four times a second
//    during both runs.
//
// Gateway on core 0; the load and the fakes on core 1 (taskset), as in the other rows.
import { type ChildProcess, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FAKE_CHECKOUT_SECRET_KEY } from '../test/support/checkout/fake.js';
import {
  CAN_PIN,
  cpuProfile,
  cpuSeconds,
  GATEWAY_CLI,
  GATEWAY_NODE_FLAGS,
  type LoadResult,
  BENCH_ADMIN_TOKEN,
  type Merchant,
  metricValue,
  peakRssMb,
  placed,
  ROOT,
  type Row,
  runLoad,
  saleBodies,
  statusNote,
  stop,
  type Target,
  waitForLine,
  waitHealthy,
  watchEventLoop,
  watchListenQueue,
  WORK,
  writeBodies,
} from './harness.js';
import { rowsTable, runContext, section, targetsTable } from './sections.js';

export interface LiveOptions {
  readonly base_port: number;
  readonly duration_s: number;
  /** Connections of run 1, and the most each stream of the others may open. */
  readonly connections: number;
  readonly processor_latency_ms: number;
  /** PAYGATE_PROCESSOR_TIMEOUT_MS of the gateway: how long a hanging processor holds a sale. */
  readonly processor_timeout_ms: number;
  /** How long the fakes keep an idle connection (bench/fake-checkout.ts). */
  readonly processor_keep_alive_ms: number;
}

export interface LiveReport {
  readonly rows: Row[];
  readonly targets: Target[];
  readonly notes: string[];
}

const ADMIN_TOKEN = BENCH_ADMIN_TOKEN;
const MASTER_KEY = 'c'.repeat(64);
const PROCESSING_CHANNEL = 'pc_paygatefake7xkq3mzt2vwnd5h';
const WEBHOOK_SECRET = 'whsec-bench-0123456789abcdef';
/**
 * Run 2's rates, as fractions of run 1's throughput. At 500 connections kept busy, group commit
 * gathers many sales into each commit; the same sales spread evenly come in smaller groups and
 * cost more each, so 80% of run 1's rate can already be more than the gateway carries (its
 * latency then grows through the run); 50% shows the latency of a gateway with room to spare.
 */
const CALM_FRACTIONS = [0.8, 0.5] as const;
/**
 * Run 3's rate for each merchant, at most: a fraction of run 1's throughput (both together at
 * half). At 40% each the gateway was saturated and what B's hanging processor did to A could not
 * be read from it.
 */
const PAIR_FRACTION_EACH = 0.25;
/**
 * The share of the gateway's core run 3's sales take with both processors answering, by the 50%
 * row's CPU per sale (sales spread evenly cost twice what they cost at 500 busy connections:
 * smaller commit groups). A processor that hangs leaves the gateway extra work for as long as its
 * time-outs last: each timed-out sale is recorded pending and each waiting sale refused, about
 * half again B's rate for a time-out's length. On a loaded host 25% each already took 92% of the
 * core (2026-12-07), so that work queued A's sales behind it (A's p99 +640 ms, all of it in the
 * second of B's time-outs) however well the guard kept B's sales apart; at half the core it has
 * room, and A's latency shows whether the guard does.
 */
const PAIR_CORE_SHARE = 0.5;
/** Each notification attempt fails at once at this closed port and is retried in 5 minutes. */
const SILENT = 'http://127.0.0.1:9/notify';

interface Fake {
  readonly child: ChildProcess;
  readonly url: string;
}

async function startFake(latency_ms: number, keep_alive_ms: number): Promise<Fake> {
  const script = path.join(ROOT, 'bench/fake-checkout.ts');
  const child = placed(1, process.execPath, ['--import', 'tsx', script, String(latency_ms), String(keep_alive_ms)]);
  const match = await waitForLine(child, /listening (\S+)/);
  return { child, url: match[1]! };
}

/** Stops a fake; its count of requests or answers that broke Checkout.com's description. */
async function stopFake(fake: Fake): Promise<number | null> {
  let out = '';
  fake.child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  await stop(fake.child);
  const match = /violations (\d+)/.exec(out);
  return match ? Number(match[1]) : null;
}

function cli(env: Record<string, string>, args: string[]): Record<string, unknown> {
  const done = spawnSync(process.execPath, [GATEWAY_CLI, ...args], { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8' });
  if (done.status !== 0) throw new Error(`paygate ${args.slice(0, 2).join(' ')} failed: ${done.stderr}`);
  return JSON.parse(done.stdout.trim().split('\n').pop()!) as Record<string, unknown>;
}

/** A merchant of the live gateway with its own `checkout` gateway pointing at `fake`. */
function addMerchant(env: Record<string, string>, name: string, fake: Fake): { merchant: Merchant; gateway_id: string } {
  const merchant = cli(env, ['merchant', 'create', '--merchant-id', name, '--secret', `${name}-secret-0123`]) as unknown as Merchant;
  const gateway = cli(env, [
    'gateway',
    'create',
    '--merchant-id',
    name,
    '--connector',
    'checkout',
    '--currencies',
    'USD',
    '--label',
    `checkout-${name}`,
    '--setting',
    `secret_key=${FAKE_CHECKOUT_SECRET_KEY}`,
    '--setting',
    `processing_channel_id=${PROCESSING_CHANNEL}`,
    '--setting',
    `webhook_secret=${WEBHOOK_SECRET}`,
    '--setting',
    `base_url=${fake.url}`,
  ]);
  return { merchant, gateway_id: String(gateway.gateway) };
}

interface GuardSample {
  readonly at_s: number;
  readonly state: number | null;
  readonly in_flight: number | null;
}

/** One sample of a metric for one gateway from /metrics text, or null. */
function gatewayValue(text: string, name: string, gateway_id: string, extra = ''): number | null {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) || !line.includes(`gateway_id="${gateway_id}"`) || !line.includes(extra)) continue;
    return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return null;
}

async function scrape(url: string): Promise<string> {
  const response = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  return response.text();
}

/** Samples a gateway's breaker and requests in flight every 250 ms until `done` settles. */
async function watchGuard(url: string, gateway_id: string, done: Promise<unknown>): Promise<GuardSample[]> {
  const samples: GuardSample[] = [];
  const started = Date.now();
  let finished = false;
  void done.finally(() => {
    finished = true;
  });
  while (!finished) {
    const text = await scrape(url).catch(() => '');
    samples.push({
      at_s: (Date.now() - started) / 1000,
      state: gatewayValue(text, 'paygate_processor_breaker_state', gateway_id),
      in_flight: gatewayValue(text, 'paygate_processor_in_flight', gateway_id),
    });
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return samples;
}

const STATE_NAMES = ['closed', 'half open', 'open'];

/** "closed 0–2.1 s, open 2.3–12.0 s; at most 256 in flight". */
function guardStory(samples: readonly GuardSample[]): string {
  const spans: { state: string; from: number; to: number }[] = [];
  for (const sample of samples) {
    const state = sample.state === null ? 'not yet shown' : (STATE_NAMES[sample.state] ?? String(sample.state));
    const last = spans[spans.length - 1];
    if (last && last.state === state) last.to = sample.at_s;
    else spans.push({ state, from: sample.at_s, to: sample.at_s });
  }
  const most = Math.max(0, ...samples.map((s) => s.in_flight ?? 0));
  return `${spans.map((s) => `${s.state} ${s.from.toFixed(1)}–${s.to.toFixed(1)} s`).join(', ')}; at most ${most} requests in flight`;
}

/** "120, 131, 650, …": when in the run a row's slow answers were sent (open-loop runs only). */
function slowestBySecond(load: LoadResult): string {
  return load.slowest_by_second_ms?.join(', ') ?? 'not recorded';
}

function approvedPerSecond(load: LoadResult, duration_s: number): number {
  return (load.transaction_statuses.approved ?? 0) / duration_s;
}

/** "approved 3990, pending 10" */
function outcomes(load: LoadResult): string {
  return Object.entries(load.transaction_statuses)
    .sort()
    .map(([status, n]) => `${status} ${n}`)
    .join(', ');
}

export async function runLive(options: LiveOptions): Promise<LiveReport> {
  const { duration_s, connections, processor_latency_ms: latency_ms } = options;
  const rows: Row[] = [];
  const targets: Target[] = [];
  const notes: string[] = [];
  const fake_a = await startFake(latency_ms, options.processor_keep_alive_ms);
  const fake_b = await startFake(latency_ms, options.processor_keep_alive_ms);
  const data_dir = fs.mkdtempSync(path.join(WORK, 'live-'));
  const url = `http://127.0.0.1:${options.base_port}`;
  const env: Record<string, string> = {
    PAYGATE_ENV: 'live',
    PAYGATE_DATA_DIR: data_dir,
    PORT: String(options.base_port),
    PAYGATE_LOG_LEVEL: 'warn',
    PAYGATE_RATE_LIMIT_ADDRESS_PER_MINUTE: '0',
    PAYGATE_RATE_LIMIT_MERCHANT_PER_MINUTE: '0',
    PAYGATE_MASTER_KEY: MASTER_KEY,
    PAYGATE_ADMIN_TOKEN: ADMIN_TOKEN,
    // The fakes are on 127.0.0.1 (a processor's test double on this network: decisions.md §13).
    PAYGATE_ALLOW_PRIVATE_URLS: 'true',
    PAYGATE_PROCESSOR_TIMEOUT_MS: String(options.processor_timeout_ms),
  };
  // A setup that fails (a bad setting, say) must not leave the fakes running.
  const { a, b } = await Promise.resolve()
    .then(() => ({ a: addMerchant(env, 'live-a', fake_a), b: addMerchant(env, 'live-b', fake_b) }))
    .catch(async (error: unknown) => {
      await Promise.all([stopFake(fake_a), stopFake(fake_b)]);
      throw error;
    });
  const gateway = placed(0, process.execPath, [...GATEWAY_NODE_FLAGS, GATEWAY_CLI, 'start'], env);
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  };
  gateway.stdout?.on('data', keep);
  gateway.stderr?.on('data', keep);
  try {
    await waitHealthy(url).catch((error: unknown) => {
      throw new Error(`${String(error)}: ${output}`);
    });
    const plan = (bodies_file: string, extra: Record<string, unknown> = {}) => ({
      url,
      path: '/api/process',
      bodies_file,
      connections,
      duration_s,
      ...extra,
    });
    const bodies = (merchant: Merchant, rate: number) =>
      writeBodies(saleBodies(merchant, Math.max(2_000, Math.ceil(rate * duration_s * 1.3)), SILENT));

    // A short run first, discarded: a fresh process is slower for its first seconds (JIT), and it sizes the bodies.
    const warm = await runLoad({ ...plan(bodies(a.merchant, 5_000 / duration_s)), duration_s: 3 });
    // Gateway B's too, at a gentle rate: its fake checks its first requests against the
    // published description (bench/fake-checkout.ts, some 4 ms each on the load's core), which
    // held B's first answers in run 3 back by up to 800 ms when B's first sales came there.
    await runLoad({ ...plan(bodies(b.merchant, 300)), duration_s: 2, overall_rate: 150 });

    // 1. As fast as answered at `connections` connections.
    const gateway_cpu_before = cpuSeconds(gateway.pid);
    const fake_cpu_before = cpuSeconds(fake_a.child.pid);
    // BENCH_CPU_PROF_DIR: a V8 CPU profile of this run, as of run.ts's.
    const profiled = await cpuProfile(gateway.pid, 'live-checkout');
    const started_ms = Date.now();
    const max_running = runLoad(plan(bodies(a.merchant, Math.max(warm.requests_per_s, 500) * 2)));
    const [loop, listen_queue] = await Promise.all([watchEventLoop(url, max_running), watchListenQueue(options.base_port, max_running)]);
    const max = await max_running;
    await profiled();
    const wall_s = (Date.now() - started_ms) / 1000;
    const shed = metricValue(await scrape(url).catch(() => ''), 'paygate_requests_shed_total');
    const gateway_cpu_s = cpuSeconds(gateway.pid) - gateway_cpu_before;
    // Approved sales only: a sale the gateway's guard refused unsent (its in-flight limit) is answered
    // quickly and cheaply, and counted, it made the throughput look higher and each sale cheaper.
    const approved = max.transaction_statuses.approved ?? 0;
    const approved_rps = approvedPerSecond(max, duration_s);
    const cpu_ms = (gateway_cpu_s * 1000) / Math.max(1, approved);
    const fake_cpu_ms = ((cpuSeconds(fake_a.child.pid) - fake_cpu_before) * 1000) / Math.max(1, approved);
    // What the CPU allows: the gateway is pinned to one core (all of them when it cannot be pinned).
    const cores = CAN_PIN ? 1 : os.cpus().length;
    const cpu_allows = (1000 / cpu_ms) * cores;
    const latency_allows = connections / (latency_ms / 1000);
    const bound = Math.min(cpu_allows, latency_allows);
    rows.push({
      name: `live sale through checkout to a processor answering after ${latency_ms} ms, ${connections} connections`,
      rps: approved_rps,
      p50: max.latency_p50_ms,
      p99: max.latency_p99_ms,
      rss_mb: peakRssMb(gateway.pid),
      cpu_ms,
      ratio: null,
      note: `requests/s and CPU ms/req count approved sales only; ${statusNote(max, ['0'])} (${outcomes(max)}); gateway's core busy ${Math.round((gateway_cpu_s / wall_s) * 100)}% of the run's ${wall_s.toFixed(1)} s (load start included); the fake processor ${fake_cpu_ms.toFixed(2)} CPU ms/sale on the load's core; event-loop delay at most ${loop === null ? '?' : loop.toFixed(0)} ms, ${shed ?? '?'} requests shed (HTTP 503, status 29; limits.md §8) since the gateway started${listen_queue === null ? '' : `; at most ${listen_queue} new connections waiting to be accepted (listen queue, read every 250 ms)`}`,
    });
    targets.push({
      target: `live sale throughput ≥ 90% of min(what the CPU allows, ${connections} / ${latency_ms / 1000} s = ${Math.round(latency_allows)}/s)`,
      measured: `${Math.round(approved_rps)} approved/s of ${Math.round(bound)}/s (${((approved_rps / bound) * 100).toFixed(1)}%); the CPU allows 1000 / ${cpu_ms.toFixed(2)} ms × ${cores} core${cores > 1 ? 's' : ''} = ${Math.round(cpu_allows)}/s`,
      met: approved_rps >= 0.9 * bound,
    });
    targets.push({
      target: `live sale p99 ≤ the processor's ${latency_ms} ms + 50 ms at ${connections} connections`,
      measured: `${max.latency_p99_ms} ms`,
      met: max.latency_p99_ms <= latency_ms + 50,
    });
    // Little's law: with `connections` requests always outstanding, the mean latency is connections / rate.
    notes.push(
      `With ${connections} sales always in flight the mean latency is ${connections} / throughput: ${Math.round((connections / max.requests_per_s) * 1000)} ms at ${Math.round(max.requests_per_s)}/s. A p99 of ${latency_ms + 50} ms at ${connections} connections needs at least ${Math.round(connections / ((latency_ms + 50) / 1000))} sales a second, ${(connections / ((latency_ms + 50) / 1000) / cpu_allows).toFixed(1)}× what this gateway's CPU allows here; the next rows show the latency below saturation.`,
    );

    // 2. Below saturation: fractions of run 1's throughput, spread evenly.
    // Each run's CPU per sale; the last (lowest) fraction's is what run 3's rate is chosen by.
    const calm_cpu_ms_each: number[] = [];
    for (const fraction of CALM_FRACTIONS) {
      const calm_rate = Math.max(1, Math.floor(approved_rps * fraction));
      const calm_cpu_before = cpuSeconds(gateway.pid);
      const calm = await runLoad(plan(bodies(a.merchant, calm_rate), { overall_rate: calm_rate }));
      const calm_cpu_ms = ((cpuSeconds(gateway.pid) - calm_cpu_before) * 1000) / Math.max(1, calm.total);
      calm_cpu_ms_each.push(calm_cpu_ms);
      rows.push({
        name: `live sale at ${fraction * 100}% of that throughput (${calm_rate}/s spread evenly, up to ${connections} connections)`,
        rps: calm.requests_per_s,
        p50: calm.latency_p50_ms,
        p99: calm.latency_p99_ms,
        rss_mb: peakRssMb(gateway.pid),
        cpu_ms: calm_cpu_ms,
        ratio: null,
        note: `CPU ms/req counts every answer; ${statusNote(calm, ['0'])} (${outcomes(calm)})`,
      });
    }

    // 3. Two gateways, each merchant on its own; first both answering, then B's processor hanging.
    const even_cpu_ms = calm_cpu_ms_each.at(-1) ?? cpu_ms;
    const share_allows = (PAIR_CORE_SHARE * 1000 * cores) / even_cpu_ms / 2;
    const each_rate = Math.max(1, Math.floor(Math.min(approved_rps * PAIR_FRACTION_EACH, share_allows)));
    notes.push(
      `Run 3's rate, each merchant: ${each_rate}/s, the lower of ${PAIR_FRACTION_EACH * 100}% of run 1's throughput (${Math.round(approved_rps * PAIR_FRACTION_EACH)}/s) and half of ${PAIR_CORE_SHARE * 100}% of ${cores} core${cores > 1 ? 's' : ''} at the ${CALM_FRACTIONS[CALM_FRACTIONS.length - 1]! * 100}% row's ${even_cpu_ms.toFixed(2)} CPU ms a sale (${Math.round(share_allows)}/s): a load the gateway carries with room, so that the work a hanging processor leaves it (each timed-out sale recorded, each waiting one refused) does not queue A's sales behind it on a core already full.`,
    );
    const pair = async (label: string, b_hangs: boolean) => {
      // BENCH_CPU_PROF_DIR: the both-answering run is profiled too (started before its load): sales
      // spread evenly come in smaller groups than run 1's, and its profile shows what that costs.
      const profiled_pair = b_hangs ? async () => {} : await cpuProfile(gateway.pid, 'live-pair-both');
      const loads = Promise.all([
        runLoad(plan(bodies(a.merchant, each_rate), { overall_rate: each_rate })),
        runLoad(plan(bodies(b.merchant, each_rate), { overall_rate: each_rate })),
      ]);
      const cpu_before = cpuSeconds(gateway.pid);
      const pair_started_ms = Date.now();
      const [guard_b, [load_a, load_b]] = await Promise.all([watchGuard(url, b.gateway_id, loads), loads]);
      const pair_cpu_s = cpuSeconds(gateway.pid) - cpu_before;
      const pair_wall_s = (Date.now() - pair_started_ms) / 1000;
      await profiled_pair();
      const pair_cpu_ms = (pair_cpu_s * 1000) / Math.max(1, load_a.total + load_b.total);
      const text = await scrape(url);
      const refused = ['circuit_open', 'in_flight_limit'].map(
        (reason) => `${reason} ${gatewayValue(text, 'paygate_processor_refused_total', b.gateway_id, `reason="${reason}"`) ?? 0}`,
      );
      rows.push({
        name: `${label}: merchant A's sales (gateway A), ${each_rate}/s spread evenly`,
        rps: approvedPerSecond(load_a, duration_s),
        p50: load_a.latency_p50_ms,
        p99: load_a.latency_p99_ms,
        rss_mb: peakRssMb(gateway.pid),
        cpu_ms: pair_cpu_ms,
        ratio: null,
        note: `requests/s counts approved sales only; ${statusNote(load_a, ['0'])} (${outcomes(load_a)}); gateway's core busy ${Math.round((pair_cpu_s / pair_wall_s) * 100)}% of the run's ${pair_wall_s.toFixed(1)} s (both merchants' sales, and the last answers' wait included); the slowest answer, ms, of the sales sent in each second: ${slowestBySecond(load_a)}`,
      });
      rows.push({
        name: `${label}: merchant B's sales (gateway B), ${each_rate}/s spread evenly`,
        rps: approvedPerSecond(load_b, duration_s),
        p50: load_b.latency_p50_ms,
        p99: load_b.latency_p99_ms,
        rss_mb: null,
        cpu_ms: null,
        ratio: null,
        note: `requests/s counts approved sales only; ${statusNote(load_b, b_hangs ? Object.keys(load_b.statuses) : ['0'])} (${outcomes(load_b)}); gateway B's breaker in /metrics: ${guardStory(guard_b)}; refused by its guard so far: ${refused.join(', ')}`,
      });
      return { load_a, guard_b };
    };
    const both = await pair('both processors answering', false);
    fake_b.child.kill('SIGUSR2');
    const hung = await pair(`B's processor hanging (time-out ${options.processor_timeout_ms} ms)`, true);
    const rate_before = approvedPerSecond(both.load_a, duration_s);
    const rate_after = approvedPerSecond(hung.load_a, duration_s);
    targets.push({
      target: "with B's processor hanging, A's approved sales/s ≥ 95% of A's with both answering",
      measured: `${rate_after.toFixed(0)}/s against ${rate_before.toFixed(0)}/s (${((rate_after / rate_before) * 100).toFixed(1)}%)`,
      met: rate_after >= 0.95 * rate_before,
    });
    // "Keep their latency": A's p99 against its own with both answering, within the 50 ms the
    // issue allows a sale over its processor's latency.
    targets.push({
      target: "with B's processor hanging, A's p99 ≤ A's p99 with both answering + 50 ms (A keeps its latency)",
      measured: `${hung.load_a.latency_p99_ms} ms against ${both.load_a.latency_p99_ms} ms`,
      met: hung.load_a.latency_p99_ms <= both.load_a.latency_p99_ms + 50,
    });
    targets.push({
      target: `with B's processor hanging, A's p99 ≤ the processor's ${latency_ms} ms + 50 ms`,
      measured: `${hung.load_a.latency_p99_ms} ms (both answering: ${both.load_a.latency_p99_ms} ms)`,
      met: hung.load_a.latency_p99_ms <= latency_ms + 50,
    });
    const opened = hung.guard_b.some((s) => s.state === 2);
    targets.push({
      target: "B's circuit breaker opens while its processor hangs (paygate_processor_breaker_state 2)",
      measured: opened ? `open from ${hung.guard_b.find((s) => s.state === 2)!.at_s.toFixed(1)} s` : 'never seen open',
      met: opened,
    });
    notes.push(
      `Live rows: PAYGATE_ENV=live, SQLite, two merchants each with one \`checkout\` gateway (USD) created with \`paygate gateway create\`, base_url the fake's; the sales choose their gateway by merchant. PAYGATE_PROCESSOR_TIMEOUT_MS=${options.processor_timeout_ms} (shortened from 20 s so that the time-outs fall within a run), PAYGATE_PROCESSOR_MAX_IN_FLIGHT, _WAIT_MS, _MAX_WAITING, _BREAKER_FAILURES and _BREAKER_OPEN_SECONDS at their defaults (256, 2000, 1024, 5, 30), and so is load shedding (PAYGATE_SHED_EVENT_LOOP_DELAY_MS 200). The fake sends no webhooks; notifications go to a closed port as in the rows above.`,
    );
  } finally {
    await stop(gateway);
    const violations = [await stopFake(fake_a), await stopFake(fake_b)];
    notes.push(
      `The fake processors' record of requests or answers that broke Checkout.com's published description: ${violations.map((v) => v ?? 'not read').join(' and ')}.`,
    );
  }
  return { rows, targets, notes };
}

/** The live rows as their section of RESULTS.md (sections.ts). */
export async function liveSection(options: LiveOptions): Promise<string> {
  const context = runContext(
    `${options.duration_s} s per run; ${CAN_PIN ? 'gateway pinned to core 0, the load and both fake processors to core 1 (taskset)' : 'not pinned (taskset unavailable or one core)'}`,
  );
  const report = await runLive(options);
  return section('live', 'Issue 29, item 3: the live path', context, [
    `Sales through the \`checkout\` connector to the fake Checkout.com (test/support/checkout/fake.ts in a process of its own, bench/fake-checkout.ts) answering each request after ${options.processor_latency_ms} ms on a timer and keeping idle connections ${options.processor_keep_alive_ms / 1000} s (BENCH_LIVE_KEEP_ALIVE_MS; below about 2 s the gateway's client, undici, would open a connection for every request). "What the CPU allows" is 1000 / (the gateway's CPU ms per sale in the same run) × the cores it has (1: it is pinned); the throughput target is 90% of that or of connections / the processor's latency, whichever is lower. "CPU ms/req" is the gateway's CPU time divided by the sales it answered (in the two-gateway rows, by both merchants' sales).`,
    '',
    ...rowsTable(report.rows),
    '',
    '### Targets of issue 29 (item 3) in this run',
    '',
    ...targetsTable(report.targets),
    '',
    ...report.notes.map((n) => `- ${n}`),
    '',
  ]);
}
