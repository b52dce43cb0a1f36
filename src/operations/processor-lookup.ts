// Asking the processor what became of a transaction, and applying its answer. The gateway asks
// instead of deciding whenever it lacks the processor's answer: a process killed during the call
// (the stuck-transaction sweep), a time-out or an unreadable answer (a scheduled lookup), a
// customer back from the processor's 3-D Secure page, a pending result that no webhook settled.
// A lookup never moves money, so asking twice (two instances, a retry) is harmless, and its
// answer goes through the state machine's compare-and-set like any other.
import type { Connector, LookupRequest, LookupResult, ProcessorResult } from '../connectors/connector.js';
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
