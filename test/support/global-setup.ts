// Makes sure the browser tests can run (test/support/chromium.ts) and the TLS-front test where it
// can (caddy), builds the gateway when its build is older than its sources (the tests that run
// `paygate` as a process run dist/cli.js: test/support/build.ts), and decides once which stores
// the suite runs against. In CI PostgreSQL is required:
// a suite that silently skipped it would claim a coverage it does not have.
import { ensureBuilt } from './build.js';
import { ensureCaddy, ensureChromium } from './chromium.js';
import { postgresAvailable } from './postgres.js';

export default async function setup(): Promise<void> {
  // Chromium before anything else: a missing browser stops the run at once, with the command to fix it.
  const missing = ensureChromium((line) => process.stderr.write(`${line}\n`));
  if (missing !== null) throw new Error(`[paygate tests] ${missing}`);
  ensureCaddy((line) => process.stderr.write(`${line}\n`));
  // Once, here: test files building it side by side would write the same files at once.
  ensureBuilt();
  const available = await postgresAvailable();
  if (!available && process.env.CI) throw new Error('CI=true but PostgreSQL is not reachable at PAYGATE_TEST_DATABASE_URL');
  if (!available) process.stderr.write('\n[paygate tests] PostgreSQL not reachable: running the SQLite store only\n');
  process.env.PAYGATE_TEST_STORES = available ? 'sqlite,postgres' : 'sqlite';
}
