// One renewal of one subscription the billing worker has claimed: a merchant-initiated sale
// through the same path as any sale (operations/sale.ts: idempotency, processor, state
// machine, stored, notified, refundable), then the subscription's bookkeeping.
//
// No doubled charge, whatever happens: the sale's order_id is derived from
// (subscription_id, cycle, attempt), so its idempotency key (merchant_id, sale, order_id)
// admits one sale per attempt. If two instances, or one instance after a crash between the
// charge and the bookkeeping, work on the same attempt, the second finds the first's sale
// and books its result instead of charging again; the bookkeeping itself is a
// compare-and-set on the subscription's version, so it happens once. A next attempt of the
// same cycle only exists after the previous attempt's failure was booked, so a cycle has at
// most one approved sale.
//
// Attempt numbers of a cycle keep counting across a reactivation (POST .../activate after the
// retries ran out): a series of tries is retries_number + 1 attempts long, and activation starts
// the next series (operations/subscriptions.ts), so an order_id is never used twice and
// `attempt % (retries_number + 1)` is the position within the current series.
import { NO_CUSTOMER } from '../connectors/connector.js';
import { CardData, parseExpiry } from '../domain/cards.js';
import { nextChargeAfter, retryDueAt, type BillingCycle } from '../domain/billing-calendar.js';
import type { Merchant } from '../domain/merchants.js';
import { FINAL_STATUSES } from '../domain/transaction-state.js';
import type { SubscriptionChange } from '../domain/subscription-state.js';
import { applySubscriptionEvent } from '../transitions/subscription.js';
import type { SubscriptionRow } from '../domain/subscription-record.js';
import type { TransactionRow } from '../domain/transaction-record.js';
import { openVaultedPan } from './card-vault.js';
import type { OperationDeps } from './deps.js';
import { requestFingerprint } from './lifecycle.js';
import { processSale } from './sale.js';
import { mitGatewayFor } from './subscription-plans.js';

/** The sale's order_id for attempt `attempt` (0 first) of charge number `cycle` (1 first). Up to 32 + 14 characters. */
export function renewalOrderId(subscription_id: string, cycle: number, attempt: number): string {
  return `${subscription_id}-c${cycle}-a${attempt}`;
}

/** How long to wait before looking again at a charge whose processor has not answered yet. */
export const PENDING_RECHECK_MS = 60_000;

export type RenewalOutcome =
  | { readonly kind: 'renewed'; readonly trace_id: number; readonly cycle: number }
  | { readonly kind: 'failed'; readonly trace_id: number | null; readonly cycle: number; readonly final: boolean }
  | { readonly kind: 'expired' }
  /** The charge is still in flight (pending at the processor, or another instance is on it). */
  | { readonly kind: 'waiting' }
  /** Someone else booked it first, or it was cancelled meanwhile: nothing done. */
  | { readonly kind: 'superseded' }
  /** Its merchant was disabled after the claim: nothing charged, nothing booked (docs/subscriptions.md §5.6). */
  | { readonly kind: 'held' };

type ChargeResult =
  | { readonly kind: 'approved'; readonly trace_id: number }
  | { readonly kind: 'failed'; readonly trace_id: number | null; readonly reason: string }
  | { readonly kind: 'waiting' }
  | { readonly kind: 'held' };

function resultOfRow(row: TransactionRow): ChargeResult {
  if (row.status === 'approved') return { kind: 'approved', trace_id: row.trace_id };
  if (!FINAL_STATUSES.has(row.status)) return { kind: 'waiting' };
  return { kind: 'failed', trace_id: row.trace_id, reason: row.error_details ?? `transaction ${row.status}` };
}

/** Charges (or finds the charge of) the subscription's current attempt. */
async function charge(
  deps: OperationDeps,
  sub: SubscriptionRow,
  order_id: string,
  cycle: number,
  findMerchant: MerchantLookup,
): Promise<ChargeResult> {
  const existing = await deps.store.transactions.findByKey(sub.merchant_id, 'sale', order_id);
  if (existing) return resultOfRow(existing);
  const merchant = await findMerchant(sub.merchant_id);
  if (!merchant) return { kind: 'failed', trace_id: null, reason: 'merchant not found' };
  // The claim skips a disabled merchant's subscriptions; this catches one disabled since. A
  // charge already made above is still booked: only new money movement is held.
  if (merchant.disabled) return { kind: 'held' };
  const card = await deps.store.cards.get(sub.merchant_id, sub.card_token);
  const expiry = card ? parseExpiry(card.card_exp) : null;
  if (!card || !expiry) return { kind: 'failed', trace_id: null, reason: 'card_token not found in the vault' };
  const gateway = mitGatewayFor(deps, merchant, sub.currency);
  if (!gateway) return { kind: 'failed', trace_id: null, reason: `no gateway with merchant-initiated transactions takes ${sub.currency}` };
  const outcome = await processSale(deps, {
    merchant,
    identity: { kind: 'application_key', value: sub.application_key },
    api_version: '1.3',
    order_id,
    amount_minor: sub.amount_minor,
    currency: sub.currency,
    // A stored card: no CVV, ever (decisions.md §9).
    card: new CardData(openVaultedPan(deps.sealer, sub.merchant_id, card.pan_sealed), expiry, null),
    // A renewal has no customer at hand; the processor knows the card from the first charge.
    customer: NO_CUSTOMER,
    pin: card.pin,
    gateway: gateway.gateway_id,
    return_url: null,
    notification_url: sub.notification_url,
    // Deterministic: a second instance on the same attempt replays instead of being refused as a duplicate.
    request_fingerprint: requestFingerprint(deps, {
      subscription_id: sub.subscription_id,
      cycle,
      order_id,
      amount: sub.amount_minor,
      currency: sub.currency,
      card_token: sub.card_token,
    }),
    variables: {},
    initiated_by: 'merchant',
    mit_retry: attemptInSeries(sub) > 0,
  });
  switch (outcome.kind) {
    case 'processed': {
      const status = outcome.answer.transaction_status;
      const trace_id = Number(outcome.answer.trace_id);
      if (status === 'approved') return { kind: 'approved', trace_id };
      if (!FINAL_STATUSES.has(String(status))) return { kind: 'waiting' };
      return { kind: 'failed', trace_id, reason: String(outcome.answer.error_details ?? `transaction ${String(status)}`) };
    }
    case 'in_progress':
      return { kind: 'waiting' };
    case 'duplicate_order': {
      const holder = await deps.store.transactions.findByKey(sub.merchant_id, 'sale', order_id);
      return holder ? resultOfRow(holder) : { kind: 'waiting' };
    }
    case 'no_gateway':
      return { kind: 'failed', trace_id: null, reason: `no usable gateway takes ${sub.currency} (${outcome.refusal.kind})` };
  }
}

/** Books a change if the subscription is still as the worker claimed it (same version). */
async function book(deps: OperationDeps, claimed: SubscriptionRow, change: SubscriptionChange): Promise<boolean> {
  const now_ms = deps.clock.now_ms();
  return deps.store.transaction(async (tx) => {
    const row = await tx.subscriptions.lock(claimed.subscription_id);
    if (!row || row.version !== claimed.version) return false;
    const outcome = await applySubscriptionEvent(tx, row, change, now_ms);
    return outcome.kind === 'changed';
  });
}

const RELEASE = { lease_until_ms: null, lease_owner: null } as const;

/** 0 for the first try of a cycle (or of a reactivated series), 1… for its retries. */
export function attemptInSeries(sub: Pick<SubscriptionRow, 'attempt' | 'retries_number'>): number {
  return sub.attempt % (sub.retries_number + 1);
}

/** The attempt a reactivated subscription starts from: the start of the next series, so no order_id is reused. */
export function nextSeriesAttempt(sub: Pick<SubscriptionRow, 'attempt' | 'retries_number'>): number {
  const series = sub.retries_number + 1;
  return Math.ceil(sub.attempt / series) * series;
}

/** How the renewal finds the merchant; the billing worker shares one lookup per pass. */
export type MerchantLookup = (merchant_id: string) => Promise<Merchant | null>;

export async function renewSubscription(
  deps: OperationDeps,
  claimed: SubscriptionRow,
  owner: string,
  findMerchant: MerchantLookup = (id) => deps.merchants.find(id),
): Promise<RenewalOutcome> {
  const sub = claimed;
  if (sub.expiration_cycles !== null && sub.expiration_cycles > 0 && sub.cycles_charged >= sub.expiration_cycles) {
    const booked = await book(deps, sub, {
      event: 'subscription.expired',
      reason: `${sub.cycles_charged} of ${sub.expiration_cycles} charges made and the last period ended (${owner})`,
      patch: RELEASE,
    });
    return booked ? { kind: 'expired' } : { kind: 'superseded' };
  }
  const cycle = sub.cycles_charged + 1;
  const order_id = renewalOrderId(sub.subscription_id, cycle, sub.attempt);
  const result = await charge(deps, sub, order_id, cycle, findMerchant);
  if (result.kind === 'waiting') {
    await deps.store.subscriptions.setLease(sub.subscription_id, owner, deps.wall_clock.now_ms() + PENDING_RECHECK_MS);
    return { kind: 'waiting' };
  }
  if (result.kind === 'held') {
    // Given back unchanged: the claim passes it over until the merchant is enabled again.
    await deps.store.subscriptions.setLease(sub.subscription_id, owner, null);
    return { kind: 'held' };
  }
  const now_ms = deps.clock.now_ms();
  if (result.kind === 'approved') {
    // The next charge is at the first anchor date after this one, never in the past: a charge
    // that recovered after its retries outlasted the cycle (or was made late for any reason)
    // does not pull the next one forward into a second charge at once.
    const booked = await book(deps, sub, {
      event: 'subscription.renewed',
      reason: `charge ${cycle} approved (${owner})`,
      patch: {
        ...RELEASE,
        cycles_charged: cycle,
        attempt: 0,
        last_trace_id: result.trace_id,
        last_error: null,
        next_charge_at_ms: nextChargeAfter(sub.anchor_at_ms, sub.billing_cycle as BillingCycle, now_ms),
      },
      details: { trace_id: result.trace_id, cycle },
    });
    return booked ? { kind: 'renewed', trace_id: result.trace_id, cycle } : { kind: 'superseded' };
  }
  const in_series = attemptInSeries(sub);
  const retry_left = in_series < sub.retries_number;
  const booked = await book(
    deps,
    sub,
    retry_left
      ? {
          event: 'subscription.payment_failed',
          reason: `charge ${cycle} attempt ${sub.attempt + 1} failed: ${result.reason}; retry ${in_series + 1} of ${sub.retries_number} scheduled (${owner})`,
          patch: {
            ...RELEASE,
            attempt: sub.attempt + 1,
            last_trace_id: result.trace_id,
            last_error: result.reason,
            next_charge_at_ms: retryDueAt(now_ms, sub.retries_delay_days),
          },
          details: { trace_id: result.trace_id, cycle, error_details: result.reason },
        }
      : {
          event: 'subscription.deactivated',
          reason: `charge ${cycle} attempt ${sub.attempt + 1} failed after ${sub.retries_number} retries: ${result.reason} (${owner})`,
          patch: { ...RELEASE, attempt: sub.attempt + 1, last_trace_id: result.trace_id, last_error: result.reason },
          details: { trace_id: result.trace_id, cycle, error_details: result.reason },
        },
  );
  return booked ? { kind: 'failed', trace_id: result.trace_id, cycle, final: !retry_left } : { kind: 'superseded' };
}
