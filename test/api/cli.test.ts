// The `paygate` command as an operator runs it: real processes, a real SQLite file.
import { execFile, spawn, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { postSigned } from '../support/client.js';
import { saleA } from '../support/bodies.js';
import { freePort, spawnGateway } from '../support/child-gateway.js';
import { CLI_ENTRY } from '../support/build.js';

const CLI = [CLI_ENTRY];
const execFileAsync = promisify(execFile);
const dirs: string[] = [];

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-cli-'));
  dirs.push(dir);
  return dir;
}

function paygate(args: string[], env: Record<string, string>) {
  return spawnSync(process.execPath, [...CLI, ...args], { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 30_000 });
}

afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

describe('paygate CLI', () => {
  it('creates a merchant, prints its JSON, and refuses the same merchant_id again without changing it', () => {
    const env = { PAYGATE_DATA_DIR: tempDir() };
    const created = paygate(
      [
        'merchant',
        'create',
        '--merchant-id',
        'shop-1',
        '--secret',
        'shop-secret-1',
        '--application-key',
        'shop-app',
        '--frontend',
        'shop.example',
      ],
      env,
    );
    expect(created.status, created.stderr).toBe(0);
    const merchant = JSON.parse(created.stdout) as Record<string, string>;
    expect(merchant).toMatchObject({
      merchant_id: 'shop-1',
      secret: 'shop-secret-1',
      application_key: 'shop-app',
      frontend: 'shop.example',
      currency: 'USD',
    });
    expect(merchant.gateway).toMatch(/^[0-9a-f]{32}$/);
    const again = paygate(['merchant', 'create', '--merchant-id', 'shop-1', '--secret', 'another-secret'], env);
    expect(again.status).toBe(1);
    expect(again.stderr).toMatch(/already exists/);
    const generated = paygate(['merchant', 'create', '--currency', 'EUR'], env);
    expect(JSON.parse(generated.stdout)).toMatchObject({ currency: 'EUR' });
  });

  it('without a command prints its usage and exits 64 (decisions.md §15); help exits 0', () => {
    const bare = paygate([], { PAYGATE_DATA_DIR: tempDir() });
    expect(bare.status).toBe(64);
    expect(bare.stderr).toMatch(/^Usage:\n {2}paygate start /);
    const help = paygate(['help'], { PAYGATE_DATA_DIR: tempDir() });
    expect(help.status).toBe(0);
    expect(help.stdout).toBe(bare.stderr);
  });

  it('names an unknown command, suggests the one meant and the commands there are, exits 64, and opens no store', () => {
    const data_dir = tempDir();
    const cases: [string[], string[]][] = [
      [
        ['foo'],
        [
          'paygate: unknown command: foo',
          '  commands: start, help, merchant, user, gateway, route, bins, sign, trigger, check-endpoint, master-key',
          '  paygate help prints every command with its options',
        ],
      ],
      [['gatway', 'list'], ['paygate: unknown command: gatway (did you mean gateway?)']],
      [
        ['gateway', 'frob'],
        [
          'paygate: unknown command: gateway frob',
          '  commands: gateway create, gateway list, gateway show, gateway disable, gateway enable, gateway rename, gateway settings',
        ],
      ],
      [['merchant', 'lst'], ['paygate: unknown command: merchant lst (did you mean merchant list?)']],
      [['route'], ['paygate: route needs a command']],
      [
        ['master-key', 'rotat'],
        [
          'paygate: unknown command: master-key rotat (did you mean master-key rotate?)',
          '  commands: master-key rotate, master-key status, master-key retire',
        ],
      ],
    ];
    for (const [args, lines] of cases) {
      const result = paygate(args, { PAYGATE_DATA_DIR: data_dir });
      expect(result.status, args.join(' ')).toBe(64);
      expect(result.stdout).toBe('');
      expect(result.stderr.split('\n').slice(0, lines.length), args.join(' ')).toEqual(lines);
    }
    expect(fs.readdirSync(data_dir)).toEqual([]);
  });

  it('refuses a second gateway on the same SQLite data folder, naming it; a killed one leaves no stale lock', async () => {
    const data_dir = tempDir();
    const first = await spawnGateway({ PAYGATE_DATA_DIR: data_dir, PAYGATE_LOG_LEVEL: 'warn' });
    try {
      const second = paygate(['start'], { PAYGATE_DATA_DIR: data_dir, PORT: '0', PAYGATE_LOG_LEVEL: 'warn' });
      expect(second.status).toBe(1);
      expect(second.stderr).toContain(`paygate: another paygate gateway is already running on the data folder ${data_dir}`);
      // With a log file, the refusal alone: the log's destination is open before anything can fail,
      // so its flush at exit has nothing to throw ("sonic boom is not ready yet" did).
      const log_file = path.join(tempDir(), 'logs', 'second.log');
      const logged = paygate(['start'], { PAYGATE_DATA_DIR: data_dir, PORT: '0', PAYGATE_LOG_FILE: log_file });
      expect(logged.status).toBe(1);
      expect(logged.stderr).toBe(
        `paygate: another paygate gateway is already running on the data folder ${data_dir}: the embedded SQLite store serves one process. Stop it first, or use DATABASE_URL (PostgreSQL) to run several instances\n`,
      );
      expect(fs.existsSync(log_file)).toBe(true);
      // The first one is untouched.
      expect((await fetch(`${first.url}/healthz`)).status).toBe(200);
    } finally {
      await first.kill('SIGKILL');
    }
    // kill -9 released the lock with the process: the folder starts again.
    const again = await spawnGateway({ PAYGATE_DATA_DIR: data_dir, PAYGATE_LOG_LEVEL: 'warn' });
    await again.kill('SIGTERM');
  });

  it('refuses a bad configuration value with a message naming it', () => {
    const result = paygate(['start'], { PAYGATE_DATA_DIR: tempDir(), PAYGATE_ENV: 'production' });
    expect(result.status).toBe(78);
    expect(result.stderr).toMatch(/PAYGATE_ENV/);
  });

  it('starts on an empty database with a demo merchant and serves a merchant created while it runs', async () => {
    const data_dir = tempDir();
    // Below the ephemeral range (freePort): a random port inside it was once taken by another
    // test file's listen(0) between the pick and the child's bind (EADDRINUSE, CI 2026-12-06).
    const port = await freePort();
    const child = spawn(process.execPath, [...CLI, 'start'], {
      env: { ...process.env, PAYGATE_DATA_DIR: data_dir, PORT: String(port), PAYGATE_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-4000);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-4000);
    });
    // Each step has its own bound, so a failure names the step and shows what the gateway printed
    // instead of running into the test's time-out.
    const step = <T>(name: string, bound_ms: number, work: Promise<T>): Promise<T> => {
      let timer!: NodeJS.Timeout;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${name}: no outcome within ${bound_ms} ms; the gateway printed: ${output}`)), bound_ms);
      });
      return Promise.race([work, late]).finally(() => clearTimeout(timer));
    };
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      const demo = await step(
        'demo merchant line',
        20_000,
        new Promise<Record<string, string>>((resolve) => {
          const look = () => {
            const match = /Demo sandbox merchant created: (\{.*\})/.exec(output);
            if (match) resolve(JSON.parse(match[1]!) as Record<string, string>);
            else setTimeout(look, 50);
          };
          look();
        }),
      );
      const base = `http://127.0.0.1:${port}`;
      // The first screen names the store it runs on.
      const store_row = `  Store          SQLite file ${path.join(data_dir, 'paygate.sqlite')}\n`;
      await step(
        'the first screen',
        10_000,
        new Promise<void>((resolve) => {
          const look = () => (output.includes(store_row) ? resolve() : setTimeout(look, 50));
          look();
        }),
      );
      await step(
        '/healthz',
        10_000,
        (async () => {
          while (
            !(await fetch(`${base}/healthz`).then(
              (r) => r.ok,
              () => false,
            ))
          )
            await new Promise((r) => setTimeout(r, 100));
        })(),
      );
      // Notifications to the discard port on loopback: with a host name, the attempt (and with it
      // the gateway's shutdown) would depend on how fast this machine's DNS answers.
      const quiet = { notification_url: 'http://127.0.0.1:9/notify' };
      const sale = await step(
        'sale of the demo merchant',
        10_000,
        postSigned(base, '/api/process', saleA(demo as never, quiet), demo.secret!),
      );
      expect(sale.body).toMatchObject({ status: 0, transaction_status: 'approved' });

      // Asynchronously: spawnSync would freeze this process's keep-alive sockets for seconds.
      const created = await step(
        'merchant create while the gateway runs',
        30_000,
        execFileAsync(process.execPath, [...CLI, 'merchant', 'create', '--merchant-id', 'late-shop', '--secret', 'late-secret-1'], {
          env: { ...process.env, PAYGATE_DATA_DIR: data_dir },
          timeout: 30_000,
        }),
      );
      const late = JSON.parse(created.stdout) as Record<string, string>;
      const late_sale = await step(
        'sale of the merchant created later',
        10_000,
        postSigned(base, '/api/process', saleA(late as never, quiet), late.secret!),
      );
      expect(late_sale.body).toMatchObject({ status: 0, transaction_status: 'approved' });
    } finally {
      child.kill('SIGTERM');
      await step('exit after SIGTERM', 15_000, exited).catch((error: unknown) => {
        child.kill('SIGKILL');
        throw error;
      });
    }
  });
});
