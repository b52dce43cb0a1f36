// A subscription's statuses and events (spec §3.4: "Transitions of subscription_status: not
// shown", so the table below is ours, documented in docs/subscriptions.md), as pure data. Every
// change, and every event that leaves the status as it is (a renewal, a failed charge with
// retries left), is written by transitions/subscription.ts applySubscriptionEvent, checked
// against this table.
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
import type { SubscriptionPatch } from './subscription-record.js';

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

export const FINAL_SUBSCRIPTION_STATUSES: ReadonlySet<string> = new Set<SubscriptionStatus>(['expired', 'canceled']);

export function subscriptionTransition(from: SubscriptionStatus, event: LaterEvent): SubscriptionStatus | null {
  return SUBSCRIPTION_TRANSITIONS[event][from] ?? null;
}

/** What a subscription event notification says besides the subscription itself (notifications/subscription-event.ts). */
export interface SubscriptionEventDetails {
  /** The charge this event is about (renewed, payment_failed, deactivated). */
  readonly trace_id?: number | null;
  /** The billing cycle of that charge (1 for the first charge). */
  readonly cycle?: number;
  /** Why a charge failed. */
  readonly error_details?: string | null;
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
