// Subscriptions (spec §2.6, §3.4, §4.8): create, read, list, cancel, activate. Charging them is
// operations/subscription-renewal.ts, driven by workers/subscription-billing.ts. Every status
// change goes through domain/subscription-state.ts.
import { randomBytes } from 'node:crypto';
import { type BillingCycle, firstChargeAt, type TrialUnit } from '../domain/billing-calendar.js';
import { expiryInFuture, parseExpiry } from '../domain/cards.js';
import type { Merchant } from '../domain/merchants.js';
import { applySubscriptionEvent, createSubscriptionRecord } from '../transitions/subscription.js';
import type { SubscriptionPlanRow, SubscriptionPriceRow, SubscriptionRow } from '../domain/subscription-record.js';
import type { PageRequest, UnitOfWork, SubscriptionFilter } from '../store/store.js';
import type { OperationDeps } from './deps.js';
import { nextSeriesAttempt } from './subscription-renewal.js';
import { mitGatewayFor } from './subscription-plans.js';

export interface NewSubscriptionInput {
  readonly merchant: Merchant;
  readonly application_key: string;
  readonly plan_id: string;
  readonly price_id: string;
  readonly cid: string;
  readonly card_token: string;
  /** Spec §3.4: true gives an active subscription, false an inactive one. */
  readonly activate: boolean;
  readonly notification_url: string;
}

export type CreateSubscriptionOutcome =
  /** replayed: the same request again while its subscription is active; that subscription is answered, nothing is created. */
  | { readonly kind: 'created'; readonly subscription: SubscriptionRow; readonly replayed: boolean }
  /** An active subscription of the same customer, price and card exists with other details (notification_url, application_key). */
  | { readonly kind: 'duplicate'; readonly subscription_id: string }
  /** Unknown, another merchant's, or deleted: spec §7 answers this with status -1. */
  | { readonly kind: 'plan_not_found' }
  | { readonly kind: 'plan_not_active' }
  | { readonly kind: 'price_not_found' }
  | CardRefusal;

/** Why a stored card cannot be charged for a subscription (create and activate check the same). */
export type CardRefusal =
  | { readonly kind: 'card_token_not_found' }
  | { readonly kind: 'card_expired' }
  /** The currency is no longer taken by a gateway with MIT enabled. */
  | { readonly kind: 'currency_not_allowed'; readonly currency: string };

/** The merchant's stored card exists, has not expired and a gateway with MIT takes `currency`; else why not. */
async function cardRefusal(
  tx: UnitOfWork,
  deps: OperationDeps,
  merchant: Merchant,
  card_token: string,
  currency: string,
  now_ms: number,
): Promise<CardRefusal | null> {
  const card = await tx.cards.get(merchant.merchant_id, card_token);
  if (!card) return { kind: 'card_token_not_found' };
  const expiry = parseExpiry(card.card_exp);
  if (!expiry || !expiryInFuture(expiry, now_ms)) return { kind: 'card_expired' };
  if (!mitGatewayFor(deps, merchant, currency)) return { kind: 'currency_not_allowed', currency };
  return null;
}

export type SubscriptionOutcome = { readonly kind: 'found'; readonly subscription: SubscriptionRow } | { readonly kind: 'not_found' };

export type CancelOutcome =
  | { readonly kind: 'canceled'; readonly subscription: SubscriptionRow; readonly already: boolean }
  | { readonly kind: 'ended'; readonly subscription: SubscriptionRow }
  | { readonly kind: 'not_found' };

export interface ActivateSubscriptionInput {
  readonly merchant: Merchant;
  readonly subscription_id: string;
  /** The card to charge from now on (the customer's new card); absent: the subscription's own. */
  readonly card_token?: string | undefined;
}

export type ActivateOutcome =
  /** already: it was active; nothing changed. */
  | { readonly kind: 'activated'; readonly subscription: SubscriptionRow; readonly already: boolean }
  /** Canceled or expired: final, never active again. */
  | { readonly kind: 'ended'; readonly subscription: SubscriptionRow }
  | { readonly kind: 'not_found' }
  | CardRefusal
  /** Another active subscription of the same customer, price and card exists (migration 0006). */
  | { readonly kind: 'duplicate'; readonly subscription_id: string }
  /** A card_token other than the subscription's given for an active subscription: activation changes the card of an inactive one only. */
  | { readonly kind: 'card_change_refused'; readonly subscription: SubscriptionRow };

class CreateRefused extends Error {
  constructor(readonly outcome: Exclude<CreateSubscriptionOutcome, { kind: 'created' }>) {
    super(outcome.kind);
  }
}

export async function createSubscription(deps: OperationDeps, input: NewSubscriptionInput): Promise<CreateSubscriptionOutcome> {
  const merchant_id = input.merchant.merchant_id;
  const now_ms = deps.clock.now_ms();
  const refuse = (outcome: Exclude<CreateSubscriptionOutcome, { kind: 'created' }>): never => {
    throw new CreateRefused(outcome);
  };
  try {
    const subscription = await deps.store.transaction(async (tx) => {
      const record = await tx.subscriptions.getPlan(merchant_id, input.plan_id);
      if (!record || record.plan.status === 'deleted') return refuse({ kind: 'plan_not_found' });
      if (record.plan.status !== 'active') return refuse({ kind: 'plan_not_active' });
      const price = record.prices.find((p) => p.price_id === input.price_id);
      if (!price) return refuse({ kind: 'price_not_found' });
      const card_refusal = await cardRefusal(tx, deps, input.merchant, input.card_token, price.currency, now_ms);
      if (card_refusal) return refuse(card_refusal);
      const row = newRow(input, record.plan, price, now_ms);
      const created = await createSubscriptionRecord(tx, row, now_ms);
      if (created) return { subscription: created, replayed: false };
      // One active subscription per customer, price and card (migration 0006): a retried
      // create gets the subscription it made; the same key with other details is refused.
      const existing = await tx.subscriptions.findActive(row);
      if (!existing) throw new Error('subscription insert skipped but no active subscription found');
      if (existing.notification_url !== row.notification_url || existing.application_key !== row.application_key) {
        return refuse({ kind: 'duplicate', subscription_id: existing.subscription_id });
      }
      return { subscription: existing, replayed: true };
    });
    return { kind: 'created', ...subscription };
  } catch (error) {
    if (error instanceof CreateRefused) return error.outcome;
    throw error;
  }
}

function newRow(input: NewSubscriptionInput, plan: SubscriptionPlanRow, price: SubscriptionPriceRow, now_ms: number) {
  const anchor_at_ms = firstChargeAt(now_ms, plan.trial_period, plan.trial_period_cycle as TrialUnit);
  return {
    subscription_id: `sub_${randomBytes(12).toString('hex')}`,
    merchant_id: input.merchant.merchant_id,
    application_key: input.application_key,
    plan_id: plan.plan_id,
    price_id: price.price_id,
    cid: input.cid,
    card_token: input.card_token,
    amount_minor: price.amount_minor,
    currency: price.currency,
    notification_url: input.notification_url,
    status: input.activate ? ('active' as const) : ('inactive' as const),
    billing_cycle: plan.billing_cycle as BillingCycle,
    anchor_at_ms,
    expiration_cycles: plan.expiration_cycles,
    retries_number: plan.retries_number,
    retries_delay_days: plan.retries_delay_days,
    cycles_charged: 0,
    attempt: 0,
    next_charge_at_ms: anchor_at_ms,
    lease_until_ms: null,
    lease_owner: null,
    last_trace_id: null,
    last_error: null,
    version: 0,
    created_at_ms: now_ms,
    updated_at_ms: now_ms,
    ended_at_ms: null,
  };
}

export async function readSubscription(deps: OperationDeps, merchant_id: string, subscription_id: string): Promise<SubscriptionOutcome> {
  const subscription = await deps.store.subscriptions.get(merchant_id, subscription_id);
  return subscription ? { kind: 'found', subscription } : { kind: 'not_found' };
}

export async function listSubscriptions(
  deps: OperationDeps,
  merchant_id: string,
  filter: SubscriptionFilter,
  page: PageRequest,
): Promise<{ subscriptions: SubscriptionRow[]; total: number }> {
  return deps.store.subscriptions.list(merchant_id, filter, page);
}

/**
 * Stops every future charge. Cancelling a cancelled subscription answers it again; an expired
 * one has ended already. A charge already sent to the processor when the cancellation commits
 * completes (it is a stored sale, refundable), but nothing is scheduled after it.
 */
export async function cancelSubscription(
  deps: OperationDeps,
  merchant_id: string,
  subscription_id: string,
  reason = 'cancelled by the merchant',
): Promise<CancelOutcome> {
  const now_ms = deps.clock.now_ms();
  return deps.store.transaction(async (tx) => {
    for (let tries = 0; ; tries += 1) {
      const row = await tx.subscriptions.lock(subscription_id);
      if (!row || row.merchant_id !== merchant_id) return { kind: 'not_found' } as const;
      if (row.status === 'canceled') return { kind: 'canceled', subscription: row, already: true } as const;
      if (row.status === 'expired') return { kind: 'ended', subscription: row } as const;
      const outcome = await applySubscriptionEvent(
        tx,
        row,
        {
          event: 'subscription.canceled',
          reason,
          patch: { lease_until_ms: null, lease_owner: null },
        },
        now_ms,
      );
      if (outcome.kind === 'changed') return { kind: 'canceled', subscription: outcome.row, already: false } as const;
      if (outcome.kind === 'not_allowed') throw new Error(`subscription ${subscription_id}: cancel refused from ${outcome.from}`);
      // stale: changed under us (SQLite cannot; PostgreSQL holds the row lock): read again.
      if (tries >= 2) throw new Error(`subscription ${subscription_id}: cancel kept losing the compare-and-set`);
    }
  });
}

/** The database refused a row for a unique index (PostgreSQL 23505, SQLite SQLITE_CONSTRAINT_UNIQUE). */
function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}

/**
 * Makes an inactive subscription (created with activate false, or deactivated after its retries
 * ran out) active again, optionally with another card of the customer's. It gets a fresh due
 * date: at once, or, if it was never charged nor tried, when the plan's trial ends counted from
 * now; later charges fall on that date's anchor series. The unpaid cycle is charged again as
 * the same charge number, with attempt numbers that continue (subscription-renewal.ts), and a
 * full series of retries. Activating an active subscription answers it unchanged; a canceled or
 * expired one has ended for good.
 */
export async function activateSubscription(deps: OperationDeps, input: ActivateSubscriptionInput): Promise<ActivateOutcome> {
  for (let runs = 0; ; runs += 1) {
    try {
      return await activateOnce(deps, input);
    } catch (error) {
      // Two inactive twins activated at the same moment on PostgreSQL: the unique index lets one
      // win; run again, and the loser's check now finds the winner (duplicate).
      if (!isUniqueViolation(error) || runs >= 1) throw error;
    }
  }
}

async function activateOnce(deps: OperationDeps, input: ActivateSubscriptionInput): Promise<ActivateOutcome> {
  const merchant_id = input.merchant.merchant_id;
  const now_ms = deps.clock.now_ms();
  return deps.store.transaction(async (tx): Promise<ActivateOutcome> => {
    for (let tries = 0; ; tries += 1) {
      const row = await tx.subscriptions.lock(input.subscription_id);
      if (!row || row.merchant_id !== merchant_id) return { kind: 'not_found' };
      if (row.status === 'canceled' || row.status === 'expired') return { kind: 'ended', subscription: row };
      if (row.status === 'active') {
        if (input.card_token !== undefined && input.card_token !== row.card_token)
          return { kind: 'card_change_refused', subscription: row };
        return { kind: 'activated', subscription: row, already: true };
      }
      const card_token = input.card_token ?? row.card_token;
      const card_refusal = await cardRefusal(tx, deps, input.merchant, card_token, row.currency, now_ms);
      if (card_refusal) return card_refusal;
      const twin = await tx.subscriptions.findActive({ ...row, card_token });
      if (twin) return { kind: 'duplicate', subscription_id: twin.subscription_id };
      let due_ms = now_ms;
      if (row.cycles_charged === 0 && row.attempt === 0) {
        // Never charged nor tried: the customer has not had the trial yet; it starts now.
        const plan = (await tx.subscriptions.getPlan(merchant_id, row.plan_id))?.plan;
        if (plan) due_ms = firstChargeAt(now_ms, plan.trial_period, plan.trial_period_cycle as TrialUnit);
      }
      const outcome = await applySubscriptionEvent(
        tx,
        row,
        {
          event: 'subscription.activated',
          reason: card_token === row.card_token ? 'activated by the merchant' : 'activated by the merchant with another card',
          patch: {
            card_token,
            anchor_at_ms: due_ms,
            next_charge_at_ms: due_ms,
            attempt: nextSeriesAttempt(row),
            last_error: null,
            lease_until_ms: null,
            lease_owner: null,
          },
        },
        now_ms,
      );
      if (outcome.kind === 'changed') return { kind: 'activated', subscription: outcome.row, already: false };
      if (outcome.kind === 'not_allowed') throw new Error(`subscription ${input.subscription_id}: activate refused from ${outcome.from}`);
      if (tries >= 2) throw new Error(`subscription ${input.subscription_id}: activate kept losing the compare-and-set`);
    }
  });
}

export type { PageRequest } from '../store/store.js';
