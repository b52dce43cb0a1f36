// The admin token out of the box (issue 28), through real gateways on each store: a sandbox started
// without PAYGATE_ADMIN_TOKEN makes one, announces it once with the first screen (where to go
// next), keeps it sealed (never in clear in the database), and admits it for the clock, the triggers
// and the operator API, again after a restart; an operator's PAYGATE_ADMIN_TOKEN wins and none is
// made; live mode makes none and keeps the operator API closed. And `npm start`'s real first screen,
// from the CLI process's stdout.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { postJson } from '../support/client.js';
import { spawnGateway } from '../support/child-gateway.js';
import { storedText, tableRows } from '../support/database-scan.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../support/gateway.js';
import { createTestDatabase, type TestDatabase } from '../support/postgres.js';
import { storeKinds } from '../support/stores.js';

const NO_TOKEN = { PAYGATE_ADMIN_TOKEN: '' };
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe.each(storeKinds())('the sandbox admin token on %s', (kind) => {
  const data_dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-admin-token-'));
  let database: TestDatabase | undefined;
  const running: TestGateway[] = [];
  afterAll(async () => {
    await Promise.all(running.map((gw) => gw.close()));
    await database?.drop();
  });

  async function start(env: Record<string, string>, lines: string[], dir = data_dir): Promise<TestGateway> {
    if (kind === 'postgres' && dir === data_dir) database ??= await createTestDatabase();
    const gw = await startTestGateway(kind, {
      env,
      data_dir: dir,
      database: dir === data_dir ? database : undefined,
      announce: (line) => lines.push(line),
    });
    running.push(gw);
    return gw;
  }

  it('first start: made, announced once with the first screen, sealed at rest, and it opens the clock and the operator API', async () => {
    const lines: string[] = [];
    const gw = await start(NO_TOKEN, lines);
    const token = gw.gateway.deps.config.admin_token!;
    expect(token).toMatch(/^sbx_adm_[A-Za-z0-9_-]{43}$/);
    const announced = lines.filter((line) => line.startsWith('Sandbox admin token created: '));
    expect(announced).toEqual([
      `Sandbox admin token created: ${token} (send it as Authorization: Bearer <token>; shown once, kept sealed)`,
    ]);
    // The first screen: where to go next.
    const screen = lines.join('\n');
    expect(lines).toContain(`paygate sandbox on ${gw.url}. Where to go next:`);
    expect(screen).toContain(`${gw.url}/reference`);
    expect(screen).toContain(`${gw.url}/backoffice/`);
    expect(screen).toContain('docs/signing.md');
    expect(screen).toContain('docs/test-cards.md');
    expect(screen).toContain('npx paygate trigger --list');
    expect(screen).toMatch(/Demo merchant +demo-merchant: its secret and keys are printed above, once/);
    expect(screen).toMatch(/Admin token +printed above, once/);
    expect(lines.findIndex((line) => line.startsWith('Demo sandbox merchant created: '))).toBeLessThan(
      lines.findIndex((line) => line.startsWith('paygate sandbox on ')),
    );

    expect(await postJson(gw.url, '/sandbox/clock', { advance_seconds: 0 }, bearer(token))).toMatchObject({ http_status: 200 });
    expect(await postJson(gw.url, '/sandbox/clock', { advance_seconds: 0 }, bearer(`${token}x`))).toMatchObject({ http_status: 401 });
    expect(await postJson(gw.url, '/sandbox/clock', { advance_seconds: 0 })).toMatchObject({ http_status: 401 });
    const listed = await fetch(`${gw.url}/operator/gateways`, { headers: bearer(token) });
    expect(listed.status).toBe(200);

    const [row] = await tableRows(gw, 'sandbox_admin_token');
    expect(row).toMatchObject({ id: 1 });
    expect(String(row!.token_sealed)).not.toContain(token.slice(8));
    expect(await storedText(gw)).not.toContain(token.slice(8));
  });

  it('a restart finds it: not announced again, the same token admitted', async () => {
    const token = running[0]!.gateway.deps.config.admin_token!;
    await running.shift()!.close();
    const lines: string[] = [];
    const gw = await start(NO_TOKEN, lines);
    expect(gw.gateway.deps.config.admin_token).toBe(token);
    expect(lines.some((line) => line.startsWith('Sandbox admin token created'))).toBe(false);
    expect(lines.some((line) => line.startsWith('Demo sandbox merchant created'))).toBe(false);
    expect(lines.join('\n')).toMatch(/Admin token +the sandbox's own, shown on first start/);
    expect(lines.join('\n')).toMatch(/Demo merchant +demo-merchant \(its secret was shown on first start/);
    expect(await postJson(gw.url, '/sandbox/clock', { advance_seconds: 0 }, bearer(token))).toMatchObject({ http_status: 200 });
  });

  it("the operator's PAYGATE_ADMIN_TOKEN wins: none is made, the configured one is admitted", async () => {
    const lines: string[] = [];
    const gw = await start({}, lines, fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-admin-token-')));
    expect(gw.gateway.deps.config.admin_token).toBe(ADMIN_TOKEN);
    expect(lines.some((line) => line.startsWith('Sandbox admin token created'))).toBe(false);
    expect(await gw.gateway.deps.store.sandboxAdmin.getAdminToken()).toBeNull();
    expect(lines.join('\n')).toMatch(/Admin token +PAYGATE_ADMIN_TOKEN/);
    expect(await postJson(gw.url, '/sandbox/clock', { advance_seconds: 0 }, bearer(ADMIN_TOKEN))).toMatchObject({ http_status: 200 });
  });

  it('live mode makes none: the operator API stays closed, the sandbox routes are absent', async () => {
    const lines: string[] = [];
    const gw = await start(
      { ...NO_TOKEN, PAYGATE_ENV: 'live', PAYGATE_ALLOW_PRIVATE_URLS: 'true' },
      lines,
      fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-admin-token-')),
    );
    expect(gw.gateway.deps.config.admin_token).toBeNull();
    expect(await gw.gateway.deps.store.sandboxAdmin.getAdminToken()).toBeNull();
    expect(lines.some((line) => line.startsWith('Sandbox admin token created'))).toBe(false);
    expect(lines).toContain(`paygate live on ${gw.url}. Where to go next:`);
    expect(lines.join('\n')).toMatch(/Admin token +none: set PAYGATE_ADMIN_TOKEN/);
    const sandbox_token = 'sbx_adm_' + 'a'.repeat(43);
    expect((await fetch(`${gw.url}/operator/gateways`, { headers: bearer(sandbox_token) })).status).toBe(401);
    const trigger = await postJson(
      gw.url,
      '/sandbox/triggers/sale.approved',
      { merchant_id: gw.merchant.merchant_id },
      bearer(sandbox_token),
    );
    expect(trigger).toMatchObject({ http_status: 404, body: { status: 20 } });
    expect((await postJson(gw.url, '/sandbox/clock', { advance_seconds: 0 }, bearer(sandbox_token))).http_status).toBe(404);
  });
});

describe('npm start (the CLI process) prints the first screen', () => {
  it('the demo merchant, the admin token, and where to go next, on stdout', async () => {
    const data_dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-first-screen-'));
    const child = await spawnGateway(
      { PAYGATE_DATA_DIR: data_dir, PAYGATE_ADMIN_TOKEN: '', PAYGATE_LOG_LEVEL: 'warn', DATABASE_URL: '' },
      { expect_demo: true },
    );
    try {
      // The first screen follows listening: wait for its last line.
      for (let i = 0; i < 100 && !/Admin token /.test(child.output()); i++) await new Promise((r) => setTimeout(r, 50));
      const out = child.output();
      const token = /Sandbox admin token created: (\S+) /.exec(out)?.[1];
      expect(token).toMatch(/^sbx_adm_/);
      expect(out).toContain(`paygate sandbox on ${child.url}. Where to go next:`);
      expect(out).toContain(`${child.url}/reference`);
      expect(out).toContain(`${child.url}/backoffice/`);
      expect(out).toContain('docs/signing.md');
      expect(child.demo).toMatchObject({ merchant_id: 'demo-merchant', application_key: 'demo-app' });
      expect(await postJson(child.url, '/sandbox/clock', { advance_seconds: 0 }, bearer(token!))).toMatchObject({ http_status: 200 });
    } finally {
      await child.kill('SIGTERM');
    }
  });
});
