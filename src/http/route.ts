// How a route is declared, and the pipeline every body-signed route runs through:
//   JSON object → field count → merchant_id known → flat values → signature (constant-time)
//   → 60-second window → fields against the route's schema → operation → signed answer.
// Route files declare; they never re-implement any of these steps.
import type { TSchema } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Merchant } from '../domain/merchants.js';
import { unixSeconds } from '../domain/clock.js';
import { verifyBody } from '../domain/signing.js';
import type { OperationDeps } from '../operations/deps.js';
import type { Identity } from '../operations/sale.js';
import { answerBody, fieldError, reply, type Reply, Status } from './envelope.js';
import type { Parsed } from './fields.js';

export interface SignedContext {
  readonly deps: OperationDeps;
  readonly merchant: Merchant;
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
  /** The version answered when the request's own version field is unusable. */
  readonly answer_version: string;
  readonly input: SignedInput<T>;
  readonly response: TSchema;
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
  handle(request: FastifyRequest, response: FastifyReply): Promise<unknown>;
}

export type RouteDef = SignedRoute<any> | PlainRoute; // eslint-disable-line @typescript-eslint/no-explicit-any

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

export const UNKNOWN_CREDENTIALS = 'Authentication failed: unknown merchant_id, application_key or frontend';

export function unknownCredentials(): Reply {
  return reply(Status.AUTHENTICATION_FAILED, UNKNOWN_CREDENTIALS);
}

export async function runSignedRoute(
  deps: OperationDeps,
  route: SignedRoute,
  request: FastifyRequest,
  response: FastifyReply,
): Promise<void> {
  const body = request.body;
  const now_s = unixSeconds(deps.clock);
  let secret: string | null = null;
  let version = route.answer_version;
  const send = (answer: Reply) => {
    response.code(answer.http_code ?? 200).type('application/json').send(answerBody(answer, version, unixSeconds(deps.clock), secret));
  };
  if (!isPlainObject(body)) {
    send({ ...reply(Status.MALFORMED_BODY, 'Body must be a JSON object'), http_code: 400 });
    return;
  }
  if (typeof body.version === 'string' && body.version.length > 0 && body.version.length <= 16) version = body.version;
  const keys = Object.keys(body);
  if (keys.length > deps.config.limits.body_max_fields) {
    send(fieldError(`Too many fields: at most ${deps.config.limits.body_max_fields} are accepted`));
    return;
  }
  const merchant_id = body.merchant_id;
  if (typeof merchant_id !== 'string' || merchant_id.length === 0 || merchant_id.length > 50) {
    send(fieldError(merchant_id === undefined || merchant_id === null ? 'Missing required field: merchant_id' : 'Invalid field: merchant_id (expected text of 1 to 50 characters)'));
    return;
  }
  // Card fields, signatures and tokens are redacted by the logger (logging.ts); the scan test checks it.
  request.log.debug({ body }, 'signed request');
  try {
    const merchant = await deps.merchants.find(merchant_id);
    if (!merchant) {
      send(unknownCredentials());
      return;
    }
    secret = merchant.secret;
    for (const key of keys) {
      const value = body[key];
      if (typeof value === 'object' && value !== null) {
        send(fieldError(`Invalid field: ${key} (nested objects and arrays are not allowed)`));
        return;
      }
    }
    if (!verifyBody(body, merchant.secret)) {
      send(reply(Status.INVALID_SIGNATURE, 'Invalid signature'));
      return;
    }
    const timestamp = body.timestamp;
    if (timestamp === undefined || timestamp === null) {
      send(fieldError('Missing required field: timestamp'));
      return;
    }
    if (typeof timestamp !== 'number' || !Number.isSafeInteger(timestamp)) {
      send(fieldError('Invalid field: timestamp (expected unix time in seconds)'));
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
    send(await route.handle({ deps, merchant, body, request }, parsed.value));
  } catch (error) {
    request.log.error({ err: error, route: route.url }, 'request failed');
    send({ ...reply(Status.INTERNAL_ERROR, 'Internal error'), http_code: 500 });
  }
}
