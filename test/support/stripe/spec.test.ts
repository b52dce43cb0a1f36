// Unit tests of the Stripe description loader (description.ts), form decoder (form.ts) and
// validator (spec.ts): the copy is the recorded subset, complete (no reference leads outside it),
// the supplement only adds; forms decode the way Stripe reads them; the validator accepts what
// the description allows (Stripe's own shapes, the request our connector sends) and rejects what
// it does not (missing, unknown and mistyped parameters, undeclared properties and statuses,
// events carrying the wrong object), so that it cannot silently accept everything.
import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadStripeDescription, mergeSupplement, STRIPE_SPEC_DIR, SUBSET_FILE, type JsonObject } from './description.js';
import { coerceByStripeSchema, decodeStripeForm } from './form.js';
import { createStripeValidator, stripeValidator, validateStripeEvent, validateStripeRequest, validateStripeResponse } from './spec.js';
import { OPERATIONS, ROOT_SCHEMAS } from '../../psp-specs/stripe/extract.js';

/** sha256 over "<sha256 of file>  <name>\n" lines (sorted by name) of LICENSE and spec3.subset.json, as recorded in SOURCE.md. */
const COPIED_FILES_SHA256 = '1d63bc0240c216f17c6665dec592db9a3de55ec90ab8231e92d83b638d44ab7d';
const AUTH = { authorization: 'Bearer sk_test_abc', 'content-type': 'application/x-www-form-urlencoded' };

const validator = stripeValidator();
const document = validator.description.document as any;

/** The form our connector sends for a customer-initiated card sale. */
function saleForm(extra: Record<string, string> = {}): string {
  return new URLSearchParams({
    amount: '1000',
    currency: 'usd',
    confirm: 'true',
    'payment_method_types[0]': 'card',
    'payment_method_data[type]': 'card',
    'payment_method_data[card][number]': '4242424242424242',
    'payment_method_data[card][exp_month]': '12',
    'payment_method_data[card][exp_year]': '2030',
    'payment_method_data[card][cvc]': '123',
    'payment_method_data[billing_details][name]': 'Jane Doe',
    'metadata[paygate_trace_id]': '42',
    return_url: 'http://127.0.0.1:3000/return/42/abc',
    ...extra,
  }).toString();
}

function postIntent(body: string, headers: Record<string, string> = AUTH): string[] {
  return validateStripeRequest({ method: 'POST', path: '/v1/payment_intents', headers, body });
}

/** A PaymentIntent with the fields the description requires and a few more, as Stripe answers. */
function intent(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'pi_3MtwBwLkdIwHu7ix28a3tqPa',
    object: 'payment_intent',
    amount: 2000,
    amount_capturable: 0,
    amount_received: 2000,
    capture_method: 'automatic',
    client_secret: 'pi_3MtwBwLkdIwHu7ix28a3tqPa_secret_YrKJUKribcBjcG8HVhfZluoGH',
    confirmation_method: 'automatic',
    created: 1680800504,
    currency: 'usd',
    last_payment_error: null,
    latest_charge: 'ch_3MtwBwLkdIwHu7ix28a3tqPa',
    livemode: false,
    metadata: { paygate_trace_id: '42' },
    next_action: null,
    payment_method: 'pm_1MtwBwLkdIwHu7ixU4wrVxXd',
    payment_method_types: ['card'],
    status: 'succeeded',
    ...overrides,
  };
}

function refund(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 're_1Nispe2eZvKYlo2Cd31jOCgZ',
    object: 'refund',
    amount: 1000,
    balance_transaction: 'txn_1Nispe2eZvKYlo2CYezqFhEx',
    charge: 'ch_1NirD82eZvKYlo2CIvbtLWuY',
    created: 1692942318,
    currency: 'usd',
    metadata: {},
    payment_intent: 'pi_1GszsK2eZvKYlo2CfhZyoZLp',
    reason: null,
    receipt_number: null,
    source_transfer_reversal: null,
    status: 'succeeded',
    transfer_reversal: null,
    ...overrides,
  };
}

/** A dispute as Stripe's API reference shows one (docs.stripe.com/api/disputes/object), trimmed to what the 2023 description declares. */
function dispute(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'du_1MtJUT2eZvKYlo2CNaw2HvEv',
    object: 'dispute',
    amount: 1000,
    balance_transactions: [],
    charge: 'ch_1AZtxr2eZvKYlo2CJDX8whov',
    created: 1680651737,
    currency: 'usd',
    evidence: { customer_name: null, receipt: null, uncategorized_text: null },
    evidence_details: { due_by: 1682294399, has_evidence: false, past_due: false, submission_count: 0 },
    is_charge_refundable: true,
    livemode: false,
    metadata: {},
    payment_intent: null,
    reason: 'general',
    status: 'warning_needs_response',
    ...overrides,
  };
}

function event(type: string, object: Record<string, unknown>, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'evt_1NG8Du2eZvKYlo2CUI79vXWy',
    object: 'event',
    api_version: '2023-08-16',
    created: 1686089970,
    data: { object },
    livemode: false,
    pending_webhooks: 1,
    request: { id: 'req_x7nxWAdmJJVvxn', idempotency_key: 'paygate-g-42-sale' },
    type,
    ...overrides,
  };
}

function refsIn(node: unknown, out: Set<string>): Set<string> {
  if (Array.isArray(node)) for (const item of node) refsIn(item, out);
  else if (typeof node === 'object' && node !== null) {
    const ref = (node as JsonObject).$ref;
    if (typeof ref === 'string') out.add(ref);
    for (const value of Object.values(node)) refsIn(value, out);
  }
  return out;
}

describe('the copied description', () => {
  it('is byte for byte the subset SOURCE.md records (nobody edited the copy)', () => {
    const lines = ['LICENSE', SUBSET_FILE]
      .sort()
      .map(
        (name) =>
          `${createHash('sha256')
            .update(fs.readFileSync(path.join(STRIPE_SPEC_DIR, name)))
            .digest('hex')}  ${name}\n`,
      )
      .join('');
    expect(createHash('sha256').update(lines).digest('hex')).toBe(COPIED_FILES_SHA256);
    expect(fs.readFileSync(path.join(STRIPE_SPEC_DIR, 'SOURCE.md'), 'utf8')).toContain(COPIED_FILES_SHA256);
  });

  it('holds exactly the operations the tests need, the root schemas, and every schema any of them references', () => {
    expect(document.info.version).toBe('2023-08-16');
    const operations = Object.entries(document.paths as Record<string, Record<string, unknown>>).flatMap(([template, item]) =>
      Object.keys(item).map((method) => `${method} ${template}`),
    );
    expect(operations.sort()).toEqual(OPERATIONS.map(([method, template]) => `${method} ${template}`).sort());
    for (const name of ROOT_SCHEMAS) expect(document.components.schemas[name]).toBeDefined();
    const names = new Set(Object.keys(document.components.schemas));
    for (const ref of refsIn(document, new Set())) expect(names.has(ref.replace('#/components/schemas/', '')), ref).toBe(true);
    expect(names.size).toBe(516);
  });

  it("adds the supplement (raw card details) without touching Stripe's text, and refuses a supplement that would replace it", () => {
    expect(validator.description.supplemented).toEqual([
      'add /paths/~1v1~1payment_intents/post/requestBody/content/application~1x-www-form-urlencoded/schema/properties/payment_method_data/properties/card',
      'append /paths/~1v1~1payment_intents/post/requestBody/content/application~1x-www-form-urlencoded/schema/properties/payment_method_data/properties/type/enum "card"',
      'add /paths/~1v1~1payment_intents/post/requestBody/content/application~1x-www-form-urlencoded/schema/properties/allowed_payment_method_types',
    ]);
    const raw = JSON.parse(fs.readFileSync(path.join(STRIPE_SPEC_DIR, SUBSET_FILE), 'utf8')) as JsonObject;
    const at =
      '/paths/~1v1~1payment_intents/post/requestBody/content/application~1x-www-form-urlencoded/schema/properties/payment_method_data/properties';
    expect(() => mergeSupplement(raw, { additions: [{ at, add: { type: {} } }] })).toThrow(/already exists/);
    expect(() => mergeSupplement(raw, { additions: [{ at: `${at}/type/enum`, append: ['alipay'] }] })).toThrow(/already/);
    expect(() => mergeSupplement(raw, { replace: [] })).toThrow(/unknown top-level key/);
    expect(() => mergeSupplement(raw, { additions: [{ at, add: {}, append: [] }] })).toThrow(/exactly one/);
    expect(() => mergeSupplement(raw, { additions: [{ at: '/paths/~1v1~1nothing', add: {} }] })).toThrow(/nothing at/);
  });

  it("without the supplement, raw card details are refused: Stripe's text does not declare them", () => {
    const bare = createStripeValidator({
      document: JSON.parse(fs.readFileSync(path.join(STRIPE_SPEC_DIR, SUBSET_FILE), 'utf8')) as JsonObject,
      supplemented: [],
    });
    const problems = bare.validateRequest({ method: 'POST', path: '/v1/payment_intents', headers: AUTH, body: saleForm() });
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringContaining('payment_method_data[card], which the description does not declare'),
        expect.stringContaining('payment_method_data[type] must be one of'),
      ]),
    );
    expect(loadStripeDescription().supplemented).toHaveLength(3);
  });
});

describe("form decoding (Stripe's bracket notation)", () => {
  it('decodes nested hashes, indexed and [] lists, and keeps leaves as text', () => {
    const decoded = decodeStripeForm(
      'amount=1000&metadata[paygate_trace_id]=42&payment_method_data[card][number]=4242424242424242&payment_method_types[0]=card&expand[]=a&expand[]=b&q=a%20b+c',
    );
    expect(decoded.problems).toEqual([]);
    expect(decoded.value).toEqual({
      amount: '1000',
      metadata: { paygate_trace_id: '42' },
      payment_method_data: { card: { number: '4242424242424242' } },
      payment_method_types: { 0: 'card' },
      expand: ['a', 'b'],
      q: 'a b c',
    });
  });

  it('reports names it cannot read, repeated values and a name used both ways', () => {
    expect(decodeStripeForm('a[b=1').problems).toEqual([expect.stringContaining('cannot read')]);
    expect(decodeStripeForm('a=1&a=2').problems).toEqual([expect.stringContaining('more than once')]);
    expect(decodeStripeForm('a=1&a[b]=2').problems).toEqual([expect.stringContaining('already a plain value')]);
    expect(decodeStripeForm('a[]=1&a[b]=2').problems).toEqual([expect.stringContaining('both as a list and as a hash')]);
    expect(decodeStripeForm(`${'a'.repeat(3)}${'[x]'.repeat(9)}=1`).problems).toEqual([expect.stringContaining('deeper')]);
  });

  it("types values by the operation's schema: integers, booleans, lists, anyOf members, metadata", () => {
    const schema = document.paths['/v1/payment_intents'].post.requestBody.content['application/x-www-form-urlencoded'].schema;
    const resolve = (ref: string): JsonObject | undefined => document.components.schemas[ref.replace('#/components/schemas/', '')];
    const typed = coerceByStripeSchema(
      decodeStripeForm(saleForm({ off_session: 'true', 'metadata[note]': '007' })).value,
      schema,
      resolve,
    ) as any;
    expect(typed).toMatchObject({
      amount: 1000,
      confirm: true,
      off_session: true,
      payment_method_types: ['card'],
      metadata: { paygate_trace_id: '42', note: '007' },
    });
    expect(typed.payment_method_data.card).toEqual({ number: '4242424242424242', exp_month: 12, exp_year: 2030, cvc: '123' });
    expect((coerceByStripeSchema({ off_session: 'recurring' }, schema, resolve) as any).off_session).toBe('recurring');
    expect((coerceByStripeSchema({ metadata: '' }, schema, resolve) as any).metadata).toBe('');
    expect((coerceByStripeSchema({ amount: '12x' }, schema, resolve) as any).amount).toBe('12x');
  });
});

describe('requests', () => {
  it('accepts the sale our connector sends (raw card details, metadata, return_url, payment_method_types)', () => {
    expect(postIntent(saleForm())).toEqual([]);
    expect(postIntent(saleForm({ off_session: 'true' }))).toEqual([]);
    // What the stripe package 23 sends instead of payment_method_types (our supplement).
    const endive = new URLSearchParams(saleForm());
    endive.delete('payment_method_types[0]');
    endive.set('allowed_payment_method_types[0]', 'card');
    expect(postIntent(endive.toString())).toEqual([]);
    expect(postIntent(new URLSearchParams({ amount: '500', currency: 'eur' }).toString())).toEqual([]);
  });

  it('accepts refunds, retrievals, the list and the search as the stripe package sends them', () => {
    expect(
      validateStripeRequest({
        method: 'POST',
        path: '/v1/refunds',
        headers: AUTH,
        body: 'payment_intent=pi_1&amount=400&metadata[paygate_trace_id]=43',
      }),
    ).toEqual([]);
    expect(validateStripeRequest({ method: 'GET', path: '/v1/payment_intents/pi_123', headers: AUTH })).toEqual([]);
    expect(validateStripeRequest({ method: 'GET', path: '/v1/refunds/re_123', headers: AUTH })).toEqual([]);
    expect(
      validateStripeRequest({ method: 'GET', path: '/v1/refunds?payment_intent=pi_1&limit=100&starting_after=re_1', headers: AUTH }),
    ).toEqual([]);
    expect(
      validateStripeRequest({
        method: 'GET',
        path: '/v1/payment_intents/search',
        query: { query: "metadata['paygate_trace_id']:'42'", 'expand[0]': 'total_count', limit: '10' },
        headers: AUTH,
      }),
    ).toEqual([]);
    expect(
      validateStripeRequest({
        method: 'GET',
        path: '/v1/refunds?created[gte]=1700000000',
        headers: { authorization: 'Basic c2tfdGVzdF9hYmM6' },
      }),
    ).toEqual([]);
  });

  it('accepts the capture and the cancel of an authorization; refuses what they do not take', () => {
    const post = (path: string, body: string) => validateStripeRequest({ method: 'POST', path, headers: AUTH, body });
    expect(post('/v1/payment_intents/pi_1/capture', 'amount_to_capture=600')).toEqual([]);
    expect(post('/v1/payment_intents/pi_1/capture', '')).toEqual([]);
    expect(post('/v1/payment_intents/pi_1/cancel', 'cancellation_reason=requested_by_customer')).toEqual([]);
    expect(post('/v1/payment_intents/pi_1/capture', 'amount=600')).toEqual([
      expect.stringContaining('amount, which the description does not declare'),
    ]);
    expect(post('/v1/payment_intents/pi_1/cancel', 'cancellation_reason=expired')).toEqual([expect.stringContaining('must be one of')]);
    expect(validator.matchOperation('POST', '/v1/payment_intents/pi_1/capture')).toMatchObject({
      template: '/v1/payment_intents/{intent}/capture',
      path_params: { intent: 'pi_1' },
    });
  });

  it('rejects missing, unknown and mistyped parameters, naming them in bracket notation', () => {
    expect(postIntent('currency=usd')).toEqual([expect.stringContaining('missing required field amount')]);
    expect(postIntent(saleForm({ amount: 'ten' }))).toEqual([expect.stringContaining('amount must be integer')]);
    expect(postIntent(saleForm({ confirm: 'yes' }))).toEqual([expect.stringContaining('confirm must be boolean')]);
    expect(postIntent(saleForm({ reference: 'ORD-1' }))).toEqual([
      expect.stringContaining('has reference, which the description does not declare'),
    ]);
    expect(postIntent(saleForm({ 'payment_method_data[card][expiry]': '12/30' }))).toEqual([
      expect.stringContaining('payment_method_data[card][expiry], which the description does not declare'),
    ]);
    expect(postIntent(saleForm({ 'payment_method_data[type]': 'cheque' }))).toEqual([
      expect.stringContaining('payment_method_data[type] must be one of'),
    ]);
    expect(postIntent(saleForm({ 'payment_method_data[card][exp_month]': '' }))).toEqual([
      expect.stringContaining('payment_method_data[card][exp_month] must be integer'),
    ]);
    expect(postIntent(saleForm({ off_session: 'sometimes' })).join(' ')).toContain('off_session');
    const without_month = new URLSearchParams(saleForm());
    without_month.delete('payment_method_data[card][exp_month]');
    expect(postIntent(without_month.toString())).toEqual([
      expect.stringContaining('missing required field payment_method_data[card][exp_month]'),
    ]);
    expect(validateStripeRequest({ method: 'POST', path: '/v1/refunds', headers: AUTH, body: 'payment_intent=pi_1&amount=-x' })).toEqual([
      expect.stringContaining('amount must be integer'),
    ]);
  });

  it('rejects a missing or malformed Authorization, a JSON body, undeclared query parameters, unknown paths and methods', () => {
    expect(postIntent(saleForm(), { 'content-type': 'application/x-www-form-urlencoded' })).toEqual([
      expect.stringContaining('Authorization header is missing'),
    ]);
    expect(postIntent(saleForm(), { ...AUTH, authorization: 'sk_test_abc' })).toEqual([
      expect.stringContaining('must be "Bearer <secret key>"'),
    ]);
    expect(postIntent(saleForm(), { ...AUTH, 'content-type': 'application/json' })).toEqual([
      expect.stringContaining('needs Content-Type: application/x-www-form-urlencoded'),
    ]);
    expect(validateStripeRequest({ method: 'GET', path: '/v1/refunds?payment_intent=pi_1&reference=x', headers: AUTH })).toEqual([
      expect.stringContaining('query parameter reference is not declared'),
    ]);
    expect(validateStripeRequest({ method: 'GET', path: '/v1/payment_intents/search', headers: AUTH })).toEqual([
      expect.stringContaining('query parameter query is required'),
    ]);
    expect(validateStripeRequest({ method: 'GET', path: '/v1/refunds?limit=ten', headers: AUTH })).toEqual([
      expect.stringContaining('limit must be integer'),
    ]);
    expect(validateStripeRequest({ method: 'GET', path: '/v1/charges', headers: AUTH })).toEqual([
      expect.stringContaining('no path of the description matches'),
    ]);
    expect(validateStripeRequest({ method: 'DELETE', path: '/v1/refunds/re_1', headers: AUTH })).toEqual([
      expect.stringContaining('DELETE is not declared for /v1/refunds/{refund}'),
    ]);
    expect(validateStripeRequest({ method: 'GET', path: '/v1/payment_intents/pi_1', headers: AUTH, body: 'amount=1' })).toEqual([
      expect.stringContaining('has amount, which the description does not declare'),
    ]);
  });

  it('matches literal segments before parameters', () => {
    expect(validator.matchOperation('GET', '/v1/payment_intents/search')).toMatchObject({
      template: '/v1/payment_intents/search',
      operation_id: 'GetPaymentIntentsSearch',
    });
    expect(validator.matchOperation('GET', '/v1/payment_intents/pi_1')).toMatchObject({
      template: '/v1/payment_intents/{intent}',
      path_params: { intent: 'pi_1' },
    });
  });
});

describe('answers', () => {
  it("accepts Stripe's shapes: a PaymentIntent, a refund, a list, a search result, an error", () => {
    expect(validateStripeResponse({ method: 'POST', path: '/v1/payment_intents', status: 200, body: intent() })).toEqual([]);
    expect(
      validateStripeResponse({
        method: 'GET',
        path: '/v1/payment_intents/pi_1',
        status: 200,
        body: JSON.stringify(
          intent({
            status: 'requires_action',
            next_action: {
              type: 'redirect_to_url',
              redirect_to_url: { url: 'https://hooks.stripe.com/x', return_url: 'https://shop/return' },
            },
          }),
        ),
      }),
    ).toEqual([]);
    expect(validateStripeResponse({ method: 'POST', path: '/v1/refunds', status: 200, body: refund() })).toEqual([]);
    expect(
      validateStripeResponse({
        method: 'GET',
        path: '/v1/refunds',
        status: 200,
        body: { object: 'list', data: [refund()], has_more: false, url: '/v1/refunds' },
      }),
    ).toEqual([]);
    expect(
      validateStripeResponse({
        method: 'GET',
        path: '/v1/payment_intents/search',
        status: 200,
        body: { object: 'search_result', data: [intent()], has_more: false, next_page: null, url: '/v1/payment_intents/search' },
      }),
    ).toEqual([]);
    const decline = {
      error: {
        charge: 'ch_1',
        code: 'card_declined',
        decline_code: 'generic_decline',
        doc_url: 'https://stripe.com/docs/error-codes/card-declined',
        message: 'Your card was declined.',
        payment_intent: intent({ status: 'requires_payment_method', last_payment_error: { code: 'card_declined', type: 'card_error' } }),
        type: 'card_error',
      },
    };
    expect(validateStripeResponse({ method: 'POST', path: '/v1/payment_intents', status: 402, body: decline })).toEqual([]);
    expect(
      validateStripeResponse({
        method: 'GET',
        path: '/v1/refunds/re_1',
        status: 404,
        body: { error: { code: 'resource_missing', message: "No such refund: 're_1'", param: 'id', type: 'invalid_request_error' } },
      }),
    ).toEqual([]);
  });

  it('rejects undeclared properties, wrong enums and types, missing required fields, text that is not JSON', () => {
    expect(validateStripeResponse({ method: 'POST', path: '/v1/payment_intents', status: 200, body: intent({ reference: 'x' }) })).toEqual([
      expect.stringContaining('has reference, which the description does not declare'),
    ]);
    expect(
      validateStripeResponse({ method: 'POST', path: '/v1/payment_intents', status: 200, body: intent({ status: 'approved' }) }),
    ).toEqual([expect.stringContaining('status must be one of')]);
    expect(validateStripeResponse({ method: 'POST', path: '/v1/payment_intents', status: 200, body: intent({ amount: '2000' }) })).toEqual([
      expect.stringContaining('amount must be integer'),
    ]);
    expect(
      validateStripeResponse({ method: 'POST', path: '/v1/payment_intents', status: 200, body: intent({ metadata: { n: 42 } }) }),
    ).toEqual([expect.stringContaining('metadata[n] must be string')]);
    const { id: _id, ...without_id } = intent();
    expect(validateStripeResponse({ method: 'POST', path: '/v1/payment_intents', status: 200, body: without_id })).toEqual([
      expect.stringContaining('missing required field id'),
    ]);
    expect(
      validateStripeResponse({
        method: 'POST',
        path: '/v1/payment_intents',
        status: 200,
        body: intent({ latest_charge: { id: 'ch_1' } }),
      }).join(' '),
    ).toContain('latest_charge');
    expect(
      validateStripeResponse({
        method: 'GET',
        path: '/v1/refunds',
        status: 200,
        body: { object: 'list', data: [], has_more: false, url: '/v1/charges' },
      }),
    ).toEqual([expect.stringContaining('url must match pattern')]);
    expect(
      validateStripeResponse({
        method: 'POST',
        path: '/v1/payment_intents',
        status: 402,
        body: { error: { type: 'card_declined', message: 'x' } },
      }),
    ).toEqual([expect.stringContaining('error[type] must be one of')]);
    expect(validateStripeResponse({ method: 'POST', path: '/v1/refunds', status: 200, body: '{"id":"re_' })).toEqual([
      expect.stringContaining('not JSON'),
    ]);
    expect(validateStripeResponse({ method: 'POST', path: '/v1/refunds', status: 200 })).toEqual([
      expect.stringContaining('none was sent'),
    ]);
  });
});

describe('events', () => {
  it('accepts an event carrying the object its type names', () => {
    expect(validateStripeEvent(event('payment_intent.succeeded', intent()))).toEqual([]);
    expect(
      validateStripeEvent(
        event('refund.failed', refund({ status: 'failed', failure_reason: 'expired_or_canceled_card' }), {
          data: { object: refund(), previous_attributes: { status: 'succeeded' } },
        }),
      ),
    ).toEqual([]);
    expect(validateStripeEvent(event('charge.refund.updated', refund(), { request: null }))).toEqual([]);
    expect(validateStripeEvent(event('charge.dispute.created', dispute()))).toEqual([]);
  });

  it('checks a dispute event as a dispute (charge.dispute.* is not charge.*)', () => {
    expect(validateStripeEvent(event('charge.dispute.closed', intent()))).toEqual([
      expect.stringContaining('carries a payment_intent, not a dispute'),
    ]);
    expect(validateStripeEvent(event('charge.dispute.updated', dispute({ status: 'charge_refunded' })))).toEqual([
      expect.stringContaining('dispute status must be one of'),
    ]);
    const { evidence_details: _e, ...without } = dispute();
    expect(validateStripeEvent(event('charge.dispute.created', without))).toEqual([
      expect.stringContaining('missing required field evidence_details'),
    ]);
  });

  it('rejects missing fields, an object of another kind than the type says, an invalid object, an unknown object', () => {
    const { pending_webhooks: _p, ...without } = event('payment_intent.succeeded', intent());
    expect(validateStripeEvent(without)).toEqual([expect.stringContaining('missing required field pending_webhooks')]);
    expect(validateStripeEvent(event('payment_intent.succeeded', refund()))).toEqual([
      expect.stringContaining('carries a refund, not a payment_intent'),
    ]);
    expect(validateStripeEvent(event('refund.created', refund({ amount: 'all' })))).toEqual([
      expect.stringContaining('data.object: refund amount must be integer'),
    ]);
    expect(validateStripeEvent(event('plan.created', { id: 'plan_1', object: 'plan' }))).toEqual(
      expect.arrayContaining([
        expect.stringContaining('type plan.created is none the tests expect'),
        expect.stringContaining('no schema for'),
      ]),
    );
    expect(validateStripeEvent(event('payment_intent.succeeded', intent(), { livemode: 'false' }))).toEqual([
      expect.stringContaining('livemode must be boolean'),
    ]);
  });
});
