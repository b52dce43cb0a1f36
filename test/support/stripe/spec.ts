// Checks requests to, and answers and webhook events from, Stripe against its published OpenAPI
// 3.0 description (the subset in test/psp-specs/stripe, with our labelled supplement; see
// description.ts and SOURCE.md), so that neither our connector nor our fake processor can drift
// from the real API. Each check returns a list of problems, empty when the message is valid.
//
// How the description is read (converted to JSON Schema and run by Ajv):
// - Objects with declared `properties` are CLOSED: a property the description does not declare
//   is a problem (Stripe answers "Received unknown parameter" to a request that sends one, and
//   an answer of the fake with one would be an invention). `additionalProperties` (metadata) and
//   a free-form `type: object` without properties (`data.object` of an event) stay open.
// - `nullable` adds null (to `type`, to an `enum`, or beside an `anyOf`); `anyOf`/`oneOf` are kept;
//   `x-expansionResources`, `x-stripeBypassValidation`, descriptions and the formats `unix-time`
//   and `decimal` (plain integers and text here) are not checked.
// - Requests: the path must match an operation's template (literal segments before parameters:
//   /v1/payment_intents/search is not /v1/payment_intents/{intent}); the method must be declared;
//   the Authorization header must be "Bearer <key>" or "Basic <…>" (the description's
//   bearerAuth/basicAuth); query parameters and form bodies are decoded from Stripe's bracket
//   notation and typed by the schema (form.ts) before they are checked; undeclared query
//   parameters are problems; a body needs Content-Type application/x-www-form-urlencoded.
// - Answers: 200 is checked against the operation's 200 schema and any other status against its
//   `default` (Stripe's `error` object).
// - Events (ours, the description does not say which object an event type carries): the body is
//   checked against the closed `event` schema, then `data.object` against the schema its
//   `object` field names (payment_intent, charge, refund or dispute), which must agree with the type
//   (`payment_intent.*`, `charge.refund.updated` → refund, `charge.dispute.*` → dispute, `charge.*`,
//   `refund.*`).
import { Ajv2019, type ErrorObject, type ValidateFunction } from 'ajv/dist/2019.js';
import { lowerCaseHeaders, operationTable, projectValidator, unmatchedRequestProblem } from '../fake-processor/openapi-operations.js';
import { asObject, loadStripeDescription, operationsOf, type JsonObject, type StripeDescription } from './description.js';
import { bracketName, coerceByStripeSchema, decodeStripeForm } from './form.js';

export interface StripeRequestToCheck {
  readonly method: string;
  /** The request path; a query string here is read too. */
  readonly path: string;
  /** More query parameters: a query string (without "?") or names (bracket notation) to values. */
  readonly query?: string | Readonly<Record<string, string | readonly string[] | undefined>>;
  /** Header names in any case. */
  readonly headers?: Readonly<Record<string, string | readonly string[] | number | undefined>>;
  /**
   * The body: the form text as sent (decoded here), or an object already decoded (its leaves may
   * be text, as on the wire, or typed). Undefined or '' when there was none.
   */
  readonly body?: string | Readonly<Record<string, unknown>>;
}

export interface StripeResponseToCheck {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  /** The body parsed from JSON, or the text as received (parsed here). */
  readonly body?: unknown;
}

export interface StripeProblem {
  readonly text: string;
  /** missing/unknown/invalid: a parameter (named by `param`); the others: the request as a whole. */
  readonly kind: 'missing' | 'unknown' | 'invalid' | 'auth' | 'route' | 'content_type' | 'form';
  /** The parameter in bracket notation, e.g. payment_method_data[card][number]; null when none. */
  readonly param: string | null;
}

export interface CheckedStripeRequest {
  readonly problems: readonly StripeProblem[];
  readonly operation: MatchedStripeOperation | null;
  /** The form body decoded and typed by the schema ({} when none). */
  readonly body: Record<string, unknown>;
  /** The query decoded and typed by the parameters' schemas. */
  readonly query: Record<string, unknown>;
}

export interface MatchedStripeOperation {
  readonly method: string;
  /** The description's path template, e.g. "/v1/payment_intents/{intent}". */
  readonly template: string;
  readonly path_params: Readonly<Record<string, string>>;
  readonly operation_id: string | null;
}

export interface StripeValidator {
  readonly description: StripeDescription;
  matchOperation(method: string, path: string): MatchedStripeOperation | null;
  /** Decodes and checks a request; problems with their kind and parameter. */
  checkRequest(request: StripeRequestToCheck): CheckedStripeRequest;
  validateRequest(request: StripeRequestToCheck): string[];
  validateResponse(response: StripeResponseToCheck): string[];
  validateEvent(body: unknown): string[];
  /** Any value against a named component schema (closed as described above). */
  validateSchema(name: string, value: unknown): string[];
  /**
   * Compiles every check now (about a second for the PaymentIntent's closure) instead of at the
   * first message, so that a client's short time-out does not meet the compilation. Once per validator.
   */
  precompile(): void;
}

const ID_BASE = 'https://paygate.invalid/stripe';
const REF_PREFIX = '#/components/schemas/';
/** Problems reported per message at most: a wrong message needs only the first few to be fixed. */
const MAX_PROBLEMS = 40;
const COPIED_KEYWORDS = [
  'type',
  'enum',
  'pattern',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'multipleOf',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minProperties',
  'maxProperties',
] as const;
/** The objects events carry, and the event type prefixes that carry them. */
const EVENT_OBJECTS: readonly { readonly prefix: string; readonly object: string }[] = [
  { prefix: 'charge.refund.', object: 'refund' },
  { prefix: 'charge.dispute.', object: 'dispute' },
  { prefix: 'payment_intent.', object: 'payment_intent' },
  { prefix: 'charge.', object: 'charge' },
  { prefix: 'refund.', object: 'refund' },
];

/** Builds a validator over a description (default: the project's copy with our supplement). */
export function createStripeValidator(description: StripeDescription = loadStripeDescription()): StripeValidator {
  const document = description.document;
  const schemas = asObject(asObject(document.components, 'components').schemas, 'components.schemas');
  const ajv = new Ajv2019({ strict: false, allErrors: true, validateFormats: false });
  for (const name of Object.keys(schemas)) ajv.addSchema({ $id: schemaId(name), ...convert(schemas[name]) });
  const resolve = (ref: string): JsonObject | undefined =>
    ref.startsWith(REF_PREFIX) ? (schemas[ref.slice(REF_PREFIX.length)] as JsonObject | undefined) : undefined;

  // Literal segments win over parameters ("/v1/payment_intents/search" is not "/{intent}").
  const operations = operationTable(operationsOf(document));
  const compiled = new Map<string, ValidateFunction>();

  function validatorFor(id: string, schema: unknown): ValidateFunction {
    let validate = compiled.get(id);
    if (!validate) {
      validate = ajv.compile({ $id: id, ...convert(schema) });
      compiled.set(id, validate);
    }
    return validate;
  }

  function matchOperation(method: string, path: string): MatchedStripeOperation | null {
    const found = operations.find(method, path);
    if (!found.entry) return null;
    return {
      method: found.entry.method,
      template: found.entry.template,
      path_params: found.path_params,
      operation_id: typeof found.entry.operation.operationId === 'string' ? found.entry.operation.operationId : null,
    };
  }

  function checkRequest(request: StripeRequestToCheck): CheckedStripeRequest {
    const method = request.method.toUpperCase();
    const path = request.path.split('?')[0] ?? '';
    const label = `${method} ${path}`;
    const found = operations.find(method, request.path);
    const problems: StripeProblem[] = [];
    if (!found.entry)
      return {
        problems: [{ text: unmatchedRequestProblem(label, method, found), kind: 'route', param: null }],
        operation: null,
        body: {},
        query: {},
      };
    const entry = found.entry;
    const operation = matchOperation(method, request.path);
    const headers = lowerCaseHeaders(request.headers ?? {});

    const security = (entry.operation.security ?? document.security) as unknown;
    if (Array.isArray(security) && security.length > 0) {
      const authorization = headers.authorization;
      if (!authorization)
        problems.push({
          text: `${label}: the Authorization header is missing (the operation needs a secret key)`,
          kind: 'auth',
          param: null,
        });
      else if (!/^(Bearer|Basic) \S+$/.test(authorization))
        problems.push({
          text: `${label}: the Authorization header must be "Bearer <secret key>" or "Basic <…>"`,
          kind: 'auth',
          param: null,
        });
    }

    // Query: the path's own query string, then the extra one.
    const query_text = [request.path.includes('?') ? request.path.slice(request.path.indexOf('?') + 1) : '', queryText(request.query)]
      .filter((t) => t !== '')
      .join('&');
    const decoded_query = decodeStripeForm(query_text);
    for (const problem of decoded_query.problems) problems.push({ text: `${label}: query: ${problem}`, kind: 'form', param: null });
    const query: Record<string, unknown> = {};
    const declared = new Set<string>();
    for (const [index, raw] of (Array.isArray(entry.operation.parameters) ? entry.operation.parameters : []).entries()) {
      const parameter = asObject(raw, 'parameter');
      const name = String(parameter.name);
      const where = `${label}: ${String(parameter.in)} parameter ${name}`;
      let value: unknown;
      if (parameter.in === 'path') value = found.path_params[name];
      else if (parameter.in === 'query') {
        declared.add(name);
        value = decoded_query.value[name];
        if (value !== undefined) {
          value = coerceByStripeSchema(value, parameter.schema, resolve);
          query[name] = value;
        }
      } else if (parameter.in === 'header') value = headers[name.toLowerCase()];
      else continue;
      if (value === undefined) {
        if (parameter.required === true) problems.push({ text: `${where} is required`, kind: 'missing', param: name });
        continue;
      }
      if (parameter.schema !== undefined) {
        const validate = validatorFor(`${ID_BASE}/operation/${encodeURIComponent(entry.key)}/parameter/${index}`, parameter.schema);
        if (!validate(value)) problems.push(...ajvProblems(validate.errors ?? [], `${label}: ${String(parameter.in)} parameter`, [name]));
      }
    }
    for (const name of Object.keys(decoded_query.value)) {
      if (!declared.has(name))
        problems.push({ text: `${label}: query parameter ${name} is not declared by ${entry.key}`, kind: 'unknown', param: name });
    }

    // Body.
    let body: Record<string, unknown> = {};
    const request_body =
      entry.operation.requestBody === undefined ? null : asObject(entry.operation.requestBody, `requestBody of ${entry.key}`);
    const media = request_body ? asObject(request_body.content ?? {}, 'content')['application/x-www-form-urlencoded'] : undefined;
    const schema = media === undefined ? undefined : asObject(media, 'media type').schema;
    let present = false;
    if (typeof request.body === 'string') {
      present = request.body !== '';
      if (present) {
        const content_type = headers['content-type'];
        if (content_type === undefined || !/^application\/x-www-form-urlencoded\b/i.test(content_type)) {
          problems.push({
            text: `${label}: a form body needs Content-Type: application/x-www-form-urlencoded (got ${content_type ?? 'none'})`,
            kind: 'content_type',
            param: null,
          });
        }
        const decoded = decodeStripeForm(request.body);
        for (const problem of decoded.problems) problems.push({ text: `${label}: body: ${problem}`, kind: 'form', param: null });
        body = decoded.value;
      }
    } else if (request.body !== undefined) {
      body = { ...request.body };
      present = Object.keys(body).length > 0;
    }
    if (schema !== undefined) body = coerceByStripeSchema(body, schema, resolve) as Record<string, unknown>;
    if (present && schema === undefined) problems.push({ text: `${label}: ${entry.key} takes no form body`, kind: 'unknown', param: null });
    else if (schema !== undefined && (present || request_body?.required === true)) {
      const validate = validatorFor(`${ID_BASE}/operation/${encodeURIComponent(entry.key)}/request`, schema);
      if (!validate(body)) problems.push(...ajvProblems(validate.errors ?? [], `${label}: body`, []));
    }
    return { problems: problems.slice(0, MAX_PROBLEMS), operation, body, query };
  }

  function validateResponse(response: StripeResponseToCheck): string[] {
    const answered = operations.findAnswered(response.method, response.path, response.status);
    if (answered.entry === null) return [answered.problem];
    const { entry, label } = answered;
    const responses = asObject(entry.operation.responses ?? {}, `responses of ${entry.key}`);
    const status_key = responses[String(response.status)] !== undefined ? String(response.status) : 'default';
    const declared = responses[status_key];
    if (declared === undefined) return [`${label}: status ${response.status} is not declared for ${entry.key}`];
    const media = asObject(asObject(declared, 'response').content ?? {}, 'content')['application/json'];
    let body = response.body;
    if (typeof response.body === 'string') {
      const text = response.body;
      try {
        body = JSON.parse(text) as unknown;
      } catch {
        return [`${label}: the body is not JSON (${JSON.stringify(text.slice(0, 60))})`];
      }
    }
    if (media === undefined) return body === undefined ? [] : [`${label}: the description declares no body for this status`];
    if (body === undefined) return [`${label}: the description declares a JSON body for this status, but none was sent`];
    const validate = validatorFor(
      `${ID_BASE}/operation/${encodeURIComponent(entry.key)}/response/${status_key}`,
      asObject(media, 'media type').schema,
    );
    return validate(body)
      ? []
      : ajvProblems(validate.errors ?? [], `${label}: body`, [])
          .map((p) => p.text)
          .slice(0, MAX_PROBLEMS);
  }

  function validateSchema(name: string, value: unknown): string[] {
    if (!(name in schemas)) throw new Error(`the stripe description subset has no schema ${name}`);
    const validate = ajv.getSchema(schemaId(name));
    if (!validate) throw new Error(`schema ${name} was not registered`);
    return validate(value)
      ? []
      : ajvProblems(validate.errors ?? [], name, [])
          .map((p) => p.text)
          .slice(0, MAX_PROBLEMS);
  }

  function validateEvent(body: unknown): string[] {
    const problems = validateSchema('event', body).map((p) => `webhook event: ${p}`);
    if (typeof body !== 'object' || body === null) return problems;
    const event = body as JsonObject;
    const data = typeof event.data === 'object' && event.data !== null ? (event.data as JsonObject) : null;
    const object = data && typeof data.object === 'object' && data.object !== null ? (data.object as JsonObject) : null;
    if (!object) return problems;
    const kind = typeof object.object === 'string' ? object.object : '';
    const expected =
      typeof event.type === 'string' ? EVENT_OBJECTS.find((e) => (event.type as string).startsWith(e.prefix))?.object : undefined;
    if (!expected)
      problems.push(
        `webhook event: type ${String(event.type)} is none the tests expect (${EVENT_OBJECTS.map((e) => `${e.prefix}*`).join(', ')})`,
      );
    else if (kind !== expected)
      problems.push(`webhook event: ${String(event.type)} carries a ${kind || 'nameless object'}, not a ${expected}`);
    if (kind in schemas) problems.push(...validateSchema(kind, object).map((p) => `webhook event: data.object: ${p}`));
    else problems.push(`webhook event: data.object is a ${kind || 'nameless object'}, which the description subset has no schema for`);
    return problems.slice(0, MAX_PROBLEMS);
  }

  let precompiled = false;
  function precompile(): void {
    if (precompiled) return;
    precompiled = true;
    for (const entry of operations.entries) {
      const request_body = entry.operation.requestBody === undefined ? null : asObject(entry.operation.requestBody, 'requestBody');
      const media = request_body ? asObject(request_body.content ?? {}, 'content')['application/x-www-form-urlencoded'] : undefined;
      if (media !== undefined)
        validatorFor(`${ID_BASE}/operation/${encodeURIComponent(entry.key)}/request`, asObject(media, 'media type').schema);
      for (const [status, declared] of Object.entries(asObject(entry.operation.responses ?? {}, 'responses'))) {
        const json = asObject(asObject(declared, 'response').content ?? {}, 'content')['application/json'];
        if (json !== undefined)
          validatorFor(`${ID_BASE}/operation/${encodeURIComponent(entry.key)}/response/${status}`, asObject(json, 'media type').schema);
      }
    }
    for (const name of ['event', 'payment_intent', 'charge', 'refund', 'dispute']) ajv.getSchema(schemaId(name));
  }

  return {
    description,
    matchOperation,
    precompile,
    checkRequest,
    validateRequest: (request) => checkRequest(request).problems.map((p) => p.text),
    validateResponse,
    validateEvent,
    validateSchema,
  };
}

const project_validator = projectValidator<StripeRequestToCheck, StripeResponseToCheck, StripeValidator>(() => createStripeValidator());

/** The validator over the project's copy of the description, built on first use (read-only afterwards). */
export const stripeValidator = project_validator.get;
export const validateStripeRequest = project_validator.validateRequest;
export const validateStripeResponse = project_validator.validateResponse;
export const validateStripeEvent = project_validator.validateEvent;

function schemaId(name: string): string {
  return `${ID_BASE}/schemas/${encodeURIComponent(name)}`;
}

/** An OpenAPI 3.0 schema node as JSON Schema (see the file comment); booleans pass through. */
function convert(raw: unknown, depth = 0): JsonObject {
  if (depth > 64) throw new Error('stripe description: schema nested deeper than 64 levels');
  const node = asObject(raw, 'schema');
  if (typeof node.$ref === 'string') {
    if (!node.$ref.startsWith(REF_PREFIX)) throw new Error(`stripe description: unsupported reference ${node.$ref}`);
    const ref = { $ref: schemaId(node.$ref.slice(REF_PREFIX.length)) };
    return node.nullable === true ? { anyOf: [{ type: 'null' }, ref] } : ref;
  }
  const out: JsonObject = {};
  for (const keyword of COPIED_KEYWORDS) if (keyword in node) out[keyword] = node[keyword];
  if (node.items !== undefined) out.items = convert(node.items, depth + 1);
  if (node.properties !== undefined) {
    const properties: JsonObject = {};
    for (const [name, sub] of Object.entries(asObject(node.properties, 'properties'))) properties[name] = convert(sub, depth + 1);
    out.properties = properties;
  }
  if (Array.isArray(node.required) && node.required.length > 0) out.required = node.required;
  if (typeof node.additionalProperties === 'boolean') out.additionalProperties = node.additionalProperties;
  else if (node.additionalProperties !== undefined) out.additionalProperties = convert(node.additionalProperties, depth + 1);
  else if (node.properties !== undefined) out.additionalProperties = false;
  if (Array.isArray(node.anyOf)) out.anyOf = node.anyOf.map((member) => convert(member, depth + 1));
  if (Array.isArray(node.oneOf)) out.oneOf = node.oneOf.map((member) => convert(member, depth + 1));
  if (node.nullable === true) {
    if (typeof out.type === 'string') out.type = [out.type, 'null'];
    if (Array.isArray(out.enum)) out.enum = [...(out.enum as unknown[]), null];
    if (out.type === undefined) return { anyOf: [{ type: 'null' }, out] };
  }
  return out;
}

/**
 * Ajv's errors as problems. An `anyOf` that fails reports every member's errors; those of a
 * member of another JSON type (the null of a nullable field, the id text of an expandable one)
 * only repeat that the value is not of that type, so they are left out when a closer one is there.
 */
function ajvProblems(errors: readonly ErrorObject[], where: string, prefix: readonly string[]): StripeProblem[] {
  const informative = errors.filter((e) => e.keyword !== 'anyOf' && e.keyword !== 'oneOf');
  const by_path = new Map<string, ErrorObject[]>();
  for (const error of informative) {
    const list = by_path.get(error.instancePath) ?? [];
    list.push(error);
    by_path.set(error.instancePath, list);
  }
  const kept = informative.filter((error) => {
    if (error.keyword !== 'type') return true;
    // A type mismatch is noise when something deeper, or a non-type error at the same place, explains more.
    const deeper = informative.some((other) => other.instancePath.startsWith(`${error.instancePath}/`));
    const same = (by_path.get(error.instancePath) ?? []).some((other) => other.keyword !== 'type');
    return !deeper && !same;
  });
  const chosen = kept.length > 0 ? kept : informative.length > 0 ? informative : [...errors];
  const seen = new Set<string>();
  const out: StripeProblem[] = [];
  for (const error of chosen) {
    const segments = [
      ...prefix,
      ...error.instancePath
        .split('/')
        .slice(1)
        .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~')),
    ];
    const params = error.params as Record<string, unknown>;
    let problem: StripeProblem;
    if (error.keyword === 'required') {
      const name = bracketName([...segments, String(params.missingProperty)]);
      problem = { text: `${where} is missing required field ${name}`, kind: 'missing', param: name };
    } else if (error.keyword === 'additionalProperties') {
      const name = bracketName([...segments, String(params.additionalProperty)]);
      problem = { text: `${where} has ${name}, which the description does not declare`, kind: 'unknown', param: name };
    } else {
      const name = segments.length > 0 ? bracketName(segments) : null;
      const detail =
        error.keyword === 'enum'
          ? `must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`
          : (error.message ?? error.keyword);
      problem = { text: `${where}${name ? ` ${name}` : ''} ${detail}`, kind: 'invalid', param: name };
    }
    if (!seen.has(problem.text)) {
      seen.add(problem.text);
      out.push(problem);
    }
  }
  return out;
}

function queryText(query: StripeRequestToCheck['query']): string {
  if (query === undefined) return '';
  if (typeof query === 'string') return query.startsWith('?') ? query.slice(1) : query;
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue;
    if (typeof value === 'string') params.append(name, value);
    else for (const item of value) params.append(name, item);
  }
  return params.toString();
}
