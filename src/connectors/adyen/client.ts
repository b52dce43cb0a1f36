// The connector's HTTP client for Adyen: the role's API key as `X-API-Key` (the payments key, or
// the payout submitter's or reviewer's), an `Idempotency-Key` on every request that moves money,
// JSON in and out, over the gateway's processor HTTP (time-outs, size cap, address policy:
// outbound/processor-http.ts).
//
// Why not the official @adyen/api-library (decisions §17 asks for it where it fits): it is not a
// dependency of this project, and it sends through its own HTTP client (Node's https with its own
// time-out), so the gateway's deadline, answer size cap and address policy would not hold, and it
// does not tell a connection never made (nothing sent: the payment may fail at once) from one lost
// after sending (the outcome is unknown and must be asked about). Adyen's requests are plain
// JSON, so a small client on ConnectorContext.http keeps every one of those guarantees.
import { type ProcessorSender, worthRetryingUnsent } from '../../outbound/processor-http.js';

export type AdyenAnswer =
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

export class AdyenClient {
  private readonly base_url: string;

  constructor(
    private readonly http: ProcessorSender,
    base_url: string,
  ) {
    this.base_url = base_url.replace(/\/+$/, '');
  }

  private async send(path: string, api_key: string, body: unknown, idempotency_key: string | null): Promise<AdyenAnswer> {
    const headers: Record<string, string> = { 'x-api-key': api_key };
    if (idempotency_key !== null) headers['idempotency-key'] = idempotency_key;
    const exchange = await this.http.send({ method: 'POST', url: `${this.base_url}${path}`, headers, body: JSON.stringify(body) });
    if (exchange.kind !== 'answer') return exchange;
    if (exchange.body === '') return { kind: 'answer', http_status: exchange.http_status, json: null, parsed: false };
    try {
      return { kind: 'answer', http_status: exchange.http_status, json: JSON.parse(exchange.body) as unknown, parsed: true };
    } catch {
      return { kind: 'answer', http_status: exchange.http_status, json: null, parsed: false };
    }
  }

  /**
   * POSTs `body` to `path` (below base_url). With an idempotency key it is tried once more when
   * the first try surely did not reach Adyen or Adyen answered 5xx: the same key makes a second
   * try one request at Adyen, so a passing fault does not fail a payment and cannot pay twice.
   */
  async post(path: string, api_key: string, body: unknown, idempotency_key: string | null): Promise<AdyenAnswer> {
    const first = await this.send(path, api_key, body, idempotency_key);
    const retry =
      idempotency_key !== null &&
      ((first.kind === 'not_sent' && worthRetryingUnsent(first.code)) || (first.kind === 'answer' && first.http_status >= 500));
    if (!retry) return first;
    await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS));
    const second = await this.send(path, api_key, body, idempotency_key);
    return second.kind === 'not_sent' && first.kind === 'answer' ? first : second;
  }
}
