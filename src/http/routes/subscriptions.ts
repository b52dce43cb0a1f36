// The v1.3 subscription API (spec §4.8, §4.9; decisions.md §2, §10; docs/subscriptions.md):
// plans and subscriptions. Header-signed routes: the pipeline of route.ts authenticates,
// checks the window and the fields; these only declare and map outcomes to answers.
import { Type } from '@sinclair/typebox';
import { type BillingCycle, type TrialUnit } from '../../domain/billing-calendar.js';
import {
  createPlan, DEFAULT_RETRIES_DELAY_DAYS, DEFAULT_RETRIES_NUMBER, listPlans, readPlan, updatePlan,
} from '../../operations/subscription-plans.js';
import { cancelSubscription, createSubscription, listSubscriptions, readSubscription } from '../../operations/subscriptions.js';
import type { SubscriptionRow } from '../../store/schema.js';
import type { PlanRecord } from '../../store/store.js';
import { fieldError, type JsonReply, type JsonValue, reply, Status } from '../envelope.js';
import { bodySchema, type BodyOf, SUBSCRIPTION_NOTIFICATION_URL, V13_VERSION } from '../fields.js';
import type { HeaderSignedRoute } from '../route.js';

const AUTH = { merchant_id: 'required', application_key: 'required', timestamp: 'required' } as const;
const VERSION = { version: Type.Optional(V13_VERSION) };
const DEFAULT_PAGE_SIZE = 20;
const ID = /^[A-Za-z0-9_-]{1,32}$/;

// ---- answers ------------------------------------------------------------------------------

const seconds = (ms: number | null) => (ms === null ? null : Math.floor(ms / 1000));

function planFields(record: PlanRecord): Record<string, JsonValue> {
  const { plan } = record;
  return {
    plan_id: plan.plan_id,
    name: plan.name,
    // `description` is the answer's own result text (spec §2.2): the plan's is plan_description.
    plan_description: plan.description,
    prices: record.prices.map((p) => ({ price_id: p.price_id, amount: p.amount_minor, currency: p.currency })),
    billing_cycle: plan.billing_cycle,
    trial_period: plan.trial_period,
    trial_period_cycle: plan.trial_period_cycle,
    expiration_cycles: plan.expiration_cycles,
    retries_number: plan.retries_number,
    retries_delay_days: plan.retries_delay_days,
    subscription_plan_status: plan.status,
    created_at: seconds(plan.created_at_ms),
  };
}

function subscriptionFields(row: SubscriptionRow): Record<string, JsonValue> {
  return {
    subscription_id: row.subscription_id,
    plan_id: row.plan_id,
    cid: row.cid,
    price: { price_id: row.price_id, amount: row.amount_minor, currency: row.currency },
    subscription_status: row.status,
    billing_cycle: row.billing_cycle,
    cycles_charged: row.cycles_charged,
    next_charge_at: seconds(row.next_charge_at_ms),
    notification_url: row.notification_url,
    created_at: seconds(row.created_at_ms),
    ended_at: seconds(row.ended_at_ms),
  };
}

const PriceAnswer = Type.Object({ price_id: Type.String({ maxLength: 32 }), amount: Type.Integer(), currency: Type.String({ maxLength: 3 }) });
const PlanAnswer = Type.Object({
  plan_id: Type.String({ maxLength: 32 }), name: Type.String({ maxLength: 32 }), plan_description: Type.Union([Type.String({ maxLength: 256 }), Type.Null()]),
  prices: Type.Array(PriceAnswer), billing_cycle: Type.String(), trial_period: Type.Integer(), trial_period_cycle: Type.String(),
  expiration_cycles: Type.Union([Type.Integer(), Type.Null()]), retries_number: Type.Integer(), retries_delay_days: Type.Integer(),
  subscription_plan_status: Type.String({ maxLength: 8 }), created_at: Type.Integer(),
});
const SubscriptionAnswer = Type.Object({
  subscription_id: Type.String({ maxLength: 32 }), plan_id: Type.String({ maxLength: 32 }), cid: Type.String({ maxLength: 32 }),
  price: PriceAnswer, subscription_status: Type.String({ maxLength: 8 }), billing_cycle: Type.String(), cycles_charged: Type.Integer(),
  next_charge_at: Type.Union([Type.Integer(), Type.Null()]), notification_url: Type.String(), created_at: Type.Integer(),
  ended_at: Type.Union([Type.Integer(), Type.Null()]),
});
const ENVELOPE = { status: Type.Integer(), description: Type.String({ maxLength: 256 }), version: Type.String({ maxLength: 3 }), timestamp: Type.Integer() };
const PAGE = { page: Type.Integer(), page_size: Type.Integer(), total: Type.Integer() };
const answerWith = (...parts: ReturnType<typeof Type.Object>[]) =>
  Type.Intersect([Type.Object(ENVELOPE), ...parts.map((p) => Type.Partial(p))], { description: 'the fields are present when status is 0' });

const PLAN_NOT_FOUND = reply(Status.PLAN_NOT_FOUND, 'Plan not found');
const SUBSCRIPTION_NOT_FOUND = reply(Status.SUBSCRIPTION_NOT_FOUND, 'Subscription not found');

function pageOf(body: { page?: number | string | undefined; page_size?: number | string | undefined }) {
  const page = body.page === undefined ? 1 : Number(body.page);
  const page_size = body.page_size === undefined ? DEFAULT_PAGE_SIZE : Number(body.page_size);
  return { page, page_size, request: { offset: (page - 1) * page_size, limit: page_size } };
}

// ---- plans ----------------------------------------------------------------------------------

const PlanCreateBody = bodySchema({
  ...AUTH, name: 'required', description: 'optional', prices: 'required', billing_cycle: 'required', trial_period: 'optional',
  trial_period_cycle: 'optional', expiration_cycles: 'optional', retries_number: 'optional', retries_delay_days: 'optional',
  subscription_plan_status: 'optional',
}, VERSION);

function createPlanRoute(): HeaderSignedRoute<BodyOf<typeof PlanCreateBody>> {
  return {
    kind: 'header-signed',
    method: 'POST',
    url: '/api/v1.3/subscription-plan',
    summary: 'Create a subscription plan (decisions.md §10)',
    input: PlanCreateBody,
    response: answerWith(PlanAnswer),
    async handle(context, body) {
      if (body.subscription_plan_status === 'deleted') {
        return fieldError('Invalid field: subscription_plan_status (a new plan is active or inactive)');
      }
      const outcome = await createPlan(context.deps, context.merchant, {
        name: body.name,
        description: body.description ?? null,
        prices: body.prices,
        billing_cycle: body.billing_cycle as BillingCycle,
        trial_period: body.trial_period ?? 0,
        trial_period_cycle: (body.trial_period_cycle ?? 'days') as TrialUnit,
        expiration_cycles: body.expiration_cycles ?? null,
        retries_number: body.retries_number ?? DEFAULT_RETRIES_NUMBER,
        retries_delay_days: body.retries_delay_days ?? DEFAULT_RETRIES_DELAY_DAYS,
        status: body.subscription_plan_status ?? 'active',
      });
      switch (outcome.kind) {
        case 'created': return { status: Status.OK, description: 'Plan created', fields: planFields(outcome.plan) };
        case 'duplicate_currency':
          return fieldError(`Invalid field: prices (${outcome.currency} appears more than once; a plan has one price per currency)`);
        case 'currency_not_allowed':
          return reply(Status.CURRENCY_NOT_ALLOWED,
            `Currency not allowed: ${outcome.currency} is not taken by any of this merchant's gateways with merchant-initiated transactions enabled`);
      }
    },
  };
}

const PlanUpdateBody = bodySchema({ ...AUTH, name: 'optional', description: 'optional', subscription_plan_status: 'optional' }, VERSION);

function updatePlanRoute(): HeaderSignedRoute<BodyOf<typeof PlanUpdateBody>> {
  return {
    kind: 'header-signed',
    method: 'PUT',
    url: '/api/v1.3/subscription-plan/:planId',
    summary: 'Update a plan: name, description, subscription_plan_status (spec §4.9)',
    input: PlanUpdateBody,
    // Spec §7: a failed plan-update validation (an empty application_key, a bad field) is status -1.
    field_error_status: Status.INTERNAL_ERROR,
    response: answerWith(PlanAnswer),
    async handle(context, body) {
      const plan_id = context.params.planId ?? '';
      if (!ID.test(plan_id)) return PLAN_NOT_FOUND;
      const outcome = await updatePlan(context.deps, context.merchant.merchant_id, plan_id, {
        name: body.name, description: body.description, status: body.subscription_plan_status,
      });
      if (outcome.kind === 'not_found') return PLAN_NOT_FOUND;
      return { status: Status.OK, description: 'Plan updated', fields: planFields(outcome.plan) };
    },
  };
}

const ReadBody = bodySchema({ ...AUTH }, VERSION);

function readPlanRoute(): HeaderSignedRoute<BodyOf<typeof ReadBody>> {
  return {
    kind: 'header-signed',
    method: 'GET',
    url: '/api/v1.3/subscription-plan/:planId',
    summary: 'Read one of the merchant\'s plans (query string: merchant_id, application_key, timestamp, version)',
    input: ReadBody,
    response: answerWith(PlanAnswer),
    async handle(context) {
      const plan_id = context.params.planId ?? '';
      if (!ID.test(plan_id)) return PLAN_NOT_FOUND;
      const outcome = await readPlan(context.deps, context.merchant.merchant_id, plan_id);
      if (outcome.kind === 'not_found') return PLAN_NOT_FOUND;
      return { status: Status.OK, description: 'Plan found', fields: planFields(outcome.plan) };
    },
  };
}

const PlanListBody = bodySchema({ ...AUTH, page: 'optional', page_size: 'optional' }, VERSION);

function listPlansRoute(): HeaderSignedRoute<BodyOf<typeof PlanListBody>> {
  return {
    kind: 'header-signed',
    method: 'GET',
    url: '/api/v1.3/subscription-plan',
    summary: 'List the merchant\'s plans, deleted ones never (query string; page from 1, page_size up to 100)',
    input: PlanListBody,
    response: answerWith(Type.Object({ plans: Type.Array(PlanAnswer), ...PAGE })),
    async handle(context, body) {
      const { page, page_size, request } = pageOf(body);
      const { plans, total } = await listPlans(context.deps, context.merchant.merchant_id, request);
      return { status: Status.OK, description: 'Plans listed', fields: { plans: plans.map(planFields), page, page_size, total } };
    },
  };
}

// ---- subscriptions ----------------------------------------------------------------------------

const SubscriptionCreateBody = bodySchema({
  ...AUTH, plan_id: 'required', price_id: 'required', cid: 'required', card_token: 'required', activate: 'optional',
}, { ...VERSION, notification_url: SUBSCRIPTION_NOTIFICATION_URL });

function createSubscriptionRoute(): HeaderSignedRoute<BodyOf<typeof SubscriptionCreateBody>> {
  return {
    kind: 'header-signed',
    method: 'POST',
    url: '/api/v1.3/subscription',
    summary: 'Create a customer subscription (spec §4.8)',
    input: SubscriptionCreateBody,
    response: answerWith(SubscriptionAnswer),
    async handle(context, body) {
      const outcome = await createSubscription(context.deps, {
        merchant: context.merchant,
        application_key: context.application_key,
        plan_id: body.plan_id,
        price_id: body.price_id,
        cid: body.cid,
        card_token: body.card_token,
        // Spec §4.8: activate is "optional or null"; absent or null means true.
        activate: body.activate !== false && body.activate !== 'false',
        notification_url: body.notification_url,
      });
      switch (outcome.kind) {
        case 'created': return { status: Status.OK, description: 'Subscription created', fields: subscriptionFields(outcome.subscription) };
        // Spec §7: "subscription | -1 | Internal or lookup error, for example the plan id does not exist".
        case 'plan_not_found': return reply(Status.INTERNAL_ERROR, 'Plan not found');
        case 'plan_not_active': return reply(Status.PLAN_NOT_ACTIVE, 'Plan is inactive: it takes no new subscriptions');
        case 'price_not_found': return reply(Status.PRICE_NOT_FOUND, 'Price not found: price_id is not one of the plan\'s prices');
        case 'card_token_not_found': return reply(Status.CARD_TOKEN_NOT_FOUND, 'Card token not found');
        case 'card_expired': return fieldError('Invalid field: card_token (the card has expired)');
        case 'currency_not_allowed':
          return reply(Status.CURRENCY_NOT_ALLOWED,
            `Currency not allowed: ${outcome.currency} is not taken by any of this merchant's gateways with merchant-initiated transactions enabled`);
      }
    },
  };
}

function readSubscriptionRoute(): HeaderSignedRoute<BodyOf<typeof ReadBody>> {
  return {
    kind: 'header-signed',
    method: 'GET',
    url: '/api/v1.3/subscription/:subscriptionId',
    summary: 'Read one of the merchant\'s subscriptions (query string: merchant_id, application_key, timestamp, version)',
    input: ReadBody,
    response: answerWith(SubscriptionAnswer),
    async handle(context) {
      const subscription_id = context.params.subscriptionId ?? '';
      if (!ID.test(subscription_id)) return SUBSCRIPTION_NOT_FOUND;
      const outcome = await readSubscription(context.deps, context.merchant.merchant_id, subscription_id);
      if (outcome.kind === 'not_found') return SUBSCRIPTION_NOT_FOUND;
      return { status: Status.OK, description: 'Subscription found', fields: subscriptionFields(outcome.subscription) };
    },
  };
}

const SubscriptionListBody = bodySchema({
  ...AUTH, plan_id: 'optional', cid: 'optional', subscription_status: 'optional', page: 'optional', page_size: 'optional',
}, VERSION);

function listSubscriptionsRoute(): HeaderSignedRoute<BodyOf<typeof SubscriptionListBody>> {
  return {
    kind: 'header-signed',
    method: 'GET',
    url: '/api/v1.3/subscription',
    summary: 'List the merchant\'s subscriptions, newest first (query string; filters plan_id, cid, subscription_status; page_size up to 100)',
    input: SubscriptionListBody,
    response: answerWith(Type.Object({ subscriptions: Type.Array(SubscriptionAnswer), ...PAGE })),
    async handle(context, body) {
      const { page, page_size, request } = pageOf(body);
      const { subscriptions, total } = await listSubscriptions(context.deps, context.merchant.merchant_id, {
        plan_id: body.plan_id, cid: body.cid, status: body.subscription_status,
      }, request);
      return {
        status: Status.OK, description: 'Subscriptions listed',
        fields: { subscriptions: subscriptions.map(subscriptionFields), page, page_size, total },
      };
    },
  };
}

function cancelSubscriptionRoute(): HeaderSignedRoute<BodyOf<typeof ReadBody>> {
  return {
    kind: 'header-signed',
    method: 'POST',
    url: '/api/v1.3/subscription/:subscriptionId/cancel',
    summary: 'Cancel a subscription: no charge after this (cancelling again answers the same)',
    input: ReadBody,
    response: answerWith(SubscriptionAnswer),
    async handle(context): Promise<JsonReply> {
      const subscription_id = context.params.subscriptionId ?? '';
      if (!ID.test(subscription_id)) return SUBSCRIPTION_NOT_FOUND;
      const outcome = await cancelSubscription(context.deps, context.merchant.merchant_id, subscription_id);
      switch (outcome.kind) {
        case 'not_found': return SUBSCRIPTION_NOT_FOUND;
        case 'ended': return { status: Status.SUBSCRIPTION_ENDED, description: 'Subscription has expired; there is nothing to cancel', fields: subscriptionFields(outcome.subscription) };
        case 'canceled': return {
          status: Status.OK, description: outcome.already ? 'Subscription was already canceled' : 'Subscription canceled',
          fields: subscriptionFields(outcome.subscription),
        };
      }
    },
  };
}

export function subscriptionRoutes(): HeaderSignedRoute<any>[] { // eslint-disable-line @typescript-eslint/no-explicit-any
  return [
    createPlanRoute(), updatePlanRoute(), readPlanRoute(), listPlansRoute(),
    createSubscriptionRoute(), readSubscriptionRoute(), listSubscriptionsRoute(), cancelSubscriptionRoute(),
  ];
}
