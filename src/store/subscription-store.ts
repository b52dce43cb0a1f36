// The subscriptions aggregate: plans with their prices, subscriptions with their change history,
// and the billing worker's claims. Reads that take a merchant_id find another merchant's plan or
// subscription exactly as a missing one; the *All / *Any reads are the back office's, which
// checks who may see what itself.
import type { Insertable } from 'kysely';
import type { SubscriptionStatus } from '../domain/subscription-state.js';
import type {
  NewSubscriptionRow,
  SubscriptionChangeRow,
  SubscriptionChangeTable,
  SubscriptionPlanRow,
  SubscriptionPlanTable,
  SubscriptionPriceRow,
  SubscriptionPriceTable,
  SubscriptionRow,
} from './schema.js';
import type { LeaseTimes } from './notification-store.js';

import type { SubscriptionPatch } from '../domain/subscription-record.js';

export type { SubscriptionPatch };

/** A plan with its prices in the merchant's order. */
export interface PlanRecord {
  readonly plan: SubscriptionPlanRow;
  readonly prices: readonly SubscriptionPriceRow[];
}

export interface PageRequest {
  readonly offset: number;
  readonly limit: number;
}

export interface SubscriptionFilter {
  readonly plan_id?: string | undefined;
  readonly cid?: string | undefined;
  readonly status?: SubscriptionStatus | undefined;
}

export type PlanPatch = Partial<Pick<SubscriptionPlanRow, 'name' | 'description' | 'status' | 'updated_at_ms'>>;

export interface SubscriptionStore {
  insertPlan(plan: Insertable<SubscriptionPlanTable>, prices: readonly Insertable<SubscriptionPriceTable>[]): Promise<void>;
  /** Deleted plans included; callers decide what a deleted plan means. */
  getPlan(merchant_id: string, plan_id: string): Promise<PlanRecord | null>;
  /** Never lists deleted plans; oldest first. */
  listPlans(merchant_id: string, page: PageRequest): Promise<{ plans: PlanRecord[]; total: number }>;
  updatePlan(merchant_id: string, plan_id: string, patch: PlanPatch): Promise<boolean>;
  /**
   * Inserts unless an active subscription of the same merchant, cid, plan price and card exists
   * (unique index subscriptions_one_active); false then, and that one is findActiveSubscription's.
   */
  insert(row: NewSubscriptionRow): Promise<boolean>;
  findActive(key: Pick<NewSubscriptionRow, 'merchant_id' | 'cid' | 'plan_id' | 'price_id' | 'card_token'>): Promise<SubscriptionRow | null>;
  get(merchant_id: string, subscription_id: string): Promise<SubscriptionRow | null>;
  /** Row lock (FOR UPDATE) on PostgreSQL; SQLite transactions are already serialized. */
  lock(subscription_id: string): Promise<SubscriptionRow | null>;
  /** Newest first. */
  list(merchant_id: string, filter: SubscriptionFilter, page: PageRequest): Promise<{ subscriptions: SubscriptionRow[]; total: number }>;
  /** Changes the row only if its version is still `version`, and bumps it: subscription-state.ts's compare-and-set. */
  updateIfVersion(subscription_id: string, version: number, patch: SubscriptionPatch): Promise<boolean>;
  insertChange(row: Insertable<SubscriptionChangeTable>): Promise<void>;
  listChanges(subscription_id: string): Promise<Pick<SubscriptionChangeRow, 'from_status' | 'to_status' | 'event' | 'reason' | 'at_ms'>[]>;
  /**
   * Active subscriptions due at now_ms and not claimed by a live lease, claimed for `owner`
   * until lease_until_ms. On PostgreSQL the candidates are locked with SKIP LOCKED, so
   * instances sharing the database claim disjoint sets. A disabled merchant's are held: never
   * claimed while it is disabled.
   */
  claimDue(at: LeaseTimes, limit: number, lease_until_ms: number, owner: string): Promise<SubscriptionRow[]>;
  /** Keeps (or gives back, with null) a claim without changing the subscription. */
  setLease(subscription_id: string, owner: string, lease_until_ms: number | null): Promise<void>;
  /** Active subscriptions due at now_ms, claimed or not; a disabled merchant's held ones are not due work. */
  countDue(now_ms: number): Promise<number>;
  /** Newest first, at most `limit`. */
  listAll(merchant_id: string | null, limit: number): Promise<SubscriptionRow[]>;
  /** One subscription by its id, whichever merchant's (the caller checks who may see it). */
  getAny(subscription_id: string): Promise<SubscriptionRow | null>;
  /** Plans that are not deleted, newest first, at most `limit`. */
  listAllPlans(merchant_id: string | null, limit: number): Promise<SubscriptionPlanRow[]>;
}
