// The first sale in one minute (issue 28), run as written: `npm start` (the built gateway, as a
// reader starts it) on a fresh data folder prints the demo merchant, the admin token and the first
// screen; then the "A first sale in one minute" blocks of docs/signing.md and of README.md, each
// saved and run as they stand (sale.json from the JSON block, the shell block's one line with
// `npx paygate sign --now` piped into curl), with PAYGATE_SECRET set to the secret npm start
// printed, as both pages tell the reader to. Only the address differs: the pages say
// http://127.0.0.1:8080, the test's gateway listens on a free port (so a run never meets a
// developer's own gateway). The answer must be status 0, approved, signed with the merchant's secret.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { verifyBody } from '../../src/domain/signing.js';
import { freePort } from '../support/child-gateway.js';
import { waitUntil } from '../support/notification-merchant.js';
import { ensureBuilt } from '../support/build.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DOCUMENTED_URL = 'http://127.0.0.1:8080';

interface Block {
  readonly language: string;
  readonly code: string;
}

/** The fenced blocks of a page's section: from its heading to the next heading of the same or a higher level. */
function sectionBlocks(file: string, heading: string): Block[] {
  const markdown = fs.readFileSync(path.join(ROOT, file), 'utf8');
  const level = /^#+/.exec(heading)![0];
  const start = markdown.indexOf(`\n${heading}\n`);
  if (start === -1) throw new Error(`${file} has no section "${heading}"`);
  const next = new RegExp(`\\n#{1,${level.length}} `, 'g');
  next.lastIndex = start + heading.length + 1;
  const end = next.exec(markdown)?.index ?? markdown.length;
  return [...markdown.slice(start, end).matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm)].map((m) => ({ language: m[1]!, code: m[2]! }));
}

describe('the first sale in one minute, as docs/signing.md and README.md write it', () => {
  const data_dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-first-sale-'));
  // In the clone, where `npx paygate` finds the project's own command.
  const work_dir = path.join(ROOT, '.tmp', `first-sale-${randomBytes(4).toString('hex')}`);
  let gateway: ChildProcess | null = null;
  afterAll(async () => {
    if (gateway?.pid !== undefined && gateway.exitCode === null) {
      const exited = new Promise<void>((resolve) => gateway!.once('exit', () => resolve()));
      process.kill(-gateway.pid, 'SIGTERM');
      await exited;
    }
    fs.rmSync(data_dir, { recursive: true, force: true });
    fs.rmSync(work_dir, { recursive: true, force: true });
  });

  it("npm start, its first screen, then each page's sale.json and curl line: approved", async () => {
    ensureBuilt();
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const env: NodeJS.ProcessEnv = { ...process.env, PAYGATE_DATA_DIR: data_dir, PORT: String(port), HOST: '127.0.0.1' };
    delete env.DATABASE_URL;
    delete env.PAYGATE_ADMIN_TOKEN;
    delete env.PUBLIC_URL;
    gateway = spawn('bash', ['-c', 'npm start'], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    gateway.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    gateway.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    await waitUntil(() => /Admin token /.test(out), `npm start's first screen (${out})`, 30_000);

    // What npm start printed: the credentials once, and where to go next.
    const demo = JSON.parse(/Demo sandbox merchant created: (\{.*\})/.exec(out)![1]!) as Record<string, string>;
    expect(demo).toMatchObject({ merchant_id: 'demo-merchant', application_key: 'demo-app' });
    expect(out).toMatch(/Sandbox admin token created: sbx_adm_\S+/);
    for (const next of [`paygate sandbox on ${url}. Where to go next:`, `${url}/reference`, `${url}/backoffice/`, 'docs/signing.md']) {
      expect(out).toContain(next);
    }
    // npm start runs the gateway with its heap bound (scripts/node-flags.mjs: 512 MB of old space,
    // so V8 collects before the old space has grown to four times the live heap).
    // The log line is written by pino's asynchronous destination, so it may reach the pipe after the first screen.
    await waitUntil(() => /"heap_limit_mb":\d+/.test(out), `the 'paygate listening' log line (${out.slice(0, 2000)})`, 10_000);
    const heap_limit_mb = Number(/"heap_limit_mb":(\d+)/.exec(out)?.[1]);
    expect(heap_limit_mb, out.slice(0, 2000)).toBeGreaterThanOrEqual(512);
    expect(heap_limit_mb).toBeLessThan(640);

    const pages = [
      ['docs/signing.md', '## A first sale in one minute'],
      ['README.md', '### A first sale in one minute'],
    ] as const;
    const bodies: string[] = [];
    for (const [file, heading] of pages) {
      const blocks = sectionBlocks(file, heading);
      const sale_json = blocks.find((b) => b.language === 'json')!;
      const command = blocks.find((b) => b.language === 'sh' && b.code.includes('curl'))!.code.trim();
      // One line: sign with the current time, send to the sandbox.
      expect(command.split('\n')).toHaveLength(1);
      expect(command).toContain('npx paygate sign --now');
      expect(command).toContain(`${DOCUMENTED_URL}/api/process`);
      bodies.push(JSON.stringify(JSON.parse(sale_json.code)));

      const dir = path.join(work_dir, path.basename(file, '.md'));
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, 'sale.json'), sale_json.code);
      // pipefail: a signing step that failed shows here, with its error, not as the empty body curl then sent.
      const ran = spawnSync('bash', ['-o', 'pipefail', '-c', command.replaceAll(DOCUMENTED_URL, url)], {
        cwd: dir,
        env: { ...env, PAYGATE_SECRET: demo.secret },
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(ran.status, `${file}: ${ran.stderr}`).toBe(0);
      const answer = JSON.parse(ran.stdout) as Record<string, unknown>;
      expect(answer, `${file}: ${ran.stderr}`).toMatchObject({
        status: 0,
        transaction_status: 'approved',
        error_details: '[TEST] Approved',
      });
      expect(verifyBody(answer, demo.secret!), `${file}: the answer is signed with the merchant's secret`).toBe(true);
    }
    // The two pages carry the same sale.
    expect(bodies[1]).toBe(bodies[0]);
  }, 240_000);
});
