// After a run of card traffic, no full PAN and no CVV is found anywhere the gateway wrote:
// its log file, the SQLite files (database and WAL), or any PostgreSQL table.
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJson, postSigned, signed } from '../support/client.js';
import { refundC, saleA } from '../support/bodies.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { storeKinds } from '../support/stores.js';

const PAN = '4000056655665556';
const CVV = '7391'; // distinctive and not a sandbox outcome code: approves
const CHALLENGE_CVV = '333';

function containsCvv(text: string, cvv: string): boolean {
  return new RegExp(`(^|[^0-9A-Za-z+/])${cvv}([^0-9A-Za-z+/]|$)`).test(text);
}

describe.each(storeKinds())('no card data at rest or in logs on %s', (kind) => {
  let gw: TestGateway;
  let challenge_token = '';
  beforeAll(async () => {
    gw = await startTestGateway(kind);
    const post = (path_: string, body: Record<string, unknown>) => postSigned(gw.url, path_, body, gw.merchant.secret);
    const sale = await post('/api/process', saleA(gw.merchant, { card_number: PAN, cvv: CVV }));
    expect(sale.body.transaction_status).toBe('approved');
    await post('/api/process', refundC(gw.merchant, sale.body.trace_id, { card_number: PAN }));
    await post('/api/process', saleA(gw.merchant, { card_number: PAN, cvv: '000' }));
    const challenge = await post('/api/process', saleA(gw.merchant, { card_number: PAN, cvv: CHALLENGE_CVV }));
    challenge_token = String(challenge.body.redirect_url).split('/').pop()!;
    await fetch(String(challenge.body.redirect_url));
    await post('/api/tokenize', {
      merchant_id: gw.merchant.merchant_id, application_key: gw.merchant.application_key, pin: 'cust-9', card_number: PAN,
      card_exp: '10/2033', timestamp: Math.floor(Date.now() / 1000), version: '1.2',
    });
    // A bad-signature request with card data must not reach the log either.
    await postJson(gw.url, '/api/process', signed(saleA(gw.merchant, { card_number: PAN, cvv: CVV }), 'wrong-secret'));
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('keeps PAN, CVV, signatures and tokens out of the log', async () => {
    await gw.gateway.app.close(); // flushes the request logs
    await new Promise((resolve) => setTimeout(resolve, 200));
    const log = fs.readFileSync(gw.log_file, 'utf8');
    expect(log).toContain('signed request'); // the bodies were logged, redacted
    expect(log).toContain('[redacted]');
    expect(log).not.toContain(PAN);
    expect(containsCvv(log, CVV)).toBe(false);
    expect(log).not.toContain(challenge_token);
    expect(log).not.toContain(gw.merchant.secret);
    expect(log).not.toMatch(/"signature":"[0-9a-f]{96}"/);
  });

  it('keeps PAN and CVV out of the database', async () => {
    let stored: string;
    if (kind === 'sqlite') {
      stored = fs.readdirSync(gw.data_dir)
        .filter((f) => f.startsWith('paygate.sqlite'))
        .map((f) => fs.readFileSync(path.join(gw.data_dir, f)).toString('latin1'))
        .join('\n');
      expect(stored.length).toBeGreaterThan(0);
    } else {
      const client = new pg.Client({ connectionString: gw.database_url! });
      await client.connect();
      try {
        const tables = await client.query<{ tablename: string }>(`select tablename from pg_tables where schemaname = 'public'`);
        const parts: string[] = [];
        for (const { tablename } of tables.rows) {
          const rows = await client.query(`select row_to_json(t)::text as j from "${tablename}" t`);
          parts.push(...rows.rows.map((r: { j: string }) => r.j));
        }
        stored = parts.join('\n');
      } finally {
        await client.end();
      }
    }
    expect(stored).toContain('400005******5556'); // the masked form is there
    expect(stored).not.toContain(PAN);
    expect(containsCvv(stored, CVV)).toBe(false);
    expect(stored).not.toMatch(/"cvv"/);
  });
});
