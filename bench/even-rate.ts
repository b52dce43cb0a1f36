// `npm run bench:even -- [REF]`: the gateway's CPU per sale at an even rate below saturation, the
// case of a gateway that is not busy (issue 29: at even rates a sale cost about three times its CPU
// at saturation, and that cost is what queues the live path's latency). A SQLite sandbox gateway,
// pinned to core 0, takes new sales spread evenly at BENCH_EVEN_RATE a second (300) for
// BENCH_DURATION_S (15), every notification delivered to the load's receiver, after 4 s of the same
// not counted, then 10 s of sales at saturation. With REF (a commit, built as bench/compare.ts
// builds one), the two builds run alternately, BENCH_EVEN_ROUNDS (3) runs each, the working tree's
// second. Each round also runs the ceiling (bare Fastify) and the floor (the least durable signed
// sale) the same way: what any server pays at this pace on this machine, so that the gateway's
// own share of the even-rate cost can be told from the host's. The figures go to
// bench/EVEN-RATE.md. CPU of the process (all threads) and of its main thread alone, read from
// /proc, divided by the requests answered.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildRef } from './compare.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const RATE = Number(process.env.BENCH_EVEN_RATE ?? '300');
const ROUNDS = Number(process.env.BENCH_EVEN_ROUNDS ?? '3');
const MAX_ROUNDS = 10;
if (!Number.isInteger(ROUNDS) || ROUNDS < 1 || ROUNDS > MAX_ROUNDS) throw new Error(`BENCH_EVEN_ROUNDS: 1 to ${MAX_ROUNDS}`);
if (!(RATE > 0 && RATE <= 5_000)) throw new Error('BENCH_EVEN_RATE: above 0, at most 5000');

/** What a run measured: a build of the gateway (its dist folder), or a reference server ('ceiling', 'floor'). */
type Subject = string;
const REFERENCES = ['ceiling', 'floor'] as const;

interface EvenRun {
  readonly subject: Subject;
  readonly requests_per_s: number;
  readonly cpu_ms_per_sale: number;
  readonly main_thread_cpu_ms_per_sale: number;
  readonly p99_ms: number;
  readonly notified: string;
  readonly saturated_requests_per_s: number;
  readonly saturated_cpu_ms_per_sale: number;
}

/** One run in a process of its own: harness.ts reads BENCH_GATEWAY_DIST when it is imported. */
function runOnce(subject: Subject): EvenRun {
  const reference = (REFERENCES as readonly string[]).includes(subject);
  const result = spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench/even-rate-run.ts')], {
    cwd: ROOT,
    env: {
      ...process.env,
      BENCH_EVEN_SUBJECT: reference ? subject : 'gateway',
      ...(reference ? {} : { BENCH_GATEWAY_DIST: subject }),
      BENCH_EVEN_RATE: String(RATE),
    },
    encoding: 'utf8',
    timeout: 300_000,
  });
  if (result.status !== 0) throw new Error(`even-rate run failed: ${result.stderr}`);
  return { subject, ...(JSON.parse(result.stdout.trim().split('\n').pop()!) as Omit<EvenRun, 'subject'>) };
}

const ref = process.argv[2] ?? null;
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-even-'));
const other = ref ? buildRef(ref, path.join(work, 'ref')) : null;
if (!process.env.BENCH_SKIP_BUILD) spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
const subjects: Subject[] = [...REFERENCES, ...(other ? [other] : []), path.join(ROOT, 'dist')];
const runs: EvenRun[] = [];
const load_before = os.loadavg()[0]!;
for (let round = 1; round <= ROUNDS; round += 1)
  for (const subject of subjects) {
    const run = runOnce(subject);
    runs.push(run);
    console.log(JSON.stringify(run));
  }
fs.rmSync(work, { recursive: true, force: true });
const sha = (name: string) => spawnSync('git', ['rev-parse', '--short', name], { cwd: ROOT, encoding: 'utf8' }).stdout.trim();
const ref_label = ref === null || sha(`${ref}^{commit}`) === ref ? ref : `${ref} (${sha(`${ref}^{commit}`)})`;
const label = (subject: Subject) =>
  subject === 'ceiling'
    ? 'ceiling (bench/ceiling-server.ts, bare Fastify)'
    : subject === 'floor'
      ? 'floor (bench/floor-server.ts, the least durable signed sale)'
      : subject === other
        ? `gateway, ${ref_label}`
        : `gateway, working tree (on ${sha('HEAD')})`;
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const ratio = (run: EvenRun) => run.cpu_ms_per_sale / run.saturated_cpu_ms_per_sale;
const summary = subjects.map((subject) => {
  const mine = runs.filter((run) => run.subject === subject);
  return `| ${label(subject)} | ${median(mine.map((run) => run.cpu_ms_per_sale)).toFixed(3)} | ${median(mine.map((run) => run.saturated_cpu_ms_per_sale)).toFixed(3)} | ${median(mine.map(ratio)).toFixed(2)}× |`;
});
const lines = [
  '# CPU per sale at an even rate',
  '',
  `Written by \`npm run bench:even\` on ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC: ${RATE} new sales a second spread evenly, every notification delivered, ${ROUNDS} run(s) of each build, alternating. ${os.cpus()[0]?.model ?? 'unknown CPU'}, ${os.cpus().length} cores, Node ${process.version}; load average (1 min) ${load_before.toFixed(2)} before, ${os.loadavg()[0]!.toFixed(2)} after.`,
  '',
  'Each run: the even rate first, then 10 s at saturation (50 connections) in the same process. The ceiling sends no notifications; the others deliver every one in both parts. "CPU ms" is per request answered.',
  '',
  '| what ran | requests/s | CPU ms a sale (process) | main thread CPU ms a sale | request p99 ms | notified | saturated: requests/s | saturated: CPU ms a sale | even ÷ saturated |',
  '|---|---:|---:|---:|---:|---|---:|---:|---:|',
  ...runs.map(
    (run) =>
      `| ${label(run.subject)} | ${run.requests_per_s.toFixed(0)} | ${run.cpu_ms_per_sale.toFixed(3)} | ${run.main_thread_cpu_ms_per_sale.toFixed(3)} | ${run.p99_ms} | ${run.notified} | ${run.saturated_requests_per_s.toFixed(0)} | ${run.saturated_cpu_ms_per_sale.toFixed(3)} | ${ratio(run).toFixed(2)}× |`,
  ),
  '',
  'Medians of the runs above:',
  '',
  '| what ran | CPU ms a sale at the even rate | at saturation | even ÷ saturated |',
  '|---|---:|---:|---:|',
  ...summary,
  '',
];
fs.writeFileSync(path.join(ROOT, 'bench/EVEN-RATE.md'), lines.join('\n'));
