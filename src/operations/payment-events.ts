// What happens to a payment after its answer, as its processor reports it (decisions §16): a
// dispute opened or moved on (chargeback), a refund made outside the gateway (reversal), and the
// capture or void of an authorization confirmed. Each runs inside the caller's database
// transaction (a webhook's, a lookup's, the sandbox's trigger or due work), so the status change,
// its notification, the dispute or refund row and the event's record commit together or not at all.
import { randomBytes } from 'node:crypto';
import { CLOSED_DISPUTE_STAGES, type DisputeStage } from '../domain/dispute-record.js';
import type { TransactionRow } from '../domain/transaction-record.js';
import { FINAL_STATUSES, isPayment } from '../domain/transaction-state.js';
import type { UnitOfWork } from '../store/store.js';
import { changeStatus } from '../transitions/transaction.js';
import { transactionAnswer } from './reservation.js';

/** The gateway's own refunds of a payment read to tell them from one made outside it. */
const OWN_REFUNDS_READ = 200;

/** What applying an event did: changed a status (and notified), recorded something without a status change, or nothing. */
export type PaymentEventOutcome = 'applied' | 'recorded' | 'unchanged';

export interface DisputeReport {
  readonly gateway_id: string;
  readonly psp_dispute_id: string;
  readonly stage: DisputeStage;
  readonly amount_minor: number | null;
  readonly currency: string | null;
  readonly reason: string | null;
  readonly evidence_due_at_ms: number | null;
}

/**
 * A dispute event of `payment`. Its first event (any stage: a processor may report a dispute
 * first when evidence is already due) records the dispute and moves an approved payment to
 * `chargeback`, notified with the disputed amount; later events update the dispute only, and the
 * payment stays `chargeback` whatever the outcome (decisions §16). A dispute of a payment that is
 * not approved (refunded in full, reversed, charged back already) is recorded without a change.
 */
export async function applyDispute(
  tx: UnitOfWork,
  payment: TransactionRow,
  report: DisputeReport,
  source: string,
  now_ms: number,
): Promise<PaymentEventOutcome> {
  const known = await tx.disputes.get(report.gateway_id, report.psp_dispute_id);
  if (known) {
    // A closed dispute does not reopen by a late or replayed earlier event.
    if (CLOSED_DISPUTE_STAGES.has(known.stage) && !CLOSED_DISPUTE_STAGES.has(report.stage)) return 'unchanged';
    const patch = {
      stage: report.stage,
      amount_minor: report.amount_minor ?? known.amount_minor,
      currency: report.currency ?? known.currency,
      reason: report.reason ?? known.reason,
      evidence_due_at_ms: report.evidence_due_at_ms ?? known.evidence_due_at_ms,
    };
    const same = (Object.keys(patch) as (keyof typeof patch)[]).every((key) => patch[key] === known[key]);
    if (same) return 'unchanged';
    await tx.disputes.update(report.gateway_id, report.psp_dispute_id, { ...patch, updated_at_ms: now_ms });
    return 'recorded';
  }
  const amount_minor = Math.min(report.amount_minor ?? payment.amount_minor, payment.amount_minor);
  await tx.disputes.insertIfAbsent({
    gateway_id: report.gateway_id,
    psp_dispute_id: report.psp_dispute_id,
    trace_id: payment.trace_id,
    merchant_id: payment.merchant_id,
    stage: report.stage,
    amount_minor,
    currency: report.currency ?? payment.currency,
    reason: report.reason,
    evidence_due_at_ms: report.evidence_due_at_ms,
    opened_at_ms: now_ms,
    updated_at_ms: now_ms,
  });
  if (!isPayment(payment.transaction_type) || payment.status !== 'approved') return 'recorded';
  const changed = await changeStatus(
    tx,
    payment,
    {
      to: 'chargeback',
      reason: `chargeback ${report.psp_dispute_id} opened (${source})${report.reason ? `: ${report.reason}` : ''}`,
      notified_amount_minor: amount_minor,
    },
    now_ms,
  );
  return changed.kind === 'changed' ? 'applied' : 'recorded';
}

export interface OutsideRefund {
  /** The processor's id of the refund: the same refund reported twice is recorded once. */
  readonly psp_refund_id: string;
  readonly amount_minor: number;
  readonly source: string;
}

/**
 * A refund made at the processor outside the gateway (its dashboard, its support): for the
 * whole amount of a payment nothing was refunded from, the payment becomes `reversed`, notified;
 * for part of it, a refund transaction of the gateway's own (transaction_type refund, its
 * reference_id the payment, the payment's order and notification_url) is recorded `approved`,
 * notified, and the payment stays `approved`, as with refunds made through the API. Its order_id
 * is derived from the processor's refund id, so the same refund reported twice (a webhook and a
 * lookup) is recorded once. A refund beyond what remains refundable is not recorded: the
 * processor and the gateway disagree, and the caller logs it for an operator.
 */
export async function applyOutsideRefund(
  tx: UnitOfWork,
  payment: TransactionRow,
  refund: OutsideRefund,
  now_ms: number,
): Promise<PaymentEventOutcome | 'exceeds'> {
  if (!isPayment(payment.transaction_type) || payment.status !== 'approved') return 'unchanged';
  const order_id = outsideRefundOrderId(refund.psp_refund_id);
  if (await tx.transactions.findByKey(payment.merchant_id, 'refund', order_id)) return 'unchanged';
  // One of the gateway's own refunds, reported before its request recorded the processor's id:
  // the refund it matches is the gateway's (same id, or in flight for the same amount), never a second one.
  const own = await tx.transactions.listRefundsOf(payment.trace_id, OWN_REFUNDS_READ);
  const in_flight = (r: TransactionRow) =>
    r.psp_transaction_id === null && r.amount_minor === refund.amount_minor && !FINAL_STATUSES.has(r.status);
  if (own.some((r) => r.psp_transaction_id === refund.psp_refund_id || in_flight(r))) return 'unchanged';
  if (refund.amount_minor >= payment.amount_minor && payment.refund_reserved_minor === 0) {
    const changed = await changeStatus(
      tx,
      payment,
      { to: 'reversed', reason: `refunded at the processor outside the gateway (${refund.source}, ${refund.psp_refund_id})` },
      now_ms,
    );
    // A second report of the same refund finds the payment no longer approved.
    return changed.kind === 'changed' ? 'applied' : 'unchanged';
  }
  if (!(await tx.transactions.reserveRefund(payment.trace_id, refund.amount_minor))) return 'exceeds';
  await recordRefundRow(tx, payment, refund, order_id, now_ms);
  return 'applied';
}

/** The order_id of a refund made outside the gateway: derived from the processor's id, within the 128 characters an order_id may have. */
export function outsideRefundOrderId(psp_refund_id: string): string {
  return `processor-refund:${psp_refund_id.slice(0, 100)}`;
}

async function recordRefundRow(
  tx: UnitOfWork,
  payment: TransactionRow,
  refund: OutsideRefund,
  order_id: string,
  now_ms: number,
): Promise<void> {
  const charge_amount_minor =
    payment.charge_currency === payment.currency
      ? refund.amount_minor
      : Math.round((payment.charge_amount_minor * refund.amount_minor) / payment.amount_minor);
  const reserved = await tx.transactions.reserveWithChange(
    {
      merchant_id: payment.merchant_id,
      transaction_type: 'refund',
      order_id,
      request_fingerprint: `processor:${randomBytes(8).toString('hex')}`,
      api_version: payment.api_version,
      identity_kind: payment.identity_kind,
      identity_value: payment.identity_value,
      gateway_id: payment.gateway_id,
      payment_processor: payment.payment_processor,
      payment_method: payment.payment_method,
      status: 'pending',
      amount_minor: refund.amount_minor,
      currency: payment.currency,
      charge_amount_minor,
      charge_currency: payment.charge_currency,
      pin: payment.pin,
      card_masked: payment.card_masked,
      card_brand: payment.card_brand,
      card_exp: payment.card_exp,
      card_fingerprint: payment.card_fingerprint,
      card_token: null,
      reference_id: payment.trace_id,
      return_url: null,
      notification_url: payment.notification_url,
      psp_transaction_id: refund.psp_refund_id,
      error_code: null,
      error_details: null,
      description: null,
      redirect_url: null,
      challenge_token_hash: null,
      challenge_expires_at_ms: null,
      challenge_mode: null,
      answer_json: null,
      variables_json: payment.variables_json,
      data_json: null,
      cashier_session_id: null,
      // Notified with the payment's order_id (the merchant's), as decisions §16 says; its own order_id is the processor refund's key.
      cashier_order_id: payment.cashier_order_id ?? payment.order_id,
      cashier_auth_token: null,
      customer_sealed: null,
      cascade_level: 0,
      cascade_root: null,
      created_at_ms: now_ms,
      updated_at_ms: now_ms,
    },
    `refund made at the processor outside the gateway (${refund.source})`,
  );
  if (!reserved) throw new Error(`refund ${order_id} of transaction ${payment.trace_id}: its key was taken in this transaction`);
  const patch = { error_code: '0', error_details: 'Refunded at the processor outside the gateway' };
  await changeStatus(
    tx,
    reserved,
    {
      to: 'approved',
      reason: `refunded at the processor (${refund.source}, ${refund.psp_refund_id})`,
      patch: { ...patch, answer_json: JSON.stringify(transactionAnswer({ ...reserved, ...patch, status: 'approved' })) },
    },
    now_ms,
  );
}
