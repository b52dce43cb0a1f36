// Checks requests to, and answers and webhook events from, PayPal against its published OpenAPI
// 3.0.3 descriptions (the five files copied into test/psp-specs/paypal, see SOURCE.md there), so
// that neither the `paypal` connector nor the fake PayPal can drift from the real API. Each check
// returns a list of problems, empty when the message is valid.
//
// How the descriptions are read: each document is given to Ajv whole (its $id the file's name),
// and a message is checked against `{$ref: "<file>#/components/schemas/<name>"}` (or the inline
// schema of the operation, its `allOf` of error schemas included). PayPal's schemas do not close
// their objects (no additionalProperties), so neither do we; `nullable`, `readOnly`, `format` and
// `discriminator` are not checked. Requests: the path must match an operation of one of the five
// descriptions, the method must be declared, Authorization must be "Bearer <token>", a JSON body
// must be sent as application/json and match the operation's request schema, PayPal-Request-Id
// (where the operation declares it) must keep to its length. The OAuth token call
// (POST /v1/oauth2/token) is in none of the five files: `validateTokenRequest` checks it by
// PayPal's "Get an access token" page (SOURCE.md). Events: `event` of the webhooks description,
// then `resource` by resource_type (capture, refund, checkout-order, payouts_item, dispute).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2019, type ErrorObject, type ValidateFunction } from 'ajv/dist/2019.js';
import {
  type DescribedOperation,
  describedOperations,
  lowerCaseHeaders,
  type JsonObject,
  operationTable,
  type OperationTable,
  projectValidator,
  unmatchedRequestProblem,
} from '../fake-processor/openapi-operations.js';

export const PAYPAL_SPEC_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../psp-specs/paypal');
export const PAYPAL_FILES = [
  'checkout_orders_v2.json',
  'payments_payment_v2.json',
  'payments_payouts_batch_v1.json',
  'notifications_webhooks_v1.json',
  'customer_disputes_v1.json',
] as const;
type PayPalFile = (typeof PAYPAL_FILES)[number];

export interface PayPalRequestToCheck {
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string | readonly string[] | number | undefined>>;
  /** The body text as sent ('' for none). */
  readonly body: string;
}

export interface PayPalResponseToCheck {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly body: unknown;
}

/** The schema an event's resource is, by its resource_type. */
const RESOURCE_SCHEMAS: Readonly<Record<string, readonly [PayPalFile, string]>> = {
  capture: ['payments_payment_v2.json', 'capture-2'],
  refund: ['payments_payment_v2.json', 'refund'],
  'checkout-order': ['checkout_orders_v2.json', 'order'],
  payouts_item: ['payments_payouts_batch_v1.json', 'payout_item-2'],
  dispute: ['customer_disputes_v1.json', 'dispute'],
};

const MAX_PROBLEMS = 30;

export interface PayPalValidator {
  readonly table: OperationTable;
  validateRequest(request: PayPalRequestToCheck): string[];
  validateResponse(response: PayPalResponseToCheck): string[];
  validateEvent(body: unknown): string[];
  validateSchema(file: PayPalFile, name: string, value: unknown): string[];
  compileAll(operation_keys?: readonly string[]): number;
}

function createPayPalValidator(): PayPalValidator {
  const ajv = new Ajv2019({ strict: false, allErrors: true, validateFormats: false, unicodeRegExp: false });
  const owner = new Map<unknown, PayPalFile>();
  const operations: DescribedOperation[] = [];
  for (const file of PAYPAL_FILES) {
    const document = JSON.parse(fs.readFileSync(path.join(PAYPAL_SPEC_DIR, file), 'utf8')) as JsonObject;
    ajv.addSchema({ $id: file, components: document.components }, file);
    for (const op of describedOperations(document, file)) {
      owner.set(op.operation, file);
      operations.push(op);
    }
  }
  const table = operationTable(operations);
  const compiled = new Map<string, ValidateFunction>();

  /** A schema of an operation (its $refs local to `file`) made absolute. */
  function absolute(schema: unknown, file: PayPalFile): unknown {
    return JSON.parse(JSON.stringify(schema), (key, value: unknown) =>
      key === '$ref' && typeof value === 'string' && value.startsWith('#') ? `${file}${value}` : value,
    );
  }

  function compiledFor(key: string, schema: () => unknown): ValidateFunction {
    let validate = compiled.get(key);
    if (!validate) {
      validate = ajv.compile(schema() as object);
      compiled.set(key, validate);
    }
    return validate;
  }

  function check(key: string, schema: () => unknown, value: unknown, label: string): string[] {
    const validate = compiledFor(key, schema);
    if (validate(value)) return [];
    return (validate.errors ?? [])
      .slice(0, MAX_PROBLEMS)
      .map((e: ErrorObject) => `${label}: ${e.instancePath || '(root)'} ${e.message ?? ''}`);
  }

  function resolveResponse(operation: JsonObject, file: PayPalFile, status: number): unknown {
    const responses = (operation.responses ?? {}) as JsonObject;
    let response = (responses[String(status)] ?? responses.default) as JsonObject | undefined;
    if (response && typeof response.$ref === 'string') {
      const name = response.$ref.split('/').pop()!;
      const doc = ajv.getSchema(file)?.schema as { components: { responses: JsonObject } };
      response = doc.components.responses[name] as JsonObject;
    }
    const content = (response?.content ?? null) as JsonObject | null;
    return (content?.['application/json'] as JsonObject | undefined)?.schema;
  }

  /** The JSON body an operation takes, as its description gives it. */
  function requestBodySchema(operation: JsonObject): JsonObject | undefined {
    return ((operation.requestBody as JsonObject | undefined)?.content as JsonObject | undefined)?.['application/json'] as
      JsonObject | undefined;
  }

  /** The events' schemas, under the keys validateEvent uses. */
  const eventEnvelope = () => ({ $ref: 'notifications_webhooks_v1.json#/components/schemas/event' });
  const eventSchemas = (): Array<[string, () => unknown]> => [
    ['event', eventEnvelope],
    ...Object.values(RESOURCE_SCHEMAS).map(([file, name]): [string, () => unknown] => [
      `event ${name}`,
      () => ({ $ref: `${file}#/components/schemas/${name}` }),
    ]),
  ];

  return {
    table,
    compileAll(operation_keys) {
      // The same keys as the checks below, so that they find these compiled.
      for (const op of operations) {
        const file = owner.get(op.operation)!;
        const key = `${op.method} ${op.template}`;
        if (operation_keys !== undefined && !operation_keys.includes(key)) continue;
        const body_schema = requestBodySchema(op.operation);
        if (body_schema?.schema !== undefined) compiledFor(`req ${key}`, () => absolute(body_schema.schema, file));
        for (const status of Object.keys((op.operation.responses ?? {}) as JsonObject)) {
          if (!/^\d{3}$/.test(status)) continue;
          const schema = resolveResponse(op.operation, file, Number(status));
          if (schema !== undefined) compiledFor(`res ${key} ${status}`, () => absolute(schema, file));
        }
      }
      for (const [key, schema] of eventSchemas()) compiledFor(key, schema);
      return compiled.size;
    },
    validateRequest(request) {
      const method = request.method.toUpperCase();
      const route = request.path.split('?')[0] ?? '';
      const label = `${method} ${route}`;
      const found = table.find(method, request.path);
      if (!found.entry) return [unmatchedRequestProblem(label, method, found)];
      const file = owner.get(found.entry.operation)!;
      const problems: string[] = [];
      const headers = lowerCaseHeaders(request.headers);
      if (!/^Bearer \S+$/.test(headers.authorization ?? '')) problems.push(`${label}: Authorization must be "Bearer <access token>"`);
      const declares_request_id = JSON.stringify(found.entry.operation.parameters ?? []).includes('paypal_request_id');
      const request_id = headers['paypal-request-id'];
      if (request_id !== undefined) {
        if (!declares_request_id) problems.push(`${label}: PayPal-Request-Id is not a parameter of this operation`);
        else if (request_id.length < 1 || request_id.length > 108) problems.push(`${label}: PayPal-Request-Id must be 1 to 108 characters`);
      }
      const body_schema = requestBodySchema(found.entry.operation);
      if (body_schema?.schema !== undefined) {
        if (!(headers['content-type'] ?? '').startsWith('application/json'))
          problems.push(`${label}: Content-Type must be application/json`);
        let parsed: unknown;
        try {
          parsed = request.body === '' ? {} : JSON.parse(request.body);
        } catch {
          return [...problems, `${label}: the body is not JSON`];
        }
        problems.push(...check(`req ${found.entry.key}`, () => absolute(body_schema.schema, file), parsed, `${label} body`));
      } else if (request.body !== '' && method === 'GET') problems.push(`${label}: a GET with a body`);
      return problems;
    },
    validateResponse(response) {
      const method = response.method.toUpperCase();
      const answered = table.findAnswered(method, response.path, response.status);
      if (!answered.entry) return [answered.problem];
      const file = owner.get(answered.entry.operation)!;
      const schema = resolveResponse(answered.entry.operation, file, response.status);
      if (schema === undefined)
        return response.body === null || response.body === undefined ? [] : [`${answered.label}: no body is described`];
      return check(`res ${answered.entry.key} ${response.status}`, () => absolute(schema, file), response.body, answered.label);
    },
    validateEvent(body) {
      const label = `event ${String((body as JsonObject | null)?.event_type)} ${String((body as JsonObject | null)?.id)}`;
      const problems = check('event', eventEnvelope, body, label);
      const event = body as JsonObject;
      for (const field of ['id', 'create_time', 'resource_type', 'event_type', 'resource']) {
        if (event[field] === undefined) problems.push(`${label}: ${field} is missing`);
      }
      const target = RESOURCE_SCHEMAS[String(event.resource_type)];
      if (!target) problems.push(`${label}: resource_type ${String(event.resource_type)} is not one the fake describes`);
      else
        problems.push(
          ...check(
            `event ${target[1]}`,
            () => ({ $ref: `${target[0]}#/components/schemas/${target[1]}` }),
            event.resource,
            `${label} resource`,
          ),
        );
      return problems;
    },
    validateSchema(file, name, value) {
      return check(`schema ${file} ${name}`, () => ({ $ref: `${file}#/components/schemas/${name}` }), value, name);
    },
  };
}

export const paypalSpec = projectValidator<PayPalRequestToCheck, PayPalResponseToCheck, PayPalValidator>(createPayPalValidator);

/**
 * The token request, as PayPal's "Get an access token" page gives it: Basic client_id:client_secret,
 * a form body grant_type=client_credentials.
 */
export function validateTokenRequest(headers: Readonly<Record<string, string | readonly string[] | undefined>>, body: string): string[] {
  const problems: string[] = [];
  const h = lowerCaseHeaders(headers);
  if (!/^Basic [A-Za-z0-9+/=]+$/.test(h.authorization ?? '')) problems.push('POST /v1/oauth2/token: Authorization must be Basic');
  if (!(h['content-type'] ?? '').startsWith('application/x-www-form-urlencoded'))
    problems.push('POST /v1/oauth2/token: Content-Type must be application/x-www-form-urlencoded');
  if (new URLSearchParams(body).get('grant_type') !== 'client_credentials')
    problems.push('POST /v1/oauth2/token: grant_type must be client_credentials');
  return problems;
}
