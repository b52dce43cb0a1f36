// A live gateway (live-gateway.ts) whose merchant's `adyen` gateway points at the fake Adyen on
// 127.0.0.1 (test/support/adyen/fake.ts), the fake's notifications sent to the gateway's
// webhook_url and signed with the gateway's HMAC key. A test steers the fake with its controls
// (settlePayout, chargeback, customerAreaRefund, failNext, holdEvents, redeliver, sendRaw;
// listed in its header comment) and reads it (payment(psp), payout(psp), requestsTo(route)).
import { type FakeAdyen, type FakeAdyenOptions, startFakeAdyen } from './adyen/fake.js';
import type { TestGatewayOptions } from './gateway.js';
import { type LiveGateway, startLiveGateway } from './live-gateway.js';
import type { StoreKind } from './stores.js';

export { FAILURE_ENV, LIVE_ENV, liveSale, operatorCall } from './live-gateway.js';
export { REFUSED_HOLDERS, TEST_CARD_CVCS, THREEDS_CARD } from './adyen/fake.js';

export interface LiveAdyen extends LiveGateway {
  readonly fake: FakeAdyen;
}

export interface LiveAdyenOptions extends TestGatewayOptions {
  /** Options of the fake processor. */
  readonly fake?: FakeAdyenOptions;
}

export async function startLiveAdyen(kind: StoreKind, options: LiveAdyenOptions = {}): Promise<LiveAdyen> {
  const fake = await startFakeAdyen(options.fake);
  const live = await startLiveGateway(kind, options, {
    connector: 'adyen',
    currencies: ['USD', 'EUR', 'GBP'],
    settings: {
      api_key: fake.api_key,
      merchant_account: fake.merchant_account,
      hmac_key: fake.hmac_key,
      payout_api_key: fake.payout_api_key,
      payout_reviewer_api_key: fake.payout_reviewer_api_key,
      base_url: fake.url,
    },
  });
  fake.setWebhookUrl(live.webhook_url);
  return {
    ...live,
    fake,
    async close() {
      await live.close();
      await fake.close();
    },
  };
}
