// Unit tests of the Checkout.com description loader (description.ts) and validator (spec.ts):
// the copy is unchanged, the assembly follows the repository's build rules, the supplement only
// adds (body alternatives included: Checkout.com's own members stay as they are), the validator
// accepts what the description allows (its own consistent examples, today's card payouts through
// the supplement) and rejects what it does not (missing and mistyped fields, unknown source types
// and properties, undeclared statuses), so that it cannot silently accept everything.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CHECKOUT_SPEC_DIR, loadCheckoutDescription, type CheckoutDescription, type JsonObject } from './description.js';
import {
  checkoutValidator,
  createCheckoutValidator,
  validateCheckoutEvent,
  validateCheckoutRequest,
  validateCheckoutResponse,
} from './spec.js';

/** sha256 over "<sha256 of file>  <path>\n" lines (sorted by path) of LICENSE and nas_spec/**, as recorded in SOURCE.md. */
const COPIED_TREE_SHA256 = '7c66078d89b922cb9966b1a868ff530116e8abfb1dc0df429f71a336e5b766d1';
const AUTH = { authorization: 'Bearer sk_sbox_test', 'content-type': 'application/json' };
const PAY_ID = 'pay_mbabizu24mvu3mela5njyhpit4';

const validator = checkoutValidator();
const document = validator.description.document as any;

function cardPayment(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    source: { type: 'card', number: '4242424242424242', expiry_month: 6, expiry_year: 2030, cvv: '100', name: 'Jane Doe' },
    amount: 6540,
    currency: 'USD',
    reference: 'ORD-5023-4E89',
    ...overrides,
  };
}

/** A card payout as Checkout.com takes it today (CardPayoutRequest, 2023): what the connector should send. */
function todaysCardPayout(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    source: { type: 'currency_account', id: 'ca_y3oqhf46pyzuxjbcn2giaqnb44' },
    destination: {
      type: 'card',
      number: '4921817844445119',
      expiry_month: 12,
      expiry_year: 2030,
      account_holder: {
        type: 'individual',
        first_name: 'Jane',
        last_name: 'Doe',
        billing_address: { address_line1: '1 Test Street', city: 'London', zip: 'W1T 4TJ', country: 'GB' },
      },
    },
    amount: 2500,
    currency: 'GBP',
    reference: 'PO-215-5721',
    instruction: { funds_transfer_type: 'FD' },
    processing_channel_id: 'pc_hpswyyx23geezflc2ocz3exn4y',
    metadata: { paygate_trace_id: 42 },
    ...overrides,
  };
}

function postPayment(body: unknown, headers: Record<string, string> = AUTH): string[] {
  return validateCheckoutRequest({ method: 'POST', path: '/payments', headers, body });
}

function filesUnder(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => (entry.isDirectory() ? filesUnder(path.join(dir, entry.name)) : [path.join(dir, entry.name)]));
}

describe('the copied description', () => {
  it('is byte for byte what SOURCE.md records (nobody edited the copy)', () => {
    const relative = [
      'LICENSE',
      ...filesUnder(path.join(CHECKOUT_SPEC_DIR, 'nas_spec')).map((file) => path.relative(CHECKOUT_SPEC_DIR, file)),
    ].sort();
    const lines = relative
      .map(
        (rel) =>
          `${createHash('sha256')
            .update(fs.readFileSync(path.join(CHECKOUT_SPEC_DIR, rel)))
            .digest('hex')}  ${rel}\n`,
      )
      .join('');
    expect(relative).toHaveLength(377);
    expect(createHash('sha256').update(lines).digest('hex')).toBe(COPIED_TREE_SHA256);
    expect(fs.readFileSync(path.join(CHECKOUT_SPEC_DIR, 'SOURCE.md'), 'utf8')).toContain(COPIED_TREE_SHA256);
  });

  it('assembles paths from file names and components from nested folders, plus the labelled supplement', () => {
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining([
        '/payments',
        '/payments/{id}',
        '/payments/{id}/refunds',
        '/payments/{id}/actions',
        '/workflows/{workflowId}',
      ]),
    );
    expect(document.components.schemas['03_PaymentRequestCardSource']).toBeDefined();
    expect(document.components.parameters.ckoIdempotencyKey).toMatchObject({ in: 'header', name: 'Cko-Idempotency-Key' });
    expect(document.paths['/payments'].post.operationId).toBe('requestAPaymentOrPayout');
    expect(validator.description.supplemented).toEqual(
      expect.arrayContaining([
        'GET /payments',
        'schemas.PaygateSupplementPaymentList',
        'discriminator PaymentRequestDestination.card',
        'request alternative POST /payments PaygateSupplementCardPayoutRequest',
        'response 200 alternative GET /payments/{id} PaygateSupplementCardPayoutDetails',
      ]),
    );
    // Checkout.com's own members first, unchanged; ours after them.
    expect(document.paths['/payments'].post.requestBody.content['application/json'].schema.oneOf).toEqual([
      { $ref: '#/components/schemas/PaymentRequest' },
      { $ref: '#/components/schemas/PayoutRequest' },
      { $ref: '#/components/schemas/PaygateSupplementCardPayoutRequest' },
    ]);
    expect(document.paths['/payments/{id}'].get.responses['200'].content['application/json'].schema.oneOf).toEqual([
      { $ref: '#/components/schemas/PaymentDetails' },
      { $ref: '#/components/schemas/PayoutDetails' },
      { $ref: '#/components/schemas/PaygateSupplementCardPayoutDetails' },
    ]);
    expect(validator.matchOperation('GET', '/payments?reference=x')).toMatchObject({ template: '/payments', supplemented: true });
    expect(validator.matchOperation('POST', '/payments/pay_x/refunds')).toMatchObject({
      template: '/payments/{id}/refunds',
      path_params: { id: 'pay_x' },
      supplemented: false,
    });
    expect(validator.matchOperation('DELETE', '/payments')).toBeNull();
  });

  it('refuses a supplement that would replace an operation of the description', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-cko-spec-'));
    try {
      fs.mkdirSync(path.join(dir, 'nas_spec/paths'), { recursive: true });
      fs.mkdirSync(path.join(dir, 'nas_spec/components/schemas/Deep/Deeper'), { recursive: true });
      fs.writeFileSync(path.join(dir, 'nas_spec/swagger.yaml'), 'openapi: 3.0.1\ninfo: {title: t, version: "1"}\n');
      fs.writeFileSync(path.join(dir, 'nas_spec/paths/things@{id}@parts.yaml'), 'get:\n  responses:\n    "200": {description: ok}\n');
      fs.writeFileSync(path.join(dir, 'nas_spec/components/schemas/Deep/Deeper/Thing.yaml'), 'type: object\n');
      fs.writeFileSync(
        path.join(dir, 'paygate-supplement.yaml'),
        'paths:\n  /things/{id}/parts:\n    post:\n      responses:\n        "201": {description: made}\n',
      );
      const loaded = loadCheckoutDescription(dir);
      expect(Object.keys(loaded.document.paths as JsonObject)).toEqual(['/things/{id}/parts']);
      expect((loaded.document.components as any).schemas.Thing).toEqual({ type: 'object' });
      expect(loaded.supplemented).toEqual(['POST /things/{id}/parts']);
      fs.writeFileSync(path.join(dir, 'paygate-supplement.yaml'), 'paths:\n  /things/{id}/parts:\n    get:\n      responses: {}\n');
      expect(() => loadCheckoutDescription(dir)).toThrow('GET /things/{id}/parts already exists');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('body alternatives (x-paygate-body-alternatives)', () => {
    const operation = [
      'post:',
      '  requestBody:',
      '    content:',
      '      application/json:',
      '        schema:',
      '          oneOf:',
      '            - $ref: "#/components/schemas/Thing"',
      '  responses:',
      '    "201":',
      '      content:',
      '        application/json:',
      '          schema:',
      '            $ref: "#/components/schemas/Thing"',
      '    "202":',
      '      content:',
      '        application/json:',
      '          schema:',
      '            type: object',
      '',
    ].join('\n');
    const other = 'type: object\nproperties:\n  n:\n    type: integer\n';
    const alternative = (entry: string, extra = ''): string =>
      `components:\n  schemas:\n    Other:\n      type: object\n      required: [m]\n      properties:\n        m: {type: string}\n${extra}x-paygate-body-alternatives:\n${entry}`;

    function withDescription(supplement: string, check: (dir: string) => void): void {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-cko-alt-'));
      try {
        fs.mkdirSync(path.join(dir, 'nas_spec/paths'), { recursive: true });
        fs.mkdirSync(path.join(dir, 'nas_spec/components/schemas'), { recursive: true });
        fs.writeFileSync(path.join(dir, 'nas_spec/swagger.yaml'), 'openapi: 3.0.1\ninfo: {title: t, version: "1"}\n');
        fs.writeFileSync(path.join(dir, 'nas_spec/paths/things.yaml'), operation);
        fs.writeFileSync(path.join(dir, 'nas_spec/components/schemas/Thing.yaml'), other);
        fs.writeFileSync(path.join(dir, 'paygate-supplement.yaml'), supplement);
        check(dir);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    }

    it('appends a member to a oneOf, or makes a lone $ref the first member of one; nothing of the original is changed', () => {
      const supplement = alternative(
        [
          '  - {operation: POST /things, body: request, add: "#/components/schemas/Other"}',
          '  - {operation: POST /things, body: response 201, add: "#/components/schemas/Other"}',
        ].join('\n'),
      );
      withDescription(supplement, (dir) => {
        const loaded = loadCheckoutDescription(dir);
        const post = (loaded.document.paths as any)['/things'].post;
        expect(post.requestBody.content['application/json'].schema).toEqual({
          oneOf: [{ $ref: '#/components/schemas/Thing' }, { $ref: '#/components/schemas/Other' }],
        });
        expect(post.responses['201'].content['application/json'].schema).toEqual({
          oneOf: [{ $ref: '#/components/schemas/Thing' }, { $ref: '#/components/schemas/Other' }],
        });
        expect(post.responses['202'].content['application/json'].schema).toEqual({ type: 'object' });
        expect((loaded.document.components as any).schemas.Thing).toEqual({ type: 'object', properties: { n: { type: 'integer' } } });
        expect(loaded.supplemented).toEqual([
          'schemas.Other',
          'request alternative POST /things Other',
          'response 201 alternative POST /things Other',
        ]);
        const small = createCheckoutValidator(loaded);
        const posted = (body: unknown): string[] =>
          small.validateRequest({ method: 'POST', path: '/things', headers: { 'content-type': 'application/json' }, body });
        expect(posted({ n: 1 })).toEqual([]);
        expect(posted({ m: 'x' })).toEqual([]);
        expect(posted({ n: 'x' })).toEqual([
          'POST /things: request body matches none of Thing, Other (oneOf); closest is Thing:',
          'POST /things: request body /n must be integer',
        ]);
      });
    });

    it("refuses what would replace or rewrite Checkout.com's text, or is not ours", () => {
      const refused: [string, string, string?][] = [
        [
          '  - {operation: GET /things, body: request, add: "#/components/schemas/Other"}',
          "GET /things, which is no operation of Checkout.com's description",
        ],
        ['  - {operation: POST /things, body: request, add: "#/components/schemas/Thing"}', 'is not a schema the supplement adds'],
        ['  - {operation: POST /things, body: response 202, add: "#/components/schemas/Other"}', 'neither a oneOf nor a lone $ref'],
        [
          '  - {operation: POST /things, body: response 404, add: "#/components/schemas/Other"}',
          'response 404 of POST /things is not an object',
        ],
        [
          '  - {operation: POST /things, body: requestBody, add: "#/components/schemas/Other"}',
          'body must be "request" or "response <status>"',
        ],
        ['  - {operation: POST /things, body: request, add: "#/components/schemas/Other", replace: true}', 'unknown key replace'],
        [
          '  - {operation: POST /things, body: request, add: "#/components/schemas/Other"}\n  - {operation: POST /things, body: request, add: "#/components/schemas/Other"}',
          'has #/components/schemas/Other already',
        ],
        [
          '  - {operation: PUT /things, body: request, add: "#/components/schemas/Other"}',
          'PUT /things, which is no operation',
          'paths:\n  /things:\n    put:\n      requestBody: {content: {application/json: {schema: {oneOf: []}}}}\n',
        ],
      ];
      for (const [entry, message, extra] of refused) {
        withDescription(alternative(entry, extra ?? ''), (dir) => expect(() => loadCheckoutDescription(dir)).toThrow(message));
      }
      withDescription('x-paygate-body-alternative: []\n', (dir) =>
        expect(() => loadCheckoutDescription(dir)).toThrow('unknown top-level key x-paygate-body-alternative'),
      );
    });
  });
});

describe('accepting what the description allows', () => {
  it("accepts the description's own payment request example", () => {
    const example = document.paths['/payments'].post.requestBody.content['application/json'].examples.Payment.value;
    expect(postPayment(example)).toEqual([]);
  });

  it('accepts the examples of every component schema, except four the description itself gets wrong', () => {
    const wrong: Record<string, string[]> = {};
    let checked = 0;
    for (const [name, schema] of Object.entries<any>(document.components.schemas)) {
      if (schema.example === undefined) continue;
      checked += 1;
      const as_request = validator.validateSchema(name, schema.example, 'request');
      const as_response = validator.validateSchema(name, schema.example, 'response');
      if (as_request.length > 0 && as_response.length > 0) wrong[name] = as_response;
    }
    expect(checked).toBeGreaterThan(40);
    expect(Object.keys(wrong).sort()).toEqual(['3dsId', 'BankAccountFields', 'SessionId', 'event-links']);
    expect(wrong.SessionId).toContain('SessionId must match pattern "^(sid)_(\\w{26})$"');
    expect(wrong['event-links']).toContain('event-links has property "payment" that the description does not declare');
  });

  it('accepts the payment actions example as an answer of GET /payments/{id}/actions', () => {
    const example = document.components.schemas.PaymentActionsResponse.example;
    expect(validateCheckoutResponse({ method: 'GET', path: `/payments/${PAY_ID}/actions`, status: 200, body: example })).toEqual([]);
  });

  it("finds exactly the faults of the description's 201 example, and accepts it once they are fixed", () => {
    const example = document.paths['/payments'].post.responses['201'].content['application/json'].example;
    expect(validateCheckoutResponse({ method: 'POST', path: '/payments', status: 201, body: example })).toEqual([
      'POST /payments → 201: body /source is missing required property "expiry_month"',
      'POST /payments → 201: body /source is missing required property "expiry_year"',
      'POST /payments → 201: body /_links is missing required property "actions"',
      'POST /payments → 201: body /_links has property "action" that the description does not declare',
    ]);
    const { action, ...other_links } = example._links;
    const fixed = {
      ...example,
      source: { ...example.source, expiry_month: 6, expiry_year: 2025 },
      _links: { ...other_links, actions: action },
    };
    expect(validateCheckoutResponse({ method: 'POST', path: '/payments', status: 201, body: fixed })).toEqual([]);
  });

  it("finds the one fault of the description's payout example (source.amount is required by PayoutRequestSource)", () => {
    const example = document.paths['/payments'].post.requestBody.content['application/json'].examples.Payout.value;
    expect(postPayment(example)).toEqual([
      'POST /payments: request body matches none of PaymentRequest, PayoutRequest, PaygateSupplementCardPayoutRequest (oneOf); closest is PayoutRequest:',
      'POST /payments: request body /source is missing required property "amount"',
    ]);
    expect(postPayment({ ...example, source: { ...example.source, amount: 1000 } })).toEqual([]);
  });

  it("accepts a 2021-form payout (PayoutRequest) through the supplement's card destination", () => {
    const payout = {
      source: { type: 'currency_account', id: 'ca_y3oqhf46pyzuxjbcn2giaqnb44', amount: 1000 },
      destination: {
        type: 'card',
        number: '4921817844445119',
        expiry_month: 12,
        expiry_year: 2030,
        account_holder: { type: 'individual', first_name: 'Jane', last_name: 'Doe' },
      },
      amount: 1000,
      currency: 'GBP',
      reference: 'PO-1',
      billing_descriptor: { reference: 'Withdrawal' },
      processing_channel_id: 'pc_hpswyyx23geezflc2ocz3exn4y',
    };
    expect(postPayment(payout)).toEqual([]);
    const no_holder = { ...payout, destination: { ...payout.destination, account_holder: { type: 'individual', first_name: 'Jane' } } };
    expect(postPayment(no_holder)).toContain(
      'POST /payments: request body /destination/account_holder is missing required property "last_name"',
    );
  });

  it('accepts a card payout as Checkout.com takes it today, with metadata and an optional sender (supplement)', () => {
    expect(postPayment(todaysCardPayout())).toEqual([]);
    const sender = {
      type: 'corporate',
      company_name: 'Paygate Ltd',
      address: { address_line1: '1 Test Street', city: 'London', country: 'GB' },
      reference: 'CUST12345',
      reference_type: 'other',
      source_of_funds: 'deposit_account',
    };
    expect(postPayment(todaysCardPayout({ sender, instruction: { funds_transfer_type: 'FD', purpose: 'income' } }))).toEqual([]);
    // Either amount may be given (Checkout.com's text asks for one in words; the fake enforces it).
    const { amount: _amount, ...source_amount } = todaysCardPayout({
      source: { type: 'currency_account', id: 'ca_y3oqhf46pyzuxjbcn2giaqnb44', amount: 2500 },
    });
    expect(postPayment(source_amount)).toEqual([]);
  });

  it("accepts a card payout's details with metadata (supplement), and without it as PayoutDetails", () => {
    const links = { self: { href: `https://x/payments/${PAY_ID}` }, actions: { href: `https://x/payments/${PAY_ID}/actions` } };
    const details = {
      id: PAY_ID,
      requested_on: '2023-07-20T10:00:00Z',
      source: { type: 'currency_account', id: 'ca_y3oqhf46pyzuxjbcn2giaqnb44' },
      destination: { type: 'card', id: 'src_nwd3m4in3hkuddfpjsaevunhdy' },
      amount: 2500,
      currency: 'GBP',
      reference: 'PO-1',
      status: 'Paid',
      approved: true,
      _links: links,
    };
    const got = (body: unknown): string[] => validateCheckoutResponse({ method: 'GET', path: `/payments/${PAY_ID}`, status: 200, body });
    expect(got(details)).toEqual([]);
    expect(got({ ...details, metadata: { paygate_trace_id: 42 } })).toEqual([]);
    expect(got({ ...details, metadata: { paygate_trace_id: 42 }, funds_transfer_type: 'FD' })).toEqual([
      `GET /payments/${PAY_ID} → 200: body matches none of PaymentDetails, PayoutDetails, PaygateSupplementCardPayoutDetails (oneOf); closest is PaygateSupplementCardPayoutDetails:`,
      `GET /payments/${PAY_ID} → 200: body has property "funds_transfer_type" that the description does not declare`,
    ]);
    const list = { limit: 10, skip: 0, total_count: 2, data: [{ ...details, metadata: { paygate_trace_id: 42 } }, details] };
    expect(validateCheckoutResponse({ method: 'GET', path: '/payments', status: 200, body: list })).toEqual([]);
  });

  it('accepts a payment without amount (a card verification, as the description says)', () => {
    const { amount: _amount, ...verification } = cardPayment();
    expect(postPayment(verification)).toEqual([]);
  });

  it('accepts free-form metadata and an idempotency key header', () => {
    expect(
      validateCheckoutRequest({
        method: 'POST',
        path: '/payments',
        headers: { ...AUTH, 'Cko-Idempotency-Key': 'k-1' },
        body: cardPayment({ metadata: { anything: 'goes', n: 1 } }),
      }),
    ).toEqual([]);
  });

  it('accepts a list request and a list answer (supplement)', () => {
    expect(validateCheckoutRequest({ method: 'GET', path: '/payments?reference=ORD-1&limit=5&skip=0', headers: AUTH })).toEqual([]);
    expect(
      validateCheckoutResponse({ method: 'GET', path: '/payments', status: 200, body: { limit: 5, skip: 0, total_count: 0, data: [] } }),
    ).toEqual([]);
  });
});

describe('rejecting what the description does not allow', () => {
  it("a card payout of today's form without instruction.funds_transfer_type, or with what the later text dropped", () => {
    expect(postPayment(todaysCardPayout({ instruction: { purpose: 'income' } }))).toEqual([
      'POST /payments: request body matches none of PaymentRequest, PayoutRequest, PaygateSupplementCardPayoutRequest (oneOf); closest is PaygateSupplementCardPayoutRequest:',
      'POST /payments: request body /instruction is missing required property "funds_transfer_type"',
    ]);
    const { instruction: _instruction, ...no_instruction } = todaysCardPayout();
    expect(postPayment(no_instruction)).toContain('POST /payments: request body is missing required property "instruction"');
    // billing_descriptor was removed from card payouts in 2022; purpose is one of the listed values.
    expect(
      postPayment(
        todaysCardPayout({
          billing_descriptor: { reference: 'Withdrawal' },
          instruction: { funds_transfer_type: 'FD', purpose: 'Withdrawal' },
        }),
      ),
    ).toEqual(
      expect.arrayContaining([
        'POST /payments: request body has property "billing_descriptor" that the description does not declare',
        expect.stringMatching(/^POST \/payments: request body \/instruction\/purpose must be one of "family_support", /),
      ]),
    );
    expect(postPayment(todaysCardPayout({ processing_channel_id: 'pc_short' }))).toContain(
      'POST /payments: request body /processing_channel_id must NOT have fewer than 29 characters',
    );
  });

  it('a payout without amount, a payment without currency', () => {
    const payout = document.paths['/payments'].post.requestBody.content['application/json'].examples.Payout.value;
    const { amount: _amount, ...no_amount } = { ...payout, source: { ...payout.source, amount: 1000 } };
    expect(postPayment(no_amount)).toContain('POST /payments: request body is missing required property "amount"');
    const { currency: _currency, ...no_currency } = cardPayment();
    expect(postPayment(no_currency).join('\n')).toContain('is missing required property "currency"');
  });

  it('a wrong type', () => {
    expect(postPayment(cardPayment({ amount: '6540' }))).toContain('POST /payments: request body /amount must be integer');
    expect(postPayment(cardPayment({ amount: -1 }))).toContain('POST /payments: request body /amount must be >= 0');
    expect(
      postPayment(cardPayment({ source: { type: 'card', number: '4242424242424242', expiry_month: '06', expiry_year: 2030 } })),
    ).toContain('POST /payments: request body /source/expiry_month must be integer');
  });

  it('an unknown source type', () => {
    expect(postPayment(cardPayment({ source: { type: 'crypto', wallet: 'x' } }))).toContain(
      'POST /payments: request body /source/type must be one of "token", "id", "card", "network_token"',
    );
    expect(postPayment(cardPayment({ source: { number: '4242424242424242' } }))).toContain(
      'POST /payments: request body /source is missing required property "type"',
    );
  });

  it('a card source without its required fields, or with a property it does not declare', () => {
    const problems = postPayment(
      cardPayment({ source: { type: 'card', number: '4242424242424242', expiry_month: 6, cvv: '12', pin: '1234' } }),
    );
    expect(problems).toEqual(
      expect.arrayContaining([
        'POST /payments: request body /source is missing required property "expiry_year"',
        'POST /payments: request body /source/cvv must NOT have fewer than 3 characters',
        'POST /payments: request body /source has property "pin" that the description does not declare',
      ]),
    );
  });

  it('an unknown top-level property, a too long reference, a malformed URL and IP address', () => {
    const problems = postPayment(cardPayment({ order_id: 'x', reference: 'R'.repeat(51), success_url: 'not a url', payment_ip: '1.2.3' }));
    expect(problems).toEqual(
      expect.arrayContaining([
        'POST /payments: request body has property "order_id" that the description does not declare',
        'POST /payments: request body /reference must NOT have more than 50 characters',
        'POST /payments: request body /success_url must match format "uri"',
        'POST /payments: request body /payment_ip must match format "ipv4"',
      ]),
    );
  });

  it('a request without the Bearer secret key or without Content-Type', () => {
    expect(postPayment(cardPayment(), { 'content-type': 'application/json' })).toEqual([
      'POST /payments: the Authorization header is missing (the operation requires a secret key or an access token)',
    ]);
    expect(postPayment(cardPayment(), { authorization: 'sk_sbox_test', 'content-type': 'application/json' })).toEqual([
      'POST /payments: the Authorization header must be "Bearer <secret key or token>"',
    ]);
    expect(postPayment(cardPayment(), { authorization: 'Bearer sk_sbox_test' })).toEqual([
      'POST /payments: a JSON body needs Content-Type: application/json (got none)',
    ]);
  });

  it('an unknown path, an undeclared method, a malformed id, undeclared or missing query parameters', () => {
    expect(validateCheckoutRequest({ method: 'GET', path: '/charges', headers: AUTH })).toEqual([
      'GET /charges: no path of the description matches',
    ]);
    expect(validateCheckoutRequest({ method: 'DELETE', path: `/payments/${PAY_ID}`, headers: AUTH })).toEqual([
      `DELETE /payments/${PAY_ID}: DELETE is not declared for /payments/{id} in the description`,
    ]);
    expect(validateCheckoutRequest({ method: 'GET', path: '/payments/12345', headers: AUTH })).toEqual([
      'GET /payments/12345: path parameter id must match pattern "^(pay|sid)_(\\w{26})$"',
    ]);
    expect(validateCheckoutRequest({ method: 'GET', path: `/payments/${PAY_ID}?expand=all`, headers: AUTH })).toEqual([
      `GET /payments/${PAY_ID}: query parameter expand is not declared by GET /payments/{id}`,
    ]);
    expect(validateCheckoutRequest({ method: 'GET', path: '/payments?limit=500', headers: AUTH })).toEqual([
      'GET /payments: query parameter reference is required',
      'GET /payments: query parameter limit must be <= 100',
    ]);
  });

  it('a body sent to an operation that takes none', () => {
    expect(validateCheckoutRequest({ method: 'GET', path: `/payments/${PAY_ID}`, headers: AUTH, body: {} })).toEqual([
      `GET /payments/${PAY_ID}: GET /payments/{id} takes no body`,
    ]);
    expect(validateCheckoutRequest({ method: 'POST', path: `/payments/${PAY_ID}/refunds`, headers: AUTH, raw_body: '{"amount":' })).toEqual(
      [`POST /payments/${PAY_ID}/refunds: the body is not JSON ("{\\"amount\\":")`],
    );
  });

  it('a wrong status code, a body where none is declared, a missing body', () => {
    expect(validateCheckoutResponse({ method: 'GET', path: `/payments/${PAY_ID}`, status: 201, body: {} })).toEqual([
      `GET /payments/${PAY_ID} → 201: status 201 is not declared for GET /payments/{id} (declared: 200, 401, 404)`,
    ]);
    expect(validateCheckoutResponse({ method: 'POST', path: `/payments/${PAY_ID}/refunds`, status: 403, body: { error: 'no' } })).toEqual([
      `POST /payments/${PAY_ID}/refunds → 403: the description declares no body for this status, but one was sent`,
    ]);
    expect(validateCheckoutResponse({ method: 'POST', path: `/payments/${PAY_ID}/refunds`, status: 403, raw_body: '' })).toEqual([]);
    expect(validateCheckoutResponse({ method: 'POST', path: `/payments/${PAY_ID}/refunds`, status: 202, raw_body: '' })).toEqual([
      `POST /payments/${PAY_ID}/refunds → 202: the description declares a JSON body for this status, but none was sent`,
    ]);
  });

  it('an answer of the wrong shape: a refund answer without action_id, a 202 with an unknown status', () => {
    expect(
      validateCheckoutResponse({
        method: 'POST',
        path: `/payments/${PAY_ID}/refunds`,
        status: 202,
        body: { reference: 'x', _links: { payment: { href: 'h' } } },
      }),
    ).toEqual([`POST /payments/${PAY_ID}/refunds → 202: body is missing required property "action_id"`]);
    expect(
      validateCheckoutResponse({
        method: 'POST',
        path: '/payments',
        status: 202,
        body: { id: PAY_ID, status: 'Accepted', _links: { self: { href: 'h' } } },
      }),
    ).toEqual(['POST /payments → 202: body /status must be one of "Pending"']);
  });

  it('a details answer that is neither PaymentDetails nor PayoutDetails', () => {
    const links = { self: { href: `https://x/payments/${PAY_ID}` }, actions: { href: `https://x/payments/${PAY_ID}/actions` } };
    const source = { type: 'card', expiry_month: 6, expiry_year: 2030, last4: '4242', fingerprint: 'F0', bin: '424242' };
    const details = {
      id: PAY_ID,
      requested_on: '2021-07-20T10:00:00Z',
      amount: 100,
      currency: 'USD',
      approved: true,
      status: 'Captured',
      source,
      _links: links,
    };
    expect(validateCheckoutResponse({ method: 'GET', path: `/payments/${PAY_ID}`, status: 200, body: details })).toEqual([]);
    const { requested_on: _requested_on, ...without } = details;
    expect(validateCheckoutResponse({ method: 'GET', path: `/payments/${PAY_ID}`, status: 200, body: without })).toEqual([
      `GET /payments/${PAY_ID} → 200: body matches none of PaymentDetails, PayoutDetails, PaygateSupplementCardPayoutDetails (oneOf); closest is PaymentDetails:`,
      `GET /payments/${PAY_ID} → 200: body is missing required property "requested_on"`,
    ]);
  });

  it('readOnly properties in a request (PaymentAcceptedResponse.id is readOnly)', () => {
    const accepted = { id: PAY_ID, status: 'Pending', _links: { self: { href: 'h' } } };
    expect(validator.validateSchema('PaymentAcceptedResponse', accepted, 'response')).toEqual([]);
    expect(validator.validateSchema('PaymentAcceptedResponse', accepted, 'request')).toEqual([
      'PaymentAcceptedResponse /id must not be present here (readOnly/writeOnly in the description)',
      'PaymentAcceptedResponse /_links must not be present here (readOnly/writeOnly in the description)',
    ]);
  });
});

describe('webhook events (Events/EventObject)', () => {
  const event = {
    id: 'evt_az5sblvku4ge3dwpztvyizgcau',
    type: 'payment_captured',
    created_on: '2019-06-07T08:25:22Z',
    data: {
      id: PAY_ID,
      action_id: 'act_gse7gcrhleuedmzhq25n3mhweq',
      amount: 10000,
      currency: 'EUR',
      response_code: '10000',
      response_summary: 'Approved',
      processed_on: '2019-06-07T08:25:22Z',
      reference: 'ORD-5023-4E89',
      metadata: { coupon_code: 'NY2018' },
    },
    _links: { self: { href: 'https://api.sandbox.checkout.com/events/evt_az5sblvku4ge3dwpztvyizgcau' } },
  };

  it('accepts an event of the documented shape', () => {
    expect(validateCheckoutEvent(event)).toEqual([]);
  });

  it('rejects a short event id, an unknown data property and a wrong status', () => {
    expect(validateCheckoutEvent({ ...event, id: 'evt_1', data: { ...event.data, balances: {}, status: 'Paid' } })).toEqual([
      'webhook event: EventObject /id must NOT have fewer than 30 characters',
      'webhook event: EventObject /data/status must be one of "Pending", "Authorized", "Voided", "Partially Captured", "Captured", "Partially Refunded", "Refunded", "Declined", "Canceled"',
      'webhook event: EventObject /data has property "balances" that the description does not declare',
    ]);
  });
});

describe('dispute events (our supplement, PaygateSupplementDisputeEvent)', () => {
  // Checkout.com's own example of a dispute event (its webhook page for dispute_evidence_submitted, 2022).
  const dispute_event = {
    id: 'evt_b6anegml5j6u7kwzuzdg6r4sem',
    type: 'dispute_evidence_submitted',
    created_on: '2018-06-21T12:00:31Z',
    data: {
      id: 'dsp_9rjdlsd4epepfjyyf9vl',
      date: '2018-07-06T11:19:20Z',
      category: 'canceled_recurring',
      amount: 20020,
      currency: 'USD',
      reason_code: '10.4',
      payment_id: 'pay_cnhuomagalglgozxy5zmaaaaaa',
      payment_action_id: 'act_7B15779D173D0W45700D',
      payment_reference: 'some-company-ref',
      payment_method: 'Visa',
    },
    _links: { self: { href: 'https://api.checkout.com/workflows/events/evt_b6anegml5j6u7kwzuzdg6r4sem' } },
  };

  it("accepts Checkout.com's example (its payment id made the description's length), with a deadline or a resolved reason", () => {
    expect(validator.description.supplemented).toEqual(
      expect.arrayContaining(['schemas.PaygateSupplementDisputeEvent', 'schemas.PaygateSupplementDisputeEventData']),
    );
    expect(validateCheckoutEvent(dispute_event)).toEqual([]);
    expect(
      validateCheckoutEvent({
        ...dispute_event,
        type: 'dispute_resolved',
        data: { ...dispute_event.data, evidence_required_by: '2018-08-21T00:00:00Z', resolved_reason: 'already_refunded' },
      }),
    ).toEqual([]);
  });

  it('checks a dispute event against the dispute shape, and a payment event against EventObject', () => {
    expect(validateCheckoutEvent({ ...dispute_event, data: { ...dispute_event.data, id: PAY_ID, category: 'angry', extra: 1 } })).toEqual([
      'webhook event: PaygateSupplementDisputeEvent /data/id must match pattern "^(dsp)_(\\w{20,22})$"',
      'webhook event: PaygateSupplementDisputeEvent /data/category must be one of "fraudulent", "unrecognized", "canceled_recurring", "product_service_not_received", "not_as_described", "credit_not_issued", "duplicate", "incorrect_amount", "general"',
      'webhook event: PaygateSupplementDisputeEvent /data has property "extra" that the description does not declare',
    ]);
    const { payment_id: _, ...without_payment } = dispute_event.data;
    expect(validateCheckoutEvent({ ...dispute_event, data: without_payment })).toEqual([
      'webhook event: PaygateSupplementDisputeEvent /data is missing required property "payment_id"',
    ]);
    // The same data under a payment event's type is no payment's data.
    expect(validateCheckoutEvent({ ...dispute_event, type: 'payment_captured' }).length).toBeGreaterThan(0);
  });
});

describe('OpenAPI 3.0 constructs, on a small description of our own', () => {
  const schemas: JsonObject = {
    Pet: {
      type: 'object',
      required: ['kind'],
      discriminator: { propertyName: 'kind', mapping: { cat: '#/components/schemas/Cat', dog: '#/components/schemas/Dog' } },
      properties: { kind: { type: 'string' }, id: { type: 'string', readOnly: true }, secret: { type: 'string', writeOnly: true } },
    },
    Cat: {
      allOf: [
        { $ref: '#/components/schemas/Pet' },
        { type: 'object', required: ['lives'], properties: { lives: { type: 'integer', minimum: 0, maximum: 9, exclusiveMaximum: true } } },
      ],
    },
    Dog: {
      allOf: [
        { $ref: '#/components/schemas/Pet' },
        {
          type: 'object',
          properties: { nickname: { type: 'string', nullable: true }, tags: { type: 'object', additionalProperties: { type: 'string' } } },
        },
      ],
    },
    Owner: {
      type: 'object',
      properties: { pet: { description: 'annotated', allOf: [{ $ref: '#/components/schemas/Pet' }] }, notes: { type: 'object' } },
    },
  };
  const description: CheckoutDescription = {
    document: {
      openapi: '3.0.1',
      paths: {
        '/owners': {
          post: {
            requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Owner' } } } },
            responses: {
              '201': { description: 'made', content: { 'application/json': { schema: { $ref: '#/components/schemas/Owner' } } } },
            },
          },
        },
      },
      components: { schemas, parameters: {} },
    },
    supplemented: [],
  };
  const small = createCheckoutValidator(description);
  const post = (body: unknown): string[] =>
    small.validateRequest({ method: 'POST', path: '/owners', headers: { 'content-type': 'application/json' }, body });
  const answer = (body: unknown): string[] => small.validateResponse({ method: 'POST', path: '/owners', status: 201, body });

  it('dispatches on the discriminator through an annotated one-member allOf, and closes each variant', () => {
    expect(post({ pet: { kind: 'cat', lives: 8 }, notes: { free: 'form' } })).toEqual([]);
    expect(post({ pet: { kind: 'cat' } })).toEqual(['POST /owners: request body /pet is missing required property "lives"']);
    expect(post({ pet: { kind: 'cat', lives: 3, nickname: 'Tom' } })).toEqual([
      'POST /owners: request body /pet has property "nickname" that the description does not declare',
    ]);
    expect(post({ pet: { kind: 'fish' } })).toEqual(['POST /owners: request body /pet/kind must be one of "cat", "dog"']);
  });

  it('converts boolean exclusiveMaximum, nullable and additionalProperties schemas', () => {
    expect(post({ pet: { kind: 'cat', lives: 9 } })).toEqual(['POST /owners: request body /pet/lives must be < 9']);
    expect(post({ pet: { kind: 'dog', nickname: null, tags: { colour: 'brown' } } })).toEqual([]);
    expect(post({ pet: { kind: 'dog', tags: { age: 3 } } })).toEqual(['POST /owners: request body /pet/tags/age must be string']);
  });

  it('forbids readOnly properties in requests and writeOnly ones in answers', () => {
    expect(post({ pet: { kind: 'dog', id: 'p1' } })).toEqual([
      'POST /owners: request body /pet/id must not be present here (readOnly/writeOnly in the description)',
    ]);
    expect(post({ pet: { kind: 'dog', secret: 's' } })).toEqual([]);
    expect(answer({ pet: { kind: 'dog', id: 'p1' } })).toEqual([]);
    expect(answer({ pet: { kind: 'dog', secret: 's' } })).toEqual([
      'POST /owners → 201: body /pet/secret must not be present here (readOnly/writeOnly in the description)',
    ]);
  });
});

describe('compiling before the first request (compileAll)', () => {
  it("compiles every schema a payment's request and answer checks use, so that checking them compiles nothing more", () => {
    const fresh = createCheckoutValidator();
    const keys = ['POST /payments', 'GET /payments/{id}', 'POST /payments/{id}/refunds'];
    const compiled = fresh.compileAll(keys);
    expect(compiled).toBeGreaterThan(keys.length);
    const example = document.paths['/payments'].post.requestBody.content['application/json'].examples.Payment.value;
    expect(fresh.validateRequest({ method: 'POST', path: '/payments', headers: AUTH, body: example })).toEqual([]);
    fresh.validateResponse({ method: 'POST', path: '/payments', status: 201, body: {} });
    fresh.validateResponse({ method: 'GET', path: `/payments/${PAY_ID}`, status: 200, body: {} });
    fresh.validateRequest({ method: 'POST', path: `/payments/${PAY_ID}/refunds`, headers: AUTH, body: { amount: 1 } });
    expect(fresh.compileAll(keys)).toBe(compiled);
  });

  it('leaves the operations it was not asked for to their first use', () => {
    const fresh = createCheckoutValidator();
    const compiled = fresh.compileAll(['GET /payments/{id}']);
    fresh.validateRequest({ method: 'POST', path: '/payments', headers: AUTH, body: cardPayment() });
    expect(fresh.compileAll(['GET /payments/{id}'])).toBeGreaterThan(compiled);
  });
});
