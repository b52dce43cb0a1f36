// The one place Stripe's PaymentIntent and Refund statuses, decline codes and webhook event types
// become ours (decisions.md §13). Every status Stripe publishes is in the tables, so a new one
// does not compile until it is decided here.
import type { DeclineKind } from '../connector.js';

/** A PaymentIntent's statuses (Stripe API reference, payment_intent.status). */
export const INTENT_STATUSES = [
  'requires_payment_method',
  'requires_confirmation',
  'requires_action',
  'processing',
  'requires_capture',
  'canceled',
  'succeeded',
] as const;
export type IntentStatus = (typeof INTENT_STATUSES)[number];

/**
 *   PaymentIntent status      | a sale
 *   --------------------------+----------------------------------------------------------------
 *   succeeded                 | approved
 *   requires_capture          | approved (an authorisation; this connector always captures at once)
 *   processing                | pending (the outcome comes by webhook or lookup)
 *   requires_action           | redirect when Stripe gives a page to send the customer to, else pending
 *   requires_confirmation     | pending (never left so by this connector: it confirms at once)
 *   requires_payment_method   | rejected (the attempt failed: its last_payment_error says why)
 *   canceled                  | rejected
 */
export const INTENT_MEANING: Readonly<Record<IntentStatus, 'approved' | 'pending' | 'action' | 'rejected'>> = {
  succeeded: 'approved',
  requires_capture: 'approved',
  processing: 'pending',
  requires_action: 'action',
  requires_confirmation: 'pending',
  requires_payment_method: 'rejected',
  canceled: 'rejected',
};

/** A Refund's statuses. */
export const REFUND_STATUSES = ['pending', 'requires_action', 'succeeded', 'failed', 'canceled'] as const;
export type RefundStatus = (typeof REFUND_STATUSES)[number];

export const REFUND_MEANING: Readonly<Record<RefundStatus, 'approved' | 'pending' | 'rejected'>> = {
  succeeded: 'approved',
  pending: 'pending',
  requires_action: 'pending',
  failed: 'rejected',
  canceled: 'rejected',
};

/**
 * Declines no other processor should be asked about (the cascade must not try them elsewhere):
 * the card is lost, stolen or blocked, the issuer said never to retry, or the card data are wrong
 * (another processor would be given the same wrong data). Every other decline (generic_decline,
 * do_not_honor, insufficient_funds, try_again_later, processing_error, ...) is soft.
 */
const HARD_DECLINES: ReadonlySet<string> = new Set([
  'lost_card',
  'stolen_card',
  'pickup_card',
  'fraudulent',
  'merchant_blacklist',
  'restricted_card',
  'do_not_try_again',
  'security_violation',
  'revocation_of_all_authorizations',
  'revocation_of_authorization',
  'stop_payment_order',
  'incorrect_number',
  'invalid_number',
  'incorrect_cvc',
  'invalid_cvc',
  'expired_card',
  'invalid_expiry_month',
  'invalid_expiry_year',
  'card_not_supported',
  'invalid_account',
  'new_account_information_available',
]);

export function declineKind(code: string | null): DeclineKind {
  return code !== null && HARD_DECLINES.has(code) ? 'hard' : 'soft';
}

/** What a webhook event type means for the transaction it is about; null: nothing of ours changes. */
export type EventMeaning = { readonly about: 'payment' | 'refund'; readonly outcome: 'approved' | 'rejected' | 'from_status' } | null;

/**
 *   event type                      | about   | outcome
 *   --------------------------------+---------+-----------------------------------------
 *   payment_intent.succeeded        | payment | approved
 *   payment_intent.payment_failed   | payment | rejected (last_payment_error says why)
 *   payment_intent.canceled         | payment | rejected
 *   refund.created, refund.updated  | refund  | from its status (succeeded approved, failed or canceled rejected)
 *   refund.failed                   | refund  | rejected
 *   anything else (payment_intent.created, .requires_action, .processing, charge.*): nothing
 */
export const EVENT_MEANING: Readonly<Record<string, EventMeaning>> = {
  'payment_intent.succeeded': { about: 'payment', outcome: 'approved' },
  'payment_intent.payment_failed': { about: 'payment', outcome: 'rejected' },
  'payment_intent.canceled': { about: 'payment', outcome: 'rejected' },
  'refund.created': { about: 'refund', outcome: 'from_status' },
  'refund.updated': { about: 'refund', outcome: 'from_status' },
  'refund.failed': { about: 'refund', outcome: 'rejected' },
};

export function eventMeaning(type: string): EventMeaning {
  return Object.prototype.hasOwnProperty.call(EVENT_MEANING, type) ? EVENT_MEANING[type]! : null;
}
