// The one map from Adyen's words to ours: a payment's resultCode (and refusalReason) to a
// ProcessorResult, and a notification's eventCode (with its success flag) to what it settles.
import type { DeclineKind, DisputeStage, ProcessorResult } from '../connector.js';

/** What a payment or payout request asked: what an answer that omits them charged. */
export interface Asked {
  readonly amount_minor: number;
  readonly currency: string;
}

/** A payment's answer (/payments or /payments/details), as far as the connector reads it. */
export interface AdyenPayment {
  readonly pspReference: string | null;
  readonly resultCode: string;
  readonly refusalReason: string | null;
  readonly refusalReasonCode: string | null;
  readonly redirect_url: string | null;
  readonly amount_minor: number | null;
  readonly currency: string | null;
}

/**
 * Refusal reasons a cascade must not retry elsewhere (the card itself is the problem: lost,
 * stolen, blocked, fraud); every other refusal is soft. Adyen's refusal reasons as it documents them.
 */
const HARD_REFUSALS: ReadonlySet<string> = new Set([
  'Blocked Card',
  'Expired Card',
  'Invalid Card Number',
  'FRAUD',
  'FRAUD-CANCELLED',
  'Card Lost',
  'Card Stolen',
  'Restricted Card',
  'Revocation Of Auth',
  'Declined Non Generic',
  'Issuer Suspected Fraud',
]);

export function declineKind(refusal_reason: string | null): DeclineKind {
  return refusal_reason !== null && HARD_REFUSALS.has(refusal_reason) ? 'hard' : 'soft';
}

const DETAILS_MAX_CHARS = 200;

/** A payment's resultCode in our terms (Adyen's result codes, decisions §17). */
export function paymentResult(payment: AdyenPayment, asked: Asked, recheck_after_ms: number): ProcessorResult | null {
  const psp = payment.pspReference;
  switch (payment.resultCode) {
    case 'Authorised':
      if (psp === null) return null;
      return {
        kind: 'approved',
        psp_transaction_id: psp,
        charge_amount_minor: payment.amount_minor ?? asked.amount_minor,
        charge_currency: payment.currency ?? asked.currency,
        error_code: '0',
        error_details: 'Authorised',
      };
    case 'Refused':
    case 'Cancelled':
      return {
        kind: 'rejected',
        psp_transaction_id: psp,
        error_code: payment.refusalReasonCode ?? payment.resultCode,
        error_details: (payment.refusalReason ?? payment.resultCode).slice(0, DETAILS_MAX_CHARS),
        decline: declineKind(payment.refusalReason),
      };
    case 'Error':
      return {
        kind: 'error',
        psp_transaction_id: psp,
        error_code: payment.refusalReasonCode ?? 'Error',
        error_details: `Error at the processor: ${payment.refusalReason ?? 'no reason given'}`.slice(0, DETAILS_MAX_CHARS),
      };
    case 'RedirectShopper':
      if (psp === null || payment.redirect_url === null) return null;
      return {
        kind: 'redirect',
        psp_transaction_id: psp,
        redirect_url: payment.redirect_url,
        error_code: '0',
        error_details: '3-D Secure authentication required',
        recheck_after_ms,
      };
    case 'Received':
    case 'Pending':
      if (psp === null) return null;
      return {
        kind: 'pending',
        psp_transaction_id: psp,
        error_code: '0',
        error_details: `${payment.resultCode} by the processor; the final status will be notified`,
        later: null,
        recheck_after_ms,
      };
    default:
      // IdentifyShopper, ChallengeShopper (native 3-D Secure 2, which this connector does not ask
      // for), PresentToShopper, PartiallyAuthorised (never asked for): not read as anything.
      return null;
  }
}

/** What a notification's eventCode is about, and what it settles. */
export type EventMeaning =
  | { readonly about: 'payment'; readonly payment_event: null }
  | { readonly about: 'payment'; readonly payment_event: 'captured' | 'voided' }
  | { readonly about: 'refund' }
  | { readonly about: 'payout'; readonly failed_always: boolean }
  | { readonly about: 'dispute'; readonly stage: DisputeStage };

const EVENT_MEANING: Readonly<Record<string, EventMeaning>> = {
  AUTHORISATION: { about: 'payment', payment_event: null },
  CAPTURE: { about: 'payment', payment_event: 'captured' },
  CAPTURE_FAILED: { about: 'payment', payment_event: null },
  CANCELLATION: { about: 'payment', payment_event: 'voided' },
  REFUND: { about: 'refund' },
  REFUND_FAILED: { about: 'refund' },
  NOTIFICATION_OF_CHARGEBACK: { about: 'dispute', stage: 'opened' },
  CHARGEBACK: { about: 'dispute', stage: 'opened' },
  CHARGEBACK_REVERSED: { about: 'dispute', stage: 'won' },
  SECOND_CHARGEBACK: { about: 'dispute', stage: 'lost' },
  PAYOUT_THIRDPARTY: { about: 'payout', failed_always: false },
  PAYOUT_DECLINE: { about: 'payout', failed_always: true },
  PAYOUT_EXPIRE: { about: 'payout', failed_always: true },
};

export function eventMeaning(event_code: string): EventMeaning | null {
  return EVENT_MEANING[event_code] ?? null;
}
