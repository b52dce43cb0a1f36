// Whether a build is older than what it is made from, by modification times: shared by npm's
// prepare step (prepare.mjs) and the test setup (test/support/build.ts), which both build only
// when the output is missing or older than a source. Plain JavaScript, so prepare runs it without a compiler.
import fs from 'node:fs';
import path from 'node:path';

/** The newest modification time, in ms, of the given files and of the .ts files under the given folders (0 if none). */
export function newestSourceMs(paths) {
  let newest = 0;
  for (const entry of paths) {
    if (!fs.existsSync(entry)) continue;
    const stat = fs.statSync(entry);
    if (!stat.isDirectory()) {
      newest = Math.max(newest, stat.mtimeMs);
      continue;
    }
    for (const child of fs.readdirSync(entry, { withFileTypes: true })) {
      const full = path.join(entry, child.name);
      if (child.isDirectory()) newest = Math.max(newest, newestSourceMs([full]));
      else if (child.name.endsWith('.ts')) newest = Math.max(newest, fs.statSync(full).mtimeMs);
    }
  }
  return newest;
}

/** Whether `output` exists and is at least as new as every one of `sources`. */
export function buildIsCurrent(output, sources) {
  return fs.existsSync(output) && fs.statSync(output).mtimeMs >= newestSourceMs(sources);
}
