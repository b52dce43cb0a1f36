// The built gateway (dist/) for the tests that run `paygate` as a process: the command an operator
// runs (`npx paygate`, `npm start` and the image all start dist/cli.js), built once per test run
// by the global setup when it is older than its sources, so a test never runs a stale build.
// Running the build rather than the sources through tsx also keeps the suite within its time: tsx
// resolves and loads each of the 1 500 modules a command imports through its loader thread, which
// made every CLI process take some 3 CPU seconds against 1.6 from the build (dozens of them per run).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TSC = path.join(ROOT, 'node_modules/typescript/bin/tsc');
const BUILD_TIMEOUT_MS = 180_000;

/** `node <CLI_ENTRY> <command> …` runs `paygate <command> …` as an operator does. */
export const CLI_ENTRY = path.join(ROOT, 'dist/cli.js');

/** The newest modification time of the .ts files under `dir` (0 if none). */
function newestSource(dir: string): number {
  return fs.readdirSync(dir, { withFileTypes: true }).reduce((newest, entry) => {
    const full = path.join(dir, entry.name);
    return Math.max(newest, entry.isDirectory() ? newestSource(full) : entry.name.endsWith('.ts') ? fs.statSync(full).mtimeMs : 0);
  }, 0);
}

/**
 * Builds `output` (a path under ROOT) with `tsconfig` when it is missing or older than the sources
 * under `sources`; throws with tsc's output when the build fails.
 */
export function ensureBuilt(output = 'dist/cli.js', sources = 'src', tsconfig = 'tsconfig.build.json'): void {
  const output_path = path.join(ROOT, output);
  const built_ms = fs.existsSync(output_path) ? fs.statSync(output_path).mtimeMs : 0;
  if (built_ms >= newestSource(path.join(ROOT, sources))) return;
  const result = spawnSync(process.execPath, [TSC, '-p', tsconfig], { cwd: ROOT, encoding: 'utf8', timeout: BUILD_TIMEOUT_MS });
  if (result.status !== 0) throw new Error(`build of ${tsconfig} failed: ${result.stdout}${result.stderr}`);
}
