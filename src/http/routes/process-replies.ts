// The answers /api/process's variants share (card and PayPal sales, refunds, payouts), so each
// wording exists once: the request's variables, the duplicate and in-progress answers, and a
// refund's outcome in the spec's terms.
import type { RefundOutcome } from '../../operations/refund.js';
import { fieldError, reply, type Reply, Status } from '../envelope.js';

export const PROCESSED = 'Transaction processed';
export const DUPLICATE = reply(Status.DUPLICATE_ORDER, 'Duplicate order_id');
export const IN_PROGRESS = reply(Status.IN_PROGRESS, 'A request with this order_id is still being processed; retry shortly');

export function variablesOf(body: Readonly<Record<string, unknown>>): Record<string, string> {
  const variables: Record<string, string> = {};
  for (const name of ['variable1', 'variable2', 'variable3']) if (typeof body[name] === 'string') variables[name] = body[name] as string;
  return variables;
}

/** A refund's outcome (card or PayPal) as the answer. */
export function refundReply(outcome: RefundOutcome): Reply {
  switch (outcome.kind) {
    case 'processed':
      return reply(Status.OK, PROCESSED, outcome.answer);
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
