// ProcessorHttp against real local servers: every way an exchange with a processor can end, and
// above all the line between "the processor cannot have received it" (not_sent: a payment may be
// failed at once) and "it may have" (lost: only asking the processor settles it).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ProcessorHttp } from '../../src/outbound/processor-http.js';
import { freePort } from '../support/child-gateway.js';

const POLICY = { timeout_ms: 500, connect_timeout_ms: 300, max_reply_bytes: 1024, allow_private: true };
const clients: ProcessorHttp[] = [];
const servers: http.Server[] = [];

function client(policy: Partial<typeof POLICY> = {}): ProcessorHttp {
  const made = new ProcessorHttp({ ...POLICY, ...policy });
  clients.push(made);
  return made;
}

/** A server whose handler decides what the processor does with a request; resolves with its base URL. */
async function server(handle: (request: http.IncomingMessage, response: http.ServerResponse) => void): Promise<string> {
  const made = http.createServer(handle);
  servers.push(made);
  await new Promise<void>((resolve) => made.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(made.address() as AddressInfo).port}`;
}

afterEach(async () => {
  for (const made of clients.splice(0)) await made.close();
});
afterAll(async () => {
  for (const made of servers) {
    made.closeAllConnections();
    await new Promise((resolve) => made.close(resolve));
  }
});

describe('ProcessorHttp', () => {
  it('reads a whole answer, with the request as sent', async () => {
    let seen: { method?: string | undefined; headers?: http.IncomingHttpHeaders; body?: string } = {};
    const url = await server((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        seen = { method: request.method, headers: request.headers, body };
        response.writeHead(201, { 'content-type': 'application/json' }).end('{"id":"pay_1"}');
      });
    });
    const exchange = await client().send({
      method: 'POST',
      url: `${url}/payments`,
      headers: { 'cko-idempotency-key': 'k-1' },
      body: '{"amount":1}',
    });
    expect(exchange).toMatchObject({ kind: 'answer', http_status: 201, body: '{"id":"pay_1"}' });
    expect(seen).toMatchObject({
      method: 'POST',
      body: '{"amount":1}',
      headers: { 'cko-idempotency-key': 'k-1', 'content-type': 'application/json' },
    });
  });

  it('a connection refused, or a destination the policy refuses: not sent', async () => {
    const closed = await freePort();
    expect(await client().send({ method: 'POST', url: `http://127.0.0.1:${closed}/payments`, headers: {}, body: '{}' })).toMatchObject({
      kind: 'not_sent',
      reason: 'connection refused',
    });
    const live = client({ allow_private: false });
    expect(await live.send({ method: 'POST', url: `http://127.0.0.1:${closed}/payments`, headers: {}, body: '{}' })).toMatchObject({
      kind: 'not_sent',
      reason: 'destination not allowed',
    });
    // A name is checked on the address it resolves to (localhost: loopback).
    expect(await live.send({ method: 'GET', url: `http://localhost:${closed}/payments`, headers: {} })).toMatchObject({
      kind: 'not_sent',
      reason: 'destination not allowed',
    });
    expect(await live.send({ method: 'GET', url: 'ftp://example.com/', headers: {} })).toMatchObject({ kind: 'not_sent' });
  });

  it('a connection closed after the request arrived, no answer in time, or an answer too large: lost', async () => {
    const reset = await server((request) => request.on('data', () => undefined).on('end', () => request.socket.destroy()));
    expect(await client().send({ method: 'POST', url: `${reset}/payments`, headers: {}, body: '{}' })).toMatchObject({ kind: 'lost' });
    const silent = await server(() => undefined);
    const timed_out = await client().send({ method: 'POST', url: `${silent}/payments`, headers: {}, body: '{}' });
    expect(timed_out).toMatchObject({ kind: 'lost', reason: 'timed out after 500 ms' });
    expect(timed_out.duration_ms).toBeGreaterThanOrEqual(450);
    const slow_body = await server((_request, response) => {
      response.writeHead(200);
      response.write('{"id":');
    });
    expect(await client().send({ method: 'GET', url: `${slow_body}/payments/p`, headers: {} })).toMatchObject({ kind: 'lost' });
    const large = await server((_request, response) => response.writeHead(200).end('x'.repeat(4096)));
    expect(await client().send({ method: 'GET', url: `${large}/payments/p`, headers: {} })).toMatchObject({
      kind: 'lost',
      reason: 'answer larger than 1024 bytes',
    });
  });

  it('follows no redirect: a 3xx is an answer like any other', async () => {
    const url = await server((_request, response) => response.writeHead(302, { location: 'http://127.0.0.1:9/elsewhere' }).end());
    expect(await client().send({ method: 'GET', url: `${url}/payments/p`, headers: {} })).toMatchObject({
      kind: 'answer',
      http_status: 302,
    });
  });
});
