// The pipeline of the v1.3 subscription API's header-signed routes (decisions.md §2; their
// declaration and the headers' signatures: route.ts):
//   input (the JSON body; the query string for GET) → field count → merchant_id known
//   → application_key and timestamp present → Gt-Authentication (constant-time) → 60-second
//   window → application_key is the merchant's → fields against the route's schema
//   → operation → answer with its header.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { acceptedSecrets } from '../domain/merchants.js';
import { unixSeconds } from '../domain/clock.js';
import { matchingSecret, signaturesEqual } from '../domain/signing.js';
import type { HttpDeps } from './deps.js';
import { answerJson, type JsonReply, reply, Status } from './envelope.js';
import { fieldProblemsReply } from './field-problems.js';
import { describeTextProblem, textProblem } from '../domain/text.js';
import { MILLISECOND_TIMESTAMP_FLOOR } from '../domain/signature-help.js';
import {
  answerHeaderSignature,
  bodyHeaderSignature,
  GT_AUTHENTICATION,
  GT_BODY_SIGNATURE,
  type HeaderSignedRoute,
  isPlainObject,
  MILLISECONDS_DESCRIPTION,
  requestHeaderSignature,
  unknownCredentials,
  V13_ANSWER_VERSION,
  v13SignedContent,
} from './route.js';
import { APPLICATION_KEY, MERCHANT_ID, merchantOverRate, refusedMerchantUrl } from './signed-route.js';

/** The request's fields: the JSON body, or for GET the query string with its whole numbers read as numbers. */
function headerSignedInput(
  route: HeaderSignedRoute,
  request: FastifyRequest,
): { input: Record<string, unknown>; timestamp_text: string | null } | null {
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
    request.api_log = {
      status: answer.status,
      merchant_id: secret === null ? null : identified_merchant,
      trace_id: null,
      transaction_type: null,
      transaction_status: null,
    };
    const timestamp = unixSeconds(deps.clock);
    if (secret !== null) void response.header('Gt-Authentication', answerHeaderSignature(answer.status, timestamp, secret));
    const answer_body = answerJson(answer, V13_ANSWER_VERSION, timestamp);
    // Kept for the request log (http/app.ts), which masks it off the request's path.
    request.api_answer = answer_body;
    void response
      .code(answer.http_code ?? 200)
      .type('application/json')
      .send(answer_body);
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
      send(
        reply(
          Status.INVALID_SIGNATURE,
          body_signed
            ? 'Invalid signature (Gt-Body-Signature header)'
            : 'Invalid signature (Gt-Body-Signature header required for this merchant)',
        ),
      );
      return;
    }
    const parsed = route.input.parse(input);
    if (!parsed.ok) {
      send(fieldProblemsReply(parsed.errors, {}, field_status));
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
    const answer = await route.handle({ deps, merchant, secret: request_secret, application_key, params, request }, parsed.value);
    // An answer read from the store (a replay, a status) may rest on another request's commit
    // whose fsync has not ended yet (Store.durable): it leaves once that commit is on disk.
    await deps.answers_durable();
    send(answer);
  } catch (error) {
    request.log.error({ err: error, route: route.url }, 'request failed');
    send({ ...reply(Status.INTERNAL_ERROR, 'Internal error'), http_code: 500 });
  }
}
