// The only place a subscription's status changes (spec §3.4: "Transitions of
// subscription_status: not shown", so the table below is ours, documented in
// docs/subscriptions.md). Every change, and every event that leaves the status as it is
// (a renewal, a failed charge with retries left), goes through applySubscriptionEvent: checked
// against the table, written with compare-and-set on the row's version (two racing changes
// cannot both win), recorded in subscription_changes, and its event notification written to
// the outbox, all inside the caller's database transaction: the notification exists if and
// only if the change committed.
//
//   from      | event                        | to        | when
//   ----------+------------------------------+-----------+-----------------------------------------------
//   (none)    | subscription.created         | active    | created with activate true (or absent)
//   (none)    | subscription.created         | inactive  | created with activate false
//   active    | subscription.renewed         | active    | a charge was approved; the next is scheduled
//   active    | subscription.payment_failed  | active    | a charge failed and retries are left; retry scheduled
//   active    | subscription.deactivated     | inactive  | a charge failed and no retry is left
//   active    | subscription.expired         | expired   | expiration_cycles charges made and the last period ended
//   active    | subscription.canceled        | canceled  | the merchant cancelled it
//   inactive  | subscription.activated       | active    | the merchant activated it (POST .../activate): a fresh due
//             |                              |           | date (at once, or the trial's end if it was never charged)
//   inactive  | subscription.canceled        | canceled  | the merchant cancelled it
//   expired, canceled: final
//
// Only an active subscription is charged (a database CHECK keeps next_charge_at_ms null otherwise).
import type { StoreOps, SubscriptionPatch } from '../store/store.js';
import type { NewSubscriptionRow, SubscriptionRow } from '../store/schema.js';
import { recordSubscriptionEvent, type SubscriptionEventDetails } from '../notifications/subscription-event.js';

export type SubscriptionStatus = 'active' | 'inactive' | 'expired' | 'canceled';

export type SubscriptionEvent =
  | 'subscription.created'
  | 'subscription.renewed'
  | 'subscription.payment_failed'
  | 'subscription.deactivated'
  | 'subscription.activated'
  | 'subscription.expired'
  | 'subscription.canceled';

export type LaterEvent = Exclude<SubscriptionEvent, 'subscription.created'>;

/** The table above, for every event after creation: from status → to status. */
export const SUBSCRIPTION_TRANSITIONS: Readonly<Record<LaterEvent, Readonly<Partial<Record<SubscriptionStatus, SubscriptionStatus>>>>> = {
  'subscription.renewed': { active: 'active' },
  'subscription.payment_failed': { active: 'active' },
  'subscription.deactivated': { active: 'inactive' },
  'subscription.activated': { inactive: 'active' },
  'subscription.expired': { active: 'expired' },
  'subscription.canceled': { active: 'canceled', inactive: 'canceled' },
};

export const FINAL_SUBSCRIPTION_STATUSES: ReadonlySet<string> = new Set(['expired', 'canceled']);

export function subscriptionTransition(from: string, event: LaterEvent): SubscriptionStatus | null {
  return SUBSCRIPTION_TRANSITIONS[event][from as SubscriptionStatus] ?? null;
}

export interface SubscriptionChange {
  readonly event: LaterEvent;
  /** Why, for the audit trail. */
  readonly reason: string;
  /** Other columns that change with it (schedule, counters, lease). */
  readonly patch?: SubscriptionPatch;
  /** What the event notification says besides the subscription itself (the charge's trace_id...). */
  readonly details?: SubscriptionEventDetails;
}

export type SubscriptionChangeOutcome =
  | { readonly kind: 'changed'; readonly row: SubscriptionRow }
  | { readonly kind: 'not_allowed'; readonly from: string }
  /** Someone else changed the subscription first; the caller re-reads and decides. */
  | { readonly kind: 'stale' };

/**
 * A new subscription, born active or inactive, with its subscription.created event; null when
 * an active one of the same customer, price and card exists (store.insertSubscription).
 */
export async function createSubscriptionRecord(
  tx: StoreOps,
  row: NewSubscriptionRow & { status: 'active' | 'inactive' },
  now_ms: number,
): Promise<SubscriptionRow | null> {
  if (!(await tx.insertSubscription({ ...row, next_charge_at_ms: row.status === 'active' ? row.next_charge_at_ms : null }))) return null;
  const stored = await tx.lockSubscription(row.subscription_id);
  if (!stored) throw new Error(`subscription ${row.subscription_id} vanished after insert`);
  await tx.insertSubscriptionChange({
    subscription_id: stored.subscription_id, from_status: '', to_status: stored.status, event: 'subscription.created',
    reason: stored.status === 'active' ? 'created with activate true' : 'created with activate false', at_ms: now_ms,
  });
  await recordSubscriptionEvent(tx, stored, 'subscription.created', {}, now_ms);
  return stored;
}

export async function applySubscriptionEvent(
  tx: StoreOps,
  row: SubscriptionRow,
  change: SubscriptionChange,
  now_ms: number,
): Promise<SubscriptionChangeOutcome> {
  const to = subscriptionTransition(row.status, change.event);
  if (to === null) return { kind: 'not_allowed', from: row.status };
  const patch: SubscriptionPatch = { ...change.patch, status: to, updated_at_ms: now_ms };
  if (to !== 'active') patch.next_charge_at_ms = null;
  if (FINAL_SUBSCRIPTION_STATUSES.has(to)) patch.ended_at_ms = now_ms;
  const changed = await tx.updateSubscriptionIfVersion(row.subscription_id, row.version, patch);
  if (!changed) return { kind: 'stale' };
  const updated: SubscriptionRow = { ...row, ...patch, version: row.version + 1 } as SubscriptionRow;
  await tx.insertSubscriptionChange({
    subscription_id: row.subscription_id, from_status: row.status, to_status: to, event: change.event, reason: change.reason, at_ms: now_ms,
  });
  await recordSubscriptionEvent(tx, updated, change.event, change.details ?? {}, now_ms);
  return { kind: 'changed', row: updated };
}
