// What the SDK's tests share: a real gateway (the repository's own, started in the test process on
// SQLite: the SDK does not care which store is behind it), a client for its merchant, the customer
// of a card call, and a TCP proxy that breaks connections on purpose, to test the retries.
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll } from 'vitest';
import { PaygateClient, type PaygateClientOptions } from '@paygate/sdk';
import { startTestGateway, type TestGateway } from '../../../test/support/gateway.js';
import type { CreatedMerchant } from '../../../src/domain/merchants.js';

export function orderId(prefix = 'sdk'): string {
  return `${prefix}-${randomBytes(6).toString('hex')}`;
}

/** The customer fields a card sale or payout asks for. */
export const CUSTOMER = {
  pin: 'cust-42',
  dob: '1990-04-12',
  email: 'jane@example.com',
  phone: 441234567890,
  requester_ip: '203.0.113.7',
  address: '1 Main Street',
  city: 'London',
  country: 'GB',
  first_name: 'Jane',
  last_name: 'Doe',
  zip: 'SW1A 1AA',
  state: 'LN',
} as const;

export const CARD = { card_number: '4111111111111111', card_exp: '12/2035', cvv: '568' } as const;

/** A sale's fields besides the card and amount: the customer and the merchant's URLs. */
export function saleFields(overrides: Record<string, unknown> = {}) {
  return {
    order_id: orderId(),
    amount: 1999,
    currency: 'USD',
    ...CARD,
    ...CUSTOMER,
    return_url: 'https://shop.example/return',
    notification_url: 'https://shop.example/notify',
    ...overrides,
  };
}

export function clientFor(gw: { url: string }, merchant: CreatedMerchant, options: Partial<PaygateClientOptions> = {}): PaygateClient {
  return new PaygateClient({
    base_url: gw.url,
    merchant_id: merchant.merchant_id,
    secret: merchant.secret,
    application_key: merchant.application_key,
    frontend: merchant.frontend,
    retry_backoff_ms: 20,
    ...options,
  });
}

/** For the enclosing describe block: a gateway started before its tests and closed after them. */
export function withGateway(started: (gw: TestGateway) => void, env: Record<string, string> = {}): void {
  let gw: TestGateway | undefined;
  beforeAll(async () => {
    gw = await startTestGateway('sqlite', { env: { PAYGATE_NOTIFY_RETRY_SECONDS: '1', ...env } });
    started(gw);
  });
  afterAll(async () => {
    await gw?.close();
  });
}

/** What the proxy does with the next connection. */
export type ProxyMove =
  /** Relay both ways. */
  | 'pass'
  /** Close the client's connection as soon as it opens, before reading anything. */
  | 'reset_at_once'
  /** Relay the request to the gateway, then cut the client off before any answer reaches it. */
  | 'reset_after_forwarding'
  /** Relay the request and hold the answer back for ever (the client's time-out ends it). */
  | 'hold_answer'
  /** Relay, and hand the client an answer rewritten by `tamper`. */
  | 'tamper'
  /**
   * Relay the first request and its answer; when the client sends another request on the same
   * (kept-alive) connection, reset it unread, as a server does when it closes an idle connection
   * just as the client reuses it.
   */
  | 'reset_when_reused';

export interface FlakyProxy {
  readonly url: string;
  readonly port: number;
  /** Moves for the next connections, in order; once used up, every connection passes. */
  plan(...moves: ProxyMove[]): void;
  /** How many connections the proxy has taken. */
  connections(): number;
  /** How many requests reached the gateway through it. */
  forwarded(): number;
  tamper: (answer: string) => string;
  close(): Promise<void>;
}

/**
 * A TCP proxy in front of the gateway that misbehaves as planned, one move per connection. The
 * SDK's client is given the proxy's address; the gateway behind it is real.
 */
export async function startFlakyProxy(target_url: string, port = 0): Promise<FlakyProxy> {
  const target = new URL(target_url);
  let moves: ProxyMove[] = [];
  let taken = 0;
  let forwarded = 0;
  const sockets = new Set<net.Socket>();
  const proxy: Partial<FlakyProxy> = { tamper: (answer: string) => answer };
  const server = net.createServer((client) => {
    taken += 1;
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => undefined);
    const move = moves.shift() ?? 'pass';
    if (move === 'reset_at_once') {
      client.resetAndDestroy();
      return;
    }
    const upstream = net.connect(Number(target.port), target.hostname);
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    let counted = false;
    let answered = false;
    client.on('data', (chunk) => {
      if (move === 'reset_when_reused' && answered) {
        client.resetAndDestroy();
        upstream.destroy();
        return;
      }
      if (!counted) {
        counted = true;
        forwarded += 1;
      }
      upstream.write(chunk);
    });
    client.on('end', () => upstream.end());
    if (move === 'pass') {
      upstream.pipe(client);
      return;
    }
    if (move === 'reset_when_reused') {
      upstream.on('data', (chunk: Buffer) => {
        answered = true;
        client.write(chunk);
      });
      return;
    }
    if (move === 'reset_after_forwarding') {
      // Cut the client off once the gateway starts answering: it has processed the request.
      upstream.once('data', () => {
        client.resetAndDestroy();
        upstream.destroy();
      });
      return;
    }
    if (move === 'hold_answer') {
      upstream.on('data', () => undefined);
      return;
    }
    // tamper: collect the whole answer (the gateway closes nothing, so wait for the body by length).
    let buffered = Buffer.alloc(0);
    upstream.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const text = buffered.toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      if (split === -1) return;
      const length = Number(/content-length: *(\d+)/i.exec(text.slice(0, split))?.[1] ?? '0');
      const body = text.slice(split + 4);
      if (Buffer.byteLength(body) < length) return;
      const changed = proxy.tamper!(body);
      const head = text.slice(0, split).replace(/content-length: *\d+/i, `content-length: ${Buffer.byteLength(changed)}`);
      client.end(`${head}\r\n\r\n${changed}`);
      upstream.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const bound = (server.address() as net.AddressInfo).port;
  return Object.assign(proxy, {
    url: `http://127.0.0.1:${bound}`,
    port: bound,
    plan: (...next: ProxyMove[]) => {
      moves = next;
    },
    connections: () => taken,
    forwarded: () => forwarded,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  }) as FlakyProxy;
}
