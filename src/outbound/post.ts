// Every request the gateway sends to a merchant (status notifications now, validation requests
// later) goes through postJson: one time-out for the whole exchange, a cap on the reply body, no
// redirects followed, and in live mode no connection to a loopback, private or link-local
// address. The address is checked inside the socket's DNS lookup, so the address checked is the
// address connected to: a name that resolves to a public address once and a private one the
// next time (DNS rebinding) cannot slip through.
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { addressAllowed } from './addresses.js';
import type { LookupGate } from './lookup-gate.js';

export interface OutboundPolicy {
  /** Connect, send and read the whole reply within this time. */
  readonly timeout_ms: number;
  /** A longer reply body is cut off and reported as too large. */
  readonly max_reply_bytes: number;
  /** False in live mode unless PAYGATE_ALLOW_PRIVATE_URLS=true. */
  readonly allow_private: boolean;
  /**
   * Kept-alive connections to reuse (the notification worker's); without them every request
   * opens its own connection and closes it (validation requests, rare and one-off).
   */
  readonly connections?: OutboundConnections | undefined;
  /**
   * The bound on this traffic's DNS lookups waiting (lookup-gate.ts): the notification worker's
   * and validation requests'; none for a one-off call.
   */
  readonly lookups?: LookupGate;
}

/** Sockets per merchant host kept for reuse, at most. */
const KEEP_ALIVE_SOCKETS_PER_HOST = 16;
/** An idle kept socket is closed after this long: shorter than common servers' keep-alive time-outs (Node 5 s, nginx 75 s). */
const KEEP_ALIVE_IDLE_MS = 4_000;

/**
 * Connection pools for one sender. A socket is made through the checked lookup like any other,
 * so a kept socket is connected to an address that was allowed when it was opened.
 */
export interface OutboundConnections {
  readonly http: http.Agent;
  readonly https: https.Agent;
  close(): void;
}

export function outboundConnections(): OutboundConnections {
  const options = {
    keepAlive: true,
    maxSockets: KEEP_ALIVE_SOCKETS_PER_HOST,
    maxFreeSockets: KEEP_ALIVE_SOCKETS_PER_HOST,
    timeout: KEEP_ALIVE_IDLE_MS,
    scheduling: 'lifo' as const,
  };
  const agents = { http: new http.Agent(options), https: new https.Agent(options) };
  return {
    ...agents,
    close() {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}

export type OutboundResult =
  | {
      readonly kind: 'reply';
      readonly http_status: number;
      readonly body: string;
      readonly duration_ms: number;
      /** The reply's Gt-Authentication header, if any (subscription event replies, issue 6). */
      readonly gt_authentication?: string | null;
    }
  | { readonly kind: 'reply_too_large'; readonly http_status: number; readonly excerpt: string; readonly duration_ms: number }
  /** No HTTP reply: `reason` is short and safe to show an operator. */
  | { readonly kind: 'failed'; readonly reason: string; readonly duration_ms: number };

export const DESTINATION_NOT_ALLOWED = 'destination not allowed';
/** The reason given when the caller's signal cut the request off (the gateway is stopping). */
export const INTERRUPTED = 'interrupted (gateway shutting down)';

class DestinationNotAllowed extends Error {
  readonly code = 'EDESTINATIONNOTALLOWED';
  constructor(host: string) {
    super(`${host}: ${DESTINATION_NOT_ALLOWED}`);
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/** A dns.lookup that answers only addresses the policy allows; the socket connects to what it answers. */
export function checkedLookup(allow_private: boolean, gate: LookupGate | null = null) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    const resolve = (then: (error: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void) =>
      gate !== null ? gate.lookup(hostname, options, then) : dns.lookup(hostname, { ...options, all: true }, then);
    resolve((error, addresses) => {
      if (error) return callback(error, '');
      const allowed = addresses.filter((entry) => addressAllowed(entry.address, allow_private));
      if (allowed.length === 0) return callback(new DestinationNotAllowed(hostname), '');
      if (options.all) return callback(null, allowed);
      return callback(null, allowed[0]!.address, allowed[0]!.family);
    });
  };
}

/** Checks a URL without connecting: scheme, no credentials, and for an IP literal host its class. */
export function precheckUrl(url: string, allow_private: boolean): { readonly url: URL } | { readonly reason: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { reason: 'invalid URL' };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return { reason: 'unsupported URL scheme' };
  if (parsed.username !== '' || parsed.password !== '') return { reason: 'credentials in URL not allowed' };
  const host = parsed.hostname.startsWith('[') ? parsed.hostname.slice(1, -1) : parsed.hostname;
  // An IP literal never goes through the lookup, so it is checked here.
  if (net.isIP(host) !== 0 && !addressAllowed(host, allow_private)) return { reason: DESTINATION_NOT_ALLOWED };
  if (host === '') return { reason: 'invalid URL' };
  return { url: parsed };
}

function failureReason(error: unknown, timed_out: boolean, aborted: boolean): string {
  if (timed_out) return 'timed out';
  if (aborted) return INTERRUPTED;
  const code = (error as NodeJS.ErrnoException | null)?.code;
  switch (code) {
    case 'EDESTINATIONNOTALLOWED':
      return DESTINATION_NOT_ALLOWED;
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
      return 'connection reset';
    case 'ENOTFOUND':
      return 'host not found';
    case 'EAI_AGAIN':
      return 'DNS lookup failed (temporary)';
    case 'ELOOKUPBUSY':
      return 'DNS lookups busy (too many waiting); sent again later';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
    case 'EPIPE':
      return 'connection closed while sending';
    case 'HPE_INVALID_CONSTANT':
    case 'HPE_INVALID_STATUS':
    case 'HPE_INVALID_HEADER_TOKEN':
      return 'invalid HTTP reply';
    default:
      if (typeof code === 'string' && /^(ERR_TLS|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED|ERR_SSL)/.test(code)) return `TLS error (${code})`;
      return code ? `connection failed (${code})` : 'connection failed';
  }
}

/**
 * POSTs a JSON body. Never throws: every outcome is a value. `signal` lets the caller abort
 * (shutdown); the policy's time-out covers DNS, connect, send and reading the reply.
 */
export async function postJson(
  url: string,
  body: string,
  policy: OutboundPolicy,
  signal?: AbortSignal,
  /** Extra request headers (Gt-Authentication of a subscription event, issue 6). */
  extra_headers: Readonly<Record<string, string>> = {},
): Promise<OutboundResult> {
  const started = performance.now();
  const checked = precheckUrl(url, policy.allow_private);
  if ('reason' in checked) return { kind: 'failed', reason: checked.reason, duration_ms: 0 };
  const payload = Buffer.from(body, 'utf8');
  const first = await exchange(checked.url, payload, policy, started, signal, extra_headers);
  // A kept socket the server closed while it sat idle fails before any reply; the request never
  // reached the merchant, so it is sent once more on a new connection (the time-out still counts from the start).
  if (first.stale_socket)
    return (await exchange(checked.url, payload, { ...policy, connections: undefined }, started, signal, extra_headers)).result;
  return first.result;
}

function exchange(
  target: URL,
  payload: Buffer,
  policy: OutboundPolicy,
  started: number,
  signal: AbortSignal | undefined,
  extra_headers: Readonly<Record<string, string>>,
): Promise<{ readonly result: OutboundResult; readonly stale_socket: boolean }> {
  const elapsed = () => Math.round(performance.now() - started);
  const remaining_ms = Math.max(1, policy.timeout_ms - elapsed());
  return new Promise((resolve_exchange) => {
    let stale_socket = false;
    const resolve = (result: OutboundResult) => resolve_exchange({ result, stale_socket });
    let settled = false;
    let timed_out = false;
    const finish = (result: OutboundResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', on_abort);
      resolve(result);
    };
    const secure = target.protocol === 'https:';
    const agent = policy.connections ? (secure ? policy.connections.https : policy.connections.http) : false;
    const request = (secure ? https : http).request(target, {
      method: 'POST',
      agent,
      lookup: checkedLookup(policy.allow_private, policy.lookups ?? null) as unknown as typeof dns.lookup,
      headers: {
        'content-type': 'application/json',
        'content-length': String(payload.length),
        accept: 'application/json',
        'user-agent': 'paygate-notifier/1',
        connection: agent === false ? 'close' : 'keep-alive',
        ...extra_headers,
      },
    });
    const fail = (error: unknown) => {
      const code = (error as NodeJS.ErrnoException | null)?.code;
      if (!settled && !answered && request.reusedSocket && !timed_out && !signal?.aborted && (code === 'ECONNRESET' || code === 'EPIPE'))
        stale_socket = true;
      finish({ kind: 'failed', reason: failureReason(error, timed_out, signal?.aborted ?? false), duration_ms: elapsed() });
    };
    const timer = setTimeout(() => {
      timed_out = true;
      request.destroy(new Error('timed out'));
    }, remaining_ms);
    const on_abort = () => request.destroy(new Error('aborted'));
    if (signal?.aborted) on_abort();
    else signal?.addEventListener('abort', on_abort, { once: true });

    let answered = false;
    request.on('error', fail);
    request.on('close', () => {
      if (!answered) fail(null);
    });
    request.on('response', (response) => {
      answered = true;
      const chunks: Buffer[] = [];
      let size = 0;
      const http_status = response.statusCode ?? 0;
      response.on('data', (chunk: Buffer) => {
        if (settled) return;
        size += chunk.length;
        if (size > policy.max_reply_bytes) {
          chunks.push(chunk);
          const excerpt = Buffer.concat(chunks).subarray(0, 512).toString('utf8');
          finish({ kind: 'reply_too_large', http_status, excerpt, duration_ms: elapsed() });
          request.destroy();
          return;
        }
        chunks.push(chunk);
      });
      const gt = response.headers['gt-authentication'];
      response.on('end', () =>
        finish({
          kind: 'reply',
          http_status,
          body: Buffer.concat(chunks).toString('utf8'),
          duration_ms: elapsed(),
          gt_authentication: typeof gt === 'string' ? gt : null,
        }),
      );
      response.on('error', fail);
      // Closed before the end without an error event: still a failed exchange.
      response.on('close', () => fail(null));
    });
    request.end(payload);
  });
}
