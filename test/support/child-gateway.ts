// A gateway as an operator runs it: `node dist/cli.js start` (test/support/build.ts) in its own process,
// so a test can kill -9 it or run two of them on one database.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import { CLI_ENTRY } from './build.js';

const CLI = [CLI_ENTRY, 'start'];

export interface ChildGateway {
  readonly url: string;
  readonly process: ChildProcess;
  /** The demo merchant printed on first start (empty database), else null. */
  readonly demo: Record<string, string> | null;
  /** stdout and stderr so far, for failure messages. */
  output(): string;
  /** Sends the signal and waits for the process to end. */
  kill(signal: NodeJS.Signals): Promise<void>;
}

/**
 * A free port for a gateway started in another process. Taken below the kernel's ephemeral range:
 * a port the OS hands to `listen(0)` (every in-process fake and receiver of the other test files
 * running at the same time) comes from that range, so none of them can take this port between
 * our check and the child's bind (which failed a run with EADDRINUSE, and once sent the start's
 * /healthz polls to a processor fake that had been given the port).
 */
export async function freePort(): Promise<number> {
  const [ephemeral_low] = ephemeralRange();
  const low = 10_000;
  const high = Math.max(low + 1000, ephemeral_low) - 1;
  for (let attempt = 0; attempt < FREE_PORT_ATTEMPTS; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low + 1));
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port found below ${high + 1} in ${FREE_PORT_ATTEMPTS} attempts`);
}

const FREE_PORT_ATTEMPTS = 100;

/** The kernel's ephemeral port range (Linux), or the IANA one elsewhere. */
function ephemeralRange(): [number, number] {
  try {
    const [low, high] = fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (Number.isInteger(low) && Number.isInteger(high)) return [low!, high!];
  } catch {
    // Not Linux: fall through.
  }
  return [49_152, 65_535];
}

async function bindable(port: number): Promise<boolean> {
  const server = net.createServer();
  const bound = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (bound) await new Promise<void>((resolve) => server.close(() => resolve()));
  return bound;
}

/**
 * Starts the CLI with `env` (on top of this process's environment) and waits until /healthz answers.
 * Load shedding is off unless `env` sets it, as for test/support/gateway.ts: on a two-core machine
 * running the suite, a child's event loop lags behind the other tests' work, not its own load, and
 * a CI run once had a child shed a sale (status 29) just after it started (2026-11-28).
 */
export async function spawnGateway(
  env: Record<string, string>,
  options: { expect_demo?: boolean; timeout_ms?: number } = {},
): Promise<ChildGateway> {
  const timeout_ms = options.timeout_ms ?? 30_000;
  const port = await freePort();
  const child = spawn(process.execPath, CLI, {
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), PAYGATE_SHED_EVENT_LOOP_DELAY_MS: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeout_ms;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`gateway exited during start: ${out}`);
    const demo_seen = !options.expect_demo || /Demo sandbox merchant created: \{.*\}/.test(out);
    if (
      demo_seen &&
      (await fetch(`${url}/healthz`).then(
        (r) => r.ok,
        () => false,
      ))
    )
      break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`gateway did not start within ${timeout_ms} ms: ${out}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const match = /Demo sandbox merchant created: (\{.*\})/.exec(out);
  return {
    url,
    process: child,
    demo: match ? (JSON.parse(match[1]!) as Record<string, string>) : null,
    output: () => out,
    async kill(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}
