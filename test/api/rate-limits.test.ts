// Rate limits (issue 19 item 7, decisions.md §15): above the rate per merchant or per client
// address, HTTP 429 with the envelope, status 28 `Too many requests`, signed when the merchant is
// known, and Retry-After.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyBody } from '../../src/domain/signing.js';
import { saleA } from '../support/bodies.js';
import { postSigned } from '../support/client.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../support/gateway.js';
import { v13 } from '../support/v13.js';

describe('per merchant', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway('sqlite', { env: { PAYGATE_RATE_LIMIT_MERCHANT_PER_MINUTE: '5' } });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('answers 429, signed, with Retry-After, once the merchant is over its rate; other merchants go on', async () => {
    const merchant = await gw.createMerchant();
    for (let i = 0; i < 5; i += 1) {
      expect((await postSigned(gw.url, '/api/process', saleA(merchant), merchant.secret)).body).toMatchObject({ status: 0 });
    }
    const response = await fetch(`${gw.url}/api/process`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...saleA(merchant), signature: 'x' }),
    });
    expect(response.status).toBe(429);
    const retry_after = Number(response.headers.get('retry-after'));
    expect(retry_after).toBeGreaterThanOrEqual(1);
    expect(retry_after).toBeLessThanOrEqual(60);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ status: 28, description: 'Too many requests' });
    expect(verifyBody(body, merchant.secret)).toBe(true);
    // The v1.3 calls count against the same allowance, and answer with their header.
    const v = await v13(gw.url, 'GET', '/api/v1.3/subscription-plan', merchant);
    expect(v).toMatchObject({ http_status: 429, body: { status: 28, description: 'Too many requests' } });
    expect(v.header).not.toBeNull();
    // Another merchant from the same address is not held back.
    const other = await gw.createMerchant();
    expect((await postSigned(gw.url, '/api/process', saleA(other), other.secret)).body).toMatchObject({ status: 0 });
    const metrics = await (await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
    expect(metrics).toMatch(/^paygate_rate_limited_total\{limit="merchant"\} 2$/m);
  });
});

describe('per client address', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway('sqlite', { env: { PAYGATE_RATE_LIMIT_ADDRESS_PER_MINUTE: '4' } });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('answers 429 unsigned before reading the request, on any route; /healthz and /metrics are never held back', async () => {
    for (let i = 0; i < 4; i += 1) expect((await fetch(`${gw.url}/openapi.json`)).status).toBe(200);
    const refused = await fetch(`${gw.url}/api/process`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(saleA(gw.merchant)),
    });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const body = (await refused.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ status: 28, description: 'Too many requests' });
    expect(body.signature).toBeUndefined();
    // No proxy is trusted (PAYGATE_TRUSTED_PROXIES unset): a client cannot claim another address.
    expect((await fetch(`${gw.url}/openapi.json`, { headers: { 'x-forwarded-for': '203.0.113.99' } })).status).toBe(429);
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).status).toBe(200);
  });
});

describe('behind a trusted proxy', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway('sqlite', {
      env: { PAYGATE_RATE_LIMIT_ADDRESS_PER_MINUTE: '2', PAYGATE_TRUSTED_PROXIES: '127.0.0.1' },
    });
  });
  afterAll(async () => {
    await gw?.close();
  });

  const from = (forwarded_for: string) => fetch(`${gw.url}/openapi.json`, { headers: { 'x-forwarded-for': forwarded_for } });

  it("counts each client by the proxy's X-Forwarded-For, the last address in it that is not a trusted proxy", async () => {
    expect((await from('203.0.113.7')).status).toBe(200);
    expect((await from('203.0.113.7')).status).toBe(200);
    expect((await from('203.0.113.7')).status).toBe(429);
    // Another client through the same proxy is not held back, whatever it claims further left.
    expect((await from('203.0.113.7, 198.51.100.9')).status).toBe(200);
    // Through two trusted proxies it is still the same client, now over its rate.
    expect((await from('198.51.100.9, 127.0.0.1')).status).toBe(200);
    expect((await from('198.51.100.9')).status).toBe(429);
  });
});
