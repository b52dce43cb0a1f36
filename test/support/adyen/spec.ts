// Checks requests to, and answers and notifications from, Adyen against its published OpenAPI 3.1
// descriptions (the subsets in test/psp-specs/adyen, see SOURCE.md there), so that neither the
// connector nor the fake Adyen can drift from the real API. Each check returns a list of problems,
// empty when the message is valid. Test code only.
//
// How the descriptions are read: their schemas are JSON Schema 2020-12 (OpenAPI 3.1), run by Ajv
// as they are. Adyen's objects say `additionalProperties: false`, so an undeclared field is a
// problem. Requests: the path (below /checkout/v71 or /pal/servlet/Payout/v68) must match an
// operation and its method, an X-API-Key header must be there (the ApiKeyAuth scheme), a body
// needs Content-Type application/json and must match the operation's request schema. Answers:
// the status must be declared and the body match its schema. Notifications: the body must match
// the webhook schema of every item's eventCode (those cut into the subset).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import {
  describedOperations,
  lowerCaseHeaders,
  operationTable,
  type JsonObject,
  type OperationTable,
} from '../fake-processor/openapi-operations.js';

export const ADYEN_SPEC_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../psp-specs/adyen');
export const CHECKOUT_PREFIX = '/checkout/v71';
export const PAYOUT_PREFIX = '/pal/servlet/Payout/v68';

export interface AdyenMessage {
  readonly method: string;
  /** The whole path, with its API's prefix (/checkout/v71/payments). */
  readonly path: string;
  readonly headers?: Readonly<Record<string, string | readonly string[] | number | undefined>>;
  /** The body as text ('' none). */
  readonly body: string;
}

export interface AdyenAnswer {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly body: string;
}

const CHECKED_FORMATS = ['date-time', 'date', 'email', 'uri'] as const;
const addFormats = (addFormatsModule as unknown as { default: (ajv: Ajv2020, formats: readonly string[]) => Ajv2020 }).default;
const MAX_PROBLEMS = 20;

interface Api {
  readonly id: string;
  readonly table: OperationTable;
  readonly document: JsonObject;
}

export interface AdyenValidator {
  validateRequest(message: AdyenMessage): string[];
  validateResponse(answer: AdyenAnswer): string[];
  validateNotification(body: string): string[];
  /** The operation (template) a path names, e.g. "/payments/{paymentPspReference}/captures", or null. */
  templateOf(method: string, path: string): string | null;
  /**
   * Compiles every operation's request and JSON response schemas now. The fake calls it as it
   * starts: compiled on first use, /payments' request schema alone took 1.2 s on an idle machine,
   * and on a busy CI machine the first sale's answer came after the gateway's 5 s time-out.
   */
  precompile(): void;
}

function load(file: string): JsonObject {
  return JSON.parse(fs.readFileSync(path.join(ADYEN_SPEC_DIR, file), 'utf8')) as JsonObject;
}

export function createAdyenValidator(): AdyenValidator {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true, discriminator: false });
  addFormats(ajv, CHECKED_FORMATS);
  for (const name of ['int32', 'int64', 'byte', 'binary', 'double', 'float']) ajv.addFormat(name, true);
  const apis: Record<'checkout' | 'payout', Api> = {
    checkout: api('adyen-checkout', load('CheckoutService-v71.subset.json')),
    payout: api('adyen-payout', load('PayoutService-v68.subset.json')),
  };
  const webhooks = load('Webhooks-v1.subset.json');
  ajv.addSchema(webhooks, 'adyen-webhooks');
  const compiled = new Map<string, ValidateFunction>();

  function api(id: string, document: JsonObject): Api {
    ajv.addSchema(document, id);
    return { id, document, table: operationTable(describedOperations(document, id)) };
  }

  /** A validator of the schema at this pointer of a document (compiled once). */
  function validatorAt(id: string, pointer: string): ValidateFunction {
    const key = `${id}#${pointer}`;
    let fn = compiled.get(key);
    if (!fn) {
      fn = ajv.compile({ $ref: key });
      compiled.set(key, fn);
    }
    return fn;
  }

  function check(fn: ValidateFunction, value: unknown, label: string): string[] {
    if (fn(value)) return [];
    return (fn.errors ?? [])
      .slice(0, MAX_PROBLEMS)
      .map((e: ErrorObject) => `${label}: ${e.instancePath || '/'} ${e.message ?? ''}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`);
  }

  function split(raw_path: string): { api: Api; sub: string } | null {
    const p = raw_path.split('?')[0] ?? '';
    if (p.startsWith(`${CHECKOUT_PREFIX}/`)) return { api: apis.checkout, sub: p.slice(CHECKOUT_PREFIX.length) };
    if (p.startsWith(`${PAYOUT_PREFIX}/`)) return { api: apis.payout, sub: p.slice(PAYOUT_PREFIX.length) };
    return null;
  }

  function parse(text: string, label: string, problems: string[]): unknown {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      problems.push(`${label}: the body is not JSON`);
      return undefined;
    }
  }

  function schemaPointer(found: { readonly template: string; readonly method: string }, where: string[]): string {
    const escaped = found.template.replace(/~/g, '~0').replace(/\//g, '~1');
    return `/paths/${escaped}/${found.method.toLowerCase()}/${where.join('/')}`;
  }

  return {
    precompile() {
      for (const { id, document } of Object.values(apis)) {
        for (const [template, methods] of Object.entries(document.paths as JsonObject)) {
          for (const [method, operation] of Object.entries(methods as JsonObject)) {
            const found = { template, method };
            if ((operation as JsonObject).requestBody !== undefined)
              validatorAt(id, schemaPointer(found, ['requestBody', 'content', 'application~1json', 'schema']));
            for (const [status, declared] of Object.entries(((operation as JsonObject).responses ?? {}) as JsonObject)) {
              if ((declared as JsonObject).content !== undefined)
                validatorAt(id, schemaPointer(found, ['responses', status, 'content', 'application~1json', 'schema']));
            }
          }
        }
      }
    },
    templateOf(method, raw_path) {
      const at = split(raw_path);
      return at ? (at.api.table.find(method, at.sub).entry?.template ?? null) : null;
    },
    validateRequest(message) {
      const label = `${message.method} ${message.path}`;
      const at = split(message.path);
      if (!at) return [`${label}: not under ${CHECKOUT_PREFIX} or ${PAYOUT_PREFIX}`];
      const found = at.api.table.find(message.method, at.sub);
      if (!found.entry) return [`${label}: no operation of the description matches`];
      const problems: string[] = [];
      const headers = lowerCaseHeaders(message.headers ?? {});
      if (!headers['x-api-key']) problems.push(`${label}: no X-API-Key header (ApiKeyAuth)`);
      if (!(headers['content-type'] ?? '').startsWith('application/json')) problems.push(`${label}: Content-Type is not application/json`);
      const body = parse(message.body, label, problems);
      if (body !== undefined) {
        const pointer = schemaPointer(found.entry, ['requestBody', 'content', 'application~1json', 'schema']);
        problems.push(...check(validatorAt(at.api.id, pointer), body, label));
      }
      return problems;
    },
    validateResponse(answer) {
      const label = `${answer.method} ${answer.path} → ${answer.status}`;
      const at = split(answer.path);
      if (!at) return [`${label}: not under a known API`];
      const found = at.api.table.find(answer.method, at.sub);
      if (!found.entry) return [`${label}: no operation of the description matches`];
      const responses = found.entry.operation.responses as JsonObject;
      const declared = responses[String(answer.status)] as JsonObject | undefined;
      if (!declared) return [`${label}: status ${answer.status} is not declared`];
      const problems: string[] = [];
      const body = parse(answer.body, label, problems);
      if (body !== undefined && declared.content !== undefined) {
        const pointer = schemaPointer(found.entry, ['responses', String(answer.status), 'content', 'application~1json', 'schema']);
        problems.push(...check(validatorAt(at.api.id, pointer), body, label));
      }
      return problems;
    },
    validateNotification(text) {
      const problems: string[] = [];
      const body = parse(text, 'notification', problems) as { notificationItems?: { NotificationRequestItem?: { eventCode?: unknown } }[] };
      if (body === undefined) return problems;
      const items = Array.isArray(body?.notificationItems) ? body.notificationItems : [];
      if (items.length === 0) problems.push('notification: no notificationItems');
      const codes = new Set(items.map((i) => String(i?.NotificationRequestItem?.eventCode)));
      const hooks = webhooks.webhooks as JsonObject;
      for (const code of codes) {
        if (!(`/${code}` in hooks)) {
          problems.push(`notification: eventCode ${code} is not among the described webhooks`);
          continue;
        }
        const pointer = `/webhooks/~1${code}/post/requestBody/content/application~1json/schema`;
        problems.push(...check(validatorAt('adyen-webhooks', pointer), body, `notification ${code}`));
      }
      return problems;
    },
  };
}

let shared: AdyenValidator | null = null;
/** One validator for the process (compiling the descriptions takes a while). */
export function adyenValidator(): AdyenValidator {
  return (shared ??= createAdyenValidator());
}
