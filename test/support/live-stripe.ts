// A live gateway (live-gateway.ts) whose merchant's `stripe` gateway points at the fake Stripe on
// 127.0.0.1 (test/support/stripe/fake.ts), its webhook endpoint registered at the fake with the
// gateway's whsec_ secret.
import type { TestGatewayOptions } from './gateway.js';
import { type LiveGateway, startLiveGateway } from './live-gateway.js';
import { type FakeStripe, startFakeStripe } from './stripe/fake.js';
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
