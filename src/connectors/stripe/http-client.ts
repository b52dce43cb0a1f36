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
import Stripe from 'stripe';
import type { ProcessorExchange, ProcessorSender } from '../../outbound/processor-http.js';

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
  ): Promise<ExchangeResponse> {
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
    throw new ExchangeFailure(exchange.reason, exchange.code);
  }
}
