// Finishes what falls due later: a processor's asynchronous result, a challenge nobody
// answered, a lookup of an outcome the gateway did not get (a time-out, a 3-D Secure nobody came
// back from, a pending result no webhook settled), a transaction whose process died during its
// processor call, a cashier order past its time limit. All of it is found in the database, so a
// restart (or another instance) picks it up; no timer holds state. Whenever the processor may
// know more than the gateway, the processor is asked before anything is decided, outside any
// database transaction.
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { ConnectorRegistry } from '../connectors/registry.js';
import type { Clock } from '../domain/clock.js';
import { finish } from '../operations/lifecycle.js';
import { completeAndSettle, lookUpAndSettle, notAtProcessor } from '../operations/processor-lookup.js';
import type { DueActionRow, TransactionRow } from '../domain/transaction-record.js';
import type { Store } from '../store/store.js';
import { expireOrder } from '../transitions/order.js';
import { applyDispute } from '../operations/payment-events.js';
import { runAuthorizationWork } from './authorization-work.js';
import { changeStatus } from '../transitions/transaction.js';

export interface DueWorkDeps {
  readonly store: Store;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly config: Config;
  /** Asked what became of transactions whose processor answer the gateway lacks. */
  readonly connectors: Pick<ConnectorRegistry, 'forGatewayId'>;
}

export interface DueWorkOptions {
  readonly deps: DueWorkDeps;
  readonly poll_ms: number;
  readonly batch_size?: number;
  /** Interrupted transactions whose processor could not settle them yet, and when to ask again; none kept when absent. */
  readonly ask_later?: AskLater;
  /** Sandbox: re-read the shared clock offset so instances agree on "now". */
  readonly sync_clock?: (() => Promise<void>) | undefined;
}

/** How often CVV 259's chargeback of an authorization looks again whether it has been captured. */
const SANDBOX_CHARGEBACK_RECHECK_MS = 60_000;
/** The sandbox's simulated disputes want evidence within this many days, as card schemes commonly do. */
const SANDBOX_EVIDENCE_DAYS = 7;

/** How long a claimed lookup is put off while the processor is asked: another instance leaves it alone meanwhile. */
const LOOKUP_CLAIM_MS = 60_000;

/** One pass: returns how many items it finished, so tests can drive it without timers. */
export async function runDueWorkOnce(options: DueWorkOptions): Promise<number> {
  const { deps } = options;
  const batch = options.batch_size ?? 50;
  if (options.sync_clock) await options.sync_clock();
  const now_ms = deps.clock.now_ms();
  let finished = 0;
  const lookups: DueActionRow[] = [];
  finished += await deps.store.transaction(async (tx) => {
    const actions = await tx.transactions.claimDueActions(now_ms, batch);
    for (const action of actions) {
      if (action.kind === 'processor_lookup') {
        // Asked below, outside this transaction; claimed meanwhile like a lease, so a process
        // that dies while asking leaves it to be claimed again.
        await tx.transactions.deferDueAction(action.id, now_ms + LOOKUP_CLAIM_MS);
        lookups.push(action);
        continue;
      }
      const row = await tx.transactions.lock(action.trace_id);
      if (row && action.kind === 'sandbox_chargeback' && row.transaction_type === 'authorize' && row.status === 'authorized') {
        // CVV 259 on an authorization: the issuer disputes what is taken, so the chargeback waits for the capture.
        await tx.transactions.deferDueAction(action.id, now_ms + SANDBOX_CHARGEBACK_RECHECK_MS);
        continue;
      }
      if (row && action.kind === 'sandbox_chargeback' && row.status === 'approved') {
        // The sandbox's simulated issuer disputes the whole payment (CVV 259, decisions §16).
        await applyDispute(
          tx,
          row,
          {
            gateway_id: row.gateway_id,
            psp_dispute_id: `sbx_dsp_${row.trace_id}`,
            stage: 'evidence_required',
            amount_minor: row.amount_minor,
            currency: row.currency,
            reason: '[TEST] Fraudulent (sandbox CVV 259)',
            evidence_due_at_ms: now_ms + SANDBOX_EVIDENCE_DAYS * 86_400_000,
          },
          'sandbox issuer',
          now_ms,
        );
      } else if (row && action.kind !== 'sandbox_chargeback' && row.status === action.expected_status) {
        // A result or a time-out always names the status it leads to ('' is a look-up's, above);
        // one that does not is refused like a move the table does not know.
        const to = action.to_status;
        const outcome =
          to === ''
            ? ({ kind: 'not_allowed' } as const)
            : await changeStatus(
                tx,
                row,
                {
                  to,
                  reason: action.kind === 'challenge_timeout' ? 'challenge timed out' : 'processor reported its result',
                  patch: { error_code: action.error_code, error_details: action.error_details },
                },
                now_ms,
              );
        if (outcome.kind === 'not_allowed')
          deps.logger.error({ trace_id: row.trace_id, action: action.kind }, 'due action refused by the state machine');
      }
      await tx.transactions.markDueActionDone(action.id);
    }
    return actions.length - lookups.length;
  });
  for (const action of lookups) finished += await runLookup(deps, action, now_ms);
  finished += await runAuthorizationWork(deps, options.ask_later ?? new AskLater(), now_ms);
  finished += await settleInterrupted(
    deps,
    options.ask_later ?? new AskLater(),
    now_ms - deps.config.schedules.stuck_processing_seconds * 1000,
    batch,
  );
  // Cashier orders past their 15 minutes close as rejected (domain/order-state.ts).
  finished += await deps.store.transaction(async (tx) => {
    const orders = await tx.cashier.claimExpiredOrders(now_ms, batch);
    for (const order of orders) await expireOrder(tx, order, now_ms);
    return orders.length;
  });
  return finished;
}

/**
 * A scheduled lookup: asks the processor and applies a final answer. Still pending there, not
 * found yet, or not reachable: asked again on the lookup schedule, until the transaction is older
 * than the lookup bound, when it is left to the operator (logged as an error).
 */
async function runLookup(deps: DueWorkDeps, action: DueActionRow, now_ms: number): Promise<number> {
  const row = await deps.store.transactions.get(action.trace_id);
  // Settled meanwhile (a webhook, the customer's return, another lookup): nothing to ask.
  if (!row || row.status !== action.expected_status) {
    await deps.store.transactions.markDueActionDone(action.id);
    return 1;
  }
  const found = await deps.connectors.forGatewayId(deps.store, row.gateway_id);
  if (!found) {
    deps.logger.error(
      { trace_id: row.trace_id, gateway_id: row.gateway_id },
      "processor lookup impossible: the gateway's connector does not run here; left to the operator",
    );
    await deps.store.transactions.markDueActionDone(action.id);
    return 1;
  }
  // A payment waiting on the processor's page whose connector completes it (PayPal's approved order): completed if the buyer approved.
  const settled =
    row.status === 'pending_async' && found.connector.completeReturn
      ? await completeAndSettle(deps, row, found.connector, 'lookup', {})
      : await lookUpAndSettle(deps, row, found.connector, 'report');
  if (settled.kind === 'settled') {
    await deps.store.transactions.markDueActionDone(action.id);
    return 1;
  }
  const schedule = deps.config.schedules;
  if (settled.kind === 'not_found' && now_ms - row.created_at_ms >= schedule.stuck_processing_seconds * 1000) {
    // Long enough that the request would have reached the processor if it ever was going to.
    await finish(deps, row, notAtProcessor(found.connector, false), found.connector, { store_answer: row.answer_json === null });
    await deps.store.transactions.markDueActionDone(action.id);
    return 1;
  }
  if (now_ms - row.created_at_ms >= schedule.processor_lookup_max_age_seconds * 1000) {
    deps.logger.error(
      { trace_id: row.trace_id, status: row.status, lookup: settled.kind },
      'processor lookups gave no final answer within PAYGATE_PROCESSOR_LOOKUP_MAX_AGE_SECONDS; left to the operator',
    );
    await deps.store.transactions.markDueActionDone(action.id);
    return 1;
  }
  if (settled.kind === 'unavailable')
    deps.logger.warn({ trace_id: row.trace_id, reason: settled.reason }, 'processor lookup failed; asking again later');
  const waits = schedule.processor_lookup_seconds;
  await deps.store.transactions.deferDueAction(action.id, now_ms + waits[Math.min(action.attempts, waits.length - 1)]! * 1000);
  return 0;
}

/**
 * Transactions whose process stopped during the processor call (older than
 * stuck_processing_seconds with no answer recorded): the money may or may not have moved, so the
 * processor is asked (outside any database transaction) and its answer applied like a live one,
 * through finish's compare-and-set, so a late answer of a process still alive and this one
 * cannot both apply.
 * - A sale or refund still `pending` without an answer: a processor that has no record of it
 *   never got it, and it ends as error; its answer is stored for replays either way.
 * - A released payout `in progress` without a processor reference (operations/payout-review.ts):
 *   its request was answered long ago (requested), so its stored answer stays; one the processor
 *   does not know, or that cannot be asked, stays `in progress` for the operator.
 * A processor that cannot be asked now is asked again on the next pass after the wait.
 */
async function settleInterrupted(deps: DueWorkDeps, ask_later: AskLater, older_than_ms: number, batch: number): Promise<number> {
  const rows: TransactionRow[] = [
    ...(await deps.store.transactions.findStuck(older_than_ms, batch)),
    ...(await deps.store.transactions.findInterruptedPayouts(older_than_ms, batch)),
  ];
  let settled = 0;
  for (const row of rows) {
    if (!ask_later.due(row.trace_id, deps.clock.now_ms())) continue;
    const payout = row.transaction_type === 'payout';
    const found = await deps.connectors.forGatewayId(deps.store, row.gateway_id);
    if (!found) {
      if (payout) {
        deps.logger.warn(
          { trace_id: row.trace_id },
          'payout interrupted during its processor call, and its connector does not run here; left in progress for the operator',
        );
        continue;
      }
      // Its processor cannot be asked here at all (a sandbox transaction on a live instance).
      await finish(
        deps,
        row,
        {
          kind: 'error',
          psp_transaction_id: null,
          error_code: '1',
          error_details: 'Processing interrupted before the processor answered; reconcile with the processor',
        },
        {},
      );
      settled += 1;
      continue;
    }
    const connector = found.connector;
    const lookup = await lookUpAndSettle(deps, row, connector, 'apply');
    if (lookup.kind === 'settled' || lookup.kind === 'pending') {
      settled += 1;
    } else if (lookup.kind === 'not_found' && !payout) {
      await finish(deps, row, notAtProcessor(connector, true), connector);
      settled += 1;
    } else if (lookup.kind === 'not_found') {
      deps.logger.warn(
        { trace_id: row.trace_id },
        'payout interrupted during its processor call and unknown to the processor; left in progress for the operator',
      );
      ask_later.wait(row.trace_id, deps.clock.now_ms(), deps.config.schedules.processor_lookup_seconds.at(-1)! * 1000);
    } else {
      deps.logger.warn(
        { trace_id: row.trace_id, reason: lookup.reason },
        'interrupted transaction: its processor could not be asked; asking again later',
      );
      ask_later.wait(row.trace_id, deps.clock.now_ms(), deps.config.schedules.processor_lookup_seconds[0]! * 1000);
    }
  }
  return settled;
}

/**
 * Interrupted transactions whose processor could not settle them, and when this instance asks
 * again: without it an unreachable processor would be asked on every pass. Bounded.
 */
export class AskLater {
  private readonly next_ms = new Map<number, number>();
  private static readonly MAX_ENTRIES = 10_000;

  due(trace_id: number, now_ms: number): boolean {
    const at = this.next_ms.get(trace_id);
    if (at !== undefined && at > now_ms) return false;
    this.next_ms.delete(trace_id);
    return true;
  }

  wait(trace_id: number, now_ms: number, wait_ms: number): void {
    if (this.next_ms.size >= AskLater.MAX_ENTRIES) this.next_ms.delete(this.next_ms.keys().next().value!);
    this.next_ms.set(trace_id, now_ms + wait_ms);
  }
}

export interface Worker {
  stop(): Promise<void>;
}

/** Polls until stopped; a failed pass is logged and retried on the next tick. */
export function startDueWork(options: DueWorkOptions): Worker {
  options = { ask_later: new AskLater(), ...options };
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | null = null;
  const tick = () => {
    running = runDueWorkOnce(options)
      .then(
        () => undefined,
        (error: unknown) => options.deps.logger.error({ err: error }, 'due work pass failed'),
      )
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
