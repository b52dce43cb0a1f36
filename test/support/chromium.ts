// The browser tests need Debian's Chromium (playwright-core never downloads one). On a fresh
// machine `npm test` installs it when it can (root with apt-get, as in a container or CI) and
// otherwise stops at once with the one command to run, instead of failing every browser test
// minutes later (issue 19).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

/** Where the browser tests look for Chromium (test/support/browser.ts reads the same variable). */
export function chromiumPath(): string {
  return process.env.PAYGATE_TEST_CHROMIUM ?? '/usr/bin/chromium';
}

export const INSTALL_COMMAND = 'sudo apt-get install -y chromium';

/**
 * Wait up to 10 minutes for another apt-get or dpkg (a second test run, the machine's own updates)
 * to let go of its locks, instead of failing the run at once on a lock it would soon have had.
 */
const APT_LOCK_WAIT = ['-o', 'DPkg::Lock::Timeout=600'];

/** The reason the browser tests cannot run, or null once Chromium is there (installed now if it can be). */
export function ensureChromium(log: (line: string) => void): string | null {
  const path = chromiumPath();
  if (fs.existsSync(path)) return null;
  if (process.env.PAYGATE_TEST_CHROMIUM !== undefined) return `Chromium not found at PAYGATE_TEST_CHROMIUM=${path}`;
  const is_root = typeof process.getuid === 'function' && process.getuid() === 0;
  const has_apt = spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status === 0;
  if (!is_root || !has_apt) return `Chromium not found at ${path}. Install Debian's chromium once: ${INSTALL_COMMAND}`;
  log("[paygate tests] Chromium not found: installing Debian's chromium (apt-get, once; about a minute)");
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [
    [...APT_LOCK_WAIT, 'update', '-qq'],
    [...APT_LOCK_WAIT, 'install', '-y', '-qq', 'chromium'],
  ]) {
    const result = spawnSync('apt-get', args, { env, encoding: 'utf8', timeout: 15 * 60_000 });
    if (result.status !== 0)
      return `installing chromium failed (apt-get ${args.join(' ')}): ${(result.stderr ?? '').slice(-500)}. Run: ${INSTALL_COMMAND}`;
  }
  return fs.existsSync(path) ? null : `apt-get installed chromium but ${path} is still missing`;
}

/**
 * Caddy, for the TLS-front test (test/api/tls-front.test.ts, docs/deploy/Caddyfile): installed like
 * Chromium where the suite can (root with apt-get), so CI runs that test instead of skipping it.
 * Unlike Chromium it is not required: elsewhere the test is skipped, with this line saying why.
 */
export function ensureCaddy(log: (line: string) => void): void {
  if (spawnSync('caddy', ['version'], { stdio: 'ignore' }).status === 0) return;
  const is_root = typeof process.getuid === 'function' && process.getuid() === 0;
  const has_apt = spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status === 0;
  if (!is_root || !has_apt) {
    log('[paygate tests] caddy not found: the TLS-front test is skipped (sudo apt-get install -y caddy runs it)');
    return;
  }
  log("[paygate tests] caddy not found: installing Debian's caddy for the TLS-front test (apt-get, once)");
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const installed = spawnSync('apt-get', [...APT_LOCK_WAIT, 'install', '-y', '-qq', 'caddy'], {
    env,
    encoding: 'utf8',
    timeout: 15 * 60_000,
  });
  if (installed.status !== 0) {
    // The package lists may be stale on a fresh machine: once more after an update.
    spawnSync('apt-get', [...APT_LOCK_WAIT, 'update', '-qq'], { env, timeout: 15 * 60_000 });
    const again = spawnSync('apt-get', [...APT_LOCK_WAIT, 'install', '-y', '-qq', 'caddy'], {
      env,
      encoding: 'utf8',
      timeout: 15 * 60_000,
    });
    if (again.status !== 0)
      log(`[paygate tests] installing caddy failed: the TLS-front test is skipped (${(again.stderr ?? '').slice(-300)})`);
  }
}
