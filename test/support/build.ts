// The built gateway (dist/) for the tests that run `paygate` as a process: the command an operator
// runs (`npx paygate`, `npm start` and the image all start dist/cli.js), built once per test run
// by the global setup when it is older than its sources, so a test never runs a stale build.
// Running the build rather than the sources through tsx also keeps the suite within its time: tsx
// resolves and loads each of the 1 500 modules a command imports through its loader thread, which
// made every CLI process take some 3 CPU seconds against 1.6 from the build (dozens of them per run).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildIsCurrent } from '../../scripts/build-freshness.mjs';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TSC = path.join(ROOT, 'node_modules/typescript/bin/tsc');
const BUILD_TIMEOUT_MS = 180_000;

/** `node <CLI_ENTRY> <command> …` runs `paygate <command> …` as an operator does. */
export const CLI_ENTRY = path.join(ROOT, 'dist/cli.js');

/**
 * Builds `output` (a path under ROOT) with `tsconfig` when it is missing or older than the sources
 * under `sources`; throws with tsc's output when the build fails.
 */
export function ensureBuilt(output = 'dist/cli.js', sources = 'src', tsconfig = 'tsconfig.build.json'): void {
  if (buildIsCurrent(path.join(ROOT, output), [path.join(ROOT, sources)])) return;
  const result = spawnSync(process.execPath, [TSC, '-p', tsconfig], { cwd: ROOT, encoding: 'utf8', timeout: BUILD_TIMEOUT_MS });
  if (result.status !== 0) throw new Error(`build of ${tsconfig} failed: ${result.stdout}${result.stderr}`);
}
