// A live gateway (live-gateway.ts) whose merchant's `checkout` gateway points at the fake
// Checkout.com on 127.0.0.1 (test/support/checkout/fake.ts). A test of authorizations, captures,
// voids, disputes and dashboard refunds through the gateway steers the fake with its controls
// (live.fake.openDispute, moveDispute, refundFromDashboard, hangNextCapture, declineNext,
// failNext; listed in its header comment) and reads it (live.fake.payment(id): status,
// captured_amount, released_amount, actions, disputes).
import { type FakeCheckout, startFakeCheckout } from './checkout/fake.js';
import type { TestGatewayOptions } from './gateway.js';
import { type LiveGateway, startLiveGateway } from './live-gateway.js';
import type { StoreKind } from './stores.js';

export { FAILURE_ENV, LIVE_ENV, liveSale, operatorCall } from './live-gateway.js';
export type { FakeAction, FakeDisputeMove, FakeDisputeOptions, FakeDisputeView } from './checkout/fake.js';

export const CHECKOUT_WEBHOOK_SECRET = 'whsec-fake-checkout-0123456789abcdef';
export const PROCESSING_CHANNEL = 'pc_paygatefake7xkq3mzt2vwnd5h';
export const CURRENCY_ACCOUNT = 'ca_paygatefake7xkq3mzt2vwnd5h';

export interface LiveCheckout extends LiveGateway {
  readonly fake: FakeCheckout;
}

export interface LiveCheckoutOptions extends TestGatewayOptions {
  /** Settings beyond the required ones (three_ds, currency_account_id...). */
  readonly settings?: Readonly<Record<string, string>>;
  /** Options of the fake processor. */
  readonly fake?: Parameters<typeof startFakeCheckout>[0];
}

export async function startLiveCheckout(kind: StoreKind, options: LiveCheckoutOptions = {}): Promise<LiveCheckout> {
  const fake = await startFakeCheckout({ payout_settle_ms: null, ...options.fake });
  const live = await startLiveGateway(kind, options, {
    connector: 'checkout',
    currencies: ['USD', 'EUR', 'GBP'],
    settings: {
      secret_key: fake.secret_key,
      processing_channel_id: PROCESSING_CHANNEL,
      webhook_secret: CHECKOUT_WEBHOOK_SECRET,
      base_url: fake.url,
      currency_account_id: CURRENCY_ACCOUNT,
      ...options.settings,
    },
  });
  fake.setWebhookEndpoint(live.webhook_url, CHECKOUT_WEBHOOK_SECRET);
  return {
    ...live,
    fake,
    async close() {
      await live.close();
      await fake.close();
    },
  };
}
