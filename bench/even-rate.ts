// `npm run bench:even -- [REF]`: the gateway's CPU per sale at an even rate below saturation, the
// case of a gateway that is not busy (issue 29: at even rates a sale cost about twice its CPU at
// saturation, and that cost is what queues the live path's latency). A SQLite sandbox gateway,
// pinned to core 0, takes new sales spread evenly at BENCH_EVEN_RATE a second (300) for
// BENCH_DURATION_S (15), every notification delivered to the load's receiver, after 4 s of the same
// not counted. With REF (a commit, built as bench/compare.ts builds one), the two builds run
// alternately, BENCH_EVEN_ROUNDS (3) runs each, the working tree's second; the figures go to
// bench/EVEN-RATE.md. CPU of the gateway process (all threads) and of its main
// thread alone, read from /proc, divided by the sales answered.
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

interface EvenRun {
  readonly build: string;
  readonly requests_per_s: number;
  readonly cpu_ms_per_sale: number;
  readonly main_thread_cpu_ms_per_sale: number;
  readonly p99_ms: number;
  readonly notified: string;
}

/** One run in a process of its own: harness.ts reads BENCH_GATEWAY_DIST when it is imported. */
function runOnce(dist: string): EvenRun {
  const result = spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench/even-rate-run.ts')], {
    cwd: ROOT,
    env: { ...process.env, BENCH_GATEWAY_DIST: dist, BENCH_EVEN_RATE: String(RATE) },
    encoding: 'utf8',
    timeout: 300_000,
  });
  if (result.status !== 0) throw new Error(`even-rate run failed: ${result.stderr}`);
  return { build: dist, ...(JSON.parse(result.stdout.trim().split('\n').pop()!) as Omit<EvenRun, 'build'>) };
}

const ref = process.argv[2] ?? null;
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-even-'));
const other = ref ? buildRef(ref, path.join(work, 'ref')) : null;
if (!process.env.BENCH_SKIP_BUILD) spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
const builds = [...(other ? [other] : []), path.join(ROOT, 'dist')];
const runs: EvenRun[] = [];
const load_before = os.loadavg()[0]!;
for (let round = 1; round <= ROUNDS; round += 1)
  for (const dist of builds) {
    const run = runOnce(dist);
    runs.push(run);
    console.log(JSON.stringify(run));
  }
fs.rmSync(work, { recursive: true, force: true });
const sha = (name: string) => spawnSync('git', ['rev-parse', '--short', name], { cwd: ROOT, encoding: 'utf8' }).stdout.trim();
const ref_label = ref === null || sha(`${ref}^{commit}`) === ref ? ref : `${ref} (${sha(`${ref}^{commit}`)})`;
const label = (dist: string) => (dist === other ? ref_label : `working tree (on ${sha('HEAD')})`);
const lines = [
  '# CPU per sale at an even rate',
  '',
  `Written by \`npm run bench:even\` on ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC: ${RATE} new sales a second spread evenly, every notification delivered, ${ROUNDS} run(s) of each build, alternating. ${os.cpus()[0]?.model ?? 'unknown CPU'}, ${os.cpus().length} cores, Node ${process.version}; load average (1 min) ${load_before.toFixed(2)} before, ${os.loadavg()[0]!.toFixed(2)} after.`,
  '',
  '| build | requests/s | CPU ms a sale (process) | main thread CPU ms a sale | request p99 ms | notified |',
  '|---|---:|---:|---:|---:|---|',
  ...runs.map(
    (run) =>
      `| ${label(run.build)} | ${run.requests_per_s.toFixed(0)} | ${run.cpu_ms_per_sale.toFixed(3)} | ${run.main_thread_cpu_ms_per_sale.toFixed(3)} | ${run.p99_ms} | ${run.notified} |`,
  ),
  '',
];
fs.writeFileSync(path.join(ROOT, 'bench/EVEN-RATE.md'), lines.join('\n'));
