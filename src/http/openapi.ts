// /openapi.json, generated from the same route declarations (and so the same schemas) that
// validate requests. Nothing here is written by hand per endpoint: what differs between routes
// (how they are signed, who may call them, what they answer) follows from each route's kind and
// schemas; the edge's own answers (400, 408, 413, 429, 500 …) are one shared envelope schema.
// The gateway also serves it as an interactive reference at /reference (http/app.ts). What the
// gateway sends to merchants (notifications, validation requests, subscription events) is under
// `webhooks`, from notifications/schemas.ts.
import type { RouteDef } from './route.js';
import { MERCHANT_WEBHOOKS, MerchantReply } from '../notifications/schemas.js';

/** The envelope of decisions.md §5, as every error answer of the edge carries it. */
const ENVELOPE = {
  type: 'object',
  required: ['status', 'description'],
  properties: {
    status: { type: 'integer', description: '0: processed; positive: refused, the description names why (docs/errors.md); -1: our fault' },
    description: { type: 'string', maxLength: 256 },
    version: { type: 'string' },
    timestamp: { type: 'integer', description: 'unix time in seconds' },
    signature: { type: 'string', pattern: '^[0-9a-f]{96}$', description: 'present when the merchant was identified (decisions.md §1)' },
  },
};

const envelope = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Envelope' } } },
});

/** Answers any call can get from the edge before or around its own logic (docs/limits.md, docs/errors.md). */
const EDGE_ANSWERS = {
  400: envelope('Body not a JSON object (status 23), or a malformed URL (status 27)'),
  408: envelope('Headers and body not received in time (status 25); the connection is closed'),
  413: envelope('Body over 64 KiB (status 22)'),
  414: envelope('A path parameter over 200 characters (status 27)'),
  429: {
    ...envelope('Too many requests (status 28); signed when the merchant is known'),
    headers: { 'Retry-After': { schema: { type: 'integer' }, description: 'seconds' } },
  },
  431: envelope('Headers over 16 KiB (status 26)'),
  500: envelope('Internal error (status -1)'),
};

/** API calls only (/api/…): refused before anything is read while the gateway's event loop lags (http/load-shedding.ts). */
const SHED_ANSWER = {
  503: {
    ...envelope('Gateway busy (status 29): nothing was read or recorded; send the same request again after Retry-After'),
    headers: { 'Retry-After': { schema: { type: 'integer' }, description: 'seconds' } },
  },
};

const OPERATOR = [{ operatorToken: [] }];

/**
 * The groups the reference (/reference) shows, in this order: what each call does, not how it is
 * signed. Every operation is in exactly one (tagOf); the merchant's notifications are `webhooks`.
 */
export const OPERATION_TAGS = [
  {
    name: 'cards',
    description:
      'Card sales and authorizations, captures, voids, refunds, card payouts, the card vault, a transaction read (and a PayPal sale, also /api/process)',
  },
  { name: 'payouts', description: "Direct payouts to e-wallets and bank accounts; the operator's review of held payouts" },
  { name: 'cashier', description: 'Hosted cashier sessions (deposits and withdrawals) and the cashier pages the customer sees' },
  { name: 'orders', description: 'Checkout and payout orders for an exact amount, and where an order stands' },
  { name: 'subscriptions', description: 'v1.3 plans and subscriptions, signed with the Gt-Authentication header' },
  {
    name: 'operator',
    description: "The operator's API: gateways, routing, merchants, notifications, reconciliation (PAYGATE_ADMIN_TOKEN)",
  },
  { name: 'sandbox', description: 'The sandbox only: its 3-D Secure and e-wallet pages, its clock, chargebacks and reversals' },
  { name: 'processors', description: "What processors call: their webhooks, and the customer's way back from their pages" },
  { name: 'service', description: 'Health, metrics and this document' },
  { name: 'webhooks', description: 'What the gateway sends to the merchant: notifications, validation requests, subscription events' },
] as const;

export type OperationTag = (typeof OPERATION_TAGS)[number]['name'];

/** Path prefixes to tags, the first match wins. */
const TAG_RULES: readonly (readonly [RegExp, OperationTag])[] = [
  [/^\/api\/(process|capture|void|tokenize|transaction-status)$/, 'cards'],
  [/^\/api\/direct$/, 'payouts'],
  [/^\/operator\/payouts(\/|$)/, 'payouts'],
  [/^\/api\/(init-pay-in|init-pay-out)$/, 'cashier'],
  [/^\/cashier(\/|$)/, 'cashier'],
  [/^\/api\/(init-checkout|init-pay-out-order|find-order)$/, 'orders'],
  [/^\/api\/v1\.3\//, 'subscriptions'],
  [/^\/operator\//, 'operator'],
  [/^\/sandbox\//, 'sandbox'],
  [/^\/(webhooks|return)\//, 'processors'],
];

/** The group of a route; a route no rule places stops the document's build (and so the tests) until it gets one. */
export function tagOf(url: string): OperationTag {
  const rule = TAG_RULES.find(([pattern]) => pattern.test(url));
  if (rule === undefined) throw new Error(`No OpenAPI tag for ${url}: add it to TAG_RULES in http/openapi.ts`);
  return rule[1];
}

/** The gateway's own endpoints, served by app.ts rather than declared as routes. */
const BUILT_IN_PATHS = {
  '/healthz': {
    get: {
      operationId: operationId('GET', '/healthz'),
      tags: ['service'],
      summary: 'Health: 200 when the store answers, 503 when it does not',
      responses: {
        200: {
          description: 'Healthy',
          content: {
            'application/json': {
              schema: { type: 'object', properties: { status: { const: 'ok' }, store: { enum: ['sqlite', 'postgres'] } } },
            },
          },
        },
        503: {
          description: 'The store cannot be reached',
          content: {
            'application/json': { schema: { type: 'object', properties: { status: { const: 'unavailable' }, store: { type: 'string' } } } },
          },
        },
      },
    },
  },
  '/metrics': {
    get: {
      operationId: operationId('GET', '/metrics'),
      tags: ['service'],
      summary: 'Prometheus metrics (docs/operations.md)',
      security: OPERATOR,
      responses: {
        200: { description: 'Prometheus text format', content: { 'text/plain': { schema: { type: 'string' } } } },
        401: envelope('Missing or wrong operator token'),
      },
    },
  },
  '/openapi.json': {
    get: {
      operationId: operationId('GET', '/openapi.json'),
      tags: ['service'],
      summary: 'This document',
      responses: { 200: { description: 'OpenAPI 3.1', content: { 'application/json': { schema: { type: 'object' } } } } },
    },
  },
};

/**
 * What the gateway sends to the merchant's own URLs (OpenAPI 3.1 `webhooks`): the body, its
 * headers, and the reply it expects. Clients generate their handlers' types from here.
 */
function merchantWebhooks(): Record<string, unknown> {
  const webhooks: Record<string, unknown> = {};
  for (const [name, webhook] of Object.entries(MERCHANT_WEBHOOKS)) {
    webhooks[name] = {
      post: {
        operationId: name,
        tags: ['webhooks'],
        summary: webhook.summary,
        ...(webhook.headers
          ? {
              parameters: Object.entries(webhook.headers).map(([header, description]) => ({
                name: header,
                in: 'header',
                required: true,
                description,
                schema: { type: 'string', pattern: '^[0-9a-f]{96}$' },
              })),
            }
          : {}),
        requestBody: { required: true, content: { 'application/json': { schema: webhook.body } } },
        responses: {
          200: {
            description: "The merchant's signed reply (spec §6.3); anything else is resent (a validation request: refused)",
            content: { 'application/json': { schema: MerchantReply } },
          },
        },
      },
    };
  }
  return webhooks;
}

/** A stable, unique name for client generators: the method and the path's words, camelCased (post /api/process → postApiProcess). */
export function operationId(method: string, url: string): string {
  const words = url
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((word) => word.replace(/^\d/, 'v$&'));
  return method.toLowerCase() + words.map((word) => word[0]!.toUpperCase() + word.slice(1)).join('');
}

/** The reference's opening words (Markdown, shown by /reference). */
const INTRO = [
  'The API of **paygate**, a self-hostable payment gateway: card and PayPal payments, payouts, a hosted cashier, orders and subscriptions.',
  '',
  'Body-signed calls carry `timestamp` (unix seconds, within 60 s) and `signature`: sha384hex of the values in sorted-key order ' +
    'followed by the merchant secret (docs/signing.md, decisions.md §1). In the sandbox, type the merchant secret above and ' +
    '"Try it out" signs each call in this page; the secret never leaves it. The v1.3 calls sign a header instead (decisions.md §2).',
  '',
  'Status values and error codes: docs/errors.md; limits: docs/limits.md; the contract: docs/contract/ (in the repository).',
].join('\n');

export function buildOpenApi(routes: readonly RouteDef[], server_url: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = route.url.replace(/:([A-Za-z_]+)/g, '{$1}');
    const parameters = [...route.url.matchAll(/:([A-Za-z_]+)/g)].map((m) => ({
      name: m[1],
      in: 'path',
      required: true,
      schema: { type: 'string', maxLength: 200 },
    }));
    const operation: Record<string, unknown> = {
      operationId: operationId(route.method, route.url),
      tags: [tagOf(route.url)],
      summary: route.summary,
    };
    if (parameters.length > 0) operation.parameters = parameters;
    if (route.kind === 'signed') {
      operation.description =
        'Body-signed: the `signature` field is sha384hex of the values in sorted-key order followed by the secret ' +
        '(decisions.md §1, docs/signing.md). Answers HTTP 200 with the signed envelope for every logical outcome.';
      // The signature travels in the body, which OpenAPI security schemes cannot name: declared as no scheme.
      operation.security = [];
      operation.requestBody = { required: true, content: { 'application/json': { schema: route.input.schema } } };
      operation.responses = {
        200: { description: 'Signed answer', content: { 'application/json': { schema: route.response } } },
        ...EDGE_ANSWERS,
        ...(route.url.startsWith('/api/') ? SHED_ANSWER : {}),
      };
    } else if (route.kind === 'header-signed') {
      operation.description =
        'v1.3: signed with the Gt-Authentication header (decisions.md §2); the answer carries Gt-Authentication too. ' +
        'Gt-Body-Signature binds the method, path and body (docs/security.md §3), required for merchants switched to it. ' +
        'Answers HTTP 200 with the envelope for every logical outcome.';
      operation.security = [{ gtAuthentication: [] }, { gtAuthentication: [], gtBodySignature: [] }];
      const schema = route.input.schema as { properties?: Record<string, unknown>; required?: string[] };
      const query =
        route.method === 'GET'
          ? Object.entries(schema.properties ?? {}).map(([name, property]) => ({
              name,
              in: 'query',
              required: (schema.required ?? []).includes(name),
              schema: property,
            }))
          : [];
      if (parameters.length + query.length > 0) operation.parameters = [...parameters, ...query];
      if (route.method !== 'GET')
        operation.requestBody = { required: true, content: { 'application/json': { schema: route.input.schema } } };
      operation.responses = {
        200: {
          description: 'Answer; header Gt-Authentication = sha384hex(status + timestamp + secret)',
          headers: { 'Gt-Authentication': { schema: { type: 'string', pattern: '^[0-9a-f]{96}$' } } },
          content: { 'application/json': { schema: route.response } },
        },
        ...EDGE_ANSWERS,
        ...(route.url.startsWith('/api/') ? SHED_ANSWER : {}),
      };
    } else {
      const operator = route.url.startsWith('/operator/') || route.url === '/sandbox/clock';
      if (operator) operation.security = OPERATOR;
      if (route.body) operation.requestBody = { required: true, content: { 'application/json': { schema: route.body } } };
      operation.responses = {
        200:
          route.produces === 'text/html'
            ? { description: 'HTML page', content: { 'text/html': { schema: { type: 'string' } } } }
            : { description: 'OK', content: { 'application/json': { schema: route.response ?? { type: 'object' } } } },
        ...(operator ? { 401: envelope('Missing or wrong operator token, or a credential in the query string') } : {}),
        ...(route.produces === 'text/html'
          ? { 404: { description: 'Unknown or used link: a readable page', content: { 'text/html': { schema: { type: 'string' } } } } }
          : {}),
        ...EDGE_ANSWERS,
        ...(route.url.startsWith('/api/') ? SHED_ANSWER : {}),
      };
    }
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: operation };
  }
  const used_tags = new Set<string>(['service', 'webhooks', ...routes.map((route) => tagOf(route.url))]);
  return {
    openapi: '3.1.0',
    info: {
      title: 'paygate',
      version: '0.1.0',
      description: INTRO,
    },
    // A group without an operation here (the sandbox's, in live mode) is left out.
    tags: OPERATION_TAGS.filter((tag) => used_tags.has(tag.name)).map((tag) => ({ ...tag })),
    servers: [{ url: server_url }],
    paths: { ...paths, ...BUILT_IN_PATHS },
    webhooks: merchantWebhooks(),
    components: {
      schemas: { Envelope: ENVELOPE },
      securitySchemes: {
        operatorToken: {
          type: 'http',
          scheme: 'bearer',
          description: 'PAYGATE_ADMIN_TOKEN, in the Authorization header only (never the query string)',
        },
        gtAuthentication: {
          type: 'apiKey',
          in: 'header',
          name: 'Gt-Authentication',
          description: 'sha384hex(merchant_id + application_key + timestamp + secret) (decisions.md §2)',
        },
        gtBodySignature: {
          type: 'apiKey',
          in: 'header',
          name: 'Gt-Body-Signature',
          description: 'sha384hex(method + path + body + secret) (docs/security.md §3)',
        },
      },
    },
  };
}
