// `paygate` as an operator of a live gateway runs it (issue 30), real processes on each store (a
// SQLite file, a PostgreSQL database reached by a URL that carries a password): every command
// that opens the store names it and the mode on stderr, never the password, and stdout holds only
// what a script reads; webhook_url is built on the public URL the running gateway recorded, and
// on the command's own only until one did, saying so; a command in the other mode than the
// gateway's is warned; gateways are named by label (given at create, renamed, 1 to 64 characters)
// in lists, in routing rules and where a command takes one; merchant list and user list, as tables
// or JSON lines; an unknown merchant's gateway list fails.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, TEST_MASTER_KEY, type TestGateway } from '../support/gateway.js';
import { createTestDatabase, type TestDatabase } from '../support/postgres.js';
import { storeKinds } from '../support/stores.js';
import { CLI_ENTRY } from '../support/build.js';

const CLI = [CLI_ENTRY];
const PASSWORD_IN_URL = 'pg-password-never-printed-42';
const CHANNEL = `pc_${'k'.repeat(26)}`;

interface Ran {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The CLI as a child process, asynchronously: the in-process gateway of a test keeps serving meanwhile. */
function run(args: string[], env: Record<string, string>): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...CLI, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

function jsonOf(ran: Ran): Record<string, unknown> {
  expect(ran.status, ran.stderr).toBe(0);
  return JSON.parse(ran.stdout) as Record<string, unknown>;
}

function jsonLines(ran: Ran): Record<string, unknown>[] {
  expect(ran.status, ran.stderr).toBe(0);
  return ran.stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe.each(storeKinds())('paygate CLI as an operator on %s', (kind) => {
  const data_dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-cli-operator-'));
  let database: TestDatabase | undefined;
  let env: Record<string, string>;
  /** How the first line of stderr names this store. */
  let store_line: string;
  let gateway: TestGateway | null = null;
  const checkout = (extra: string[] = []) => [
    '--connector',
    'checkout',
    '--currencies',
    'USD',
    '--setting',
    'secret_key=sk_sbox_cli_operator_key_0001',
    '--setting',
    `processing_channel_id=${CHANNEL}`,
    '--setting',
    'webhook_secret=whsec-cli-operator-0123456789',
    '--setting',
    'base_url=https://api.sandbox.checkout.com',
    ...extra,
  ];

  beforeAll(async () => {
    env = { PAYGATE_DATA_DIR: data_dir, PAYGATE_ENV: 'live', PUBLIC_URL: 'https://cli.example.test', PAYGATE_LOG_LEVEL: 'warn' };
    if (kind === 'postgres') {
      database = await createTestDatabase();
      const url = new URL(database.url);
      url.password = PASSWORD_IN_URL;
      env = { ...env, DATABASE_URL: url.toString(), PAYGATE_MASTER_KEY: TEST_MASTER_KEY };
      store_line = `paygate: live mode, store: PostgreSQL database ${url.pathname.slice(1)} on ${url.hostname}:${url.port || '5432'} (user ${url.username})`;
    } else {
      store_line = `paygate: live mode, store: SQLite file ${path.join(data_dir, 'paygate.sqlite')}`;
    }
  });
  afterAll(async () => {
    await gateway?.close();
    await database?.drop();
    fs.rmSync(data_dir, { recursive: true, force: true });
  });

  it('names the store and the mode first on stderr of every command that opens it, never the password; stdout is the JSON', async () => {
    const created = await run(['merchant', 'create', '--merchant-id', `ops-${kind}`, '--secret', 'ops-secret-0001'], env);
    expect(jsonOf(created)).toMatchObject({ merchant_id: `ops-${kind}`, gateway: null });
    expect(created.stderr.split('\n')[0]).toBe(store_line);
    for (const args of [
      ['merchant', 'list'],
      ['gateway', 'list'],
      ['user', 'list'],
      ['route', 'list', '--merchant-id', `ops-${kind}`],
    ]) {
      const ran = await run(args, env);
      expect(ran.status, `${args.join(' ')}: ${ran.stderr}`).toBe(0);
      expect(ran.stderr.split('\n')[0], args.join(' ')).toBe(store_line);
      expect(ran.stderr + ran.stdout).not.toContain(PASSWORD_IN_URL);
    }
  });

  it("builds webhook_url on this command's own PUBLIC_URL until a gateway has started, and says so", async () => {
    const created = await run(['gateway', 'create', '--merchant-id', `ops-${kind}`, '--label', '  Checkout EU  ', ...checkout()], env);
    const view = jsonOf(created);
    expect(view).toMatchObject({ label: 'Checkout EU', connector: 'checkout', merchant_id: `ops-${kind}` });
    expect(view.webhook_url).toBe(`https://cli.example.test/webhooks/checkout/${String(view.gateway)}`);
    expect(created.stderr).toContain(
      "no gateway has started on this store yet, so webhook_url is built on this command's own PUBLIC_URL (https://cli.example.test)",
    );
    // Without --label: the connector and the id's first 8.
    const unnamed = jsonOf(await run(['gateway', 'create', '--merchant-id', `ops-${kind}`, ...checkout()], env));
    expect(unnamed.label).toBe(`checkout ${String(unnamed.gateway).slice(0, 8)}`);
  });

  it("builds webhook_url on the running gateway's recorded public URL, and warns a command in the other mode", async () => {
    gateway = await startTestGateway(kind, {
      data_dir,
      database,
      env: { PAYGATE_ENV: 'live', PUBLIC_URL: 'https://pay.live.example.test', PAYGATE_ALLOW_PRIVATE_URLS: 'true' },
    });
    const shown = await run(['gateway', 'show', '--gateway', 'Checkout EU'], env);
    const view = jsonOf(shown);
    expect(view.webhook_url).toBe(`https://pay.live.example.test/webhooks/checkout/${String(view.gateway)}`);
    expect(shown.stderr).toContain("webhook_url is built on the running gateway's public URL https://pay.live.example.test (recorded ");
    expect(shown.stderr).toContain("not this command's PUBLIC_URL https://cli.example.test");
    // The same command in sandbox mode (PAYGATE_ENV unset) on the live gateway's store.
    const sandbox = await run(['gateway', 'list'], { ...env, PAYGATE_ENV: '' });
    expect(sandbox.status, sandbox.stderr).toBe(0);
    expect(sandbox.stderr.split('\n')[0]).toBe(store_line.replace('live mode', 'sandbox mode'));
    expect(sandbox.stderr).toMatch(
      /paygate: warning: the gateway last started on this store \(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\) was in live mode; this command runs in sandbox mode/,
    );
    expect((await run(['gateway', 'list'], env)).stderr).not.toContain('warning');
  });

  it('lists gateways by label (a table, or JSON lines), renames one within 1 to 64 characters, and takes a label where it takes an id', async () => {
    const listed = await run(['gateway', 'list', '--merchant-id', `ops-${kind}`], env);
    expect(listed.status, listed.stderr).toBe(0);
    const [header, first, second, ...rest] = listed.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^LABEL +MERCHANT +CONNECTOR +CURRENCIES +STATE$/);
    expect(first).toMatch(new RegExp(`^Checkout EU +ops-${kind} +checkout +USD +enabled$`));
    expect(second).toMatch(/^checkout [0-9a-f]{8} /);
    expect(rest).toEqual([]);
    expect(listed.stdout).not.toMatch(/[0-9a-f]{32}/);
    const lines = jsonLines(await run(['gateway', 'list', '--merchant-id', `ops-${kind}`, '--json'], env));
    expect(lines.map((g) => g.label)).toEqual(['Checkout EU', second!.split(/ {2,}/)[0]]);
    const id = String(lines[0]!.gateway);

    const renamed = jsonOf(await run(['gateway', 'rename', '--gateway', 'Checkout EU', '--label', 'Checkout EU · main'], env));
    expect(renamed).toMatchObject({ gateway: id, label: 'Checkout EU · main' });
    for (const [label, message] of [
      ['x'.repeat(65), '--label: expected text of 1 to 64 characters, got 65'],
      ['   ', '--label: expected text of 1 to 64 characters, got only spaces'],
    ] as const) {
      const refused = await run(['gateway', 'rename', '--gateway', id, '--label', label], env);
      expect(refused.status).toBe(2);
      expect(refused.stderr).toContain(`paygate: ${message}`);
    }
    expect(jsonOf(await run(['gateway', 'show', '--gateway', id], env)).label).toBe('Checkout EU · main');
    const disabled = jsonOf(await run(['gateway', 'disable', '--gateway', 'Checkout EU · main'], env));
    expect(disabled).toMatchObject({ gateway: id, enabled: false });
    expect((await run(['gateway', 'list', '--merchant-id', `ops-${kind}`], env)).stdout).toMatch(/^Checkout EU · main .* disabled$/m);
    jsonOf(await run(['gateway', 'enable', '--gateway', id], env));

    // The same label on another merchant's gateway: a label that names two is refused, --merchant-id narrows.
    jsonOf(await run(['merchant', 'create', '--merchant-id', `other-${kind}`, '--secret', 'other-secret-0001'], env));
    jsonOf(await run(['gateway', 'create', '--merchant-id', `other-${kind}`, '--label', 'Checkout EU · main', ...checkout()], env));
    const ambiguous = await run(['gateway', 'show', '--gateway', 'Checkout EU · main'], env);
    expect(ambiguous.status).toBe(2);
    expect(ambiguous.stderr).toContain(`paygate: 2 gateways are labelled "Checkout EU · main": ${id} (ops-${kind}), `);
    expect(jsonOf(await run(['gateway', 'show', '--gateway', 'Checkout EU · main', '--merchant-id', `ops-${kind}`], env)).gateway).toBe(id);
    const none = await run(['gateway', 'show', '--gateway', 'Nothing by this name'], env);
    expect([none.status, none.stderr.trimEnd().split('\n').at(-1)]).toEqual([
      1,
      'paygate: no gateway "Nothing by this name" (paygate gateway list shows them)',
    ]);

    // A routing rule's gateway by label, and the rules listed by label.
    const rule = jsonOf(
      await run(
        ['route', 'add', '--merchant-id', `ops-${kind}`, '--gateway', 'Checkout EU · main', '--priority', '1', '--currency', 'usd'],
        env,
      ),
    );
    expect(rule).toMatchObject({ gateway: id, gateway_label: 'Checkout EU · main', currencies: ['USD'] });
    const rules = await run(['route', 'list', '--merchant-id', `ops-${kind}`], env);
    expect(rules.stdout).toMatch(/^PRIORITY +GATEWAY +TAKES +RULE\n1 +Checkout EU · main +currency USD +rule_[0-9a-f]{24}\n$/);
    expect(jsonLines(await run(['route', 'list', '--merchant-id', `ops-${kind}`, '--json'], env))).toEqual([rule]);
  }, 180_000); // sixteen CLI processes, each starting Node and opening the store: over a minute in a loaded suite

  it('gateway list for a merchant that does not exist fails, naming it; an empty one says so on stderr', async () => {
    const unknown = await run(['gateway', 'list', '--merchant-id', 'nope'], env);
    expect(unknown.status).toBe(1);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toContain('paygate: no merchant nope on this store (paygate merchant list shows them)');
    jsonOf(await run(['merchant', 'create', '--merchant-id', `bare-${kind}`, '--secret', 'bare-secret-0001'], env));
    const empty = await run(['gateway', 'list', '--merchant-id', `bare-${kind}`], env);
    expect([empty.status, empty.stdout]).toEqual([0, '']);
    expect(empty.stderr).toContain(`merchant bare-${kind} has no gateway yet`);
  });

  it('lists merchants and back-office users as tables or JSON lines, never a password, a page at a time', async () => {
    jsonOf(
      await run(['user', 'create', '--email', `ops-${kind}@example.com`, '--password', 'correct horse battery', '--role', 'operator'], env),
    );
    const staff = ['user', 'create', '--email', `staff-${kind}@example.com`, '--password', 'correct horse battery'];
    jsonOf(await run([...staff, '--role', 'merchant', '--merchant-id', `ops-${kind}`], env));
    const users = await run(['user', 'list'], env);
    expect(users.stdout).toMatch(/^EMAIL +ROLE +MERCHANT +STATE +CREATED \(UTC\)\n/);
    expect(users.stdout).toMatch(new RegExp(`^ops-${kind}@example\\.com +operator +active +\\d{4}-`, 'm'));
    expect(users.stdout).toMatch(new RegExp(`^staff-${kind}@example\\.com +merchant +ops-${kind} +active `, 'm'));
    const of_merchant = jsonLines(await run(['user', 'list', '--merchant-id', `ops-${kind}`, '--json'], env));
    expect(of_merchant).toEqual([
      {
        user_id: expect.stringMatching(/^usr_/),
        email: `staff-${kind}@example.com`,
        role: 'merchant',
        merchant_id: `ops-${kind}`,
        created_at_ms: expect.any(Number),
        disabled_at_ms: null,
      },
    ]);
    for (const ran of [users, await run(['user', 'list', '--json'], env)]) expect(ran.stdout).not.toMatch(/argon2|password/i);

    const merchants = jsonLines(await run(['merchant', 'list', '--json'], env));
    expect(merchants.find((m) => m.merchant_id === `ops-${kind}`)).toMatchObject({ gateway_count: 2, disabled_at_ms: null });
    const table = await run(['merchant', 'list'], env);
    expect(table.stdout).toMatch(/^MERCHANT +STATE +APPLICATIONS +FRONTENDS +GATEWAYS +CREATED \(UTC\)\n/);
    expect(table.stdout).toMatch(new RegExp(`^ops-${kind} +enabled +1 +1 +2 +\\d{4}-`, 'm'));
    const first_page = await run(['merchant', 'list', '--limit', '1', '--json'], env);
    const [first] = jsonLines(first_page);
    expect(first_page.stderr).toContain(`paygate: more merchants follow: --after ${String(first!.merchant_id)}`);
    const next = jsonLines(await run(['merchant', 'list', '--after', String(first!.merchant_id), '--json'], env));
    expect(next.map((m) => m.merchant_id)).toEqual(merchants.slice(1).map((m) => m.merchant_id));
    const bad_limit = await run(['merchant', 'list', '--limit', '0'], env);
    expect([bad_limit.status, bad_limit.stderr.trim()]).toEqual([2, 'paygate: --limit: expected a whole number from 1 to 10000, got "0"']);
  });
});
