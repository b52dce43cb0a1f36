// One run of bench/even-rate.ts, in a process of its own (harness.ts takes the build to measure,
// BENCH_GATEWAY_DIST, when it is imported). BENCH_EVEN_SUBJECT says what runs, pinned to core 0:
// `gateway` (a fresh SQLite sandbox gateway, the default), or one of the reference servers,
// `ceiling` (bench/ceiling-server.ts, bare Fastify) or `floor` (bench/floor-server.ts, the least
// durable signed sale). 4 s of sales not counted, then BENCH_DURATION_S (15) of new sales at
// BENCH_EVEN_RATE a second spread evenly, each notification delivered to the load's receiver;
// then 10 s at saturation (50 connections), so that each subject's even-rate cost is read against
// its own saturated cost in the same process. Prints one JSON line.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {
  CLOCK_TICKS,
  GATEWAY_CLI,
  GATEWAY_NODE_FLAGS,
  type Merchant,
  ROOT,
  WORK,
  cpuSeconds,
  placed,
  runLoad,
  saleBodies,
  stop,
  waitForLine,
  waitHealthy,
  writeBodies,
} from './harness.js';

const RATE = Number(process.env.BENCH_EVEN_RATE ?? '300');
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? '15');
const SATURATED_S = 10;
const WARM_UP_S = 4;
/** Up to this many sales in flight at once: far above what the rate needs, so the pace stays even. */
const CONNECTIONS = 200;
/** The saturated run's connections, as bench/run.ts's rows. */
const SATURATED_CONNECTIONS = 50;
/** New sales for the saturated run: more than any subject but the ceiling answers in it (the ceiling takes them again). */
const SATURATED_BODIES = 40_000;
const SUBJECTS = ['gateway', 'ceiling', 'floor'] as const;
type Subject = (typeof SUBJECTS)[number];
const subject = (process.env.BENCH_EVEN_SUBJECT ?? 'gateway') as Subject;
if (!SUBJECTS.includes(subject)) throw new Error(`BENCH_EVEN_SUBJECT: one of ${SUBJECTS.join(', ')}`);

/** The main thread's CPU seconds (its task has the process's id), from /proc. */
function mainThreadCpuSeconds(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/** The one merchant every subject is sent sales of: the gateway creates it, the reference servers are given its secret. */
const MERCHANT_ID = 'bench';
const MERCHANT_SECRET = 'bench-secret-0123';

const port = 38_000 + Math.floor(Math.random() * 1_000);
const receiver_port = port + 1_000;
const url = `http://127.0.0.1:${port}`;

/** The subject started and ready, with the merchant whose secret signs the bodies it is sent. */
async function start(): Promise<{ readonly server: ReturnType<typeof placed>; readonly merchant: Merchant }> {
  if (subject !== 'gateway') {
    const merchant: Merchant = { merchant_id: MERCHANT_ID, secret: MERCHANT_SECRET, application_key: 'x', frontend: 'x' };
    const server = placed(0, process.execPath, ['--import', 'tsx', path.join(ROOT, `bench/${subject}-server.ts`), String(port)], {
      FLOOR_SECRET: merchant.secret,
    });
    await waitForLine(server, /listening (\d+)/);
    return { server, merchant };
  }
  const data_dir = fs.mkdtempSync(path.join(WORK, 'even-'));
  const env = {
    PAYGATE_DATA_DIR: data_dir,
    PORT: String(port),
    PAYGATE_LOG_LEVEL: 'warn',
    // One address and one merchant send everything: the rate limits would measure themselves.
    PAYGATE_RATE_LIMIT_ADDRESS_PER_MINUTE: '0',
    PAYGATE_RATE_LIMIT_MERCHANT_PER_MINUTE: '0',
  };
  const created = spawnSync(
    process.execPath,
    [GATEWAY_CLI, 'merchant', 'create', '--merchant-id', MERCHANT_ID, '--secret', MERCHANT_SECRET],
    { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8' },
  );
  if (created.status !== 0) throw new Error(`merchant create failed: ${created.stderr}`);
  const server = placed(0, process.execPath, [...GATEWAY_NODE_FLAGS, GATEWAY_CLI, 'start'], env);
  await waitHealthy(url);
  return { server, merchant: JSON.parse(created.stdout) as Merchant };
}

const { server, merchant } = await start();
try {
  const notify_url = `http://127.0.0.1:${receiver_port}/notify`;
  // The ceiling sends no notifications: the load waits for none. The others' are delivered in both runs.
  const receiving = subject === 'ceiling' ? {} : { receiver_port, merchant_secret: merchant.secret };
  const plan = (duration_s: number) => ({
    url,
    path: '/api/process',
    connections: CONNECTIONS,
    duration_s,
    overall_rate: RATE,
    ...receiving,
    bodies_file: writeBodies(saleBodies(merchant, Math.ceil(RATE * duration_s * 1.2), notify_url)),
  });
  await runLoad(plan(WARM_UP_S));
  await new Promise((resolve) => setTimeout(resolve, 1_000)); // the warm-up's last notifications recorded
  const measured = plan(DURATION_S);
  const cpu_before = cpuSeconds(server.pid);
  const main_before = mainThreadCpuSeconds(server.pid!);
  const load = await runLoad(measured);
  const per_sale_ms = (seconds: number, total: number) => (seconds * 1000) / Math.max(1, total);
  const cpu_ms_per_sale = per_sale_ms(cpuSeconds(server.pid) - cpu_before, load.total);
  const main_thread_cpu_ms_per_sale = per_sale_ms(mainThreadCpuSeconds(server.pid!) - main_before, load.total);
  await new Promise((resolve) => setTimeout(resolve, 1_000)); // the even run's last notifications recorded
  const saturated_cpu_before = cpuSeconds(server.pid);
  const saturated = await runLoad({
    url,
    path: '/api/process',
    connections: SATURATED_CONNECTIONS,
    duration_s: SATURATED_S,
    ...receiving,
    bodies_file: writeBodies(saleBodies(merchant, SATURATED_BODIES, notify_url)),
  });
  console.log(
    JSON.stringify({
      requests_per_s: load.requests_per_s,
      cpu_ms_per_sale,
      main_thread_cpu_ms_per_sale,
      p99_ms: load.latency_p99_ms,
      notified: subject === 'ceiling' ? '' : `${load.notifications_received}/${load.notifications_expected}`,
      saturated_requests_per_s: saturated.requests_per_s,
      saturated_cpu_ms_per_sale: per_sale_ms(cpuSeconds(server.pid) - saturated_cpu_before, saturated.total),
    }),
  );
} finally {
  await stop(server);
}
