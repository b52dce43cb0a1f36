// packages/sdk/README.md's quickstart, run as it is written: its shell blocks in order (npm start,
// npx paygate merchant create, npm run shop; `npm ci` is what got the test here), a purchase in the
// shop it started (over HTTP, as the README's reader does it in a browser), and its TypeScript
// snippet with `npx tsx` against that gateway. Only the addresses differ (PORT, SHOP_PORT,
// PAYGATE_URL, PAYGATE_DATA_DIR in the environment, which the commands read), so that a run never
// meets a developer's own gateway. Every TypeScript block of the README is also type-checked.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../test/support/child-gateway.js';
import { CashierCustomer } from '../../../test/support/cashier.js';
import { waitUntil } from '../../../test/support/notification-merchant.js';
import { ensureBuilt } from '../../../test/support/build.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const README = fs.readFileSync(path.join(ROOT, 'packages/sdk/README.md'), 'utf8');
const TSC = path.join(ROOT, 'node_modules/typescript/bin/tsc');

interface Block {
  readonly language: string;
  readonly code: string;
}

function blocksOf(markdown: string): Block[] {
  return [...markdown.matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm)].map((m) => ({ language: m[1]!, code: m[2]! }));
}

function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  if (start === -1) throw new Error(`README has no section "${heading}"`);
  const end = markdown.indexOf('\n## ', start + 1);
  return markdown.slice(start, end === -1 ? undefined : end);
}

interface Running {
  readonly child: ChildProcess;
  output(): string;
}

const started: Running[] = [];

/** A README command that keeps running (a server), in its own process group so that it can be stopped whole. */
function runInBackground(command: string, env: NodeJS.ProcessEnv): Running {
  const child = spawn('bash', ['-c', command], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const running = { child, output: () => out };
  started.push(running);
  return running;
}

async function stop(running: Running): Promise<void> {
  const { child } = running;
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  process.kill(-child.pid, 'SIGTERM');
  const killed = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 5_000);
  await exited;
  clearTimeout(killed);
}

describe('packages/sdk/README.md', () => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-readme-'));
  const snippets = path.join(ROOT, '.tmp', `readme-${randomBytes(4).toString('hex')}`);
  afterAll(async () => {
    await Promise.all(started.map(stop));
    fs.rmSync(scratch, { recursive: true, force: true });
    fs.rmSync(snippets, { recursive: true, force: true });
  });

  it('the five-minute quickstart works as written: gateway, merchant, shop, a purchase paid by its notification, the snippet', async () => {
    const quickstart = blocksOf(section(README, 'Five minutes with the sandbox'));
    const shell = quickstart.filter((b) => b.language === 'sh').map((b) => b.code.trim());
    const typescript = quickstart.filter((b) => b.language === 'ts');
    // The steps this test knows how to run, in the README's order: a new step must be taught here.
    expect(shell.map((code) => code.split('\n')[0]!.replace(/ .*/, ''))).toEqual(['npm', 'npm', 'npx', 'PAYGATE_MERCHANT_ID=shop-1']);
    expect(shell[0]).toBe('npm ci');
    expect(shell[1]).toBe('npm start');
    expect(typescript).toHaveLength(1);

    ensureBuilt('dist/cli.js', 'src', 'tsconfig.build.json');
    ensureBuilt('packages/sdk/dist/index.js', 'packages/sdk/src', 'packages/sdk/tsconfig.build.json');
    const [gateway_port, shop_port] = [await freePort(), await freePort()];
    const gateway_url = `http://127.0.0.1:${gateway_port}`;
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PAYGATE_DATA_DIR: scratch,
      PORT: String(gateway_port),
      HOST: '127.0.0.1',
      SHOP_PORT: String(shop_port),
      PAYGATE_URL: gateway_url,
    };
    delete env.DATABASE_URL;

    // npm start: the gateway, until /healthz answers.
    const gateway = runInBackground(shell[1]!, env);
    await waitUntil(
      () =>
        fetch(`${gateway_url}/healthz`).then(
          (r) => r.ok,
          () => false,
        ),
      `the gateway (${gateway.output()})`,
      30_000,
    );

    // npx paygate merchant create …: prints the merchant.
    const created = spawnSync('bash', ['-c', shell[2]!], { cwd: ROOT, env, encoding: 'utf8', timeout: 60_000 });
    expect(created.status, created.stderr).toBe(0);
    const merchant = JSON.parse(created.stdout.trim().split('\n').at(-1)!) as Record<string, string>;
    expect(merchant).toMatchObject({ merchant_id: 'shop-1', application_key: 'shop-app', frontend: 'shop.example' });

    // npm run shop with that merchant.
    const shop = runInBackground(shell[3]!, env);
    const shop_url = `http://127.0.0.1:${shop_port}`;
    await waitUntil(() => shop.output().includes(`Example shop on ${shop_url}`), `the shop (${shop.output()})`, 30_000);

    // Buy, Card, 4111 1111 1111 1111, CVV 568: the order is paid once the notification has come.
    const bought = await fetch(`${shop_url}/buy`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'product=mug',
    });
    expect(bought.status).toBe(303);
    const customer = new CashierCustomer(gateway_url);
    await customer.login(bought.headers.get('location')!);
    const card_form = await customer.get('/cashier?method=card');
    const paid = await customer.payByCard(card_form.text, { card_number: '4111111111111111', card_exp: '12/34', cvv: '568' });
    expect(paid.status).toBe(303);
    const orders = await (await fetch(`${shop_url}/orders`)).text();
    const order_id = /\/orders\/(shop-[0-9a-f]+)/.exec(orders)![1]!;
    await waitUntil(
      async () => (await (await fetch(`${shop_url}/orders/${order_id}`)).text()).includes('id="order-status">Paid'),
      'the order paid',
    );

    // The TypeScript snippet, saved in the clone and run with npx tsx.
    fs.mkdirSync(snippets, { recursive: true });
    const file = path.join(snippets, 'try-sdk.ts');
    fs.writeFileSync(file, typescript[0]!.code);
    const ran = spawnSync('bash', ['-c', `npx tsx ${JSON.stringify(path.relative(ROOT, file))}`], {
      cwd: ROOT,
      env,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(ran.status, `${ran.stdout}${ran.stderr}`).toBe(0);
    expect(ran.stdout).toMatch(/^sale \d+: approved$/m);
  }, 240_000);

  it('every TypeScript block type-checks against the SDK', () => {
    const blocks = blocksOf(README).filter((b) => b.language === 'ts');
    expect(blocks.length).toBeGreaterThanOrEqual(4);
    const dir = path.join(snippets, 'check');
    fs.mkdirSync(dir, { recursive: true });
    blocks.forEach((block, i) => fs.writeFileSync(path.join(dir, `block-${i + 1}.ts`), block.code));
    fs.writeFileSync(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        extends: path.join(ROOT, 'tsconfig.json'),
        compilerOptions: { noEmit: true, rootDir: ROOT },
        include: ['*.ts'],
      }),
    );
    const result = spawnSync(process.execPath, [TSC, '-p', path.join(dir, 'tsconfig.json')], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(`${result.stdout}${result.stderr}`).toBe('');
    expect(result.status).toBe(0);
  }, 120_000);
});
