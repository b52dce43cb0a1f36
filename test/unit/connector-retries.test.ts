// The connectors' one retry of a request that was never sent (outbound/processor-http.ts
// worthRetryingUnsent), and what a refusal by the gateway's own guard (processor-guard.ts: the
// in-flight limit after its wait, an open circuit breaker) comes to: sent once, not twice, so a
// sale refused because its processor is down is answered at once and refused once; and on every
// connector a payment refused that way is an `error` (nothing was sent, the cascade may go on),
// never `unknown`. The sender is a stand-in that counts: the decision under test is the client's.
import { describe, expect, it } from 'vitest';
import { connectorOptions, loadConfig } from '../../src/config.js';
import { AdyenClient } from '../../src/connectors/adyen/client.js';
import { CheckoutClient } from '../../src/connectors/checkout/client.js';
import { type CardSaleRequest, type ConnectorContext, NO_CUSTOMER } from '../../src/connectors/connector.js';
import { PayPalClient } from '../../src/connectors/paypal/client.js';
import { CONNECTOR_DEFINITIONS } from '../../src/connectors/registry.js';
import { CardData } from '../../src/domain/cards.js';
import { AdjustableClock } from '../../src/domain/clock.js';
import type { ProcessorExchange, ProcessorRequest, ProcessorSender } from '../../src/outbound/processor-http.js';

/** Answers every request `not_sent` with `code`, and keeps what was sent. */
function refusing(code: string): ProcessorSender & { readonly sent: ProcessorRequest[] } {
  const sent: ProcessorRequest[] = [];
  return {
    sent,
    send: async (request): Promise<ProcessorExchange> => {
      sent.push(request);
      return { kind: 'not_sent', reason: `refused (${code})`, code, duration_ms: 0 };
    },
  };
}

const GUARD_CODES = ['ECIRCUITOPEN', 'EINFLIGHTLIMIT'];

const clients: [string, (http: ProcessorSender) => Promise<{ readonly kind: string; readonly code?: string }>][] = [
  ['Checkout.com', (http) => new CheckoutClient(http, 'https://api.sandbox.checkout.com', 'sk_sbox_x').post('/payments', {}, 'key-1')],
  ['Adyen', (http) => new AdyenClient(http, 'https://checkout-test.adyen.com/v71').post('/payments', 'AQE_key', {}, 'key-1')],
  [
    'PayPal',
    (http) =>
      new PayPalClient(http, new AdjustableClock(), 'https://api-m.sandbox.paypal.com', 'client-id', 'client-secret').post(
        '/v2/checkout/orders',
        {},
        'request-1',
      ),
  ],
];

describe.each(clients)("%s's client", (_name, post) => {
  it('sends once more a request whose connection could not be made', async () => {
    const http = refusing('ECONNREFUSED');
    expect(await post(http)).toMatchObject({ kind: 'not_sent', code: 'ECONNREFUSED' });
    expect(http.sent).toHaveLength(2);
  });

  it.each(GUARD_CODES)("sends a request the gateway's guard refused (%s) once, not again", async (code) => {
    const http = refusing(code);
    expect(await post(http)).toMatchObject({ kind: 'not_sent', code });
    expect(http.sent).toHaveLength(1);
  });
});

describe('a sale the guard refuses, on every connector that has one', () => {
  const settings: Record<string, Record<string, string>> = {
    checkout: {
      secret_key: 'sk_sbox_0123456789',
      processing_channel_id: `pc_${'a'.repeat(26)}`,
      webhook_secret: 'w'.repeat(32),
      base_url: 'https://api.sandbox.checkout.com',
    },
    // The `stripe` package retries every connection error once itself: the guard's refusal is given
    // to it as an answer it does not retry (stripe/http-client.ts), so it too is sent once.
    stripe: { secret_key: 'sk_test_0123456789abcdef', webhook_secret: 'whsec_0123456789abcdef', base_url: 'https://api.stripe.com' },
    adyen: {
      api_key: 'AQE_0123456789',
      merchant_account: 'PaygateECOM',
      hmac_key: '00'.repeat(32),
      base_url: 'https://checkout-test.adyen.com',
    },
  };
  const sale: CardSaleRequest = {
    trace_id: 1_234_567_890,
    reference: 'ORDER-1',
    merchant_id: 'merchant-1',
    amount_minor: 1000,
    currency: 'EUR',
    card: new CardData('4111111111111111', { month: 3, year: 2030 }, '737'),
    customer: NO_CUSTOMER,
    initiated_by: 'customer',
    mit_retry: false,
    return_to: { success_url: 'https://shop.example/ok', failure_url: 'https://shop.example/failed' },
    capture: true,
  };

  it.each(Object.keys(settings).flatMap((name) => GUARD_CODES.map((code) => [name, code])))(
    '%s, refused %s: an error, unreachable, with nothing charged, asked of the guard once; never unknown',
    async (name, code) => {
      const http = refusing(code!);
      const context: ConnectorContext = {
        options: connectorOptions(loadConfig({})),
        clock: new AdjustableClock(),
        public_url: () => 'https://pay.example.com',
        http,
      };
      const connector = CONNECTOR_DEFINITIONS.find((d) => d.name === name)!.create(settings[name]!, context, 'f'.repeat(32));
      const result = await connector.sale(sale);
      expect(result).toMatchObject({ kind: 'error', error_code: 'unreachable' });
      expect((result as { error_details: string }).error_details).toContain(code);
      expect(http.sent).toHaveLength(1);
    },
  );

  it("stripe: a connection refused by the processor (not the guard) is still the package's to retry once", async () => {
    const http = refusing('ECONNREFUSED');
    const context: ConnectorContext = {
      options: connectorOptions(loadConfig({})),
      clock: new AdjustableClock(),
      public_url: () => 'https://pay.example.com',
      http,
    };
    const connector = CONNECTOR_DEFINITIONS.find((d) => d.name === 'stripe')!.create(settings.stripe!, context, 'f'.repeat(32));
    expect(await connector.sale(sale)).toMatchObject({ kind: 'error', error_code: 'unreachable' });
    expect(http.sent).toHaveLength(2);
  });
});
