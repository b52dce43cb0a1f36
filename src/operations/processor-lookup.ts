// Asking the processor what became of a transaction, and applying its answer. The gateway asks
// instead of deciding whenever it lacks the processor's answer: a process killed during the call
// (the stuck-transaction sweep), a time-out or an unreadable answer (a scheduled lookup), a
// customer back from the processor's 3-D Secure page, a pending result that no webhook settled.
// A lookup never moves money, so asking twice (two instances, a retry) is harmless, and its
// answer goes through the state machine's compare-and-set like any other.
import {
  type Connector,
  type LookupRequest,
  type LookupResult,
  type ProcessorResult,
  RETURN_PARAM_MAX_CHARS,
  RETURN_PARAMS_MAX,
  type ReturnResult,
} from '../connectors/connector.js';
import { changeStatus } from '../transitions/transaction.js';
import type { TransactionRow } from '../domain/transaction-record.js';
import type { OperationDeps } from './deps.js';
import { finish } from './lifecycle.js';

export function lookupRequestOf(row: TransactionRow, sale: TransactionRow | null): LookupRequest {
  return {
    trace_id: row.trace_id,
    reference: row.cashier_order_id ?? row.order_id,
    transaction_type: row.transaction_type as LookupRequest['transaction_type'],
    psp_transaction_id: row.psp_transaction_id,
    sale_psp_transaction_id: sale?.psp_transaction_id ?? null,
    amount_minor: row.amount_minor,
    currency: row.currency,
  };
}

export type Settlement =
  /** The processor's final answer was applied (or the row had changed meanwhile: nothing to do). */
  | { readonly kind: 'settled' }
  /** The processor is still working on it. */
  | { readonly kind: 'pending' }
  | { readonly kind: 'not_found' }
  | { readonly kind: 'unavailable'; readonly reason: string };

const FINAL_RESULTS: ReadonlySet<ProcessorResult['kind']> = new Set(['approved', 'rejected', 'error']);

/**
 * Asks the connector about `row` and applies a final answer through finish (the answer stored
 * for replays only when the request was never answered). A pending answer (or the processor's
 * 3-D Secure page still open) is applied with finish too when `pending` is 'apply' (the first time
 * the gateway hears of it: its reference, a later result the sandbox knows, a lookup scheduled);
 * with 'report' it is only reported (a scheduled lookup that reschedules itself).
 */
export async function lookUpAndSettle(
  deps: Pick<OperationDeps, 'store' | 'clock' | 'config'>,
  row: TransactionRow,
  connector: Connector,
  pending: 'apply' | 'report',
): Promise<Settlement> {
  const sale = row.transaction_type === 'refund' && row.reference_id !== null ? await deps.store.transactions.get(row.reference_id) : null;
  const lookup: LookupResult = await connector.lookup(lookupRequestOf(row, sale));
  if (lookup.kind !== 'found') return lookup;
  const result = lookup.result;
  const store_answer = row.answer_json === null;
  if (FINAL_RESULTS.has(result.kind)) {
    await finish(deps, row, result, connector, { store_answer });
    return { kind: 'settled' };
  }
  // Still at the processor: a 3-D Secure nobody finished, a payout on its way. The first time the
  // gateway hears of it, it is recorded (its id, its page) and a lookup scheduled.
  if (pending === 'apply' && result.kind !== 'challenge') {
    await finish(deps, row, result, connector, { store_answer });
  }
  return { kind: 'pending' };
}

/** The error a transaction ends in when its processor has no record of it: the request never reached it. */
export function notAtProcessor(connector: Pick<Connector, 'details_prefix'>, interrupted: boolean): ProcessorResult {
  return {
    kind: 'error',
    psp_transaction_id: null,
    error_code: '1',
    error_details: `${connector.details_prefix}${interrupted ? 'Processing interrupted before the processor answered; the processor has no record of it' : 'The processor has no record of this transaction: the request never reached it'}`,
  };
}

/**
 * A payment waiting on the processor's page (a `redirect` result) whose connector completes it
 * after the customer's return (decisions §17: PayPal's capture of an approved order, Adyen's
 * /payments/details): the connector asks the processor where it is and completes it if it must,
 * with the same idempotency key however often it is called (the customer's return, then the
 * scheduled lookup); what it says is applied like a lookup's answer. The customer cancelling at
 * the processor's page ends the payment `cancelled`.
 */
export async function completeAndSettle(
  deps: Pick<OperationDeps, 'store' | 'clock' | 'config'>,
  row: TransactionRow,
  connector: Connector,
  outcome: 'success' | 'failure' | 'lookup',
  params: Readonly<Record<string, string>>,
): Promise<Settlement> {
  if (!connector.completeReturn) return lookUpAndSettle(deps, row, connector, 'report');
  const result: ReturnResult = await connector.completeReturn({
    ...lookupRequestOf(row, null),
    // A scheduled lookup is no way back: the customer is not there, only the processor's word counts.
    outcome: outcome === 'failure' ? 'failure' : 'success',
    params: boundedParams(params),
    idempotency_key: `paygate-${row.gateway_id}-${row.trace_id}-complete`,
  });
  const store_answer = row.answer_json === null;
  if (result.kind === 'cancelled') {
    const now_ms = deps.clock.now_ms();
    await deps.store.transaction(async (tx) => {
      const locked = await tx.transactions.lock(row.trace_id);
      if (!locked || locked.status !== 'pending_async') return;
      await changeStatus(
        tx,
        locked,
        {
          to: 'cancelled',
          reason: "cancelled by the customer at the processor's page",
          patch: {
            error_code: result.error_code,
            error_details: result.error_details,
            psp_transaction_id: locked.psp_transaction_id ?? result.psp_transaction_id,
          },
        },
        now_ms,
      );
    });
    return { kind: 'settled' };
  }
  if (result.kind === 'unknown') return { kind: 'unavailable', reason: result.reason };
  if (FINAL_RESULTS.has(result.kind)) {
    await finish(deps, row, result, connector, { store_answer });
    return { kind: 'settled' };
  }
  return { kind: 'pending' };
}

/** What the way back carried, bounded: the first RETURN_PARAMS_MAX parameters, each cut to RETURN_PARAM_MAX_CHARS; the gateway's own `outcome` left out. */
function boundedParams(params: Readonly<Record<string, string>>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(params)) {
    if (name === 'outcome' || typeof value !== 'string') continue;
    if (Object.keys(kept).length >= RETURN_PARAMS_MAX) break;
    kept[name.slice(0, 100)] = value.slice(0, RETURN_PARAM_MAX_CHARS);
  }
  return kept;
}
