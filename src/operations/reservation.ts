// Step 1 of a payment's life (operations/lifecycle.ts): reserve inserts the row as `pending` under
// its idempotency key, or finds the key taken and answers as the first request did (replay), refuses
// other content (duplicate), or waits for it to finish; and the answer as the merchant sees it, which
// is what finish stores and a replay repeats. Apart from finish (which uses only the answer) to
// keep each file small; lifecycle.ts re-exports it all.
import type { TransactionRow } from '../domain/transaction-record.js';
import { cardTokenShown } from '../domain/transaction-state.js';
import type { NewTransactionRow } from '../store/schema.js';
import type { UnitOfWork } from '../store/store.js';
import type { OperationDeps } from './deps.js';

/** The fields of a process/direct answer (spec §2.2), without status, description, version, timestamp, signature. */
export type TransactionAnswer = Record<string, string | number | null>;

export type Reservation =
  | { readonly kind: 'reserved'; readonly row: TransactionRow }
  | { readonly kind: 'replay'; readonly answer: TransactionAnswer }
  | { readonly kind: 'duplicate_order' }
  | { readonly kind: 'in_progress' };

const WAIT_STEP_MS = 20;

/** What to do when the key is taken: same content replays (waiting if still in flight), other content is refused. */
export async function answerForExisting(
  deps: OperationDeps,
  existing: TransactionRow,
  fingerprint: string,
  /** 0 inside an open transaction, which must not wait: in_progress at once when there is no answer yet. */
  wait_ms: number = deps.config.limits.idempotency_wait_ms,
): Promise<Exclude<Reservation, { kind: 'reserved' }>> {
  if (existing.request_fingerprint !== fingerprint) return { kind: 'duplicate_order' };
  const deadline_ms = Date.now() + wait_ms;
  let answer = await storedAnswer(deps, existing);
  while (answer === null) {
    if (Date.now() >= deadline_ms) return { kind: 'in_progress' };
    await new Promise((resolve) => setTimeout(resolve, WAIT_STEP_MS));
    const row = await deps.store.transactions.get(existing.trace_id);
    if (!row) return { kind: 'in_progress' };
    answer = await storedAnswer(deps, row);
  }
  return { kind: 'replay', answer };
}

/**
 * The answer a request got, or null while it is still being processed. A request whose attempt
 * was tried again on another gateway (a cascade) got the answer of its last attempt.
 */
async function storedAnswer(deps: OperationDeps, row: TransactionRow): Promise<TransactionAnswer | null> {
  if (row.answer_json !== null) return JSON.parse(row.answer_json) as TransactionAnswer;
  if (row.status === 'pending' || row.cascade_root !== null) return null;
  const last = await deps.store.transactions.latestCascadeAttempt(row.trace_id);
  return last?.answer_json ? (JSON.parse(last.answer_json) as TransactionAnswer) : null;
}

export interface ReserveOptions {
  /**
   * Runs inside the reservation transaction before the insert: it may lock, check and write
   * (a refund reserves its amount, a sale vaults its card) and returns columns to add to the
   * row, or null to refuse. A refusal after a write must throw instead, so the write rolls back.
   */
  readonly prepare?: (tx: UnitOfWork) => Promise<Partial<NewTransactionRow> | null>;
  /**
   * false when the reservation runs inside an open transaction (an in-process sale,
   * operations/sale.ts): a twin still in flight is answered in_progress at once instead of waited for.
   */
  readonly wait_for_twin?: boolean;
}

export type ReserveResult = Reservation | { readonly kind: 'refused_by_guard' };

class KeyTakenDuringPrepare extends Error {}

/** The reason of every transaction's first status change ('' → pending). */
const RESERVED_REASON = 'request accepted';

export async function reserve(deps: OperationDeps, row: NewTransactionRow, options: ReserveOptions = {}): Promise<ReserveResult> {
  const { prepare } = options;
  const wait_ms = options.wait_for_twin === false ? 0 : undefined;
  if (!prepare) {
    // Nothing to check first: the row and its first status change in one atomic store call, which
    // answers the key's holder when the key was taken (one round trip on PostgreSQL, replay or not).
    const reserved = await deps.store.transactions.reserveOrHolder(row, RESERVED_REASON);
    if (reserved.kind === 'inserted') return { kind: 'reserved', row: reserved.row };
    if (!reserved.holder) throw new Error('idempotency key taken but no row found');
    return answerForExisting(deps, reserved.holder, row.request_fingerprint, wait_ms);
  }
  const existing = await deps.store.transactions.findByKey(row.merchant_id, row.transaction_type, row.order_id);
  if (existing) return answerForExisting(deps, existing, row.request_fingerprint, wait_ms);
  const outcome = await deps.store
    .transaction(async (tx) => {
      const prepared = await prepare(tx);
      if (prepared === null) return { kind: 'refused_by_guard' } as const;
      const inserted = await tx.transactions.reserveWithChange({ ...row, ...prepared }, RESERVED_REASON);
      // The key was taken by a twin that committed while we ran. Throwing rolls back what
      // prepare wrote (a refund reservation); the caller then replays the twin's answer.
      if (inserted === null) throw new KeyTakenDuringPrepare();
      return { kind: 'inserted', row: inserted } as const;
    })
    .catch((error: unknown) => {
      if (error instanceof KeyTakenDuringPrepare) return { kind: 'taken' } as const;
      throw error;
    });
  if (outcome.kind === 'refused_by_guard') return outcome;
  if (outcome.kind === 'taken') {
    const holder = await deps.store.transactions.findByKey(row.merchant_id, row.transaction_type, row.order_id);
    if (!holder) throw new Error('idempotency key taken but no row found');
    return answerForExisting(deps, holder, row.request_fingerprint, wait_ms);
  }
  // The row as inserted (RETURNING): nothing else can have changed it before this request goes on.
  return { kind: 'reserved', row: outcome.row };
}

/** The answer fields as the merchant sees them, from the stored row. */
export function transactionAnswer(row: TransactionRow): TransactionAnswer {
  const answer: TransactionAnswer = {
    trace_id: row.trace_id,
    transaction_id: row.psp_transaction_id ?? '',
    transaction_status: row.status,
    payment_processor: row.payment_processor,
    error_code: row.error_code,
    error_details: row.error_details,
  };
  // A cascade attempt says so (spec §6.2 is_cascade, cascade_level); a first attempt answers as always.
  if (row.cascade_level > 0) {
    answer.is_cascade = 1;
    answer.cascade_level = row.cascade_level;
  }
  // Card payouts (spec §4.1 variants D and E) answer no redirect_url at all.
  if (row.transaction_type !== 'payout' || row.payment_method !== 'card') {
    answer.redirect_url = row.status === 'pending_async' ? row.redirect_url : null;
  }
  if (row.transaction_type === 'payout' && row.payment_method !== 'card') answer.payment_method = row.payment_method;
  if (row.card_token && cardTokenShown(row)) answer.card_token = row.card_token;
  return answer;
}
