// What Stripe's answers come to in our terms (connector.ts and webhooks.ts call these): a
// PaymentIntent or a Refund as its status says (through status-map.ts's tables), an
// authorization's hold, the answer to a capture or a cancel, and a failure of Stripe's or of the
// network for a payment, a refund, a capture or cancel, or a lookup. Apart from the connector so
// that its methods read as the calls they make.
import type { AuthorizationActionResult, LookupResult, PaymentState, ProcessorRefund, ProcessorResult } from '../connector.js';
import { NOT_SENT_CODES } from '../../outbound/processor-http.js';
import {
  AUTHORIZATION_HOLD,
  CANCEL_ANSWER,
  CAPTURE_ANSWER,
  declineKind,
  INTENT_MEANING,
  REFUND_MEANING,
  wasAuthorized,
} from './status-map.js';
import { type Call, type Intent, isObject, readIntent, type Refund, type StripeFailure, text } from './wire.js';

/** A PaymentIntent as its status says, in our terms. */
export function intentResult(
  intent: Intent,
  asked: { readonly amount_minor: number; readonly currency: string },
  recheck_after_ms: number,
): ProcessorResult {
  switch (INTENT_MEANING[intent.status]) {
    case 'approved':
      return approvedResult(intent, asked);
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

/** The card's approval: what was authorized (and, for a sale, charged). */
function approvedResult(intent: Intent, asked: { readonly amount_minor: number; readonly currency: string }): ProcessorResult {
  return {
    kind: 'approved',
    psp_transaction_id: intent.id,
    charge_amount_minor: intent.amount ?? asked.amount_minor,
    charge_currency: intent.currency?.toUpperCase() ?? asked.currency,
    error_code: intent.status,
    error_details: 'Approved',
  };
}

/**
 * An authorization's PaymentIntent as a lookup reports it: approved with its hold (open, captured
 * or voided, status-map.ts's AUTHORIZATION_HOLD) once the card approved it, else as a sale's
 * result (pending, redirect, rejected). `refunds` are the payment's (null: not known).
 */
export function authorizationFound(
  intent: Intent,
  asked: { readonly amount_minor: number; readonly currency: string },
  recheck_after_ms: number,
  refunds: readonly ProcessorRefund[] | null,
): LookupResult {
  const hold = AUTHORIZATION_HOLD[intent.status];
  if (hold === null || (hold === 'voided' && !wasAuthorized(intent)))
    return { kind: 'found', result: intentResult(intent, asked, recheck_after_ms), payment: { hold: null, captured_minor: null, refunds } };
  const payment: PaymentState = {
    hold,
    captured_minor: hold === 'captured' ? intent.amount_received : 0,
    refunds: hold === 'captured' ? refunds : [],
  };
  return { kind: 'found', result: approvedResult(intent, asked), payment };
}

/**
 * The refunds Stripe holds of a payment (a list of Refunds, newest first), as a lookup reports
 * them: the succeeded ones (a pending refund may still fail; it is reported once it succeeds, as
 * its webhook reports it), with our trace_id when the refund is ours (its metadata).
 */
export function processorRefunds(list: readonly (Refund | null)[]): ProcessorRefund[] | null {
  const refunds: ProcessorRefund[] = [];
  for (const refund of list) {
    if (refund === null) return null;
    if (REFUND_MEANING[refund.status] !== 'approved') continue;
    if (refund.amount === null) return null;
    refunds.push({ psp_refund_id: refund.id, amount_minor: refund.amount, trace_id: refund.trace_id });
  }
  return refunds;
}

/** What the PaymentIntent a capture or a cancel answered says (status-map.ts's CAPTURE_ANSWER, CANCEL_ANSWER). */
export function actionResult(intent: Intent, action: 'capture' | 'void'): AuthorizationActionResult {
  switch ((action === 'capture' ? CAPTURE_ANSWER : CANCEL_ANSWER)[intent.status]) {
    case 'done':
      // A capture is its charge's (the PaymentIntent's id is the authorization's own); a void, the PaymentIntent's.
      return { kind: 'done', psp_action_id: action === 'capture' ? (intent.latest_charge ?? intent.id) : intent.id };
    case 'accepted':
      return { kind: 'accepted', psp_action_id: intent.latest_charge ?? intent.id };
    case 'unknown':
      return { kind: 'unknown', reason: `the PaymentIntent is ${intent.status} after the ${action}` };
  }
}

/**
 * A capture's or a cancel's failure, in our terms: what Stripe refused (the PaymentIntent is not
 * in a state to capture or cancel, the amount is wrong, the authorization expired, the card was
 * declined, the credentials were refused) is `refused` with Stripe's code; a connection never
 * made sent nothing, also `refused`; anything after which the action may have happened (a
 * time-out, a lost connection, a 5xx, an answer that does not read, a request of the same key
 * still in flight) is `unknown`: the gateway asks (lookup) or sends the same key again.
 */
export function actionFailure(call: Exclude<Call<unknown>, { kind: 'value' }>, what: 'Capture' | 'Void'): AuthorizationActionResult {
  if (call.kind === 'lost') return { kind: 'unknown', reason: call.reason };
  const error = (isObject(call.error) ? call.error : {}) as StripeFailure;
  const details = (error.message ?? '').slice(0, 160);
  const refused = (code: string, why: string): AuthorizationActionResult => ({
    kind: 'refused',
    error_code: code,
    error_details: `${what} refused by the processor${why ? `: ${why}` : ''}`.slice(0, 200),
  });
  switch (error.type) {
    case 'StripeInvalidRequestError':
      return refused(error.code ?? String(error.statusCode ?? 400), details);
    case 'StripeCardError':
      return refused(text(error.decline_code) ?? text(error.code) ?? 'card_declined', details);
    case 'StripeAuthenticationError':
    case 'StripePermissionError':
      return refused(String(error.statusCode ?? 401), `the gateway's credentials were not accepted (HTTP ${error.statusCode ?? 401})`);
    case 'StripeConnectionError': {
      const code = error.detail?.code ?? '';
      if (NOT_SENT_CODES.has(code)) return refused('unreachable', `processor unreachable (${code}); nothing was sent`);
      return { kind: 'unknown', reason: `connection failed (${code || 'no answer'})` };
    }
    case 'StripeIdempotencyError':
      // In flight (409) or the key used before with other parameters: what the key did is not known here.
      return { kind: 'unknown', reason: `Stripe answered an idempotency error (${error.code ?? `HTTP ${error.statusCode ?? 400}`})` };
    default:
      if ((error.statusCode ?? 0) >= 500 || error.type === 'StripeAPIError' || error.type === 'StripeRateLimitError')
        return { kind: 'unknown', reason: `Stripe answered HTTP ${error.statusCode ?? '5xx'}` };
      return { kind: 'unknown', reason: 'an answer that could not be read' };
  }
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
