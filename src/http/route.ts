// How a route is declared (SignedRoute, PlainRoute, HeaderSignedRoute: one list drives Fastify's
// registration, the 405 handlers and /openapi.json), what every pipeline shares (the merchant's
// identity, the versions a route answers with, the log line of an answer) and the v1.3 headers'
// signatures. The pipelines themselves: signed-route.ts (body-signed routes, decisions.md §1) and
// header-signed-route.ts (the v1.3 subscription API, decisions.md §2).
// Route files declare; they never re-implement any step of a pipeline.
import type { TSchema } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Merchant } from '../domain/merchants.js';
import { signHeader } from '../domain/signing.js';
import type { OperationDeps } from '../operations/deps.js';
import type { Identity } from '../operations/sale.js';
import { type JsonReply, reply, type Reply, Status } from './envelope.js';
import type { Parsed } from './fields.js';

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
  /**
   * The answer's description limit when the spec gives one shorter than 256 (init-* and find-order:
   * 75); their failures carry only the envelope, so no error_details either (http/field-problems.ts).
   */
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

/** What an API answer says about itself, for the request's log line and the metrics (http/app.ts). */
export interface ApiLog {
  readonly status: number;
  /** The merchant, once identified (its secret known). */
  readonly merchant_id: string | null;
  readonly trace_id: number | null;
  readonly transaction_type: string | null;
  readonly transaction_status: string | null;
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
