// `npm start`: runs the gateway built once into dist/ (by `npm ci`'s prepare step or `npm run
// build`), never the compiler: a production install has none, and compiling on every start
// slowed each restart. Without dist/ it says what to run instead of a module-not-found trace. The
// gateway runs with node-flags.mjs's flags (its heap bound).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { gatewayNodeFlags } from './node-flags.mjs';

if (!fs.existsSync('dist/cli.js')) {
  process.stderr.write('paygate: not built yet (no dist/cli.js): run `npm run build` (needs the dev dependencies), then `npm start`\n');
  process.exit(78);
}
// With the heap bound of node-flags.mjs, unless the operator set one in NODE_OPTIONS.
const child = spawn(process.execPath, [...gatewayNodeFlags(), 'dist/cli.js', 'start', ...process.argv.slice(2)], { stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
