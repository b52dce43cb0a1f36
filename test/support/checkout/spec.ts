// Checks requests to, and answers and webhook events from, Checkout.com against its published
// OpenAPI 3.0 description (description.ts assembles it from test/psp-specs/checkout.com), so that
// neither our connector nor our fake processor can drift from the real API. Each check returns a
// list of problems, empty when the message is valid.
//
// How the OpenAPI 3.0 text is read (it is converted to JSON Schema 2019-09 and run by Ajv):
// - Objects are CLOSED: a property the schema does not declare is a problem, unless the schema
//   says `additionalProperties` (true or a schema) or is a free-form `type: object` with no
//   properties at all (like `metadata`). `allOf` compositions are closed as a whole
//   (`unevaluatedProperties`), so `allOf: [Base, {more properties}]` accepts both parts.
// - `discriminator` (always written here as a base schema with a `mapping`, the variants being
//   `allOf: [Base, …]`) dispatches on the property's value: an unmapped value is a problem, a
//   mapped one is checked against its variant. A one-member `allOf: [$ref]` is read as the
//   reference itself (the description uses it only to attach a description).
// - `readOnly` properties may not be sent in requests, `writeOnly` ones may not appear in answers.
// - `nullable` adds null; OpenAPI's boolean `exclusiveMinimum`/`exclusiveMaximum` are converted;
//   `example`, `default` and descriptions are ignored; keywords that do not apply to a type
//   (`minLength` on an integer, as the description writes for expiry years) are ignored, as JSON
//   Schema does. Formats checked: date-time, date, email, uri, ipv4, ipv6; others are not.
// - Requests: the path must match an operation's template, the method must be declared, the
//   Authorization header must carry a Bearer credential where the operation has security,
//   parameters (path, query, header) are checked, undeclared query parameters are problems, and a
//   JSON body needs Content-Type application/json.
// - Answers: the status must be declared for the operation; a declared JSON schema must match;
//   a status declared without content must come without a body.
import { Ajv2019, type ErrorObject, type ValidateFunction } from 'ajv/dist/2019.js';
import addFormatsModule from 'ajv-formats';
import { lowerCaseHeaders, operationTable, projectValidator, unmatchedRequestProblem } from '../fake-processor/openapi-operations.js';
import { asObject, loadCheckoutDescription, operationsOf, type CheckoutDescription, type JsonObject } from './description.js';

export interface CheckoutRequestToCheck {
  readonly method: string;
  /** The request path; a query string here is read too. */
  readonly path: string;
  readonly query?: Readonly<Record<string, string | readonly string[] | undefined>>;
  /** Header names in any case. */
  readonly headers?: Readonly<Record<string, string | readonly string[] | number | undefined>>;
  /** The body parsed from JSON; leave undefined when there was none. */
  readonly body?: unknown;
  /** The body as received, when it is at hand: '' means none, text that is not JSON is a problem. Wins over `body`. */
  readonly raw_body?: string;
}

export interface CheckoutResponseToCheck {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly body?: unknown;
  readonly raw_body?: string;
}

export interface MatchedOperation {
  readonly method: string;
  /** The description's path template, e.g. "/payments/{id}/refunds". */
  readonly template: string;
  readonly path_params: Readonly<Record<string, string>>;
  readonly operation_id: string | null;
  /** True for an operation that comes from our supplement, not from Checkout.com. */
  readonly supplemented: boolean;
}

export interface CheckoutValidator {
  readonly description: CheckoutDescription;
  matchOperation(method: string, path: string): MatchedOperation | null;
  validateRequest(request: CheckoutRequestToCheck): string[];
  validateResponse(response: CheckoutResponseToCheck): string[];
  /**
   * A webhook event body: a dispute's (type dispute_…) against our supplement's
   * PaygateSupplementDisputeEvent, any other against the description's Events/EventObject.
   */
  validateEvent(body: unknown): string[];
  /** Any value against a named component schema, read as a request or as an answer. */
  validateSchema(name: string, value: unknown, as: 'request' | 'response'): string[];
  /**
   * Compiles now every schema the checks of these operations ("METHOD template"; all when omitted)
   * and of webhook events use; returns how many are compiled. The fake calls it as it starts: on
   * first use, inside a request, the gateway's processor time-out would count the compiling (the
   * fake Adyen's first sale once timed out so in CI).
   */
  compileAll(operation_keys?: readonly string[]): number;
}

type Ctx = 'request' | 'response';
type Shape = 'closed' | 'open' | 'none';

const ID_BASE = 'https://paygate.invalid/checkout';
/** Where an operation's compiled schemas are filed ("METHOD template"): the checks and compileAll must agree on it. */
function operationSchemaId(key: string): string {
  return `${ID_BASE}/operation/${encodeURIComponent(key)}`;
}
/** Problems reported per message at most: a wrong message needs only the first few to be fixed. */
const MAX_PROBLEMS = 40;
const COPIED_KEYWORDS = [
  'type',
  'enum',
  'format',
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
const CHECKED_FORMATS = ['date-time', 'date', 'email', 'uri', 'ipv4', 'ipv6'] as const;
const addFormats = (addFormatsModule as unknown as { default: (ajv: Ajv2019, formats: readonly string[]) => Ajv2019 }).default;

/** Builds a validator over a description (default: the project's copy plus our supplement). */
export function createCheckoutValidator(description: CheckoutDescription = loadCheckoutDescription()): CheckoutValidator {
  const document = description.document;
  const components = asObject(document.components, 'components');
  const schemas = asObject(components.schemas ?? {}, 'components.schemas');
  const parameters = asObject(components.parameters ?? {}, 'components.parameters');
  const converter = new SchemaConverter(schemas);
  const formats = formatsUsed(document);
  const ajv: Record<Ctx, Ajv2019> = { request: newAjv(formats), response: newAjv(formats) };
  for (const ctx of ['request', 'response'] as const) {
    for (const name of Object.keys(schemas)) {
      ajv[ctx].addSchema(converter.openVariant(name, ctx));
      ajv[ctx].addSchema(converter.closedVariant(name, ctx));
    }
  }
  const supplemented = new Set(description.supplemented);
  // Literal segments win over parameters ("/payments/x/actions" is not "/payments/{id}").
  const operations = operationTable(operationsOf(document));
  const compiled = new Map<string, ValidateFunction>();

  function schemaValidator(ctx: Ctx, id: string, raw: unknown): ValidateFunction {
    const key = `${ctx} ${id}`;
    let validate = compiled.get(key);
    if (!validate) {
      validate = ajv[ctx].compile({ $id: id, ...converter.convertInline(raw, ctx) });
      compiled.set(key, validate);
    }
    return validate;
  }

  /** A root `oneOf` (with at most a description beside it): its members, checked one by one for readable problems. */
  function rootMembers(raw: unknown): unknown[] | null {
    const node = typeof raw === 'object' && raw !== null ? (raw as JsonObject) : null;
    return node && Array.isArray(node.oneOf) && Object.keys(node).every((k) => k === 'oneOf' || k === 'description')
      ? (node.oneOf as unknown[])
      : null;
  }

  /** Compiles what `check` will use for this schema (the schema, or each root oneOf member), under the same keys. */
  function compileFor(ctx: Ctx, id: string, raw: unknown): void {
    const members = rootMembers(raw);
    if (!members) schemaValidator(ctx, id, raw);
    else members.forEach((member, i) => schemaValidator(ctx, `${id}/oneOf/${i}`, member));
  }

  /** Validates against an inline schema; a root `oneOf` is tried member by member for readable problems. */
  function check(ctx: Ctx, id: string, raw: unknown, value: unknown, where: string): string[] {
    const members = rootMembers(raw);
    if (!members) {
      const validate = schemaValidator(ctx, id, raw);
      return validate(value) ? [] : formatErrors(validate.errors ?? [], where);
    }
    const results = members.map((member, i) => {
      const validate = schemaValidator(ctx, `${id}/oneOf/${i}`, member);
      return { name: memberName(member, i), problems: validate(value) ? [] : formatErrors(validate.errors ?? [], where) };
    });
    const passing = results.filter((r) => r.problems.length === 0);
    if (passing.length === 1) return [];
    const names = results.map((r) => r.name).join(', ');
    if (passing.length > 1) return [`${where} matches more than one of ${passing.map((r) => r.name).join(', ')} (oneOf)`];
    const closest = results.reduce((best, r) => (r.problems.length < best.problems.length ? r : best));
    return [`${where} matches none of ${names} (oneOf); closest is ${closest.name}:`, ...closest.problems];
  }

  function matchOperation(method: string, path: string): MatchedOperation | null {
    const found = operations.find(method, path);
    if (!found.entry) return null;
    const entry = found.entry;
    return {
      method: entry.method,
      template: entry.template,
      path_params: found.path_params,
      operation_id: typeof entry.operation.operationId === 'string' ? entry.operation.operationId : null,
      supplemented: supplemented.has(entry.key),
    };
  }

  function resolveParameter(raw: unknown): JsonObject {
    const node = asObject(raw, 'parameter');
    if (typeof node.$ref === 'string') {
      const name = refName(node.$ref, 'parameters');
      return asObject(parameters[name], `parameter ${name}`);
    }
    return node;
  }

  /** The operation's parameters, the path item's first (their index names their compiled schema). */
  function parametersOf(entry: { readonly template: string; readonly operation: JsonObject }): unknown[] {
    const path_item = asObject(asObject(document.paths, 'paths')[entry.template], entry.template);
    return [
      ...(Array.isArray(path_item.parameters) ? path_item.parameters : []),
      ...(Array.isArray(entry.operation.parameters) ? entry.operation.parameters : []),
    ];
  }

  function compileAll(operation_keys?: readonly string[]): number {
    // The same ids as the checks below, so that they find these compiled.
    for (const entry of operationsOf(document)) {
      const key = `${entry.method} ${entry.template}`;
      if (operation_keys !== undefined && !operation_keys.includes(key)) continue;
      const base = operationSchemaId(key);
      for (const [index, raw] of parametersOf(entry).entries()) {
        const parameter = resolveParameter(raw);
        if (parameter.schema !== undefined) compileFor('request', `${base}/parameter/${index}`, parameter.schema);
      }
      const request_body = entry.operation.requestBody === undefined ? null : asObject(entry.operation.requestBody, key);
      const request_media = request_body ? asObject(request_body.content ?? {}, 'content')['application/json'] : undefined;
      if (request_media !== undefined) compileFor('request', `${base}/request`, asObject(request_media, 'media type').schema);
      for (const [status, declared] of Object.entries(asObject(entry.operation.responses ?? {}, `responses of ${key}`))) {
        const media = asObject(asObject(declared, 'response').content ?? {}, 'content')['application/json'];
        if (media !== undefined) compileFor('response', `${base}/response/${status}`, asObject(media, 'media type').schema);
      }
    }
    for (const name of ['EventObject', 'PaygateSupplementDisputeEvent']) {
      if (name in schemas) ajv.response.getSchema(converter.id('response', 'closed', name));
    }
    return compiled.size;
  }

  function validateRequest(request: CheckoutRequestToCheck): string[] {
    const method = request.method.toUpperCase();
    const path = request.path.split('?')[0] ?? '';
    const label = `${method} ${path}`;
    const found = operations.find(method, request.path);
    if (!found.entry) return [unmatchedRequestProblem(label, method, found)];
    const entry = found.entry;
    const problems: string[] = [];
    const headers = lowerCaseHeaders(request.headers ?? {});

    const security = (entry.operation.security ?? document.security) as unknown;
    if (Array.isArray(security) && security.length > 0) {
      const authorization = headers.authorization;
      if (authorization === undefined)
        problems.push(`${label}: the Authorization header is missing (the operation requires a secret key or an access token)`);
      else if (!/^Bearer \S+$/.test(authorization))
        problems.push(`${label}: the Authorization header must be "Bearer <secret key or token>"`);
    }

    const query = mergedQuery(request.path, request.query);
    const declared_query = new Set<string>();
    for (const [index, raw] of parametersOf(entry).entries()) {
      const parameter = resolveParameter(raw);
      const name = String(parameter.name);
      const where = `${label}: ${String(parameter.in)} parameter ${name}`;
      let value: string | undefined;
      if (parameter.in === 'path') value = found.path_params[name];
      else if (parameter.in === 'query') {
        declared_query.add(name);
        const given = query.get(name);
        if (given && given.length > 1) problems.push(`${where} is given ${given.length} times`);
        value = given?.[0];
      } else if (parameter.in === 'header') value = headers[name.toLowerCase()];
      else continue;
      if (value === undefined) {
        if (parameter.required === true) problems.push(`${where} is required`);
        continue;
      }
      if (parameter.schema !== undefined) {
        const id = `${operationSchemaId(entry.key)}/parameter/${index}`;
        problems.push(...check('request', id, parameter.schema, coerceParameter(value, parameter.schema), where));
      }
    }
    for (const name of query.keys()) {
      if (!declared_query.has(name)) problems.push(`${label}: query parameter ${name} is not declared by ${entry.key}`);
    }

    const body = readBody(request.raw_body, request.body);
    const request_body =
      entry.operation.requestBody === undefined ? null : asObject(entry.operation.requestBody, `requestBody of ${entry.key}`);
    if (body.problem) problems.push(`${label}: ${body.problem}`);
    else if (body.present) {
      const schema = request_body ? asObject(request_body.content ?? {}, 'content')['application/json'] : undefined;
      if (!request_body) problems.push(`${label}: ${entry.key} takes no body`);
      else if (schema === undefined) problems.push(`${label}: ${entry.key} takes no JSON body`);
      else {
        const content_type = headers['content-type'];
        if (content_type === undefined || !/^application\/json\b/i.test(content_type))
          problems.push(`${label}: a JSON body needs Content-Type: application/json (got ${content_type ?? 'none'})`);
        const id = `${operationSchemaId(entry.key)}/request`;
        problems.push(...check('request', id, asObject(schema, 'media type').schema, body.value, `${label}: request body`));
      }
    } else if (request_body?.required === true) problems.push(`${label}: the request body is required`);
    return problems.slice(0, MAX_PROBLEMS);
  }

  function validateResponse(response: CheckoutResponseToCheck): string[] {
    const answered = operations.findAnswered(response.method, response.path, response.status);
    if (answered.entry === null) return [answered.problem];
    const { entry, label } = answered;
    const responses = asObject(entry.operation.responses ?? {}, `responses of ${entry.key}`);
    const declared = responses[String(response.status)] ?? responses[`${String(response.status)[0]}XX`] ?? responses.default;
    if (declared === undefined)
      return [`${label}: status ${response.status} is not declared for ${entry.key} (declared: ${Object.keys(responses).join(', ')})`];
    const content = asObject(asObject(declared, 'response').content ?? {}, 'content');
    const media = content['application/json'];
    const body = readBody(response.raw_body, response.body);
    if (body.problem) return [`${label}: ${body.problem}`];
    if (media === undefined) return body.present ? [`${label}: the description declares no body for this status, but one was sent`] : [];
    if (!body.present) return [`${label}: the description declares a JSON body for this status, but none was sent`];
    const id = `${operationSchemaId(entry.key)}/response/${response.status}`;
    return check('response', id, asObject(media, 'media type').schema, body.value, `${label}: body`).slice(0, MAX_PROBLEMS);
  }

  function validateSchema(name: string, value: unknown, as: Ctx): string[] {
    if (!(name in schemas)) throw new Error(`checkout description has no schema ${name}`);
    const validate = ajv[as].getSchema(converter.id(as, 'closed', name));
    if (!validate) throw new Error(`schema ${name} was not registered`);
    return validate(value) ? [] : formatErrors(validate.errors ?? [], name).slice(0, MAX_PROBLEMS);
  }

  return {
    description,
    matchOperation,
    validateRequest,
    validateResponse,
    validateEvent: (body) => {
      const type = typeof body === 'object' && body !== null ? (body as JsonObject).type : undefined;
      const schema = typeof type === 'string' && type.startsWith('dispute_') ? 'PaygateSupplementDisputeEvent' : 'EventObject';
      return validateSchema(schema, body, 'response').map((p) => `webhook event: ${p}`);
    },
    validateSchema,
    compileAll,
  };
}

const project_validator = projectValidator<CheckoutRequestToCheck, CheckoutResponseToCheck, CheckoutValidator>(() =>
  createCheckoutValidator(),
);

/** The validator over the project's copy of the description, built on first use (read-only afterwards). */
export const checkoutValidator = project_validator.get;
export const validateCheckoutRequest = project_validator.validateRequest;
export const validateCheckoutResponse = project_validator.validateResponse;
export const validateCheckoutEvent = project_validator.validateEvent;

/** Converts the description's OpenAPI 3.0 schemas into JSON Schema 2019-09 (see the file comment). */
class SchemaConverter {
  private readonly shapes = new Map<unknown, Shape>();
  private readonly in_progress = new Set<unknown>();

  constructor(private readonly schemas: JsonObject) {}

  id(ctx: Ctx, variant: 'open' | 'closed', name: string): string {
    return `${ID_BASE}/${ctx}/${variant}/${encodeURIComponent(name)}`;
  }

  /** The schema as written, not closed and without discriminator dispatch: what `allOf` members use. */
  openVariant(name: string, ctx: Ctx): JsonObject {
    const converted = this.convert(this.component(name), ctx, true);
    return { $id: this.id(ctx, 'open', name), ...(typeof converted === 'boolean' ? (converted ? {} : { not: {} }) : converted) };
  }

  /** The schema as a value on its own: closed, and dispatching on its discriminator. */
  closedVariant(name: string, ctx: Ctx): JsonObject {
    const node = this.component(name);
    const $id = this.id(ctx, 'closed', name);
    const discriminator = node.discriminator === undefined ? null : asObject(node.discriminator, `discriminator of ${name}`);
    const mapping = discriminator?.mapping === undefined ? {} : asObject(discriminator.mapping, `mapping of ${name}`);
    if (discriminator && Object.keys(mapping).length > 0) {
      const property = String(discriminator.propertyName);
      const values = Object.keys(mapping);
      return {
        $id,
        type: 'object',
        required: [property],
        properties: { [property]: { enum: values } },
        allOf: values.map((value) => ({
          if: { properties: { [property]: { const: value } }, required: [property] },
          then: { $ref: this.id(ctx, 'closed', refName(String(mapping[value]), 'schemas')) },
        })),
      };
    }
    const open = { $ref: this.id(ctx, 'open', name) };
    return this.shapeOf(node) === 'closed' ? { $id, ...open, unevaluatedProperties: false } : { $id, ...open };
  }

  /** An operation's inline schema (request body, answer, parameter), read as a value on its own. */
  convertInline(node: unknown, ctx: Ctx): JsonObject {
    const converted = this.convert(node, ctx, false);
    return typeof converted === 'boolean' ? (converted ? {} : { not: {} }) : converted;
  }

  private component(name: string): JsonObject {
    return asObject(this.schemas[name], `schema ${name}`);
  }

  private convert(raw: unknown, ctx: Ctx, in_all_of: boolean): JsonObject | boolean {
    if (typeof raw === 'boolean') return raw;
    const node = asObject(raw, 'schema');
    if (typeof node.$ref === 'string') return { $ref: this.id(ctx, in_all_of ? 'open' : 'closed', refName(node.$ref, 'schemas')) };
    const out: JsonObject = {};
    for (const keyword of COPIED_KEYWORDS) if (keyword in node) out[keyword] = node[keyword];
    if (node.exclusiveMinimum === true && typeof node.minimum === 'number') {
      out.exclusiveMinimum = node.minimum;
      delete out.minimum;
    }
    if (node.exclusiveMaximum === true && typeof node.maximum === 'number') {
      out.exclusiveMaximum = node.maximum;
      delete out.maximum;
    }
    const required = new Set(Array.isArray(node.required) ? node.required.map(String) : []);
    if (node.properties !== undefined) {
      const properties: JsonObject = {};
      for (const [name, sub] of Object.entries(asObject(node.properties, 'properties'))) {
        if (this.hiddenIn(sub, ctx)) {
          properties[name] = false;
          required.delete(name);
        } else properties[name] = this.convert(sub, ctx, false);
      }
      out.properties = properties;
    }
    if (required.size > 0) out.required = [...required];
    if (node.additionalProperties !== undefined) {
      out.additionalProperties =
        typeof node.additionalProperties === 'boolean' ? node.additionalProperties : this.convert(node.additionalProperties, ctx, false);
    }
    if (node.items !== undefined) out.items = this.convert(node.items, ctx, false);
    const wrapper = this.isWrapper(node);
    if (Array.isArray(node.allOf)) out.allOf = node.allOf.map((member) => this.convert(member, ctx, wrapper ? in_all_of : true));
    if (Array.isArray(node.oneOf)) out.oneOf = node.oneOf.map((member) => this.convert(member, ctx, false));
    if (Array.isArray(node.anyOf)) out.anyOf = node.anyOf.map((member) => this.convert(member, ctx, false));
    if (node.not !== undefined) out.not = this.convert(node.not, ctx, false);
    if (!in_all_of && !wrapper && (node.properties !== undefined || Array.isArray(node.allOf)) && this.shapeOf(node) === 'closed') {
      out.unevaluatedProperties = false;
    }
    if (node.nullable === true) {
      if (typeof out.type === 'string') out.type = [out.type, 'null'];
      if (Array.isArray(out.enum)) out.enum = [...(out.enum as unknown[]), null];
      if (out.type === undefined) return { anyOf: [{ type: 'null' }, out] };
    }
    return out;
  }

  /** `{ description, allOf: [$ref] }`: the description's way of annotating a reference. */
  private isWrapper(node: JsonObject): boolean {
    return Array.isArray(node.allOf) && node.allOf.length === 1 && node.properties === undefined && node.additionalProperties === undefined;
  }

  private hiddenIn(raw: unknown, ctx: Ctx): boolean {
    const flag = ctx === 'request' ? 'readOnly' : 'writeOnly';
    if (typeof raw !== 'object' || raw === null) return false;
    const node = raw as JsonObject;
    if (node[flag] === true) return true;
    const target =
      typeof node.$ref === 'string'
        ? node.$ref
        : Array.isArray(node.allOf) && node.allOf.length === 1
          ? (node.allOf[0] as JsonObject | undefined)?.$ref
          : undefined;
    if (typeof target !== 'string') return false;
    return this.component(refName(target, 'schemas'))[flag] === true;
  }

  /** Whether a value of this schema has a known set of properties ('closed'), any ('open'), or is no object shape. */
  private shapeOf(raw: unknown): Shape {
    if (typeof raw !== 'object' || raw === null) return 'none';
    const node = raw as JsonObject;
    if (typeof node.$ref === 'string') return this.shapeOf(this.component(refName(node.$ref, 'schemas')));
    const known = this.shapes.get(node);
    if (known) return known;
    if (this.in_progress.has(node)) return 'none';
    this.in_progress.add(node);
    let shape: Shape = node.properties !== undefined || node.additionalProperties === false ? 'closed' : 'none';
    if (node.additionalProperties !== undefined && node.additionalProperties !== false) shape = 'open';
    const parts = [
      ...(Array.isArray(node.allOf) ? node.allOf : []),
      ...(Array.isArray(node.oneOf) ? node.oneOf : []),
      ...(Array.isArray(node.anyOf) ? node.anyOf : []),
    ];
    for (const part of parts) {
      if (shape === 'open') break;
      const part_shape = this.shapeOf(part);
      if (part_shape === 'open') shape = 'open';
      else if (part_shape === 'closed') shape = 'closed';
    }
    if (shape === 'none' && node.type === 'object' && parts.length === 0) shape = 'open';
    this.in_progress.delete(node);
    this.shapes.set(node, shape);
    return shape;
  }
}

function newAjv(formats_used: ReadonlySet<string>): Ajv2019 {
  // strict: false because the description puts keywords on types they do not apply to
  // (minLength on integers, minItems on objects), which JSON Schema ignores.
  const ajv = new Ajv2019({ strict: false, allErrors: true, validateFormats: true, discriminator: false });
  addFormats(ajv, CHECKED_FORMATS);
  // Formats we cannot honour ("binary", "ISO 4217", …) are accepted as any string.
  for (const name of formats_used) if (!ajv.formats[name]) ajv.addFormat(name, true);
  return ajv;
}

/** Every `format` named anywhere in the document (walks the plain YAML data, bounded by its depth). */
function formatsUsed(document: JsonObject): Set<string> {
  const found = new Set<string>();
  const walk = (value: unknown, depth: number): void => {
    if (depth > 64 || typeof value !== 'object' || value === null) return;
    if (Array.isArray(value)) {
      for (const item of value) walk(item, depth + 1);
      return;
    }
    for (const [key, item] of Object.entries(value)) {
      if (key === 'format' && typeof item === 'string') found.add(item);
      else if (key !== 'example' && key !== 'examples') walk(item, depth + 1);
    }
  };
  walk(document, 0);
  return found;
}

function refName(ref: string, kind: string): string {
  const prefix = `#/components/${kind}/`;
  if (!ref.startsWith(prefix)) throw new Error(`checkout description: unsupported reference ${ref} (expected ${prefix}…)`);
  return ref.slice(prefix.length);
}

function memberName(member: unknown, index: number): string {
  const ref = typeof member === 'object' && member !== null ? (member as JsonObject).$ref : undefined;
  return typeof ref === 'string' ? (ref.split('/').pop() ?? `member ${index}`) : `member ${index}`;
}

function formatErrors(errors: readonly ErrorObject[], where: string): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const error of errors) {
    // "must match then schema" and the like only repeat the concrete problem reported beside them.
    if (error.keyword === 'if') continue;
    const at = error.instancePath === '' ? '' : ` ${error.instancePath}`;
    const params = error.params as Record<string, unknown>;
    let text: string;
    if (error.keyword === 'required') text = `${where}${at} is missing required property "${String(params.missingProperty)}"`;
    else if (error.keyword === 'unevaluatedProperties')
      text = `${where}${at} has property "${String(params.unevaluatedProperty)}" that the description does not declare`;
    else if (error.keyword === 'additionalProperties')
      text = `${where}${at} has property "${String(params.additionalProperty)}" that the description does not declare`;
    else if (error.keyword === 'enum')
      text = `${where}${at} must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    else if (error.keyword === 'false schema') text = `${where}${at} must not be present here (readOnly/writeOnly in the description)`;
    else text = `${where}${at} ${error.message ?? error.keyword}`;
    if (!seen.has(text)) {
      seen.add(text);
      out.push(text);
    }
  }
  return out;
}

function readBody(raw_body: string | undefined, body: unknown): { present: boolean; value?: unknown; problem?: string } {
  if (raw_body !== undefined) {
    if (raw_body === '') return { present: false };
    try {
      return { present: true, value: JSON.parse(raw_body) as unknown };
    } catch {
      return { present: true, problem: `the body is not JSON (${JSON.stringify(raw_body.slice(0, 60))})` };
    }
  }
  return body === undefined ? { present: false } : { present: true, value: body };
}

function mergedQuery(
  path: string,
  query: Readonly<Record<string, string | readonly string[] | undefined>> | undefined,
): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const add = (name: string, value: string): void => {
    const list = out.get(name) ?? [];
    list.push(value);
    out.set(name, list);
  };
  const question = path.indexOf('?');
  if (question >= 0) for (const [name, value] of new URLSearchParams(path.slice(question + 1))) add(name, value);
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value === undefined) continue;
    if (typeof value === 'string') add(name, value);
    else for (const item of value) add(name, item);
  }
  return out;
}

/** Query, path and header values are text; a parameter declared as a number or boolean is read as one when it spells one. */
function coerceParameter(value: string, schema: unknown): unknown {
  const type = typeof schema === 'object' && schema !== null ? (schema as JsonObject).type : undefined;
  if ((type === 'integer' || type === 'number') && /^-?\d+(\.\d+)?$/.test(value)) return Number(value);
  if (type === 'boolean' && (value === 'true' || value === 'false')) return value === 'true';
  return value;
}
