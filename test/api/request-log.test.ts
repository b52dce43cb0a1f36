// The request log (issue 28, item 5) on a real gateway, on each store: API requests (an approved
// sale with a real PAN and CVV, a refused signature, a bad field, a v1.3 call, an unknown path
// under /api/) are kept with their merchant, route, operation, statuses, trace_id and masked
// bodies; pages and probes are not. Then the request_log rows and the whole database (SQLite file
// and WAL, every PostgreSQL row) are scanned: no PAN, CVV, merchant secret or signature in clear.
// Then the bounds: at most PAYGATE_REQUEST_LOG_MAX_ROWS rows after a prune, and rows older than
// PAYGATE_REQUEST_LOG_DAYS gone once the gateway clock has moved past them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJson, postSigned, signed } from '../support/client.js';
import { saleA } from '../support/bodies.js';
import { storedText, tableRows } from '../support/database-scan.js';
import { scrapeMetrics } from '../support/metrics-text.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { advanceClock } from '../support/backoffice.js';
import { storeKinds } from '../support/stores.js';
import { createPlanVia, useClock } from '../support/v13.js';

const PAN = '4000056655665556';
const CVV = '7391'; // distinctive and not a sandbox outcome code: approves
const MAX_ROWS = 10;

function containsCvv(text: string, cvv: string): boolean {
  return new RegExp(`(^|[^0-9A-Za-z+/*])${cvv}([^0-9A-Za-z+/*]|$)`).test(text);
}

describe.each(storeKinds())('the request log on %s', (kind) => {
  let gw: TestGateway;
  const signatures: string[] = [];
  let sale_trace_id = 0;
  const now_s = () => Math.floor(gw.gateway.deps.clock.now_ms() / 1000);
  const rows = async () => (await tableRows(gw, 'request_log')).sort((a, b) => Number(a.id) - Number(b.id));

  beforeAll(async () => {
    gw = await startTestGateway(kind, { env: { PAYGATE_REQUEST_LOG_MAX_ROWS: String(MAX_ROWS) } });
    useClock(() => now_s());
    const merchant = gw.merchant;
    // An approved sale with a real PAN and CVV.
    const sale_body = signed(saleA(merchant, { card_number: PAN, cvv: CVV, timestamp: now_s() }), merchant.secret);
    signatures.push(sale_body.signature);
    const sale = await postJson(gw.url, '/api/process', sale_body);
    expect(sale.body).toMatchObject({ status: 0, transaction_status: 'approved' });
    sale_trace_id = Number(sale.body.trace_id);
    signatures.push(String(sale.body.signature));
    // A refused signature (signed with another secret), card data in it.
    const refused_body = signed(saleA(merchant, { card_number: PAN, cvv: CVV, timestamp: now_s() }), 'not-the-secret-0123');
    signatures.push(refused_body.signature);
    const refused = await postJson(gw.url, '/api/process', refused_body);
    expect(refused.body.status).toBe(2);
    signatures.push(String(refused.body.signature));
    // A bad field, with the PAN also sent in a field that is not for it.
    const bad = await postSigned(
      gw.url,
      '/api/process',
      saleA(merchant, { amount: 'abc', city: `x ${PAN} y`, timestamp: now_s() }),
      merchant.secret,
    );
    expect(bad.body.status).toBe(10);
    signatures.push(String(bad.body.signature));
    // The v1.3 subscription API, an unknown path under /api/, and what is not logged: a probe, a page.
    await createPlanVia(gw.url, merchant);
    expect((await postJson(gw.url, '/api/no-such-call', { merchant_id: merchant.merchant_id })).http_status).toBe(404);
    await fetch(`${gw.url}/healthz`);
    await fetch(`${gw.url}/backoffice/`);
    await gw.gateway.deps.request_log.flush();
  });
  afterAll(async () => {
    useClock(null);
    await gw?.close();
  });

  it('keeps each API request with its merchant, route, operation, statuses, trace_id and latency; not pages or probes', async () => {
    const kept = await rows();
    expect(kept.map((r) => [r.method, r.route, r.api_status])).toEqual([
      ['POST', '/api/process', 0],
      ['POST', '/api/process', 2],
      ['POST', '/api/process', 10],
      ['POST', '/api/v1.3/subscription-plan', 0],
      ['POST', '/api/no-such-call', 20],
    ]);
    const [sale, refused, bad, plan, unknown] = kept;
    expect(sale).toMatchObject({ merchant_id: gw.merchant.merchant_id, operation: 'sale', http_code: 200 });
    expect(Number(sale!.trace_id)).toBe(sale_trace_id); // bigint: a string through the test's own pg client
    expect(Number(sale!.latency_ms)).toBeGreaterThanOrEqual(0);
    expect(String(sale!.request_json)).toContain('400005******5556');
    expect(JSON.parse(String(sale!.answer_json))).toMatchObject({ status: 0, transaction_status: 'approved', signature: '[redacted]' });
    // The refused signature is the merchant's (it is known), with the sandbox's help kept.
    expect(refused).toMatchObject({ merchant_id: gw.merchant.merchant_id, http_code: 200 });
    expect(String(refused!.description)).toMatch(/^Invalid signature/);
    expect(String(refused!.answer_json)).toContain('400005******5556');
    expect(bad!.description).toContain('amount');
    expect(JSON.parse(String(bad!.request_json))).toMatchObject({ city: 'x 400005******5556 y' });
    expect(plan).toMatchObject({ merchant_id: gw.merchant.merchant_id });
    expect(unknown).toMatchObject({ merchant_id: null, http_code: 404, path: '/api/no-such-call' });
  });

  it('counts the rows written and the entries dropped in /metrics', async () => {
    const metrics = await scrapeMetrics(gw.url);
    const written = Number(/^paygate_request_log_entries\{outcome="written"\} (\d+)$/m.exec(metrics)?.[1]);
    expect(written).toBe(gw.gateway.deps.request_log.written);
    expect(written).toBeGreaterThanOrEqual(5);
    expect(metrics).toMatch(/^paygate_request_log_entries\{outcome="dropped"\} 0$/m);
  });

  it('never keeps a PAN, CVV, secret or signature: not in the rows, not anywhere in the database', async () => {
    const kept = JSON.stringify(await rows());
    const stored = await storedText(gw);
    for (const text of [kept, stored]) {
      expect(text).not.toContain(PAN);
      expect(containsCvv(text, CVV)).toBe(false);
      expect(text).not.toContain(gw.merchant.secret);
      for (const signature of signatures) expect(text).not.toContain(signature);
    }
    expect(kept).not.toMatch(/cvv/i);
    expect(kept).not.toContain('12/2035'); // the card's expiry
  });

  it('prunes to PAYGATE_REQUEST_LOG_MAX_ROWS, the newest kept', async () => {
    for (let i = 0; i < MAX_ROWS + 3; i += 1) await postJson(gw.url, '/api/no-such-call', { n: i });
    await gw.gateway.deps.request_log.flush();
    expect((await rows()).length).toBe(MAX_ROWS + 8);
    await gw.gateway.deps.request_log.prune();
    const kept = await rows();
    expect(kept.length).toBeLessThanOrEqual(MAX_ROWS);
    expect(kept.length).toBeGreaterThan(0);
    // The last request is among them.
    expect(JSON.parse(String(kept[kept.length - 1]!.request_json))).toEqual({ n: MAX_ROWS + 2 });
  });

  it('prunes rows older than PAYGATE_REQUEST_LOG_DAYS on the gateway clock', async () => {
    const before = await rows();
    await advanceClock(gw, 8 * 86_400);
    await postSigned(gw.url, '/api/transaction-status', statusBody(), gw.merchant.secret);
    await gw.gateway.deps.request_log.flush();
    await gw.gateway.deps.request_log.prune();
    const kept = await rows();
    // Only what came after the move (the clock's own call is not an API request).
    expect(kept.map((r) => r.route)).toEqual(['/api/transaction-status']);
    expect(Number(kept[0]!.created_at_ms)).toBeGreaterThan(Math.max(...before.map((r) => Number(r.created_at_ms))) + 7 * 86_400_000);
  });

  function statusBody(): Record<string, unknown> {
    return {
      merchant_id: gw.merchant.merchant_id,
      application_key: gw.merchant.application_key,
      trace_id: sale_trace_id,
      timestamp: now_s(),
      version: '1.2',
    };
  }
});
