// A merchant installs the SDK alone: the package `npm pack` makes, installed into an empty project
// with no network and nothing else, must run on plain Node (no TypeScript, no gateway code) and talk
// to a real gateway. Built into a scratch folder, so that it never races the README test's build.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { TestGateway } from '../../../test/support/gateway.js';
import { withGateway } from './support.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SDK = path.join(ROOT, 'packages/sdk');

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): string {
  const result = spawnSync(command, args, { cwd, env, encoding: 'utf8', timeout: 120_000 });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed: ${result.stdout}${result.stderr}`);
  return result.stdout;
}

/** Without blocking this process: the gateway the program talks to runs in it. */
function runAsync(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${command} ${args.join(' ')} exited ${code}: ${out}${err}`)),
    );
  });
}

describe("the packed SDK in a merchant's empty project", () => {
  let gw: TestGateway;
  withGateway((started) => (gw = started));
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-sdk-pack-'));
  afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

  it('installs with no dependencies and works on plain Node: a verified call, a webhook handler', async () => {
    const stage = path.join(scratch, 'stage');
    fs.mkdirSync(stage);
    run(
      process.execPath,
      [
        path.join(ROOT, 'node_modules/typescript/bin/tsc'),
        '-p',
        path.join(SDK, 'tsconfig.build.json'),
        '--outDir',
        path.join(stage, 'dist'),
      ],
      ROOT,
    );
    for (const file of ['package.json', 'README.md']) fs.copyFileSync(path.join(SDK, file), path.join(stage, file));
    const tarball = run('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', scratch], stage).trim().split('\n').at(-1)!;
    const listing = run('tar', ['-tzf', path.join(scratch, tarball)], scratch)
      .split('\n')
      .filter(Boolean);
    expect(listing).toContain('package/dist/index.js');
    expect(listing).toContain('package/dist/index.d.ts');
    expect(listing).toContain('package/README.md');
    expect(listing.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))).toEqual([]);

    const app = path.join(scratch, 'merchant-app');
    fs.mkdirSync(app);
    fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'merchant-app', private: true, type: 'module' }));
    run('npm', ['install', '--offline', '--ignore-scripts', '--no-audit', '--no-fund', path.join(scratch, tarball)], app);
    expect(fs.readdirSync(path.join(app, 'node_modules')).filter((name) => !name.startsWith('.'))).toEqual(['@paygate']);

    fs.writeFileSync(
      path.join(app, 'main.js'),
      `
      import { PaygateClient, createWebhookHandler } from '@paygate/sdk';
      const client = new PaygateClient({
        base_url: process.env.PAYGATE_URL, merchant_id: process.env.MERCHANT_ID, secret: process.env.SECRET, application_key: process.env.APPLICATION_KEY,
      });
      const token = await client.tokenize({ pin: 'packed', card_number: '4111111111111111', card_exp: '12/2035' });
      client.close();
      const handler = createWebhookHandler({ secret: process.env.SECRET, on_transaction: () => undefined });
      const unsigned = await handler.handle({ headers: {}, body: '{"trace_id":1}' });
      console.log(JSON.stringify({ kind: token.kind, card_number: token.answer?.card_number, unsigned: unsigned.http_status }));
    `,
    );
    const output = await runAsync(process.execPath, ['main.js'], app, {
      ...process.env,
      PAYGATE_URL: gw.url,
      MERCHANT_ID: gw.merchant.merchant_id,
      SECRET: gw.merchant.secret,
      APPLICATION_KEY: gw.merchant.application_key,
    });
    expect(JSON.parse(output)).toEqual({ kind: 'ok', card_number: '411111******1111', unsigned: 401 });
  }, 180_000);
});
