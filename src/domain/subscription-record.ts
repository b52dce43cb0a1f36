// Subscription plans, their prices, subscriptions and their change history, as the gateway keeps
// them: records that operations, the billing worker, the state machine and the event
// notifications pass around. Defined here, so the domain depends on nothing; store/schema.ts
// builds its tables from them. Times are unix milliseconds.
// Object types, not interfaces, as Kysely's rows are: a record is also a Readonly<Record<string, unknown>>.
import type { BillingCycle, TrialUnit } from './billing-calendar.js';
import type { SubscriptionEvent, SubscriptionStatus } from './subscription-state.js';

/** active, inactive, deleted (spec §3.4). A deleted plan stays as a row but is never shown. */
export type PlanStatus = 'active' | 'inactive' | 'deleted';

/** Subscription plans (migration 0003_subscriptions). A deleted plan stays as a row but is never shown. */
export type SubscriptionPlanRow = {
  plan_id: string;
  merchant_id: string;
  name: string;
  description: string | null;
  billing_cycle: BillingCycle;
  trial_period: number;
  trial_period_cycle: TrialUnit;
  /** Charges after which a subscription expires; null: until cancelled. */
  expiration_cycles: number | null;
  retries_number: number;
  retries_delay_days: number;
  /** active, inactive, deleted (spec §3.4). */
  status: PlanStatus;
  created_at_ms: number;
  updated_at_ms: number;
};

/** One price per currency per plan: a unique (plan_id, currency) constraint says so. */
export type SubscriptionPriceRow = {
  price_id: string;
  plan_id: string;
  currency: string;
  amount_minor: number;
  /** Order of the prices as the merchant gave them. */
  position: number;
};

export type SubscriptionRow = {
  subscription_id: string;
  merchant_id: string;
  /** The application that created it: renewals are sales of this application, events carry it. */
  application_key: string;
  plan_id: string;
  price_id: string;
  cid: string;
  card_token: string;
  /** The price when the subscription was created. */
  amount_minor: number;
  currency: string;
  notification_url: string;
  /** active, inactive, expired, canceled: changed only by transitions/subscription.ts, checked against domain/subscription-state.ts. */
  status: SubscriptionStatus;
  billing_cycle: BillingCycle;
  /** Due time of the first charge (reset by an activation); later charges fall on this date's series (billing-calendar.ts). */
  anchor_at_ms: number;
  expiration_cycles: number | null;
  retries_number: number;
  retries_delay_days: number;
  /** Approved charges so far; the next charge is cycle cycles_charged + 1. */
  cycles_charged: number;
  /** Attempts of the next cycle so far (0 before its first); keeps counting across reactivations, so no order_id is reused. */
  attempt: number;
  /** When the billing worker next looks at it; null when nothing more is due (not active). */
  next_charge_at_ms: number | null;
  /** The billing worker's claim, so two instances never work on one subscription at once. */
  lease_until_ms: number | null;
  lease_owner: string | null;
  last_trace_id: number | null;
  last_error: string | null;
  /** Bumped by every change: the compare-and-set of transitions/subscription.ts. */
  version: number;
  created_at_ms: number;
  updated_at_ms: number;
  ended_at_ms: number | null;
};

/** The columns a subscription change may write besides its status (the schedule, counters, lease). */
export type SubscriptionPatch = Partial<Omit<SubscriptionRow, 'subscription_id' | 'merchant_id' | 'version'>>;

/** One line of a subscription's history; from_status is '' on the line of its creation. */
export type SubscriptionChangeRow = {
  id: number;
  subscription_id: string;
  from_status: SubscriptionStatus | '';
  to_status: SubscriptionStatus;
  event: SubscriptionEvent;
  reason: string;
  at_ms: number;
};
