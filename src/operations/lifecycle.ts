// The life of every money-moving request, shared by sales, refunds and payouts:
//   1. reserve: one database transaction inserts the row as `pending` under its idempotency key
//      (or finds the key taken: replay, duplicate, or wait for the first request to finish);
//   2. ask the processor, outside any database transaction;
//   3. finish: one database transaction applies the result through the state machine, stores
//      the answer for replays, schedules any later result as due work, and records the
//      notification (a final answer that is one write is one atomic store call instead). Only
//      then is the answer sent, so a status-0 answer is always committed.
//   (Step 0, the request's row, is operations/request-row.ts; step 1 and the answer a replay repeats
//   are operations/reservation.ts. Both are re-exported here, so every operation imports the life
//   of a payment from this one module.)
import { createHash, randomBytes } from 'node:crypto';
import type { TransactionRow } from '../domain/transaction-record.js';
import { cardTokenShown, statusForResult, type TransactionStatus } from '../domain/transaction-state.js';
import { changeStatus, statusChangeIsOneWrite } from '../transitions/transaction.js';
import type { Config } from '../config.js';
import type { Connector, ProcessorResult } from '../connectors/connector.js';
import type { NewTransactionRow } from '../store/schema.js';
import type { UnitOfWork, TransactionPatch } from '../store/store.js';
import type { OperationDeps } from './deps.js';
import { type TransactionAnswer, transactionAnswer } from './reservation.js';

export { newTransactionRow, type RequestFields, requestFingerprint, requestRow, type TransactionBasics } from './request-row.js';
export {
  answerForExisting,
  type Reservation,
  reserve,
  type ReserveOptions,
  type ReserveResult,
  type TransactionAnswer,
  transactionAnswer,
} from './reservation.js';

export function challengeTokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export interface FinishOptions {
  /**
   * false when the processor was asked after the request was answered (an operator released a
   * held payout, a lookup after a lost answer): the stored answer stays the one the request got,
   * which is what a replay repeats.
   */
  readonly store_answer?: boolean;
  /**
   * Keeps the card for later charges when the result can still end approved (approved, pending,
   * challenge, redirect, unknown): runs inside the finishing transaction and returns the
   * card_token to store. A card whose sale is refused at once is never kept (decisions.md §9).
   */
  readonly vault?: (tx: UnitOfWork) => Promise<string>;
}

/** The kind of page a `challenge` result sends the customer to: a card's 3-D Secure, or the e-wallet (wallet deposits, payouts). */
function challengeKind(row: TransactionRow): 'card' | 'wallet' {
  return row.payment_method === 'card' && row.transaction_type !== 'payout' ? 'card' : 'wallet';
}

/** What the merchant reads while the gateway asks the processor about an outcome it did not get. */
export const AWAITING_PROCESSOR = "Awaiting the processor's answer; the final status will be notified";

/**
 * Applies the processor's result to the row (reserved `pending`, or a released payout
 * `in progress`); returns the answer, stored for replays unless options say otherwise.
 * - approved, rejected, error: the status changes through the state machine.
 * - challenge (the gateway's own page) and redirect (the processor's page): pending_async with
 *   the page's redirect_url; a challenge's time-out, or a lookup of a redirect, is kept as due work.
 * - pending and unknown change no status: a later result the connector already knows is kept as
 *   due work, and otherwise the processor is asked again later (a processor_lookup), unless its
 *   webhook settles the transaction first.
 */
export async function finish(
  deps: Pick<OperationDeps, 'store' | 'clock' | 'config'>,
  row: TransactionRow,
  result: ProcessorResult,
  connector: Pick<Connector, 'challengeUrl'>,
  options: FinishOptions = {},
): Promise<TransactionAnswer> {
  const now_ms = deps.clock.now_ms();
  const store_answer = options.store_answer !== false;
  /**
   * The answer of the row once `patch` (and the new status) applies, added to the patch as
   * answer_json: the stored answer is written by the same UPDATE as the change it describes.
   */
  const answering = (status: TransactionStatus, patch: TransactionPatch): TransactionAnswer => {
    const answer = transactionAnswer({ ...row, ...patch, status } as TransactionRow);
    if (store_answer) patch.answer_json = JSON.stringify(answer);
    return answer;
  };
  // A final answer whose status change is one write (no refund released, no cashier order moved,
  // no due work) needs no transaction of its own: the change, its status row and its notification
  // are one atomic store call, and the card, when kept, is vaulted just before it (a vaulted card
  // with no approved sale beside it is harmless: the same card is kept either way). On PostgreSQL
  // that saves the BEGIN and the COMMIT, two of a sale's round trips (issue 29, item 2).
  const final = result.kind === 'approved' || result.kind === 'rejected' || result.kind === 'error' ? result : null;
  if (final && oneWriteFinal(row, final)) {
    const base: TransactionPatch = {
      psp_transaction_id: final.psp_transaction_id,
      error_code: final.error_code,
      error_details: final.error_details,
    };
    if (options.vault && final.kind === 'approved') base.card_token = await options.vault(deps.store);
    return finalChange(deps.store, row, final, base, answering, now_ms, () =>
      deps.store.transaction((tx) =>
        answerOfCurrent(tx, row.trace_id, statusForResult(row.transaction_type, final.kind), base, store_answer),
      ),
    );
  }
  return deps.store.transaction(async (tx) => {
    const base: TransactionPatch =
      result.kind === 'unknown'
        ? { psp_transaction_id: result.psp_transaction_id ?? row.psp_transaction_id, error_code: '0', error_details: AWAITING_PROCESSOR }
        : { psp_transaction_id: result.psp_transaction_id, error_code: result.error_code, error_details: result.error_details };
    if (options.vault && result.kind !== 'rejected' && result.kind !== 'error') {
      base.card_token = await options.vault(tx);
    }
    if (result.kind === 'pending' || result.kind === 'unknown') {
      // Still pending: no status change, but the answer and what happens next are recorded.
      const patch: TransactionPatch = { ...base, updated_at_ms: now_ms };
      const answer = answering(row.status, patch);
      if (!(await tx.transactions.updateIfStatus(row.trace_id, row.status, patch))) {
        return answerOfCurrent(tx, row.trace_id, row.status, base, store_answer);
      }
      if (result.kind === 'pending' && result.later) {
        await tx.transactions.insertDueAction({
          trace_id: row.trace_id,
          kind: 'processor_result',
          due_at_ms: now_ms + result.later.after_ms,
          expected_status: row.status,
          to_status: statusForResult(row.transaction_type, result.later.to),
          error_code: result.later.error_code,
          error_details: result.later.error_details,
        });
      } else {
        const after_ms = result.kind === 'pending' ? result.recheck_after_ms : undefined;
        await scheduleLookup(tx, row.trace_id, row.status, now_ms + (after_ms ?? firstLookupDelayMs(deps.config)));
      }
      return answer;
    }
    if (result.kind === 'challenge') {
      if (!connector.challengeUrl) throw new Error('a connector answered a challenge without pages of its own');
      const token = randomBytes(24).toString('base64url');
      const patch: TransactionPatch = {
        ...base,
        redirect_url: connector.challengeUrl(token, challengeKind(row)),
        challenge_token_hash: challengeTokenHash(token),
        challenge_expires_at_ms: now_ms + result.later.after_ms,
        challenge_mode: result.mode,
      };
      const answer = answering('pending_async', patch);
      const changed = await changeStatus(tx, row, { to: 'pending_async', reason: 'customer sent to a challenge page', patch }, now_ms);
      if (changed.kind !== 'changed') return answerOfCurrent(tx, row.trace_id, 'pending_async', base, store_answer);
      await tx.transactions.insertDueAction({
        trace_id: row.trace_id,
        kind: 'challenge_timeout',
        due_at_ms: now_ms + result.later.after_ms,
        expected_status: 'pending_async',
        to_status: statusForResult(row.transaction_type, result.later.to),
        error_code: result.later.error_code,
        error_details: result.later.error_details,
      });
      return answer;
    }
    if (result.kind === 'redirect') {
      const patch: TransactionPatch = { ...base, redirect_url: result.redirect_url };
      const answer = answering('pending_async', patch);
      const changed = await changeStatus(
        tx,
        row,
        { to: 'pending_async', reason: "customer sent to the processor's authentication page", patch },
        now_ms,
      );
      if (changed.kind !== 'changed') return answerOfCurrent(tx, row.trace_id, 'pending_async', base, store_answer);
      await scheduleLookup(tx, row.trace_id, 'pending_async', now_ms + result.recheck_after_ms);
      return answer;
    }
    return finalChange(tx, row, result, base, answering, now_ms, () =>
      answerOfCurrent(tx, row.trace_id, statusForResult(row.transaction_type, result.kind), base, store_answer),
    );
  });
}

type FinalResult = Extract<ProcessorResult, { kind: 'approved' | 'rejected' | 'error' }>;

/** A final result whose status change writes only the row, its status row and its notification. */
function oneWriteFinal(row: TransactionRow, result: FinalResult): boolean {
  if (result.kind === 'approved' && result.chargeback_after_ms !== undefined) return false;
  return statusChangeIsOneWrite(row, statusForResult(row.transaction_type, result.kind));
}

/**
 * approved, rejected, error: the status changes through the state machine, on `uow` (finish's
 * transaction, or the store itself when the change is one write: oneWriteFinal). `current` gives
 * the answer when someone else changed the row first.
 */
async function finalChange(
  uow: UnitOfWork,
  row: TransactionRow,
  result: FinalResult,
  base: TransactionPatch,
  answering: (status: TransactionStatus, patch: TransactionPatch) => TransactionAnswer,
  now_ms: number,
  current: () => Promise<TransactionAnswer>,
): Promise<TransactionAnswer> {
  const patch: TransactionPatch = { ...base };
  if (result.kind === 'approved') {
    patch.charge_amount_minor = result.charge_amount_minor;
    patch.charge_currency = result.charge_currency;
  }
  const to = statusForResult(row.transaction_type, result.kind);
  const answer = answering(to, patch);
  const changed = await changeStatus(uow, row, { to, reason: 'processor answered', patch }, now_ms);
  if (changed.kind !== 'changed') return current();
  if (result.kind === 'approved' && result.chargeback_after_ms !== undefined) {
    // The sandbox's simulated issuer disputes this payment later (CVV 259, decisions §16).
    await uow.transactions.insertDueAction({
      trace_id: row.trace_id,
      kind: 'sandbox_chargeback',
      due_at_ms: now_ms + result.chargeback_after_ms,
      // An authorization's waits for its capture (workers/due-work.ts).
      expected_status: to,
      to_status: 'chargeback',
      error_code: null,
      error_details: null,
    });
  }
  return answer;
}

/** The first lookup after an outcome the gateway did not get (PAYGATE_PROCESSOR_LOOKUP_SECONDS). */
function firstLookupDelayMs(config: Config): number {
  return config.schedules.processor_lookup_seconds[0]! * 1000;
}

/**
 * Asks the processor again at due_at_ms what became of the transaction, as long as it is still
 * in `expected_status` then (workers/due-work.ts). A webhook that settles it first makes the
 * lookup find nothing to do.
 */
export async function scheduleLookup(
  tx: UnitOfWork,
  trace_id: number,
  expected_status: TransactionStatus,
  due_at_ms: number,
): Promise<void> {
  await tx.transactions.insertDueAction({
    trace_id,
    kind: 'processor_lookup',
    due_at_ms,
    expected_status,
    to_status: '',
    error_code: null,
    error_details: null,
  });
}

/** A result the cascade may try elsewhere (domain/routing.ts cascadable): a soft decline or an error. */
export type CascadableResult = Extract<ProcessorResult, { kind: 'rejected' | 'error' }>;

export type CascadeStep =
  /** The next attempt, reserved `pending`: ask its gateway's connector. */
  | { readonly kind: 'attempt'; readonly row: TransactionRow }
  /** The failed attempt had been settled meanwhile (its processor's webhook): no cascade; this is the answer. */
  | { readonly kind: 'settled'; readonly answer: TransactionAnswer };

/**
 * A failed attempt that the cascade tries on another gateway, in one database transaction: the
 * attempt ends as the processor said, without a notification (the merchant is notified of the
 * attempt that ends the order) and without an answer of its own (a replay of the merchant's
 * request follows the cascade to its last attempt: answerForExisting), and the next attempt is
 * reserved. A crash after it leaves the next attempt pending without an answer: the
 * stuck-transaction sweep settles it and the merchant is notified of it.
 */
export async function cascadeTo(
  deps: Pick<OperationDeps, 'store' | 'clock'>,
  row: TransactionRow,
  result: CascadableResult,
  next: NewTransactionRow,
): Promise<CascadeStep> {
  const now_ms = deps.clock.now_ms();
  return deps.store.transaction(async (tx) => {
    const patch: TransactionPatch = {
      psp_transaction_id: result.psp_transaction_id,
      error_code: result.error_code,
      error_details: result.error_details,
    };
    const changed = await changeStatus(
      tx,
      row,
      {
        to: statusForResult(row.transaction_type, result.kind),
        reason: `processor answered; tried again on gateway ${next.gateway_id} (cascade)`,
        patch,
        notify: false,
      },
      now_ms,
    );
    if (changed.kind !== 'changed')
      return { kind: 'settled', answer: await answerOfCurrent(tx, row.trace_id, row.status, {}, true) } as const;
    const reserved = await tx.transactions.reserveWithChange(
      next,
      `cascade level ${String(next.cascade_level)} of transaction ${String(next.cascade_root)}`,
    );
    if (!reserved) throw new Error(`cascade attempt of ${row.trace_id}: its internal order_id was taken`);
    return { kind: 'attempt', row: reserved } as const;
  });
}

/**
 * A payout whose gateway holds payouts for approval (gateways.hold_payouts): the reserved row
 * moves to `requested` before any processor is asked, and that is the answer stored for replays.
 */
export async function holdForApproval(deps: OperationDeps, row: TransactionRow): Promise<TransactionAnswer> {
  const now_ms = deps.clock.now_ms();
  return deps.store.transaction(async (tx) => {
    const held = await mustChange(
      tx,
      row,
      {
        to: 'requested',
        reason: 'held for operator approval (gateway holds payouts)',
      },
      now_ms,
    );
    const answer = transactionAnswer(held);
    await tx.transactions.update(row.trace_id, { answer_json: JSON.stringify(answer) });
    return answer;
  });
}

/**
 * The row was changed by someone else while the processor was asked (the processor's webhook
 * arriving before its answer, or the stuck-transaction sweep after a very slow call): the request
 * gets what the row now says, not a crash. What only this request knows is added when the row
 * lacks it: the card's token (the card was vaulted in this transaction) once approved, the
 * processor's id, and the stored answer for replays.
 */
async function answerOfCurrent(
  tx: UnitOfWork,
  trace_id: number,
  outcome: string,
  known: TransactionPatch,
  store_answer: boolean,
): Promise<TransactionAnswer> {
  const current = await tx.transactions.get(trace_id);
  if (!current) throw new Error(`transaction ${trace_id} vanished`);
  const patch: TransactionPatch = {};
  // Only when the row reached the outcome this request got: a late answer never dresses up a
  // transaction that ended otherwise.
  if (current.status === outcome) {
    if (known.card_token && current.card_token === null && cardTokenShown(current)) patch.card_token = known.card_token;
    if (known.psp_transaction_id && current.psp_transaction_id === null) patch.psp_transaction_id = known.psp_transaction_id;
  }
  if (!store_answer || (Object.keys(patch).length === 0 && current.answer_json !== null)) {
    return current.answer_json ? (JSON.parse(current.answer_json) as TransactionAnswer) : transactionAnswer(current);
  }
  const answer = transactionAnswer({ ...current, ...patch });
  patch.answer_json = JSON.stringify(answer);
  await tx.transactions.updateIfStatus(trace_id, current.status, patch);
  return answer;
}

async function mustChange(
  tx: UnitOfWork,
  row: TransactionRow,
  change: Parameters<typeof changeStatus>[2],
  now_ms: number,
): Promise<TransactionRow> {
  const outcome = await changeStatus(tx, row, change, now_ms);
  if (outcome.kind !== 'changed') {
    throw new Error(`transaction ${row.trace_id}: ${row.status} -> ${change.to} refused (${outcome.kind})`);
  }
  return outcome.row;
}
