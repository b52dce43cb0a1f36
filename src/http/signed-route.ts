// The pipeline every body-signed route runs through (its declaration: route.ts):
//   JSON object → merchant_id known → field count → flat values → signature (constant-time)
//   → 60-second window → fields against the route's schema → operation → signed answer.
// Every answer from the known merchant on is signed: with the secret the request was signed with
// once the signature is checked (the current one, or the previous one during a roll's grace), with
// the current one before that. Its version is the request's own only when the route takes that
// version (versionsOf), else the route's answer_version. A disabled merchant is answered exactly
// as an unknown one (docs/security.md §5).
// Route files declare; they never re-implement any of these steps. The merchant's rate and the
// check of its URLs are shared with header-signed-route.ts.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { acceptedSecrets } from '../domain/merchants.js';
import { unixSeconds } from '../domain/clock.js';
import { bodySecret } from '../domain/signing.js';
import { isTransactionType } from '../domain/transaction-state.js';
import type { OperationDeps } from '../operations/deps.js';
import type { HttpDeps } from './deps.js';
import { answerBody, fieldError, reply, type Reply, Status } from './envelope.js';
import { bodySchema, type FieldError } from './fields.js';
import { fieldProblemsReply, type ProblemsLimits } from './field-problems.js';
import { invalidSignatureHelp, MILLISECOND_TIMESTAMP_FLOOR } from '../domain/signature-help.js';
import { urlHostNotPublic } from '../outbound/addresses.js';
import { type ApiLog, isPlainObject, MILLISECONDS_DESCRIPTION, type SignedRoute, unknownCredentials, versionsOf } from './route.js';

/** The fields read before the rest of a body is checked, by the dictionary's own rules. */
export const MERCHANT_ID = bodySchema({ merchant_id: 'required' });
export const APPLICATION_KEY = bodySchema({ application_key: 'required' });

/** The merchant's rate (docs/limits.md §3): the 429 answer to send, its Retry-After set, or null when within it. */
export async function merchantOverRate(deps: HttpDeps, merchant_id: string, response: FastifyReply): Promise<Reply | null> {
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
export function refusedMerchantUrl(deps: OperationDeps, input: Readonly<Record<string, unknown>>): string | null {
  if (deps.config.environment !== 'live' || deps.config.limits.allow_private_urls) return null;
  for (const name of MERCHANT_URL_FIELDS) {
    const value = input[name];
    if (typeof value === 'string' && urlHostNotPublic(value)) return `Invalid field: ${name} (a loopback, private or link-local address)`;
  }
  return null;
}

/**
 * The limits a route's field problems are worded within: init-* and find-order (the routes with a
 * description_max) have 75 characters and, by the spec, no error_details in a failure.
 */
function problemLimitsOf(route: SignedRoute): ProblemsLimits {
  return route.description_max === undefined ? {} : { description_max: route.description_max, error_details: false };
}

/**
 * The body's problems with `problem` among them, worded as given: in the schema's order when the
 * schema names its field too, else first.
 */
function withProblem(parsed: ReturnType<SignedRoute['input']['parse']>, problem: FieldError): readonly FieldError[] {
  if (parsed.ok || 'reply' in parsed) return [problem];
  if (!parsed.errors.some((other) => other.field === problem.field)) return [problem, ...parsed.errors];
  return parsed.errors.map((other) => (other.field === problem.field ? problem : other));
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
    transaction_type: typeof type === 'string' && isTransactionType(type) ? type : null,
    transaction_status: typeof fields.transaction_status === 'string' ? fields.transaction_status : null,
  };
}

export async function runSignedRoute(deps: HttpDeps, route: SignedRoute, request: FastifyRequest, response: FastifyReply): Promise<void> {
  const body = request.body;
  const now_s = unixSeconds(deps.clock);
  let secret: string | null = null;
  let version = route.answer_version;
  const send = (answer: Reply) => {
    request.api_log = apiLogOf(answer, secret === null ? null : (body as Record<string, unknown>));
    const answer_body = answerBody(answer, version, unixSeconds(deps.clock), secret);
    // Kept for the request log (http/app.ts), which masks it off the request's path.
    request.api_answer = answer_body;
    response
      .code(answer.http_code ?? 200)
      .type('application/json')
      .send(answer_body);
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
      if (deps.config.environment !== 'sandbox') {
        send(reply(Status.INVALID_SIGNATURE, 'Invalid signature'));
        return;
      }
      const help = invalidSignatureHelp(body, merchant.secret, problemLimitsOf(route));
      send(
        reply(Status.INVALID_SIGNATURE, help.description, help.error_details === null ? undefined : { error_details: help.error_details }),
      );
      return;
    }
    // Answered with the secret the request used: during a grace the merchant's old deployment
    // checks its answers with the old one.
    secret = request_secret;
    const timestamp = body.timestamp;
    const problem_limits = problemLimitsOf(route);
    if (typeof timestamp !== 'number' || !Number.isSafeInteger(timestamp)) {
      // Named with the body's other problems: the window cannot be judged, the fields can.
      const problem =
        timestamp === undefined || timestamp === null
          ? 'Missing required field: timestamp'
          : 'Invalid field: timestamp (expected unix time in seconds)';
      send(fieldProblemsReply(withProblem(route.input.parse(body), { field: 'timestamp', description: problem }), problem_limits));
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
      send('reply' in parsed ? parsed.reply : fieldProblemsReply(parsed.errors, problem_limits));
      return;
    }
    const url_refused = refusedMerchantUrl(deps, body);
    if (url_refused !== null) {
      send(fieldError(url_refused));
      return;
    }
    const answer = await route.handle({ deps, merchant, secret: request_secret, body, request }, parsed.value);
    // An answer read from the store (a replay, a status) may rest on another request's commit
    // whose fsync has not ended yet (Store.durable): it leaves once that commit is on disk.
    if (answer.from_own_commit !== true) await deps.answers_durable();
    send(answer);
  } catch (error) {
    request.log.error({ err: error, route: route.url }, 'request failed');
    send({ ...reply(Status.INTERNAL_ERROR, 'Internal error'), http_code: 500 });
  }
}
