// What an answer of Checkout.com's that carries no payment means (connector.ts calls these): a
// refusal before processing, no answer or one that cannot be read, a request that never left;
// for a payment's request (a ProcessorResult) and for an authorization's capture or void (an
// AuthorizationActionResult). Apart from the connector so that its methods read as the calls they make.
import type { AuthorizationActionResult, ProcessorResult } from '../connector.js';
import type { CheckoutAnswer } from './client.js';
import { readErrorCodes } from './wire.js';

/** What a refusal before processing (4xx) means: the request was refused, nothing moved. */
export function refusedResult(answer: Extract<CheckoutAnswer, { kind: 'answer' }>, what: string): ProcessorResult {
  const codes = readErrorCodes(answer.json);
  if (answer.http_status === 401 || answer.http_status === 403) {
    return {
      kind: 'error',
      psp_transaction_id: null,
      error_code: String(answer.http_status),
      error_details: `${what} refused by the processor: the gateway's credentials were not accepted (HTTP ${answer.http_status})`,
    };
  }
  return {
    kind: 'error',
    psp_transaction_id: null,
    error_code: String(answer.http_status),
    error_details: `${what} refused by the processor (HTTP ${answer.http_status}${codes ? `: ${codes}` : ''})`,
  };
}

/** No answer, or one that cannot be read: the outcome is unknown until the processor is asked. */
export function unknownResult(answer: CheckoutAnswer): ProcessorResult {
  if (answer.kind === 'answer') {
    return {
      kind: 'unknown',
      psp_transaction_id: null,
      reason: answer.parsed
        ? `an answer of an unexpected shape (HTTP ${answer.http_status})`
        : `an answer that does not parse (HTTP ${answer.http_status})`,
    };
  }
  return { kind: 'unknown', psp_transaction_id: null, reason: answer.reason };
}

/** A request that never reached the processor, even on its second try: it failed, and nothing moved. */
export function unreachedResult(reason: string): ProcessorResult {
  return {
    kind: 'error',
    psp_transaction_id: null,
    error_code: 'unreachable',
    error_details: `Processor unreachable (${reason}); nothing was charged`,
  };
}

/**
 * A capture or a void answered with a 4xx: refused, nothing happened at Checkout.com (403 not
 * allowed: not an open authorization; 404 no such payment; 422 invalid, e.g. more than authorized;
 * 401 the gateway's key refused).
 */
export function refusedAction(answer: Extract<CheckoutAnswer, { kind: 'answer' }>, what: 'Capture' | 'Void'): AuthorizationActionResult {
  const codes = readErrorCodes(answer.json);
  const why: Readonly<Record<number, string>> = {
    401: ": the gateway's credentials were not accepted",
    403: ': not allowed for this payment (not an open authorization)',
    404: ': the processor has no such payment',
  };
  return {
    kind: 'refused',
    error_code: String(answer.http_status),
    error_details: `${what} refused by the processor${why[answer.http_status] ?? ''} (HTTP ${answer.http_status}${codes ? `: ${codes}` : ''})`,
  };
}

/** A capture or a void whose answer was lost or cannot be read: asked about (lookup), never guessed. */
export function unknownAction(answer: CheckoutAnswer): AuthorizationActionResult {
  const unknown = unknownResult(answer);
  return { kind: 'unknown', reason: unknown.kind === 'unknown' ? unknown.reason : 'no answer' };
}

/** A capture or a void that never reached Checkout.com, even on its second try: nothing happened there. */
export function unreachedAction(reason: string, what: 'Capture' | 'Void'): AuthorizationActionResult {
  return {
    kind: 'refused',
    error_code: 'unreachable',
    error_details: `Processor unreachable (${reason}); nothing was ${what === 'Capture' ? 'captured' : 'voided'}`,
  };
}
