// The back office under /backoffice/ (issue 15, decisions.md §14, docs/backoffice.md): one Fastify
// scope with its own cookie, session and CSRF plugins, so that none of them touches the API.
//   request → address rate limit (app.ts) → session (@fastify/session, rows in the store, so any
//   instance serves any session) → idle time-out (a session unused for
//   PAYGATE_BACKOFFICE_IDLE_TIMEOUT_MINUTES ends here) → CSRF check on every POST
//   (@fastify/csrf-protection, a signed HttpOnly cookie) → signed-in user read afresh (a disabled
//   user is out at once) → the page.
// A visitor without a session is sent (303) to the sign-in page from every page but sign-in; a
// page a role may not see, and a record of another merchant, answer exactly like a page that
// does not exist (404, the same text).
import cookie from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import session from '@fastify/session';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Viewer } from '../../domain/backoffice-access.js';
import {
  deleteSession,
  endSessionIfIdle,
  getSession,
  saveSession,
  SESSION_MS,
  type SessionData,
  sessionViewer,
  sweepExpiredSessions,
} from '../../operations/backoffice-sessions.js';
import type { OperationDeps } from '../../operations/deps.js';
import type { HttpDeps } from '../deps.js';
import type { Html } from '../../pages/html.js';
import { findBadText } from '../app.js';
import { textProblem } from '../../domain/text.js';
import { failedBody, formExpiredBody, formNotAcceptedBody, notFoundBody } from '../../pages/backoffice/errors.js';
import { backOfficePage, bareBackOfficePage } from '../../pages/backoffice/layout.js';
import type { PageParts } from '../../pages/backoffice/records.js';

export const BACKOFFICE_PREFIX = '/backoffice';
const SESSION_COOKIE = 'paygate_bo_session';
/** The longest text a form field is read as (a URL, a setting); longer reads as empty. */
const FORM_TEXT_MAX_CHARS = 2048;
const CSRF_COOKIE = 'paygate_bo_csrf';

declare module 'fastify' {
  interface Session {
    user_id?: string;
    /** When its person signed in (gateway clock): the session ends SESSION_MS after. */
    signed_in_at_ms?: number;
    /** Read from the row with the session (its last use, gateway clock); never saved in data_json. */
    last_seen_at_ms?: number;
  }
}

export interface PageContext {
  readonly deps: OperationDeps;
  readonly request: FastifyRequest;
  readonly response: FastifyReply;
  readonly viewer: Viewer;
  /** The token for the forms of the page being answered. */
  readonly csrf: string;
  /** The client's address, as the audit log records it. */
  readonly address: string;
  /** Sends a page in the shell; `current` marks the navigation entry. */
  page(title: string, current: string, body: Html, http_status?: number): FastifyReply;
  /** The page that does not exist; `what` names what was asked for (the only part that differs). */
  notFound(what?: string): FastifyReply;
  /** 303 to a back-office path (after a form that changed something). */
  redirect(path: string): FastifyReply;
}

/** Who the page is for, its forms' token and the notice it was redirected with: what every page body takes. */
export function partsOf(context: PageContext): PageParts {
  return { viewer: context.viewer, csrf: context.csrf, notice: (context.request.query as Record<string, unknown>).notice };
}

/** A form field exactly as sent (a password); '' when absent. */
export function formValue(request: FastifyRequest, name: string): string {
  const body = request.body as Record<string, unknown> | undefined;
  const value = body?.[name];
  return typeof value === 'string' ? value : '';
}

/** A form field's text, trimmed; '' when absent, over FORM_TEXT_MAX_CHARS or breaking the text rules (the form's own check then names it). */
export function formText(request: FastifyRequest, name: string): string {
  const value = formValue(request, name);
  return value.length <= FORM_TEXT_MAX_CHARS && textProblem(value) === null ? value.trim() : '';
}

export interface BackOfficeRoute {
  readonly method: 'GET' | 'POST';
  /** Under BACKOFFICE_PREFIX. */
  readonly url: string;
  /** Who may reach it; anyone else gets the page that does not exist. */
  readonly roles: readonly Viewer['role'][];
  handle(context: PageContext): Promise<unknown>;
}

export interface PublicRoute {
  readonly method: 'GET' | 'POST';
  readonly url: string;
  handle(deps: HttpDeps, request: FastifyRequest, response: FastifyReply): Promise<unknown>;
}

/**
 * @fastify/session's store over the database (operations/backoffice-sessions.ts): only signed-in
 * sessions are saved (saveUninitialized off).
 */
class DatabaseSessionStore {
  constructor(private readonly deps: OperationDeps) {}

  set(session_id: string, data: SessionData, callback: (error?: unknown) => void): void {
    saveSession(this.deps, session_id, data).then(() => callback(), callback);
  }

  get(session_id: string, callback: (error: unknown, session?: unknown) => void): void {
    getSession(this.deps, session_id).then(
      (session) => callback(null, session),
      (error: unknown) => callback(error),
    );
  }

  destroy(session_id: string, callback: (error?: unknown) => void): void {
    deleteSession(this.deps, session_id).then(() => callback(), callback);
  }
}

/**
 * The idle time-out (PCI DSS 8.2.8, operations/backoffice-sessions.ts): a signed-in session
 * unused for PAYGATE_BACKOFFICE_IDLE_TIMEOUT_MINUTES ends, and this request carries on with a
 * fresh, empty session. True when this request ended its session.
 */
async function endIfIdle(deps: OperationDeps, request: FastifyRequest): Promise<boolean> {
  const user_id = request.session.get('user_id');
  const last_seen_at_ms = request.session.get('last_seen_at_ms');
  if (typeof user_id !== 'string' || typeof last_seen_at_ms !== 'number') return false;
  if (!(await endSessionIfIdle(deps, request.session.sessionId, user_id, last_seen_at_ms, request.ip))) return false;
  // A new, empty session for the rest of this request; never saved (not signed in), and its cookie is cleared.
  await request.session.regenerate();
  return true;
}

/** What every back-office answer carries: never cached, never framed, nothing loaded from elsewhere. */
function securityHeaders(response: FastifyReply): void {
  void response
    .header('cache-control', 'no-store')
    .header('x-frame-options', 'DENY')
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'same-origin')
    .header(
      'content-security-policy',
      "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
}

export function registerBackOffice(
  app: FastifyInstance,
  deps: HttpDeps,
  routes: readonly BackOfficeRoute[],
  public_routes: readonly PublicRoute[],
): void {
  void app.register(
    async (scope) => {
      // One key for every instance sharing the master key; never the key itself.
      const secret = deps.sealer.fingerprint('cookies', 'backoffice');
      const secure = (deps.config.public_url ?? '').startsWith('https://');
      await scope.register(cookie, { secret });
      await scope.register(session, {
        secret,
        cookieName: SESSION_COOKIE,
        cookie: { path: BACKOFFICE_PREFIX, httpOnly: true, sameSite: 'lax', secure, maxAge: SESSION_MS },
        saveUninitialized: false,
        rolling: false,
        store: new DatabaseSessionStore(deps) as never,
      });
      await scope.register(csrf, {
        sessionPlugin: '@fastify/cookie',
        cookieKey: CSRF_COOKIE,
        cookieOpts: { path: BACKOFFICE_PREFIX, httpOnly: true, sameSite: 'strict', secure, signed: true },
        getToken: (request) => {
          const body = request.body as Record<string, unknown> | undefined;
          return typeof body?._csrf === 'string' ? body._csrf : undefined;
        },
      });
      scope.addHook('onRequest', async (_request, response) => securityHeaders(response));
      // After the session is read and before anything else: an idle session never reaches a page or
      // a form. Signing in again goes ahead; every other request is sent to sign-in, told why.
      scope.addHook('onRequest', async (request, response) => {
        if (!(await endIfIdle(deps, request))) return;
        if (request.method === 'POST' && request.routeOptions.url === `${BACKOFFICE_PREFIX}/sign-in`) return;
        return response.code(303).header('location', `${BACKOFFICE_PREFIX}/?notice=idle`).send();
      });

      const viewerOf = async (request: FastifyRequest): Promise<Viewer | null> => {
        const user_id = request.session.get('user_id');
        return typeof user_id === 'string' ? sessionViewer(deps, user_id) : null;
      };
      const toSignIn = (response: FastifyReply) => response.code(303).header('location', `${BACKOFFICE_PREFIX}/`).send();
      const contextOf = (request: FastifyRequest, response: FastifyReply, viewer: Viewer): PageContext => {
        const csrf_token = response.generateCsrf();
        const send = (body: string, http_status: number) => response.code(http_status).type('text/html; charset=utf-8').send(body);
        return {
          deps,
          request,
          response,
          viewer,
          csrf: csrf_token,
          address: request.ip,
          page: (title, current, body, http_status = 200) =>
            send(backOfficePage(title, { viewer, csrf: csrf_token, current }, body), http_status),
          notFound: (what) => send(backOfficePage('Not found', { viewer, csrf: csrf_token, current: '' }, notFoundBody(what)), 404),
          redirect: (path) => response.code(303).header('location', path).send(),
        };
      };

      // Path parameters are checked by the text rules before any reaches a query (a NUL would make
      // PostgreSQL fail): a bad one answers like a page that does not exist. Query strings and form
      // fields are checked by each page, which names the field to the person who typed it.
      scope.addHook('preValidation', async (request, response) => {
        if (findBadText({ params: request.params }) === null) return;
        const viewer = await viewerOf(request);
        if (viewer === null) return toSignIn(response);
        return contextOf(request, response, viewer).notFound();
      });

      scope.setErrorHandler(async (error: FastifyError, request, response) => {
        securityHeaders(response);
        if (error.statusCode === 403 && typeof error.code === 'string' && error.code.startsWith('FST_CSRF')) {
          request.log.info({ url: request.url }, 'back-office form refused: no valid CSRF token');
          return response.code(403).type('text/html; charset=utf-8').send(bareBackOfficePage('Form expired', formExpiredBody()));
        }
        if (
          error.code === 'FST_ERR_CTP_BODY_TOO_LARGE' ||
          error.statusCode === 400 ||
          error.statusCode === 413 ||
          error.statusCode === 415
        ) {
          return response
            .code(error.statusCode ?? 400)
            .type('text/html; charset=utf-8')
            .send(bareBackOfficePage('Not accepted', formNotAcceptedBody()));
        }
        request.log.error({ err: error }, 'back-office page failed');
        return response.code(500).type('text/html; charset=utf-8').send(bareBackOfficePage('Error', failedBody()));
      });

      // Unknown back-office URLs: sign-in first, then the page that does not exist.
      scope.setNotFoundHandler(async (request, response) => {
        const viewer = await viewerOf(request);
        if (viewer === null) return toSignIn(response);
        return contextOf(request, response, viewer).notFound();
      });

      for (const route of public_routes) {
        scope.route({
          method: route.method,
          url: route.url,
          ...(route.method === 'POST' ? { preHandler: scope.csrfProtection } : {}),
          handler: (request, response) => route.handle(deps, request, response),
        });
      }
      for (const route of routes) {
        scope.route({
          method: route.method,
          url: route.url,
          ...(route.method === 'POST' ? { preHandler: scope.csrfProtection } : {}),
          handler: async (request, response) => {
            const viewer = await viewerOf(request);
            if (viewer === null) {
              // A session whose user was disabled (or removed) ends here.
              if (request.session.get('user_id') !== undefined) await request.session.destroy();
              return toSignIn(response);
            }
            const context = contextOf(request, response, viewer);
            if (!route.roles.includes(viewer.role)) return context.notFound();
            return route.handle(context);
          },
        });
      }
    },
    { prefix: BACKOFFICE_PREFIX },
  );
}

/** Starts a signed-in session for `user_id` under a new session id (no fixation), and sweeps a few expired ones. */
export async function beginSession(deps: OperationDeps, request: FastifyRequest, user_id: string): Promise<void> {
  await request.session.regenerate();
  request.session.set('user_id', user_id);
  request.session.set('signed_in_at_ms', deps.clock.now_ms());
  await sweepExpiredSessions(deps);
}
