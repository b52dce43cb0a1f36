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
import { type ProcessorSender, worthRetryingUnsent } from '../../outbound/processor-http.js';

export type CheckoutAnswer =
  /** An HTTP answer; json is null when its body is empty or does not parse. */
  | { readonly kind: 'answer'; readonly http_status: number; readonly json: unknown; readonly parsed: boolean }
  /** `code`: outbound/processor-http.ts's (ECONNREFUSED, ECIRCUITOPEN…). */
  | { readonly kind: 'not_sent'; readonly reason: string; readonly code: string }
  | { readonly kind: 'lost'; readonly reason: string; readonly code: string };

/**
 * A failed exchange is retried once (same idempotency key) after this pause: a connection never
 * made (not a refusal by the gateway's guard, outbound/processor-http.ts worthRetryingUnsent), or
 * a 5xx.
 */
const RETRY_PAUSE_MS = 250;

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
    if (exchange.kind !== 'answer') return exchange;
    if (exchange.body === '') return { kind: 'answer', http_status: exchange.http_status, json: null, parsed: false };
    try {
      return { kind: 'answer', http_status: exchange.http_status, json: JSON.parse(exchange.body) as unknown, parsed: true };
    } catch {
      return { kind: 'answer', http_status: exchange.http_status, json: null, parsed: false };
    }
  }

  /**
   * A request that moves money: tried once more with the same idempotency key when the first
   * try surely did not reach the processor (no connection) or the processor answered 5xx, so a
   * passing fault does not fail a payment and a retry can never charge twice.
   */
  async post(path: string, body: unknown, idempotency_key: string): Promise<CheckoutAnswer> {
    const first = await this.send('POST', path, body, idempotency_key);
    const retry = (first.kind === 'not_sent' && worthRetryingUnsent(first.code)) || (first.kind === 'answer' && first.http_status >= 500);
    if (!retry) return first;
    await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS));
    const second = await this.send('POST', path, body, idempotency_key);
    // The first try reached the processor (its 5xx): a second that could not connect must not
    // make the whole exchange look as if nothing was ever sent.
    return second.kind === 'not_sent' && first.kind === 'answer' ? first : second;
  }

  async get(path: string): Promise<CheckoutAnswer> {
    return this.send('GET', path, undefined, null);
  }
}
