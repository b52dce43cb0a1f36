// TLS in front (issue 30 item 6, docs/production.md "TLS in front"): docs/deploy/Caddyfile run by
// a real Caddy before a real gateway, reached over HTTPS with the certificate checked (Caddy's own
// local authority, as it issues for a local name). Through it: health, a signed sale whose
// redirect_url is under PUBLIC_URL (https), HSTS, and the client's address as the gateway counts
// it: Caddy replaces a forged X-Forwarded-For, and the gateway trusts the proxy's
// (PAYGATE_TRUSTED_PROXIES), so a client cannot slip past its rate limit by claiming another address.
// Runs where the `caddy` command exists: the suite installs Debian's caddy where it can (root with
// apt-get, as in CI; test/support/chromium.ts ensureCaddy); skipped elsewhere.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { saleA } from '../support/bodies.js';
import { freePort } from '../support/child-gateway.js';
import { signed } from '../support/client.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { waitUntil } from '../support/notification-merchant.js';

function hasCaddy(): boolean {
  try {
    execFileSync('caddy', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe.skipIf(!hasCaddy())('TLS in front: docs/deploy/Caddyfile', () => {
  let gw: TestGateway;
  let caddy: ChildProcess;
  let home: string;
  let base: string;
  let tls: Agent;

  beforeAll(async () => {
    const https_port = await freePort();
    base = `https://localhost:${https_port}`;
    gw = await startTestGateway('sqlite', {
      env: { PUBLIC_URL: base, PAYGATE_TRUSTED_PROXIES: '127.0.0.1,::1', PAYGATE_RATE_LIMIT_ADDRESS_PER_MINUTE: '3' },
    });
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-caddy-'));
    caddy = spawn('caddy', ['run', '--adapter', 'caddyfile', '--config', 'docs/deploy/Caddyfile'], {
      env: {
        ...process.env,
        HOME: home,
        XDG_DATA_HOME: home,
        XDG_CONFIG_HOME: home,
        PAYGATE_DOMAIN: `localhost:${https_port}`,
        PAYGATE_UPSTREAM: new URL(gw.url).host,
        PAYGATE_CADDY_ADMIN: 'off',
        PAYGATE_CADDY_HTTP_PORT: String(await freePort()),
      },
      stdio: 'ignore',
    });
    // Caddy's local authority signs the certificate of a local name: the test trusts it, and only it.
    const root = path.join(home, 'caddy', 'pki', 'authorities', 'local', 'root.crt');
    const ca = await waitUntil(() => (fs.existsSync(root) ? fs.readFileSync(root) : undefined), "Caddy's local authority");
    tls = new Agent({ connect: { ca } });
    await waitUntil(async () => {
      try {
        return (await undiciFetch(`${base}/healthz`, { dispatcher: tls })).status === 200;
      } catch {
        return false;
      }
    }, 'the gateway over https');
  });
  afterAll(async () => {
    // The client's connections go first, at once: close() would wait for Caddy to end its
    // keep-alive connections, which a Caddy shutting down gracefully may take its time over.
    await tls?.destroy();
    caddy?.kill('SIGTERM');
    await gw?.close();
    if (home) fs.rmSync(home, { recursive: true, force: true });
  });

  const get = (url_path: string, headers: Record<string, string> = {}) => undiciFetch(`${base}${url_path}`, { dispatcher: tls, headers });

  it('serves the API over https with HSTS; redirect_url is under PUBLIC_URL; a forged X-Forwarded-For changes nothing', async () => {
    const health = await get('/healthz');
    expect(health.status).toBe(200);
    expect(health.headers.get('strict-transport-security')).toMatch(/max-age=/);
    expect(health.headers.get('server')).toBeNull();
    // A 3-D Secure sale (sandbox CVV 333): its page is on the public https address.
    const response = await undiciFetch(`${base}/api/process`, {
      dispatcher: tls,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(signed(saleA(gw.merchant, { cvv: '333' }), gw.merchant.secret)),
    });
    const sale = (await response.json()) as Record<string, unknown>;
    expect(sale).toMatchObject({ status: 0, transaction_status: 'pending_async' });
    expect(sale.redirect_url).toMatch(new RegExp(`^${base}/sandbox/3ds/`));
    // The client's address is Caddy's view of it: 3 requests a minute, however it names itself.
    expect((await get('/openapi.json')).status).toBe(200);
    expect((await get('/openapi.json')).status).toBe(200);
    expect((await get('/openapi.json', { 'x-forwarded-for': '203.0.113.7' })).status).toBe(429);
  });
});
