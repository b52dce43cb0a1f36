// One run of bench/even-rate.ts, in a process of its own (harness.ts takes the build to measure,
// BENCH_GATEWAY_DIST, when it is imported): a fresh SQLite sandbox gateway pinned to core 0,
// 4 s of sales not counted, then BENCH_DURATION_S (15) of new sales at BENCH_EVEN_RATE a second
// spread evenly, each notification delivered to the load's receiver. Prints one JSON line.
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
  waitHealthy,
  writeBodies,
} from './harness.js';

const RATE = Number(process.env.BENCH_EVEN_RATE ?? '300');
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? '15');
const WARM_UP_S = 4;
/** Up to this many sales in flight at once: far above what the rate needs, so the pace stays even. */
const CONNECTIONS = 200;

/** The main thread's CPU seconds (its task has the process's id), from /proc. */
function mainThreadCpuSeconds(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

const port = 38_000 + Math.floor(Math.random() * 1_000);
const receiver_port = port + 1_000;
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
  [GATEWAY_CLI, 'merchant', 'create', '--merchant-id', 'bench', '--secret', 'bench-secret-0123'],
  {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: 'utf8',
  },
);
if (created.status !== 0) throw new Error(`merchant create failed: ${created.stderr}`);
const merchant = JSON.parse(created.stdout) as Merchant;
const gateway = placed(0, process.execPath, [...GATEWAY_NODE_FLAGS, GATEWAY_CLI, 'start'], env);
try {
  const url = `http://127.0.0.1:${port}`;
  await waitHealthy(url);
  const plan = (duration_s: number) => ({
    url,
    path: '/api/process',
    connections: CONNECTIONS,
    duration_s,
    overall_rate: RATE,
    receiver_port,
    receipts_file: path.join(WORK, `even-receipts-${port}.json`),
    merchant_secret: merchant.secret,
    bodies_file: writeBodies(saleBodies(merchant, Math.ceil(RATE * duration_s * 1.2), `http://127.0.0.1:${receiver_port}/notify`)),
  });
  await runLoad(plan(WARM_UP_S));
  await new Promise((resolve) => setTimeout(resolve, 1_000)); // the warm-up's last notifications recorded
  const measured = plan(DURATION_S);
  const cpu_before = cpuSeconds(gateway.pid);
  const main_before = mainThreadCpuSeconds(gateway.pid!);
  const load = await runLoad(measured);
  const per_sale_ms = (seconds: number) => (seconds * 1000) / Math.max(1, load.total);
  console.log(
    JSON.stringify({
      requests_per_s: load.requests_per_s,
      cpu_ms_per_sale: per_sale_ms(cpuSeconds(gateway.pid) - cpu_before),
      main_thread_cpu_ms_per_sale: per_sale_ms(mainThreadCpuSeconds(gateway.pid!) - main_before),
      p99_ms: load.latency_p99_ms,
      notified: `${load.notifications_received}/${load.notifications_expected}`,
    }),
  );
} finally {
  await stop(gateway);
}
