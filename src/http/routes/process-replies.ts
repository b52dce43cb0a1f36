// What /api/process's variants share (card and PayPal sales, refunds, payouts), so each exists
// once: the customer's and the variables' fields, the request's variables, the duplicate and
// in-progress answers, and a sale's and a refund's outcome in the spec's terms.
import type { RefundOutcome } from '../../operations/refund.js';
import type { SaleOutcome } from '../../operations/sale.js';
import type { TransactionAnswer } from '../../operations/lifecycle.js';
import { fieldError, reply, type Reply, Status } from '../envelope.js';
import { gatewayRefusalReply } from '../gateway-refusal.js';

/** The customer's fields of a sale and a payout (spec §4.1), all required. */
export const CUSTOMER = {
  pin: 'required',
  dob: 'required',
  email: 'required',
  phone: 'required',
  requester_ip: 'required',
  address: 'required',
  city: 'required',
  country: 'required',
  first_name: 'required',
  last_name: 'required',
  zip: 'required',
} as const;

export const VARIABLES = { variable1: 'optional', variable2: 'optional', variable3: 'optional' } as const;

export const PROCESSED = 'Transaction processed';
export const DUPLICATE = reply(Status.DUPLICATE_ORDER, 'Duplicate order_id');
export const IN_PROGRESS = reply(Status.IN_PROGRESS, 'A request with this order_id is still being processed; retry shortly');

export function variablesOf(body: Readonly<Record<string, unknown>>): Record<string, string> {
  const variables: Record<string, string> = {};
  for (const name of ['variable1', 'variable2', 'variable3']) if (typeof body[name] === 'string') variables[name] = body[name] as string;
  return variables;
}

/**
 * The status 0 answer of a processed sale, refund, payout, capture or void. An answer that is the request's own
 * commit, already on disk, leaves at once; one read from another request's commit (a replay) waits
 * until that commit is on disk too (signed-route.ts, Store.durable).
 */
export function processedReply(
  outcome: { readonly answer: TransactionAnswer; readonly own_commit: boolean },
  description: string = PROCESSED,
): Reply {
  const answered = reply(Status.OK, description, outcome.answer);
  return outcome.own_commit ? { ...answered, from_own_commit: true } : answered;
}

/** A sale's outcome (card or PayPal) as the answer. */
export function saleReply(outcome: SaleOutcome): Reply {
  switch (outcome.kind) {
    case 'processed':
      return processedReply(outcome);
    case 'duplicate_order':
      return DUPLICATE;
    case 'in_progress':
      return IN_PROGRESS;
    case 'no_gateway':
      return gatewayRefusalReply(outcome.refusal);
  }
}

/** A refund's outcome (card or PayPal) as the answer. */
export function refundReply(outcome: RefundOutcome): Reply {
  switch (outcome.kind) {
    case 'processed':
      return processedReply(outcome);
    case 'duplicate_order':
      return DUPLICATE;
    case 'in_progress':
      return IN_PROGRESS;
    case 'reference_not_found':
      return reply(Status.TRANSACTION_NOT_FOUND, 'Transaction not found');
    case 'no_processor':
      return reply(Status.NO_GATEWAY, "Gateway unavailable: the original sale's processor is not available here");
    case 'refused':
      switch (outcome.reason) {
        case 'card_mismatch':
          return fieldError('Invalid field: card_number (does not match the original sale)');
        case 'expiry_mismatch':
          return fieldError('Invalid field: card_exp (does not match the original sale)');
        case 'card_required':
          return fieldError('Missing required field: card_number (the sale was paid by card: refund it without payment_method paypal)');
        case 'currency_mismatch':
          return reply(Status.REFUND_REFUSED, 'Refund refused: currency differs from the original sale');
        case 'not_a_sale':
        case 'not_approved':
          return reply(Status.REFUND_REFUSED, 'Refund refused: the original transaction is not an approved sale or captured authorization');
        case 'exceeds_sale':
          return reply(
            Status.REFUND_REFUSED,
            `Refund refused: amount exceeds what remains refundable on the sale (${outcome.remaining_minor ?? 0} left)`,
          );
      }
  }
}
