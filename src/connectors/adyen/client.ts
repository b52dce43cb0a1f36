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
import { type JsonAnswer, jsonAnswer, withOneRetry } from '../../outbound/json-exchange.js';
import type { ProcessorSender } from '../../outbound/processor-http.js';

export type AdyenAnswer = JsonAnswer;

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
    return jsonAnswer(exchange);
  }

  /**
   * POSTs `body` to `path` (below base_url). With an idempotency key it is tried once more when
   * the first try surely did not reach Adyen or Adyen answered 5xx (outbound/json-exchange.ts):
   * the same key makes a second try one request at Adyen. Without one, never.
   */
  async post(path: string, api_key: string, body: unknown, idempotency_key: string | null): Promise<AdyenAnswer> {
    const send = () => this.send(path, api_key, body, idempotency_key);
    return idempotency_key === null ? send() : withOneRetry(send, true);
  }
}
