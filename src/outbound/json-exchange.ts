// What the connectors' own clients (Checkout.com, PayPal, Adyen) make of an exchange with their
// processor: its answer read as JSON, and the one retry of a request that moves money. One copy,
// not three: the retry decides whether a payment may be failed at once or sent twice, and the
// three had grown apart before (the guard's refusals, worthRetryingUnsent).
import { type ProcessorExchange, worthRetryingUnsent } from './processor-http.js';

export type JsonAnswer =
  /** An HTTP answer; json is null when its body is empty or does not parse. */
  | { readonly kind: 'answer'; readonly http_status: number; readonly json: unknown; readonly parsed: boolean }
  /** `code`: processor-http.ts's (ECONNREFUSED, ECIRCUITOPEN…). */
  | { readonly kind: 'not_sent'; readonly reason: string; readonly code: string }
  | { readonly kind: 'lost'; readonly reason: string; readonly code: string };

/** The pause before the one retry: long enough for a passing fault to pass, short beside a customer's wait. */
export const RETRY_PAUSE_MS = 250;

/** An exchange's answer with its body read as JSON; an exchange without one as it came. */
export function jsonAnswer(exchange: ProcessorExchange): JsonAnswer {
  if (exchange.kind !== 'answer') return exchange;
  if (exchange.body === '') return { kind: 'answer', http_status: exchange.http_status, json: null, parsed: false };
  try {
    return { kind: 'answer', http_status: exchange.http_status, json: JSON.parse(exchange.body) as unknown, parsed: true };
  } catch {
    return { kind: 'answer', http_status: exchange.http_status, json: null, parsed: false };
  }
}

/**
 * Sends, and sends once more after RETRY_PAUSE_MS when the first try surely did not reach the
 * processor (a connection never made; not a refusal by the gateway's guard, which a retry would
 * only meet again) or, with `retry_5xx`, the processor answered 5xx. The caller sends both tries
 * with the same idempotency key, so a passing fault does not fail a payment and a retry cannot
 * move money twice.
 */
export async function withOneRetry(send: () => Promise<JsonAnswer>, retry_5xx: boolean): Promise<JsonAnswer> {
  const first = await send();
  const retry =
    (first.kind === 'not_sent' && worthRetryingUnsent(first.code)) || (retry_5xx && first.kind === 'answer' && first.http_status >= 500);
  if (!retry) return first;
  await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS));
  const second = await send();
  // The first try reached the processor (its 5xx): a second that could not connect must not make
  // the whole exchange look as if nothing was ever sent.
  return second.kind === 'not_sent' && first.kind === 'answer' ? first : second;
}
