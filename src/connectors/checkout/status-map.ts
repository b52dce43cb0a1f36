// The one place Checkout.com's statuses, response codes and webhook event types become ours
// (decisions.md §13: an approved authorisation → approved, a decline → rejected, a redirect to
// 3-D Secure → pending_async, accepted for later → pending; webhooks reporting approval,
// capture, payment or refund → approved, a decline → rejected; decisions §16: an authorization's
// hold, and the stages of a dispute). Every status Checkout.com publishes is in the table, so a
// new one does not compile until it is decided here.
import type { DeclineKind, DisputeStage, PaymentState, ProcessorResult } from '../connector.js';
import type { CkoAction, CkoPayment, CkoPaymentStatus } from './wire.js';

/** What a payment's status says, for a payment (a sale or an authorization) and for a payout. */
type Meaning = 'approved' | 'declined' | 'pending';

/** What a lookup asks about, as the table reads it. */
export type PaymentKind = 'sale' | 'authorize' | 'payout';

/**
 *   Checkout.com status  | a sale                               | an authorization (its hold)      | a payout
 *   ---------------------+--------------------------------------+----------------------------------+----------
 *   Pending              | pending (3-D Secure, asynchronous)   | pending                          | pending
 *   Authorized           | approved (the authorisation)         | approved (open)                  | pending
 *   Card Verified        | approved (a zero-amount check)       | declined (holds nothing)         | declined (never a payout's)
 *   Partially Captured   | approved                             | approved (captured, in part)     | approved
 *   Captured             | approved                             | approved (captured)              | approved
 *   Partially Refunded   | approved (refunds are their own)     | approved (captured)              | approved
 *   Refunded             | approved (refunds are their own)     | approved (captured)              | approved
 *   Paid                 | approved                             | approved (captured; a payout's)  | approved (paid out)
 *   Declined             | declined                             | declined                         | declined
 *   Canceled             | declined (never completed)           | declined                         | declined
 *   Expired              | declined (3-D Secure not completed)  | declined                         | declined
 *   Voided               | declined (authorisation released)    | approved (voided: it was held)   | declined
 *
 * Partially Captured is what a capture of less than the authorized amount leaves: the capture is
 * sent `Final`, so the rest is released and nothing more can be captured (one capture per
 * authorization, decisions §16).
 */
export const STATUS_MEANING: Readonly<
  Record<
    CkoPaymentStatus,
    { readonly sale: Meaning; readonly authorize: Meaning; readonly hold: PaymentState['hold']; readonly payout: Meaning }
  >
> = {
  Pending: { sale: 'pending', authorize: 'pending', hold: null, payout: 'pending' },
  Authorized: { sale: 'approved', authorize: 'approved', hold: 'open', payout: 'pending' },
  'Card Verified': { sale: 'approved', authorize: 'declined', hold: null, payout: 'declined' },
  'Partially Captured': { sale: 'approved', authorize: 'approved', hold: 'captured', payout: 'approved' },
  Captured: { sale: 'approved', authorize: 'approved', hold: 'captured', payout: 'approved' },
  'Partially Refunded': { sale: 'approved', authorize: 'approved', hold: 'captured', payout: 'approved' },
  Refunded: { sale: 'approved', authorize: 'approved', hold: 'captured', payout: 'approved' },
  Paid: { sale: 'approved', authorize: 'approved', hold: 'captured', payout: 'approved' },
  Declined: { sale: 'declined', authorize: 'declined', hold: null, payout: 'declined' },
  Canceled: { sale: 'declined', authorize: 'declined', hold: null, payout: 'declined' },
  Expired: { sale: 'declined', authorize: 'declined', hold: null, payout: 'declined' },
  Voided: { sale: 'declined', authorize: 'approved', hold: 'voided', payout: 'declined' },
};

/**
 * Checkout.com's response codes by their first digit: 1xxxx approved, 2xxxx a soft decline
 * (do not honour, insufficient funds: another try may succeed), 3xxxx a hard decline (lost or
 * stolen card: never retried), 4xxxx a risk decline (treated as hard), 5xxxx? and anything else
 * an error of the processor's (soft: another processor may take it).
 */
export function declineKind(response_code: string | null): DeclineKind {
  const first = response_code?.charAt(0);
  return first === '3' || first === '4' ? 'hard' : 'soft';
}

/** Checkout.com's own words, or ours when it gave none. */
function details(summary: string | null, fallback: string): string {
  return (summary !== null && summary !== '' ? summary : fallback).slice(0, 200);
}

/** The amount and currency asked for: what an answer that omits them charged. */
export interface Asked {
  readonly amount_minor: number;
  readonly currency: string;
}

/** A payment (sale, authorization or payout) as its status and codes say, in our terms. */
export function paymentResult(payment: CkoPayment, kind: PaymentKind, asked: Asked, recheck_after_ms: number): ProcessorResult {
  const meaning = STATUS_MEANING[payment.status][kind];
  const code = payment.response_code ?? (meaning === 'approved' ? '10000' : '');
  if (meaning === 'approved') {
    return {
      kind: 'approved',
      psp_transaction_id: payment.id,
      charge_amount_minor: payment.amount ?? asked.amount_minor,
      charge_currency: payment.currency ?? asked.currency,
      error_code: code,
      error_details: details(payment.response_summary, 'Approved'),
    };
  }
  if (meaning === 'declined') {
    return {
      kind: 'rejected',
      psp_transaction_id: payment.id,
      error_code: code || payment.status.toLowerCase(),
      error_details: details(payment.response_summary, `Payment ${payment.status.toLowerCase()} at the processor`),
      decline: declineKind(payment.response_code),
    };
  }
  if (payment.redirect_url !== null && kind !== 'payout') {
    return {
      kind: 'redirect',
      psp_transaction_id: payment.id,
      redirect_url: payment.redirect_url,
      error_code: '0',
      error_details: '3-D Secure authentication required',
      recheck_after_ms,
    };
  }
  return {
    kind: 'pending',
    psp_transaction_id: payment.id,
    error_code: '0',
    later: null,
    recheck_after_ms,
    error_details:
      kind === 'payout' ? 'Payout accepted by the processor; the final status will be notified' : 'Payment pending at the processor',
  };
}

/** A refund action, found by lookup: approved or declined (a refund action exists only once processed). */
export function refundResult(action: CkoAction, asked: Asked): ProcessorResult {
  if (action.approved === false) {
    return {
      kind: 'rejected',
      psp_transaction_id: action.id,
      error_code: action.response_code ?? 'declined',
      error_details: details(action.response_summary, 'Refund declined by the processor'),
    };
  }
  return {
    kind: 'approved',
    psp_transaction_id: action.id,
    charge_amount_minor: action.amount ?? asked.amount_minor,
    charge_currency: asked.currency,
    error_code: action.response_code ?? '10000',
    error_details: details(action.response_summary, 'Refund approved'),
  };
}

/**
 * What else a found payment says (decisions §16): an authorization's hold (from its status) and
 * what it captured, and the refunds Checkout.com holds of it (ours carry our trace_id in their
 * metadata; one without is a refund made outside the gateway, a reversal). `actions` is
 * GET /payments/{id}/actions, or null when it could not be read: then the refunds are unknown.
 */
export function paymentState(payment: CkoPayment, kind: 'sale' | 'authorize', actions: readonly CkoAction[] | null): PaymentState {
  const refunds =
    actions === null
      ? null
      : actions
          .filter((a) => a.type === 'Refund' && a.approved !== false && a.amount !== null)
          .map((a) => ({ psp_refund_id: a.id, amount_minor: a.amount!, trace_id: a.trace_id }));
  if (kind === 'sale') return { hold: null, captured_minor: null, refunds };
  const hold = STATUS_MEANING[payment.status].hold;
  let captured_minor: number | null = hold === 'captured' ? null : 0;
  if (hold === 'captured') {
    const captured = (actions ?? [])
      .filter((a) => a.type === 'Capture' && a.approved !== false)
      .reduce((sum, a) => sum + (a.amount ?? 0), 0);
    // Without the actions, only a whole capture says its amount.
    captured_minor = captured > 0 ? captured : payment.status === 'Captured' ? payment.amount : null;
  }
  return { hold, captured_minor, refunds };
}

/** What a webhook event type means for the transaction it is about; null: nothing of ours changes. */
export type EventMeaning = { readonly about: 'payment' | 'refund'; readonly outcome: 'approved' | 'rejected' } | null;

/**
 *   event type                     | about   | outcome
 *   -------------------------------+---------+---------
 *   payment_approved               | payment | approved
 *   payment_captured               | payment | approved
 *   payment_paid                   | payment | approved (a payout paid out)
 *   payment_declined               | payment | rejected
 *   payment_authentication_failed  | payment | rejected (3-D Secure failed)
 *   payment_expired                | payment | rejected (3-D Secure never completed)
 *   payment_canceled               | payment | rejected
 *   payment_refunded               | refund  | approved
 *   payment_refund_declined        | refund  | rejected
 *   anything else (payment_pending, payment_voided, payment_capture_declined, disputes...): nothing
 *
 * What some events also say of the payment itself is PAYMENT_EVENT_KIND's and DISPUTE_STAGE's
 * (below); an event may have both a meaning here (our refund approved) and a payment event (a
 * refund of the payment, ours or not).
 */
export const EVENT_MEANING: Readonly<Record<string, EventMeaning>> = {
  payment_approved: { about: 'payment', outcome: 'approved' },
  payment_captured: { about: 'payment', outcome: 'approved' },
  payment_paid: { about: 'payment', outcome: 'approved' },
  payment_declined: { about: 'payment', outcome: 'rejected' },
  payment_authentication_failed: { about: 'payment', outcome: 'rejected' },
  payment_expired: { about: 'payment', outcome: 'rejected' },
  payment_canceled: { about: 'payment', outcome: 'rejected' },
  payment_refunded: { about: 'refund', outcome: 'approved' },
  payment_refund_declined: { about: 'refund', outcome: 'rejected' },
};

export function eventMeaning(type: string): EventMeaning {
  return Object.prototype.hasOwnProperty.call(EVENT_MEANING, type) ? EVENT_MEANING[type]! : null;
}

/**
 * Payment events that report what happened to the payment itself (decisions §16), whoever asked:
 *
 *   payment_captured  | captured (data.amount: what was captured; confirms a capture answered 202)
 *   payment_voided    | voided (confirms a void answered 202)
 *   payment_refunded  | refunded (data.action_id: the refund; ours, or a reversal when it is none of ours)
 *
 * payment_capture_declined and payment_void_declined report nothing here: the authorization
 * stays as it was (open, or expired), which a lookup of it tells (its hold), so the gateway,
 * which waits for a confirmation, finds it there.
 */
export const PAYMENT_EVENT_KIND: Readonly<Record<string, 'captured' | 'voided' | 'refunded'>> = {
  payment_captured: 'captured',
  payment_voided: 'voided',
  payment_refunded: 'refunded',
};

/**
 * Checkout.com's dispute events (its webhook event types; the 2021 description lists six, its
 * later pages and hyperswitch's connector the rest: test/psp-specs/checkout.com/SOURCE.md) and the
 * stage each puts a dispute in. The first of them to arrive opens the dispute, whichever it is.
 *
 *   dispute_received                        | opened
 *   dispute_evidence_required               | evidence_required (data.evidence_required_by: the deadline)
 *   dispute_evidence_submitted              | under_review
 *   dispute_evidence_acknowledged_by_scheme | under_review
 *   dispute_arbitration_sent_to_scheme      | under_review
 *   dispute_arbitration_evidence_submitted  | under_review
 *   dispute_won, dispute_arbitration_won    | won
 *   dispute_lost, dispute_arbitration_lost  | lost
 *   dispute_expired                         | lost (no evidence by the deadline: the chargeback stands)
 *   dispute_accepted                        | accepted
 *   dispute_canceled                        | canceled
 *   dispute_resolved                        | canceled (closed by Checkout.com without a ruling: already refunded, rapid dispute resolution, a negative amount)
 *
 * payment_chargeback and payment_retrieval (an older event set the 2021 description still names)
 * are not read: the dispute_* events report the same chargeback under the dispute's own id, and a
 * retrieval is a question, not a chargeback.
 */
export const DISPUTE_STAGE: Readonly<Record<string, DisputeStage>> = {
  dispute_received: 'opened',
  dispute_evidence_required: 'evidence_required',
  dispute_evidence_submitted: 'under_review',
  dispute_evidence_acknowledged_by_scheme: 'under_review',
  dispute_arbitration_sent_to_scheme: 'under_review',
  dispute_arbitration_evidence_submitted: 'under_review',
  dispute_won: 'won',
  dispute_arbitration_won: 'won',
  dispute_lost: 'lost',
  dispute_arbitration_lost: 'lost',
  dispute_expired: 'lost',
  dispute_accepted: 'accepted',
  dispute_canceled: 'canceled',
  dispute_resolved: 'canceled',
};

/** The kind of payment event an event type reports, or null. */
export function paymentEventKind(type: string): 'captured' | 'voided' | 'refunded' | null {
  return Object.prototype.hasOwnProperty.call(PAYMENT_EVENT_KIND, type) ? PAYMENT_EVENT_KIND[type]! : null;
}

/** The stage a dispute event puts its dispute in, or null when the type is no dispute event of ours. */
export function disputeStage(type: string): DisputeStage | null {
  return Object.prototype.hasOwnProperty.call(DISPUTE_STAGE, type) ? DISPUTE_STAGE[type]! : null;
}
