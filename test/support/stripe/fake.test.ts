// Tests of the fake Stripe itself (fake.ts) with plain fetch requests in Stripe's form encoding,
// no gateway and no SDK: authentication, the documented test cards (approvals, declines, card data
// errors, off-session authentication, 3-D Secure and its page), the rules of confirm=true,
// idempotency, the search language, refunds (synchronous and asynchronous), authorizations
// (capture_method=manual, capture, cancel), the test controls for disputes, Dashboard refunds and
// expired authorizations, signed webhooks with retries, and every failure mode; and that the fake's answers and events keep to Stripe's
// published description (fake.violations stays empty unless a test sends a wrong request).
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fetchAnswer, waitUntil, type FetchedAnswer } from '../fake-processor/fetch-answer.js';
import { startMerchantReceiver, type MerchantReceiver } from '../merchant-receiver.js';
import { startFakeStripe, stripeSignatureHeader, type FakeEvent, type FakeStripe } from './fake.js';

const WEBHOOK_PATH = '/webhooks/stripe';
const WEBHOOK_SECRET = 'whsec_test_5Jq8cW2mR4tY7uI0oP3aS6dF9gH1jK';

let fake: FakeStripe;
let receiver: MerchantReceiver;

type Form = Record<string, string>;

async function api(
  method: string,
  path: string,
  form?: Form,
  headers: Record<string, string> = {},
  on: FakeStripe = fake,
  signal?: AbortSignal,
): Promise<FetchedAnswer> {
  return fetchAnswer(`${on.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${on.secret_key}`,
      ...(form === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
      ...headers,
    },
    body: form === undefined ? undefined : new URLSearchParams(form).toString(),
    signal,
  });
}

function traceId(): string {
  return String(Math.floor(Math.random() * 1e12));
}

/** A customer-initiated card sale as the connector sends it (payment_method_types: no return_url needed). */
function sale(number: string, extra: Form = {}): Form {
  return {
    amount: '1000',
    currency: 'usd',
    confirm: 'true',
    'payment_method_types[0]': 'card',
    'payment_method_data[type]': 'card',
    'payment_method_data[card][number]': number,
    'payment_method_data[card][exp_month]': '12',
    'payment_method_data[card][exp_year]': '2030',
    'payment_method_data[card][cvc]': '123',
    'metadata[paygate_trace_id]': traceId(),
    ...extra,
  };
}

function without(form: Form, ...names: string[]): Form {
  const copy = { ...form };
  for (const name of names) delete copy[name];
  return copy;
}

function eventsOf(intent_id: string): FakeEvent[] {
  return fake.events.filter((e) => e.payment_intent_id === intent_id);
}

async function settle(intent_id: string, type: string): Promise<FakeEvent> {
  return fake.waitForEvent((e) => e.payment_intent_id === intent_id && e.type === type);
}

beforeAll(async () => {
  receiver = await startMerchantReceiver();
  fake = await startFakeStripe({ webhook_retry_delay_ms: 5, refund_settle_ms: 10 });
  fake.setWebhookEndpoint(`${receiver.url}${WEBHOOK_PATH}`, WEBHOOK_SECRET);
});

afterAll(async () => {
  await fake?.close();
  await receiver?.close();
});

afterEach(() => {
  const seen = [...fake.violations];
  fake.clearViolations();
  fake.holdEvents(false);
  receiver.clearReply(WEBHOOK_PATH);
  // Every answer and event of the fake, and every request of these tests, keeps to the description.
  expect(seen).toEqual([]);
});

describe('authentication', () => {
  it("answers 401 with Stripe's error object without a key or with a wrong one; takes Bearer and Basic", async () => {
    const none = await api('GET', '/v1/refunds', undefined, { authorization: '' });
    expect(none.status).toBe(401);
    expect(none.json.error).toMatchObject({
      type: 'invalid_request_error',
      message: expect.stringContaining('You did not provide an API key'),
    });
    fake.clearViolations();
    const wrong = await api('GET', '/v1/refunds', undefined, { authorization: 'Bearer sk_test_wrongwrongwrong1234' });
    expect(wrong.status).toBe(401);
    expect(wrong.json.error.message).toMatch(/^Invalid API Key provided: sk_test_\*+1234$/);
    expect(wrong.headers.get('www-authenticate')).toContain('Bearer');
    expect(fake.violations).toEqual([]);
    const basic = await api('GET', '/v1/refunds', undefined, {
      authorization: `Basic ${Buffer.from(`${fake.secret_key}:`).toString('base64')}`,
    });
    expect(basic.status).toBe(200);
    expect(basic.headers.get('request-id')).toMatch(/^req_/);
  });
});

describe('card payments with confirm=true', () => {
  it('approves 4242 4242 4242 4242: 200 succeeded with a charge, then payment_intent.created, charge.succeeded, payment_intent.succeeded, signed', async () => {
    const form = sale('4242424242424242', { description: 'Order 1' });
    const answer = await api('POST', '/v1/payment_intents', form, { 'idempotency-key': randomUUID() });
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({
      object: 'payment_intent',
      status: 'succeeded',
      amount: 1000,
      amount_received: 1000,
      currency: 'usd',
      metadata: { paygate_trace_id: form['metadata[paygate_trace_id]'] },
      next_action: null,
      last_payment_error: null,
      livemode: false,
      description: 'Order 1',
    });
    expect(answer.json.id).toMatch(/^pi_[A-Za-z0-9]{24}$/);
    expect(answer.json.client_secret).toMatch(new RegExp(`^${answer.json.id}_secret_`));
    expect(answer.json.latest_charge).toMatch(/^ch_/);
    expect(answer.json.payment_method).toMatch(/^pm_/);
    await settle(answer.json.id, 'payment_intent.succeeded');
    expect(eventsOf(answer.json.id).map((e) => e.type)).toEqual(['payment_intent.created', 'charge.succeeded', 'payment_intent.succeeded']);
    const charge = eventsOf(answer.json.id)[1]?.json.data.object as any;
    expect(charge).toMatchObject({
      id: answer.json.latest_charge,
      object: 'charge',
      status: 'succeeded',
      paid: true,
      captured: true,
      payment_intent: answer.json.id,
      metadata: { paygate_trace_id: form['metadata[paygate_trace_id]'] },
    });
    expect(charge.payment_method_details.card).toMatchObject({
      brand: 'visa',
      last4: '4242',
      exp_month: 12,
      exp_year: 2030,
      checks: { cvc_check: 'pass' },
    });
    expect(fake.paymentIntent(answer.json.id)).toMatchObject({
      status: 'succeeded',
      card_last4: '4242',
      charges: [answer.json.latest_charge],
      three_ds: 'none',
    });
  });

  it.each([
    ['4000000000000002', 'card_declined', 'generic_decline', 'Your card was declined.', undefined],
    ['4000000000009995', 'card_declined', 'insufficient_funds', 'Your card has insufficient funds.', undefined],
    ['4000000000009987', 'card_declined', 'lost_card', 'Your card was declined.', undefined],
    ['4000000000009979', 'card_declined', 'stolen_card', 'Your card was declined.', undefined],
    ['4000000000000127', 'incorrect_cvc', undefined, "Your card's security code is incorrect.", 'cvc'],
    ['4000000000000069', 'expired_card', undefined, 'Your card has expired.', 'exp_month'],
    [
      '4000000000000119',
      'processing_error',
      undefined,
      'An error occurred while processing your card. Try again in a little bit.',
      undefined,
    ],
    ['4000000000006975', 'card_declined', 'card_velocity_exceeded', expect.stringContaining('repeated attempts'), undefined],
    ['4111111111111111', 'card_declined', 'test_mode_live_card', expect.stringContaining('non test (live) card'), undefined],
  ])(
    'declines %s: 402 card_error %s/%s with the PaymentIntent back to requires_payment_method',
    async (number, code, decline_code, message, param) => {
      const answer = await api('POST', '/v1/payment_intents', sale(number));
      expect(answer.status).toBe(402);
      const error = answer.json.error;
      expect(error).toMatchObject({
        type: 'card_error',
        code,
        message,
        doc_url: `https://stripe.com/docs/error-codes/${code.replace(/_/g, '-')}`,
      });
      expect(error.decline_code).toBe(decline_code);
      expect(error.param).toBe(param);
      expect(error.charge).toMatch(/^ch_/);
      expect(error.request_log_url).toContain(answer.headers.get('request-id'));
      expect(error.payment_method).toMatchObject({ object: 'payment_method', type: 'card', card: { last4: number.slice(-4) } });
      expect(error.payment_intent).toMatchObject({
        status: 'requires_payment_method',
        payment_method: null,
        latest_charge: error.charge,
        last_payment_error: { type: 'card_error', code, charge: error.charge },
      });
      expect(error.payment_intent.last_payment_error.decline_code).toBe(decline_code);
      await settle(error.payment_intent.id, 'payment_intent.payment_failed');
      expect(eventsOf(error.payment_intent.id).map((e) => e.type)).toEqual([
        'payment_intent.created',
        'charge.failed',
        'payment_intent.payment_failed',
      ]);
      expect(eventsOf(error.payment_intent.id)[1]?.json.data.object).toMatchObject({
        status: 'failed',
        failure_code: code,
        outcome: { type: 'issuer_declined', network_status: 'declined_by_network' },
      });
      expect(fake.paymentIntent(error.payment_intent.id)?.last_error).toEqual({ code, decline_code: decline_code ?? null });
    },
  );

  it('skips the CVC check when no CVC is sent (the incorrect-CVC card then succeeds)', async () => {
    const answer = await api('POST', '/v1/payment_intents', without(sale('4000000000000127'), 'payment_method_data[card][cvc]'));
    expect(answer.status).toBe(200);
    expect(answer.json.status).toBe('succeeded');
  });

  it.each([
    ['4242424242424241', {}, 'incorrect_number', 'number'],
    ['4242424242424242', { 'payment_method_data[card][exp_month]': '13' }, 'invalid_expiry_month', 'exp_month'],
    ['4242424242424242', { 'payment_method_data[card][exp_year]': '2019' }, 'invalid_expiry_year', 'exp_year'],
    ['4242424242424242', { 'payment_method_data[card][cvc]': '99' }, 'invalid_cvc', 'cvc'],
  ])('refuses card data %s %j with 402 %s before any attempt (no PaymentIntent)', async (number, extra, code, param) => {
    const before = fake.paymentIntents.length;
    const answer = await api('POST', '/v1/payment_intents', sale(number, extra));
    expect(answer.status).toBe(402);
    expect(answer.json.error).toMatchObject({ type: 'card_error', code, param });
    expect(answer.json.error.payment_intent).toBeUndefined();
    expect(fake.paymentIntents).toHaveLength(before);
  });

  it('asks for a return_url with automatic payment methods (the default since 2023-08-16), unless redirects are off', async () => {
    const automatic = without(sale('4242424242424242'), 'payment_method_types[0]');
    const refused = await api('POST', '/v1/payment_intents', automatic);
    expect(refused.status).toBe(400);
    expect(refused.json.error).toMatchObject({
      type: 'invalid_request_error',
      message: expect.stringContaining('you must provide a `return_url`'),
    });
    const with_return = await api('POST', '/v1/payment_intents', { ...automatic, return_url: 'https://shop.example/return' });
    expect(with_return.json).toMatchObject({
      status: 'succeeded',
      automatic_payment_methods: { enabled: true },
      payment_method_types: ['card'],
    });
    const never = await api('POST', '/v1/payment_intents', {
      ...automatic,
      'automatic_payment_methods[enabled]': 'true',
      'automatic_payment_methods[allow_redirects]': 'never',
    });
    expect(never.json).toMatchObject({ status: 'succeeded', automatic_payment_methods: { enabled: true, allow_redirects: 'never' } });
    const both = await api('POST', '/v1/payment_intents', { ...sale('4242424242424242'), 'automatic_payment_methods[enabled]': 'true' });
    expect(both.json.error.message).toContain('only specify one of these parameters');
  });

  it('keeps the rules of confirm: return_url and off_session only with confirm=true, confirm needs a payment method, confirm=false makes an intent only', async () => {
    const early = await api('POST', '/v1/payment_intents', {
      ...without(sale('4242424242424242'), 'confirm'),
      return_url: 'https://shop.example/return',
    });
    expect(early.json.error).toMatchObject({ type: 'invalid_request_error', param: 'return_url' });
    const missing = await api('POST', '/v1/payment_intents', {
      amount: '1000',
      currency: 'usd',
      confirm: 'true',
      'payment_method_types[0]': 'card',
    });
    expect(missing.json.error).toMatchObject({ code: 'payment_intent_unexpected_state' });
    const unconfirmed = await api('POST', '/v1/payment_intents', without(sale('4242424242424242'), 'confirm'));
    expect(unconfirmed.json).toMatchObject({ status: 'requires_confirmation', latest_charge: null });
    const saved = await api('POST', '/v1/payment_intents', {
      amount: '1000',
      currency: 'usd',
      confirm: 'true',
      payment_method: 'pm_card_visa',
      'payment_method_types[0]': 'card',
    });
    expect(saved.json.error).toMatchObject({ code: 'resource_missing', param: 'payment_method' });
    const small = await api('POST', '/v1/payment_intents', sale('4242424242424242', { amount: '49' }));
    expect(small.json.error).toMatchObject({ code: 'amount_too_small', param: 'amount', message: 'Amount must be at least $0.50 usd' });
    const upper = await api('POST', '/v1/payment_intents', sale('4242424242424242', { currency: 'EUR' }));
    expect(upper.json.currency).toBe('eur');
  });

  it('follows the API version the request names: since 2026-09-30 payment_method_types is gone, allowed_payment_method_types takes its place', async () => {
    const endive = { 'stripe-version': '2026-10-28.endive' };
    const old_form = await api('POST', '/v1/payment_intents', sale('4242424242424242'), endive);
    expect(old_form.status).toBe(400);
    expect(old_form.json.error).toMatchObject({ code: 'parameter_unknown', param: 'payment_method_types' });
    const allowed = { ...without(sale('4242424242424242'), 'payment_method_types[0]'), 'allowed_payment_method_types[0]': 'card' };
    const answer = await api('POST', '/v1/payment_intents', allowed, endive);
    expect(answer.json).toMatchObject({ status: 'succeeded', payment_method_types: ['card'], automatic_payment_methods: null });
    expect(answer.headers.get('stripe-version')).toBe('2026-10-28.endive');
    // An older version (or none: the account's default) still takes payment_method_types.
    expect((await api('POST', '/v1/payment_intents', sale('4242424242424242'), { 'stripe-version': '2025-03-31.basil' })).json.status).toBe(
      'succeeded',
    );
  });

  it('refuses raw card numbers when the account has no raw card data access', async () => {
    const locked = await startFakeStripe({ raw_card_data: false });
    try {
      const answer = await api('POST', '/v1/payment_intents', sale('4242424242424242'), {}, locked);
      expect(answer.status).toBe(400);
      expect(answer.json.error.message).toContain('Sending credit card numbers directly to the Stripe API is generally unsafe');
      expect(locked.violations).toEqual([]);
    } finally {
      await locked.close();
    }
  });

  it('answers parameters the description refuses with 400 parameter_missing / parameter_unknown and records the violation', async () => {
    const missing = await api('POST', '/v1/payment_intents', without(sale('4242424242424242'), 'currency'));
    expect(missing.status).toBe(400);
    expect(missing.json.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'parameter_missing',
      param: 'currency',
      message: 'Missing required param: currency.',
    });
    const unknown = await api('POST', '/v1/payment_intents', sale('4242424242424242', { 'payment_method_data[card][name]': 'Jane' }));
    expect(unknown.json.error).toMatchObject({ code: 'parameter_unknown', param: 'payment_method_data[card][name]' });
    expect(fake.violations.map((v) => v.kind)).toEqual(['request', 'request']);
    fake.clearViolations();
  });
});

describe('merchant-initiated (off_session=true) charges', () => {
  it.each([
    ['4000000000003220', 'authentication_required', 'authentication_required'],
    ['4000002760003184', 'authentication_required', 'authentication_required'],
    ['4000002500003155', 'authentication_required', 'authentication_required'],
    ['4000008400001629', 'authentication_required', 'authentication_required'],
    ['4000008260003178', 'card_declined', 'insufficient_funds'],
  ])('declines %s off-session: 402 %s / %s', async (number, code, decline_code) => {
    const answer = await api('POST', '/v1/payment_intents', sale(number, { off_session: 'true' }));
    expect(answer.status).toBe(402);
    expect(answer.json.error).toMatchObject({
      type: 'card_error',
      code,
      decline_code,
      payment_intent: { status: 'requires_payment_method', last_payment_error: { code, decline_code } },
    });
    if (code === 'authentication_required')
      expect(answer.json.error.message).toBe('Your card was declined. This transaction requires authentication.');
    await settle(answer.json.error.payment_intent.id, 'payment_intent.payment_failed');
  });

  it.each(['4242424242424242', '4000003800000446', '4000000032200000'])('charges %s off-session without anyone', async (number) => {
    const answer = await api('POST', '/v1/payment_intents', sale(number, { off_session: 'true' }));
    expect(answer.json).toMatchObject({ status: 'succeeded' });
    expect(fake.paymentIntent(answer.json.id)?.off_session).toBe(true);
  });

  it('fails instead of asking for authentication with error_on_requires_action=true', async () => {
    const answer = await api('POST', '/v1/payment_intents', sale('4000000000003220', { error_on_requires_action: 'true' }));
    expect(answer.json.error).toMatchObject({ code: 'authentication_required', decline_code: 'authentication_required' });
  });
});

describe('3-D Secure', () => {
  const RETURN_URL = 'https://shop.example/return/42/check?lang=en';

  async function challenged(number = '4000000000003220'): Promise<FetchedAnswer> {
    const answer = await api('POST', '/v1/payment_intents', sale(number, { return_url: RETURN_URL }));
    expect(answer.status).toBe(200);
    return answer;
  }

  it.each(['4000000000003220', '4000008400000027', '4000002760003184', '4000002500003155'])(
    'asks for authentication with %s: requires_action, next_action redirect_to_url to the test page, payment_intent.requires_action',
    async (number) => {
      const answer = await challenged(number);
      expect(answer.json).toMatchObject({
        status: 'requires_action',
        latest_charge: null,
        next_action: { type: 'redirect_to_url', redirect_to_url: { return_url: RETURN_URL } },
      });
      expect(answer.json.next_action.redirect_to_url.url).toMatch(
        new RegExp(`^${fake.url}/3d_secure_2_test/${answer.json.id}/[A-Za-z0-9]{24}$`),
      );
      await settle(answer.json.id, 'payment_intent.requires_action');
      expect(eventsOf(answer.json.id).map((e) => e.type)).toEqual(['payment_intent.created', 'payment_intent.requires_action']);
      expect(fake.paymentIntent(answer.json.id)).toMatchObject({
        three_ds: 'pending',
        authentication_url: answer.json.next_action.redirect_to_url.url,
      });
    },
  );

  it('serves a page with "Complete authentication" and "Fail authentication"; completing succeeds and returns (303) with Stripe\'s parameters', async () => {
    const answer = await challenged();
    const page_url = answer.json.next_action.redirect_to_url.url as string;
    const page = await fetch(page_url);
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).toContain('id="test-source-authorize-3ds"');
    expect(html).toContain('>Complete authentication</button>');
    expect(html).toContain('id="test-source-fail-3ds"');
    expect(html).toContain('>Fail authentication</button>');
    expect(html).toContain('10.00 USD');
    const clicked = await fetch(page_url, {
      method: 'POST',
      body: 'outcome=complete',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      redirect: 'manual',
    });
    expect(clicked.status).toBe(303);
    const location = new URL(clicked.headers.get('location') ?? '');
    expect(`${location.origin}${location.pathname}`).toBe('https://shop.example/return/42/check');
    expect(Object.fromEntries(location.searchParams)).toEqual({
      lang: 'en',
      payment_intent: answer.json.id,
      payment_intent_client_secret: answer.json.client_secret,
      redirect_status: 'succeeded',
    });
    await settle(answer.json.id, 'payment_intent.succeeded');
    const after = eventsOf(answer.json.id);
    expect(after.map((e) => e.type)).toEqual([
      'payment_intent.created',
      'payment_intent.requires_action',
      'charge.succeeded',
      'payment_intent.succeeded',
    ]);
    expect(after[3]?.json.request).toEqual({ id: null, idempotency_key: null });
    expect((after[2]?.json.data.object as any).payment_method_details.card.three_d_secure).toMatchObject({
      authentication_flow: 'challenge',
      result: 'authenticated',
    });
    const got = await api('GET', `/v1/payment_intents/${answer.json.id}`);
    expect(got.json).toMatchObject({ status: 'succeeded', next_action: null, amount_received: 1000 });
    // The page, visited again, sends the browser back again.
    const again = await fetch(page_url, { redirect: 'manual' });
    expect(again.status).toBe(303);
    expect(again.headers.get('location')).toBe(clicked.headers.get('location'));
  });

  it('failing authentication leaves the PaymentIntent requires_payment_method with payment_intent_authentication_failure, and returns with redirect_status=failed', async () => {
    const answer = await challenged();
    const clicked = await fetch(answer.json.next_action.redirect_to_url.url, {
      method: 'POST',
      body: 'outcome=fail',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      redirect: 'manual',
    });
    expect(new URL(clicked.headers.get('location') ?? '').searchParams.get('redirect_status')).toBe('failed');
    await settle(answer.json.id, 'payment_intent.payment_failed');
    expect(eventsOf(answer.json.id).map((e) => e.type)).toEqual([
      'payment_intent.created',
      'payment_intent.requires_action',
      'payment_intent.payment_failed',
    ]);
    const got = await api('GET', `/v1/payment_intents/${answer.json.id}`);
    expect(got.json).toMatchObject({
      status: 'requires_payment_method',
      payment_method: null,
      latest_charge: null,
      next_action: null,
      last_payment_error: {
        type: 'invalid_request_error',
        code: 'payment_intent_authentication_failure',
        payment_method: { card: { last4: '3220' } },
      },
    });
  });

  it('declines after authentication with 4000 0084 0000 1629 (charge.failed, redirect_status=failed)', async () => {
    const answer = await challenged('4000008400001629');
    const location = await fake.authenticate(answer.json.id, 'complete');
    expect(new URL(location ?? '').searchParams.get('redirect_status')).toBe('failed');
    expect(eventsOf(answer.json.id).map((e) => e.type)).toEqual([
      'payment_intent.created',
      'payment_intent.requires_action',
      'charge.failed',
      'payment_intent.payment_failed',
    ]);
    expect(fake.paymentIntent(answer.json.id)).toMatchObject({
      status: 'requires_payment_method',
      last_error: { code: 'card_declined', decline_code: 'generic_decline' },
    });
  });

  it('hands authentication to Stripe.js (use_stripe_sdk) without a return_url; request_three_d_secure=any challenges an optional card; frictionless succeeds at once', async () => {
    const sdk = await api('POST', '/v1/payment_intents', sale('4000000000003220'));
    expect(sdk.json).toMatchObject({ status: 'requires_action', next_action: { type: 'use_stripe_sdk' } });
    expect(await fake.authenticate(sdk.json.id, 'complete')).toBeNull();
    expect(fake.paymentIntent(sdk.json.id)?.status).toBe('succeeded');
    const optional = await api(
      'POST',
      '/v1/payment_intents',
      sale('4000000000003055', { 'payment_method_options[card][request_three_d_secure]': 'any', return_url: RETURN_URL }),
    );
    expect(optional.json).toMatchObject({ status: 'requires_action', payment_method_options: { card: { request_three_d_secure: 'any' } } });
    const unenrolled = await api(
      'POST',
      '/v1/payment_intents',
      sale('4242424242424242', { 'payment_method_options[card][request_three_d_secure]': 'any' }),
    );
    expect(unenrolled.json.status).toBe('succeeded');
    const frictionless = await api('POST', '/v1/payment_intents', sale('4000000032200000'));
    expect(frictionless.json.status).toBe('succeeded');
    const charge = (await settle(frictionless.json.id, 'charge.succeeded')).json.data.object as any;
    expect(charge.payment_method_details.card.three_d_secure).toMatchObject({ authentication_flow: 'frictionless' });
  });

  it('answers a page address nobody was given with 404', async () => {
    const answer = await challenged();
    const page = await fetch(`${fake.url}/3d_secure_2_test/${answer.json.id}/AAAAAAAAAAAAAAAAAAAAAAAA`);
    expect(page.status).toBe(404);
    await page.text();
  });
});

describe('idempotency (Idempotency-Key)', () => {
  it('replays the first answer for the same key and parameters: same id, nothing new, Idempotent-Replayed', async () => {
    const key = randomUUID();
    const form = sale('4242424242424242');
    const first = await api('POST', '/v1/payment_intents', form, { 'idempotency-key': key });
    await settle(first.json.id, 'payment_intent.succeeded');
    const events_before = fake.events.length;
    const intents_before = fake.paymentIntents.length;
    // The same parameters in another order are the same request.
    const reordered = Object.fromEntries(Object.entries(form).reverse());
    const second = await api('POST', '/v1/payment_intents', reordered, { 'idempotency-key': key });
    expect(second.status).toBe(200);
    expect(second.text).toBe(first.text);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.headers.get('original-request')).toBe(first.headers.get('request-id'));
    expect(second.headers.get('idempotency-key')).toBe(key);
    expect(fake.paymentIntents).toHaveLength(intents_before);
    expect(fake.events).toHaveLength(events_before);
    expect(
      fake
        .requestsTo('POST /v1/payment_intents')
        .slice(-2)
        .map((r) => r.idempotency),
    ).toEqual(['new', 'replayed']);
    expect(fake.paymentIntent(first.json.id)?.idempotency_keys).toEqual([key]);
  });

  it('answers 400 idempotency_error for the same key with other parameters or on another endpoint, and makes nothing', async () => {
    const key = randomUUID();
    const first = await api('POST', '/v1/payment_intents', sale('4242424242424242'), { 'idempotency-key': key });
    const intents_before = fake.paymentIntents.length;
    const other = await api('POST', '/v1/payment_intents', sale('4242424242424242', { amount: '2000' }), { 'idempotency-key': key });
    expect(other.status).toBe(400);
    expect(other.json.error).toEqual({
      message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`,
      request_log_url: expect.any(String),
      type: 'idempotency_error',
    });
    const elsewhere = await api('POST', '/v1/refunds', { payment_intent: first.json.id }, { 'idempotency-key': key });
    expect(elsewhere.json.error.type).toBe('idempotency_error');
    expect(fake.paymentIntents).toHaveLength(intents_before);
    expect(fake.refunds.filter((r) => r.payment_intent === first.json.id)).toEqual([]);
  });

  it('keeps declines too (the endpoint began), but not requests refused for their parameters', async () => {
    const key = randomUUID();
    const form = sale('4000000000000002');
    const declined = await api('POST', '/v1/payment_intents', form, { 'idempotency-key': key });
    const again = await api('POST', '/v1/payment_intents', form, { 'idempotency-key': key });
    expect(again.status).toBe(402);
    expect(again.text).toBe(declined.text);
    const key2 = randomUUID();
    const invalid = await api('POST', '/v1/payment_intents', without(sale('4242424242424242'), 'amount'), { 'idempotency-key': key2 });
    expect(invalid.status).toBe(400);
    fake.clearViolations();
    const corrected = await api('POST', '/v1/payment_intents', sale('4242424242424242'), { 'idempotency-key': key2 });
    expect(corrected.json.status).toBe('succeeded');
  });

  it('ignores keys on GET requests', async () => {
    const answer = await api('GET', '/v1/refunds', undefined, { 'idempotency-key': randomUUID() });
    expect(answer.status).toBe(200);
    expect(fake.requests.at(-1)?.idempotency).toBeNull();
  });

  it('answers 409 idempotency_key_in_use to a duplicate arriving while the first is still processed', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const key = randomUUID();
    // Only this request's events wait at the receiver (others' may still be on their way).
    receiver.setReply(WEBHOOK_PATH, async (received) => {
      if ((received.json as any)?.request?.idempotency_key === key) await gate;
      return { status: 200, body: {} };
    });
    fake.failNext('POST /v1/payment_intents', 'webhook_first');
    const form = sale('4242424242424242');
    const first = api('POST', '/v1/payment_intents', form, { 'idempotency-key': key });
    // The first request waits for the receiver's answer to its first event before it answers.
    await waitUntil(() => receiver.requests.some((r) => r.path === WEBHOOK_PATH && (r.json as any)?.request?.idempotency_key === key));
    const duplicate = await api('POST', '/v1/payment_intents', form, { 'idempotency-key': key });
    expect(duplicate.status).toBe(409);
    expect(duplicate.json.error).toMatchObject({ code: 'idempotency_key_in_use', type: 'idempotency_error' });
    release();
    const done = await first;
    expect(done.json.status).toBe('succeeded');
    const after = await api('POST', '/v1/payment_intents', form, { 'idempotency-key': key });
    expect(after.json.id).toBe(done.json.id);
  });

  it('forgets keys after the window', async () => {
    const short = await startFakeStripe({ idempotency_window_ms: 30 });
    try {
      const key = randomUUID();
      const form = sale('4242424242424242');
      const first = await api('POST', '/v1/payment_intents', form, { 'idempotency-key': key }, short);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const later = await api('POST', '/v1/payment_intents', form, { 'idempotency-key': key }, short);
      expect(later.json.id).not.toBe(first.json.id);
    } finally {
      await short.close();
    }
  });
});

describe('search', () => {
  it("finds by metadata['paygate_trace_id']:'42' (quotes single or double) and answers Stripe's search_result", async () => {
    const trace = traceId();
    const paid = await api('POST', '/v1/payment_intents', sale('4242424242424242', { 'metadata[paygate_trace_id]': trace }));
    await api('POST', '/v1/payment_intents', sale('4242424242424242'));
    const found = await api('GET', `/v1/payment_intents/search?query=${encodeURIComponent(`metadata['paygate_trace_id']:'${trace}'`)}`);
    expect(found.status).toBe(200);
    expect(found.json).toEqual({
      object: 'search_result',
      data: [expect.objectContaining({ id: paid.json.id, metadata: { paygate_trace_id: trace } })],
      has_more: false,
      next_page: null,
      url: '/v1/payment_intents/search',
    });
    const double = await api('GET', `/v1/payment_intents/search?query=${encodeURIComponent(`metadata["paygate_trace_id"]:"${trace}"`)}`);
    expect(double.json.data.map((p: any) => p.id)).toEqual([paid.json.id]);
    const none = await api('GET', `/v1/payment_intents/search?query=${encodeURIComponent("metadata['paygate_trace_id']:'no-such'")}`);
    expect(none.json.data).toEqual([]);
    expect(fake.intentsWithMetadata('paygate_trace_id', trace).map((p) => p.id)).toEqual([paid.json.id]);
  });

  it('combines clauses with AND (or spaces) or OR, negates with -, compares amounts; newest first; total_count on request', async () => {
    const trace = traceId();
    const small = await api('POST', '/v1/payment_intents', sale('4242424242424242', { amount: '1500', 'metadata[batch]': trace }));
    const declined = await api('POST', '/v1/payment_intents', sale('4000000000000002', { amount: '2500', 'metadata[batch]': trace }));
    const declined_id = declined.json.error.payment_intent.id;
    const search = async (query: string, extra = ''): Promise<any> =>
      (await api('GET', `/v1/payment_intents/search?query=${encodeURIComponent(query)}${extra}`)).json;
    expect((await search(`metadata['batch']:'${trace}'`)).data.map((p: any) => p.id)).toEqual([declined_id, small.json.id]);
    expect((await search(`metadata['batch']:'${trace}' AND status:'succeeded'`)).data.map((p: any) => p.id)).toEqual([small.json.id]);
    expect((await search(`metadata['batch']:'${trace}' -status:'succeeded'`)).data.map((p: any) => p.id)).toEqual([declined_id]);
    expect((await search(`metadata['batch']:'${trace}' and amount>=2000 and currency:'usd'`)).data.map((p: any) => p.id)).toEqual([
      declined_id,
    ]);
    expect((await search(`metadata['batch']:'${trace}' AND amount<2000`)).data.map((p: any) => p.id)).toEqual([small.json.id]);
    expect((await search(`metadata['paygate_trace_id']:'x' OR metadata['batch']:'${trace}'`)).data).toHaveLength(2);
    const counted = await search(`metadata['batch']:'${trace}'`, '&expand[0]=total_count&limit=1');
    expect(counted).toMatchObject({
      total_count: 2,
      has_more: true,
      next_page: expect.any(String),
      data: [expect.objectContaining({ id: declined_id })],
    });
    const page2 = await search(`metadata['batch']:'${trace}'`, `&limit=1&page=${counted.next_page}`);
    expect(page2).toMatchObject({ has_more: false, next_page: null, data: [expect.objectContaining({ id: small.json.id })] });
    expect((await search(`metadata['batch']:'${trace}'`)).total_count).toBeUndefined();
  });

  it('refuses queries it cannot read: unknown fields, AND mixed with OR, comparisons of text, a bad limit', async () => {
    const bad = async (query: string): Promise<any> => api('GET', `/v1/payment_intents/search?query=${encodeURIComponent(query)}`);
    expect((await bad("reference:'x'")).json.error).toMatchObject({
      type: 'invalid_request_error',
      param: 'query',
      message: expect.stringContaining('unsupported search field'),
    });
    expect((await bad("status:'succeeded' AND currency:'usd' OR amount:5")).json.error.message).toContain('AND and OR');
    expect((await bad("currency>'usd'")).json.error.message).toContain('numeric fields');
    expect((await bad('metadata:x')).status).toBe(400);
    expect((await api('GET', `/v1/payment_intents/search?query=status:'succeeded'&limit=101`)).json.error.param).toBe('limit');
  });

  it('is not read-after-write: with search_delay_ms a new PaymentIntent shows only later', async () => {
    const slow = await startFakeStripe({ search_delay_ms: 80 });
    try {
      const trace = traceId();
      const paid = await api('POST', '/v1/payment_intents', sale('4242424242424242', { 'metadata[paygate_trace_id]': trace }), {}, slow);
      const path = `/v1/payment_intents/search?query=${encodeURIComponent(`metadata['paygate_trace_id']:'${trace}'`)}`;
      expect((await api('GET', path, undefined, {}, slow)).json.data).toEqual([]);
      expect((await api('GET', `/v1/payment_intents/${paid.json.id}`, undefined, {}, slow)).json.id).toBe(paid.json.id);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect((await api('GET', path, undefined, {}, slow)).json.data.map((p: any) => p.id)).toEqual([paid.json.id]);
    } finally {
      await slow.close();
    }
  });
});

describe('refunds', () => {
  async function paid(number = '4242424242424242', amount = '1000'): Promise<any> {
    const answer = await api('POST', '/v1/payment_intents', sale(number, { amount }));
    expect(answer.json.status).toBe('succeeded');
    return answer.json;
  }

  it('refunds part, then the rest, then refuses more; refund.created and charge.refunded for each', async () => {
    const intent = await paid();
    const part = await api('POST', '/v1/refunds', {
      payment_intent: intent.id,
      amount: '400',
      'metadata[paygate_trace_id]': '43',
      reason: 'requested_by_customer',
    });
    expect(part.status).toBe(200);
    expect(part.json).toMatchObject({
      object: 'refund',
      amount: 400,
      currency: 'usd',
      status: 'succeeded',
      payment_intent: intent.id,
      charge: intent.latest_charge,
      metadata: { paygate_trace_id: '43' },
      reason: 'requested_by_customer',
    });
    expect(part.json.id).toMatch(/^re_/);
    const too_much = await api('POST', '/v1/refunds', { payment_intent: intent.id, amount: '700' });
    expect(too_much.status).toBe(400);
    expect(too_much.json.error).toMatchObject({
      type: 'invalid_request_error',
      param: 'amount',
      message: 'Refund amount ($7.00) is greater than unrefunded amount on charge ($6.00)',
    });
    expect(too_much.json.error.code).toBeUndefined();
    const rest = await api('POST', '/v1/refunds', { payment_intent: intent.id });
    expect(rest.json).toMatchObject({ amount: 600, status: 'succeeded' });
    const more = await api('POST', '/v1/refunds', { payment_intent: intent.id, amount: '1' });
    expect(more.json.error).toMatchObject({
      code: 'charge_already_refunded',
      message: `Charge ${intent.latest_charge} has already been refunded.`,
    });
    await fake.waitForEvent((e) => e.refund_id === rest.json.id);
    const types = fake.events.filter((e) => e.payment_intent_id === intent.id).map((e) => e.type);
    expect(types).toEqual([
      'payment_intent.created',
      'charge.succeeded',
      'payment_intent.succeeded',
      'refund.created',
      'charge.refunded',
      'refund.created',
      'charge.refunded',
    ]);
    const charges = fake.events
      .filter((e) => e.payment_intent_id === intent.id && e.type === 'charge.refunded')
      .map((e) => e.json.data.object as any);
    expect(charges.map((c) => [c.amount_refunded, c.refunded])).toEqual([
      [400, false],
      [1000, true],
    ]);
    expect(fake.paymentIntent(intent.id)).toMatchObject({
      amount_refunded: 1000,
      refunds: [expect.objectContaining({ id: part.json.id }), expect.objectContaining({ id: rest.json.id })],
    });
  });

  it('refunds by charge id; refuses a PaymentIntent without a successful charge, an unknown one, none at all, a zero amount', async () => {
    const intent = await paid();
    const by_charge = await api('POST', '/v1/refunds', { charge: intent.latest_charge, amount: '100' });
    expect(by_charge.json).toMatchObject({ payment_intent: intent.id, amount: 100 });
    const declined = await api('POST', '/v1/payment_intents', sale('4000000000000002'));
    const not_paid = await api('POST', '/v1/refunds', { payment_intent: declined.json.error.payment_intent.id });
    expect(not_paid.json.error.message).toContain('does not have a successful charge to refund');
    expect((await api('POST', '/v1/refunds', { payment_intent: 'pi_unknown' })).json.error).toMatchObject({
      code: 'resource_missing',
      param: 'payment_intent',
    });
    expect((await api('POST', '/v1/refunds', { amount: '100' })).json.error.message).toContain('payment_intent or charge');
    expect((await api('POST', '/v1/refunds', { payment_intent: intent.id, amount: '0' })).json.error).toMatchObject({
      code: 'parameter_invalid_integer',
      param: 'amount',
    });
  });

  it('retrieves a refund, lists those of a PaymentIntent newest first with limit and starting_after, and answers 404 for an unknown one', async () => {
    const intent = await paid();
    const ids: string[] = [];
    for (const amount of ['100', '200', '300']) ids.push((await api('POST', '/v1/refunds', { payment_intent: intent.id, amount })).json.id);
    const one = await api('GET', `/v1/refunds/${ids[1]}`);
    expect(one.json).toMatchObject({ id: ids[1], amount: 200, status: 'succeeded' });
    const list = await api('GET', `/v1/refunds?payment_intent=${intent.id}`);
    expect(list.json).toMatchObject({ object: 'list', has_more: false, url: '/v1/refunds' });
    expect(list.json.data.map((r: any) => r.id)).toEqual([...ids].reverse());
    const page = await api('GET', `/v1/refunds?payment_intent=${intent.id}&limit=1&starting_after=${ids[2]}`);
    expect(page.json).toMatchObject({ has_more: true, data: [expect.objectContaining({ id: ids[1] })] });
    expect((await api('GET', '/v1/refunds?payment_intent=pi_unknown')).json.data).toEqual([]);
    const missing = await api('GET', '/v1/refunds/re_unknown');
    expect(missing.status).toBe(404);
    expect(missing.json.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'resource_missing',
      message: "No such refund: 're_unknown'",
    });
    expect((await api('GET', '/v1/payment_intents/pi_unknown')).json.error).toMatchObject({ code: 'resource_missing', param: 'intent' });
  });

  it('4000 0000 0000 7726: the refund starts pending, then succeeds (refund.updated, charge.refund.updated)', async () => {
    const intent = await paid('4000000000007726');
    const refund = await api('POST', '/v1/refunds', { payment_intent: intent.id, amount: '500' });
    expect(refund.json.status).toBe('pending');
    const updated = await fake.waitForEvent((e) => e.refund_id === refund.json.id && e.type === 'refund.updated');
    expect(updated.json.data).toEqual({
      object: expect.objectContaining({ id: refund.json.id, status: 'succeeded' }),
      previous_attributes: { status: 'pending' },
    });
    expect(updated.json.request).toEqual({ id: null, idempotency_key: null });
    await fake.waitForEvent((e) => e.refund_id === refund.json.id && e.type === 'charge.refund.updated');
    expect((await api('GET', `/v1/refunds/${refund.json.id}`)).json.status).toBe('succeeded');
  });

  it('4000 0000 0000 5126: the refund starts succeeded, then fails (refund.failed, expired_or_canceled_card) and the amount is refundable again', async () => {
    const intent = await paid('4000000000005126');
    const refund = await api('POST', '/v1/refunds', { payment_intent: intent.id });
    expect(refund.json).toMatchObject({ status: 'succeeded', amount: 1000 });
    const failed = await fake.waitForEvent((e) => e.refund_id === refund.json.id && e.type === 'refund.failed');
    expect(failed.json.data.object).toMatchObject({
      status: 'failed',
      failure_reason: 'expired_or_canceled_card',
      failure_balance_transaction: expect.stringMatching(/^txn_/),
    });
    expect(fake.refund(refund.json.id)).toMatchObject({ status: 'failed', failure_reason: 'expired_or_canceled_card' });
    expect(fake.paymentIntent(intent.id)?.amount_refunded).toBe(0);
    expect((await api('POST', '/v1/refunds', { payment_intent: intent.id, amount: '300' })).json.status).toBe('succeeded');
    await fake.waitForEvent((e) => e.refund_id === refund.json.id && e.type === 'charge.refund.updated');
  });

  it('with refund_settle_ms null, asynchronous refunds change only on settleRefunds()', async () => {
    const manual = await startFakeStripe({ refund_settle_ms: null });
    try {
      const intent = (await api('POST', '/v1/payment_intents', sale('4000000000007726'), {}, manual)).json;
      const refund = (await api('POST', '/v1/refunds', { payment_intent: intent.id }, {}, manual)).json;
      await new Promise((resolve) => setTimeout(resolve, 40));
      expect(manual.refund(refund.id)?.status).toBe('pending');
      await manual.settleRefunds();
      expect(manual.refund(refund.id)?.status).toBe('succeeded');
      expect(manual.events.filter((e) => e.refund_id === refund.id).map((e) => [e.type, e.state])).toEqual([
        ['refund.created', 'no_endpoint'],
        ['refund.updated', 'no_endpoint'],
        ['charge.refund.updated', 'no_endpoint'],
      ]);
      expect(manual.violations).toEqual([]);
    } finally {
      await manual.close();
    }
  });
});

describe('authorizations (capture_method=manual): capture and cancel', () => {
  async function authorized(number = '4242424242424242', amount = '1000'): Promise<any> {
    const answer = await api('POST', '/v1/payment_intents', sale(number, { amount, capture_method: 'manual' }));
    expect(answer.status).toBe(200);
    return answer.json;
  }

  it('holds the funds: 200 requires_capture with amount_capturable and an uncaptured charge; charge.succeeded, payment_intent.amount_capturable_updated', async () => {
    const intent = await authorized();
    expect(intent).toMatchObject({ status: 'requires_capture', capture_method: 'manual', amount_capturable: 1000, amount_received: 0 });
    await settle(intent.id, 'payment_intent.amount_capturable_updated');
    expect(eventsOf(intent.id).map((e) => e.type)).toEqual([
      'payment_intent.created',
      'charge.succeeded',
      'payment_intent.amount_capturable_updated',
    ]);
    expect(eventsOf(intent.id)[1]?.json.data.object).toMatchObject({
      id: intent.latest_charge,
      status: 'succeeded',
      paid: true,
      captured: false,
      amount_captured: 0,
      balance_transaction: null,
    });
    // Nothing to refund before the capture.
    const refund = await api('POST', '/v1/refunds', { payment_intent: intent.id });
    expect(refund.json.error.message).toContain('does not have a successful charge to refund');
  });

  it('captures part with amount_to_capture and releases the rest, once; charge.captured, payment_intent.succeeded; the same key replays', async () => {
    const intent = await authorized('4242424242424242', '1000');
    const key = `paygate-capture-${traceId()}`;
    const captured = await api(
      'POST',
      `/v1/payment_intents/${intent.id}/capture`,
      { amount_to_capture: '600' },
      { 'idempotency-key': key },
    );
    expect(captured.status).toBe(200);
    expect(captured.json).toMatchObject({ id: intent.id, status: 'succeeded', amount_received: 600, amount_capturable: 0 });
    const replay = await api('POST', `/v1/payment_intents/${intent.id}/capture`, { amount_to_capture: '600' }, { 'idempotency-key': key });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.json).toEqual(captured.json);
    await settle(intent.id, 'payment_intent.succeeded');
    expect(eventsOf(intent.id).map((e) => e.type)).toEqual([
      'payment_intent.created',
      'charge.succeeded',
      'payment_intent.amount_capturable_updated',
      'charge.captured',
      'payment_intent.succeeded',
    ]);
    expect(eventsOf(intent.id)[3]?.json.data.object).toMatchObject({
      captured: true,
      amount: 1000,
      amount_captured: 600,
      amount_refunded: 400,
      refunded: false,
      balance_transaction: expect.stringMatching(/^txn_/),
    });
    expect(fake.paymentIntent(intent.id)).toMatchObject({ amount_received: 600, amount_released: 400, refunds: [] });
    expect(fake.paymentIntent(intent.id)?.idempotency_keys).toContain(key);
    // A second capture (another key) is refused: captured once.
    const again = await api('POST', `/v1/payment_intents/${intent.id}/capture`, {});
    expect(again.status).toBe(400);
    expect(again.json.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'payment_intent_unexpected_state',
      payment_intent: expect.objectContaining({ id: intent.id, status: 'succeeded' }),
    });
    // What was captured may be refunded, no more.
    const too_much = await api('POST', '/v1/refunds', { payment_intent: intent.id, amount: '700' });
    expect(too_much.json.error.message).toContain('is greater than unrefunded amount on charge ($6.00)');
    expect((await api('POST', '/v1/refunds', { payment_intent: intent.id })).json).toMatchObject({ amount: 600, status: 'succeeded' });
    // The same key on another endpoint is an idempotency error.
    const other = await api('POST', `/v1/payment_intents/${intent.id}/cancel`, {}, { 'idempotency-key': key });
    expect(other.json.error.type).toBe('idempotency_error');
  });

  it('captures everything without amount_to_capture; refuses more than capturable, zero, and an unknown PaymentIntent', async () => {
    const intent = await authorized('4242424242424242', '1500');
    const over = await api('POST', `/v1/payment_intents/${intent.id}/capture`, { amount_to_capture: '1501' });
    expect(over.status).toBe(400);
    expect(over.json.error).toMatchObject({ code: 'amount_too_large', param: 'amount_to_capture' });
    const zero = await api('POST', `/v1/payment_intents/${intent.id}/capture`, { amount_to_capture: '0' });
    expect(zero.json.error).toMatchObject({ code: 'parameter_invalid_integer', param: 'amount_to_capture' });
    const unknown = await api('POST', '/v1/payment_intents/pi_unknown/capture', {});
    expect(unknown.status).toBe(404);
    expect(unknown.json.error).toMatchObject({ code: 'resource_missing' });
    const all = await api('POST', `/v1/payment_intents/${intent.id}/capture`, {});
    expect(all.json).toMatchObject({ status: 'succeeded', amount_received: 1500 });
    expect(fake.paymentIntent(intent.id)).toMatchObject({ amount_released: 0 });
  });

  it('refuses to capture a sale captured already and a declined PaymentIntent (payment_intent_unexpected_state)', async () => {
    const paid = await api('POST', '/v1/payment_intents', sale('4242424242424242'));
    const capture = await api('POST', `/v1/payment_intents/${paid.json.id}/capture`, {});
    expect(capture.json.error).toMatchObject({ code: 'payment_intent_unexpected_state' });
    expect(capture.json.error.message).toContain('has a status of succeeded');
    const declined = await api('POST', '/v1/payment_intents', sale('4000000000000002', { capture_method: 'manual' }));
    expect(declined.status).toBe(402);
    const after = await api('POST', `/v1/payment_intents/${declined.json.error.payment_intent.id}/capture`, {});
    expect(after.json.error.message).toContain('has a status of requires_payment_method');
  });

  it('cancels an authorization: canceled, the hold released, payment_intent.canceled; then neither capture nor cancel again', async () => {
    const intent = await authorized();
    const key = `paygate-void-${traceId()}`;
    const canceled = await api(
      'POST',
      `/v1/payment_intents/${intent.id}/cancel`,
      { cancellation_reason: 'requested_by_customer' },
      {
        'idempotency-key': key,
      },
    );
    expect(canceled.status).toBe(200);
    expect(canceled.json).toMatchObject({
      status: 'canceled',
      amount_capturable: 0,
      cancellation_reason: 'requested_by_customer',
      canceled_at: expect.any(Number),
    });
    const replay = await api(
      'POST',
      `/v1/payment_intents/${intent.id}/cancel`,
      { cancellation_reason: 'requested_by_customer' },
      {
        'idempotency-key': key,
      },
    );
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    await settle(intent.id, 'payment_intent.canceled');
    expect(eventsOf(intent.id).filter((e) => e.type === 'payment_intent.canceled')).toHaveLength(1);
    expect(fake.paymentIntent(intent.id)).toMatchObject({ status: 'canceled', amount_released: 1000 });
    expect((await api('POST', `/v1/payment_intents/${intent.id}/capture`, {})).json.error.code).toBe('payment_intent_unexpected_state');
    const twice = await api('POST', `/v1/payment_intents/${intent.id}/cancel`, {});
    expect(twice.json.error).toMatchObject({ code: 'payment_intent_unexpected_state' });
    expect(twice.json.error.message).toContain('has a status of canceled');
    const sale_paid = await api('POST', '/v1/payment_intents', sale('4242424242424242'));
    expect((await api('POST', `/v1/payment_intents/${sale_paid.json.id}/cancel`, {})).json.error.code).toBe(
      'payment_intent_unexpected_state',
    );
  });

  it('3-D Secure on an authorization ends in requires_capture (redirect_status=succeeded)', async () => {
    const return_url = `${receiver.url}/return`;
    const intent = (await api('POST', '/v1/payment_intents', sale('4000000000003220', { capture_method: 'manual', return_url }))).json;
    expect(intent.status).toBe('requires_action');
    const back = await fake.authenticate(intent.id, 'complete');
    expect(back).toContain('redirect_status=succeeded');
    expect(fake.paymentIntent(intent.id)).toMatchObject({ status: 'requires_capture', amount_capturable: 1000 });
    await settle(intent.id, 'payment_intent.amount_capturable_updated');
  });

  it('expireAuthorization cancels it as Stripe does after the window (automatic); hangNextCapture makes the capture and keeps the answer', async () => {
    const expiring = await authorized();
    await fake.expireAuthorization(expiring.id);
    expect(fake.paymentIntent(expiring.id)).toMatchObject({ status: 'canceled', cancellation_reason: 'automatic', amount_released: 1000 });
    expect(eventsOf(expiring.id).at(-1)).toMatchObject({ type: 'payment_intent.canceled', state: 'delivered' });
    await expect(fake.expireAuthorization(expiring.id)).rejects.toThrow(/no authorization/);
    const hanging = await authorized();
    fake.hangNextCapture();
    const key = `paygate-capture-${traceId()}`;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), 150);
    await expect(
      api(
        'POST',
        `/v1/payment_intents/${hanging.id}/capture`,
        { amount_to_capture: '300' },
        { 'idempotency-key': key },
        fake,
        controller.signal,
      ),
    ).rejects.toThrow();
    clearTimeout(timer);
    expect(fake.paymentIntent(hanging.id)).toMatchObject({ status: 'succeeded', amount_received: 300 });
    const asked = await api('POST', `/v1/payment_intents/${hanging.id}/capture`, { amount_to_capture: '300' }, { 'idempotency-key': key });
    expect(asked.json).toMatchObject({ status: 'succeeded', amount_received: 300 });
    expect(asked.headers.get('idempotent-replayed')).toBe('true');
  });
});

describe('disputes and refunds made in the Dashboard (test controls)', () => {
  async function paid(amount = '1000', extra: Form = {}): Promise<any> {
    const answer = await api('POST', '/v1/payment_intents', sale('4242424242424242', { amount, ...extra }));
    return answer.json;
  }

  it('openDispute: a chargeback of the whole payment, charge.dispute.created and .funds_withdrawn, signed; then won: .closed and .funds_reinstated', async () => {
    const intent = await paid('2500');
    const dispute = await fake.openDispute(intent.id);
    expect(dispute).toMatchObject({
      payment_intent: intent.id,
      charge: intent.latest_charge,
      amount: 2500,
      currency: 'usd',
      reason: 'fraudulent',
      status: 'needs_response',
    });
    expect(dispute.id).toMatch(/^dp_/);
    expect(dispute.due_by).toBeGreaterThan(Date.now() / 1000 + 6 * 24 * 3600);
    const created = fake.events.find((e) => e.object_id === dispute.id && e.type === 'charge.dispute.created')!;
    expect(created).toMatchObject({ state: 'delivered', payment_intent_id: intent.id });
    expect(created.json.data.object).toMatchObject({
      object: 'dispute',
      status: 'needs_response',
      payment_intent: intent.id,
      evidence_details: { due_by: dispute.due_by, has_evidence: false },
      balance_transactions: [],
    });
    const received = receiver.requests.find((r) => (r.json as { id?: string } | null)?.id === created.id)!;
    expect(received.headers['stripe-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    const withdrawn = fake.events.find((e) => e.object_id === dispute.id && e.type === 'charge.dispute.funds_withdrawn')!;
    expect((withdrawn.json.data.object as any).balance_transactions).toEqual([
      expect.objectContaining({ amount: -2500, fee: 1500, net: -4000 }),
    ]);
    expect(fake.paymentIntent(intent.id)?.disputes).toEqual([expect.objectContaining({ id: dispute.id })]);
    expect((await api('GET', `/v1/payment_intents/${intent.id}?expand[]=latest_charge`)).json.latest_charge.disputed).toBe(true);

    await fake.updateDispute(dispute.id, 'under_review');
    const won = await fake.closeDispute(dispute.id, 'won');
    expect(won.status).toBe('won');
    expect(fake.events.filter((e) => e.object_id === dispute.id).map((e) => e.type)).toEqual([
      'charge.dispute.created',
      'charge.dispute.funds_withdrawn',
      'charge.dispute.updated',
      'charge.dispute.closed',
      'charge.dispute.funds_reinstated',
    ]);
    const closed = fake.events.find((e) => e.object_id === dispute.id && e.type === 'charge.dispute.closed')!;
    expect(closed.json.data.previous_attributes).toEqual({ status: 'under_review' });
    await expect(fake.closeDispute(dispute.id, 'lost')).rejects.toThrow(/closed/);
  });

  it('a dispute of part, lost; an inquiry (warning_needs_response) closes as warning_closed; no dispute of an uncaptured payment', async () => {
    const intent = await paid('3000');
    const part = await fake.openDispute(intent.id, { amount: 1000, reason: 'product_not_received' });
    const lost = await fake.closeDispute(part.id, 'lost');
    expect(lost).toMatchObject({ amount: 1000, reason: 'product_not_received', status: 'lost' });
    expect(fake.events.filter((e) => e.object_id === part.id).map((e) => e.type)).toEqual([
      'charge.dispute.created',
      'charge.dispute.funds_withdrawn',
      'charge.dispute.closed',
    ]);
    const inquiry = await fake.openDispute((await paid()).id, { status: 'warning_needs_response' });
    expect((await fake.closeDispute(inquiry.id, 'won')).status).toBe('warning_closed');
    expect(fake.events.filter((e) => e.object_id === inquiry.id).map((e) => e.type)).toEqual([
      'charge.dispute.created',
      'charge.dispute.closed',
    ]);
    const held = await paid('1000', { capture_method: 'manual' });
    await expect(fake.openDispute(held.id)).rejects.toThrow(/no captured charge/);
    await expect(fake.openDispute(intent.id, { amount: 3001 })).rejects.toThrow();
  });

  it('refundFromDashboard: a refund without our metadata, refund.created and charge.refunded, listed with the others; more than remains throws', async () => {
    const intent = await paid('1000');
    const ours = await api('POST', '/v1/refunds', { payment_intent: intent.id, amount: '200', 'metadata[paygate_trace_id]': '77' });
    const refund = await fake.refundFromDashboard(intent.id, 300);
    expect(refund).toMatchObject({ payment_intent: intent.id, amount: 300, status: 'succeeded', metadata: {} });
    expect(refund.json).toMatchObject({ reason: 'requested_by_customer' });
    expect(fake.events.filter((e) => e.refund_id === refund.id).map((e) => [e.type, e.state])).toEqual([['refund.created', 'delivered']]);
    expect(fake.events.filter((e) => e.payment_intent_id === intent.id && e.type === 'charge.refunded')).toHaveLength(2);
    const list = await api('GET', `/v1/refunds?payment_intent=${intent.id}`);
    expect(list.json.data.map((r: any) => [r.id, r.metadata])).toEqual([
      [refund.id, {}],
      [ours.json.id, { paygate_trace_id: '77' }],
    ]);
    const rest = await fake.refundFromDashboard(intent.id);
    expect(rest.amount).toBe(500);
    await expect(fake.refundFromDashboard(intent.id, 1)).rejects.toThrow(/already been refunded/);
  });
});

describe('webhooks', () => {
  it('signs each event as Stripe does: Stripe-Signature t=…,v1=HMAC-SHA256("t.body"), pretty-printed JSON, the request and its key named', async () => {
    const key = `paygate-g1-${traceId()}-sale`;
    const answer = await api('POST', '/v1/payment_intents', sale('4242424242424242'), { 'idempotency-key': key });
    const succeeded = await settle(answer.json.id, 'payment_intent.succeeded');
    const received = receiver.requests.find((r) => r.path === WEBHOOK_PATH && (r.json as { id?: string } | null)?.id === succeeded.id);
    expect(received?.body).toBe(succeeded.body);
    expect(received?.body).toContain('\n  "object": "event",\n');
    const header = String(received?.headers['stripe-signature']);
    const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
    expect(m).not.toBeNull();
    expect(Math.abs(Number(m?.[1]) - Date.now() / 1000)).toBeLessThan(10);
    expect(header).toBe(stripeSignatureHeader(succeeded.body, WEBHOOK_SECRET, Number(m?.[1])));
    expect(received?.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(received?.headers['user-agent']).toContain('Stripe/1.0');
    expect(succeeded.json).toMatchObject({
      object: 'event',
      type: 'payment_intent.succeeded',
      livemode: false,
      api_version: '2023-08-16',
      pending_webhooks: 1,
      request: { id: answer.headers.get('request-id'), idempotency_key: key },
      data: { object: { id: answer.json.id, status: 'succeeded' } },
    });
    expect(succeeded.json.id).toMatch(/^evt_/);
    expect(succeeded).toMatchObject({ state: 'delivered', status: 200, signature: header, object_id: answer.json.id });
  });

  it('retries a delivery the receiver refuses, a bounded number of times', async () => {
    let calls = 0;
    receiver.setReply(WEBHOOK_PATH, () => ({ status: ++calls === 1 ? 500 : 200, body: {} }));
    const once = await api('POST', '/v1/payment_intents', sale('4242424242424242'));
    const created = await fake.waitForEvent((e) => e.payment_intent_id === once.json.id && e.type === 'payment_intent.created');
    expect(created.deliveries.map((d) => d.status)).toEqual([500, 200]);
    expect(created.state).toBe('delivered');
    receiver.setReply(WEBHOOK_PATH, { status: 503, body: {} });
    const always = await api('POST', '/v1/payment_intents', sale('4242424242424242'));
    const failed = await fake.waitForEvent((e) => e.payment_intent_id === always.json.id && e.type === 'payment_intent.succeeded');
    expect(failed.state).toBe('failed');
    expect(failed.deliveries).toHaveLength(3);
  });

  it('redelivers an event as it was (signed anew), and sends raw bodies with any signature or none', async () => {
    const answer = await api('POST', '/v1/payment_intents', sale('4242424242424242'));
    const event = await settle(answer.json.id, 'payment_intent.succeeded');
    const before = receiver.requests.length;
    expect(await fake.redeliver(event.id)).toBe(200);
    const again = receiver.requests[before];
    expect(again?.body).toBe(event.body);
    expect(event.deliveries.at(-1)?.manual).toBe(true);
    expect(await fake.sendRaw('{"id":"evt_forged"}', 't=1,v1=00')).toBe(200);
    expect(receiver.requests.at(-1)?.headers['stripe-signature']).toBe('t=1,v1=00');
    expect(await fake.sendRaw('{}', null)).toBe(200);
    expect(receiver.requests.at(-1)?.headers['stripe-signature']).toBeUndefined();
  });

  it('holds events and releases them reversed, or in any order with duplicates', async () => {
    fake.holdEvents(true);
    const answer = await api('POST', '/v1/payment_intents', sale('4242424242424242'));
    await waitUntil(() => eventsOf(answer.json.id).length === 3 && eventsOf(answer.json.id).every((e) => e.state === 'held'));
    const ids = eventsOf(answer.json.id).map((e) => e.id);
    const start = receiver.requests.length;
    await fake.releaseHeldEvents('reversed');
    expect(receiver.requests.slice(start).map((r) => (r.json as { id: string }).id)).toEqual([...ids].reverse());
    const next = receiver.requests.length;
    await fake.releaseHeldEvents([ids[2] ?? '', ids[2] ?? '']);
    expect(receiver.requests.slice(next).map((r) => (r.json as { id: string }).id)).toEqual([ids[2], ids[2]]);
  });

  it('records events as no_endpoint (pending_webhooks 0) when no endpoint is set', async () => {
    const quiet = await startFakeStripe();
    try {
      const answer = await api('POST', '/v1/payment_intents', sale('4242424242424242'), {}, quiet);
      const event = await quiet.waitForEvent((e) => e.payment_intent_id === answer.json.id && e.type === 'payment_intent.succeeded');
      expect(event).toMatchObject({ state: 'no_endpoint', json: { pending_webhooks: 0 } });
      expect(await quiet.sendRaw('{}', null)).toBeNull();
    } finally {
      await quiet.close();
    }
  });
});

describe('failure injection', () => {
  it('timeout: the PaymentIntent is made but no answer comes; a retry with the same key gets the original answer', async () => {
    fake.failNext('POST /v1/payment_intents', 'timeout');
    const key = randomUUID();
    const form = sale('4242424242424242');
    await expect(api('POST', '/v1/payment_intents', form, { 'idempotency-key': key }, fake, AbortSignal.timeout(300))).rejects.toThrow();
    const made = fake.intentsWithMetadata('paygate_trace_id', form['metadata[paygate_trace_id]'] ?? '');
    expect(made).toHaveLength(1);
    const retry = await api('POST', '/v1/payment_intents', form, { 'idempotency-key': key });
    expect(retry.json.id).toBe(made[0]?.id);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(
      fake
        .requestsTo('POST /v1/payment_intents')
        .slice(-2)
        .map((r) => [r.failure, r.status]),
    ).toEqual([
      ['timeout', null],
      [null, 200],
    ]);
  });

  it('reset_after_processing: the socket is destroyed after the PaymentIntent is made; the retry replays it', async () => {
    fake.failNext('POST /v1/payment_intents', 'reset_after_processing');
    const key = randomUUID();
    const form = sale('4242424242424242');
    await expect(api('POST', '/v1/payment_intents', form, { 'idempotency-key': key })).rejects.toThrow();
    const made = fake.intentsWithMetadata('paygate_trace_id', form['metadata[paygate_trace_id]'] ?? '');
    expect(made).toHaveLength(1);
    await settle(made[0]?.id ?? '', 'payment_intent.succeeded');
    expect((await api('POST', '/v1/payment_intents', form, { 'idempotency-key': key })).json.id).toBe(made[0]?.id);
  });

  it('reset_before_processing: the socket is destroyed and nothing is made; the retry processes it', async () => {
    fake.failNext('POST /v1/payment_intents', 'reset_before_processing');
    const key = randomUUID();
    const form = sale('4242424242424242');
    await expect(api('POST', '/v1/payment_intents', form, { 'idempotency-key': key })).rejects.toThrow();
    expect(fake.intentsWithMetadata('paygate_trace_id', form['metadata[paygate_trace_id]'] ?? '')).toEqual([]);
    const retry = await api('POST', '/v1/payment_intents', form, { 'idempotency-key': key });
    expect(retry.json.status).toBe('succeeded');
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
  });

  it.each([
    ['http_500', 500],
    ['http_503', 503],
  ] as const)("%s: answered %i with Stripe's api_error, nothing made, not kept for the key", async (mode, status) => {
    fake.failNext('POST /v1/payment_intents', mode);
    const key = randomUUID();
    const form = sale('4242424242424242');
    const answer = await api('POST', '/v1/payment_intents', form, { 'idempotency-key': key });
    expect(answer.status).toBe(status);
    expect(answer.json.error).toMatchObject({ type: 'api_error' });
    expect(fake.intentsWithMetadata('paygate_trace_id', form['metadata[paygate_trace_id]'] ?? '')).toEqual([]);
    expect((await api('POST', '/v1/payment_intents', form, { 'idempotency-key': key })).json.status).toBe('succeeded');
  });

  it('garbage: the PaymentIntent is made and the answer does not parse', async () => {
    fake.failNext('POST /v1/payment_intents', 'garbage');
    const form = sale('4242424242424242');
    const answer = await api('POST', '/v1/payment_intents', form);
    expect(answer.status).toBe(200);
    expect(answer.json).toBeUndefined();
    expect(fake.intentsWithMetadata('paygate_trace_id', form['metadata[paygate_trace_id]'] ?? '')).toHaveLength(1);
  });

  it('webhook_first: the events are delivered (and answered) before the answer', async () => {
    fake.failNext('POST /v1/payment_intents', 'webhook_first');
    const answer = await api('POST', '/v1/payment_intents', sale('4242424242424242'));
    const answered_ms = Date.now();
    const events = eventsOf(answer.json.id);
    expect(events.map((e) => e.state)).toEqual(['delivered', 'delivered', 'delivered']);
    for (const event of events) expect(event.deliveries[0]?.at_ms).toBeLessThanOrEqual(answered_ms);
  });

  it('works on the other routes too', async () => {
    const intent = (await api('POST', '/v1/payment_intents', sale('4242424242424242'))).json;
    fake.failNext('POST /v1/refunds', 'http_503');
    expect((await api('POST', '/v1/refunds', { payment_intent: intent.id })).status).toBe(503);
    fake.failNext('GET /v1/payment_intents/{intent}', 'garbage');
    expect((await api('GET', `/v1/payment_intents/${intent.id}`)).json).toBeUndefined();
    fake.failNext('GET /v1/payment_intents/search', 'reset_before_processing');
    await expect(api('GET', `/v1/payment_intents/search?query=${encodeURIComponent("status:'succeeded'")}`)).rejects.toThrow();
    fake.failNext('GET /v1/refunds', 'http_500');
    expect((await api('GET', '/v1/refunds')).status).toBe(500);
    fake.failNext('GET /v1/refunds/{refund}', 'timeout');
    await expect(api('GET', '/v1/refunds/re_x', undefined, {}, fake, AbortSignal.timeout(200))).rejects.toThrow();
    expect((await api('POST', '/v1/refunds', { payment_intent: intent.id })).json.status).toBe('succeeded');
  });

  it('answers an unknown path 404 and records it as a violation', async () => {
    const answer = await api('POST', '/v1/charges', { amount: '100' });
    expect(answer.status).toBe(404);
    expect(answer.json.error.message).toContain('Unrecognized request URL (POST: /v1/charges)');
    expect(fake.violations).toEqual([expect.objectContaining({ kind: 'request', label: 'POST /v1/charges' })]);
    fake.clearViolations();
  });
});
