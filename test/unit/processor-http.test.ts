// ProcessorHttp against real local servers: every way an exchange with a processor can end, and
// above all the line between "the processor cannot have received it" (not_sent: a payment may be
// failed at once) and "it may have" (lost: only asking the processor settles it).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { type ProcessorCallLabels, type ProcessorExchange, ProcessorHttp, timedOut } from '../../src/outbound/processor-http.js';
import { freePort } from '../support/child-gateway.js';

const POLICY = { timeout_ms: 500, connect_timeout_ms: 300, max_reply_bytes: 1024, allow_private: true };
const clients: ProcessorHttp[] = [];
const servers: http.Server[] = [];

function client(policy: Partial<typeof POLICY> = {}, observer: ConstructorParameters<typeof ProcessorHttp>[1] = null): ProcessorHttp {
  const made = new ProcessorHttp({ ...POLICY, ...policy }, observer);
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
      code: 'ECONNREFUSED',
    });
    const live = client({ allow_private: false });
    expect(await live.send({ method: 'POST', url: `http://127.0.0.1:${closed}/payments`, headers: {}, body: '{}' })).toMatchObject({
      kind: 'not_sent',
      reason: 'destination not allowed',
      code: 'EDESTINATIONNOTALLOWED',
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
    expect(timed_out).toMatchObject({ kind: 'lost', reason: 'timed out after 500 ms', code: 'ETIMEDOUT' });
    expect(timedOut(timed_out)).toBe(true);
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
      code: 'EANSWERTOOLARGE',
    });
  });

  it("keeps its connection to a processor that keeps it, and opens one a request when the processor's keep-alive is under 2 s", async () => {
    // undici reuses a connection only while more than its keepAliveTimeoutThreshold (2 s) short
    // of the Keep-Alive the server advertises: a processor keeping connections a minute, as load
    // balancers do, is sent every sale on the same connection; one that keeps them a second
    // (the tests' fakes by default) gets a connection, and its set-up, for each.
    const connectionsFor = async (keep_alive_timeout_ms: number): Promise<number> => {
      let connections = 0;
      const processor = http.createServer((_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
      processor.keepAliveTimeout = keep_alive_timeout_ms;
      processor.on('connection', () => (connections += 1));
      servers.push(processor);
      await new Promise<void>((resolve) => processor.listen(0, '127.0.0.1', resolve));
      const url = `http://127.0.0.1:${(processor.address() as AddressInfo).port}/payments`;
      const http_client = client();
      for (let sent = 0; sent < 5; sent += 1) {
        const exchange = await http_client.send({ method: 'POST', url, headers: {}, body: '{}' });
        expect(exchange).toMatchObject({ kind: 'answer', http_status: 200 });
      }
      return connections;
    };
    // Reused: undici's pool may open a second while the first is still finishing its answer.
    expect(await connectionsFor(60_000)).toBeLessThanOrEqual(2);
    expect(await connectionsFor(1_000)).toBe(5);
  });

  it('follows no redirect: a 3xx is an answer like any other', async () => {
    const url = await server((_request, response) => response.writeHead(302, { location: 'http://127.0.0.1:9/elsewhere' }).end());
    expect(await client().send({ method: 'GET', url: `${url}/payments/p`, headers: {} })).toMatchObject({
      kind: 'answer',
      http_status: 302,
    });
  });

  it("a gateway's labelled view reports every exchange to the observer with its labels; the root reports none", async () => {
    const seen: { labels: ProcessorCallLabels; exchange: ProcessorExchange }[] = [];
    const root = client({}, (labels, exchange) => seen.push({ labels, exchange }));
    const url = await server((_request, response) => response.writeHead(502, { 'x-answer': 'yes' }).end('{}'));
    const view = root.forGateway({ connector: 'checkout', gateway_id: 'g1' });
    const answer = await view.send({ method: 'GET', url: `${url}/payments/p`, headers: {} });
    expect(answer).toMatchObject({ kind: 'answer', http_status: 502, headers: { 'x-answer': 'yes' } });
    const closed = await freePort();
    await view.send({ method: 'GET', url: `http://127.0.0.1:${closed}/payments/p`, headers: {} });
    await root.send({ method: 'GET', url: `${url}/payments/p`, headers: {} });
    expect(seen.map((s) => [s.labels, s.exchange.kind])).toEqual([
      [{ connector: 'checkout', gateway_id: 'g1' }, 'answer'],
      [{ connector: 'checkout', gateway_id: 'g1' }, 'not_sent'],
    ]);
    expect(timedOut(seen[1]!.exchange)).toBe(false);
    // An observer that throws changes no outcome.
    const throwing = client({}, () => {
      throw new Error('observer failed');
    });
    expect(
      await throwing.forGateway({ connector: 'x', gateway_id: 'g' }).send({ method: 'GET', url: `${url}/p`, headers: {} }),
    ).toMatchObject({
      kind: 'answer',
      http_status: 502,
    });
  });
});
