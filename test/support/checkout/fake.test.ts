// Tests of the fake Checkout.com processor itself (fake.ts) with plain fetch requests, no gateway:
// the documented sandbox outcomes, idempotency, 3-D Secure, refunds, captures and voids, payouts,
// the list by reference, webhooks, every failure mode and the controls for disputes and refunds
// made in the dashboard; and that the fake's own answers and events keep to the published
// description (fake.violations stays empty unless a test sends a wrong request).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fetchAnswer, waitUntil, type FetchedAnswer } from '../fake-processor/fetch-answer.js';
import { startMerchantReceiver, type MerchantReceiver } from '../merchant-receiver.js';
import { checkoutSignature, startFakeCheckout, type FakeCheckout, type FakeEvent } from './fake.js';

const WEBHOOK_PATH = '/webhooks/checkout';
const WEBHOOK_SECRET = 'whsec-test-0123456789';
const CURRENCY_ACCOUNT = 'ca_y3oqhf46pyzuxjbcn2giaqnb44';
const PROCESSING_CHANNEL = 'pc_hpswyyx23geezflc2ocz3exn4y';

let fake: FakeCheckout;
let receiver: MerchantReceiver;
let reference_seq = 0;

async function api(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<FetchedAnswer> {
  return fetchAnswer(`${fake.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${fake.secret_key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
  });
}

function nextReference(prefix = 'ORD'): string {
  reference_seq += 1;
  return `${prefix}-${reference_seq}-${Date.now()}`;
}

function cardPayment(overrides: Record<string, unknown> = {}, source: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    source: {
      type: 'card',
      number: '4242424242424242',
      expiry_month: 12,
      expiry_year: 2030,
      cvv: '100',
      name: 'Jane Doe',
      billing_address: { address_line1: '1 Test Street', city: 'London', zip: 'W1T 4TJ', country: 'GB' },
      ...source,
    },
    amount: 1000,
    currency: 'EUR',
    reference: nextReference(),
    metadata: { order_id: 'o-1' },
    ...overrides,
  };
}

function cardDestination(number: string): Record<string, unknown> {
  return {
    type: 'card',
    number,
    expiry_month: 12,
    expiry_year: 2030,
    account_holder: { type: 'individual', first_name: 'Jane', last_name: 'Doe' },
  };
}

/** A card payout as Checkout.com takes it today (CardPayoutRequest; PaygateSupplementCardPayoutRequest). */
function cardPayout(overrides: Record<string, unknown> = {}, number = '4921817844445119'): Record<string, unknown> {
  return {
    source: { type: 'currency_account', id: CURRENCY_ACCOUNT },
    destination: cardDestination(number),
    amount: 2500,
    currency: 'GBP',
    reference: nextReference('PO'),
    instruction: { funds_transfer_type: 'FD' },
    processing_channel_id: PROCESSING_CHANNEL,
    metadata: { paygate_trace_id: 7001 },
    ...overrides,
  };
}

/** The same payout in the 2021 description's PayoutRequest form (source.amount and billing_descriptor required). */
function cardPayout2021(overrides: Record<string, unknown> = {}, number = '4921817844445119'): Record<string, unknown> {
  return {
    source: { type: 'currency_account', id: CURRENCY_ACCOUNT, amount: 2500 },
    destination: cardDestination(number),
    amount: 2500,
    currency: 'GBP',
    reference: nextReference('PO'),
    billing_descriptor: { reference: 'Withdrawal' },
    processing_channel_id: PROCESSING_CHANNEL,
    ...overrides,
  };
}

function eventsOf(payment_id: string): FakeEvent[] {
  return fake.events.filter((e) => e.payment_id === payment_id);
}

beforeAll(async () => {
  receiver = await startMerchantReceiver();
  fake = await startFakeCheckout({ payout_settle_ms: 10, webhook_retry_delay_ms: 5 });
  fake.setWebhookEndpoint(`${receiver.url}${WEBHOOK_PATH}`, WEBHOOK_SECRET);
});

afterAll(async () => {
  await fake?.close();
  await receiver?.close();
});

afterEach(() => {
  // Every answer and event of the fake, and every request of these tests, keeps to the description.
  expect(fake.violations).toEqual([]);
  fake.clearViolations();
  fake.holdEvents(false);
  receiver.clearReply(WEBHOOK_PATH);
});

describe('card payments', () => {
  it('approves and captures a payment: 201 Authorized, then payment_approved and payment_captured, signed', async () => {
    const body = cardPayment();
    const answer = await api('POST', '/payments', body);
    expect(answer.status).toBe(201);
    expect(answer.json).toMatchObject({
      status: 'Authorized',
      approved: true,
      response_code: '10000',
      response_summary: 'Approved',
      amount: 1000,
      currency: 'EUR',
      reference: body.reference,
    });
    expect(answer.json.id).toMatch(/^pay_[a-z2-7]{26}$/);
    expect(answer.json.source).toMatchObject({ type: 'card', last4: '4242', bin: '424242', expiry_month: 12, expiry_year: 2030 });
    expect(answer.headers.get('cko-request-id')).toBeTruthy();

    const captured = await fake.waitForEvent((e) => e.payment_id === answer.json.id && e.type === 'payment_captured');
    expect(eventsOf(answer.json.id).map((e) => e.type)).toEqual(['payment_approved', 'payment_captured']);
    expect(captured.state).toBe('delivered');
    expect(captured.json).toMatchObject({
      type: 'payment_captured',
      data: {
        id: answer.json.id,
        amount: 1000,
        currency: 'EUR',
        reference: body.reference,
        response_code: '10000',
        metadata: { order_id: 'o-1' },
      },
    });
    expect(captured.json.id).toMatch(/^evt_[a-z2-7]{26}$/);
    const received = receiver.requests.find((r) => r.json !== null && (r.json as { id: string }).id === captured.id);
    expect(received?.headers['cko-signature']).toBe(checkoutSignature(received?.body ?? '', WEBHOOK_SECRET));
    expect(received?.body).toBe(captured.body);

    const got = await api('GET', `/payments/${answer.json.id}`);
    expect(got.status).toBe(200);
    expect(got.json).toMatchObject({ id: answer.json.id, status: 'Captured', approved: true, amount: 1000 });
    const actions = await api('GET', `/payments/${answer.json.id}/actions`);
    expect(actions.json.map((a: { type: string }) => a.type)).toEqual(['Capture', 'Authorization']);
    expect(actions.json[1]).toMatchObject({ id: answer.json.action_id, approved: true, response_code: '10000', reference: body.reference });
  });

  it("shows a payment's metadata in GET /payments/{id}, the list by reference and every event", async () => {
    const body = cardPayment({ metadata: { paygate_trace_id: 9001 } });
    const answer = await api('POST', '/payments', body);
    await fake.waitForEvent((e) => e.payment_id === answer.json.id && e.type === 'payment_captured');
    expect(eventsOf(answer.json.id).map((e) => e.json.data.metadata)).toEqual([{ paygate_trace_id: 9001 }, { paygate_trace_id: 9001 }]);
    expect((await api('GET', `/payments/${answer.json.id}`)).json.metadata).toEqual({ paygate_trace_id: 9001 });
    const list = await api('GET', `/payments?reference=${encodeURIComponent(body.reference as string)}`);
    expect(list.json.data).toEqual([expect.objectContaining({ id: answer.json.id, metadata: { paygate_trace_id: 9001 } })]);
    expect(fake.payment(answer.json.id)?.metadata).toEqual({ paygate_trace_id: 9001 });
  });

  it('keeps an authorization uncaptured when capture is false', async () => {
    const answer = await api('POST', '/payments', cardPayment({ capture: false }));
    expect(answer.json.status).toBe('Authorized');
    await fake.waitForEvent((e) => e.payment_id === answer.json.id && e.type === 'payment_approved');
    expect(eventsOf(answer.json.id).map((e) => e.type)).toEqual(['payment_approved']);
    expect(fake.payment(answer.json.id)?.status).toBe('Authorized');
  });

  it('verifies a card for amount 0', async () => {
    const answer = await api('POST', '/payments', cardPayment({ amount: 0 }));
    expect(answer.json).toMatchObject({ status: 'Card Verified', approved: true, response_code: '10000' });
    await fake.waitForEvent((e) => e.payment_id === answer.json.id && e.type === 'card_verified');
  });

  it.each([
    ['amount xxx05 (soft decline)', {}, { amount: 1005 }, '20005', 'Declined - Do not honour'],
    ['amount xxx51 (soft decline)', {}, { amount: 2051 }, '20051', 'Insufficient funds'],
    ['the insufficient-funds card (soft decline)', { number: '4544249167673670' }, {}, '20051', 'Insufficient funds'],
    ['the lost card (hard decline)', { number: '4941202060999329' }, {}, '30041', 'Lost card - Pick up'],
    ['the stolen card (hard decline)', { number: '4539253655711767' }, {}, '30043', 'Stolen card - Pick up'],
    ['amount xxx33 (hard decline)', {}, { amount: 1033 }, '30033', 'Expired card - Pick up'],
    ['amount 4001 (risk)', {}, { amount: 4001 }, '40101', 'Risk blocked transaction'],
  ])('declines by %s', async (_name, source, overrides, code, summary) => {
    const answer = await api('POST', '/payments', cardPayment(overrides, source));
    expect(answer.status).toBe(201);
    expect(answer.json).toMatchObject({ status: 'Declined', approved: false, response_code: code, response_summary: summary });
    expect(answer.json.auth_code).toBeUndefined();
    expect(answer.json.source.id).toBeUndefined();
    const declined = await fake.waitForEvent((e) => e.payment_id === answer.json.id && e.type === 'payment_declined');
    expect(declined.json.data).toMatchObject({ response_code: code, response_summary: summary, approved: false });
    expect(fake.payment(answer.json.id)).toMatchObject({ status: 'Declined', response_code: code });
  });

  it('refuses an invalid card number or an expired card with 422', async () => {
    const luhn = await api('POST', '/payments', cardPayment({}, { number: '4242424242424241' }));
    expect(luhn.status).toBe(422);
    expect(luhn.json).toMatchObject({ error_type: 'request_invalid', error_codes: ['card_number_invalid'] });
    const expired = await api('POST', '/payments', cardPayment({}, { expiry_year: 2020 }));
    expect(expired.json.error_codes).toEqual(['card_expired']);
  });
});

describe('requests the description refuses', () => {
  it('answers 422 with the ValidationError shape and records the violation', async () => {
    const body = cardPayment();
    delete body.currency;
    const answer = await api('POST', '/payments', body);
    expect(answer.status).toBe(422);
    expect(answer.json).toMatchObject({ error_type: 'request_invalid', error_codes: ['currency_required'] });
    expect(answer.json.request_id).toEqual(expect.any(String));
    expect(fake.violations).toHaveLength(1);
    expect(fake.violations[0]?.kind).toBe('request');
    expect(fake.violations[0]?.problems.join('\n')).toContain('missing required property "currency"');
    expect(fake.paymentsWithReference(String(body.reference))).toEqual([]);
    fake.clearViolations();
  });

  it('flags a field the description does not have', async () => {
    const answer = await api('POST', '/payments', cardPayment({ customer_reference: 'x' }));
    expect(answer.status).toBe(422);
    expect(fake.violations[0]?.problems.join('\n')).toContain('"customer_reference" that the description does not declare');
    fake.clearViolations();
  });

  it('answers 401 with no body without the secret key', async () => {
    const answer = await api('POST', '/payments', cardPayment(), { authorization: 'Bearer sk_sbox_wrong' });
    expect(answer.status).toBe(401);
    expect(answer.text).toBe('');
    const none = await fetch(`${fake.url}/payments/pay_aaaaaaaaaaaaaaaaaaaaaaaaaa`);
    expect(none.status).toBe(401);
    expect(fake.violations.map((v) => v.problems.join(' '))).toEqual([expect.stringContaining('Authorization header is missing')]);
    fake.clearViolations();
  });

  it('answers 404 for an unknown payment', async () => {
    expect((await api('GET', '/payments/pay_aaaaaaaaaaaaaaaaaaaaaaaaaa')).status).toBe(404);
    expect((await api('GET', '/payments/pay_aaaaaaaaaaaaaaaaaaaaaaaaaa/actions')).status).toBe(404);
    expect((await api('POST', '/payments/pay_aaaaaaaaaaaaaaaaaaaaaaaaaa/refunds', {})).status).toBe(404);
  });
});

describe('idempotency (Cko-Idempotency-Key)', () => {
  it('answers the original answer again for the same key and body, with no second payment', async () => {
    const body = cardPayment();
    const key = `idem-${Date.now()}-a`;
    const first = await api('POST', '/payments', body, { 'cko-idempotency-key': key });
    const second = await api('POST', '/payments', body, { 'cko-idempotency-key': key });
    expect(second.status).toBe(first.status);
    expect(second.text).toBe(first.text);
    expect(fake.paymentsWithReference(String(body.reference))).toHaveLength(1);
    expect(fake.payment(first.json.id)?.idempotency_keys).toEqual([key]);
    const recorded = fake.requestsTo('POST /payments').filter((r) => r.idempotency_key === key);
    expect(recorded.map((r) => r.idempotency)).toEqual(['new', 'replayed']);
    await fake.waitForEvent((e) => e.payment_id === first.json.id && e.type === 'payment_captured');
    expect(eventsOf(first.json.id)).toHaveLength(2);
  });

  it('answers the original answer for the same key with a different body (as documented), and says so', async () => {
    const key = `idem-${Date.now()}-b`;
    const first = await api('POST', '/payments', cardPayment(), { 'cko-idempotency-key': key });
    const other = await api('POST', '/payments', cardPayment({ amount: 5000 }), { 'cko-idempotency-key': key });
    expect(other.text).toBe(first.text);
    expect(fake.requestsTo('POST /payments').at(-1)?.idempotency).toBe('replayed_different_body');
  });

  it('does not keep a refused request: the same key processes the corrected request', async () => {
    const key = `idem-${Date.now()}-c`;
    const refused = await api('POST', '/payments', cardPayment({}, { number: '4242424242424241' }), { 'cko-idempotency-key': key });
    expect(refused.status).toBe(422);
    const fixed = await api('POST', '/payments', cardPayment(), { 'cko-idempotency-key': key });
    expect(fixed.status).toBe(201);
  });
});

describe('3-D Secure', () => {
  async function startChallenge(overrides: Record<string, unknown> = {}, source: Record<string, unknown> = {}): Promise<FetchedAnswer> {
    const answer = await api(
      'POST',
      '/payments',
      cardPayment(
        {
          '3ds': { enabled: true },
          success_url: `${receiver.url}/return?outcome=success`,
          failure_url: `${receiver.url}/return?outcome=failure`,
          ...overrides,
        },
        source,
      ),
    );
    expect(answer.status).toBe(202);
    return answer;
  }

  async function submitPassword(redirect: string, password: string): Promise<Response> {
    const page = await fetch(redirect);
    const html = await page.text();
    expect(html).toContain('<label for="password">Password</label>');
    expect(html).toMatch(/<button id="txtButton" type="submit">Continue<\/button>/);
    const action = /<form id="form" method="post" action="([^"]+)"/.exec(html)?.[1] ?? '';
    return fetch(new URL(action, redirect), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ password }).toString(),
      redirect: 'manual',
    });
  }

  it('answers 202 with a redirect link; the right password leads to success_url with cko-session-id and an Authorized payment', async () => {
    const answer = await startChallenge();
    expect(answer.json).toMatchObject({ status: 'Pending', '3ds': { enrolled: 'Y' } });
    const redirect: string = answer.json._links.redirect.href;
    expect(redirect).toMatch(new RegExp(`^${fake.url}/3ds/sid_[a-z2-7]{26}$`));
    await fake.waitForEvent((e) => e.payment_id === answer.json.id && e.type === 'payment_pending');
    expect(fake.payment(answer.json.id)?.status).toBe('Pending');
    expect((await api('GET', `/payments/${answer.json.id}/actions`)).status).toBe(404);

    const submitted = await submitPassword(redirect, 'Checkout1!');
    expect(submitted.status).toBe(303);
    const location = submitted.headers.get('location') ?? '';
    const session_id = redirect.split('/').pop() ?? '';
    expect(location).toBe(`${receiver.url}/return?outcome=success&cko-session-id=${session_id}`);

    const by_session = await api('GET', `/payments/${session_id}`);
    expect(by_session.json).toMatchObject({
      id: answer.json.id,
      status: 'Captured',
      approved: true,
      '3ds': { authentication_response: 'Y' },
      eci: '05',
    });
    expect(by_session.json.actions.map((a: { type: string }) => a.type)).toEqual(['Capture', 'Authorization']);
    await fake.waitForEvent((e) => e.payment_id === answer.json.id && e.type === 'payment_captured');
    const [pending, approved] = eventsOf(answer.json.id);
    expect(eventsOf(answer.json.id).map((e) => e.type)).toEqual(['payment_pending', 'payment_approved', 'payment_captured']);
    expect(pending?.action_id).toBe(approved?.action_id);
    // Coming back to the page changes nothing and sends the browser to the same place.
    const again = await fetch(redirect, { redirect: 'manual' });
    expect(again.status).toBe(303);
    expect(again.headers.get('location')).toBe(location);
    expect(fake.payment(answer.json.id)?.status).toBe('Captured');
  });

  it('a wrong password fails authentication: failure_url, Declined 20151, payment_authentication_failed', async () => {
    const answer = await startChallenge();
    const submitted = await submitPassword(answer.json._links.redirect.href, 'not-the-password');
    expect(submitted.headers.get('location')).toMatch(/outcome=failure&cko-session-id=sid_/);
    expect(fake.payment(answer.json.id)).toMatchObject({ status: 'Declined', response_code: '20151', three_ds: 'failed' });
    const failed = await fake.waitForEvent((e) => e.payment_id === answer.json.id && e.type === 'payment_authentication_failed');
    expect(failed.json.data).toMatchObject({ response_code: '20151', response_summary: 'Cardholder failed 3DS authentication' });
  });

  it('challenges the documented challenge card even when 3-D Secure was not asked for', async () => {
    const answer = await api('POST', '/payments', cardPayment({ success_url: `${receiver.url}/return` }, { number: '4010061700000021' }));
    expect(answer.status).toBe(202);
    expect(answer.json._links.redirect.href).toContain('/3ds/sid_');
  });

  it('declines a not-enrolled card with 20150, or downgrades it with attempt_n3d', async () => {
    const declined = await api('POST', '/payments', cardPayment({ '3ds': { enabled: true } }, { number: '4532432452900131' }));
    expect(declined.json).toMatchObject({ status: 'Declined', response_code: '20150' });
    const downgraded = await api(
      'POST',
      '/payments',
      cardPayment({ '3ds': { enabled: true, attempt_n3d: true } }, { number: '4532432452900131' }),
    );
    expect(downgraded.json).toMatchObject({ status: 'Authorized', '3ds': { downgraded: true, enrolled: 'N' } });
  });

  it('abandoning the challenge declines the payment with 20152', async () => {
    const answer = await startChallenge();
    await fake.abandonChallenge(answer.json.id);
    expect(fake.payment(answer.json.id)).toMatchObject({ status: 'Declined', response_code: '20152' });
  });

  it('serves the page with a plain GET and answers an unknown session with 404', async () => {
    const unknown = await fetch(`${fake.url}/3ds/sid_aaaaaaaaaaaaaaaaaaaaaaaaaa`);
    expect(unknown.status).toBe(404);
    await unknown.text();
  });
});

describe('refunds', () => {
  async function capturedPayment(amount = 1000): Promise<string> {
    const answer = await api('POST', '/payments', cardPayment({ amount }));
    expect(answer.json.approved).toBe(true);
    return answer.json.id as string;
  }

  it('refunds part, then the rest, then refuses more', async () => {
    const id = await capturedPayment(1000);
    const partial = await api('POST', `/payments/${id}/refunds`, { amount: 400, reference: 'RF-1', metadata: { paygate_trace_id: 9002 } });
    expect(partial.status).toBe(202);
    expect(partial.json).toMatchObject({ reference: 'RF-1', _links: { payment: { href: `${fake.url}/payments/${id}` } } });
    expect(partial.json.action_id).toMatch(/^act_/);
    const refunded = await fake.waitForEvent((e) => e.type === 'payment_refunded' && e.action_id === partial.json.action_id);
    // The refund's own reference, action id and metadata, not the payment's.
    expect(refunded.json.data).toMatchObject({
      id,
      action_id: partial.json.action_id,
      amount: 400,
      reference: 'RF-1',
      metadata: { paygate_trace_id: 9002 },
    });
    expect((await api('GET', `/payments/${id}`)).json.status).toBe('Partially Refunded');

    const over = await api('POST', `/payments/${id}/refunds`, { amount: 700 });
    expect(over.status).toBe(422);
    expect(over.json.error_codes).toEqual(['refund_amount_exceeds_balance']);

    const rest = await api('POST', `/payments/${id}/refunds`, {});
    expect(rest.status).toBe(202);
    expect(fake.payment(id)).toMatchObject({ status: 'Refunded', refunded_amount: 1000 });
    expect(fake.payment(id)?.refunds.map((r) => r.amount)).toEqual([400, 600]);
    const nothing_left = await api('POST', `/payments/${id}/refunds`, { amount: 1 });
    expect(nothing_left.status).toBe(403);
    expect(nothing_left.text).toBe('');
  });

  it('refuses to refund a payment that is not captured (403)', async () => {
    const uncaptured = await api('POST', '/payments', cardPayment({ capture: false }));
    expect((await api('POST', `/payments/${uncaptured.json.id}/refunds`, { amount: 100 })).status).toBe(403);
    const declined = await api('POST', '/payments', cardPayment({ amount: 1005 }));
    expect((await api('POST', `/payments/${declined.json.id}/refunds`, {})).status).toBe(403);
  });

  it('declines a refund of an amount ending in 05 (payment_refund_declined)', async () => {
    const id = await capturedPayment(1000);
    const answer = await api('POST', `/payments/${id}/refunds`, { amount: 105 });
    expect(answer.status).toBe(202);
    const declined = await fake.waitForEvent((e) => e.type === 'payment_refund_declined' && e.action_id === answer.json.action_id);
    expect(declined.json.data).toMatchObject({ response_code: '20005', approved: false });
    expect(fake.payment(id)).toMatchObject({ status: 'Captured', refunded_amount: 0 });
  });

  it('replays a refund for the same idempotency key', async () => {
    const id = await capturedPayment(1000);
    const key = `refund-${Date.now()}`;
    const first = await api('POST', `/payments/${id}/refunds`, { amount: 100 }, { 'cko-idempotency-key': key });
    const again = await api('POST', `/payments/${id}/refunds`, { amount: 100 }, { 'cko-idempotency-key': key });
    expect(again.text).toBe(first.text);
    expect(fake.payment(id)?.refunds).toHaveLength(1);
  });
});

describe('captures and voids', () => {
  async function authorizedPayment(amount = 1000): Promise<string> {
    const answer = await api('POST', '/payments', cardPayment({ amount, capture: false }));
    expect(answer.json).toMatchObject({ status: 'Authorized', _links: { capture: {}, void: {} } });
    return answer.json.id as string;
  }

  it('captures part: 202 with the action id, payment_captured, Partially Captured with the rest released; refunds up to the capture', async () => {
    const id = await authorizedPayment(1000);
    const answer = await api('POST', `/payments/${id}/captures`, {
      amount: 600,
      capture_type: 'Final',
      reference: 'CAP-1',
      metadata: { paygate_trace_id: 31 },
    });
    expect(answer.status).toBe(202);
    expect(answer.json).toEqual({
      action_id: expect.stringMatching(/^act_[a-z2-7]{26}$/),
      reference: 'CAP-1',
      _links: { payment: { href: `${fake.url}/payments/${id}` } },
    });
    const captured = await fake.waitForEvent((e) => e.payment_id === id && e.type === 'payment_captured');
    expect(captured.json.data).toMatchObject({ id, action_id: answer.json.action_id, amount: 600, approved: true, response_code: '10000' });
    expect(fake.payment(id)).toMatchObject({ status: 'Partially Captured', captured_amount: 600, released_amount: 400 });
    const got = await api('GET', `/payments/${id}`);
    expect(got.json).toMatchObject({ status: 'Partially Captured', approved: true });
    expect(got.json._links.capture).toBeUndefined();
    expect(got.json._links.refund).toBeDefined();
    const actions = await api('GET', `/payments/${id}/actions`);
    expect(actions.json[0]).toMatchObject({
      id: answer.json.action_id,
      type: 'Capture',
      amount: 600,
      reference: 'CAP-1',
      metadata: { paygate_trace_id: 31 },
    });

    // One capture per payment (CHOSEN): a second is not allowed; refunds take no more than was captured.
    expect((await api('POST', `/payments/${id}/captures`, { amount: 400 })).status).toBe(403);
    expect((await api('POST', `/payments/${id}/refunds`, { amount: 601 })).json.error_codes).toEqual(['refund_amount_exceeds_balance']);
    expect((await api('POST', `/payments/${id}/refunds`, {})).status).toBe(202);
    expect(fake.payment(id)).toMatchObject({ status: 'Refunded', refunded_amount: 600 });
  });

  it('captures the whole amount when none is given; refuses an amount above it (422) or a payment that is no open authorization (403, 404)', async () => {
    const id = await authorizedPayment(1000);
    expect((await api('POST', `/payments/${id}/captures`, { amount: 1001 })).json.error_codes).toEqual(['capture_amount_exceeds_balance']);
    expect((await api('POST', `/payments/${id}/captures`, { amount: 0 })).json.error_codes).toEqual(['amount_invalid']);
    expect((await api('POST', `/payments/${id}/captures`, {})).status).toBe(202);
    expect(fake.payment(id)).toMatchObject({ status: 'Captured', captured_amount: 1000, released_amount: 0 });
    const sale = await api('POST', '/payments', cardPayment());
    const not_allowed = await api('POST', `/payments/${sale.json.id}/captures`, {});
    expect(not_allowed.status).toBe(403);
    expect(not_allowed.text).toBe('');
    expect((await api('POST', `/payments/${sale.json.id}/voids`, {})).status).toBe(403);
    expect((await api('POST', '/payments/pay_aaaaaaaaaaaaaaaaaaaaaaaaaa/captures', {})).status).toBe(404);
    expect((await api('POST', '/payments/pay_aaaaaaaaaaaaaaaaaaaaaaaaaa/voids', {})).status).toBe(404);
  });

  it('voids: 202, payment_voided, Voided with the whole hold released; nothing can be captured or refunded after', async () => {
    const id = await authorizedPayment(1500);
    const answer = await api('POST', `/payments/${id}/voids`, { reference: 'VOID-1' });
    expect(answer.status).toBe(202);
    expect(answer.json).toMatchObject({ action_id: expect.stringMatching(/^act_/), reference: 'VOID-1' });
    await fake.waitForEvent((e) => e.payment_id === id && e.type === 'payment_voided');
    expect(fake.payment(id)).toMatchObject({ status: 'Voided', approved: true, released_amount: 1500, captured_amount: 0 });
    expect((await api('GET', `/payments/${id}/actions`)).json.map((a: { type: string }) => a.type)).toEqual(['Void', 'Authorization']);
    expect((await api('POST', `/payments/${id}/captures`, {})).status).toBe(403);
    expect((await api('POST', `/payments/${id}/refunds`, {})).status).toBe(403);
    expect((await api('POST', `/payments/${id}/voids`, {})).status).toBe(403);
  });

  it('answers the same capture (and void) again for the same key, with one action', async () => {
    const id = await authorizedPayment(1000);
    const key = `capture-${Date.now()}`;
    const first = await api('POST', `/payments/${id}/captures`, { amount: 300 }, { 'cko-idempotency-key': key });
    const again = await api('POST', `/payments/${id}/captures`, { amount: 300 }, { 'cko-idempotency-key': key });
    expect(again.status).toBe(202);
    expect(again.text).toBe(first.text);
    expect(fake.payment(id)?.actions.filter((a) => a.type === 'Capture')).toHaveLength(1);
    expect(
      fake
        .requestsTo('POST /payments/{id}/captures')
        .slice(-2)
        .map((r) => r.idempotency),
    ).toEqual(['new', 'replayed']);
    expect(fake.payment(id)?.idempotency_keys).toContain(key);

    const other = await authorizedPayment(1000);
    const void_key = `void-${Date.now()}`;
    const voided = await api('POST', `/payments/${other}/voids`, {}, { 'cko-idempotency-key': void_key });
    expect((await api('POST', `/payments/${other}/voids`, {}, { 'cko-idempotency-key': void_key })).text).toBe(voided.text);
    expect(fake.payment(other)?.actions.filter((a) => a.type === 'Void')).toHaveLength(1);
  });

  it('declineNext: the capture or void is accepted, then declined with its event; the authorization stays open', async () => {
    const id = await authorizedPayment(1000);
    fake.declineNext('capture', '20068');
    const capture = await api('POST', `/payments/${id}/captures`, {});
    expect(capture.status).toBe(202);
    const declined = await fake.waitForEvent((e) => e.payment_id === id && e.type === 'payment_capture_declined');
    expect(declined.json.data).toMatchObject({ action_id: capture.json.action_id, approved: false, response_code: '20068' });
    fake.declineNext('void');
    expect((await api('POST', `/payments/${id}/voids`, {})).status).toBe(202);
    await fake.waitForEvent((e) => e.payment_id === id && e.type === 'payment_void_declined');
    expect(fake.payment(id)).toMatchObject({ status: 'Authorized', captured_amount: 0, released_amount: 0 });
    // The next ones go through.
    expect((await api('POST', `/payments/${id}/captures`, {})).status).toBe(202);
    expect(fake.payment(id)?.status).toBe('Captured');
  });

  it('hangNextCapture: the capture is made but not answered; the same key then answers it', async () => {
    const id = await authorizedPayment(1000);
    fake.hangNextCapture();
    const key = `hang-${Date.now()}`;
    await expect(api('POST', `/payments/${id}/captures`, {}, { 'cko-idempotency-key': key }, AbortSignal.timeout(300))).rejects.toThrow();
    expect(fake.payment(id)).toMatchObject({ status: 'Captured', captured_amount: 1000 });
    const retry = await api('POST', `/payments/${id}/captures`, {}, { 'cko-idempotency-key': key });
    expect(retry.status).toBe(202);
    expect(retry.json.action_id).toBe(fake.payment(id)?.actions.find((a) => a.type === 'Capture')?.id);
  });
});

describe('disputes and refunds made in the dashboard (test controls)', () => {
  async function capturedPayment(amount = 1000): Promise<string> {
    const answer = await api('POST', '/payments', cardPayment({ amount }));
    expect(answer.json.approved).toBe(true);
    return answer.json.id as string;
  }

  it('openDispute sends dispute_received and dispute_evidence_required, signed, with the dispute and the deadline; moveDispute the next', async () => {
    const id = await capturedPayment(2000);
    const dispute = await fake.openDispute(id, { amount: 1500 });
    expect(dispute).toMatchObject({
      payment_id: id,
      amount: 1500,
      currency: 'EUR',
      category: 'fraudulent',
      reason_code: '10.4',
      status: 'evidence_required',
    });
    const sent = eventsOf(id).filter((e) => e.type.startsWith('dispute_'));
    expect(sent.map((e) => [e.type, e.state, e.action_id])).toEqual([
      ['dispute_received', 'delivered', dispute.id],
      ['dispute_evidence_required', 'delivered', dispute.id],
    ]);
    const capture_id = fake.payment(id)?.actions.find((a) => a.type === 'Capture')?.id;
    expect(sent[0]!.json.data).toEqual({
      id: dispute.id,
      date: expect.any(String),
      category: 'fraudulent',
      amount: 1500,
      currency: 'EUR',
      reason_code: '10.4',
      evidence_required_by: dispute.evidence_required_by,
      payment_id: id,
      payment_action_id: capture_id,
      payment_reference: expect.any(String),
      payment_method: 'Visa',
    });
    const received = receiver.requests.find((r) => (r.json as { id?: string } | null)?.id === sent[0]!.id);
    expect(received?.headers['cko-signature']).toBe(checkoutSignature(received?.body ?? '', WEBHOOK_SECRET));

    expect(await fake.moveDispute(dispute.id, 'lost')).toMatchObject({ status: 'lost' });
    const lost = await fake.waitForEvent((e) => e.action_id === dispute.id && e.type === 'dispute_lost');
    expect(lost.json.data.evidence_required_by).toBeUndefined();
    expect(await fake.moveDispute(dispute.id, 'arbitration_won')).toMatchObject({ status: 'arbitration_won' });
    await expect(fake.moveDispute(dispute.id, 'won')).rejects.toThrow(/arbitration_won already/);
    expect(fake.dispute(dispute.id)?.events).toEqual([
      'dispute_received',
      'dispute_evidence_required',
      'dispute_lost',
      'dispute_arbitration_won',
    ]);
    expect(fake.payment(id)).toMatchObject({ status: 'Captured', disputes: [expect.objectContaining({ id: dispute.id })] });
  });

  it('refuses a dispute of a payment that captured nothing', async () => {
    const authorized = await api('POST', '/payments', cardPayment({ capture: false }));
    await expect(fake.openDispute(authorized.json.id)).rejects.toThrow(/no captured payment/);
  });

  it('refundFromDashboard: a Refund action with no reference or metadata, payment_refunded without a reference', async () => {
    const id = await capturedPayment(1000);
    const refund = await fake.refundFromDashboard(id, 250);
    expect(refund).toMatchObject({ type: 'Refund', amount: 250, approved: true, reference: null, metadata: null });
    const event = await fake.waitForEvent((e) => e.type === 'payment_refunded' && e.action_id === refund.id);
    expect(event.state).toBe('delivered');
    expect(event.json.data).toMatchObject({ id, action_id: refund.id, amount: 250, currency: 'EUR' });
    expect(event.json.data.reference).toBeUndefined();
    const actions = await api('GET', `/payments/${id}/actions`);
    const listed = actions.json.find((a: { id: string }) => a.id === refund.id);
    expect(listed).toMatchObject({ type: 'Refund', amount: 250 });
    expect(listed.reference).toBeUndefined();
    expect(listed.metadata).toBeUndefined();
    expect(fake.payment(id)).toMatchObject({ status: 'Partially Refunded', refunded_amount: 250 });
    expect((await fake.refundFromDashboard(id)).amount).toBe(750);
    await expect(fake.refundFromDashboard(id)).rejects.toThrow(/nothing to refund/);
  });
});

describe('payouts to a card', () => {
  it('answers 202 Pending, then becomes Paid with a signed payment_paid event; metadata shows in GET, the list and the event', async () => {
    const body = cardPayout();
    const answer = await api('POST', '/payments', body);
    expect(answer.status).toBe(202);
    expect(answer.json).toEqual({
      id: expect.stringMatching(/^pay_[a-z2-7]{26}$/),
      status: 'Pending',
      reference: body.reference,
      _links: { self: { href: `${fake.url}/payments/${answer.json.id}` } },
    });
    // (What a GET shows while it is pending: the next test, whose fake settles only when told.)
    const paid = await fake.waitForEvent((e) => e.payment_id === answer.json.id && e.type === 'payment_paid');
    expect(paid.json.data).toMatchObject({
      id: answer.json.id,
      amount: 2500,
      currency: 'GBP',
      response_code: '10000',
      reference: body.reference,
      metadata: { paygate_trace_id: 7001 },
    });
    expect(paid.signature).toBe(checkoutSignature(paid.body, WEBHOOK_SECRET));
    const received = receiver.requests.find((r) => r.body === paid.body);
    expect(received?.headers['cko-signature']).toBe(checkoutSignature(received?.body ?? '', WEBHOOK_SECRET));
    const got = await api('GET', `/payments/${answer.json.id}`);
    expect(got.json).toMatchObject({
      status: 'Paid',
      approved: true,
      amount: 2500,
      currency: 'GBP',
      reference: body.reference,
      destination: { type: 'card' },
      source: { type: 'currency_account', id: CURRENCY_ACCOUNT },
      metadata: { paygate_trace_id: 7001 },
    });
    expect(got.json.billing_descriptor).toBeUndefined();
    const list = await api('GET', `/payments?reference=${encodeURIComponent(body.reference as string)}`);
    expect(list.json).toMatchObject({
      total_count: 1,
      data: [{ id: answer.json.id, status: 'Paid', metadata: { paygate_trace_id: 7001 } }],
    });
    const actions = await api('GET', `/payments/${answer.json.id}/actions`);
    expect(actions.json).toEqual([expect.objectContaining({ type: 'Payout', amount: 2500, approved: true })]);
    expect(fake.payment(answer.json.id)).toMatchObject({ kind: 'payout', status: 'Paid', metadata: { paygate_trace_id: 7001 } });
  });

  it('declines a payout to the documented declining card, or of an amount ending in 05 (payment_declined)', async () => {
    const card = await api('POST', '/payments', cardPayout({}, '4818192525595285'));
    const declined = await fake.waitForEvent((e) => e.payment_id === card.json.id && e.type === 'payment_declined');
    expect(declined.json.data).toMatchObject({ response_code: '20005', metadata: { paygate_trace_id: 7001 } });
    expect(fake.payment(card.json.id)?.status).toBe('Declined');
    const amount = await api('POST', '/payments', cardPayout({ amount: 2505 }));
    await fake.waitForEvent((e) => e.payment_id === amount.json.id && e.type === 'payment_declined');
    expect((await api('GET', `/payments/${amount.json.id}`)).json).toMatchObject({ status: 'Declined', approved: false });
  });

  it('pays source.amount when amount is not given', async () => {
    const { amount: _amount, ...body } = cardPayout({ source: { type: 'currency_account', id: CURRENCY_ACCOUNT, amount: 1200 } });
    const answer = await api('POST', '/payments', body);
    expect(answer.status).toBe(202);
    const paid = await fake.waitForEvent((e) => e.payment_id === answer.json.id && e.type === 'payment_paid');
    expect(paid.json.data).toMatchObject({ amount: 1200 });
  });

  it('still takes the 2021 PayoutRequest form (source.amount, billing_descriptor, no funds_transfer_type)', async () => {
    const body = cardPayout2021();
    const answer = await api('POST', '/payments', body);
    expect(answer.status).toBe(202);
    await fake.waitForEvent((e) => e.payment_id === answer.json.id && e.type === 'payment_paid');
    const got = await api('GET', `/payments/${answer.json.id}`);
    expect(got.json).toMatchObject({ status: 'Paid', billing_descriptor: { reference: 'Withdrawal' } });
    expect(got.json.metadata).toBeUndefined();
  });

  it('settles only when told to with payout_settle_ms null; a GET meanwhile shows it Pending, not approved', async () => {
    const manual = await startFakeCheckout({ payout_settle_ms: null });
    try {
      const response = await fetch(`${manual.url}/payments`, {
        method: 'POST',
        headers: { authorization: `Bearer ${manual.secret_key}`, 'content-type': 'application/json' },
        body: JSON.stringify(cardPayout()),
      });
      const { id } = (await response.json()) as { id: string };
      await new Promise((resolve) => setTimeout(resolve, 30));
      expect(manual.payment(id)?.status).toBe('Pending');
      const pending = await fetch(`${manual.url}/payments/${id}`, { headers: { authorization: `Bearer ${manual.secret_key}` } });
      const pending_json = (await pending.json()) as Record<string, unknown>;
      expect(pending_json).toMatchObject({ status: 'Pending', metadata: { paygate_trace_id: 7001 } });
      expect(pending_json.approved).toBeUndefined();
      await manual.settlePayouts();
      expect(manual.payment(id)?.status).toBe('Paid');
      expect(manual.events.map((e) => [e.type, e.state])).toEqual([['payment_paid', 'no_endpoint']]);
      expect(manual.violations).toEqual([]);
    } finally {
      await manual.close();
    }
  });

  it('refuses (422) a payout without funds_transfer_type, a 2021-form one without source.amount, an unmapped destination, and one without any amount', async () => {
    const no_ftt = await api('POST', '/payments', cardPayout({ instruction: { purpose: 'income' } }));
    expect(no_ftt.status).toBe(422);
    expect(no_ftt.json.error_codes).toEqual(['instruction_funds_transfer_type_required']);
    const body = cardPayout2021();
    delete (body.source as Record<string, unknown>).amount;
    expect((await api('POST', '/payments', body)).status).toBe(422);
    expect((await api('POST', '/payments', cardPayout({ destination: { type: 'wallet', id: 'w_1' } }))).status).toBe(422);
    expect(fake.violations).toHaveLength(3);
    fake.clearViolations();
    // The description allows it (either amount is asked for in words only); the fake refuses it, with no violation.
    const { amount: _amount, ...no_amount } = cardPayout();
    const refused = await api('POST', '/payments', no_amount);
    expect(refused.status).toBe(422);
    expect(refused.json.error_codes).toEqual(['amount_required']);
    expect(fake.violations).toEqual([]);
  });
});

describe('GET /payments?reference= (supplement)', () => {
  it('lists the payments with a reference, newest first, with limit and skip', async () => {
    const reference = nextReference('LIST');
    const ids: string[] = [];
    for (const amount of [1000, 1005, 2000]) ids.push((await api('POST', '/payments', cardPayment({ amount, reference }))).json.id);
    ids.push((await api('POST', '/payments', cardPayout({ reference }))).json.id);
    await api('POST', '/payments', cardPayment());
    const all = await api('GET', `/payments?reference=${encodeURIComponent(reference)}`);
    expect(all.status).toBe(200);
    expect(all.json).toMatchObject({ limit: 10, skip: 0, total_count: 4 });
    expect(all.json.data.map((p: { id: string }) => p.id)).toEqual([...ids].reverse());
    const page = await api('GET', `/payments?reference=${encodeURIComponent(reference)}&limit=2&skip=1`);
    expect(page.json).toMatchObject({ limit: 2, skip: 1, total_count: 4 });
    expect(page.json.data.map((p: { id: string }) => p.id)).toEqual([ids[2], ids[1]]);
    expect((await api('GET', '/payments?reference=nothing-here')).json).toEqual({ limit: 10, skip: 0, total_count: 0, data: [] });
  });

  it('refuses a list without reference or with a bad limit (422 paging error)', async () => {
    const missing = await api('GET', '/payments');
    expect(missing.status).toBe(422);
    expect(missing.json.error_codes).toEqual(['reference_required']);
    const bad_limit = await api('GET', '/payments?reference=x&limit=500');
    expect(bad_limit.json.error_codes).toEqual(['paging_limit_invalid']);
    expect(fake.violations).toHaveLength(2);
    fake.clearViolations();
  });
});

describe('failure injection', () => {
  it('timeout: the payment is made but no answer comes; a retry with the same key gets the original answer', async () => {
    const body = cardPayment();
    const key = `timeout-${Date.now()}`;
    fake.failNext('POST /payments', 'timeout');
    // The client gives up once the fake has processed the request (no timing guess under load).
    const client_timeout = new AbortController();
    const pending = api('POST', '/payments', body, { 'cko-idempotency-key': key }, client_timeout.signal);
    await waitUntil(() => fake.paymentsWithReference(String(body.reference)).length === 1);
    client_timeout.abort(new Error('client time-out'));
    await expect(pending).rejects.toThrow();
    expect(fake.paymentsWithReference(String(body.reference))).toHaveLength(1);
    const retry = await api('POST', '/payments', body, { 'cko-idempotency-key': key });
    expect(retry.status).toBe(201);
    expect(retry.json.id).toBe(fake.paymentsWithReference(String(body.reference))[0]?.id);
    expect(fake.paymentsWithReference(String(body.reference))).toHaveLength(1);
    expect(
      fake
        .requestsTo('POST /payments')
        .filter((r) => r.idempotency_key === key)
        .map((r) => [r.failure, r.status, r.idempotency]),
    ).toEqual([
      ['timeout', null, 'new'],
      [null, 201, 'replayed'],
    ]);
  });

  it('reset_after_processing: the socket is destroyed after the payment is made', async () => {
    const body = cardPayment();
    fake.failNext('POST /payments', 'reset_after_processing');
    await expect(api('POST', '/payments', body)).rejects.toThrow();
    expect(fake.paymentsWithReference(String(body.reference))).toHaveLength(1);
  });

  it('reset_before_processing: the socket is destroyed and nothing is made', async () => {
    const body = cardPayment();
    fake.failNext('POST /payments', 'reset_before_processing');
    await expect(api('POST', '/payments', body)).rejects.toThrow();
    expect(fake.paymentsWithReference(String(body.reference))).toHaveLength(0);
  });

  it.each(['http_500', 'http_503'] as const)('%s: answered without processing', async (mode) => {
    const body = cardPayment();
    fake.failNext('POST /payments', mode);
    const answer = await api('POST', '/payments', body);
    expect(answer.status).toBe(mode === 'http_500' ? 500 : 503);
    expect(fake.paymentsWithReference(String(body.reference))).toHaveLength(0);
    // Only the next request fails.
    expect((await api('POST', '/payments', body)).status).toBe(201);
  });

  it('garbage: the payment is made and the answer does not parse', async () => {
    const body = cardPayment();
    fake.failNext('POST /payments', 'garbage');
    const answer = await api('POST', '/payments', body);
    expect(answer.status).toBe(201);
    expect(() => JSON.parse(answer.text)).toThrow();
    expect(fake.paymentsWithReference(String(body.reference))).toHaveLength(1);
  });

  it('webhook_first: the events are delivered (and answered) before the answer', async () => {
    receiver.setReply(WEBHOOK_PATH, async () => {
      await new Promise((resolve) => setTimeout(resolve, 50));
      return { status: 200, body: {} };
    });
    fake.failNext('POST /payments', 'webhook_first');
    const answer = await api('POST', '/payments', cardPayment());
    const mine = eventsOf(answer.json.id);
    expect(mine.map((e) => [e.type, e.state, e.status])).toEqual([
      ['payment_approved', 'delivered', 200],
      ['payment_captured', 'delivered', 200],
    ]);
  });

  it('works on the other routes too', async () => {
    const created = await api('POST', '/payments', cardPayment());
    fake.failNext('GET /payments/{id}', 'http_503');
    expect((await api('GET', `/payments/${created.json.id}`)).status).toBe(503);
    expect((await api('GET', `/payments/${created.json.id}`)).status).toBe(200);
    fake.failNext('POST /payments/{id}/refunds', 'reset_after_processing');
    await expect(api('POST', `/payments/${created.json.id}/refunds`, { amount: 100 })).rejects.toThrow();
    expect(fake.payment(created.json.id)?.refunded_amount).toBe(100);
  });
});

describe('webhooks', () => {
  it('retries a delivery the receiver refuses, a bounded number of times', async () => {
    const reference = nextReference('RETRY');
    let calls = 0;
    receiver.setReply(WEBHOOK_PATH, (request) => {
      if ((request.json as { data?: { reference?: string } } | null)?.data?.reference !== reference) return { status: 200, body: {} };
      calls += 1;
      return { status: calls === 1 ? 500 : 200, body: {} };
    });
    const answer = await api('POST', '/payments', cardPayment({ capture: false, reference }));
    const approved = await fake.waitForEvent((e) => e.payment_id === answer.json.id && e.type === 'payment_approved');
    expect(approved.deliveries.map((d) => d.status)).toEqual([500, 200]);
    expect(approved.state).toBe('delivered');

    receiver.setReply(WEBHOOK_PATH, { status: 503, body: {} });
    const second = await api('POST', '/payments', cardPayment({ capture: false }));
    const failed = await fake.waitForEvent((e) => e.payment_id === second.json.id && e.type === 'payment_approved');
    expect(failed.state).toBe('failed');
    expect(failed.deliveries).toHaveLength(3);
  });

  it('redelivers an event as it was, and sends raw bodies with any signature', async () => {
    const answer = await api('POST', '/payments', cardPayment({ capture: false }));
    const approved = await fake.waitForEvent((e) => e.payment_id === answer.json.id && e.type === 'payment_approved');
    const before = receiver.requestsTo(WEBHOOK_PATH).length;
    expect(await fake.redeliver(approved.id)).toBe(200);
    const copies = receiver.requestsTo(WEBHOOK_PATH).filter((r) => r.body === approved.body);
    expect(copies).toHaveLength(2);
    expect(copies[1]?.headers['cko-signature']).toBe(copies[0]?.headers['cko-signature']);

    expect(await fake.sendRaw('{"id":"evt_forged"}', 'deadbeef')).toBe(200);
    expect(await fake.sendRaw('{"id":"evt_unsigned"}', null)).toBe(200);
    const raw = receiver.requestsTo(WEBHOOK_PATH).slice(before + 1);
    expect(raw.map((r) => r.headers['cko-signature'])).toEqual(['deadbeef', undefined]);
  });

  it('holds events and releases them reversed, or in any order with duplicates', async () => {
    fake.holdEvents(true);
    const answer = await api('POST', '/payments', cardPayment());
    const held = await fake.waitForEvent((e) => e.payment_id === answer.json.id && e.type === 'payment_captured');
    expect(eventsOf(answer.json.id).map((e) => e.state)).toEqual(['held', 'held']);
    const start = receiver.requestsTo(WEBHOOK_PATH).length;
    await fake.releaseHeldEvents('reversed');
    const types = receiver
      .requestsTo(WEBHOOK_PATH)
      .slice(start)
      .map((r) => (r.json as { type: string }).type);
    expect(types).toEqual(['payment_captured', 'payment_approved']);

    const second = await api('POST', '/payments', cardPayment());
    await fake.waitForEvent((e) => e.payment_id === second.json.id && e.type === 'payment_captured');
    const [approved, captured] = eventsOf(second.json.id);
    const mark = receiver.requestsTo(WEBHOOK_PATH).length;
    await fake.releaseHeldEvents([captured?.id ?? '', approved?.id ?? '', captured?.id ?? '']);
    const ids = receiver
      .requestsTo(WEBHOOK_PATH)
      .slice(mark)
      .map((r) => (r.json as { id: string }).id);
    expect(ids).toEqual([captured?.id, approved?.id, captured?.id]);
    expect(held.id).not.toBe(captured?.id);
  });
});
