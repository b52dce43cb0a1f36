// A real local HTTP server standing for the merchant's site: the page the customer returns to
// (GET /return) and any endpoint the gateway calls (notifications, validation requests).
// It records every request; a test chooses the reply per path.
import type http from 'node:http';
import { startLocalServer } from './fake-processor/local-server.js';
import type { RequestBody } from './fake-processor/read-body.js';

export interface ReceivedRequest {
  readonly method: string;
  /** The path without the query string. */
  readonly path: string;
  readonly query: Record<string, string>;
  readonly headers: http.IncomingHttpHeaders;
  /** The raw body as text ('' when none). */
  readonly body: string;
  /** The body parsed as JSON, or null when it is not JSON. */
  readonly json: unknown;
  /** The body parsed as an HTML form (application/x-www-form-urlencoded), or null. */
  readonly form: Record<string, string> | null;
  readonly at_ms: number;
}

export interface ReceiverReply {
  readonly status: number;
  /** Sent as JSON (application/json). */
  readonly body: unknown;
  readonly headers?: Record<string, string>;
  /** When set, sent verbatim instead of body as JSON (garbage replies in notification tests). */
  readonly raw?: string;
}

export type ReplyFor = ReceiverReply | ((request: ReceivedRequest) => ReceiverReply | Promise<ReceiverReply>);

export interface MerchantReceiver {
  /** http://127.0.0.1:PORT, without a trailing slash. */
  readonly url: string;
  /** Every request so far, oldest first. */
  readonly requests: readonly ReceivedRequest[];
  requestsTo(path: string, method?: string): ReceivedRequest[];
  /** Sets the reply for a path (any method); replaces an earlier one. */
  setReply(path: string, reply: ReplyFor): void;
  clearReply(path: string): void;
  /** Resolves with the first recorded request (past or future) matching; rejects after timeout_ms. */
  waitForRequest(predicate: (request: ReceivedRequest) => boolean, timeout_ms?: number): Promise<ReceivedRequest>;
  reset(): void;
  close(): Promise<void>;
}

const BODY_MAX_BYTES = 1024 * 1024;
const DEFAULT_REPLY: ReceiverReply = { status: 200, body: {} };

export const RETURN_PAGE =
  '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
  '<meta name="viewport" content="width=device-width,initial-scale=1"><title>Merchant shop</title></head>' +
  '<body><h1>Back at the merchant</h1><p>Thank you for your order.</p></body></html>';

/**
 * Starts the receiver on 127.0.0.1 and a free port. Without a reply set for it,
 * GET /return answers the "Back at the merchant" page and any other request 200 {}.
 */
export async function startMerchantReceiver(options: { readonly port?: number } = {}): Promise<MerchantReceiver> {
  const requests: ReceivedRequest[] = [];
  const replies = new Map<string, ReplyFor>();
  const waiters = new Set<{ predicate: (r: ReceivedRequest) => boolean; resolve: (r: ReceivedRequest) => void }>();

  async function receive(
    request: http.IncomingMessage,
    response: http.ServerResponse,
    { text: body, too_large }: RequestBody,
  ): Promise<void> {
    if (too_large) {
      response.writeHead(413, { 'content-type': 'application/json' }).end('{"error":"too large"}');
      return;
    }
    const url = new URL(request.url ?? '/', 'http://receiver.invalid');
    const content_type = (request.headers['content-type'] ?? '').toLowerCase();
    let json: unknown = null;
    if (body !== '') {
      try {
        json = JSON.parse(body);
      } catch {
        json = null;
      }
    }
    const form = content_type.startsWith('application/x-www-form-urlencoded') ? Object.fromEntries(new URLSearchParams(body)) : null;
    const received: ReceivedRequest = {
      method: request.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: request.headers,
      body,
      json,
      form,
      at_ms: Date.now(),
    };
    requests.push(received);
    for (const waiter of [...waiters]) {
      if (waiter.predicate(received)) {
        waiters.delete(waiter);
        waiter.resolve(received);
      }
    }
    const reply_for = replies.get(url.pathname);
    if (reply_for === undefined && received.method === 'GET' && url.pathname === '/return') {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(RETURN_PAGE);
      return;
    }
    try {
      const reply = reply_for === undefined ? DEFAULT_REPLY : typeof reply_for === 'function' ? await reply_for(received) : reply_for;
      response
        .writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers })
        .end(reply.raw ?? JSON.stringify(reply.body));
    } catch (error) {
      response.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: String(error) }));
    }
  }

  // A fixed port lets a test stop the receiver and bring it back at the same URL.
  const server = await startLocalServer({ port: options.port, body_max_bytes: BODY_MAX_BYTES, handle: receive });

  return {
    url: server.url,
    requests,
    requestsTo: (path, method) => requests.filter((r) => r.path === path && (method === undefined || r.method === method)),
    setReply: (path, reply) => void replies.set(path, reply),
    clearReply: (path) => void replies.delete(path),
    waitForRequest(predicate, timeout_ms = 5000) {
      const seen = requests.find(predicate);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const waiter = {
          predicate,
          resolve: (r: ReceivedRequest) => {
            clearTimeout(timer);
            resolve(r);
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`merchant receiver: no matching request within ${timeout_ms} ms (${requests.length} received)`));
        }, timeout_ms);
        waiters.add(waiter);
      });
    },
    reset() {
      requests.length = 0;
      replies.clear();
    },
    close: () => server.close(),
  };
}
