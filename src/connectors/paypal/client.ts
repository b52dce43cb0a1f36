// The connector's HTTP client for PayPal's REST APIs: an OAuth2 client-credentials access token
// (POST /v1/oauth2/token with the client id and secret as Basic auth), fetched once per gateway
// and kept until shortly before it expires, sent as `Authorization: Bearer`; one more try with a
// fresh token when PayPal answers 401 (a token revoked or expired early). PayPal-Request-Id on
// every request that moves money, JSON in and out, over the gateway's processor HTTP (time-outs,
// size cap, address policy). Neither the secret nor the token is ever logged or put in a result.
//
// Why not @paypal/paypal-server-sdk: its HTTP layer (apimatic's core with axios) keeps its own
// time-outs and retries, reads answers of any size and cannot be given our address policy; the
// few calls here are plain JSON.
import type { Clock } from '../../domain/clock.js';
import { type JsonAnswer, jsonAnswer, withOneRetry } from '../../outbound/json-exchange.js';
import type { ProcessorSender } from '../../outbound/processor-http.js';

export type PayPalAnswer = JsonAnswer;

/** A token is renewed this long before PayPal says it expires (or at half its life if that is shorter). */
const REFRESH_MARGIN_MS = 5 * 60_000;
/** A token PayPal says lives longer is kept this long at most. */
const TOKEN_MAX_MS = 12 * 3_600_000;

export class PayPalClient {
  private readonly base_url: string;
  private token: { readonly value: string; readonly renew_at_ms: number } | null = null;
  private fetching: Promise<string | PayPalAnswer> | null = null;

  constructor(
    private readonly http: ProcessorSender,
    private readonly clock: Clock,
    base_url: string,
    private readonly client_id: string,
    private readonly client_secret: string,
  ) {
    this.base_url = base_url.replace(/\/+$/, '');
  }

  /** The cached token, or a new one (one fetch at a time per gateway); a failed fetch's answer otherwise. */
  private async accessToken(force: boolean): Promise<string | PayPalAnswer> {
    if (!force && this.token && this.clock.now_ms() < this.token.renew_at_ms) return this.token.value;
    this.fetching ??= this.fetchToken().finally(() => {
      this.fetching = null;
    });
    return this.fetching;
  }

  private async fetchToken(): Promise<string | PayPalAnswer> {
    const basic = Buffer.from(`${this.client_id}:${this.client_secret}`).toString('base64');
    const exchange = await this.http.send({
      method: 'POST',
      url: `${this.base_url}/v1/oauth2/token`,
      headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    });
    // The token call moves nothing: whatever went wrong, the request it was for was not sent.
    if (exchange.kind !== 'answer') return { kind: 'not_sent', reason: `access token: ${exchange.reason}`, code: exchange.code };
    let json: unknown;
    try {
      json = JSON.parse(exchange.body);
    } catch {
      json = null;
    }
    const token = json as { access_token?: unknown; expires_in?: unknown } | null;
    if (exchange.http_status !== 200 || typeof token?.access_token !== 'string' || token.access_token === '') {
      return { kind: 'answer', http_status: exchange.http_status === 200 ? 502 : exchange.http_status, json: null, parsed: false };
    }
    const life_ms = Math.min(typeof token.expires_in === 'number' && token.expires_in > 0 ? token.expires_in * 1000 : 0, TOKEN_MAX_MS);
    const renew_at_ms = this.clock.now_ms() + Math.max(0, Math.min(life_ms - REFRESH_MARGIN_MS, life_ms / 2));
    this.token = { value: token.access_token, renew_at_ms };
    return token.access_token;
  }

  private async sendOnce(
    method: 'GET' | 'POST',
    path: string,
    body: unknown,
    request_id: string | null,
    force: boolean,
  ): Promise<PayPalAnswer> {
    const token = await this.accessToken(force);
    if (typeof token !== 'string')
      return token.kind === 'answer'
        ? { kind: 'not_sent', reason: `access token refused (HTTP ${token.http_status})`, code: 'ETOKENREFUSED' }
        : token;
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (request_id !== null) headers['paypal-request-id'] = request_id;
    if (method === 'POST') headers.prefer = 'return=representation';
    const exchange = await this.http.send({
      method,
      url: `${this.base_url}${path}`,
      headers,
      body: typeof body === 'string' ? body : body === undefined ? undefined : JSON.stringify(body),
    });
    return jsonAnswer(exchange);
  }

  /** One request; answered 401, once more with a fresh token (a 401 is a refusal before anything was done). */
  private async send(method: 'GET' | 'POST', path: string, body: unknown, request_id: string | null): Promise<PayPalAnswer> {
    const first = await this.sendOnce(method, path, body, request_id, false);
    if (first.kind === 'answer' && first.http_status === 401) return this.sendOnce(method, path, body, request_id, true);
    return first;
  }

  /**
   * A POST; `body` may be a JSON text already (the verify call carries an event as received).
   * Tried once more with the same PayPal-Request-Id when the first try surely did not reach PayPal
   * or, with a request id, PayPal answered 5xx (outbound/json-exchange.ts).
   */
  async post(path: string, body: unknown, request_id: string | null): Promise<PayPalAnswer> {
    return withOneRetry(() => this.send('POST', path, body, request_id), request_id !== null);
  }

  async get(path: string): Promise<PayPalAnswer> {
    return this.send('GET', path, undefined, null);
  }
}
