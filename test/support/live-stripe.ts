// A live gateway (live-gateway.ts) whose merchant's `stripe` gateway points at the fake Stripe on
// 127.0.0.1 (test/support/stripe/fake.ts), its webhook endpoint registered at the fake with the
// gateway's whsec_ secret; and what a test does "at Stripe" to one of the gateway's transactions,
// found by our trace_id in the PaymentIntent's metadata (decisions §16): open and close a
// dispute, refund from the Dashboard (a reversal), let an authorization expire, make the next
// capture hang. Each resolves once the fake's webhook events are delivered to the gateway.
import type { TestGatewayOptions } from './gateway.js';
import { type LiveGateway, startLiveGateway } from './live-gateway.js';
import { type FakeDisputeView, type FakePaymentIntentView, type FakeRefundView, type FakeStripe, startFakeStripe } from './stripe/fake.js';
import type { StoreKind } from './stores.js';

export { FAILURE_ENV, LIVE_ENV, liveSale, operatorCall } from './live-gateway.js';

export const STRIPE_WEBHOOK_SECRET = 'whsec_paygateFakeStripe0123456789abcdef';

export interface LiveStripe extends LiveGateway {
  readonly fake: FakeStripe;
}

export interface LiveStripeOptions extends TestGatewayOptions {
  /** Options of the fake processor. */
  readonly fake?: Parameters<typeof startFakeStripe>[0];
}

export async function startLiveStripe(kind: StoreKind, options: LiveStripeOptions = {}): Promise<LiveStripe> {
  const fake = await startFakeStripe({ refund_settle_ms: null, ...options.fake });
  const live = await startLiveGateway(kind, options, {
    connector: 'stripe',
    currencies: ['USD', 'EUR', 'GBP'],
    settings: { secret_key: fake.secret_key, webhook_secret: STRIPE_WEBHOOK_SECRET, base_url: fake.url },
  });
  fake.setWebhookEndpoint(live.webhook_url, STRIPE_WEBHOOK_SECRET);
  return {
    ...live,
    fake,
    async close() {
      await live.close();
      await fake.close();
    },
  };
}

/** The PaymentIntent the gateway made for this trace_id (our metadata); throws when there is none or more than one. */
export function stripeIntentOf(live: LiveStripe, trace_id: number): FakePaymentIntentView {
  const intents = live.fake.intentsWithMetadata('paygate_trace_id', String(trace_id));
  if (intents.length !== 1) throw new Error(`fake stripe: ${intents.length} PaymentIntents for trace_id ${trace_id}`);
  return intents[0]!;
}

/** The cardholder disputes the payment of this trace_id (a sale, or a captured authorization): charge.dispute.created, signed. */
export function openStripeDispute(
  live: LiveStripe,
  trace_id: number,
  options?: Parameters<FakeStripe['openDispute']>[1],
): Promise<FakeDisputeView> {
  return live.fake.openDispute(stripeIntentOf(live, trace_id).id, options);
}

/** The dispute is decided: charge.dispute.closed (and .funds_reinstated when won). */
export function closeStripeDispute(live: LiveStripe, dispute_id: string, outcome: 'won' | 'lost'): Promise<FakeDisputeView> {
  return live.fake.closeDispute(dispute_id, outcome);
}

/** Someone refunds the payment of this trace_id in Stripe's Dashboard (no metadata of ours): a reversal, whole or in part. */
export function refundInStripeDashboard(live: LiveStripe, trace_id: number, amount_minor?: number): Promise<FakeRefundView> {
  return live.fake.refundFromDashboard(stripeIntentOf(live, trace_id).id, amount_minor);
}

/** Stripe cancels the uncaptured authorization of this trace_id, as when its authorization window ends. */
export function expireStripeAuthorization(live: LiveStripe, trace_id: number): Promise<void> {
  return live.fake.expireAuthorization(stripeIntentOf(live, trace_id).id);
}
