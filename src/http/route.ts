// How a route is declared, and the pipeline every body-signed route runs through:
//   JSON object → merchant_id known → field count → flat values → signature (constant-time)
//   → 60-second window → fields against the route's schema → operation → signed answer.
// Every answer from the known merchant on is signed: with the secret the request was signed with
// once the signature is checked (the current one, or the previous one during a roll's grace), with
// the current one before that. Its version is the request's own only when the route takes that
// version (versionsOf), else the route's answer_version. A disabled merchant is answered exactly
// as an unknown one (docs/security.md §5).
// Route files declare; they never re-implement any of these steps.
import type { TSchema } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { acceptedSecrets, type Merchant } from '../domain/merchants.js';
import { unixSeconds } from '../domain/clock.js';
import { bodySecret, matchingSecret, signaturesEqual, signHeader } from '../domain/signing.js';
import type { OperationDeps } from '../operations/deps.js';
import type { HttpDeps } from './deps.js';
import type { Identity } from '../operations/sale.js';
import { answerBody, answerJson, fieldError, type JsonReply, reply, type Reply, Status } from './envelope.js';
import { bodySchema, type Parsed } from './fields.js';
import { describeTextProblem, textProblem } from '../domain/text.js';
import { invalidSignatureHelp, MILLISECOND_TIMESTAMP_FLOOR } from '../domain/signature-help.js';
import { urlHostNotPublic } from '../outbound/addresses.js';

/** The fields read before the rest of a body is checked, by the dictionary's own rules. */
const MERCHANT_ID = bodySchema({ merchant_id: 'required' });
const APPLICATION_KEY = bodySchema({ application_key: 'required' });

export interface SignedContext {
  readonly deps: OperationDeps;
  readonly merchant: Merchant;
  /**
   * The secret the request was signed with: merchant.secret, or its previous secret during a
   * roll's grace. Whatever the merchant's request encrypted with its secret (spec §5.3) opens with it.
   */
  readonly secret: string;
  /** The request body exactly as signed (for idempotency fingerprints). */
  readonly body: Readonly<Record<string, unknown>>;
  readonly request: FastifyRequest;
}

export interface SignedInput<T> {
  /** JSON schema for /openapi.json. */
  readonly schema: TSchema;
  parse(body: Readonly<Record<string, unknown>>): Parsed<T> | { readonly ok: false; readonly reply: Reply };
}

export interface SignedRoute<T = unknown> {
  readonly kind: 'signed';
  readonly method: 'POST';
  readonly url: string;
  readonly summary: string;
  /**
   * The version answered when the request's own version is absent or not one this route takes
   * (a version is echoed only when the route's schema accepts it: versionsOf).
   */
  readonly answer_version: string;
  readonly input: SignedInput<T>;
  readonly response: TSchema;
  /** The answer's description limit when the spec gives one shorter than 256 (init-* and find-order: 75). */
  readonly description_max?: number;
  handle(context: SignedContext, input: T): Promise<Reply>;
}

export interface PlainRoute {
  readonly kind: 'plain';
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  readonly url: string;
  readonly summary: string;
  /** text/html pages are documented as such; JSON otherwise. */
  readonly produces: 'application/json' | 'text/html';
  readonly body?: TSchema;
  readonly response?: TSchema;
  /**
   * The body as the bytes received (a Buffer, any content type), for a processor's webhook whose
   * signature covers the exact bytes; at most `limits.webhook_body_max_bytes`.
   */
  readonly raw_body?: true;
  handle(request: FastifyRequest, response: FastifyReply): Promise<unknown>;
}

export type RouteDef = SignedRoute<unknown> | PlainRoute | HeaderSignedRoute<unknown>;

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The merchant's application or frontend named in the body, if it is theirs. */
export function identityOf(merchant: Merchant, body: Readonly<Record<string, unknown>>): Identity | null {
  if (typeof body.application_key === 'string' && body.application_key !== '') {
    return merchant.applications.includes(body.application_key) ? { kind: 'application_key', value: body.application_key } : null;
  }
  if (typeof body.frontend === 'string' && body.frontend !== '') {
    return merchant.frontends.some((f) => f.name === body.frontend) ? { kind: 'frontend', value: body.frontend } : null;
  }
  return null;
}

/** decisions.md §15: a timestamp above 10^11 is answered as a millisecond one (status 1), within init-*'s 75 characters. */
export const MILLISECONDS_DESCRIPTION = 'Timestamp looks like milliseconds: send unix time in seconds';

export const UNKNOWN_CREDENTIALS = 'Authentication failed: unknown merchant_id, application_key or frontend';

export function unknownCredentials(): Reply {
  return reply(Status.AUTHENTICATION_FAILED, UNKNOWN_CREDENTIALS);
}

const route_versions = new WeakMap<SignedRoute, ReadonlySet<string>>();

/** The version values a schema's `version` field accepts (exact literals), through unions of variants. */
export function schemaVersions(schema: TSchema): Set<string> {
  const found = new Set<string>();
  const literals = (value: unknown): void => {
    if (typeof value !== 'object' || value === null) return;
    const node = value as { const?: unknown; anyOf?: unknown[]; oneOf?: unknown[] };
    if (typeof node.const === 'string') found.add(node.const);
    for (const member of [...(node.anyOf ?? []), ...(node.oneOf ?? [])]) literals(member);
  };
  const walk = (value: unknown): void => {
    if (typeof value !== 'object' || value === null) return;
    const node = value as { properties?: Record<string, unknown>; anyOf?: unknown[]; oneOf?: unknown[]; allOf?: unknown[] };
    if (node.properties) literals(node.properties.version);
    for (const member of [...(node.anyOf ?? []), ...(node.oneOf ?? []), ...(node.allOf ?? [])]) walk(member);
  };
  walk(schema);
  return found;
}

/** The versions a signed route answers with: those its schema takes, and its own answer_version. */
export function versionsOf(route: SignedRoute): ReadonlySet<string> {
  let versions = route_versions.get(route);
  if (!versions) {
    versions = new Set([...schemaVersions(route.input.schema), route.answer_version]);
    route_versions.set(route, versions);
  }
  return versions;
}

/** The merchant's rate (docs/limits.md §3): the 429 answer to send, its Retry-After set, or null when within it. */
async function merchantOverRate(deps: HttpDeps, merchant_id: string, response: FastifyReply): Promise<Reply | null> {
  const limited = await deps.rate_limits.merchant(merchant_id);
  if (limited === null) return null;
  deps.metrics.rate_limited.inc({ limit: 'merchant' });
  void response.header('retry-after', String(limited.retry_after_s));
  return { ...reply(Status.TOO_MANY_REQUESTS, 'Too many requests'), http_code: 429 };
}

/** The fields holding a URL the gateway will call or send the customer to. */
const MERCHANT_URL_FIELDS = ['notification_url', 'validation_url', 'return_url'] as const;

/**
 * Live mode (unless PAYGATE_ALLOW_PRIVATE_URLS): a merchant URL that points at a loopback,
 * private or link-local host is refused when the request arrives, not only when the gateway
 * connects (docs/notifications.md §7). The description fits the 75 characters of init-* answers.
 */
function refusedMerchantUrl(deps: OperationDeps, input: Readonly<Record<string, unknown>>): string | null {
  if (deps.config.environment !== 'live' || deps.config.limits.allow_private_urls) return null;
  for (const name of MERCHANT_URL_FIELDS) {
    const value = input[name];
    if (typeof value === 'string' && urlHostNotPublic(value)) return `Invalid field: ${name} (a loopback, private or link-local address)`;
  }
  return null;
}

/** What an API answer says about itself, for the request's log line and the metrics (http/app.ts). */
export interface ApiLog {
  readonly status: number;
  /** The merchant, once identified (its secret known). */
  readonly merchant_id: string | null;
  readonly trace_id: number | null;
  readonly transaction_type: string | null;
  readonly transaction_status: string | null;
}

/** `body` only once the merchant is identified: an unidentified request's fields are not trusted even for a log line. */
function apiLogOf(answer: Reply, body: Record<string, unknown> | null): ApiLog {
  const fields = answer.fields ?? {};
  const trace_id = Number(fields.trace_id);
  // The type the request asked for (the answer does not repeat it), one of the few the API knows.
  const type = body?.transaction_type;
  return {
    status: answer.status,
    merchant_id: typeof body?.merchant_id === 'string' ? body.merchant_id : null,
    trace_id: Number.isSafeInteger(trace_id) && trace_id > 0 ? trace_id : null,
    transaction_type: typeof type === 'string' && ['sale', 'refund', 'payout'].includes(type) ? type : null,
    transaction_status: typeof fields.transaction_status === 'string' ? fields.transaction_status : null,
  };
}

export async function runSignedRoute(
  deps: HttpDeps,
  route: SignedRoute,
  request: FastifyRequest,
  response: FastifyReply,
): Promise<void> {
  const body = request.body;
  const now_s = unixSeconds(deps.clock);
  let secret: string | null = null;
  let version = route.answer_version;
  const send = (answer: Reply) => {
    request.api_log = apiLogOf(answer, secret === null ? null : body as Record<string, unknown>);
    response.code(answer.http_code ?? 200).type('application/json').send(answerBody(answer, version, unixSeconds(deps.clock), secret));
  };
  // Only JSON reaches the API; the form parser exists for the HTML pages (the cashier, the connectors' challenge pages).
  if (!isPlainObject(body) || !String(request.headers['content-type'] ?? '').startsWith('application/json')) {
    send({ ...reply(Status.MALFORMED_BODY, 'Body must be a JSON object (Content-Type: application/json)'), http_code: 400 });
    return;
  }
  // Echo the client's version only when it is one this route takes; otherwise the route's own.
  if (typeof body.version === 'string' && versionsOf(route).has(body.version)) version = body.version;
  const keys = Object.keys(body);
  // merchant_id is read before any other field: checked by its own rule before it reaches a query.
  const identified = MERCHANT_ID.parse(body);
  if (!identified.ok) {
    send(fieldError(identified.error.description));
    return;
  }
  const merchant_id = identified.value.merchant_id;
  // Card fields, signatures and tokens are redacted by the logger (logging.ts); the scan test checks it.
  request.log.debug({ body }, 'signed request');
  try {
    const merchant = await deps.merchants.find(merchant_id);
    // Disabled: the same answer as an unknown merchant_id, unsigned, so it reveals nothing more.
    if (!merchant || merchant.disabled) {
      send(unknownCredentials());
      return;
    }
    secret = merchant.secret;
    const limited = await merchantOverRate(deps, merchant.merchant_id, response);
    if (limited !== null) {
      send(limited);
      return;
    }
    if (keys.length > deps.config.limits.body_max_fields) {
      send(fieldError(`Too many fields: at most ${deps.config.limits.body_max_fields} are accepted`));
      return;
    }
    for (const key of keys) {
      const value = body[key];
      if (typeof value === 'object' && value !== null) {
        // Short enough for the 75-character descriptions of init-* and find-order (spec §2.3, §4.7).
        const shown = key.length > 32 ? `${key.slice(0, 31)}…` : key;
        send(fieldError(`Invalid field: ${shown} (nested value not allowed)`));
        return;
      }
    }
    // Checked against the grace on the gateway clock now, not when the merchant was read: a
    // kept copy may outlive it.
    const request_secret = bodySecret(body, acceptedSecrets(merchant, deps.clock.now_ms()));
    if (request_secret === null) {
      // The sandbox shows what it hashed and the likely mistake; live mode says no more than this.
      send(reply(Status.INVALID_SIGNATURE, deps.config.environment === 'sandbox' ? invalidSignatureHelp(body, merchant.secret, route.description_max) : 'Invalid signature'));
      return;
    }
    // Answered with the secret the request used: during a grace the merchant's old deployment
    // checks its answers with the old one.
    secret = request_secret;
    const timestamp = body.timestamp;
    if (timestamp === undefined || timestamp === null) {
      send(fieldError('Missing required field: timestamp'));
      return;
    }
    if (typeof timestamp !== 'number' || !Number.isSafeInteger(timestamp)) {
      send(fieldError('Invalid field: timestamp (expected unix time in seconds)'));
      return;
    }
    if (timestamp >= MILLISECOND_TIMESTAMP_FLOOR) {
      send(reply(Status.TIMESTAMP_EXPIRED, MILLISECONDS_DESCRIPTION));
      return;
    }
    if (Math.abs(now_s - timestamp) > deps.config.limits.request_window_seconds) {
      send(reply(Status.TIMESTAMP_EXPIRED, 'Timestamp expired'));
      return;
    }
    const parsed = route.input.parse(body);
    if (!parsed.ok) {
      send('reply' in parsed ? parsed.reply : fieldError(parsed.error.description));
      return;
    }
    const url_refused = refusedMerchantUrl(deps, body);
    if (url_refused !== null) {
      send(fieldError(url_refused));
      return;
    }
    send(await route.handle({ deps, merchant, secret: request_secret, body, request }, parsed.value));
  } catch (error) {
    request.log.error({ err: error, route: route.url }, 'request failed');
    send({ ...reply(Status.INTERNAL_ERROR, 'Internal error'), http_code: 500 });
  }
}

// ---------------------------------------------------------------------------------------------
// The v1.3 subscription API (decisions.md §2): no body signature; the request carries
// Gt-Authentication = sha384hex(merchant_id + application_key + timestamp + secret) and every
// answer Gt-Authentication = sha384hex(status + timestamp + secret). Its pipeline:
//   input (the JSON body; the query string for GET) → field count → merchant_id known
//   → application_key and timestamp present → Gt-Authentication (constant-time) → 60-second
//   window → application_key is the merchant's → fields against the route's schema
//   → operation → answer with its header.
// Field errors carry a positive status naming the field, except where spec §7 makes a
// validation failure -1 (plan update): the route says so with field_error_status.

export const GT_AUTHENTICATION = 'gt-authentication';
/** Spec §9: v1.3 answers carry version as varchar(3). */
export const V13_ANSWER_VERSION = '1.3';

export interface HeaderSignedContext {
  readonly deps: OperationDeps;
  readonly merchant: Merchant;
  /** The secret the request's Gt-Authentication was made with: merchant.secret, or its previous secret during a roll's grace. */
  readonly secret: string;
  /** The request's application_key, checked to be the merchant's. */
  readonly application_key: string;
  /** Path parameters (planId, subscriptionId), as given. */
  readonly params: Readonly<Record<string, string>>;
  readonly request: FastifyRequest;
}

export interface HeaderSignedRoute<T = unknown> {
  readonly kind: 'header-signed';
  readonly method: 'GET' | 'POST' | 'PUT';
  readonly url: string;
  readonly summary: string;
  /** The fields (the JSON body, or the query string of a GET). */
  readonly input: { readonly schema: TSchema; parse(input: Readonly<Record<string, unknown>>): Parsed<T> };
  /** Status of a missing, mistyped or over-long field; Status.INVALID_FIELD unless spec §7 says -1. */
  readonly field_error_status?: number;
  readonly response: TSchema;
  handle(context: HeaderSignedContext, input: T): Promise<JsonReply>;
}

/** The optional second header of a v1.3 request: the method, path and body signed (docs/security.md §3). */
export const GT_BODY_SIGNATURE = 'gt-body-signature';

/**
 * What Gt-Body-Signature covers: the method, the path as sent, and the body exactly as sent (for
 * a GET, the query string after "?"), joined with no separators.
 */
export function v13SignedContent(request: FastifyRequest): string {
  const url = request.raw.url ?? request.url;
  const query_at = url.indexOf('?');
  const path = query_at === -1 ? url : url.slice(0, query_at);
  const body = request.method === 'GET' ? (query_at === -1 ? '' : url.slice(query_at + 1)) : (request.raw_json ?? '');
  return `${request.method}${path}${body}`;
}

/** Gt-Body-Signature = sha384hex(method + path + body + secret). */
export function bodyHeaderSignature(signed_content: string, secret: string): string {
  return signHeader([signed_content], secret);
}

/** The request's Gt-Authentication value for these parts. */
export function requestHeaderSignature(merchant_id: string, application_key: string, timestamp_text: string, secret: string): string {
  return signHeader([merchant_id, application_key, timestamp_text], secret);
}

/** The answer's Gt-Authentication value. */
export function answerHeaderSignature(status: number, timestamp: number, secret: string): string {
  return signHeader([status, timestamp], secret);
}

/** The request's fields: the JSON body, or for GET the query string with its whole numbers read as numbers. */
function headerSignedInput(route: HeaderSignedRoute, request: FastifyRequest): { input: Record<string, unknown>; timestamp_text: string | null } | null {
  if (route.method !== 'GET') {
    const body = request.body;
    if (!isPlainObject(body) || !String(request.headers['content-type'] ?? '').startsWith('application/json')) return null;
    const ts = body.timestamp;
    return { input: body, timestamp_text: typeof ts === 'number' && Number.isSafeInteger(ts) ? String(ts) : null };
  }
  const query = isPlainObject(request.query) ? { ...request.query } : {};
  const raw = query.timestamp;
  let timestamp_text: string | null = null;
  // Up to 16 digits: a millisecond timestamp is read, so that it is answered as such.
  if (typeof raw === 'string' && /^[0-9]{1,16}$/.test(raw)) {
    timestamp_text = raw;
    query.timestamp = Number(raw);
  }
  return { input: query, timestamp_text };
}

export async function runHeaderSignedRoute(
  deps: HttpDeps,
  route: HeaderSignedRoute,
  request: FastifyRequest,
  response: FastifyReply,
): Promise<void> {
  const now_s = unixSeconds(deps.clock);
  let secret: string | null = null;
  const field_status = route.field_error_status ?? Status.INVALID_FIELD;
  const send = (answer: JsonReply) => {
    request.api_log = { status: answer.status, merchant_id: secret === null ? null : identified_merchant, trace_id: null, transaction_type: null, transaction_status: null };
    const timestamp = unixSeconds(deps.clock);
    if (secret !== null) void response.header('Gt-Authentication', answerHeaderSignature(answer.status, timestamp, secret));
    void response.code(answer.http_code ?? 200).type('application/json').send(answerJson(answer, V13_ANSWER_VERSION, timestamp));
  };
  const fieldProblem = (description: string): JsonReply => ({ status: field_status, description });
  let identified_merchant: string | null = null;
  const read = headerSignedInput(route, request);
  if (read === null) {
    send({ ...reply(Status.MALFORMED_BODY, 'Body must be a JSON object (Content-Type: application/json)'), http_code: 400 });
    return;
  }
  const { input, timestamp_text } = read;
  const keys = Object.keys(input);
  if (keys.length > deps.config.limits.body_max_fields) {
    send(fieldProblem(`Too many fields: at most ${deps.config.limits.body_max_fields} are accepted`));
    return;
  }
  const identified = MERCHANT_ID.parse(input.merchant_id === '' ? { ...input, merchant_id: undefined } : input);
  if (!identified.ok) {
    send(fieldProblem(identified.error.description));
    return;
  }
  const merchant_id = identified.value.merchant_id;
  identified_merchant = merchant_id;
  request.log.debug({ input }, 'header-signed request');
  try {
    const merchant = await deps.merchants.find(merchant_id);
    // Disabled: the same answer as an unknown merchant_id, without the answer header.
    if (!merchant || merchant.disabled) {
      send(unknownCredentials());
      return;
    }
    secret = merchant.secret;
    const limited = await merchantOverRate(deps, merchant.merchant_id, response);
    if (limited !== null) {
      send(limited);
      return;
    }
    const keyed = APPLICATION_KEY.parse(input.application_key === '' ? { ...input, application_key: undefined } : input);
    if (!keyed.ok) {
      send(fieldProblem(keyed.error.description));
      return;
    }
    const application_key = keyed.value.application_key;
    if (input.timestamp === undefined || input.timestamp === null) {
      send(fieldProblem('Missing required field: timestamp'));
      return;
    }
    if (timestamp_text === null) {
      send(fieldProblem('Invalid field: timestamp (expected unix time in seconds)'));
      return;
    }
    // The grace of a previous secret is checked now, on the gateway clock (as in runSignedRoute).
    const request_secret = matchingSecret(
      acceptedSecrets(merchant, deps.clock.now_ms()),
      (candidate) => requestHeaderSignature(merchant_id, application_key, timestamp_text, candidate),
      request.headers[GT_AUTHENTICATION],
    );
    if (request_secret === null) {
      send(reply(Status.INVALID_SIGNATURE, 'Invalid signature (Gt-Authentication header)'));
      return;
    }
    // The answer's header and Gt-Body-Signature use the secret the request used: a deployment
    // still on the previous one signs both with it.
    secret = request_secret;
    if (Number(timestamp_text) >= MILLISECOND_TIMESTAMP_FLOOR) {
      send(reply(Status.TIMESTAMP_EXPIRED, MILLISECONDS_DESCRIPTION));
      return;
    }
    if (Math.abs(now_s - Number(timestamp_text)) > deps.config.limits.request_window_seconds) {
      send(reply(Status.TIMESTAMP_EXPIRED, 'Timestamp expired'));
      return;
    }
    if (!merchant.applications.includes(application_key)) {
      send(unknownCredentials());
      return;
    }
    // The header covers neither the body nor the path: bind them when the merchant asked to, and
    // watch for the same header coming back with something else (docs/security.md §3).
    const signed_content = v13SignedContent(request);
    const body_header = request.headers[GT_BODY_SIGNATURE];
    const body_signed = body_header !== undefined && body_header !== '';
    const body_valid = body_signed && signaturesEqual(bodyHeaderSignature(signed_content, request_secret), body_header);
    const sighting = deps.header_reuse.observe(String(request.headers[GT_AUTHENTICATION]), signed_content, deps.wall_clock.now_ms());
    const refused = (body_signed || merchant.v13_body_signature_required) && !body_valid;
    if (sighting === 'other_body') {
      deps.metrics.v13_header_reuse.inc({ route: route.url, refused: String(refused) });
      request.log.warn({ merchant_id, route: route.url, refused }, 'Gt-Authentication header seen again with another body or path');
    }
    if (refused) {
      send(reply(Status.INVALID_SIGNATURE, body_signed
        ? 'Invalid signature (Gt-Body-Signature header)'
        : 'Invalid signature (Gt-Body-Signature header required for this merchant)'));
      return;
    }
    const parsed = route.input.parse(input);
    if (!parsed.ok) {
      send(fieldProblem(parsed.error.description));
      return;
    }
    const url_refused = refusedMerchantUrl(deps, input);
    if (url_refused !== null) {
      send(fieldProblem(url_refused));
      return;
    }
    const params = isPlainObject(request.params) ? (request.params as Record<string, string>) : {};
    // Path parameters (planId, subscriptionId) reach queries: the same text rules as any field.
    for (const [name, value] of Object.entries(params)) {
      const problem = textProblem(value);
      if (problem !== null) {
        send(fieldProblem(`Invalid field: ${name} (${describeTextProblem(problem)})`));
        return;
      }
    }
    send(await route.handle({ deps, merchant, secret: request_secret, application_key, params, request }, parsed.value));
  } catch (error) {
    request.log.error({ err: error, route: route.url }, 'request failed');
    send({ ...reply(Status.INTERNAL_ERROR, 'Internal error'), http_code: 500 });
  }
}
