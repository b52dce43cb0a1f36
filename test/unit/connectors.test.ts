// The connectors as the rest of the gateway relies on them: each declares the capabilities it
// has and no others (routing refuses with status 15 on the declaration, the operation on the
// method), runs only where it may, answers a setting that does not fit with the shape it
// declares, and Checkout.com's one status map gives every status and
// response code its meaning, declines classified soft or hard for a cascade.
import { describe, expect, it } from 'vitest';
import { connectorOptions, loadConfig } from '../../src/config.js';
import type { Connector, ConnectorContext } from '../../src/connectors/connector.js';
import { CONNECTOR_DEFINITIONS } from '../../src/connectors/registry.js';
import { declineKind, eventMeaning, paymentResult, STATUS_MEANING } from '../../src/connectors/checkout/status-map.js';
import { CKO_PAYMENT_STATUSES, type CkoPayment } from '../../src/connectors/checkout/wire.js';
import * as stripeMap from '../../src/connectors/stripe/status-map.js';
import { readIntent, readRefund } from '../../src/connectors/stripe/connector.js';
import { readDispute } from '../../src/connectors/paypal/disputes.js';
import { paypalSpec } from '../support/paypal/spec.js';
import { AdjustableClock } from '../../src/domain/clock.js';
import { checkSettings } from '../../src/operations/gateways.js';
import { ProcessorHttp } from '../../src/outbound/processor-http.js';

const context: ConnectorContext = {
  options: connectorOptions(loadConfig({})),
  clock: new AdjustableClock(),
  public_url: () => 'https://pay.example.com',
  http: new ProcessorHttp({ timeout_ms: 1000, connect_timeout_ms: 500, max_reply_bytes: 1024, allow_private: false }),
};

const CHECKOUT_SETTINGS = {
  secret_key: 'sk_sbox_0123456789',
  processing_channel_id: `pc_${'a'.repeat(26)}`,
  webhook_secret: 'w'.repeat(32),
  base_url: 'https://api.sandbox.checkout.com',
  currency_account_id: `ca_${'b'.repeat(26)}`,
};

function built(name: string, settings: Record<string, string> = {}): Connector {
  const definition = CONNECTOR_DEFINITIONS.find((d) => d.name === name)!;
  return definition.create(settings, context, 'f'.repeat(32));
}

describe('connector definitions', () => {
  it('each connector has exactly the capabilities it declares', () => {
    const cases: [string, Record<string, string>][] = [
      ['sandbox', {}],
      ['checkout', CHECKOUT_SETTINGS],
      ['stripe', { secret_key: 'sk_test_0123456789abcdef', webhook_secret: 'whsec_0123456789abcdef', base_url: 'https://api.stripe.com' }],
      [
        'paypal',
        {
          client_id: 'paypal-client-0123',
          client_secret: 'paypal-secret-0123456789',
          webhook_id: 'WH-0123456789',
          base_url: 'https://api-m.sandbox.paypal.com',
        },
      ],
      [
        'adyen',
        {
          api_key: 'AQE_0123456789',
          merchant_account: 'PaygateECOM',
          hmac_key: '00'.repeat(32),
          payout_api_key: 'AQE_payout_0123',
          payout_reviewer_api_key: 'AQE_review_0123',
          base_url: 'https://x.example',
        },
      ],
    ];
    expect(cases.map(([name]) => name).sort()).toEqual(CONNECTOR_DEFINITIONS.map((d) => d.name).sort());
    for (const [name, settings] of cases) {
      const declared = CONNECTOR_DEFINITIONS.find((d) => d.name === name)!.capabilities;
      const connector = built(name, settings);
      expect(connector.name).toBe(name);
      expect(
        {
          card_payout: typeof connector.cardPayout === 'function',
          direct_payout: connector.direct !== undefined,
          wallet_deposit: typeof connector.walletDeposit === 'function',
          webhooks: typeof connector.readWebhook === 'function',
          authorize_capture: connector.authorizations !== undefined,
        },
        name,
      ).toEqual({
        card_payout: declared.card_payout,
        direct_payout: declared.direct_payout,
        wallet_deposit: declared.wallet_deposit,
        webhooks: declared.webhooks,
        authorize_capture: declared.authorize_capture,
      });
    }
  });

  it('the sandbox runs in sandbox mode only; Checkout.com in both; a Checkout.com gateway without a payout account makes no payouts', () => {
    expect(CONNECTOR_DEFINITIONS.find((d) => d.name === 'sandbox')!.environments).toEqual(['sandbox']);
    expect(CONNECTOR_DEFINITIONS.find((d) => d.name === 'checkout')!.environments).toEqual(['sandbox', 'live']);
    expect(CONNECTOR_DEFINITIONS.find((d) => d.name === 'stripe')!.environments).toEqual(['sandbox', 'live']);
    const { currency_account_id: _, ...without } = CHECKOUT_SETTINGS;
    expect(built('checkout', without).cardPayout).toBeUndefined();
  });

  it("a Stripe gateway in live mode refuses a test key at Stripe's own address and plain http, naming the setting", () => {
    const stripe = CONNECTOR_DEFINITIONS.find((d) => d.name === 'stripe')!;
    const live = { environment: 'live' as const, allow_private_urls: false };
    const settings = {
      secret_key: 'sk_test_0123456789abcdef',
      webhook_secret: 'whsec_0123456789abcdef',
      base_url: 'https://api.stripe.com',
    };
    expect(stripe.check!(settings, live)).toEqual({ field: 'secret_key', reason: 'a test key (sk_test_) takes no live payments' });
    expect(stripe.check!({ ...settings, secret_key: 'sk_live_0123456789abcdef' }, live)).toBeNull();
    expect(stripe.check!({ ...settings, secret_key: 'sk_live_0123456789abcdef', base_url: 'http://stripe.internal:8080' }, live)).toEqual({
      field: 'base_url',
      reason: 'must be an https:// address in live mode',
    });
    expect(stripe.check!(settings, { environment: 'sandbox', allow_private_urls: false })).toBeNull();
  });

  it('every setting has a description, and secrets are marked secret', () => {
    for (const definition of CONNECTOR_DEFINITIONS) {
      for (const setting of definition.settings) {
        expect(setting.description.length, `${definition.name}.${setting.name}`).toBeGreaterThan(10);
        if (/secret|key/.test(setting.name) && setting.name !== 'currency_account_id') expect(setting.secret, setting.name).toBe(true);
      }
    }
  });

  it('a value that does not fit a setting is refused with what is wrong and the shape it declares; a secret one by its length only', () => {
    const deps = { environment: 'sandbox' as const, allow_private_urls: false };
    // A value no setting of this release takes: spaces and a control character.
    const unfit = 'not\u0001 a fit';
    for (const definition of CONNECTOR_DEFINITIONS) {
      for (const setting of definition.settings) {
        const where = `${definition.name}.${setting.name}`;
        expect(setting.shape.length, where).toBeGreaterThan(5);
        const refused = checkSettings(deps, definition, { [setting.name]: unfit });
        expect(refused, where).toEqual({
          ok: false,
          field: setting.name,
          reason: setting.secret
            ? `expected ${setting.shape}, got a value of ${unfit.length} characters that does not fit (not shown: the setting is secret)`
            : `expected ${setting.shape}, got ${JSON.stringify(unfit)}`,
        });
        if (setting.secret) expect(JSON.stringify(refused)).not.toContain('a fit');
      }
    }
    const checkout = CONNECTOR_DEFINITIONS.find((d) => d.name === 'checkout')!;
    expect(checkSettings(deps, checkout, { ...CHECKOUT_SETTINGS, processing_channel_id: 'xyz' })).toEqual({
      ok: false,
      field: 'processing_channel_id',
      reason: 'expected pc_ followed by 26 lowercase letters or digits, got "xyz"',
    });
    const long = 'a'.repeat(70);
    expect(checkSettings(deps, checkout, { ...CHECKOUT_SETTINGS, funds_transfer_type: long })).toMatchObject({
      reason: `expected 1 to 20 letters, digits or underscores, such as FD, got "${'a'.repeat(64)}"… (70 characters)`,
    });
    const { secret_key: _secret_key, ...without_key } = CHECKOUT_SETTINGS;
    expect(checkSettings(deps, checkout, without_key)).toMatchObject({
      field: 'secret_key',
      reason:
        "required: the account's secret key (sk_...), sent as Authorization: Bearer; expected sk_ followed by 8 to 200 printable characters without spaces",
    });
  });
});

describe('Checkout.com status map', () => {
  const payment = (status: CkoPayment['status'], overrides: Partial<CkoPayment> = {}): CkoPayment => ({
    id: 'pay_1',
    status,
    approved: null,
    amount: 1000,
    currency: 'USD',
    response_code: null,
    response_summary: null,
    reference: 'o-1',
    trace_id: 1,
    redirect_url: null,
    ...overrides,
  });
  const asked = { amount_minor: 1000, currency: 'USD' };

  it('gives every published status a meaning, for a sale and for a payout', () => {
    expect(Object.keys(STATUS_MEANING).sort()).toEqual([...CKO_PAYMENT_STATUSES].sort());
    const kinds = (kind: 'sale' | 'payout') =>
      Object.fromEntries(CKO_PAYMENT_STATUSES.map((s) => [s, paymentResult(payment(s), kind, asked, 1000).kind]));
    expect(kinds('sale')).toEqual({
      Pending: 'pending',
      Authorized: 'approved',
      'Card Verified': 'approved',
      Voided: 'rejected',
      'Partially Captured': 'approved',
      Captured: 'approved',
      'Partially Refunded': 'approved',
      Refunded: 'approved',
      Declined: 'rejected',
      Canceled: 'rejected',
      Expired: 'rejected',
      Paid: 'approved',
    });
    expect(kinds('payout')).toMatchObject({
      Pending: 'pending',
      Authorized: 'pending',
      Paid: 'approved',
      Declined: 'rejected',
      'Card Verified': 'rejected',
    });
    // A pending sale with the processor's page to go to is a redirect (pending_async), with that page.
    expect(paymentResult(payment('Pending', { redirect_url: 'https://3ds.example/x' }), 'sale', asked, 1000)).toMatchObject({
      kind: 'redirect',
      redirect_url: 'https://3ds.example/x',
      psp_transaction_id: 'pay_1',
    });
  });

  it("keeps the processor's code and words, and what it charged", () => {
    expect(
      paymentResult(payment('Declined', { response_code: '20051', response_summary: 'Insufficient Funds' }), 'sale', asked, 1000),
    ).toMatchObject({ kind: 'rejected', error_code: '20051', error_details: 'Insufficient Funds', decline: 'soft' });
    expect(paymentResult(payment('Captured', { amount: 990, currency: 'EUR', response_code: '10000' }), 'sale', asked, 1000)).toMatchObject(
      { kind: 'approved', charge_amount_minor: 990, charge_currency: 'EUR', error_code: '10000' },
    );
    expect(paymentResult(payment('Captured', { amount: null, currency: null }), 'sale', asked, 1000)).toMatchObject({
      charge_amount_minor: 1000,
      charge_currency: 'USD',
    });
  });

  it('classifies declines: 2xxxx soft, 3xxxx and 4xxxx hard', () => {
    expect(['20005', '20051', '20154', '200N7'].map(declineKind)).toEqual(['soft', 'soft', 'soft', 'soft']);
    expect(['30041', '30043', '40101'].map(declineKind)).toEqual(['hard', 'hard', 'hard']);
  });

  it('reads webhook event types: approvals, captures, payouts paid and refunds approve; declines reject; the rest change nothing', () => {
    expect(eventMeaning('payment_captured')).toEqual({ about: 'payment', outcome: 'approved' });
    expect(eventMeaning('payment_paid')).toEqual({ about: 'payment', outcome: 'approved' });
    expect(eventMeaning('payment_authentication_failed')).toEqual({ about: 'payment', outcome: 'rejected' });
    expect(eventMeaning('payment_refunded')).toEqual({ about: 'refund', outcome: 'approved' });
    expect(eventMeaning('payment_refund_declined')).toEqual({ about: 'refund', outcome: 'rejected' });
    for (const type of ['payment_pending', 'payment_voided', 'dispute_lost', 'constructor', '__proto__'])
      expect(eventMeaning(type), type).toBeNull();
  });
});

describe('Stripe status map', () => {
  const intent = (status: string, extra: Record<string, unknown> = {}) =>
    readIntent({
      object: 'payment_intent',
      id: 'pi_1',
      status,
      amount: 1000,
      currency: 'usd',
      metadata: { paygate_trace_id: '42' },
      ...extra,
    });

  it('gives every published PaymentIntent and Refund status a meaning', () => {
    expect(Object.keys(stripeMap.INTENT_MEANING).sort()).toEqual([...stripeMap.INTENT_STATUSES].sort());
    expect(Object.keys(stripeMap.REFUND_MEANING).sort()).toEqual([...stripeMap.REFUND_STATUSES].sort());
    expect(stripeMap.INTENT_MEANING).toMatchObject({
      succeeded: 'approved',
      requires_payment_method: 'rejected',
      canceled: 'rejected',
      processing: 'pending',
      requires_action: 'action',
    });
    expect(stripeMap.REFUND_MEANING).toMatchObject({ succeeded: 'approved', pending: 'pending', failed: 'rejected', canceled: 'rejected' });
  });

  it('reads what it needs of a PaymentIntent and a Refund, and nothing of another object or status', () => {
    expect(intent('succeeded')).toMatchObject({
      id: 'pi_1',
      status: 'succeeded',
      amount: 1000,
      currency: 'usd',
      trace_id: 42,
      redirect_url: null,
    });
    expect(
      intent('requires_payment_method', {
        last_payment_error: { code: 'card_declined', decline_code: 'insufficient_funds', message: 'Your card has insufficient funds.' },
      }),
    ).toMatchObject({ error_code: 'insufficient_funds', error_message: 'Your card has insufficient funds.' });
    expect(intent('requires_payment_method', { last_payment_error: { code: 'incorrect_cvc', decline_code: '' } })).toMatchObject({
      error_code: 'incorrect_cvc',
    });
    expect(
      intent('requires_action', {
        next_action: { type: 'redirect_to_url', redirect_to_url: { url: 'https://hooks.stripe.com/3ds', return_url: 'x' } },
      }),
    ).toMatchObject({ redirect_url: 'https://hooks.stripe.com/3ds' });
    expect(intent('succeeded', { metadata: { paygate_trace_id: '0042' } })!.trace_id).toBeNull();
    expect(intent('some_new_status')).toBeNull();
    expect(readIntent({ object: 'charge', id: 'ch_1', status: 'succeeded' })).toBeNull();
    expect(
      readRefund({
        object: 'refund',
        id: 're_1',
        status: 'failed',
        amount: 500,
        currency: 'eur',
        failure_reason: 'expired_or_canceled_card',
        metadata: {},
      }),
    ).toEqual({ id: 're_1', status: 'failed', amount: 500, currency: 'EUR', trace_id: null, reason: 'expired_or_canceled_card' });
  });

  it('classifies declines: lost, stolen, fraudulent, wrong card data hard (never cascaded); the rest soft', () => {
    expect(
      ['lost_card', 'stolen_card', 'fraudulent', 'incorrect_cvc', 'expired_card', 'do_not_try_again'].map(stripeMap.declineKind),
    ).toEqual(Array(6).fill('hard'));
    expect(
      ['generic_decline', 'insufficient_funds', 'do_not_honor', 'processing_error', 'try_again_later', null].map(stripeMap.declineKind),
    ).toEqual(Array(6).fill('soft'));
  });

  it('reads webhook event types: succeeded approves, payment_failed and canceled reject, refunds by their status; the rest change nothing', () => {
    expect(stripeMap.eventMeaning('payment_intent.succeeded')).toEqual({ about: 'payment', outcome: 'approved' });
    expect(stripeMap.eventMeaning('payment_intent.payment_failed')).toEqual({ about: 'payment', outcome: 'rejected' });
    expect(stripeMap.eventMeaning('refund.updated')).toEqual({ about: 'refund', outcome: 'from_status' });
    expect(stripeMap.eventMeaning('refund.failed')).toEqual({ about: 'refund', outcome: 'rejected' });
    for (const type of ['payment_intent.created', 'charge.succeeded', 'charge.refunded', 'constructor', '__proto__'])
      expect(stripeMap.eventMeaning(type), type).toBeNull();
  });
});

describe('PayPal dispute map (connectors/paypal/disputes.ts)', () => {
  const dispute = (status: string, outcome_code?: string): Record<string, unknown> => ({
    dispute_id: 'PP-D-12345',
    create_time: '2026-11-01T10:00:00Z',
    update_time: '2026-11-02T10:00:00Z',
    disputed_transactions: [{ seller_transaction_id: '3C679366HH908993F', buyer_transaction_id: '9X123456AB1234567' }],
    reason: 'UNAUTHORISED',
    external_reason_code: '10.4',
    status,
    dispute_amount: { currency_code: 'JPY', value: '1500' },
    ...(outcome_code === undefined ? {} : { dispute_outcome: { outcome_code } }),
    dispute_life_cycle_stage: 'CHARGEBACK',
    seller_response_due_date: '2026-11-11T10:00:00Z',
  });

  it.each<[string, string | undefined, string]>([
    ['OPEN', undefined, 'opened'],
    ['WAITING_FOR_SELLER_RESPONSE', undefined, 'evidence_required'],
    ['WAITING_FOR_BUYER_RESPONSE', undefined, 'under_review'],
    ['UNDER_REVIEW', undefined, 'under_review'],
    ['OTHER', undefined, 'under_review'],
    ['RESOLVED', 'RESOLVED_SELLER_FAVOUR', 'won'],
    ['RESOLVED', 'DENIED', 'won'],
    ['RESOLVED', 'RESOLVED_WITH_PAYOUT', 'won'],
    ['RESOLVED', 'RESOLVED_BUYER_FAVOUR', 'lost'],
    ['RESOLVED', 'ACCEPTED', 'accepted'],
    ['RESOLVED', 'CANCELED_BY_BUYER', 'canceled'],
    ['RESOLVED', 'NONE', 'under_review'],
  ])('%s (%s) → %s, and the fixture is a dispute as Disputes v1 describes it', (status, outcome_code, stage) => {
    const resource = dispute(status, outcome_code);
    expect(paypalSpec.get().validateSchema('customer_disputes_v1.json', 'dispute', resource)).toEqual([]);
    expect(readDispute(resource)).toEqual({
      capture_id: '3C679366HH908993F',
      facts: {
        psp_dispute_id: 'PP-D-12345',
        stage,
        // JPY has no minor unit: 1500 is 1500.
        amount_minor: 1500,
        currency: 'JPY',
        reason: 'UNAUTHORISED (10.4)',
        evidence_due_at_ms: Date.parse('2026-11-11T10:00:00Z'),
      },
    });
  });

  it('is not a dispute without an id, a status or a disputed capture; amounts and dates it cannot read are null', () => {
    expect(readDispute(null)).toBeNull();
    expect(readDispute({ ...dispute('OPEN'), dispute_id: '' })).toBeNull();
    expect(readDispute({ ...dispute('OPEN'), status: 7 })).toBeNull();
    expect(readDispute({ ...dispute('OPEN'), disputed_transactions: [] })).toBeNull();
    expect(readDispute({ ...dispute('OPEN'), disputed_transactions: [{ seller_transaction_id: 'X'.repeat(65) }] })).toBeNull();
    const vague = readDispute({
      ...dispute('OPEN'),
      dispute_amount: { value: 'lots' },
      seller_response_due_date: 'soon',
      reason: undefined,
    });
    expect(vague!.facts).toMatchObject({ amount_minor: null, currency: null, reason: '10.4', evidence_due_at_ms: null });
  });
});
