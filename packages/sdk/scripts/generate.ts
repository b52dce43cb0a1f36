// Writes packages/sdk/src/generated/api.ts from the gateway's own /openapi.json, so that the SDK's
// request, answer and webhook types are never written a second time by hand: a field the gateway
// adds, drops or retypes changes the generated file, and test/generated.test.ts fails until it is
// generated again and committed. The document is the real one: a gateway is started in this
// process on a scratch folder and asked for GET /openapi.json.
//
//   npm run generate --workspace @paygate/sdk
//
// Only this script and the SDK's tests import the gateway's src/; the SDK itself never does.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../../src/config.js';
import { createLogger } from '../../../src/logging.js';
import { startGateway } from '../../../src/main.js';

export const GENERATED_FILE = fileURLToPath(new URL('../src/generated/api.ts', import.meta.url));

/** The parts of a JSON schema the gateway's documents use. */
export interface Schema {
  readonly type?: string | readonly string[];
  readonly const?: unknown;
  readonly enum?: readonly unknown[];
  readonly anyOf?: readonly Schema[];
  readonly oneOf?: readonly Schema[];
  readonly allOf?: readonly Schema[];
  readonly properties?: Readonly<Record<string, Schema>>;
  readonly required?: readonly string[];
  readonly additionalProperties?: boolean | Schema;
  readonly items?: Schema;
  readonly description?: string;
  readonly maxLength?: number;
  readonly $ref?: string;
}

interface Parameter {
  readonly name: string;
  readonly in: string;
  readonly required?: boolean;
  readonly schema: Schema;
  readonly description?: string;
}
interface Operation {
  readonly operationId: string;
  readonly summary?: string;
  readonly security?: readonly Record<string, unknown>[];
  readonly parameters?: readonly Parameter[];
  readonly requestBody?: { readonly content: Record<string, { readonly schema: Schema }> };
  readonly responses: Record<string, { readonly content?: Record<string, { readonly schema: Schema }> }>;
}
export interface OpenApiDocument {
  readonly paths: Record<string, Record<string, Operation>>;
  readonly webhooks: Record<string, Record<string, Operation>>;
}

/**
 * The SDK's name for each merchant operation's request and answer. A request given as a table is
 * a union of variants, named by each variant's `payment_method` and `transaction_type` (when it has them) and `version`. An operation
 * missing here stops the generation: the SDK must then get a name and a method for it.
 */
const OPERATION_NAMES: Readonly<Record<string, { readonly request: string | Readonly<Record<string, string>>; readonly answer: string }>> =
  {
    postApiProcess: {
      request: {
        'sale 1.2': 'SaleRequest',
        'sale 1.1': 'SaleFrontendRequest',
        'authorize 1.2': 'AuthorizeRequest',
        'authorize 1.1': 'AuthorizeFrontendRequest',
        'refund 1.2': 'RefundRequest',
        'refund 1.1': 'RefundFrontendRequest',
        'payout 1.2': 'PayoutEncryptedRequest',
        'payout 1.1': 'PayoutFrontendRequest',
        'paypal sale 1.2': 'PayPalSaleRequest',
        'paypal sale 1.1': 'PayPalSaleFrontendRequest',
        'paypal refund 1.2': 'PayPalRefundRequest',
        'paypal refund 1.1': 'PayPalRefundFrontendRequest',
      },
      answer: 'ProcessAnswer',
    },
    postApiCapture: { request: { '1.2': 'CaptureRequest', '1.1': 'CaptureFrontendRequest' }, answer: 'ProcessAnswer' },
    postApiVoid: { request: { '1.2': 'VoidRequest', '1.1': 'VoidFrontendRequest' }, answer: 'ProcessAnswer' },
    postApiDirect: { request: 'DirectPayoutRequest', answer: 'DirectPayoutAnswer' },
    postApiTokenize: { request: 'TokenizeRequest', answer: 'TokenizeAnswer' },
    postApiTransactionStatus: { request: 'TransactionStatusRequest', answer: 'TransactionStatusAnswer' },
    postApiInitPayIn: { request: 'InitPayInRequest', answer: 'SessionAnswer' },
    postApiInitCheckout: { request: 'InitCheckoutRequest', answer: 'SessionAnswer' },
    postApiInitPayOut: { request: 'InitPayOutRequest', answer: 'SessionAnswer' },
    postApiInitPayOutOrder: { request: 'InitPayOutOrderRequest', answer: 'SessionAnswer' },
    postApiFindOrder: { request: 'FindOrderRequest', answer: 'FindOrderAnswer' },
    postApiV1V3SubscriptionPlan: { request: 'PlanCreateRequest', answer: 'PlanAnswer' },
    getApiV1V3SubscriptionPlan: { request: 'PlanListRequest', answer: 'PlanListAnswer' },
    putApiV1V3SubscriptionPlanPlanId: { request: 'PlanUpdateRequest', answer: 'PlanAnswer' },
    getApiV1V3SubscriptionPlanPlanId: { request: 'PlanReadRequest', answer: 'PlanAnswer' },
    postApiV1V3Subscription: { request: 'SubscriptionCreateRequest', answer: 'SubscriptionAnswer' },
    getApiV1V3Subscription: { request: 'SubscriptionListRequest', answer: 'SubscriptionListAnswer' },
    getApiV1V3SubscriptionSubscriptionId: { request: 'SubscriptionReadRequest', answer: 'SubscriptionAnswer' },
    postApiV1V3SubscriptionSubscriptionIdCancel: { request: 'SubscriptionCancelRequest', answer: 'SubscriptionAnswer' },
    postApiV1V3SubscriptionSubscriptionIdActivate: { request: 'SubscriptionActivateRequest', answer: 'SubscriptionAnswer' },
  };

/** The messages the gateway sends to the merchant (`webhooks`); a union is named by each variant's `version`. */
const WEBHOOK_NAMES: Readonly<Record<string, string | Readonly<Record<string, string>>>> = {
  transactionNotification: { 1.2: 'NotificationApplicationKey', 1.1: 'NotificationFrontend' },
  validationRequest: { 1.2: 'ValidationRequestApplicationKey', 1.1: 'ValidationRequestFrontend' },
  subscriptionEvent: 'SubscriptionEventNotification',
};
const WEBHOOK_UNION_NAMES: Readonly<Record<string, string>> = {
  transactionNotification: 'TransactionNotification',
  validationRequest: 'ValidationRequest',
};

/** The real document: a gateway started here on a scratch folder, asked for GET /openapi.json. */
export async function fetchOpenApiDocument(): Promise<OpenApiDocument> {
  const data_dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-sdk-generate-'));
  try {
    const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', PAYGATE_DATA_DIR: data_dir, PAYGATE_LOG_LEVEL: 'error' });
    const logger = createLogger({ level: 'error', destination: path.join(data_dir, 'gateway.log') });
    const gateway = await startGateway(config, { logger, announce: () => undefined });
    try {
      const answer = await gateway.app.inject({ method: 'GET', url: '/openapi.json' });
      if (answer.statusCode !== 200) throw new Error(`GET /openapi.json answered HTTP ${answer.statusCode}`);
      return JSON.parse(answer.body) as OpenApiDocument;
    } finally {
      await gateway.close();
    }
  } finally {
    fs.rmSync(data_dir, { recursive: true, force: true });
  }
}

// ---- schema → TypeScript ---------------------------------------------------------------------

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function comment(text: string | undefined, indent: string): string {
  if (text === undefined || text === '') return '';
  return `${indent}/** ${text.replace(/\*\//g, '*\\/').replace(/\s+/g, ' ')} */\n`;
}

function propertyComment(schema: Schema): string | undefined {
  if (schema.description !== undefined) return schema.description;
  if (typeof schema.maxLength === 'number') return `up to ${schema.maxLength} characters`;
  return undefined;
}

/** A schema as a TypeScript type; objects over several lines at `indent`. */
export function typeOf(schema: Schema, indent = ''): string {
  if (schema.$ref !== undefined) throw new Error(`$ref ${schema.$ref} is not expected in a merchant operation`);
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.enum !== undefined) return schema.enum.map((value) => JSON.stringify(value)).join(' | ');
  const union = schema.anyOf ?? schema.oneOf;
  if (union !== undefined) return union.map((member) => wrap(typeOf(member, indent))).join(' | ');
  if (schema.allOf !== undefined) {
    const merged = mergedObject(schema.allOf);
    return merged === null ? schema.allOf.map((member) => wrap(typeOf(member, indent))).join(' & ') : objectType(merged, indent);
  }
  const types = typeof schema.type === 'string' ? [schema.type] : (schema.type ?? []);
  if (types.length > 1) return types.map((type) => typeOf({ ...schema, type }, indent)).join(' | ');
  switch (types[0]) {
    case 'string':
      return 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array':
      return `Array<${schema.items ? typeOf(schema.items, indent) : 'unknown'}>`;
    case 'object':
      return objectType(schema, indent);
    default:
      return schema.properties ? objectType(schema, indent) : 'unknown';
  }
}

/**
 * An intersection of plain objects (TypeBox's Intersect: the v1.3 envelope and the call's fields)
 * as one object, which reads better than `{…} & {…}`; null when the members are not all plain
 * objects or share a property.
 */
function mergedObject(members: readonly Schema[]): Schema | null {
  const properties: Record<string, Schema> = {};
  const required: string[] = [];
  for (const member of members) {
    if (member.properties === undefined || member.anyOf || member.oneOf || member.allOf || member.additionalProperties === true)
      return null;
    for (const [name, property] of Object.entries(member.properties)) {
      if (name in properties) return null;
      properties[name] = property;
    }
    required.push(...(member.required ?? []));
  }
  return { type: 'object', properties, required };
}

/** A schema that is one object, written as an interface rather than a type alias. */
function isInterface(schema: Schema): boolean {
  if (schema.allOf !== undefined) return mergedObject(schema.allOf) !== null;
  return schema.anyOf === undefined && schema.oneOf === undefined && schema.const === undefined && schema.properties !== undefined;
}

function wrap(type: string): string {
  return type.includes(' | ') || type.includes(' & ') ? `(${type})` : type;
}

function objectType(schema: Schema, indent: string): string {
  const properties = Object.entries(schema.properties ?? {});
  const open = schema.additionalProperties === true;
  if (properties.length === 0) return 'Record<string, unknown>';
  const inner = `${indent}  `;
  const required = new Set(schema.required ?? []);
  let text = '{\n';
  for (const [name, property] of properties) {
    const key = IDENTIFIER.test(name) ? name : JSON.stringify(name);
    text += comment(propertyComment(property), inner);
    text += `${inner}${key}${required.has(name) ? '' : '?'}: ${typeOf(property, inner)};\n`;
  }
  if (open) text += `${inner}/** Further fields, as the gateway sends them. */\n${inner}[field: string]: unknown;\n`;
  return `${text}${indent}}`;
}

/** A GET's query parameters as one object schema. */
function querySchema(operation: Operation): Schema {
  const query = (operation.parameters ?? []).filter((parameter) => parameter.in === 'query');
  return {
    type: 'object',
    required: query.filter((parameter) => parameter.required === true).map((parameter) => parameter.name),
    properties: Object.fromEntries(query.map((parameter) => [parameter.name, parameter.schema])),
  };
}

function requestSchema(operation: Operation): Schema {
  const body = operation.requestBody?.content['application/json']?.schema;
  return body ?? querySchema(operation);
}

function answerSchema(operation: Operation): Schema {
  const schema = operation.responses['200']?.content?.['application/json']?.schema;
  if (schema === undefined) throw new Error(`${operation.operationId}: no JSON answer for HTTP 200`);
  return schema;
}

/** The constant a variant's property holds (`transaction_type`, `version`), or null. */
function constOf(schema: Schema, property: string): string | null {
  const value = schema.properties?.[property]?.const;
  return typeof value === 'string' ? value : null;
}

/** A merchant's operation: signed in the body (security []) or by Gt-Authentication. */
function signingOf(operation: Operation): 'body' | 'header' | null {
  if (operation.security === undefined) return null;
  if (operation.security.length === 0) return 'body';
  if (operation.security.some((scheme) => 'gtAuthentication' in scheme)) return 'header';
  return null;
}

interface Emitted {
  readonly name: string;
  readonly schema: Schema;
  readonly doc: string;
}

/** Adds a named type, or checks that a second use of the name is the same type. */
function emit(types: Map<string, Emitted>, entry: Emitted): void {
  const earlier = types.get(entry.name);
  if (earlier === undefined) {
    types.set(entry.name, entry);
    return;
  }
  if (JSON.stringify(earlier.schema) !== JSON.stringify(entry.schema)) {
    throw new Error(
      `${entry.name} is given to two different schemas (${earlier.doc}; ${entry.doc}): name them apart in scripts/generate.ts`,
    );
  }
}

function emitVariants(
  types: Map<string, Emitted>,
  schema: Schema,
  names: string | Readonly<Record<string, string>>,
  keyOf: (variant: Schema) => string,
  doc: string,
): string[] {
  if (typeof names === 'string') {
    emit(types, { name: names, schema, doc });
    return [names];
  }
  const variants = schema.anyOf ?? schema.oneOf ?? [schema];
  return variants.map((variant) => {
    const key = keyOf(variant);
    const name = names[key];
    if (name === undefined) throw new Error(`${doc}: a variant "${key}" has no SDK name: add it in scripts/generate.ts`);
    emit(types, { name, schema: variant, doc: `${doc} (${key})` });
    return name;
  });
}

/** The generated module's text. */
export function renderModule(document: OpenApiDocument): string {
  const types = new Map<string, Emitted>();
  const endpoints: string[] = [];
  const seen = new Set<string>();
  for (const [url, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const signing = signingOf(operation);
      if (signing === null) continue;
      const names = OPERATION_NAMES[operation.operationId];
      if (names === undefined) {
        throw new Error(
          `${method.toUpperCase()} ${url} (${operation.operationId}) is a merchant operation the SDK does not know: name it in scripts/generate.ts and give the client a method`,
        );
      }
      seen.add(operation.operationId);
      const doc = `${method.toUpperCase()} ${url}`;
      // "sale 1.2"; a call with no transaction_type (capture, void) by its version alone: "1.2".
      const variantKey = (variant: Schema) =>
        [constOf(variant, 'payment_method'), constOf(variant, 'transaction_type'), constOf(variant, 'version') ?? '?']
          .filter((part) => part !== null)
          .join(' ');
      const request_names = emitVariants(types, requestSchema(operation), names.request, variantKey, `${doc}: ${operation.summary ?? ''}`);
      emit(types, { name: names.answer, schema: answerSchema(operation), doc: `${doc}: its answer` });
      endpoints.push(
        `  ${operation.operationId}: { method: '${method.toUpperCase()}', path: '${url}', signing: '${signing}' },` +
          ` // request ${request_names.join(' | ')}; answer ${names.answer}`,
      );
    }
  }
  const missing = Object.keys(OPERATION_NAMES).filter((id) => !seen.has(id));
  if (missing.length > 0)
    throw new Error(`operations gone from /openapi.json: ${missing.join(', ')}: drop them from scripts/generate.ts and the client`);

  const unions: string[] = [];
  for (const [name, webhook] of Object.entries(document.webhooks ?? {})) {
    const operation = webhook.post;
    const names = WEBHOOK_NAMES[name];
    if (operation === undefined || names === undefined)
      throw new Error(`webhook ${name} is new: name it in scripts/generate.ts and give the handler a way to take it`);
    const body = operation.requestBody?.content['application/json']?.schema;
    if (body === undefined) throw new Error(`webhook ${name} has no JSON body`);
    const variants = emitVariants(
      types,
      body,
      names,
      (variant) => constOf(variant, 'version') ?? '?',
      `webhook ${name}: ${operation.summary ?? ''}`,
    );
    const union = WEBHOOK_UNION_NAMES[name];
    if (union !== undefined) unions.push(`${comment(body.description, '')}export type ${union} = ${variants.join(' | ')};\n`);
    emit(types, { name: 'MerchantReply', schema: answerSchema(operation), doc: `webhook ${name}: the merchant's reply` });
  }

  let text =
    "// GENERATED by packages/sdk/scripts/generate.ts from the gateway's /openapi.json: do not edit.\n" +
    '// The request, answer and webhook types of the merchant API, and where each operation is. Run\n' +
    "// `npm run generate --workspace @paygate/sdk` after changing the gateway's schemas; the SDK's\n" +
    '// test/generated.test.ts fails while this file differs from a fresh generation.\n\n';
  text += 'export const ENDPOINTS = {\n' + endpoints.join('\n') + '\n} as const;\n\n';
  text += 'export type OperationId = keyof typeof ENDPOINTS;\n';
  for (const entry of types.values()) {
    text += `\n/** ${entry.doc.replace(/\*\//g, '*\\/')} */\n`;
    const type = typeOf(entry.schema);
    text += isInterface(entry.schema) ? `export interface ${entry.name} ${type}\n` : `export type ${entry.name} = ${type};\n`;
  }
  for (const union of unions) text += `\n${union}`;
  return text;
}

async function main(): Promise<void> {
  const text = renderModule(await fetchOpenApiDocument());
  fs.mkdirSync(path.dirname(GENERATED_FILE), { recursive: true });
  fs.writeFileSync(GENERATED_FILE, text);
  process.stdout.write(`wrote ${path.relative(process.cwd(), GENERATED_FILE)} (${text.length} characters)\n`);
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
