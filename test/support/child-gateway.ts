// A gateway as an operator runs it: `node --import tsx src/cli.ts start` in its own process,
// so a test can kill -9 it or run two of them on one database.
import { type ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';

const CLI = ['--import', 'tsx', path.resolve('src/cli.ts'), 'start'];

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

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Starts the CLI with `env` (on top of this process's environment) and waits until /healthz answers. */
export async function spawnGateway(
  env: Record<string, string>,
  options: { expect_demo?: boolean; timeout_ms?: number } = {},
): Promise<ChildGateway> {
  const timeout_ms = options.timeout_ms ?? 30_000;
  const port = await freePort();
  const child = spawn(process.execPath, CLI, {
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), ...env },
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
