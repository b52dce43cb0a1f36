// The one place Checkout.com's statuses, response codes and webhook event types become ours
// (decisions.md §13: an approved authorisation → approved, a decline → rejected, a redirect to
// 3-D Secure → pending_async, accepted for later → pending; webhooks reporting approval,
// capture, payment or refund → approved, a decline → rejected). Every status Checkout.com
// publishes is in the table, so a new one does not compile until it is decided here.
import type { DeclineKind, ProcessorResult } from '../connector.js';
import type { CkoAction, CkoPayment, CkoPaymentStatus } from './wire.js';

/** What a payment's status says, for a payment (a sale) and for a payout. */
type Meaning = 'approved' | 'declined' | 'pending';

/**
 *   Checkout.com status  | a sale                               | a payout
 *   ---------------------+--------------------------------------+----------
 *   Pending              | pending (3-D Secure, asynchronous)   | pending
 *   Authorized           | approved (the authorisation)         | pending
 *   Card Verified        | approved (a zero-amount check)       | declined (never a payout's)
 *   Partially Captured   | approved                             | approved
 *   Captured             | approved                             | approved
 *   Partially Refunded   | approved (refunds are their own)     | approved
 *   Refunded             | approved (refunds are their own)     | approved
 *   Paid                 | approved                             | approved (paid out)
 *   Declined             | declined                             | declined
 *   Canceled             | declined (never completed)           | declined
 *   Expired              | declined (3-D Secure not completed)  | declined
 *   Voided               | declined (authorisation released)    | declined
 */
export const STATUS_MEANING: Readonly<Record<CkoPaymentStatus, { readonly sale: Meaning; readonly payout: Meaning }>> = {
  Pending: { sale: 'pending', payout: 'pending' },
  Authorized: { sale: 'approved', payout: 'pending' },
  'Card Verified': { sale: 'approved', payout: 'declined' },
  'Partially Captured': { sale: 'approved', payout: 'approved' },
  Captured: { sale: 'approved', payout: 'approved' },
  'Partially Refunded': { sale: 'approved', payout: 'approved' },
  Refunded: { sale: 'approved', payout: 'approved' },
  Paid: { sale: 'approved', payout: 'approved' },
  Declined: { sale: 'declined', payout: 'declined' },
  Canceled: { sale: 'declined', payout: 'declined' },
  Expired: { sale: 'declined', payout: 'declined' },
  Voided: { sale: 'declined', payout: 'declined' },
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

/** A payment (sale or payout) as its status and codes say, in our terms. */
export function paymentResult(payment: CkoPayment, kind: 'sale' | 'payout', asked: Asked, recheck_after_ms: number): ProcessorResult {
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
  if (payment.redirect_url !== null && kind === 'sale') {
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
