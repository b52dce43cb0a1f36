// Builds the Fastify app from explicit dependencies and a list of route declarations.
// Edge rules of decisions.md §5 live here: 64 KiB bodies (413), non-object JSON (400),
// unknown paths (404), wrong methods (405), internal failures (500, status -1).
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import { describeTextProblem, type TextProblem, textProblem } from '../domain/text.js';
import { notFoundPage } from '../pages/not-found.js';
import http from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { HttpDeps } from './deps.js';
import { storeHealth } from '../operations/health.js';
import { answerBody, reply, Status } from './envelope.js';
import { buildOpenApi } from './openapi.js';
import { registerReference } from './reference.js';
import { requireAdmin } from './admin-auth.js';
import type { ApiLog } from './route.js';
import type { RequestLogEntry } from '../operations/request-log.js';
import { redactUrl } from '../logging.js';
import type { PlainRoute, RouteDef } from './route.js';
import { runSignedRoute } from './signed-route.js';
import { runHeaderSignedRoute } from './header-signed-route.js';
import { attachLoadShedding } from './load-shedding.js';

const ALL_METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'] as const;
/** Node checks this often for requests over their time limits. */
const CONNECTIONS_CHECK_MS = 1_000;
/** An idle kept-alive connection is closed after this (shorter than common proxies' 60 s, so the gateway closes first). */
const KEEP_ALIVE_MS = 5_000;
/** A socket with no traffic at all for this long is closed. */
const IDLE_SOCKET_MS = 30_000;
/** Request line and headers together (Node's default); over it: 431. */
const HEADERS_MAX_BYTES = 16 * 1024;
/** A path parameter (an id, a token) longer than this is answered 414. */
const PATH_PARAMETER_MAX_CHARS = 200;
const FORM_MAX_BYTES = 8 * 1024;
/** A processor's webhook event: larger than a merchant's request may be (a payment's whole details), still bounded. */
const WEBHOOK_MAX_BYTES = 256 * 1024;
/** What a shed request's Retry-After says: the lag is read each second. */
const SHED_RETRY_AFTER_S = 1;

export function buildApp(deps: HttpDeps, routes: readonly RouteDef[], logger: Logger): FastifyInstance {
  const limits = deps.config.limits;
  const envelope = (status: number, description: string) =>
    answerBody(reply(status, description), '1.2', Math.floor(deps.clock.now_ms() / 1000), null);
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    bodyLimit: limits.body_max_bytes,
    // The time limits are given to the server as it is created: set afterwards (as Fastify's own
    // requestTimeout option does), Node never enforced them here, and a client sending a byte
    // every few seconds held its socket for ever.
    serverFactory: (handler) =>
      http
        .createServer(
          {
            requestTimeout: limits.request_timeout_ms,
            headersTimeout: limits.headers_timeout_ms,
            // How often Node looks for requests past those limits: they are enforced within a second.
            connectionsCheckingInterval: CONNECTIONS_CHECK_MS,
            keepAliveTimeout: KEEP_ALIVE_MS,
            maxHeaderSize: HEADERS_MAX_BYTES,
          },
          handler,
        )
        .setTimeout(IDLE_SOCKET_MS),
    return503OnClosing: true,
    // X-Forwarded-For only from the proxies the operator named (docs/production.md, TLS in front).
    trustProxy: deps.config.limits.trusted_proxies.length > 0 ? [...deps.config.limits.trusted_proxies] : false,
    // The onResponse hook below writes one line per request instead.
    logController: new LogController({ disableRequestLogging: true }),
    // Errors met before a request reaches a route still answer with the envelope.
    clientErrorHandler: (error, socket) => answerClientError(error as NodeJS.ErrnoException, socket, envelope, limits.request_timeout_ms),
    frameworkErrors: (error, _request, response) => {
      const too_long = error.code === 'FST_ERR_MAX_PARAM_LENGTH';
      void (response as FastifyReply)
        .code(too_long ? 414 : 400)
        .send(
          envelope(
            Status.MALFORMED_URL,
            too_long
              ? `URL too long: a path parameter is over ${PATH_PARAMETER_MAX_CHARS} characters`
              : 'Malformed URL: not valid percent-encoded UTF-8',
          ),
        );
    },
    routerOptions: { maxParamLength: PATH_PARAMETER_MAX_CHARS },
  });

  // JSON bodies are parsed by Fastify's own parser (prototype-poisoning checks included); the
  // text is kept as received for the v1.3 Gt-Body-Signature, which covers the exact bytes.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.decorateRequest('raw_json', null);
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    request.raw_json = body as string;
    parseJson(request, body as string, done);
  });

  // Per client address, before anything is read (docs/limits.md §3); the merchant's limit is in the pipelines (route.ts).
  deps.rate_limits.attach(app);
  app.addHook('onRequest', async (request, response) => {
    if (request.url === '/healthz' || request.url.startsWith('/metrics')) return;
    const refused = await deps.rate_limits.address(request);
    if (refused === null) return;
    deps.metrics.rate_limited.inc({ limit: 'address' });
    return response
      .code(429)
      .header('retry-after', String(refused.retry_after_s))
      .send(envelope(Status.TOO_MANY_REQUESTS, 'Too many requests'));
  });

  // Before anything else of an API request is done: refused at once while the event loop lags (load-shedding.ts).
  const shedding = attachLoadShedding(
    app,
    { max_event_loop_delay_ms: limits.shed_event_loop_delay_ms, retry_after_s: SHED_RETRY_AFTER_S },
    envelope,
    () => deps.metrics.requests_shed.inc(),
  );
  // Only when shedding is on: a gauge that always read 0 would look like an idle loop.
  if (shedding !== null) deps.metrics.watchEventLoop(() => shedding.event_loop_delay_ms());

  // One log line per request (Fastify's own two are off) and the request metrics: the route
  // pattern, never the raw URL, in metric labels; what the API answered when it was an API call.
  app.decorateRequest('api_log', null);
  app.decorateRequest('api_answer', null);
  // An API answer sent before its pipeline ran (404, 405, 413, a malformed body, a rate limit):
  // its JSON text, for the request log. The pipelines hand over their answer object themselves.
  app.addHook('onSend', (request, _response, payload, done) => {
    if (request.api_answer === null && typeof payload === 'string' && isApiPath(request.url)) request.api_answer = payload;
    done(null, payload);
  });
  app.addHook('onResponse', async (request, response) => {
    const route = request.routeOptions.url ?? 'unknown';
    const api = request.api_log;
    const duration_ms = response.elapsedTime;
    deps.metrics.http_requests.inc({
      route,
      method: request.method,
      http_status: String(response.statusCode),
      api_status: api === null ? '' : String(api.status),
    });
    deps.metrics.http_duration.observe({ route, method: request.method }, duration_ms / 1000);
    if (api?.transaction_type && api.transaction_status)
      deps.metrics.transactions.inc({ type: api.transaction_type, status: api.transaction_status });
    const line = {
      method: request.method,
      route,
      url: redactUrl(request.url),
      http_status: response.statusCode,
      duration_ms: Math.round(duration_ms * 10) / 10,
      ...(api === null ? {} : { merchant_id: api.merchant_id, status: api.status, trace_id: api.trace_id }),
    };
    // Probes and scrapes every few seconds would drown the rest.
    if (route === '/healthz' || route === '/metrics') request.log.debug(line, 'request');
    else request.log.info(line, 'request');
    // Masking the bodies is the entry's cost: none of it when the log is off.
    if (deps.request_log.enabled && isApiPath(request.url))
      deps.request_log.record(requestLogEntry(request, response.statusCode, duration_ms));
  });

  // HTML pages (the cashier, the connectors' challenge pages) post plain forms.
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: FORM_MAX_BYTES },
    (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    },
  );

  app.setErrorHandler((error: FastifyError, request, response) => {
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return response
        .code(413)
        .send(envelope(Status.BODY_TOO_LARGE, `Body too large: at most ${deps.config.limits.body_max_bytes} bytes of JSON`));
    }
    if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      return response.code(400).send(envelope(Status.MALFORMED_BODY, 'Content-Type must be application/json'));
    }
    if (error.statusCode === 400 || error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
      return response.code(400).send(envelope(Status.MALFORMED_BODY, 'Body must be a JSON object'));
    }
    request.log.error({ err: error }, 'unhandled error');
    return response.code(500).send(envelope(Status.INTERNAL_ERROR, 'Internal error'));
  });

  app.setNotFoundHandler((_request, response) => response.code(404).send(envelope(Status.UNKNOWN_PATH, 'Unknown path')));

  // Plain routes (operator API, pages, processors' callbacks) read their path and query
  // parameters and JSON bodies themselves: the text rules (domain/text.ts) are applied to all of
  // them here, once, before any reaches a query.
  const textGuard = (route: PlainRoute) => async (request: FastifyRequest, response: FastifyReply) => {
    // A page's form fields are checked by the page, which shows the customer which field is wrong.
    const json_body = route.raw_body !== true && route.produces === 'application/json';
    const found = findBadText({ params: request.params, query: request.query, body: json_body ? request.body : undefined });
    if (found === null) return;
    request.log.info({ route: route.url, field: found.field }, 'refused text in a request');
    if (route.produces === 'text/html') return response.code(404).type('text/html; charset=utf-8').send(notFoundPage());
    return response
      .code(400)
      .send({ status: Status.INVALID_FIELD, description: `Invalid field: ${found.field} (${describeTextProblem(found.problem)})` });
  };

  const methods_by_url = new Map<string, Set<string>>();
  const raw_routes = routes.filter((route) => route.kind === 'plain' && route.raw_body === true) as PlainRoute[];
  // Processors' webhooks: the exact bytes, whatever the content type, since their signature covers them.
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: WEBHOOK_MAX_BYTES }, (_request, body, done) => done(null, body));
    for (const route of raw_routes) {
      scope.route({
        method: route.method,
        url: route.url,
        preHandler: textGuard(route),
        handler: (request, response) => route.handle(request, response),
      });
    }
  });
  for (const route of routes) {
    methods_by_url.set(route.url, (methods_by_url.get(route.url) ?? new Set()).add(route.method));
    if (route.kind === 'plain' && route.raw_body === true) continue;
    app.route({
      method: route.method,
      url: route.url,
      ...(route.kind === 'plain' ? { preHandler: textGuard(route) } : {}),
      handler:
        route.kind === 'signed'
          ? (request, response) => runSignedRoute(deps, route, request, response)
          : route.kind === 'header-signed'
            ? (request, response) => runHeaderSignedRoute(deps, route, request, response)
            : (request, response) => route.handle(request, response),
    });
  }
  const openapi = buildOpenApi(routes, deps.config.public_url ?? '/');
  app.get('/openapi.json', async () => openapi);
  // The interactive reference over the same document (http/reference.ts).
  registerReference(app, openapi, routes, deps.config.environment);
  methods_by_url.set('/openapi.json', new Set(['GET']));
  app.get('/healthz', async (_request, response) => {
    const health = await storeHealth(deps);
    return health.ok ? { status: 'ok', store: health.dialect } : response.code(503).send({ status: 'unavailable', store: health.dialect });
  });
  methods_by_url.set('/healthz', new Set(['GET']));
  // Prometheus text format, to the operator's token only (decisions.md §15).
  app.get('/metrics', async (request, response) => {
    if (!requireAdmin(request, response, deps.config.admin_token)) return response;
    return response.type(deps.metrics.content_type).send(await deps.metrics.text());
  });
  methods_by_url.set('/metrics', new Set(['GET']));

  for (const [url, registered] of methods_by_url) {
    const others = ALL_METHODS.filter((m) => !registered.has(m) && !(m === 'GET' && registered.has('HEAD')));
    if (others.length > 0) {
      app.route({
        method: others,
        url,
        handler: async (_request, response) =>
          response
            .code(405)
            .header('allow', [...registered].join(', '))
            .send(envelope(Status.METHOD_NOT_ALLOWED, 'Method not allowed')),
      });
    }
  }
  return app;
}

/** The merchant API (body-signed and v1.3): the requests the request log keeps. */
function isApiPath(url: string): boolean {
  return url.startsWith('/api/');
}

/** What the request log keeps of an API request (operations/request-log.ts masks it before it is written). */
function requestLogEntry(request: FastifyRequest, http_code: number, latency_ms: number): RequestLogEntry {
  const api = request.api_log;
  const answer = request.api_answer;
  const fields = typeof answer === 'object' && answer !== null ? answer : null;
  const query = request.query;
  const has_query = typeof query === 'object' && query !== null && Object.keys(query).length > 0;
  return {
    merchant_id: api?.merchant_id ?? null,
    method: request.method,
    route: request.routeOptions.url ?? request.url.split('?')[0]!,
    path: request.url,
    operation: api?.transaction_type ?? null,
    http_code,
    api_status: api?.status ?? (typeof fields?.status === 'number' ? fields.status : null),
    description: typeof fields?.description === 'string' ? fields.description : null,
    trace_id: api?.trace_id ?? null,
    latency_ms,
    request_body: request.body ?? (has_query ? query : null),
    answer_body: answer,
    size_bytes: (request.raw_json?.length ?? 0) + 1024,
  };
}

/** Nesting walked at most when looking for bad text; operator bodies are flat or one level deep. */
const TEXT_SCAN_MAX_DEPTH = 8;

/** The first string (a value or a key) in the request's parameters or body that breaks the text rules, named by its path. */
export function findBadText(parts: Readonly<Record<string, unknown>>): { field: string; problem: TextProblem } | null {
  const walk = (value: unknown, field: string, depth: number): { field: string; problem: TextProblem } | null => {
    if (typeof value === 'string') {
      const problem = textProblem(value);
      return problem === null ? null : { field, problem };
    }
    if (typeof value !== 'object' || value === null || depth >= TEXT_SCAN_MAX_DEPTH) return null;
    for (const [key, item] of Object.entries(value)) {
      const name = Array.isArray(value) ? `${field}[${key}]` : key;
      const key_problem = Array.isArray(value) ? null : textProblem(key);
      if (key_problem !== null) return { field: 'a field name', problem: key_problem };
      const found = walk(item, name, depth + 1);
      if (found !== null) return found;
    }
    return null;
  };
  for (const value of Object.values(parts)) {
    const found = walk(value, '', 0);
    if (found !== null) return found;
  }
  return null;
}

/**
 * Answers what Node refuses before Fastify sees a request, with the envelope: 408 for a request
 * not received in time, 431 for headers over the limit, 400 for anything that does not parse as
 * HTTP. Then the connection is closed. Nothing is written once an answer has begun.
 */
function answerClientError(
  error: NodeJS.ErrnoException,
  socket: Duplex,
  envelope: (status: number, description: string) => object,
  request_timeout_ms: number,
): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [code, reason, status, description] =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [
          408,
          'Request Timeout',
          Status.REQUEST_TIMEOUT,
          `Request timeout: headers and body must arrive within ${Math.round(request_timeout_ms / 1000)} seconds`,
        ]
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? [
            431,
            'Request Header Fields Too Large',
            Status.HEADERS_TOO_LARGE,
            `Headers too large: at most ${HEADERS_MAX_BYTES} bytes with the request line`,
          ]
        : [400, 'Bad Request', Status.MALFORMED_BODY, 'Malformed HTTP request'];
  const answering = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && answering?.headersSent !== true) {
    const body = JSON.stringify(envelope(status, description));
    socket.write(
      `HTTP/1.1 ${code} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

declare module 'fastify' {
  interface FastifyRequest {
    /** A JSON body's text exactly as received; null for other bodies. */
    raw_json: string | null;
    /** What an API call answered, for its log line and metrics (http/signed-route.ts, header-signed-route.ts); null for other routes. */
    api_log: ApiLog | null;
    /** An API call's answer: the object its pipeline sent, or the JSON text of an edge answer; for the request log. */
    api_answer: Readonly<Record<string, unknown>> | string | null;
  }
}
