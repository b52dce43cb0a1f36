// Builds the Fastify app from explicit dependencies and a list of route declarations.
// Edge rules of decisions.md §5 live here: 64 KiB bodies (413), non-object JSON (400),
// unknown paths (404), wrong methods (405), internal failures (500, status -1).
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { OperationDeps } from '../operations/deps.js';
import { answerBody, reply, Status } from './envelope.js';
import { buildOpenApi } from './openapi.js';
import { type PlainRoute, type RouteDef, runHeaderSignedRoute, runSignedRoute } from './route.js';

const ALL_METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'] as const;
const FORM_MAX_BYTES = 8 * 1024;
/** A processor's webhook event: larger than a merchant's request may be (a payment's whole details), still bounded. */
const WEBHOOK_MAX_BYTES = 256 * 1024;

export function buildApp(deps: OperationDeps, routes: readonly RouteDef[], logger: Logger): FastifyInstance {
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    bodyLimit: deps.config.limits.body_max_bytes,
    // Connection and request time limits: a slow client cannot hold a socket forever.
    connectionTimeout: 30_000,
    requestTimeout: 30_000,
    keepAliveTimeout: 5_000,
    return503OnClosing: true,
    trustProxy: false,
  });

  const envelope = (status: number, description: string) => answerBody(reply(status, description), '1.2', Math.floor(deps.clock.now_ms() / 1000), null);

  // HTML pages (the cashier, the connectors' challenge pages) post plain forms.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_MAX_BYTES }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });

  app.setErrorHandler((error: FastifyError, request, response) => {
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return response.code(413).send(envelope(Status.BODY_TOO_LARGE, `Body too large: at most ${deps.config.limits.body_max_bytes} bytes of JSON`));
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

  const methods_by_url = new Map<string, Set<string>>();
  const raw_routes = routes.filter((route) => route.kind === 'plain' && route.raw_body === true) as PlainRoute[];
  // Processors' webhooks: the exact bytes, whatever the content type, since their signature covers them.
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: WEBHOOK_MAX_BYTES }, (_request, body, done) => done(null, body));
    for (const route of raw_routes) scope.route({ method: route.method, url: route.url, handler: (request, response) => route.handle(request, response) });
  });
  for (const route of routes) {
    methods_by_url.set(route.url, (methods_by_url.get(route.url) ?? new Set()).add(route.method));
    if (route.kind === 'plain' && route.raw_body === true) continue;
    app.route({
      method: route.method,
      url: route.url,
      handler: route.kind === 'signed'
        ? (request, response) => runSignedRoute(deps, route, request, response)
        : route.kind === 'header-signed'
          ? (request, response) => runHeaderSignedRoute(deps, route, request, response)
          : (request, response) => route.handle(request, response),
    });
  }
  const openapi = buildOpenApi(routes, deps.config.public_url ?? '/');
  app.get('/openapi.json', async () => openapi);
  methods_by_url.set('/openapi.json', new Set(['GET']));
  app.get('/healthz', async (_request, response) => {
    try {
      await deps.store.ping();
      return { status: 'ok', store: deps.store.dialect };
    } catch {
      return response.code(503).send({ status: 'unavailable', store: deps.store.dialect });
    }
  });
  methods_by_url.set('/healthz', new Set(['GET']));

  for (const [url, registered] of methods_by_url) {
    const others = ALL_METHODS.filter((m) => !registered.has(m) && !(m === 'GET' && registered.has('HEAD')));
    if (others.length > 0) {
      app.route({
        method: others,
        url,
        handler: async (_request, response) => response.code(405).header('allow', [...registered].join(', '))
          .send(envelope(Status.METHOD_NOT_ALLOWED, 'Method not allowed')),
      });
    }
  }
  return app;
}
