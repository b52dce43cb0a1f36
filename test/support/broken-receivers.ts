// Notification endpoints with the usual bugs, for the endpoint checker's tests (issue 28, item 4):
// each is a real HTTP server on 127.0.0.1 written the way a merchant's developer might get it
// wrong, and the checker must grade it red on the line of its bug. `correct` is the reference:
// it verifies over every field, refuses a bad or missing signature, acknowledges duplicates and
// out-of-order statuses, and answers signed.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { signBody, verifyBody } from '../../src/domain/signing.js';

export type ReceiverKind =
  | 'correct'
  | 'accepts_anything'
  | 'fixed_field_list'
  | 'fails_on_duplicates'
  | 'unsigned_replies'
  | 'unknown_trace_is_an_error'
  | 'too_slow';

export interface Receiver {
  readonly url: string;
  close(): Promise<void>;
}

/** The fields a careless endpoint verifies the signature over: §6.2's, as it knew them the day it was written. */
const KNOWN_FIELDS = [
  'transaction_type',
  'transaction_status',
  'transaction_id',
  'trace_id',
  'order_id',
  'application_key',
  'frontend',
  'pin',
  'amount',
  'currency',
  'charge_amount',
  'charge_currency',
  'payment_method',
  'payment_processor',
  'merchant_id',
  'version',
  'timestamp',
  'test',
];

export async function startReceiver(kind: ReceiverKind, secret: string, options: { slow_ms?: number } = {}): Promise<Receiver> {
  const seen = new Set<string>();
  const known_traces = new Set<number>();
  const reply = (status: number, description: string, signed = true) => {
    const body: Record<string, unknown> = { status, description, version: '1.2', timestamp: Math.floor(Date.now() / 1000) };
    if (signed) body.signature = signBody(body, secret);
    return JSON.stringify(body);
  };
  const handle = async (message: Record<string, unknown>): Promise<{ code: number; body: string }> => {
    const valid = (() => {
      try {
        return verifyBody(message, secret);
      } catch {
        return false;
      }
    })();
    switch (kind) {
      case 'correct':
        if (!valid) return { code: 401, body: reply(1, 'Invalid signature') };
        return { code: 200, body: reply(0, 'OK') };
      case 'accepts_anything':
        // Never verifies: a forged notification is acknowledged like a real one.
        return { code: 200, body: reply(0, 'OK') };
      case 'fixed_field_list': {
        const subset: Record<string, unknown> = {};
        for (const field of KNOWN_FIELDS) if (field in message) subset[field] = message[field];
        const ok = typeof message.signature === 'string' && signBody(subset, secret) === message.signature;
        return { code: 200, body: ok ? reply(0, 'OK') : reply(1, 'Invalid signature') };
      }
      case 'fails_on_duplicates': {
        if (!valid) return { code: 200, body: reply(1, 'Invalid signature') };
        // An insert with a unique key and no handling of the conflict: the second one is a 500.
        const key = `${String(message.trace_id)}:${String(message.transaction_status)}`;
        if (seen.has(key)) return { code: 500, body: 'duplicate key value violates unique constraint' };
        seen.add(key);
        return { code: 200, body: reply(0, 'OK') };
      }
      case 'unsigned_replies':
        if (!valid) return { code: 200, body: reply(1, 'Invalid signature', false) };
        return { code: 200, body: reply(0, 'OK', false) };
      case 'unknown_trace_is_an_error': {
        if (!valid) return { code: 200, body: reply(1, 'Invalid signature') };
        // Learns a transaction from its first (pending) notification; anything else of an unknown one "cannot happen".
        const trace = Number(message.trace_id);
        if (message.transaction_status === 'pending') known_traces.add(trace);
        if (!known_traces.has(trace)) return { code: 200, body: reply(-1, 'Transaction not found') };
        return { code: 200, body: reply(0, 'OK') };
      }
      case 'too_slow':
        if (!valid) return { code: 200, body: reply(1, 'Invalid signature') };
        // Ships the order before answering.
        await new Promise((resolve) => setTimeout(resolve, options.slow_ms ?? 3_000));
        return { code: 200, body: reply(0, 'OK') };
    }
  };
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      let message: Record<string, unknown>;
      try {
        message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        response.writeHead(400).end();
        return;
      }
      void handle(message).then(({ code, body }) => {
        if (!response.destroyed) response.writeHead(code, { 'content-type': 'application/json' }).end(body);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/notify`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
