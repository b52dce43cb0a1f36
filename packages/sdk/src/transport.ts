// One request to the gateway, with its limits, and the retries of a request that got no answer.
// node:http / node:https rather than fetch: to retry safely the SDK must know whether a failed
// request can have reached the gateway at all (refused before connecting, or cut off after
// sending), and whether it went out on a kept-alive connection the gateway had just closed; fetch
// says neither. Limits: one deadline per attempt covering connect, send and the whole answer; an
// answer size cap; a bounded number of retries with growing waits. HTTP answers are returned as
// they are, never retried here: what an answer means is the client's business.
import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { type NetworkFailure, GatewayUnreachableError, UnexpectedAnswerError } from './errors.js';

export interface HttpRequest {
  readonly method: 'GET' | 'POST' | 'PUT';
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | null;
}

export interface HttpAnswer {
  readonly http_status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly text: string;
}

export interface RetryNotice {
  /** The attempt that failed (1 for the first). */
  readonly attempt: number;
  readonly reason: NetworkFailure;
  /** How long before the next attempt. */
  readonly wait_ms: number;
}

export interface TransportLimits {
  /** One attempt: connect, send, and read the whole answer. */
  readonly timeout_ms: number;
  /** Attempts after the first one, for requests that got no answer. */
  readonly retries: number;
  /** The wait before the first retry; it doubles for each further one, up to MAX_BACKOFF_MS. */
  readonly retry_backoff_ms: number;
  readonly max_answer_bytes: number;
  readonly on_retry?: (notice: RetryNotice) => void;
}

const MAX_BACKOFF_MS = 5_000;
/** An idle kept-alive connection is closed after this, well before the gateway closes its side (5 s). */
const IDLE_CONNECTION_MS = 2_000;
const MAX_SOCKETS_PER_HOST = 16;

/** Why one attempt got no answer, and whether the request can have reached the gateway. */
class AttemptFailure extends Error {
  constructor(
    readonly reason: NetworkFailure,
    /** False only when no byte of the request can have left (refused, DNS, connect time-out). */
    readonly maybe_sent: boolean,
    /**
     * A kept-alive connection the gateway closed while it sat idle: reset before any answer. The
     * gateway had most likely closed it before reading (the case Node's documentation names for
     * `request.reusedSocket`), so it is retried once even for a request that is not idempotent.
     */
    readonly stale_connection: boolean,
    override readonly cause: unknown,
  ) {
    super(reason);
  }
}

const NOT_SENT: Readonly<Record<string, NetworkFailure>> = {
  ECONNREFUSED: 'connection_refused',
  ENOTFOUND: 'dns',
  EAI_AGAIN: 'dns',
  EHOSTUNREACH: 'connection_refused',
  ENETUNREACH: 'connection_refused',
  EADDRNOTAVAIL: 'connection_refused',
};

function classify(error: unknown, connected: boolean, reused: boolean, answered: boolean, timed_out: boolean): AttemptFailure {
  const code = typeof error === 'object' && error !== null ? String((error as { code?: unknown }).code ?? '') : '';
  if (timed_out) return new AttemptFailure(connected ? 'timeout' : 'connect_timeout', connected, false, error);
  const before = NOT_SENT[code];
  if (before !== undefined && !connected) return new AttemptFailure(before, false, false, error);
  if (code === 'ECONNRESET' || code === 'EPIPE' || (error instanceof Error && error.message === 'socket hang up')) {
    return new AttemptFailure('connection_reset', true, reused && !answered, error);
  }
  return new AttemptFailure('other', connected, false, error);
}

/** The connections the SDK keeps to the gateway: reused, and closed when idle before the gateway does. */
export class Connections {
  readonly http = new http.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS_PER_HOST, timeout: IDLE_CONNECTION_MS });
  readonly https = new https.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS_PER_HOST, timeout: IDLE_CONNECTION_MS });

  close(): void {
    this.http.destroy();
    this.https.destroy();
  }
}

/** One attempt: resolves with whatever HTTP answer came, rejects with an AttemptFailure when none did. */
function attemptOnce(request: HttpRequest, connections: Connections, limits: TransportLimits): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const url = new URL(request.url);
    const secure = url.protocol === 'https:';
    const body = request.body === null ? null : Buffer.from(request.body, 'utf8');
    let connected = false;
    let answered = false;
    let timed_out = false;
    let settled = false;
    const finish = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      outcome();
    };
    const outgoing = (secure ? https : http).request(
      url,
      {
        method: request.method,
        headers: { ...request.headers, ...(body === null ? {} : { 'content-length': String(body.length) }) },
        agent: secure ? connections.https : connections.http,
      },
      (incoming) => {
        answered = true;
        const chunks: Buffer[] = [];
        let size = 0;
        incoming.on('data', (chunk: Buffer) => {
          if (settled) return;
          size += chunk.length;
          if (size > limits.max_answer_bytes) {
            // An answer, though one not to read: an error of its own, never retried.
            finish(() =>
              reject(new UnexpectedAnswerError(`The gateway's answer is larger than max_answer_bytes (${limits.max_answer_bytes})`)),
            );
            outgoing.destroy();
            return;
          }
          chunks.push(chunk);
        });
        incoming.on('end', () =>
          finish(() =>
            resolve({
              http_status: incoming.statusCode ?? 0,
              headers: incoming.headers,
              text: Buffer.concat(chunks).toString('utf8'),
            }),
          ),
        );
        // Cut off mid-answer: an incomplete answer is no answer.
        const cut = (error: unknown) => finish(() => reject(classify(error, connected, outgoing.reusedSocket, answered, timed_out)));
        incoming.on('error', cut);
        incoming.on('close', () => {
          if (!incoming.complete)
            cut(Object.assign(new Error('connection closed before the whole answer arrived'), { code: 'ECONNRESET' }));
        });
      },
    );
    const deadline = setTimeout(() => {
      timed_out = true;
      // Settled here, whatever events the destroyed request still emits (or does not).
      const error = new Error(`no complete answer within ${limits.timeout_ms} ms`);
      finish(() => reject(classify(error, connected, outgoing.reusedSocket, answered, true)));
      outgoing.destroy();
    }, limits.timeout_ms);
    // Connected once TCP is up (a reused connection already is): from then on bytes may have left.
    outgoing.on('socket', (socket: Socket) => {
      if (!socket.connecting) connected = true;
      else socket.once('connect', () => (connected = true));
    });
    outgoing.on('error', (error) => finish(() => reject(classify(error, connected, outgoing.reusedSocket, answered, timed_out))));
    outgoing.end(body ?? undefined);
  });
}

function backoff_ms(limits: TransportLimits, failed_attempts: number): number {
  const base = Math.min(MAX_BACKOFF_MS, limits.retry_backoff_ms * 2 ** (failed_attempts - 1));
  // Half fixed, half random: clients that failed together do not all come back at once.
  return Math.round(base / 2 + Math.random() * (base / 2));
}

/**
 * Sends a request, again after a network failure when that is safe: always when the request
 * cannot have reached the gateway, or went out on a stale kept-alive connection (once); after a
 * failure that may have reached it only when `idempotent` (the gateway answers a repeat with the
 * first outcome). `build` makes each attempt afresh (a new timestamp and signature: the gateway's
 * idempotency compares every field but those two, decisions.md §6).
 */
export async function exchange(
  build: () => HttpRequest,
  idempotent: boolean,
  connections: Connections,
  limits: TransportLimits,
): Promise<HttpAnswer> {
  let maybe_processed = false;
  let stale_retried = false;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await attemptOnce(build(), connections, limits);
    } catch (error) {
      if (!(error instanceof AttemptFailure)) throw error;
      const stale_retry = error.stale_connection && !stale_retried;
      const safe = !error.maybe_sent || idempotent || stale_retry;
      maybe_processed = maybe_processed || (error.maybe_sent && !error.stale_connection);
      // The one retry of a stale connection comes on top of `retries`: no attempt reached the gateway.
      if (!safe || (attempt > limits.retries && !stale_retry)) {
        throw new GatewayUnreachableError(error.reason, attempt, maybe_processed || error.maybe_sent, error.cause);
      }
      if (stale_retry) stale_retried = true;
      // A stale connection is not the gateway's trouble: try again at once on a new one.
      const wait_ms = stale_retry ? 0 : backoff_ms(limits, attempt);
      limits.on_retry?.({ attempt, reason: error.reason, wait_ms });
      if (wait_ms > 0) await new Promise((resolve) => setTimeout(resolve, wait_ms));
    }
  }
}
