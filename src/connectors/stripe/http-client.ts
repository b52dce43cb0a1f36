// The `stripe` package's HTTP client, sending through the gateway's ProcessorSender like every
// other connector: the same deadline for the whole exchange, cap on the answer's size, address
// policy of live mode and kept-alive connections (outbound/processor-http.ts), and every call
// counted by connector and gateway (the registry's labelled view, metrics.ts). The package keeps
// what is its own: the request's form body and headers, the Idempotency-Key, its one retry of
// what Stripe documents as safe to retry, and reading Stripe's errors from the answer.
//
// An exchange without an answer becomes the error the package expects of a client, with the
// socket's code (ECONNREFUSED, ECONNRESET...; ETIMEDOUT past the deadline): the package reports
// it as a StripeConnectionError whose detail.code results.ts reads to tell "never sent" from
// "may have been processed".
//
// Except a refusal of the gateway's own guard (an open circuit breaker, a full in-flight limit):
// the package retries every connection error once, half a second or more later, which for a
// processor that is down only doubles the refusals and delays the sale's answer (and its cascade)
// for nothing. The package skips its retry only for an answer marked `Stripe-Should-Retry: false`,
// so such a refusal is given to it as an answer made here (RefusalResponse, never sent to or
// received from Stripe), and connector.ts turns the error the package makes of it back into the
// connection error it is (refusedHere).
import Stripe from 'stripe';
import type { StripeFailure } from './wire.js';
import { type ProcessorExchange, type ProcessorSender, worthRetryingUnsent } from '../../outbound/processor-http.js';

type Answer = Extract<ProcessorExchange, { readonly kind: 'answer' }>;

/** An answer read whole by ProcessorHttp, as the package reads a response. */
class ExchangeResponse extends Stripe.HttpClientResponse {
  constructor(private readonly answer: Answer) {
    super(answer.http_status, headersOf(answer));
  }

  override getRawResponse(): unknown {
    return this.answer;
  }

  override toStream(): never {
    // Only file downloads stream; the connector makes none.
    throw new Error('streamed answers are not read by this client');
  }

  override toJSON(): Promise<unknown> {
    return Promise.resolve().then(() => this._parseResponseBody(this.answer.body) as unknown);
  }
}

function headersOf(answer: Answer): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(answer.headers)) if (value !== undefined) headers[name] = value;
  return headers;
}

/** Marks an answer made here for a refusal of the gateway's guard; its value is the refusal's code. */
const REFUSED_HERE_HEADER = 'paygate-refused-here';

/** A refusal of the gateway's guard, as an answer the package does not retry (above). */
class RefusalResponse extends Stripe.HttpClientResponse {
  constructor(
    code: string,
    private readonly reason: string,
  ) {
    super(503, { 'stripe-should-retry': 'false', [REFUSED_HERE_HEADER]: code, 'content-type': 'application/json' });
  }

  override getRawResponse(): unknown {
    return null;
  }

  override toStream(): never {
    throw new Error('streamed answers are not read by this client');
  }

  override toJSON(): Promise<unknown> {
    return Promise.resolve({ error: { type: 'api_error', message: this.reason } });
  }
}

/**
 * The package's error for a RefusalResponse, as the connection error it stands for (what
 * results.ts reads: type StripeConnectionError, detail.code); null for any other error.
 */
export function refusedHere(error: unknown): StripeFailure | null {
  const headers = (error as { headers?: Record<string, unknown> } | null)?.headers;
  const code = headers?.[REFUSED_HERE_HEADER];
  if (typeof code !== 'string') return null;
  return { type: 'StripeConnectionError', message: String((error as { message?: unknown }).message ?? code), detail: { code } };
}

/** The error a client raises for an exchange without an answer: its code is all the package and results.ts read. */
export class ExchangeFailure extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

export class ProcessorHttpClient extends Stripe.HttpClient {
  constructor(private readonly http: ProcessorSender) {
    super();
  }

  override getClientName(): string {
    return 'paygate';
  }

  /** `timeout` is the package's; ProcessorHttp's deadline (the same processor time-out) bounds the whole exchange. */
  override async makeRequest(
    host: string,
    port: string,
    path: string,
    method: string,
    headers: Record<string, string | number | string[]>,
    requestData: string,
    protocol: string,
  ): Promise<Stripe.HttpClientResponse> {
    // The connector's calls are GETs and POSTs only.
    if (method !== 'GET' && method !== 'POST') throw new ExchangeFailure(`method ${method} is not sent`, 'EINVALIDMETHOD');
    // Lower-cased: ProcessorHttp's defaults (content-type, user-agent) are replaced, not sent twice.
    const sent: Record<string, string> = {};
    for (const [name, value] of Object.entries(headers)) sent[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
    const exchange = await this.http.send({
      method,
      url: `${protocol}://${host}:${port}${path}`,
      headers: sent,
      body: method === 'POST' ? requestData : undefined,
    });
    if (exchange.kind === 'answer') return new ExchangeResponse(exchange);
    if (!worthRetryingUnsent(exchange.code)) return new RefusalResponse(exchange.code, exchange.reason);
    throw new ExchangeFailure(exchange.reason, exchange.code);
  }
}
