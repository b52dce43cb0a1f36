// The load generator, run in its own process (pinned to its own core when possible).
// Reads a plan from argv[2] (JSON file), drives autocannon, prints one JSON result line.
// For notification lag it also runs the merchant's receiver and pairs each answer's
// trace_id with the notification's arrival.
import fs from 'node:fs';
import http from 'node:http';
import autocannon from 'autocannon';

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
}

const plan = JSON.parse(fs.readFileSync(process.argv[2]!, 'utf8')) as Plan;
const bodies = JSON.parse(fs.readFileSync(plan.bodies_file, 'utf8')) as string[];
let next = 0;

const answered = new Set<number>();
const received_at = new Map<number, number>();
let receiver: http.Server | null = null;
if (plan.receiver_port !== undefined) {
  receiver = http.createServer((request, response) => {
    let text = '';
    request.on('data', (chunk: Buffer) => { text += chunk.toString(); });
    request.on('end', () => {
      const now = Date.now();
      try {
        const trace_id = (JSON.parse(text) as { trace_id: number }).trace_id;
        if (!received_at.has(trace_id)) received_at.set(trace_id, now);
      } catch { /* counted as missing */ }
      // An unsigned reply means "resend" to the gateway; the bench measures first deliveries only.
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"status":0}');
    });
  });
  await new Promise<void>((resolve) => receiver!.listen(plan.receiver_port, '127.0.0.1', resolve));
}

const result = await autocannon({
  url: plan.url,
  connections: plan.connections,
  duration: plan.duration_s,
  ...(plan.overall_rate ? { overallRate: plan.overall_rate } : {}),
  requests: [{
    method: 'POST',
    path: plan.path,
    headers: { 'content-type': 'application/json' },
    setupRequest: (request) => {
      const body = bodies[next % bodies.length]!;
      next += 1;
      return { ...request, body };
    },
    onResponse: (_status: number, body: string) => {
      if (plan.receiver_port === undefined) return;
      try {
        const trace_id = (JSON.parse(body) as { trace_id?: number }).trace_id;
        if (typeof trace_id === 'number') answered.add(trace_id);
      } catch { /* ignore */ }
    },
  }],
});

if (receiver) {
  // Let the last notifications arrive (bounded).
  const deadline = Date.now() + 10_000;
  while ([...answered].some((id) => !received_at.has(id)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  receiver.closeAllConnections();
  receiver.close();
  if (plan.receipts_file) fs.writeFileSync(plan.receipts_file, JSON.stringify(Object.fromEntries(received_at)));
}

process.stdout.write(`${JSON.stringify({
  requests_per_s: result.requests.average,
  total: result.requests.total,
  latency_p50_ms: result.latency.p50,
  latency_p99_ms: result.latency.p99,
  errors: result.errors,
  timeouts: result.timeouts,
  non_2xx: result.non2xx,
  notifications_expected: answered.size,
  notifications_received: [...answered].filter((id) => received_at.has(id)).length,
})}\n`);
