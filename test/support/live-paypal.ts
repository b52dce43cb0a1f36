// A live gateway (live-gateway.ts) whose merchant's `paypal` gateway points at the fake PayPal on
// 127.0.0.1 (test/support/paypal/fake.ts), its webhook endpoint registered at the fake under the
// webhook_id the gateway verifies with; and what a test does as the buyer or at PayPal: open the
// cashier and pay with PayPal (a deposit sent to the fake's approval page), approve or cancel
// there, settle a payout item. Each control of the fake resolves once its webhooks are delivered.
import { expect } from 'vitest';
import type { TestGatewayOptions } from './gateway.js';
import { type LiveGateway, startLiveGateway } from './live-gateway.js';
import { type FakePayPal, startFakePayPal } from './paypal/fake.js';
import type { StoreKind } from './stores.js';

export { FAILURE_ENV, LIVE_ENV, liveSale, operatorCall } from './live-gateway.js';

export interface LivePayPal extends LiveGateway {
  readonly fake: FakePayPal;
}

export interface LivePayPalOptions extends TestGatewayOptions {
  /** Options of the fake processor. */
  readonly fake?: Parameters<typeof startFakePayPal>[0];
}

export async function startLivePayPal(kind: StoreKind, options: LivePayPalOptions = {}): Promise<LivePayPal> {
  const fake = await startFakePayPal(options.fake);
  const live = await startLiveGateway(kind, options, {
    connector: 'paypal',
    currencies: ['USD', 'EUR', 'GBP'],
    settings: { client_id: fake.client_id, client_secret: fake.client_secret, webhook_id: fake.webhook_id, base_url: fake.url },
  });
  fake.setWebhookEndpoint(live.webhook_url);
  return {
    ...live,
    fake,
    async close() {
      await live.close();
      await fake.close();
    },
  };
}

/** The order id in a redirect to the fake's approval page (/checkoutnow?token=ORDER_ID). */
export function orderIdOf(live: LivePayPal, approval_url: string): string {
  const url = new URL(approval_url);
  expect(`${url.origin}${url.pathname}`).toBe(`${live.fake.url}/checkoutnow`);
  const token = url.searchParams.get('token');
  if (!token || !live.fake.order(token)) throw new Error(`fake paypal: no order behind ${approval_url}`);
  return token;
}
