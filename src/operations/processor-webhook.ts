// A processor's webhook (decisions.md §13): verified with the gateway's webhook secret by its
// connector, matched to the transaction, and applied through the state machine, so the
// merchant's notification follows as for any other change. The event's id is recorded in the
// same database transaction as the change: a replayed event (the processor retrying, or someone
// resending a captured one) finds its id taken and changes nothing. An event whose outcome the
// transaction already has changes nothing and notifies nothing: a sale answered approved is not
// notified again when the processor's webhooks confirm it.
import type { WebhookEvent } from '../connectors/connector.js';
import { FINAL_STATUSES, isPayment, isTransitionAllowed, statusForResult } from '../domain/transaction-state.js';
import type { TransactionRow } from '../domain/transaction-record.js';
import type { UnitOfWork, TransactionPatch } from '../store/store.js';
import { changeStatus } from '../transitions/transaction.js';
import type { OperationDeps } from './deps.js';
import { transactionAnswer } from './lifecycle.js';
import { completeAction } from './authorization.js';
import { applyDispute, applyOutsideRefund } from './payment-events.js';

export type WebhookOutcome =
  /** No such gateway, or its connector takes no webhooks: HTTP 404. */
  | { readonly kind: 'unknown_gateway' }
  /** The signature does not verify with the gateway's webhook secret: HTTP 401. */
  | { readonly kind: 'bad_signature' }
  /** Verified (HTTP 200), with what it did. */
  | {
      readonly kind: 'accepted';
      readonly outcome: 'applied' | 'unchanged' | 'duplicate' | 'unmatched' | 'ignored';
      readonly trace_id: number | null;
      /** The body the processor wants back (Connector.webhook_acknowledgement), or null for the gateway's JSON. */
      readonly acknowledgement: { readonly content_type: string; readonly body: string } | null;
    };

class ReplayedEvent extends Error {}

export async function receiveWebhook(
  deps: OperationDeps,
  connector_name: string,
  gateway_id: string,
  raw_body: Buffer,
  headers: Readonly<Record<string, string | string[] | undefined>>,
): Promise<WebhookOutcome> {
  if (!/^[0-9a-f]{32}$/.test(gateway_id)) return { kind: 'unknown_gateway' };
  const found = await deps.connectors.forGatewayId(deps.store, gateway_id);
  if (!found || found.gateway.connector !== connector_name || !found.connector.readWebhook) return { kind: 'unknown_gateway' };
  const reading = await found.connector.readWebhook(raw_body, headers);
  const acknowledgement = found.connector.webhook_acknowledgement ?? null;
  if (reading.kind === 'bad_signature') {
    deps.logger.warn(
      { gateway_id, connector: connector_name },
      "processor webhook refused: the signature does not verify with the gateway's webhook secret",
    );
    return { kind: 'bad_signature' };
  }
  if (reading.kind === 'ignored') {
    deps.logger.info({ gateway_id, reason: reading.reason }, 'processor webhook verified and ignored');
    return { kind: 'accepted', outcome: 'ignored', trace_id: null, acknowledgement };
  }
  if (reading.kind === 'events') {
    // A batch: each event on its own, in order, each applied once; the answer reports the first that changed something.
    const outcomes = [];
    for (const event of reading.events) outcomes.push(await applyEvent(deps, gateway_id, event, acknowledgement));
    return outcomes.find((o) => o.kind === 'accepted' && o.outcome === 'applied') ?? outcomes[0]!;
  }
  return applyEvent(deps, gateway_id, reading.event, acknowledgement);
}

/** One verified event: matched to its transaction, applied in one database transaction with its record, once. */
async function applyEvent(
  deps: OperationDeps,
  gateway_id: string,
  event: WebhookEvent,
  acknowledgement: { readonly content_type: string; readonly body: string } | null,
): Promise<WebhookOutcome> {
  const matched = (await matchTransaction(deps, gateway_id, event)) ?? (await paymentOfEvent(deps, gateway_id, event));
  // Only an event that decides something has a request to wait for (payment_intent.created... do not).
  const row = event.result !== null ? await afterItsRequest(deps, matched) : matched;
  const now_ms = deps.clock.now_ms();
  try {
    const outcome = await deps.store.transaction(async (tx) => {
      const locked = row ? await tx.transactions.lock(row.trace_id) : null;
      const applied = locked ? await apply(tx, locked, event, gateway_id, now_ms, deps.logger) : 'unmatched';
      const recorded = await tx.merchants.insertProcessorEvent({
        gateway_id,
        event_id: event.event_id,
        event_type: event.event_type,
        trace_id: locked?.trace_id ?? null,
        outcome: applied,
        received_at_ms: now_ms,
      });
      // Rolls back whatever apply wrote: the event was applied before.
      if (!recorded) throw new ReplayedEvent();
      return applied;
    });
    deps.logger.info(
      { gateway_id, event_id: event.event_id, event_type: event.event_type, trace_id: row?.trace_id ?? null, outcome },
      'processor webhook',
    );
    const reported = event.result?.kind;
    if (
      outcome === 'unchanged' &&
      row &&
      row.transaction_type !== 'authorize' &&
      (reported === 'approved' || reported === 'rejected') &&
      FINAL_STATUSES.has(row.status) &&
      row.status !== reported
    ) {
      // The processor says otherwise than what was recorded and notified: an operator must reconcile it.
      deps.logger.error(
        { gateway_id, trace_id: row.trace_id, recorded: row.status, reported, event_type: event.event_type },
        'processor webhook contradicts a final status',
      );
    }
    return { kind: 'accepted', outcome, trace_id: row?.trace_id ?? null, acknowledgement };
  } catch (error) {
    if (!(error instanceof ReplayedEvent)) throw error;
    return { kind: 'accepted', outcome: 'duplicate', trace_id: row?.trace_id ?? null, acknowledgement };
  }
}

/** Polling step and bound of afterItsRequest. */
const REQUEST_WAIT_STEP_MS = 25;
const REQUEST_WAIT_MAX_MS = 5_000;

/**
 * A processor often sends its webhook while the request that made the payment is still waiting
 * for the answer. That request applies the answer with what only it knows (the card's token, in
 * the answer and in the merchant's notification), so the webhook waits for it, bounded by half
 * the processor time-out: the same outcome from the webhook then changes nothing. A request
 * that never finishes (its process died, its answer lost) leaves the webhook to apply the
 * outcome after the wait.
 */
async function afterItsRequest(deps: OperationDeps, row: TransactionRow | null): Promise<TransactionRow | null> {
  if (!row || row.status !== 'pending' || row.answer_json !== null) return row;
  const wait_ms = Math.min(REQUEST_WAIT_MAX_MS, Math.floor(deps.config.limits.processor_timeout_ms / 2));
  const deadline_ms = Date.now() + wait_ms;
  let current: TransactionRow | null = row;
  while (current && current.status === 'pending' && current.answer_json === null && Date.now() < deadline_ms) {
    await new Promise((resolve) => setTimeout(resolve, REQUEST_WAIT_STEP_MS));
    current = await deps.store.transactions.get(row.trace_id);
  }
  return current;
}

/** The transaction an event is about, most precise key first; always one of this gateway's. */
async function matchTransaction(deps: OperationDeps, gateway_id: string, event: WebhookEvent): Promise<TransactionRow | null> {
  const { match } = event;
  const ours = (row: TransactionRow | null) =>
    row && row.gateway_id === gateway_id && (match.transaction_type === null || row.transaction_type === match.transaction_type)
      ? row
      : null;
  if (match.trace_id !== null) {
    const row = ours(await deps.store.transactions.get(match.trace_id));
    if (row) return row;
  }
  if (match.psp_transaction_id !== null) {
    const row = ours(await deps.store.transactions.findByPspId(gateway_id, match.psp_transaction_id));
    if (row) return row;
  }
  if (match.reference !== null && match.transaction_type !== null) {
    const gateway = await deps.store.merchants.getGateway(gateway_id);
    if (gateway) return ours(await deps.store.transactions.findByKey(gateway.merchant_id, match.transaction_type, match.reference));
  }
  return null;
}

/**
 * The payment an event about the payment itself is about, when `match` found none of our
 * transactions: a refund made outside the gateway names the payment, not a refund of ours.
 */
async function paymentOfEvent(deps: OperationDeps, gateway_id: string, event: WebhookEvent): Promise<TransactionRow | null> {
  const psp_payment_id = event.payment_event?.psp_payment_id;
  if (psp_payment_id === undefined) return null;
  const row = await deps.store.transactions.findByPspId(gateway_id, psp_payment_id);
  return row && row.gateway_id === gateway_id && isPayment(row.transaction_type) ? row : null;
}

/**
 * What an event about the payment itself does (decisions §16), or null when it is only the
 * result of a request of ours and the result applies as usual: a capture or void confirmed on an
 * authorization, a refund nobody asked the gateway for (a reversal, or a recorded refund), a
 * dispute (chargeback).
 */
async function applyPaymentEvent(
  tx: UnitOfWork,
  row: TransactionRow,
  event: WebhookEvent,
  gateway_id: string,
  now_ms: number,
  logger: OperationDeps['logger'],
): Promise<'applied' | 'unchanged' | null> {
  const payment_event = event.payment_event;
  if (!payment_event) return null;
  const source = `processor webhook ${event.event_type}`;
  switch (payment_event.kind) {
    case 'captured':
    case 'voided': {
      if (row.transaction_type !== 'authorize') return null;
      const action = await tx.authorizations.getAction(row.trace_id);
      const captured_minor =
        payment_event.kind === 'voided' ? null : (payment_event.amount_minor ?? action?.amount_minor ?? row.amount_minor);
      return completeAction(tx, row, action, captured_minor, null, source, now_ms);
    }
    case 'refunded': {
      // One of the gateway's own refunds: its result applies as usual.
      if (row.transaction_type === 'refund' || !isPayment(row.transaction_type)) return null;
      if (payment_event.currency !== row.currency) {
        logger.error(
          { trace_id: row.trace_id, event_type: event.event_type },
          'processor refund in another currency than the payment; left to the operator',
        );
        return 'unchanged';
      }
      const outcome = await applyOutsideRefund(
        tx,
        row,
        { psp_refund_id: payment_event.psp_refund_id, amount_minor: payment_event.amount_minor, source },
        now_ms,
      );
      if (outcome === 'exceeds') {
        logger.error(
          { trace_id: row.trace_id, psp_refund_id: payment_event.psp_refund_id, amount_minor: payment_event.amount_minor },
          'processor refund made outside the gateway exceeds what remains refundable; left to the operator',
        );
        return 'unchanged';
      }
      return outcome === 'unchanged' ? 'unchanged' : 'applied';
    }
    case 'dispute': {
      if (!isPayment(row.transaction_type)) return 'unchanged';
      const outcome = await applyDispute(tx, row, { gateway_id, ...payment_event.dispute }, source, now_ms);
      return outcome === 'unchanged' ? 'unchanged' : 'applied';
    }
  }
}

async function apply(
  tx: UnitOfWork,
  row: TransactionRow,
  event: WebhookEvent,
  gateway_id: string,
  now_ms: number,
  logger: OperationDeps['logger'],
): Promise<'applied' | 'unchanged' | 'ignored'> {
  const by_payment_event = await applyPaymentEvent(tx, row, event, gateway_id, now_ms, logger);
  if (by_payment_event !== null) return by_payment_event;
  const result = event.result;
  if (result === null || (result.kind !== 'approved' && result.kind !== 'rejected' && result.kind !== 'error')) return 'ignored';
  // A payout paid and then sent back by the payee's side (PayPal's RETURNED item) is reversed, not rejected.
  const to =
    row.transaction_type === 'payout' && row.status === 'approved' && result.kind === 'rejected'
      ? 'reversed'
      : statusForResult(row.transaction_type, result.kind);
  if (row.status === to || !isTransitionAllowed(row.transaction_type, row.status, to)) return 'unchanged';
  const patch: TransactionPatch = {
    psp_transaction_id: row.psp_transaction_id ?? result.psp_transaction_id,
    error_code: result.error_code,
    error_details: result.error_details,
  };
  // What was charged, when the event says it (an event without it leaves what the request recorded).
  if (result.kind === 'approved' && /^[A-Z]{3}$/.test(result.charge_currency) && result.charge_amount_minor > 0) {
    patch.charge_amount_minor = result.charge_amount_minor;
    patch.charge_currency = result.charge_currency;
  }
  // A request never answered (its processor call still running, or its process gone) gets its
  // answer with the change, so a replay answers this outcome instead of waiting for one that may
  // never come; a request still running completes it (lifecycle.ts finish: the card's token).
  if (row.answer_json === null) patch.answer_json = JSON.stringify(transactionAnswer({ ...row, ...patch, status: to } as TransactionRow));
  const changed = await changeStatus(tx, row, { to, reason: `processor webhook ${event.event_type}`, patch }, now_ms);
  return changed.kind === 'changed' ? 'applied' : 'unchanged';
}
