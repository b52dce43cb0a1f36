// Outbound safety (issue 4 §7): which addresses a live gateway may call, and postJson's
// time-out, reply cap and refusals against a real local server.
import dns from 'node:dns';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { addressAllowed, classifyAddress } from '../../src/outbound/addresses.js';
import { checkedLookup, outboundConnections, postJson, precheckUrl } from '../../src/outbound/post.js';

describe('classifyAddress', () => {
  it.each([
    ['8.8.8.8', 'public'],
    ['1.1.1.1', 'public'],
    ['172.15.255.255', 'public'],
    ['172.32.0.1', 'public'],
    ['192.169.0.1', 'public'],
    ['169.253.1.1', 'public'],
    ['100.63.255.255', 'public'],
    ['100.128.0.1', 'public'],
    ['11.0.0.1', 'public'],
    ['2001:4860:4860::8888', 'public'],
    ['2606:4700::1111', 'public'],
    ['::ffff:8.8.8.8', 'public'],
    ['2002:0808:0808::1', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['[::1]', 'loopback'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.0.1', 'private'],
    ['192.168.255.255', 'private'],
    ['100.64.0.1', 'private'],
    ['100.100.100.200', 'private'],
    ['fc00::1', 'private'],
    ['fd00:ec2::254', 'private'],
    ['fdff:ffff::1', 'private'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:192.168.1.1', 'private'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['2002:c0a8:0101::1', 'private'],
    ['169.254.0.1', 'link-local'],
    ['169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf::1', 'link-local'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['::ffff:0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['240.0.0.1', 'reserved'],
    ['ff02::1', 'reserved'],
    ['example.com', 'invalid'],
    ['1.2.3', 'invalid'],
    ['256.1.1.1', 'invalid'],
    ['', 'invalid'],
    ['::g', 'invalid'],
    ['1::2::3', 'invalid'],
  ])('%s is %s', (address, expected) => {
    expect(classifyAddress(address)).toBe(expected);
  });

  it('allows only public addresses unless private ones are allowed; never an invalid one', () => {
    expect(addressAllowed('8.8.8.8', false)).toBe(true);
    for (const address of ['127.0.0.1', '10.0.0.1', '169.254.169.254', 'fe80::1', 'fc00::1', '0.0.0.0', '::']) {
      expect(addressAllowed(address, false), address).toBe(false);
      expect(addressAllowed(address, true), address).toBe(true);
    }
    expect(addressAllowed('not-an-ip', true)).toBe(false);
  });
});

describe('precheckUrl', () => {
  it('refuses other schemes, credentials and disallowed IP literals before connecting', () => {
    expect(precheckUrl('ftp://example.com/x', false)).toEqual({ reason: 'unsupported URL scheme' });
    expect(precheckUrl('file:///etc/passwd', true)).toEqual({ reason: 'unsupported URL scheme' });
    expect(precheckUrl('not a url', true)).toEqual({ reason: 'invalid URL' });
    expect(precheckUrl('https://user:pw@example.com/', true)).toEqual({ reason: 'credentials in URL not allowed' });
    expect(precheckUrl('http://127.0.0.1/', false)).toEqual({ reason: 'destination not allowed' });
    expect(precheckUrl('http://[::ffff:a9fe:a9fe]/', false)).toEqual({ reason: 'destination not allowed' });
    expect(precheckUrl('http://2130706433/', false)).toEqual({ reason: 'destination not allowed' }); // 127.0.0.1 as one number
    expect(precheckUrl('http://0x7f.1/', false)).toEqual({ reason: 'destination not allowed' });
    expect('url' in precheckUrl('http://127.0.0.1/', true)).toBe(true);
    expect('url' in precheckUrl('https://merchant.example/notify', false)).toBe(true);
  });
});

describe('checkedLookup', () => {
  it('answers only allowed addresses, so the socket connects to a checked address', async () => {
    const lookup = (allow: boolean, all: boolean) =>
      new Promise<{ error: NodeJS.ErrnoException | null; address: unknown }>((resolve) => {
        checkedLookup(allow)('localhost', { all }, (error, address) => resolve({ error, address }));
      });
    const refused = await lookup(false, false);
    expect(refused.error?.code).toBe('EDESTINATIONNOTALLOWED');
    const allowed = await lookup(true, true);
    expect(allowed.error).toBeNull();
    expect(Array.isArray(allowed.address) && allowed.address.length > 0).toBe(true);
  });
});

describe('checkedLookup with names resolving to private and link-local addresses', () => {
  // A stand-in resolver: these names never reach DNS, and nothing here opens a socket.
  const table: Record<string, string[]> = {
    'lan.test': ['192.168.1.20'],
    'ten.test': ['10.0.0.9'],
    'metadata.test': ['169.254.169.254'],
    'v6-local.test': ['fe80::1', 'fd00::2'],
    'mixed.test': ['10.0.0.1', '8.8.8.8', '169.254.0.1'],
  };
  let lookups: string[] = [];
  beforeAll(() => {
    vi.spyOn(dns, 'lookup').mockImplementation(((hostname: string, _options: unknown, callback: (e: Error | null, a: unknown) => void) => {
      lookups.push(hostname);
      const found = table[hostname];
      if (!found) return callback(Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
      return callback(
        null,
        found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
      );
    }) as unknown as typeof dns.lookup);
  });
  afterAll(() => {
    vi.restoreAllMocks();
  });

  const lookup = (hostname: string, allow_private: boolean, all = true) =>
    new Promise<{ code: string | null; address: unknown }>((resolve) => {
      lookups = [];
      checkedLookup(allow_private)(hostname, { all }, (error, address) => resolve({ code: error?.code ?? null, address }));
    });

  it('refuses a name whose every address is private or link-local, in live mode', async () => {
    for (const name of ['lan.test', 'ten.test', 'metadata.test', 'v6-local.test']) {
      const answer = await lookup(name, false);
      expect(lookups, name).toEqual([name]); // answered by the stand-in, not by DNS
      expect(answer.code, name).toBe('EDESTINATIONNOTALLOWED');
    }
  });

  it('answers only the allowed addresses of a mixed name, so the socket can only connect to those', async () => {
    expect(await lookup('mixed.test', false)).toEqual({ code: null, address: [{ address: '8.8.8.8', family: 4 }] });
    expect(await lookup('mixed.test', false, false)).toMatchObject({ code: null, address: '8.8.8.8' });
    expect((await lookup('mixed.test', true)).address).toHaveLength(3);
    expect(await lookup('lan.test', true)).toEqual({ code: null, address: [{ address: '192.168.1.20', family: 4 }] });
  });
});

describe('postJson against a local server', () => {
  let server: http.Server;
  let base: string;
  const seen: string[] = [];
  beforeAll(async () => {
    server = http.createServer((request, response) => {
      seen.push(request.url ?? '');
      if (request.url === '/slow') return; // never answers
      if (request.url === '/big') {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end('x'.repeat(200 * 1024));
        return;
      }
      if (request.url === '/redirect') {
        response.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data' }).end();
        return;
      }
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ echo: body })));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const policy = { timeout_ms: 300, max_reply_bytes: 64 * 1024, allow_private: true };

  it('posts the body and reads the reply', async () => {
    const result = await postJson(`${base}/echo`, '{"a":1}', policy);
    expect(result).toMatchObject({ kind: 'reply', http_status: 200, body: JSON.stringify({ echo: '{"a":1}' }) });
  });

  it('times out a reply that never comes', async () => {
    const result = await postJson(`${base}/slow`, '{}', policy);
    expect(result).toMatchObject({ kind: 'failed', reason: 'timed out' });
    expect(result.duration_ms).toBeLessThan(5_000);
  });

  it('cuts off a reply over the size limit', async () => {
    const result = await postJson(`${base}/big`, '{}', policy);
    expect(result).toMatchObject({ kind: 'reply_too_large', http_status: 200 });
  });

  it('does not follow redirects', async () => {
    const result = await postJson(`${base}/redirect`, '{}', policy);
    expect(result).toMatchObject({ kind: 'reply', http_status: 302 });
  });

  it('refuses a loopback destination when private addresses are not allowed, by IP or by name, without connecting', async () => {
    const before = seen.length;
    const port = new URL(base).port;
    for (const url of [`${base}/x`, `http://localhost:${port}/x`]) {
      expect(await postJson(url, '{}', { ...policy, allow_private: false }), url).toMatchObject({
        kind: 'failed',
        reason: 'destination not allowed',
      });
    }
    expect(seen.length).toBe(before);
  });

  it('reports a refused connection and an aborted request', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    expect(await postJson(`http://127.0.0.1:${port}/`, '{}', policy)).toMatchObject({ kind: 'failed', reason: 'connection refused' });
    const controller = new AbortController();
    const pending = postJson(`${base}/slow`, '{}', { ...policy, timeout_ms: 5_000 }, controller.signal);
    setTimeout(() => controller.abort(), 50);
    expect(await pending).toMatchObject({ kind: 'failed', reason: 'interrupted (gateway shutting down)' });
  });
});

describe("postJson with kept-alive connections (the notification worker's)", () => {
  let server: http.Server;
  let base: string;
  let connections = 0;
  /** Requests served per socket; the `cut_request`-th request of a socket is cut off unanswered (0: none). */
  const served = new WeakMap<object, number>();
  let cut_request = 0;
  beforeAll(async () => {
    server = http.createServer((request, response) => {
      const count = (served.get(request.socket) ?? 0) + 1;
      served.set(request.socket, count);
      if (count === cut_request) {
        request.socket.destroy(); // the second: as a server does that closed the idle socket just as it was reused
        return;
      }
      request.resume();
      request.on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end('{"status":0}'));
    });
    server.on('connection', () => (connections += 1));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('sends one notification after another over one connection', async () => {
    const pool = outboundConnections();
    try {
      connections = 0;
      const policy = { timeout_ms: 2_000, max_reply_bytes: 1024, allow_private: true, connections: pool };
      for (let i = 0; i < 5; i += 1)
        expect(await postJson(`${base}/n`, '{}', policy)).toMatchObject({ kind: 'reply', http_status: 200, body: '{"status":0}' });
      expect(connections).toBe(1);
    } finally {
      pool.close();
    }
  });

  it('sends once more on a new connection when a kept socket turns out closed, and answers that reply', async () => {
    const pool = outboundConnections();
    cut_request = 2;
    try {
      connections = 0;
      const policy = { timeout_ms: 2_000, max_reply_bytes: 1024, allow_private: true, connections: pool };
      expect(await postJson(`${base}/n`, '{}', policy)).toMatchObject({ kind: 'reply', http_status: 200 });
      expect(await postJson(`${base}/n`, '{}', policy)).toMatchObject({ kind: 'reply', http_status: 200, body: '{"status":0}' });
      expect(connections).toBe(2);
    } finally {
      cut_request = 0;
      pool.close();
    }
  });

  it('a request cut off on a new connection is a failure, not sent twice', async () => {
    const pool = outboundConnections();
    cut_request = 1;
    try {
      connections = 0;
      const policy = { timeout_ms: 2_000, max_reply_bytes: 1024, allow_private: true, connections: pool };
      expect(await postJson(`${base}/n`, '{}', policy)).toMatchObject({ kind: 'failed', reason: 'connection reset' });
      expect(connections).toBe(1);
    } finally {
      cut_request = 0;
      pool.close();
    }
  });
});
