// Every request the gateway sends to a payment processor goes through ProcessorHttp: one deadline
// for the whole exchange, a cap on the answer's size, no redirects, the same address policy as
// merchant URLs (live mode reaches no loopback, private or link-local address unless
// PAYGATE_ALLOW_PRIVATE_URLS is set; checked inside the socket's DNS lookup), and kept-alive
// connections per processor host (undici), as many as the gateways' guards let through.
//
// The one thing a connector must know about a failed exchange is whether the processor may
// have received the request. `not_sent` means it cannot have (the connection was never made):
// the operation failed and nothing moved. `lost` means it may have (a time-out, a connection
// closed after sending): the outcome is unknown, and only asking the processor settles it.
//
// The registry (connectors/registry.ts) gives each gateway's connector a labelled view of the one
// ProcessorHttp (`forGateway`): every exchange through it is reported, with its connector and
// gateway, to the observer the composition root passed (the per-processor metrics, metrics.ts),
// so no connector passes labels or knows about metrics.
import { Agent, errors as undiciErrors, request as undiciRequest } from 'undici';
import { checkedLookup, DESTINATION_NOT_ALLOWED, precheckUrl } from './post.js';
import { type BreakerState, ProcessorGuard, type ProcessorGuardPolicy } from './processor-guard.js';

export interface ProcessorHttpPolicy {
  /** Connect, send and read the whole answer within this time. */
  readonly timeout_ms: number;
  /** Establishing the connection (DNS, TCP, TLS) within this time; a connection never made sent nothing. */
  readonly connect_timeout_ms: number;
  /** A longer answer is cut off and reported as lost (its end, and so its meaning, is unknown). */
  readonly max_reply_bytes: number;
  /** False in live mode unless PAYGATE_ALLOW_PRIVATE_URLS=true. */
  readonly allow_private: boolean;
  /** Each gateway's in-flight limit and circuit breaker (processor-guard.ts); absent: none (a connector built alone in a test). */
  readonly guard?: ProcessorGuardPolicy;
}

export interface ProcessorRequest {
  readonly method: 'GET' | 'POST';
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  /** A JSON text; absent (or undefined) for GET. */
  readonly body?: string | undefined;
}

export type ProcessorExchange =
  | {
      readonly kind: 'answer';
      readonly http_status: number;
      /** Header names in lower case, as undici gives them. */
      readonly headers: Readonly<Record<string, string | string[] | undefined>>;
      readonly body: string;
      readonly duration_ms: number;
    }
  /** The processor cannot have received the request. `code`: the socket's (ECONNREFUSED...), EDESTINATIONNOTALLOWED or EINVALIDURL. */
  | { readonly kind: 'not_sent'; readonly reason: string; readonly code: string; readonly duration_ms: number }
  /**
   * The processor may have received (and acted on) the request; no complete answer came back.
   * `code`: ETIMEDOUT past the deadline, EANSWERTOOLARGE past the size cap, else the socket's (ECONNRESET...).
   */
  | { readonly kind: 'lost'; readonly reason: string; readonly code: string; readonly duration_ms: number };

/** What one exchange is sent with: ProcessorHttp itself, or a gateway's labelled view of it (forGateway). */
export interface ProcessorSender {
  /** Never throws: every outcome is a value. */
  send(request: ProcessorRequest): Promise<ProcessorExchange>;
}

/** Whose call an exchange was: bounded values (connector names, the gateways configured), never a URL. */
export interface ProcessorCallLabels {
  readonly connector: string;
  readonly gateway_id: string;
}

/** Told of every exchange sent through a labelled view, once it ended. Must not throw. */
export type ProcessorCallObserver = (labels: ProcessorCallLabels, exchange: ProcessorExchange) => void;

/** A connection not made within connect_timeout_ms, or no whole answer within timeout_ms. */
const TIMEOUT_CODES: ReadonlySet<string> = new Set(['ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT']);

/** Whether an exchange that brought no answer ended on a time-out (else the network failed it). */
export function timedOut(exchange: ProcessorExchange): boolean {
  return exchange.kind !== 'answer' && TIMEOUT_CODES.has(exchange.code);
}

/** Refusals by the gateway's own guard (processor-guard.ts): the request never left this process. */
const GUARD_REFUSAL_CODES: ReadonlySet<string> = new Set(['EINFLIGHTLIMIT', 'ECIRCUITOPEN']);

/** Refusals by this process before any connection: an address the policy forbids, a malformed URL, the guard's. */
const REFUSED_HERE_CODES: ReadonlySet<string> = new Set(['EDESTINATIONNOTALLOWED', 'EINVALIDURL', ...GUARD_REFUSAL_CODES]);

/**
 * Error codes raised before a connection existed, or by this process before trying one: the
 * request was never written, so the processor cannot have acted on it. A connector that reads
 * codes from elsewhere (the `stripe` package's errors) checks them against this one list.
 */
export const NOT_SENT_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
  ...REFUSED_HERE_CODES,
]);

/**
 * Whether an exchange counts against the processor for its circuit breaker: no answer from it
 * (a time-out, a reset, a refused connection) or HTTP 5xx. Refusals that never left this process
 * (REFUSED_HERE_CODES) say nothing about it.
 */
export function processorFailed(exchange: ProcessorExchange): boolean {
  if (exchange.kind === 'answer') return exchange.http_status >= 500;
  return !REFUSED_HERE_CODES.has(exchange.code);
}

/**
 * Whether a request that was not sent is worth sending once more after a pause (the connectors'
 * one retry): a connection that could not be made may be made next time. Not a refusal by the
 * gateway's guard: a full in-flight limit was already waited on, and an open breaker stays open
 * for seconds. Retrying those held each refused sale a pause longer (250 ms for Checkout.com)
 * and refused it twice, in a burst when the breaker opened on a queue of waiting sales.
 */
export function worthRetryingUnsent(code: string): boolean {
  return !GUARD_REFUSAL_CODES.has(code);
}

/**
 * Sockets per processor host: no cap of their own. Each gateway's guard bounds its requests in
 * flight (PAYGATE_PROCESSOR_MAX_IN_FLIGHT, processor-guard.ts), so the sockets open to a host are
 * at most the in-flight limits of the gateways sending there. A cap below that (it was 32) made
 * requests the guard had let through wait unseen for a socket behind slow ones, and held a gateway
 * to 32 requests at a time: 320 sales a second at 100 ms a processor answer (bench/RESULTS.md).
 */
const SOCKETS_PER_HOST = null;
/** An idle kept socket is closed after this long, before common servers close it themselves. */
const KEEP_ALIVE_IDLE_MS = 4_000;

const REASONS: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'DNS lookup failed (temporary)',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'host unreachable',
  EDESTINATIONNOTALLOWED: DESTINATION_NOT_ALLOWED,
  UND_ERR_CONNECT_TIMEOUT: 'connect timed out',
  UND_ERR_HEADERS_TIMEOUT: 'timed out waiting for the answer',
  UND_ERR_BODY_TIMEOUT: 'timed out reading the answer',
  UND_ERR_SOCKET: 'connection closed before the answer',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection closed while sending',
};

function codeOf(error: unknown): string | null {
  const seen = new Set<unknown>();
  let current: unknown = error;
  // undici wraps the socket's error (cause); the lookup's refusal arrives as the cause too.
  while (typeof current === 'object' && current !== null && !seen.has(current)) {
    seen.add(current);
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}

export class ProcessorHttp implements ProcessorSender {
  private readonly agent: Agent;

  /** `observer` hears every exchange of the labelled views (forGateway); none in tests that build a connector alone. */
  constructor(
    private readonly policy: ProcessorHttpPolicy,
    private readonly observer: ProcessorCallObserver | null = null,
  ) {
    this.agent = new Agent({
      connections: SOCKETS_PER_HOST,
      keepAliveTimeout: KEEP_ALIVE_IDLE_MS,
      keepAliveMaxTimeout: KEEP_ALIVE_IDLE_MS,
      headersTimeout: policy.timeout_ms,
      bodyTimeout: policy.timeout_ms,
      maxRedirections: 0,
      connect: {
        timeout: policy.connect_timeout_ms,
        lookup: checkedLookup(policy.allow_private) as never,
      },
    });
  }

  /** Each gateway's guard, kept across rebuilds of its connector (a new view is made with each). */
  private readonly guards = new Map<string, { readonly labels: ProcessorCallLabels; readonly guard: ProcessorGuard }>();

  /**
   * The view a gateway's connector sends with: the same connections and policy, behind the
   * gateway's guard (in-flight limit, circuit breaker: a refusal is `not_sent`), each exchange
   * reported to the observer with these labels.
   */
  forGateway(labels: ProcessorCallLabels): ProcessorSender {
    const observer = this.observer;
    const guard_policy = this.policy.guard;
    let guarded = guard_policy === undefined ? null : (this.guards.get(labels.gateway_id)?.guard ?? null);
    if (guard_policy !== undefined && guarded === null) {
      guarded = new ProcessorGuard(guard_policy);
      this.guards.set(labels.gateway_id, { labels, guard: guarded });
    }
    const guard = guarded;
    if (observer === null && guard === null) return this;
    const report = (exchange: ProcessorExchange) => {
      try {
        observer?.(labels, exchange);
      } catch {
        // Counting a call must never change its outcome.
      }
    };
    return {
      send: async (request) => {
        const admitted = guard === null ? null : await guard.enter();
        if (admitted !== null && !admitted.admitted) {
          const refused: ProcessorExchange = {
            kind: 'not_sent',
            reason: admitted.refusal.reason,
            code: admitted.refusal.code,
            duration_ms: 0,
          };
          report(refused);
          return refused;
        }
        const exchange = await this.send(request);
        if (guard !== null && admitted !== null && admitted.admitted) guard.settle(admitted, processorFailed(exchange));
        report(exchange);
        return exchange;
      },
    };
  }

  /** Each guarded gateway's breaker state and requests in flight, for /metrics. */
  guardStates(): { readonly labels: ProcessorCallLabels; readonly state: BreakerState; readonly in_flight: number }[] {
    return [...this.guards.values()].map(({ labels, guard }) => ({ labels, state: guard.state, in_flight: guard.in_flight }));
  }

  /** Never throws: every outcome is a value. Not observed: connectors send through forGateway's view. */
  async send(request: ProcessorRequest): Promise<ProcessorExchange> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const checked = precheckUrl(request.url, this.policy.allow_private);
    if ('reason' in checked)
      return {
        kind: 'not_sent',
        reason: checked.reason,
        code: checked.reason === DESTINATION_NOT_ALLOWED ? 'EDESTINATIONNOTALLOWED' : 'EINVALIDURL',
        duration_ms: 0,
      };
    const deadline = AbortSignal.timeout(this.policy.timeout_ms);
    let written = false;
    try {
      const response = await undiciRequest(checked.url, {
        method: request.method,
        dispatcher: this.agent,
        headers: {
          accept: 'application/json',
          'user-agent': 'paygate/1',
          ...(request.body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...request.headers,
        },
        body: request.body ?? null,
        signal: deadline,
      });
      written = true;
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of response.body) {
        size += (chunk as Buffer).length;
        if (size > this.policy.max_reply_bytes) {
          response.body.destroy();
          return {
            kind: 'lost',
            reason: `answer larger than ${this.policy.max_reply_bytes} bytes`,
            code: 'EANSWERTOOLARGE',
            duration_ms: elapsed(),
          };
        }
        chunks.push(chunk as Buffer);
      }
      return {
        kind: 'answer',
        http_status: response.statusCode,
        headers: response.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        duration_ms: elapsed(),
      };
    } catch (error) {
      const code = codeOf(error);
      if (!written && code !== null && NOT_SENT_CODES.has(code)) {
        return { kind: 'not_sent', reason: REASONS[code] ?? code, code, duration_ms: elapsed() };
      }
      const timed_out =
        deadline.aborted || error instanceof undiciErrors.HeadersTimeoutError || error instanceof undiciErrors.BodyTimeoutError;
      const reason = timed_out
        ? `timed out after ${this.policy.timeout_ms} ms`
        : code !== null
          ? (REASONS[code] ?? `connection failed (${code})`)
          : 'connection failed';
      return { kind: 'lost', reason, code: timed_out ? 'ETIMEDOUT' : (code ?? 'ECONNFAILED'), duration_ms: elapsed() };
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}
