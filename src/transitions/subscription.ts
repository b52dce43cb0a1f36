// The only place a subscription's status is written. Every change, and every event that leaves
// the status as it is (a renewal, a failed charge with retries left), is checked against
// domain/subscription-state.ts's table, written with compare-and-set on the row's version (two
// racing changes cannot both win), recorded in subscription_changes, and its event notification
// written to the outbox, all inside the caller's database transaction: the notification exists
// if and only if the change committed.
import type { SubscriptionPatch, SubscriptionRow } from '../domain/subscription-record.js';
import {
  FINAL_SUBSCRIPTION_STATUSES,
  type SubscriptionChange,
  type SubscriptionStatus,
  subscriptionTransition,
} from '../domain/subscription-state.js';
import { recordSubscriptionEvent } from '../notifications/subscription-event.js';
import type { NewSubscriptionRow } from '../store/schema.js';
import type { UnitOfWork } from '../store/store.js';

export type SubscriptionChangeOutcome =
  | { readonly kind: 'changed'; readonly row: SubscriptionRow }
  | { readonly kind: 'not_allowed'; readonly from: SubscriptionStatus }
  /** Someone else changed the subscription first; the caller re-reads and decides. */
  | { readonly kind: 'stale' };

/**
 * A new subscription, born active or inactive, with its subscription.created event; null when
 * an active one of the same customer, price and card exists (store.insertSubscription).
 */
export async function createSubscriptionRecord(
  tx: UnitOfWork,
  row: NewSubscriptionRow & { status: 'active' | 'inactive' },
  now_ms: number,
): Promise<SubscriptionRow | null> {
  if (!(await tx.subscriptions.insert({ ...row, next_charge_at_ms: row.status === 'active' ? (row.next_charge_at_ms ?? null) : null })))
    return null;
  const stored = await tx.subscriptions.lock(row.subscription_id);
  if (!stored) throw new Error(`subscription ${row.subscription_id} vanished after insert`);
  await tx.subscriptions.insertChange({
    subscription_id: stored.subscription_id,
    from_status: '',
    to_status: stored.status,
    event: 'subscription.created',
    reason: stored.status === 'active' ? 'created with activate true' : 'created with activate false',
    at_ms: now_ms,
  });
  await recordSubscriptionEvent(tx, stored, 'subscription.created', {}, now_ms);
  return stored;
}

export async function applySubscriptionEvent(
  tx: UnitOfWork,
  row: SubscriptionRow,
  change: SubscriptionChange,
  now_ms: number,
): Promise<SubscriptionChangeOutcome> {
  const to = subscriptionTransition(row.status, change.event);
  if (to === null) return { kind: 'not_allowed', from: row.status };
  const patch: SubscriptionPatch = { ...change.patch, status: to, updated_at_ms: now_ms };
  if (to !== 'active') patch.next_charge_at_ms = null;
  if (FINAL_SUBSCRIPTION_STATUSES.has(to)) patch.ended_at_ms = now_ms;
  const changed = await tx.subscriptions.updateIfVersion(row.subscription_id, row.version, patch);
  if (!changed) return { kind: 'stale' };
  const updated: SubscriptionRow = { ...row, ...patch, version: row.version + 1 };
  await tx.subscriptions.insertChange({
    subscription_id: row.subscription_id,
    from_status: row.status,
    to_status: to,
    event: change.event,
    reason: change.reason,
    at_ms: now_ms,
  });
  await recordSubscriptionEvent(tx, updated, change.event, change.details ?? {}, now_ms);
  return { kind: 'changed', row: updated };
}
