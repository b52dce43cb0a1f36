// Subscription plans (spec §2.7, §3.4, §4.9; decisions.md §10): create, update, read, list.
// Rules: one price per currency; only currencies that a gateway of the merchant with
// merchant-initiated transactions (MIT) enabled takes; a deleted plan is gone for the merchant
// (not read, not listed, not updated, takes no subscription), while the subscriptions it
// already has keep running until cancelled (docs/subscriptions.md).
import { randomBytes } from 'node:crypto';
import type { BillingCycle, TrialUnit } from '../domain/billing-calendar.js';
import type { Gateway, Merchant } from '../domain/merchants.js';
import type { PlanStatus } from '../domain/subscription-record.js';
import type { PageRequest, PlanRecord } from '../store/store.js';
import type { OperationDeps } from './deps.js';

/** The domain's (domain/subscription-record.ts), beside the plan's record. */
export type { PlanStatus };

export const DEFAULT_RETRIES_NUMBER = 3;
export const DEFAULT_RETRIES_DELAY_DAYS = 1;

export interface NewPlanInput {
  readonly name: string;
  readonly description: string | null;
  readonly prices: readonly { readonly amount: number; readonly currency: string }[];
  readonly billing_cycle: BillingCycle;
  readonly trial_period: number;
  readonly trial_period_cycle: TrialUnit;
  /** 0 or null: until cancelled. */
  readonly expiration_cycles: number | null;
  readonly retries_number: number;
  readonly retries_delay_days: number;
  readonly status: 'active' | 'inactive';
}

export type CreatePlanOutcome =
  | { readonly kind: 'created'; readonly plan: PlanRecord }
  | { readonly kind: 'duplicate_currency'; readonly currency: string }
  | { readonly kind: 'currency_not_allowed'; readonly currency: string };

export interface PlanUpdate {
  readonly name?: string | undefined;
  readonly description?: string | undefined;
  readonly status?: PlanStatus | undefined;
}

export type PlanOutcome = { readonly kind: 'found'; readonly plan: PlanRecord } | { readonly kind: 'not_found' };

function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString('hex')}`;
}

/**
 * The gateway that charges a renewal in this currency: the merchant's first enabled gateway with
 * MIT enabled that takes it and whose connector runs here and makes stored-card charges. Null:
 * the currency cannot be billed.
 */
export function mitGatewayFor(deps: Pick<OperationDeps, 'connectors'>, merchant: Merchant, currency: string): Gateway | null {
  return (
    merchant.gateways.find(
      (g) =>
        g.enabled &&
        g.mit_enabled &&
        g.currencies.includes(currency) &&
        deps.connectors.runsHere(g.connector) &&
        deps.connectors.definition(g.connector)?.capabilities.merchant_initiated === true,
    ) ?? null
  );
}

export async function createPlan(deps: OperationDeps, merchant: Merchant, input: NewPlanInput): Promise<CreatePlanOutcome> {
  const seen = new Set<string>();
  for (const price of input.prices) {
    if (seen.has(price.currency)) return { kind: 'duplicate_currency', currency: price.currency };
    seen.add(price.currency);
  }
  for (const price of input.prices) {
    if (!mitGatewayFor(deps, merchant, price.currency)) return { kind: 'currency_not_allowed', currency: price.currency };
  }
  const now_ms = deps.clock.now_ms();
  const plan_id = newId('plan');
  const plan = {
    plan_id,
    merchant_id: merchant.merchant_id,
    name: input.name,
    description: input.description,
    billing_cycle: input.billing_cycle,
    trial_period: input.trial_period,
    trial_period_cycle: input.trial_period_cycle,
    expiration_cycles: input.expiration_cycles === 0 ? null : input.expiration_cycles,
    retries_number: input.retries_number,
    retries_delay_days: input.retries_delay_days,
    status: input.status,
    created_at_ms: now_ms,
    updated_at_ms: now_ms,
  };
  const prices = input.prices.map((price, position) => ({
    price_id: newId('price'),
    plan_id,
    currency: price.currency,
    amount_minor: price.amount,
    position,
  }));
  await deps.store.transaction((tx) => tx.subscriptions.insertPlan(plan, prices));
  return { kind: 'created', plan: { plan, prices } };
}

/** A plan the merchant can see: its own and not deleted. */
export async function readPlan(deps: OperationDeps, merchant_id: string, plan_id: string): Promise<PlanOutcome> {
  const plan = await deps.store.subscriptions.getPlan(merchant_id, plan_id);
  return plan && plan.plan.status !== 'deleted' ? { kind: 'found', plan } : { kind: 'not_found' };
}

export async function listPlans(
  deps: OperationDeps,
  merchant_id: string,
  page: PageRequest,
): Promise<{ plans: PlanRecord[]; total: number }> {
  return deps.store.subscriptions.listPlans(merchant_id, page);
}

/** Spec §4.9: name, description, status. Any status may be set, except that a deleted plan is gone. */
export async function updatePlan(deps: OperationDeps, merchant_id: string, plan_id: string, update: PlanUpdate): Promise<PlanOutcome> {
  const now_ms = deps.clock.now_ms();
  return deps.store.transaction(async (tx) => {
    const current = await tx.subscriptions.getPlan(merchant_id, plan_id);
    if (!current || current.plan.status === 'deleted') return { kind: 'not_found' } as const;
    const patch = {
      ...(update.name !== undefined ? { name: update.name } : {}),
      ...(update.description !== undefined ? { description: update.description } : {}),
      ...(update.status !== undefined ? { status: update.status } : {}),
    };
    if (Object.keys(patch).length === 0) return { kind: 'found', plan: current } as const;
    await tx.subscriptions.updatePlan(merchant_id, plan_id, { ...patch, updated_at_ms: now_ms });
    return { kind: 'found', plan: { ...current, plan: { ...current.plan, ...patch, updated_at_ms: now_ms } } } as const;
  });
}

export type { PlanRecord } from '../store/store.js';
