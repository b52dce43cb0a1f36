// npm's prepare step: builds dist/ once, at install time, when the TypeScript compiler is there
// (a development install). A production install (`npm ci --omit=dev`) has no compiler: it must
// ship a dist/ built before (docs/production.md), so this step says so instead of failing the install.
// It builds the merchant SDK's packages/sdk/dist as well, so that code in the clone imports
// @paygate/sdk as a merchant's would, from its built form (packages/sdk/README.md).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

if (!fs.existsSync('node_modules/typescript/bin/tsc')) {
  process.stderr.write(
    fs.existsSync('dist/cli.js')
      ? 'paygate: no TypeScript compiler (production install): using the dist/ already built\n'
      : 'paygate: no TypeScript compiler (production install) and no dist/: build it where dev dependencies are installed (npm run build), see docs/production.md\n',
  );
  process.exit(0);
}
const result = spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
if (result.status !== 0) process.exit(result.status ?? 1);
// The `paygate` command is dist/cli.js. npm makes a package's bin executable when it links it,
// which for this package happens before this step has built the file, and tsc writes it 0644:
// on a fresh clone `npx paygate` was refused (Permission denied) until this line.
fs.chmodSync('dist/cli.js', 0o755);
if (!fs.existsSync('packages/sdk/tsconfig.build.json')) process.exit(0);
const sdk = spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'packages/sdk/tsconfig.build.json'], {
  stdio: 'inherit',
});
process.exit(sdk.status ?? 1);
