// The connector's HTTP client for Checkout.com: the secret key as `Authorization: Bearer`, a
// `Cko-Idempotency-Key` on every request that moves money, JSON in and out, over the gateway's
// processor HTTP (time-outs, size cap, address policy: outbound/processor-http.ts).
//
// Why not the official checkout-sdk-node (docs/connectors.md): its default HTTP path ignores the
// time-out option, it reports a connection refused before sending and one lost after sending as
// the same error (and that difference decides whether a sale may be failed at once or must be
// asked about), it reads an answer of any size, and it reads CKO_SECRET / CKO_SECRET_KEY from the
// environment ahead of the key it is given, so one variable could send every gateway's payments
// with another account's key.
import { type JsonAnswer, jsonAnswer, withOneRetry } from '../../outbound/json-exchange.js';
import type { ProcessorSender } from '../../outbound/processor-http.js';

export type CheckoutAnswer = JsonAnswer;

export class CheckoutClient {
  private readonly base_url: string;

  constructor(
    private readonly http: ProcessorSender,
    base_url: string,
    private readonly secret_key: string,
  ) {
    this.base_url = base_url.replace(/\/+$/, '');
  }

  private async send(method: 'GET' | 'POST', path: string, body: unknown, idempotency_key: string | null): Promise<CheckoutAnswer> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.secret_key}` };
    if (idempotency_key !== null) headers['cko-idempotency-key'] = idempotency_key;
    const exchange = await this.http.send({
      method,
      url: `${this.base_url}${path}`,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return jsonAnswer(exchange);
  }

  /**
   * A request that moves money: tried once more with the same idempotency key when the first try
   * surely did not reach the processor or it answered 5xx (outbound/json-exchange.ts).
   */
  async post(path: string, body: unknown, idempotency_key: string): Promise<CheckoutAnswer> {
    return withOneRetry(() => this.send('POST', path, body, idempotency_key), true);
  }

  async get(path: string): Promise<CheckoutAnswer> {
    return this.send('GET', path, undefined, null);
  }
}
