// The HTTP edge of decisions.md §5: codes and envelopes for what never reaches an operation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyBody } from '../../src/domain/signing.js';
import { postJson } from '../support/client.js';
import { saleA } from '../support/bodies.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';

describe('HTTP edge', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway('sqlite');
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('answers 400 with the envelope for a body that is not a JSON object', async () => {
    for (const body of ['[1,2]', '"text"', '{not json', '42']) {
      const answer = await postJson(gw.url, '/api/process', body);
      expect(answer.http_status, body).toBe(400);
      expect(answer.body.status).toBeGreaterThan(0);
      expect(typeof answer.body.description).toBe('string');
    }
  });

  it('answers 400 for a form-encoded body on the API', async () => {
    const response = await fetch(`${gw.url}/api/process`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'merchant_id=x&amount=1',
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ status: 23 });
  });

  it('answers 413 for a body over 64 KiB', async () => {
    const answer = await postJson(gw.url, '/api/process', { ...saleA(gw.merchant), variable1: 'x'.repeat(70 * 1024) });
    expect(answer.http_status).toBe(413);
    expect(answer.body).toMatchObject({ status: 22 });
  });

  it('answers 404 for an unknown path and 405 for a wrong method', async () => {
    const missing = await fetch(`${gw.url}/api/nothing-here`, { method: 'POST' });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ status: 20 });
    for (const method of ['GET', 'PUT', 'DELETE', 'OPTIONS']) {
      const wrong = await fetch(`${gw.url}/api/process`, { method });
      expect(wrong.status, method).toBe(405);
      expect(await wrong.json()).toMatchObject({ status: 21 });
    }
  });

  it('refuses more than 100 fields by name of the limit', async () => {
    const body: Record<string, unknown> = saleA(gw.merchant);
    for (let i = 0; i < 101; i += 1) body[`extra_${i}`] = 'x';
    const answer = await postJson(gw.url, '/api/process', body);
    expect(answer.body).toMatchObject({ status: 10 });
    expect(answer.body.description).toMatch(/Too many fields/);
    expect(verifyBody(answer.body, gw.merchant.secret)).toBe(true); // the merchant was identified, so it is signed
  });

  it('answers 400 for a JSON body with a __proto__ key instead of polluting objects', async () => {
    const answer = await postJson(gw.url, '/api/process', '{"__proto__":{"polluted":1},"merchant_id":"x"}');
    expect(answer.http_status).toBe(400);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('serves /healthz when the store is reachable', async () => {
    const response = await fetch(`${gw.url}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ status: 'ok', store: 'sqlite' });
  });

  it('serves an OpenAPI document of every endpoint from the route schemas', async () => {
    const doc = (await (await fetch(`${gw.url}/openapi.json`)).json()) as { openapi: string; paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: { anyOf?: unknown[] } }> } }>> };
    expect(doc.openapi).toBe('3.1.0');
    for (const path of ['/api/process', '/api/tokenize', '/api/transaction-status', '/sandbox/3ds/{token}', '/sandbox/clock']) {
      expect(doc.paths[path], path).toBeDefined();
    }
    const process_schema = doc.paths['/api/process']!.post!.requestBody!.content['application/json']!.schema;
    expect(process_schema.anyOf?.length).toBeGreaterThanOrEqual(3);
    expect(JSON.stringify(process_schema)).toContain('"maxLength":19');
  });
});
