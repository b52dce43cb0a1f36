// The one place Stripe's PaymentIntent, Refund and Dispute statuses, decline codes, the answers to
// a capture or a cancel, and webhook event types become ours (decisions.md §13, §16). Every status
// Stripe publishes is in the tables, so a new one does not compile until it is decided here.
import type { DeclineKind, DisputeStage } from '../connector.js';

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
 *   PaymentIntent status      | a sale, or an authorization (capture_method manual)
 *   --------------------------+----------------------------------------------------------------
 *   succeeded                 | approved (an authorization: approved, and captured since)
 *   requires_capture          | approved: an authorization's approval (the gateway makes it `authorized`); a sale never stays there
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

/**
 * What an authorization's hold is, by its PaymentIntent's status (a lookup's `payment.hold`):
 *
 *   requires_capture   | open: authorized, neither captured nor canceled
 *   succeeded          | captured (amount_received of it; a partial capture released the rest)
 *   canceled           | voided, when it had been authorized (see wasAuthorized), else the authorization was never approved
 *   anything else      | none: the authorization is not approved (yet)
 */
export const AUTHORIZATION_HOLD: Readonly<Record<IntentStatus, 'open' | 'captured' | 'voided' | null>> = {
  requires_capture: 'open',
  succeeded: 'captured',
  canceled: 'voided',
  processing: null,
  requires_action: null,
  requires_confirmation: null,
  requires_payment_method: null,
};

/**
 * Whether a canceled manual-capture PaymentIntent had been authorized before (a void, or Stripe's
 * own cancel when the authorization window ran out) rather than abandoned or declined: its last
 * charge succeeded (a lookup expands it), or, where only the PaymentIntent is at hand (a webhook),
 * it has a charge and no last_payment_error (3-D Secure abandoned makes no charge; a decline leaves
 * its error on the PaymentIntent).
 */
export function wasAuthorized(intent: {
  readonly latest_charge: string | null;
  readonly latest_charge_status: string | null;
  readonly error_code: string | null;
  readonly error_message: string | null;
}): boolean {
  if (intent.latest_charge === null) return false;
  if (intent.latest_charge_status !== null) return intent.latest_charge_status === 'succeeded';
  return intent.error_code === null && intent.error_message === null;
}

/**
 * What the PaymentIntent a capture or a cancel answered says of it:
 *
 *   after a capture: succeeded done | processing accepted (confirmed by webhook or lookup) | anything else unknown (asked again by lookup)
 *   after a cancel:  canceled done  | anything else unknown
 */
export const CAPTURE_ANSWER: Readonly<Record<IntentStatus, 'done' | 'accepted' | 'unknown'>> = {
  succeeded: 'done',
  processing: 'accepted',
  requires_capture: 'unknown',
  canceled: 'unknown',
  requires_action: 'unknown',
  requires_confirmation: 'unknown',
  requires_payment_method: 'unknown',
};
export const CANCEL_ANSWER: Readonly<Record<IntentStatus, 'done' | 'accepted' | 'unknown'>> = {
  canceled: 'done',
  succeeded: 'unknown',
  processing: 'unknown',
  requires_capture: 'unknown',
  requires_action: 'unknown',
  requires_confirmation: 'unknown',
  requires_payment_method: 'unknown',
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

/** A Dispute's statuses (Stripe API reference, dispute.status). */
export const DISPUTE_STATUSES = [
  'warning_needs_response',
  'warning_under_review',
  'warning_closed',
  'needs_response',
  'under_review',
  'won',
  'lost',
] as const;
export type DisputeStatus = (typeof DISPUTE_STATUSES)[number];

/**
 *   Dispute status            | our stage (domain/dispute-record.ts)
 *   --------------------------+--------------------------------------------------------------
 *   warning_needs_response    | evidence_required (an inquiry: the issuer asks before a chargeback)
 *   needs_response            | evidence_required (a chargeback: the funds are withdrawn)
 *   warning_under_review      | under_review
 *   under_review              | under_review
 *   won                       | won
 *   lost                      | lost (also what accepting a dispute at Stripe comes to)
 *   warning_closed            | canceled (the inquiry closed without becoming a chargeback)
 *   a status not listed here  | opened (a newer status of Stripe's: the dispute is still reported, never dropped)
 */
export const DISPUTE_STAGE: Readonly<Record<DisputeStatus, DisputeStage>> = {
  warning_needs_response: 'evidence_required',
  needs_response: 'evidence_required',
  warning_under_review: 'under_review',
  under_review: 'under_review',
  won: 'won',
  lost: 'lost',
  warning_closed: 'canceled',
};

export function disputeStage(status: string): DisputeStage {
  return Object.prototype.hasOwnProperty.call(DISPUTE_STAGE, status) ? DISPUTE_STAGE[status as DisputeStatus] : 'opened';
}

/** What a webhook event type means for the transaction it is about; null: nothing of ours changes. */
export type EventMeaning =
  | { readonly about: 'payment' | 'refund'; readonly outcome: 'approved' | 'rejected' | 'from_status' }
  /** A capture confirmed (the event carries a charge). */
  | { readonly about: 'capture' }
  /** A dispute opened or moved on (the event carries a dispute). */
  | { readonly about: 'dispute' }
  | null;

/**
 *   event type                                | about   | outcome
 *   ------------------------------------------+---------+-----------------------------------------
 *   payment_intent.succeeded                  | payment | approved; on a manual-capture PaymentIntent also the payment_event `captured` (amount_received)
 *   payment_intent.amount_capturable_updated  | payment | approved: an authorization's approval (requires_capture)
 *   payment_intent.payment_failed             | payment | rejected (last_payment_error says why)
 *   payment_intent.canceled                   | payment | rejected; an authorization canceled after its approval (wasAuthorized): the payment_event `voided`, no result
 *   refund.created, refund.updated            | refund  | from its status (succeeded approved, failed or canceled rejected); a succeeded one also the payment_event `refunded`
 *   refund.failed                             | refund  | rejected
 *   charge.captured                           | capture | the payment_event `captured` (amount_captured), no result
 *   charge.dispute.created, .updated, .closed,| dispute | the payment_event `dispute` (stage from DISPUTE_STAGE), no result
 *     .funds_withdrawn, .funds_reinstated     |         |
 *   anything else (payment_intent.created, .requires_action, .processing, charge.succeeded, charge.refunded,
 *   charge.refund.updated...): nothing
 *
 * Refunds are read from refund.* events, whose object is the Refund itself (its id, amount,
 * currency, payment_intent, status and our metadata), not from charge.refunded: that event carries
 * the Charge, whose `refunds` list is nullable and expandable in the description (not sent by
 * default since API version 2022-11-15), so it cannot say which refund it reports.
 * charge.refund.updated carries the same Refund as refund.updated, which is read instead (one
 * event per change). A refund reported as `refunded` is a succeeded one: a pending refund is
 * reported by the refund.updated that settles it.
 */
export const EVENT_MEANING: Readonly<Record<string, EventMeaning>> = {
  'payment_intent.succeeded': { about: 'payment', outcome: 'approved' },
  'payment_intent.amount_capturable_updated': { about: 'payment', outcome: 'approved' },
  'payment_intent.payment_failed': { about: 'payment', outcome: 'rejected' },
  'payment_intent.canceled': { about: 'payment', outcome: 'rejected' },
  'refund.created': { about: 'refund', outcome: 'from_status' },
  'refund.updated': { about: 'refund', outcome: 'from_status' },
  'refund.failed': { about: 'refund', outcome: 'rejected' },
  'charge.captured': { about: 'capture' },
  'charge.dispute.created': { about: 'dispute' },
  'charge.dispute.updated': { about: 'dispute' },
  'charge.dispute.closed': { about: 'dispute' },
  'charge.dispute.funds_withdrawn': { about: 'dispute' },
  'charge.dispute.funds_reinstated': { about: 'dispute' },
};

export function eventMeaning(type: string): EventMeaning {
  return Object.prototype.hasOwnProperty.call(EVENT_MEANING, type) ? EVENT_MEANING[type]! : null;
}
