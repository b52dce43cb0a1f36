// `npm run bench:compare -- REF`: the gateway built from REF (a commit, a tag, a branch) against
// the working tree's build, measured by this checkout's bench (run.ts) in alternating runs, and
// the figures written to bench/COMPARE.md. A change's worth is judged this way (issue 29: "measured
// alternately against the build before it"): this machine's speed drifts by tens of percent
// within an hour (other work on the host), so two runs made minutes apart compare the hour, not
// the builds; alternating run by run puts both builds in every part of the drift, and the spread
// of each build's runs says how much of a difference is noise.
//
// REF is exported with `git archive` into a temporary directory beside node_modules of this
// checkout (a symbolic link: REF must not need other packages) and built with this checkout's
// TypeScript. Environment: BENCH_COMPARE_RUNS (3: runs of each build), BENCH_ONLY (`sale`: the
// parts each run measures, as run.ts takes them), and whatever else run.ts reads (BENCH_DURATION_S
// and the rest) passes through. Each run rebuilds nothing: the working tree is built once first.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The checkout (not harness.ts's ROOT: importing the harness makes a work directory, which parseRows' test would leave behind). */
const ROOT = path.resolve(import.meta.dirname, '..');

const MAX_RUNS = 20;

interface Figures {
  readonly rps: number;
  readonly p99_ms: number;
  readonly cpu_ms: number | null;
  readonly ratio: string;
  /** PostgreSQL's own CPU per request, from the answers cell of its rows (null elsewhere). */
  readonly server_cpu_ms: number | null;
}

/** The rows run.ts prints for a BENCH_ONLY run: `| name | requests/s | p50 | p99 | CPU ms/req | RSS | ratio | answers |`. */
export function parseRows(output: string): Map<string, Figures> {
  const rows = new Map<string, Figures>();
  for (const line of output.split('\n')) {
    const cells = line.split('|').map((cell) => cell.trim());
    // '', name, rps, p50, p99, cpu, rss, ratio, answers, ''
    if (cells.length < 10 || !/^\d+(\.\d+)?$/.test(cells[2]!)) continue;
    rows.set(cells[1]!, {
      rps: Number(cells[2]),
      p99_ms: Number(cells[4]),
      cpu_ms: cells[5] === '' ? null : Number(cells[5]),
      ratio: cells[7]!,
      server_cpu_ms: serverCpuMs(cells[8]!),
    });
  }
  return rows;
}

/** "PostgreSQL's own processes: 1.50 CPU ms/req" in a row's answers cell, as run.ts writes it. */
function serverCpuMs(answers: string): number | null {
  const found = /PostgreSQL's own processes: (\d+(?:\.\d+)?) CPU ms\/req/.exec(answers);
  return found ? Number(found[1]) : null;
}

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): string {
  const done = spawnSync(command, args, { cwd, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (done.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${done.status}): ${done.stderr.slice(-2000)}`);
  return done.stdout;
}

/** REF's gateway build in a temporary directory; returns its dist/. */
export function buildRef(ref: string, into: string): string {
  const sha = run('git', ['rev-parse', '--verify', `${ref}^{commit}`], ROOT).trim();
  const archive = spawnSync('git', ['archive', '--format=tar', sha], { cwd: ROOT, maxBuffer: 512 * 1024 * 1024 });
  if (archive.status !== 0) throw new Error(`git archive ${sha} failed: ${archive.stderr.toString()}`);
  fs.mkdirSync(into, { recursive: true });
  const untar = spawnSync('tar', ['-x', '-C', into], { input: archive.stdout });
  if (untar.status !== 0) throw new Error(`tar failed: ${untar.stderr.toString()}`);
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(into, 'node_modules'));
  run(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], into);
  return path.join(into, 'dist');
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function spread(values: number[], digits: number): string {
  return `${Math.min(...values).toFixed(digits)}-${Math.max(...values).toFixed(digits)}`;
}

async function main(): Promise<void> {
  const ref = process.argv[2];
  if (!ref) throw new Error('usage: npm run bench:compare -- REF (a commit, tag or branch to measure against the working tree)');
  const runs = Number(process.env.BENCH_COMPARE_RUNS ?? '3');
  if (!Number.isInteger(runs) || runs < 1 || runs > MAX_RUNS)
    throw new Error(`BENCH_COMPARE_RUNS must be a whole number from 1 to ${MAX_RUNS}`);
  const only = process.env.BENCH_ONLY ?? 'sale';
  const started_at = new Date();
  const load_before = os.loadavg()[0]!;
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-compare-'));
  try {
    const ref_sha = run('git', ['rev-parse', '--short', `${ref}^{commit}`], ROOT).trim();
    const tree = `working tree (on ${run('git', ['rev-parse', '--short', 'HEAD'], ROOT).trim()}${run('git', ['status', '--porcelain', '--untracked-files=no'], ROOT).trim() ? ', with changes' : ''})`;
    const ref_dist = buildRef(ref, path.join(work, 'ref'));
    run('npm', ['run', 'build'], ROOT);
    const builds: { readonly label: string; readonly dist: string }[] = [
      { label: `${ref} (${ref_sha})`, dist: ref_dist },
      { label: tree, dist: path.join(ROOT, 'dist') },
    ];
    // figures[build][row name] = one entry per run
    const figures = builds.map(() => new Map<string, Figures[]>());
    for (let round = 1; round <= runs; round += 1) {
      for (const [index, build] of builds.entries()) {
        // RESULTS.md is left alone by BENCH_ONLY runs, but for the live and soak sections: kept as it was.
        const results = path.join(ROOT, 'bench', 'RESULTS.md');
        const kept = fs.readFileSync(results, 'utf8');
        let output: string;
        try {
          output = run(process.execPath, ['--import', 'tsx', 'bench/run.ts'], ROOT, {
            ...process.env,
            BENCH_ONLY: only,
            BENCH_SKIP_BUILD: '1',
            BENCH_GATEWAY_DIST: build.dist,
          });
        } finally {
          fs.writeFileSync(results, kept);
        }
        const parsed = parseRows(output);
        for (const [name, row] of parsed) {
          const list = figures[index]!.get(name) ?? [];
          list.push(row);
          figures[index]!.set(name, list);
        }
        console.log(
          `round ${round}/${runs}, ${build.label}: ${[...parsed].map(([name, row]) => `${name.slice(0, 40)}: ${row.rps}/s, ${row.cpu_ms ?? '-'} CPU ms`).join('; ')}`,
        );
      }
    }
    const lines = [
      '# A build against another, measured alternately',
      '',
      `Written by \`npm run bench:compare -- ${ref}\` on ${started_at.toISOString().slice(0, 16).replace('T', ' ')} UTC: ${runs} run(s) of each build, alternating (${builds.map((b) => b.label).join(' first, then ')}), each \`BENCH_ONLY=${only}\` of bench/run.ts. ${os.cpus()[0]?.model ?? 'unknown CPU'}, ${os.cpus().length} cores, Node ${process.version}; load average (1 min) ${load_before.toFixed(2)} before, ${os.loadavg()[0]!.toFixed(2)} after.`,
      '',
      "Each cell: the median of the runs, then the lowest-highest. A difference inside both builds' spreads is noise.",
      '',
      "| run | build | requests/s | p99 ms | CPU ms/req | PostgreSQL's CPU ms/req | ratio to ceiling |",
      '|---|---|---:|---:|---:|---:|---:|',
    ];
    const names = [...new Set(figures.flatMap((map) => [...map.keys()]))];
    for (const name of names) {
      for (const [index, build] of builds.entries()) {
        const list = figures[index]!.get(name) ?? [];
        if (list.length === 0) continue;
        const rps = list.map((row) => row.rps);
        const p99 = list.map((row) => row.p99_ms);
        const cpu = list.flatMap((row) => (row.cpu_ms === null ? [] : [row.cpu_ms]));
        const server_cpu = list.flatMap((row) => (row.server_cpu_ms === null ? [] : [row.server_cpu_ms]));
        const cell = (values: number[]) => (values.length ? `${median(values).toFixed(2)} (${spread(values, 2)})` : '');
        lines.push(
          `| ${name} | ${build.label} | ${median(rps).toFixed(0)} (${spread(rps, 0)}) | ${median(p99).toFixed(0)} (${spread(p99, 0)}) | ${cell(cpu)} | ${cell(server_cpu)} | ${list.map((row) => row.ratio).join(', ')} |`,
        );
      }
    }
    const out = path.join(ROOT, 'bench', 'COMPARE.md');
    fs.writeFileSync(out, `${lines.join('\n')}\n`);
    console.log(`\n${lines.join('\n')}\n\nwritten to ${path.relative(ROOT, out)}`);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
