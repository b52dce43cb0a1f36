// What the benchmark's parts share (bench/run.ts, live.ts, soak.ts): placing processes on cores,
// waiting for them, reading their CPU time and memory from /proc, the load process (load.ts) and
// the signed bodies it sends, and the figures' formatting. Linux only (/proc, taskset).
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { signBody } from '../src/domain/signing.js';
import { SALE_CUSTOMER } from '../test/support/bodies.js';
import { gatewayNodeFlags } from '../scripts/node-flags.mjs';

export const ROOT = path.resolve(import.meta.dirname, '..');
export const CAN_PIN = os.cpus().length >= 2 && spawnSync('taskset', ['-c', '0', 'true']).status === 0;
/** Plans, bodies and data directories of this run; bench/run.ts removes it at the end. */
export const WORK = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-bench-'));
export const CLOCK_TICKS = 100; // /proc/<pid>/stat utime and stime are in 1/100 s on Linux
/**
 * The gateway's command-line entry every part starts: this checkout's build, or the one
 * BENCH_GATEWAY_DIST names (bench/compare.ts measures another commit's build with this one's bench).
 */
export const GATEWAY_CLI = path.join(
  process.env.BENCH_GATEWAY_DIST ? path.resolve(process.env.BENCH_GATEWAY_DIST) : path.join(ROOT, 'dist'),
  'cli.js',
);

/**
 * Node's flags for the gateway, as npm start gives them (scripts/node-flags.mjs: the heap bound),
 * and BENCH_EXTRA_NODE_FLAGS (space-separated) after them, to measure a flag before it ships.
 */
export const GATEWAY_NODE_FLAGS: readonly string[] = [
  ...gatewayNodeFlags(),
  ...(process.env.BENCH_EXTRA_NODE_FLAGS ?? '').split(' ').filter((flag) => flag !== ''),
];

export interface LoadResult {
  requests_per_s: number;
  total: number;
  latency_p50_ms: number;
  latency_p99_ms: number;
  errors: number;
  timeouts: number;
  non_2xx: number;
  notifications_expected: number;
  notifications_received: number;
  statuses: Record<string, number>;
  transaction_statuses: Record<string, number>;
  /** Open-loop runs only (bench/load.ts): the slowest answer of the requests sent in each second. */
  slowest_by_second_ms?: number[];
}

export interface Row {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  rss_mb: number | null;
  cpu_ms: number | null;
  ratio: number | null;
  note: string;
}

export interface Target {
  target: string;
  measured: string;
  met: boolean | null;
}

/** Core 0 for servers, core 1 for the load; 'any' leaves the process to the scheduler. */
export type Placement = 0 | 1 | 'any';

export function placed(where: Placement, command: string, args: string[], env: Record<string, string> = {}): ChildProcess {
  const full = CAN_PIN && where !== 'any' ? (['taskset', ['-c', String(where), command, ...args]] as const) : ([command, args] as const);
  // taskset execs the command in place, so child.pid is the node process itself.
  return spawn(full[0], [...full[1]], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Node's arguments for a bench script that speaks to the gateway's inspector (Node 20 has WebSocket only behind a flag). */
export const TSX_WITH_WEBSOCKET = ['--experimental-websocket', '--no-warnings', '--import', 'tsx'] as const;

/**
 * With BENCH_CPU_PROF_DIR set, starts a V8 CPU profile of the running gateway `pid`
 * (cpu-profile.ts, on the load's core) and returns what ends it and writes
 * `<BENCH_CPU_PROF_DIR>/<name>.cpuprofile`; without it, nothing is profiled and the end does nothing.
 */
export async function cpuProfile(pid: number | undefined, name: string): Promise<() => Promise<void>> {
  const dir = process.env.BENCH_CPU_PROF_DIR ? path.resolve(process.env.BENCH_CPU_PROF_DIR) : null;
  if (dir === null || pid === undefined) return async () => {};
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.cpuprofile`);
  const profiler = placed(1, process.execPath, [...TSX_WITH_WEBSOCKET, 'bench/cpu-profile.ts', String(pid), file]);
  await waitForLine(profiler, /^profiling$/m);
  return async () => {
    const exited = new Promise<number | null>((resolve) => profiler.once('exit', resolve));
    profiler.kill('SIGUSR2');
    if ((await exited) !== 0) throw new Error(`the CPU profile ${file} was not written`);
  };
}

export function waitForLine(child: ChildProcess, pattern: RegExp, timeout_ms = 30_000): Promise<RegExpExecArray> {
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
    child.stderr?.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
    });
  });
}

export async function waitHealthy(base: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (
      await fetch(`${base}/healthz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${base} never became healthy`);
}

/** The process and its children (cluster workers). */
export function processTree(pid: number | undefined): number[] {
  if (pid === undefined) return [];
  try {
    const children = fs
      .readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter((p) => p !== '')
      .map(Number);
    return [pid, ...children.flatMap((child) => processTree(child))];
  } catch {
    return [pid];
  }
}

export function peakRssMb(pid: number | undefined): number | null {
  let total = 0;
  for (const id of processTree(pid)) {
    try {
      const match = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${id}/status`, 'utf8'));
      if (match) total += Number(match[1]);
    } catch {
      // gone
    }
  }
  return total === 0 ? null : Math.round(total / 1024);
}

/** CPU seconds (user + system) used so far by the process and its children. */
export function cpuSeconds(pid: number | undefined): number {
  let ticks = 0;
  for (const id of processTree(pid)) {
    try {
      const fields = fs
        .readFileSync(`/proc/${id}/stat`, 'utf8')
        .replace(/^.*\) /, '')
        .split(' ');
      ticks += Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15 of stat)
    } catch {
      // gone
    }
  }
  return ticks / CLOCK_TICKS;
}

export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  await new Promise((resolve) => {
    child.once('exit', resolve);
    setTimeout(resolve, 10_000);
  });
}

export async function runLoad(plan: Record<string, unknown>): Promise<LoadResult> {
  const plan_file = path.join(WORK, `plan-${randomBytes(4).toString('hex')}.json`);
  fs.writeFileSync(plan_file, JSON.stringify(plan));
  const child = placed(1, process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench/load.ts'), plan_file]);
  let out = '';
  let err = '';
  child.stdout?.on('data', (c: Buffer) => {
    out += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    err += c.toString();
  });
  const code = await new Promise<number>((resolve) => child.once('exit', (c) => resolve(c ?? 1)));
  if (code !== 0) throw new Error(`load failed: ${err}`);
  return JSON.parse(out.trim().split('\n').pop()!) as LoadResult;
}

export interface Merchant {
  merchant_id: string;
  secret: string;
  application_key: string;
  frontend: string;
}

export function signed(body: Record<string, unknown>, secret: string): string {
  return JSON.stringify({ ...body, signature: signBody(body, secret) });
}

/** A sale's customer fields: the tests' valid set (test/support/bodies.ts), so the bench sends what the tests check. */
export const CUSTOMER = SALE_CUSTOMER;

/** Signed sales (CVV 568, approved), each with a new order_id; signed now, so sent within the 60-second window. */
export function saleBodies(merchant: Merchant, count: number, notification_url: string): string[] {
  const timestamp = Math.floor(Date.now() / 1000);
  const run = randomBytes(4).toString('hex');
  return Array.from({ length: count }, (_, i) =>
    signed(
      {
        merchant_id: merchant.merchant_id,
        application_key: merchant.application_key,
        transaction_type: 'sale',
        order_id: `bench-${run}-${i}`,
        amount: 1999,
        currency: 'USD',
        card_number: '4111111111111111',
        card_exp: '12/2035',
        cvv: '568',
        pin: `cust-${i % 1000}`,
        ...CUSTOMER,
        return_url: 'https://merchant.example/return',
        notification_url,
        timestamp,
        version: '1.2',
      },
      merchant.secret,
    ),
  );
}

export function writeBodies(bodies: string[]): string {
  const file = path.join(WORK, `bodies-${randomBytes(4).toString('hex')}.json`);
  fs.writeFileSync(file, JSON.stringify(bodies));
  return file;
}

export function statusNote(load: LoadResult, expected: readonly string[]): string {
  const parts = Object.entries(load.statuses)
    .sort()
    .map(([status, n]) => `status ${status}: ${n}`);
  const unexpected = Object.entries(load.statuses)
    .filter(([status]) => !expected.includes(status))
    .reduce((sum, [, n]) => sum + n, 0);
  const transport = load.errors + load.timeouts + load.non_2xx;
  return `${parts.join(', ')}${unexpected > 0 ? ` (**${unexpected} unexpected**)` : ''}${transport > 0 ? `; errors ${load.errors}, time-outs ${load.timeouts}, non-2xx ${load.non_2xx}` : ''}`;
}

export function percentile(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export function fmt(value: number): string {
  return Number.isFinite(value) ? value.toFixed(1) : '';
}

/** The operator token every bench gateway is started with, for its /metrics. */
export const BENCH_ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef';

export async function scrapeMetrics(url: string): Promise<string> {
  return fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${BENCH_ADMIN_TOKEN}` } })
    .then((response) => response.text())
    .catch(() => '');
}

/** An unlabelled metric's value from /metrics text, or null. */
export function metricValue(text: string, name: string): number | null {
  const value = new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1];
  return value === undefined ? null : Number(value);
}

/** The sum of a labelled metric's samples from /metrics text whose labels include `labels` (all of them by default). */
export function metricTotal(text: string, name: string, labels = ''): number {
  let total = 0;
  for (const line of text.split('\n'))
    if (line.startsWith(`${name}{`) && line.includes(labels)) total += Number(line.slice(line.lastIndexOf(' ') + 1));
  return total;
}

/** The highest of `read`'s values, read every `every_ms` until `done` settles; null when none was read. */
async function highestUntil(
  done: Promise<unknown>,
  every_ms: number,
  read: () => Promise<number | null> | number | null,
): Promise<number | null> {
  let finished = false;
  void done.finally(() => {
    finished = true;
  });
  let highest: number | null = null;
  while (!finished) {
    await new Promise((resolve) => setTimeout(resolve, every_ms));
    const value = await read();
    if (value !== null) highest = Math.max(highest ?? 0, value);
  }
  return highest;
}

/**
 * The most connections seen waiting in the listen queue of `port` (accepted by the kernel, not
 * yet by the server) until `done` settles, read with `ss` every 250 ms; null without `ss`. A
 * saturated Node server accepts one connection per turn of its loop (libuv/libuv#3696), so a
 * burst of new connections waits there, outside the server's own timings (docs/limits.md §8).
 */
export function watchListenQueue(port: number, done: Promise<unknown>): Promise<number | null> {
  return highestUntil(done, 250, () => {
    const listing = spawnSync('ss', ['-ltnH', `sport = :${port}`], { encoding: 'utf8' });
    const waiting = listing.status === 0 ? Number(listing.stdout.trim().split(/\s+/)[1]) : Number.NaN;
    return Number.isFinite(waiting) ? waiting : null;
  });
}

/**
 * The highest `paygate_event_loop_delay_ms` (the mean delay over a second that load shedding
 * reads, src/http/load-shedding.ts) in samples each second until `done` settles; null when none
 * was read. With several processes on one port it is whichever answered.
 */
export function watchEventLoop(url: string, done: Promise<unknown>): Promise<number | null> {
  return highestUntil(done, 1_000, async () => metricValue(await scrapeMetrics(url), 'paygate_event_loop_delay_ms'));
}
