// The load generator, run in its own process (pinned to its own core when possible).
// Reads a plan from argv[2] (JSON file), drives autocannon, prints one JSON result line.
// For notification lag it also runs the merchant's receiver and pairs each answer's
// trace_id with the notification's arrival.
import fs from 'node:fs';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { signBody } from '../src/domain/signing.js';

interface Plan {
  readonly url: string;
  readonly path: string;
  readonly bodies_file: string;
  readonly connections: number;
  readonly duration_s: number;
  /** Requests per second for the whole run; absent means as fast as possible. */
  readonly overall_rate?: number;
  /** Port of the notification receiver to run; absent means none. */
  readonly receiver_port?: number;
  /** Where to write {trace_id: wall-clock ms of receipt} for the orchestrator to pair with commit times. */
  readonly receipts_file?: string;
  /** The merchant's secret: the receiver acknowledges each notification with a signed status 0, as a merchant does. */
  readonly merchant_secret?: string;
}

const plan = JSON.parse(fs.readFileSync(process.argv[2]!, 'utf8')) as Plan;
const bodies = JSON.parse(fs.readFileSync(plan.bodies_file, 'utf8')) as string[];
let next = 0;

const answered = new Set<number>();
/** How many answers carried each `status` (the gateway answers HTTP 200 for most refusals, so non-2xx alone hides them). */
const statuses: Record<string, number> = {};
/** How many answers carried each `transaction_status` (approved, pending, error…; absent: none). */
const transaction_statuses: Record<string, number> = {};
const received_at = new Map<number, number>();
let receiver: http.Server | null = null;
if (plan.receiver_port !== undefined) {
  receiver = http.createServer((request, response) => {
    let text = '';
    request.on('data', (chunk: Buffer) => {
      text += chunk.toString();
    });
    request.on('end', () => {
      const now = Date.now();
      try {
        const trace_id = (JSON.parse(text) as { trace_id: number }).trace_id;
        if (!received_at.has(trace_id)) received_at.set(trace_id, now);
      } catch {
        /* counted as missing */
      }
      // A signed status 0 (spec §6.3): the notification is delivered and not sent again.
      const reply: Record<string, unknown> = { status: 0, description: 'OK', version: '1.2', timestamp: Math.floor(now / 1000) };
      if (plan.merchant_secret !== undefined) reply.signature = signBody(reply, plan.merchant_secret);
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reply));
    });
  });
  await new Promise<void>((resolve) => receiver!.listen(plan.receiver_port, '127.0.0.1', resolve));
}

interface LoadSummary {
  readonly requests_per_s: number;
  readonly total: number;
  readonly latency_p50_ms: number;
  readonly latency_p99_ms: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly non_2xx: number;
  /** Open loop only: the slowest answer among the requests sent in each second of the run, ms. */
  readonly slowest_by_second_ms?: number[];
}

/** Counts an answer's `status`, and for the lag runs its trace_id. */
function onAnswer(body: string): void {
  // A regular expression, not JSON.parse: cheap enough not to slow the load down at the ceiling's rate.
  const key = /"status":(-?\d+)/.exec(body)?.[1] ?? 'unreadable';
  statuses[key] = (statuses[key] ?? 0) + 1;
  const transaction_status = /"transaction_status":"(\w+)"/.exec(body)?.[1] ?? 'none';
  transaction_statuses[transaction_status] = (transaction_statuses[transaction_status] ?? 0) + 1;
  if (plan.receiver_port === undefined || key !== '0') return;
  const trace_id = /"trace_id":(\d+)/.exec(body)?.[1];
  if (trace_id !== undefined) answered.add(Number(trace_id));
}

function nextBody(): string {
  const body = bodies[next % bodies.length]!;
  next += 1;
  return body;
}

/** As fast as the server answers: autocannon, `connections` requests outstanding at all times. */
async function closedLoop(): Promise<LoadSummary> {
  const result = await autocannon({
    url: plan.url,
    connections: plan.connections,
    duration: plan.duration_s,
    requests: [
      {
        method: 'POST',
        path: plan.path,
        headers: { 'content-type': 'application/json' },
        setupRequest: (request) => ({ ...request, body: nextBody() }),
        onResponse: (_status: number, body: string) => onAnswer(body),
      },
    ],
  });
  return {
    requests_per_s: result.requests.average,
    total: result.requests.total,
    latency_p50_ms: result.latency.p50,
    latency_p99_ms: result.latency.p99,
    errors: result.errors,
    timeouts: result.timeouts,
    non_2xx: result.non2xx,
  };
}

/**
 * At a fixed rate, spread evenly: `rate` requests a second sent in 5 ms ticks over at most
 * `connections` kept-alive connections. autocannon's overallRate released each second's
 * requests together at the start of the second; those bursts, not the gateway, dominated the
 * notification lag measured with it.
 */
async function openLoop(rate: number): Promise<LoadSummary> {
  const TICK_MS = 5;
  const agent = new http.Agent({ keepAlive: true, maxSockets: plan.connections });
  const target = new URL(plan.path, plan.url);
  const latencies: number[] = [];
  const slowest_by_second_ms: number[] = [];
  const run_started = performance.now();
  let errors = 0;
  let non_2xx = 0;
  let owed = 0;
  const pending = new Set<Promise<void>>();
  const send = (): Promise<void> =>
    new Promise((resolve) => {
      const body = nextBody();
      const started = performance.now();
      const request = http.request(
        target,
        { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
        (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => {
            text += chunk;
          });
          response.on('end', () => {
            const latency_ms = performance.now() - started;
            latencies.push(latency_ms);
            const second = Math.floor((started - run_started) / 1000);
            slowest_by_second_ms[second] = Math.max(slowest_by_second_ms[second] ?? 0, Math.round(latency_ms));
            if ((response.statusCode ?? 0) >= 300) non_2xx += 1;
            onAnswer(text);
            resolve();
          });
        },
      );
      request.on('error', () => {
        errors += 1;
        resolve();
      });
      request.end(body);
    });
  const end_at = performance.now() + plan.duration_s * 1000;
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      if (performance.now() >= end_at) {
        clearInterval(timer);
        resolve();
        return;
      }
      owed += (rate * TICK_MS) / 1000;
      for (; owed >= 1; owed -= 1) {
        const sent = send();
        pending.add(sent);
        void sent.then(() => pending.delete(sent));
      }
    }, TICK_MS);
  });
  await Promise.all([...pending]);
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (p: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? Number.NaN);
  return {
    requests_per_s: latencies.length / plan.duration_s,
    total: latencies.length,
    latency_p50_ms: at(0.5),
    latency_p99_ms: at(0.99),
    errors,
    timeouts: 0,
    non_2xx,
    slowest_by_second_ms: Array.from(slowest_by_second_ms, (ms) => ms ?? 0),
  };
}

const result = plan.overall_rate ? await openLoop(plan.overall_rate) : await closedLoop();

if (receiver) {
  // Let the last notifications arrive (bounded).
  const deadline = Date.now() + 10_000;
  while ([...answered].some((id) => !received_at.has(id)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  receiver.closeAllConnections();
  receiver.close();
  if (plan.receipts_file) fs.writeFileSync(plan.receipts_file, JSON.stringify(Object.fromEntries(received_at)));
}

process.stdout.write(
  `${JSON.stringify({
    ...result,
    notifications_expected: answered.size,
    notifications_received: [...answered].filter((id) => received_at.has(id)).length,
    statuses,
    transaction_statuses,
  })}\n`,
);
