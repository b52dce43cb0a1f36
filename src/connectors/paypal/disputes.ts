// PayPal's disputes (CUSTOMER.DISPUTE.CREATED / UPDATED / RESOLVED webhooks, whose resource is a
// Disputes v1 `dispute`) read in our terms (decisions §16): the dispute's stage, amount, reason and
// the seller's response date. PayPal names the disputed payment by its capture id
// (disputed_transactions[].seller_transaction_id); the gateway knows a PayPal deposit by its order
// id, so webhooks.ts asks PayPal which order the capture belongs to, as it does for refunds.
//
// The one map of PayPal's dispute statuses to our stages:
//
//   PayPal status (dispute_outcome.outcome_code when RESOLVED) | stage
//   -----------------------------------------------------------+-------------------
//   OPEN                                                       | opened
//   WAITING_FOR_SELLER_RESPONSE                                | evidence_required
//   WAITING_FOR_BUYER_RESPONSE, UNDER_REVIEW, OTHER            | under_review
//   RESOLVED: RESOLVED_SELLER_FAVOUR, DENIED                   | won  (the claim was refused)
//   RESOLVED: RESOLVED_WITH_PAYOUT                             | won  (PayPal paid the buyer itself)
//   RESOLVED: RESOLVED_BUYER_FAVOUR                            | lost
//   RESOLVED: ACCEPTED                                         | accepted (the merchant accepted the claim)
//   RESOLVED: CANCELED_BY_BUYER                                | canceled
//   RESOLVED: NONE or no outcome                               | under_review (not settled yet for us)
//
// An inquiry (dispute_life_cycle_stage INQUIRY) counts like a chargeback: PayPal holds the disputed
// amount from the moment the case is opened, so the merchant must hear of it then.
import type { DisputeFacts, DisputeStage } from '../connector.js';
import { minorOf, obj, str } from './status-map.js';

/** As the other connectors keep a processor's reason. */
const REASON_MAX_CHARS = 200;
/** PayPal's dispute ids and capture ids are short; anything longer is not PayPal's. */
const PAYPAL_ID_MAX_CHARS = 64;

const STAGE_OF_STATUS: Readonly<Record<string, DisputeStage>> = {
  OPEN: 'opened',
  WAITING_FOR_SELLER_RESPONSE: 'evidence_required',
  WAITING_FOR_BUYER_RESPONSE: 'under_review',
  UNDER_REVIEW: 'under_review',
  OTHER: 'under_review',
};

const STAGE_OF_OUTCOME: Readonly<Record<string, DisputeStage>> = {
  RESOLVED_SELLER_FAVOUR: 'won',
  DENIED: 'won',
  RESOLVED_WITH_PAYOUT: 'won',
  RESOLVED_BUYER_FAVOUR: 'lost',
  ACCEPTED: 'accepted',
  CANCELED_BY_BUYER: 'canceled',
};

export interface PayPalDispute {
  /** The disputed capture (seller_transaction_id of the first disputed transaction). */
  readonly capture_id: string;
  readonly facts: DisputeFacts;
}

function stageOf(dispute: Record<string, unknown>): DisputeStage | null {
  const status = str(dispute.status);
  if (status === null) return null;
  if (status === 'RESOLVED') return STAGE_OF_OUTCOME[str(obj(dispute.dispute_outcome)?.outcome_code) ?? ''] ?? 'under_review';
  return STAGE_OF_STATUS[status] ?? 'under_review';
}

/** A dispute resource read, or null when it is not one (no id, no status, no disputed capture). */
export function readDispute(resource: unknown): PayPalDispute | null {
  const dispute = obj(resource);
  if (dispute === null) return null;
  const psp_dispute_id = str(dispute.dispute_id);
  const stage = stageOf(dispute);
  const transactions = Array.isArray(dispute.disputed_transactions) ? dispute.disputed_transactions : [];
  const capture_id = str(obj(transactions[0])?.seller_transaction_id);
  if (psp_dispute_id === null || stage === null || capture_id === null) return null;
  if (psp_dispute_id.length > PAYPAL_ID_MAX_CHARS || capture_id.length > PAYPAL_ID_MAX_CHARS) return null;
  const amount = minorOf(dispute.dispute_amount);
  const reason = str(dispute.reason);
  const code = str(dispute.external_reason_code);
  const why = reason !== null && code !== null ? `${reason} (${code})` : (reason ?? code);
  const due_ms = Date.parse(str(dispute.seller_response_due_date) ?? '');
  return {
    capture_id,
    facts: {
      psp_dispute_id,
      stage,
      amount_minor: amount === null || amount.amount_minor <= 0 ? null : amount.amount_minor,
      currency: amount?.currency ?? null,
      reason: why === null ? null : why.slice(0, REASON_MAX_CHARS),
      evidence_due_at_ms: Number.isFinite(due_ms) ? due_ms : null,
    },
  };
}
