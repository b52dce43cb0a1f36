// What Stripe's answers come to in our terms (connector.ts and webhooks.ts call these): a
// PaymentIntent or a Refund as its status says (through status-map.ts's tables), and a failure of
// Stripe's or of the network for a payment, a refund or a lookup. Apart from the connector so that
// its methods read as the calls they make.
import type { LookupResult, ProcessorResult } from '../connector.js';
import { declineKind, INTENT_MEANING, REFUND_MEANING } from './status-map.js';
import { type Call, type Intent, isObject, readIntent, type Refund, type StripeFailure, text } from './wire.js';

/** Error codes raised before a connection existed: the request never left the gateway. */
const NOT_SENT_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EDESTINATIONNOTALLOWED',
]);

/** A PaymentIntent as its status says, in our terms. */
export function intentResult(
  intent: Intent,
  asked: { readonly amount_minor: number; readonly currency: string },
  recheck_after_ms: number,
): ProcessorResult {
  switch (INTENT_MEANING[intent.status]) {
    case 'approved':
      return {
        kind: 'approved',
        psp_transaction_id: intent.id,
        charge_amount_minor: intent.amount ?? asked.amount_minor,
        charge_currency: intent.currency?.toUpperCase() ?? asked.currency,
        error_code: intent.status,
        error_details: 'Approved',
      };
    case 'rejected': {
      const code = intent.error_code ?? intent.status;
      return {
        kind: 'rejected',
        psp_transaction_id: intent.id,
        error_code: code,
        decline: declineKind(intent.error_code),
        error_details: (
          intent.error_message ?? (intent.status === 'canceled' ? 'Payment canceled at the processor' : 'Payment failed at the processor')
        ).slice(0, 200),
      };
    }
    case 'action':
      if (intent.redirect_url !== null) {
        return {
          kind: 'redirect',
          psp_transaction_id: intent.id,
          redirect_url: intent.redirect_url,
          error_code: '0',
          error_details: '3-D Secure authentication required',
          recheck_after_ms,
        };
      }
      break;
    case 'pending':
      break;
  }
  return {
    kind: 'pending',
    psp_transaction_id: intent.id,
    error_code: '0',
    later: null,
    recheck_after_ms,
    error_details: 'Payment pending at the processor',
  };
}

export function refundResult(
  refund: Refund,
  asked: { readonly amount_minor: number; readonly currency: string },
  recheck_after_ms: number,
): ProcessorResult {
  switch (REFUND_MEANING[refund.status]) {
    case 'approved':
      return {
        kind: 'approved',
        psp_transaction_id: refund.id,
        charge_amount_minor: refund.amount ?? asked.amount_minor,
        charge_currency: refund.currency ?? asked.currency,
        error_code: refund.status,
        error_details: 'Refund approved',
      };
    case 'rejected':
      return {
        kind: 'rejected',
        psp_transaction_id: refund.id,
        error_code: refund.reason ?? refund.status,
        error_details: `Refund ${refund.status} at the processor`,
      };
    case 'pending':
      return {
        kind: 'pending',
        psp_transaction_id: refund.id,
        error_code: '0',
        later: null,
        recheck_after_ms,
        error_details: 'Refund accepted by the processor; the final status will be notified',
      };
  }
}

/** A failure of Stripe's or of the network, in our terms; `what` names the operation for the merchant. */
export function failureResult(call: Exclude<Call<unknown>, { kind: 'value' }>, what: 'Payment' | 'Refund'): ProcessorResult {
  if (call.kind === 'lost') return { kind: 'unknown', psp_transaction_id: null, reason: call.reason };
  const error = (isObject(call.error) ? call.error : {}) as StripeFailure;
  const details = (error.message ?? '').slice(0, 180);
  switch (error.type) {
    case 'StripeCardError': {
      const intent = readIntent(error.raw?.payment_intent);
      // The package gives decline_code as '' when Stripe gave none (incorrect_cvc, expired_card).
      const code = text(error.decline_code) ?? text(error.code) ?? 'card_declined';
      return {
        kind: 'rejected',
        psp_transaction_id: intent?.id ?? null,
        error_code: code,
        error_details: details || 'Card declined',
        decline: declineKind(code),
      };
    }
    case 'StripeConnectionError': {
      const code = error.detail?.code ?? '';
      // A connection never made sent nothing; one lost after sending may have charged the card.
      if (NOT_SENT_CODES.has(code))
        return {
          kind: 'error',
          psp_transaction_id: null,
          error_code: 'unreachable',
          error_details: `Processor unreachable (${code}); nothing was charged`,
        };
      return { kind: 'unknown', psp_transaction_id: null, reason: `connection failed (${code || 'no answer'})` };
    }
    case 'StripeAPIError':
    case 'StripeRateLimitError':
      return { kind: 'unknown', psp_transaction_id: null, reason: `Stripe answered HTTP ${error.statusCode ?? '5xx'}` };
    case 'StripeAuthenticationError':
    case 'StripePermissionError':
      return {
        kind: 'error',
        psp_transaction_id: null,
        error_code: String(error.statusCode ?? 401),
        error_details: `${what} refused by the processor: the gateway's credentials were not accepted (HTTP ${error.statusCode ?? 401})`,
      };
    case 'StripeInvalidRequestError':
    case 'StripeIdempotencyError':
      return {
        kind: what === 'Refund' ? 'rejected' : 'error',
        psp_transaction_id: null,
        error_code: error.code ?? String(error.statusCode ?? 400),
        error_details: `${what} refused by the processor${details ? `: ${details}` : ''}`.slice(0, 200),
      } as ProcessorResult;
    default:
      if ((error.statusCode ?? 0) >= 500)
        return { kind: 'unknown', psp_transaction_id: null, reason: `Stripe answered HTTP ${error.statusCode}` };
      return { kind: 'unknown', psp_transaction_id: null, reason: 'an answer that could not be read' };
  }
}

export function lookupFailure(call: Exclude<Call<unknown>, { kind: 'value' }>): LookupResult {
  if (call.kind === 'lost') return { kind: 'unavailable', reason: call.reason };
  const error = (isObject(call.error) ? call.error : {}) as StripeFailure;
  if (error.statusCode === 404 || error.code === 'resource_missing') return { kind: 'not_found' };
  return { kind: 'unavailable', reason: `${error.type ?? 'error'}${error.statusCode ? ` (HTTP ${error.statusCode})` : ''}` };
}
