// The v1.3 subscription API (spec §4.8, §4.9; decisions.md §2, §10; docs/subscriptions.md):
// plans and subscriptions. Header-signed routes: the pipeline of route.ts authenticates,
// checks the window and the fields; these only declare and map outcomes to answers.
import { Type } from '@sinclair/typebox';
import { type BillingCycle, type TrialUnit } from '../../domain/billing-calendar.js';
import {
  createPlan,
  DEFAULT_RETRIES_DELAY_DAYS,
  DEFAULT_RETRIES_NUMBER,
  listPlans,
  type PlanRecord,
  readPlan,
  updatePlan,
} from '../../operations/subscription-plans.js';
import {
  activateSubscription,
  cancelSubscription,
  createSubscription,
  listSubscriptions,
  type PageRequest,
  readSubscription,
} from '../../operations/subscriptions.js';
import type { SubscriptionRow } from '../../domain/subscription-record.js';
import { fieldError, type JsonReply, type JsonValue, reply, Status } from '../envelope.js';
import { bodySchema, type BodyOf, SUBSCRIPTION_NOTIFICATION_URL, V13_VERSION } from '../fields.js';
import type { HeaderSignedContext, HeaderSignedRoute } from '../route.js';

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

const PriceAnswer = Type.Object({
  price_id: Type.String({ maxLength: 32 }),
  amount: Type.Integer(),
  currency: Type.String({ maxLength: 3 }),
});
const PlanAnswer = Type.Object({
  plan_id: Type.String({ maxLength: 32 }),
  name: Type.String({ maxLength: 32 }),
  plan_description: Type.Union([Type.String({ maxLength: 256 }), Type.Null()]),
  prices: Type.Array(PriceAnswer),
  billing_cycle: Type.String(),
  trial_period: Type.Integer(),
  trial_period_cycle: Type.String(),
  expiration_cycles: Type.Union([Type.Integer(), Type.Null()]),
  retries_number: Type.Integer(),
  retries_delay_days: Type.Integer(),
  subscription_plan_status: Type.String({ maxLength: 8 }),
  created_at: Type.Integer(),
});
const SubscriptionAnswer = Type.Object({
  subscription_id: Type.String({ maxLength: 32 }),
  plan_id: Type.String({ maxLength: 32 }),
  cid: Type.String({ maxLength: 32 }),
  price: PriceAnswer,
  subscription_status: Type.String({ maxLength: 8 }),
  billing_cycle: Type.String(),
  cycles_charged: Type.Integer(),
  next_charge_at: Type.Union([Type.Integer(), Type.Null()]),
  notification_url: Type.String(),
  created_at: Type.Integer(),
  ended_at: Type.Union([Type.Integer(), Type.Null()]),
});
const ENVELOPE = {
  status: Type.Integer(),
  description: Type.String({ maxLength: 256 }),
  error_details: Type.Optional(
    Type.String({ maxLength: 256, description: 'every field problem, when the description cannot name them all (docs/errors.md)' }),
  ),
  version: Type.String({ maxLength: 3 }),
  timestamp: Type.Integer(),
};
const PAGE = { page: Type.Integer(), page_size: Type.Integer(), total: Type.Integer() };
const answerWith = (...parts: ReturnType<typeof Type.Object>[]) =>
  Type.Intersect([Type.Object(ENVELOPE), ...parts.map((p) => Type.Partial(p))], { description: 'the fields are present when status is 0' });

const PLAN_NOT_FOUND = reply(Status.PLAN_NOT_FOUND, 'Plan not found');
const SUBSCRIPTION_NOT_FOUND = reply(Status.SUBSCRIPTION_NOT_FOUND, 'Subscription not found');

const planAnswer = (description: string, record: PlanRecord): JsonReply => ({ status: Status.OK, description, fields: planFields(record) });
const subscriptionAnswer = (description: string, row: SubscriptionRow, status: number = Status.OK): JsonReply => ({
  status,
  description,
  fields: subscriptionFields(row),
});
const currencyNotAllowed = (currency: string) =>
  reply(
    Status.CURRENCY_NOT_ALLOWED,
    `Currency not allowed: ${currency} is not taken by any of this merchant's gateways with merchant-initiated transactions enabled`,
  );
const duplicateSubscription = (subscription_id: string) =>
  reply(
    Status.DUPLICATE_SUBSCRIPTION,
    `Duplicate subscription: this customer already has an active subscription to this price with this card (${subscription_id})`,
  );
const CARD_TOKEN_NOT_FOUND = reply(Status.CARD_TOKEN_NOT_FOUND, 'Card token not found');
const CARD_EXPIRED = fieldError('Invalid field: card_token (the card has expired)');

/** One page of a list (page from 1): `read` gives that page's items, as answer fields, and the total. */
async function listAnswer(
  body: { page?: number | string | undefined; page_size?: number | string | undefined },
  description: string,
  name: 'plans' | 'subscriptions',
  read: (request: PageRequest) => Promise<{ items: JsonValue[]; total: number }>,
): Promise<JsonReply> {
  const page = body.page === undefined ? 1 : Number(body.page);
  const page_size = body.page_size === undefined ? DEFAULT_PAGE_SIZE : Number(body.page_size);
  const { items, total } = await read({ offset: (page - 1) * page_size, limit: page_size });
  return { status: Status.OK, description, fields: { [name]: items, page, page_size, total } };
}

const headerSigned = <T>(route: Omit<HeaderSignedRoute<T>, 'kind'>): HeaderSignedRoute<T> => ({ kind: 'header-signed', ...route });

/** The handler of a route with a path id (:planId, :subscriptionId): a malformed id is answered as not found without a lookup. */
function withPathId<T>(
  name: 'planId' | 'subscriptionId',
  not_found: JsonReply,
  handle: (context: HeaderSignedContext, body: T, id: string) => Promise<JsonReply>,
): HeaderSignedRoute<T>['handle'] {
  return async (context, body) => {
    const id = context.params[name] ?? '';
    return ID.test(id) ? handle(context, body, id) : not_found;
  };
}

// ---- plans ----------------------------------------------------------------------------------

const PlanCreateBody = bodySchema(
  {
    ...AUTH,
    name: 'required',
    description: 'optional',
    prices: 'required',
    billing_cycle: 'required',
    trial_period: 'optional',
    trial_period_cycle: 'optional',
    expiration_cycles: 'optional',
    retries_number: 'optional',
    retries_delay_days: 'optional',
    subscription_plan_status: 'optional',
  },
  VERSION,
);

const createPlanRoute = () =>
  headerSigned({
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
        case 'created':
          return planAnswer('Plan created', outcome.plan);
        case 'duplicate_currency':
          return fieldError(`Invalid field: prices (${outcome.currency} appears more than once; a plan has one price per currency)`);
        case 'currency_not_allowed':
          return currencyNotAllowed(outcome.currency);
      }
    },
  });

const PlanUpdateBody = bodySchema({ ...AUTH, name: 'optional', description: 'optional', subscription_plan_status: 'optional' }, VERSION);

const updatePlanRoute = () =>
  headerSigned({
    method: 'PUT',
    url: '/api/v1.3/subscription-plan/:planId',
    summary: 'Update a plan: name, description, subscription_plan_status (spec §4.9)',
    input: PlanUpdateBody,
    // Spec §7: a failed plan-update validation (an empty application_key, a bad field) is status -1.
    field_error_status: Status.INTERNAL_ERROR,
    response: answerWith(PlanAnswer),
    handle: withPathId('planId', PLAN_NOT_FOUND, async (context, body: BodyOf<typeof PlanUpdateBody>, plan_id) => {
      const outcome = await updatePlan(context.deps, context.merchant.merchant_id, plan_id, {
        name: body.name,
        description: body.description,
        status: body.subscription_plan_status,
      });
      return outcome.kind === 'not_found' ? PLAN_NOT_FOUND : planAnswer('Plan updated', outcome.plan);
    }),
  });

const ReadBody = bodySchema({ ...AUTH }, VERSION);

const readPlanRoute = () =>
  headerSigned({
    method: 'GET',
    url: '/api/v1.3/subscription-plan/:planId',
    summary: "Read one of the merchant's plans (query string: merchant_id, application_key, timestamp, version)",
    input: ReadBody,
    response: answerWith(PlanAnswer),
    handle: withPathId('planId', PLAN_NOT_FOUND, async (context, _body, plan_id) => {
      const outcome = await readPlan(context.deps, context.merchant.merchant_id, plan_id);
      return outcome.kind === 'not_found' ? PLAN_NOT_FOUND : planAnswer('Plan found', outcome.plan);
    }),
  });

const PlanListBody = bodySchema({ ...AUTH, page: 'optional', page_size: 'optional' }, VERSION);

const listPlansRoute = () =>
  headerSigned({
    method: 'GET',
    url: '/api/v1.3/subscription-plan',
    summary: "List the merchant's plans, deleted ones never (query string; page from 1, page_size up to 100)",
    input: PlanListBody,
    response: answerWith(Type.Object({ plans: Type.Array(PlanAnswer), ...PAGE })),
    handle: (context, body) =>
      listAnswer(body, 'Plans listed', 'plans', async (request) => {
        const { plans, total } = await listPlans(context.deps, context.merchant.merchant_id, request);
        return { items: plans.map(planFields), total };
      }),
  });

// ---- subscriptions ----------------------------------------------------------------------------

const SubscriptionCreateBody = bodySchema(
  {
    ...AUTH,
    plan_id: 'required',
    price_id: 'required',
    cid: 'required',
    card_token: 'required',
    activate: 'optional',
  },
  { ...VERSION, notification_url: SUBSCRIPTION_NOTIFICATION_URL },
);

const createSubscriptionRoute = () =>
  headerSigned({
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
        case 'created':
          // A replay (the same request again) made nothing: it answers the subscription the first one made, and says so.
          return outcome.replayed
            ? subscriptionAnswer(
                'Subscription already exists: the same request was received before; nothing new was created',
                outcome.subscription,
              )
            : subscriptionAnswer('Subscription created', outcome.subscription);
        case 'duplicate':
          return duplicateSubscription(outcome.subscription_id);
        // Spec §7: "subscription | -1 | Internal or lookup error, for example the plan id does not exist".
        case 'plan_not_found':
          return reply(Status.INTERNAL_ERROR, 'Plan not found');
        case 'plan_not_active':
          return reply(Status.PLAN_NOT_ACTIVE, 'Plan is inactive: it takes no new subscriptions');
        case 'price_not_found':
          return reply(Status.PRICE_NOT_FOUND, "Price not found: price_id is not one of the plan's prices");
        case 'card_token_not_found':
          return CARD_TOKEN_NOT_FOUND;
        case 'card_expired':
          return CARD_EXPIRED;
        case 'currency_not_allowed':
          return currencyNotAllowed(outcome.currency);
      }
    },
  });

const readSubscriptionRoute = () =>
  headerSigned({
    method: 'GET',
    url: '/api/v1.3/subscription/:subscriptionId',
    summary: "Read one of the merchant's subscriptions (query string: merchant_id, application_key, timestamp, version)",
    input: ReadBody,
    response: answerWith(SubscriptionAnswer),
    handle: withPathId('subscriptionId', SUBSCRIPTION_NOT_FOUND, async (context, _body, subscription_id) => {
      const outcome = await readSubscription(context.deps, context.merchant.merchant_id, subscription_id);
      return outcome.kind === 'not_found' ? SUBSCRIPTION_NOT_FOUND : subscriptionAnswer('Subscription found', outcome.subscription);
    }),
  });

const SubscriptionListBody = bodySchema(
  {
    ...AUTH,
    plan_id: 'optional',
    cid: 'optional',
    subscription_status: 'optional',
    page: 'optional',
    page_size: 'optional',
  },
  VERSION,
);

const listSubscriptionsRoute = () =>
  headerSigned({
    method: 'GET',
    url: '/api/v1.3/subscription',
    summary:
      "List the merchant's subscriptions, newest first (query string; filters plan_id, cid, subscription_status; page_size up to 100)",
    input: SubscriptionListBody,
    response: answerWith(Type.Object({ subscriptions: Type.Array(SubscriptionAnswer), ...PAGE })),
    handle: (context, body) =>
      listAnswer(body, 'Subscriptions listed', 'subscriptions', async (request) => {
        const { subscriptions, total } = await listSubscriptions(
          context.deps,
          context.merchant.merchant_id,
          {
            plan_id: body.plan_id,
            cid: body.cid,
            status: body.subscription_status,
          },
          request,
        );
        return { items: subscriptions.map(subscriptionFields), total };
      }),
  });

const cancelSubscriptionRoute = () =>
  headerSigned({
    method: 'POST',
    url: '/api/v1.3/subscription/:subscriptionId/cancel',
    summary: 'Cancel a subscription: no charge after this (cancelling again answers the same)',
    input: ReadBody,
    response: answerWith(SubscriptionAnswer),
    handle: withPathId('subscriptionId', SUBSCRIPTION_NOT_FOUND, async (context, _body, subscription_id) => {
      const outcome = await cancelSubscription(context.deps, context.merchant.merchant_id, subscription_id);
      switch (outcome.kind) {
        case 'not_found':
          return SUBSCRIPTION_NOT_FOUND;
        case 'ended':
          return subscriptionAnswer(
            'Subscription has expired; there is nothing to cancel',
            outcome.subscription,
            Status.SUBSCRIPTION_ENDED,
          );
        case 'canceled':
          return subscriptionAnswer(outcome.already ? 'Subscription was already canceled' : 'Subscription canceled', outcome.subscription);
      }
    }),
  });

const SubscriptionActivateBody = bodySchema({ ...AUTH, card_token: 'optional' }, VERSION);

const activateSubscriptionRoute = () =>
  headerSigned({
    method: 'POST',
    url: '/api/v1.3/subscription/:subscriptionId/activate',
    summary:
      "Activate an inactive subscription, optionally with another card_token: charged again from now (or the trial's end if never charged)",
    input: SubscriptionActivateBody,
    response: answerWith(SubscriptionAnswer),
    handle: withPathId(
      'subscriptionId',
      SUBSCRIPTION_NOT_FOUND,
      async (context, body: BodyOf<typeof SubscriptionActivateBody>, subscription_id) => {
        const outcome = await activateSubscription(context.deps, {
          merchant: context.merchant,
          subscription_id,
          card_token: body.card_token,
        });
        switch (outcome.kind) {
          case 'not_found':
            return SUBSCRIPTION_NOT_FOUND;
          case 'activated':
            return subscriptionAnswer(outcome.already ? 'Subscription is already active' : 'Subscription activated', outcome.subscription);
          case 'ended':
            return subscriptionAnswer(
              `Subscription has ended (${outcome.subscription.status}); it cannot be activated`,
              outcome.subscription,
              Status.SUBSCRIPTION_ENDED,
            );
          case 'card_change_refused':
            return fieldError(
              'Invalid field: card_token (the subscription is already active; a card is given only to activate an inactive one)',
            );
          case 'card_token_not_found':
            return CARD_TOKEN_NOT_FOUND;
          case 'card_expired':
            return CARD_EXPIRED;
          case 'currency_not_allowed':
            return currencyNotAllowed(outcome.currency);
          case 'duplicate':
            return duplicateSubscription(outcome.subscription_id);
        }
      },
    ),
  });

export function subscriptionRoutes(): HeaderSignedRoute<unknown>[] {
  return [
    createPlanRoute(),
    updatePlanRoute(),
    readPlanRoute(),
    listPlansRoute(),
    createSubscriptionRoute(),
    readSubscriptionRoute(),
    listSubscriptionsRoute(),
    cancelSubscriptionRoute(),
    activateSubscriptionRoute(),
  ];
}
