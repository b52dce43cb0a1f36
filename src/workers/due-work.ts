// Finishes what falls due later: a processor's asynchronous result, a challenge nobody
// answered, a transaction whose process died during its processor call (a sale or refund
// closed as error; a released payout settled by asking the processor what became of it), a
// cashier order past its time limit. All of it is found in the database, so a restart (or another instance)
// picks it up; no timer holds state.
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.js';
import type { TransactionStatus } from '../domain/transaction-state.js';
import { expireOrder } from '../transitions/order.js';
import { changeStatus } from '../transitions/transaction.js';
import { finish, transactionAnswer } from '../operations/lifecycle.js';
import { withoutCustomer } from '../operations/payout-review.js';
import type { ProcessorRegistry } from '../processors/processor.js';
import type { Store } from '../store/store.js';

export interface DueWorkOptions {
  readonly store: Store;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly poll_ms: number;
  readonly stuck_processing_ms: number;
  /** Asked what became of interrupted payouts; without it they wait for the operator. */
  readonly processors?: ProcessorRegistry;
  readonly batch_size?: number;
  /** Sandbox: re-read the shared clock offset so instances agree on "now". */
  readonly sync_clock?: (() => Promise<void>) | undefined;
}

/** One pass: returns how many items it finished, so tests can drive it without timers. */
export async function runDueWorkOnce(options: DueWorkOptions): Promise<number> {
  const batch = options.batch_size ?? 50;
  if (options.sync_clock) await options.sync_clock();
  const now_ms = options.clock.now_ms();
  let finished = 0;
  finished += await options.store.transaction(async (tx) => {
    const actions = await tx.claimDueActions(now_ms, batch);
    for (const action of actions) {
      const row = await tx.lockTransaction(action.trace_id);
      if (row && row.status === action.expected_status) {
        const outcome = await changeStatus(tx, row, {
          to: action.to_status as TransactionStatus,
          reason: action.kind === 'challenge_timeout' ? 'challenge timed out' : 'processor reported its result',
          patch: { error_code: action.error_code, error_details: action.error_details },
        }, now_ms);
        if (outcome.kind === 'not_allowed') options.logger.error({ trace_id: row.trace_id, action: action.kind }, 'due action refused by the state machine');
      }
      await tx.markDueActionDone(action.id);
    }
    return actions.length;
  });
  finished += await options.store.transaction(async (tx) => {
    const stuck = await tx.findStuckTransactions(now_ms - options.stuck_processing_ms, batch);
    for (const row of stuck) {
      const outcome = await changeStatus(tx, row, {
        to: 'error',
        reason: 'processing interrupted before the processor answered',
        patch: { error_code: '1', error_details: `${row.payment_processor === 'sandbox' ? '[TEST] ' : ''}Processing interrupted before the processor answered; reconcile with the processor` },
      }, now_ms);
      if (outcome.kind === 'changed') {
        await tx.updateTransaction(row.trace_id, { answer_json: JSON.stringify(transactionAnswer(outcome.row)) });
      }
    }
    return stuck.length;
  });
  finished += await settleInterruptedPayouts(options, now_ms - options.stuck_processing_ms, batch);
  // Cashier orders past their 15 minutes close as rejected (domain/order-state.ts).
  finished += await options.store.transaction(async (tx) => {
    const orders = await tx.claimExpiredOrders(now_ms, batch);
    for (const order of orders) await expireOrder(tx, order, now_ms);
    return orders.length;
  });
  return finished;
}

/**
 * A released payout is written `in progress` before its processor is asked (operations/payout-review.ts).
 * If the process stopped during that call, the money may or may not have moved, so the payout is
 * not closed as error like a stuck sale: the processor is asked (outside any database
 * transaction), and its answer is applied through finish like a live one (compare-and-set, so a
 * late answer of a still-living process and this one cannot both apply). A processor that does
 * not know the payout, or cannot be asked, leaves it `in progress` for the operator.
 */
async function settleInterruptedPayouts(options: DueWorkOptions, older_than_ms: number, batch: number): Promise<number> {
  if (!options.processors) return 0;
  const rows = await options.store.findInterruptedPayouts(older_than_ms, batch);
  let settled = 0;
  for (const row of rows) {
    const processor = options.processors.get(row.payment_processor);
    const status = processor?.payoutStatus ? await processor.payoutStatus({ trace_id: row.trace_id, amount_minor: row.amount_minor, currency: row.currency }) : null;
    if (!processor || status === null) {
      options.logger.warn({ trace_id: row.trace_id }, 'payout interrupted during its processor call and unknown to the processor; left in progress for the operator');
      continue;
    }
    await finish(options, row, withoutCustomer(status), (token) => processor.challengeUrl(token, 'wallet'), { store_answer: false });
    settled += 1;
  }
  return settled;
}

export interface Worker {
  stop(): Promise<void>;
}

/** Polls until stopped; a failed pass is logged and retried on the next tick. */
export function startDueWork(options: DueWorkOptions): Worker {
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | null = null;
  const tick = () => {
    running = runDueWorkOnce(options)
      .then(() => undefined, (error: unknown) => options.logger.error({ err: error }, 'due work pass failed'))
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, options.poll_ms);
      });
  };
  timer = setTimeout(tick, options.poll_ms);
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
