// npm's prepare step: builds dist/ once, at install time, when the TypeScript compiler is there
// (a development install). A production install (`npm ci --omit=dev`) has no compiler: it must
// ship a dist/ built before (docs/production.md), so this step says so instead of failing the install.
// It builds the merchant SDK's packages/sdk/dist as well, so that code in the clone imports
// @paygate/sdk as a merchant's would, from its built form (packages/sdk/README.md).
//
// A build newer than every source it is made from is kept: `npx paygate` in the clone installs the
// project into npx's cache as a link, and npm runs this step again for it. Rebuilding there cost a
// reader's first `npx paygate sign` some 20 CPU seconds, and it rewrote dist/ under whatever was
// running it at the time (a test suite's gateways, or the `npx paygate` next to it).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { buildIsCurrent } from './build-freshness.mjs';

/** Runs tsc on `tsconfig` unless `output` is newer than `sources`; exits on a failed build. */
function build(tsconfig, output, sources, rebuild_command) {
  if (buildIsCurrent(output, sources)) {
    process.stderr.write(`paygate: ${path.dirname(output)}/ is newer than its sources: kept (${rebuild_command} rebuilds it)\n`);
    return;
  }
  const result = spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', tsconfig], { stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

if (!fs.existsSync('node_modules/typescript/bin/tsc')) {
  process.stderr.write(
    fs.existsSync('dist/cli.js')
      ? 'paygate: no TypeScript compiler (production install): using the dist/ already built\n'
      : 'paygate: no TypeScript compiler (production install) and no dist/: build it where dev dependencies are installed (npm run build), see docs/production.md\n',
  );
  process.exit(0);
}
build('tsconfig.build.json', 'dist/cli.js', ['src', 'tsconfig.build.json', 'tsconfig.json'], 'npm run build');
// The `paygate` command is dist/cli.js. npm makes a package's bin executable when it links it,
// which for this package happens before this step has built the file, and tsc writes it 0644:
// on a fresh clone `npx paygate` was refused (Permission denied) until this line.
fs.chmodSync('dist/cli.js', 0o755);
if (fs.existsSync('packages/sdk/tsconfig.build.json')) {
  const sources = ['packages/sdk/src', 'packages/sdk/tsconfig.build.json', 'tsconfig.json'];
  build('packages/sdk/tsconfig.build.json', 'packages/sdk/dist/index.js', sources, 'npm run build --workspace @paygate/sdk');
}
