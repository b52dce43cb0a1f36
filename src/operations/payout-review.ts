// The operator's actions on payouts (spec §3.1 payout states; docs/payouts.md). Each action is
// one state-machine transition (recorded with its notification by changeStatus) from the
// statuses the action accepts; anything else is refused with the payout's current status.
//
//   approve  requested            → authorized, then (unless told not to) submit
//   submit   authorized           → in progress, the processor is asked, then its result:
//                                   approved / rejected / error, or stays in progress until the
//                                   processor reports (due work)
//   cancel   requested, authorized → cancelled
//   reject   requested, authorized → rejected
//   reverse  approved             → reversed (the PSP returned the funds)
//
// `in progress` is written before the processor is asked, in its own transaction: it is the
// claim that keeps a concurrent cancel from changing a payout whose money may be moving.
import { CardData, parseExpiry } from '../domain/cards.js';
import type { PayoutStatus } from '../domain/transaction-state.js';
import { changeStatus } from '../transitions/transaction.js';
import { NO_CUSTOMER, type ProcessorResult } from '../connectors/connector.js';
import type { TransactionRow } from '../domain/transaction-record.js';
import type { TransactionPatch } from '../store/store.js';
import { openVaultedPan } from './card-vault.js';
import type { OperationDeps } from './deps.js';
import { finish } from './lifecycle.js';
import { openPayoutCustomer } from './payout.js';

export type ReviewAction = 'approve' | 'submit' | 'cancel' | 'reject' | 'reverse';

interface ActionRule {
  readonly from: readonly PayoutStatus[];
  readonly to: PayoutStatus;
  readonly reason: string;
}

export const REVIEW_ACTIONS: Readonly<Record<ReviewAction, ActionRule>> = {
  approve: { from: ['requested'], to: 'authorized', reason: 'approved by the operator' },
  submit: { from: ['authorized'], to: 'in progress', reason: 'sent to the processor by the operator' },
  cancel: { from: ['requested', 'authorized'], to: 'cancelled', reason: 'cancelled by the operator' },
  reject: { from: ['requested', 'authorized'], to: 'rejected', reason: 'rejected by the operator' },
  reverse: { from: ['approved'], to: 'reversed', reason: 'reversed at the PSP, recorded by the operator' },
};

export type ReviewOutcome =
  | { readonly kind: 'changed'; readonly previous_status: string; readonly row: TransactionRow }
  | { readonly kind: 'not_found' }
  /** The action does not apply to the payout's current status (nothing changed). */
  | { readonly kind: 'refused'; readonly status: string; readonly accepted_from: readonly string[] }
  /** The gateway's processor is not loaded on this instance (a sandbox gateway on a live one). */
  | { readonly kind: 'processor_unavailable'; readonly status: string };

export interface ReviewOptions {
  /** approve only: false stops at `authorized` (manual processing); submit later. Default true. */
  readonly submit?: boolean | undefined;
  /** Free text kept in the status history (and, for cancel and reject, in error_details). */
  readonly note?: string | undefined;
}

export async function findPayout(deps: OperationDeps, trace_id: number): Promise<TransactionRow | null> {
  const row = await deps.store.transactions.get(trace_id);
  return row && row.transaction_type === 'payout' ? row : null;
}

/**
 * One or more transitions in one database transaction under the row lock (approve and submit go
 * together, so nothing can slip in between); refused when the status is not one the first
 * action accepts.
 */
async function transition(
  deps: OperationDeps,
  trace_id: number,
  actions: readonly ReviewAction[],
  note: string | undefined,
): Promise<ReviewOutcome> {
  const first = REVIEW_ACTIONS[actions[0]!];
  const now_ms = deps.clock.now_ms();
  return deps.store.transaction(async (tx) => {
    const locked = await tx.transactions.lock(trace_id);
    if (!locked || locked.transaction_type !== 'payout') return { kind: 'not_found' } as const;
    if (!first.from.includes(locked.status as PayoutStatus))
      return { kind: 'refused', status: locked.status, accepted_from: first.from } as const;
    let row = locked;
    for (const action of actions) {
      const rule = REVIEW_ACTIONS[action];
      const patch: TransactionPatch = {};
      if (action === 'cancel' || action === 'reject') {
        patch.error_code = '1';
        patch.error_details = `${action === 'cancel' ? 'Cancelled' : 'Rejected'} by the operator${note ? `: ${note}` : ''}`;
      }
      const outcome = await changeStatus(tx, row, { to: rule.to, reason: note ? `${rule.reason}: ${note}` : rule.reason, patch }, now_ms);
      // The table in transaction-state.ts allows every rule above and the row is locked, so this
      // cannot happen; if it did, throwing rolls back the steps already taken.
      if (outcome.kind !== 'changed') throw new Error(`payout ${trace_id}: ${row.status} -> ${rule.to} refused (${outcome.kind})`);
      row = outcome.row;
    }
    return { kind: 'changed', previous_status: locked.status, row } as const;
  });
}

export async function reviewPayout(
  deps: OperationDeps,
  trace_id: number,
  action: ReviewAction,
  options: ReviewOptions = {},
): Promise<ReviewOutcome> {
  if (action === 'submit' || (action === 'approve' && options.submit !== false)) {
    return submitPayout(deps, trace_id, action === 'approve' ? ['approve', 'submit'] : ['submit'], options.note);
  }
  return transition(deps, trace_id, [action], options.note);
}

/** (requested → authorized →) in progress, the claim; then the processor; then its result through finish. */
async function submitPayout(
  deps: OperationDeps,
  trace_id: number,
  steps: readonly ReviewAction[],
  note: string | undefined,
): Promise<ReviewOutcome> {
  const payout = await findPayout(deps, trace_id);
  if (!payout) return { kind: 'not_found' };
  // The payout's own gateway sends it, enabled or not: it was accepted while the gateway was.
  const found = await deps.connectors.forGatewayId(deps.store, payout.gateway_id);
  if (!found) return { kind: 'processor_unavailable', status: payout.status };
  const connector = found.connector;
  const claimed = await transition(deps, trace_id, steps, note);
  if (claimed.kind !== 'changed') return claimed;
  const row = claimed.row;
  const reference = row.cashier_order_id ?? row.order_id;
  let result: ProcessorResult;
  if (row.payment_method === 'card') {
    const card = await vaultedCard(deps, row);
    result =
      card && connector.cardPayout
        ? await connector.cardPayout({
            trace_id: row.trace_id,
            reference,
            amount_minor: row.amount_minor,
            currency: row.currency,
            card,
            customer: openPayoutCustomer(deps, row.customer_sealed) ?? NO_CUSTOMER,
          })
        : {
            kind: 'error',
            psp_transaction_id: null,
            error_code: '1',
            error_details: card ? 'This gateway makes no card payouts' : 'The held card could not be read from the vault',
          };
  } else if (connector.direct) {
    result = await connector.direct.payout({
      trace_id: row.trace_id,
      reference,
      amount_minor: row.amount_minor,
      currency: row.currency,
      method: row.payment_method,
      data: row.data_json ? (JSON.parse(row.data_json) as Record<string, string>) : {},
      customer_present: false,
    });
  } else {
    result = { kind: 'error', psp_transaction_id: null, error_code: '1', error_details: 'This gateway makes no direct payouts' };
  }
  result = withoutCustomer(result);
  // The request was answered long ago (requested); its stored answer stays what a replay repeats.
  await finish(deps, row, result, connector, { store_answer: false });
  const final_row = await deps.store.transactions.get(trace_id);
  return { kind: 'changed', previous_status: claimed.previous_status, row: final_row ?? row };
}

/** A released payout has no customer at hand to act on a page: a challenge answer is an error (processors are told customer_present false). */
export function withoutCustomer(result: ProcessorResult): ProcessorResult {
  return result.kind === 'challenge' || result.kind === 'redirect'
    ? {
        kind: 'error',
        psp_transaction_id: result.psp_transaction_id,
        error_code: '1',
        error_details: 'The processor asked for customer action on a released payout',
      }
    : result;
}

async function vaultedCard(deps: OperationDeps, row: TransactionRow): Promise<CardData | null> {
  if (!row.card_token || !row.card_exp) return null;
  const stored = await deps.store.cards.get(row.merchant_id, row.card_token);
  const expiry = parseExpiry(row.card_exp);
  if (!stored || !expiry) return null;
  return new CardData(openVaultedPan(deps.sealer, row.merchant_id, stored.pan_sealed), expiry, null);
}
