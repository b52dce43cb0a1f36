// The start of each sandbox flow trigger (domain/sandbox-triggers.ts, docs/triggers.md): a real
// flow of the merchant's, through the same operations as its API calls (a sale, a refund, a card
// payout, a plan and a subscription) and, where a processor or an operator acts, the same ones
// they reach (the sandbox's chargeback and reversal, the operator's payout review, a cancellation).
// The sandbox's test cards and amounts decide the outcomes (connectors/sandbox/connector.ts); what
// comes later (an asynchronous result, a 3-D Secure time-out, a renewal) is done by the running
// gateway's own workers. Every status change is notified to the merchant's notification_url like
// any other. Waiting for the end and reporting what was sent: operations/sandbox-trigger-run.ts.
import { randomBytes } from 'node:crypto';
import type { Customer } from '../connectors/connector.js';
import { CardData } from '../domain/cards.js';
import type { Gateway, Merchant } from '../domain/merchants.js';
import type { TriggerDefinition } from '../domain/sandbox-triggers.js';
import type { OperationDeps } from './deps.js';
import { requestFingerprint } from './lifecycle.js';
import { processCardPayout } from './payout.js';
import { reviewPayout } from './payout-review.js';
import { refundSale } from './refund.js';
import { type Identity, processSale } from './sale.js';
import { runSandboxTrigger } from './sandbox-triggers.js';
import { createPlan } from './subscription-plans.js';
import { cancelSubscription, createSubscription } from './subscriptions.js';
import { tokenizeCard } from './tokenize.js';

/** The sandbox's test card (decisions §7: any Luhn-valid number; the CVV or amount decides). */
export const TRIGGER_PAN = '4111111111111111';
/** What each flow charges when the amount decides nothing: 10.00 in a two-decimal currency. */
const PLAIN_AMOUNT_MINOR = 1000;

/** The cardholder of every trigger's payment: a made-up customer, as in the docs' examples. */
const TEST_CUSTOMER: Customer = {
  first_name: 'Jane',
  last_name: 'Doe',
  email: 'jane@example.com',
  phone: '14155550123',
  address: '1 Market Street',
  city: 'San Francisco',
  state: 'CA',
  zip: '94105',
  country: 'US',
  ip: '203.0.113.7',
};

/** Where a flow's end is read: a transaction's notifications, or a subscription's events. */
export type FlowSubject =
  { readonly kind: 'transaction'; readonly trace_id: number } | { readonly kind: 'subscription'; readonly subscription_id: string };

export interface FlowStarted {
  readonly kind: 'started';
  readonly subject: FlowSubject;
  /** Every transaction the flow made so far, oldest first (a refund's sale, then the refund). */
  readonly trace_ids: readonly number[];
}

export type FlowRefusal =
  | { readonly kind: 'merchant_not_found' }
  /** The merchant has no enabled sandbox gateway (live gateways only, or all disabled). */
  | { readonly kind: 'no_sandbox_gateway' }
  /** None given, and none of the merchant's recent transactions had one. */
  | { readonly kind: 'no_notification_url' }
  /** A step was answered otherwise than the sandbox's table says (a gateway setting, a disabled MIT…): why. */
  | { readonly kind: 'flow_failed'; readonly reason: string };

export interface FlowRequest {
  readonly merchant_id: string;
  /** Where the notifications go; null: the newest notification_url of the merchant's recent transactions. */
  readonly notification_url: string | null;
}

/** What every step of one flow shares. */
interface Flow {
  readonly deps: OperationDeps;
  readonly trigger: TriggerDefinition;
  readonly merchant: Merchant;
  readonly gateway: Gateway;
  readonly currency: string;
  readonly identity: Identity;
  readonly api_version: string;
  readonly notification_url: string;
  /** Random, in every order_id and cid of the flow, so each run is new (no replay of an earlier one). */
  readonly tag: string;
  readonly made: number[];
}

/** How far back the default notification_url is looked for. */
const RECENT_TRANSACTIONS = 50;

export async function startFlow(deps: OperationDeps, trigger: TriggerDefinition, request: FlowRequest): Promise<FlowStarted | FlowRefusal> {
  const merchant = await deps.merchants.find(request.merchant_id);
  if (!merchant || merchant.disabled) return { kind: 'merchant_not_found' };
  const gateway = merchant.gateways.find((g) => g.connector === 'sandbox' && g.enabled && g.currencies.length > 0);
  if (!gateway || !deps.connectors.runsHere('sandbox')) return { kind: 'no_sandbox_gateway' };
  const notification_url = request.notification_url ?? (await recentNotificationUrl(deps, merchant.merchant_id));
  if (notification_url === null) return { kind: 'no_notification_url' };
  const application = merchant.applications[0];
  const frontend = merchant.frontends[0];
  const identity: Identity | null = application
    ? { kind: 'application_key', value: application }
    : frontend
      ? { kind: 'frontend', value: frontend.name }
      : null;
  if (!identity) return { kind: 'flow_failed', reason: 'the merchant has neither an application_key nor a frontend' };
  const flow: Flow = {
    deps,
    trigger,
    merchant,
    gateway,
    currency: gateway.currencies.includes('USD') ? 'USD' : gateway.currencies[0]!,
    identity,
    api_version: identity.kind === 'application_key' ? '1.2' : '1.1',
    notification_url,
    tag: randomBytes(5).toString('hex'),
    made: [],
  };
  try {
    return await FLOWS[trigger.name]!(flow);
  } catch (error) {
    if (error instanceof FlowStep) return { kind: 'flow_failed', reason: error.message };
    throw error;
  }
}

/** The notification_url of the newest of the merchant's recent transactions that had one. */
async function recentNotificationUrl(deps: OperationDeps, merchant_id: string): Promise<string | null> {
  const recent = await deps.store.transactions.search({ merchant_id }, null, RECENT_TRANSACTIONS);
  return recent.find((row) => row.notification_url !== null)?.notification_url ?? null;
}

/** A step answered otherwise than the flow needs: the flow stops and says why. */
class FlowStep extends Error {}

function transaction(flow: Flow, trace_id: number): FlowStarted {
  return { kind: 'started', subject: { kind: 'transaction', trace_id }, trace_ids: [...flow.made] };
}

function orderId(flow: Flow, step: string): string {
  return `trigger-${step}-${flow.tag}`;
}

/** The test card, valid for three more years on the gateway clock (the sandbox clock may have moved). */
function testCard(flow: Flow, cvv: string | null): CardData {
  const year = new Date(flow.deps.clock.now_ms()).getUTCFullYear() + 3;
  return new CardData(TRIGGER_PAN, { month: 12, year }, cvv);
}

/** What every request of the flow carries besides its own fields. */
function requestOf(flow: Flow, step: string, amount_minor: number) {
  const order_id = orderId(flow, step);
  return {
    merchant: flow.merchant,
    identity: flow.identity,
    api_version: flow.api_version,
    order_id,
    amount_minor,
    currency: flow.currency,
    pin: `trigger-${flow.tag}`,
    notification_url: flow.notification_url,
    request_fingerprint: requestFingerprint(flow.deps, { trigger: flow.trigger.name, order_id, amount: amount_minor }),
  };
}

/** A customer's card sale on the merchant's sandbox gateway, as POST /api/process makes it: its trace_id and status. */
async function sale(flow: Flow, cvv: string, amount_minor = PLAIN_AMOUNT_MINOR): Promise<{ trace_id: number; status: string }> {
  const outcome = await processSale(flow.deps, {
    ...requestOf(flow, 'sale', amount_minor),
    card: testCard(flow, cvv),
    customer: TEST_CUSTOMER,
    gateway: flow.gateway.gateway_id,
    return_url: null,
    variables: {},
    initiated_by: 'customer',
    mit_retry: false,
  });
  if (outcome.kind !== 'processed') throw new FlowStep(`the sale was not processed (${outcome.kind})`);
  const trace_id = Number(outcome.answer.trace_id);
  flow.made.push(trace_id);
  return { trace_id, status: String(outcome.answer.transaction_status) };
}

async function approvedSale(flow: Flow): Promise<number> {
  const made = await sale(flow, '568');
  if (made.status !== 'approved') throw new FlowStep(`the sale ${made.trace_id} is ${made.status}, not approved`);
  return made.trace_id;
}

/** A card payout on the sandbox gateway; one its gateway holds for the operator is approved as the operator would. */
async function cardPayout(flow: Flow, amount_minor: number): Promise<number> {
  const outcome = await processCardPayout(flow.deps, {
    ...requestOf(flow, 'payout', amount_minor),
    card: testCard(flow, null),
    customer: TEST_CUSTOMER,
    gateway: flow.gateway.gateway_id,
    return_url: new URL('/', flow.notification_url).href,
    variables: {},
  });
  if (outcome.kind !== 'processed') throw new FlowStep(`the payout was not processed (${outcome.kind})`);
  const trace_id = Number(outcome.answer.trace_id);
  flow.made.push(trace_id);
  if (outcome.answer.transaction_status === 'requested') {
    const released = await reviewPayout(flow.deps, trace_id, 'approve', { note: `sandbox trigger ${flow.trigger.name}` });
    if (released.kind !== 'changed') throw new FlowStep(`the held payout ${trace_id} could not be approved (${released.kind})`);
  }
  return trace_id;
}

/** A plan of one price and a subscription to it with a stored test card, as the v1.3 API makes them. */
async function subscribe(
  flow: Flow,
  plan: { amount_minor: number; trial_days: number; expiration_cycles: number | null; retries_number: number },
): Promise<string> {
  if (flow.identity.kind !== 'application_key') throw new FlowStep('subscriptions need an application_key, and the merchant has none');
  const tokenized = await tokenizeCard(flow.deps, flow.merchant, `trigger-${flow.tag}`, testCard(flow, null));
  if (tokenized.kind !== 'tokenized') throw new FlowStep(`the test card was not stored (${tokenized.reason})`);
  const created_plan = await createPlan(flow.deps, flow.merchant, {
    name: `Sandbox trigger ${flow.trigger.name}`,
    description: 'Made by a sandbox trigger (docs/triggers.md)',
    prices: [{ amount: plan.amount_minor, currency: flow.currency }],
    billing_cycle: 'monthly',
    trial_period: plan.trial_days,
    trial_period_cycle: 'days',
    expiration_cycles: plan.expiration_cycles,
    retries_number: plan.retries_number,
    retries_delay_days: 1,
    status: 'active',
  });
  if (created_plan.kind !== 'created')
    throw new FlowStep(`no plan in ${flow.currency}: no gateway with merchant-initiated charges takes it`);
  const created = await createSubscription(flow.deps, {
    merchant: flow.merchant,
    application_key: flow.identity.value,
    plan_id: created_plan.plan.plan.plan_id,
    price_id: created_plan.plan.prices[0]!.price_id,
    cid: `trigger-${flow.tag}`,
    card_token: tokenized.card_token,
    activate: true,
    notification_url: flow.notification_url,
  });
  if (created.kind !== 'created') throw new FlowStep(`the subscription was not created (${created.kind})`);
  return created.subscription.subscription_id;
}

function subscription(subscription_id: string): FlowStarted {
  return { kind: 'started', subject: { kind: 'subscription', subscription_id }, trace_ids: [] };
}

type FlowStart = (flow: Flow) => Promise<FlowStarted>;

/** One start per trigger of domain/sandbox-triggers.ts (a unit test checks that none is missing). */
export const FLOWS: Readonly<Record<string, FlowStart>> = {
  'sale.approved': async (flow) => transaction(flow, await approvedSale(flow)),
  'sale.rejected': async (flow) => transaction(flow, (await sale(flow, '000')).trace_id),
  // pending now; the due work applies the processor's later result (PAYGATE_SANDBOX_SETTLE_SECONDS).
  'sale.pending_then_approved': async (flow) => transaction(flow, (await sale(flow, '222')).trace_id),
  // pending_async at a 3-D Secure page that never answers; the due work times it out.
  'sale.3ds_timed_out': async (flow) => transaction(flow, (await sale(flow, '588', 713)).trace_id),
  'refund.approved': async (flow) => {
    const sale_trace_id = await approvedSale(flow);
    const sale_row = await flow.deps.store.transactions.get(sale_trace_id);
    if (!sale_row) throw new FlowStep(`the sale ${sale_trace_id} was not found`);
    const outcome = await refundSale(flow.deps, { ...requestOf(flow, 'refund', sale_row.amount_minor), return_url: null }, sale_row);
    if (outcome.kind !== 'processed') throw new FlowStep(`the refund was not processed (${outcome.kind})`);
    const trace_id = Number(outcome.answer.trace_id);
    flow.made.push(trace_id);
    return transaction(flow, trace_id);
  },
  'payout.approved': async (flow) => transaction(flow, await cardPayout(flow, PLAIN_AMOUNT_MINOR)),
  'payout.rejected': async (flow) => transaction(flow, await cardPayout(flow, 1400)),
  'payout.reversed': async (flow) => {
    const trace_id = await cardPayout(flow, PLAIN_AMOUNT_MINOR);
    const reversed = await reviewPayout(flow.deps, trace_id, 'reverse', { note: `sandbox trigger ${flow.trigger.name}` });
    if (reversed.kind !== 'changed') throw new FlowStep(`the payout ${trace_id} could not be reversed (${reversed.kind})`);
    return transaction(flow, trace_id);
  },
  'sale.chargeback': async (flow) => {
    const trace_id = await approvedSale(flow);
    const done = await runSandboxTrigger(flow.deps, 'chargeback', trace_id, null);
    if (done.kind !== 'done') throw new FlowStep(`the chargeback of ${trace_id} was refused (${done.kind})`);
    return transaction(flow, trace_id);
  },
  'sale.reversed': async (flow) => {
    const trace_id = await approvedSale(flow);
    const done = await runSandboxTrigger(flow.deps, 'reversal', trace_id, null);
    if (done.kind !== 'done') throw new FlowStep(`the reversal of ${trace_id} was refused (${done.kind})`);
    return transaction(flow, trace_id);
  },
  // Due at once: the billing worker charges it on its next pass. One cycle, so it expires after.
  'subscription.renewed': async (flow) =>
    subscription(await subscribe(flow, { amount_minor: PLAIN_AMOUNT_MINOR, trial_days: 0, expiration_cycles: 1, retries_number: 1 })),
  // Price 1402 fails every merchant-initiated charge; one retry a day later, then it is deactivated.
  'subscription.payment_failed': async (flow) =>
    subscription(await subscribe(flow, { amount_minor: 1402, trial_days: 0, expiration_cycles: null, retries_number: 1 })),
  // In its trial nothing is charged before the cancellation.
  'subscription.canceled': async (flow) => {
    const subscription_id = await subscribe(flow, {
      amount_minor: PLAIN_AMOUNT_MINOR,
      trial_days: 30,
      expiration_cycles: null,
      retries_number: 1,
    });
    const canceled = await cancelSubscription(
      flow.deps,
      flow.merchant.merchant_id,
      subscription_id,
      `cancelled by the sandbox trigger ${flow.trigger.name}`,
    );
    if (canceled.kind !== 'canceled') throw new FlowStep(`the subscription ${subscription_id} was not canceled (${canceled.kind})`);
    return subscription(subscription_id);
  },
};
