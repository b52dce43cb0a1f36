// What an answer of Checkout.com's that carries no payment means (connector.ts calls these): a
// refusal before processing, no answer or one that cannot be read, a request that never left.
// Apart from the connector so that its methods read as the calls they make.
import type { ProcessorResult } from '../connector.js';
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
