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
import { createHash } from 'node:crypto';
import cookie from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import session from '@fastify/session';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Viewer } from '../../domain/backoffice-access.js';
import type { Clock } from '../../domain/clock.js';
import { recordAudit } from '../../operations/audit.js';
import { activeUser } from '../../operations/backoffice-users.js';
import type { OperationDeps } from '../../operations/deps.js';
import type { HttpDeps } from '../deps.js';
import type { Store } from '../../store/store.js';
import { html, type Html } from '../../pages/html.js';
import { findBadText } from '../app.js';
import { textProblem } from '../../domain/text.js';
import { backOfficePage, bareBackOfficePage } from '../../pages/backoffice/layout.js';

export const BACKOFFICE_PREFIX = '/backoffice';
/** A session lasts this long from sign-in, whatever happens in it; then its person signs in again. */
export const SESSION_MS = 8 * 3600_000;
/**
 * A session's last use is written at most this often (a tenth of the idle time-out when that is
 * shorter), not at every request: a page is several requests, and writing each would turn every
 * back-office read into a database write (SQLite has one writer). The row then lags the real
 * last use by less than this, so a session ends after at least the time-out less this without a
 * request, and never later than the time-out: the error is on the side that signs out early.
 */
const LAST_SEEN_WRITE_EVERY_MS = 60_000;
const SESSION_COOKIE = 'paygate_bo_session';
/** The longest text a form field is read as (a URL, a setting); longer reads as empty. */
const FORM_TEXT_MAX_CHARS = 2048;
const CSRF_COOKIE = 'paygate_bo_csrf';
/** Expired sessions removed per sign-in, so the table never grows past the live ones by much. */
const EXPIRED_SESSIONS_SWEEP = 100;

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
 * @fastify/session's store over the database. Sessions are kept by the sha256 of their id, so a
 * copy of the table opens no session; only signed-in sessions are saved (saveUninitialized off).
 * Times are the gateway clock's, like every other expiry (the sandbox clock moves them in tests).
 */
class DatabaseSessionStore {
  constructor(private readonly store: Store, private readonly clock: Clock) {}

  set(session_id: string, data: { user_id?: string; signed_in_at_ms?: number; last_seen_at_ms?: number }, callback: (error?: unknown) => void): void {
    if (typeof data.user_id !== 'string') {
      callback();
      return;
    }
    const now_ms = this.clock.now_ms();
    // The row's own column holds the last use; a copy in data_json would only go stale.
    const { last_seen_at_ms: _last_seen_at_ms, ...kept } = data;
    const expires_at_ms = (data.signed_in_at_ms ?? now_ms) + SESSION_MS;
    this.store.backoffice.saveSession(hashOf(session_id), data.user_id, JSON.stringify(kept), expires_at_ms, now_ms)
      .then(() => callback(), callback);
  }

  get(session_id: string, callback: (error: unknown, session?: unknown) => void): void {
    this.store.backoffice.getSession(hashOf(session_id), this.clock.now_ms()).then(
      (row) => callback(null, row === null ? null : { ...JSON.parse(row.data_json), last_seen_at_ms: row.last_seen_at_ms }),
      (error: unknown) => callback(error),
    );
  }

  destroy(session_id: string, callback: (error?: unknown) => void): void {
    this.store.backoffice.deleteSession(hashOf(session_id)).then(() => callback(), callback);
  }
}

function hashOf(session_id: string): string {
  return createHash('sha256').update(session_id).digest('hex');
}

/** The idle time-out in whole minutes, as the setting gives it and people read it. */
export function idleTimeoutMinutes(deps: OperationDeps): number {
  return deps.config.limits.backoffice_idle_timeout_ms / 60_000;
}

/**
 * The idle time-out (PCI DSS 8.2.8): a signed-in session last seen longer ago than
 * PAYGATE_BACKOFFICE_IDLE_TIMEOUT_MINUTES is deleted, its end goes to the audit log, and this
 * request carries on with a fresh, empty session. A session still in use gets its last use
 * written when the row's is LAST_SEEN_WRITE_EVERY_MS old. Both live in the row, so whichever
 * instance sees the session next applies them. True when this request ended its session.
 */
async function endIfIdle(deps: OperationDeps, request: FastifyRequest): Promise<boolean> {
  const user_id = request.session.get('user_id');
  const last_seen_at_ms = request.session.get('last_seen_at_ms');
  if (typeof user_id !== 'string' || typeof last_seen_at_ms !== 'number') return false;
  const now_ms = deps.clock.now_ms();
  const idle_timeout_ms = deps.config.limits.backoffice_idle_timeout_ms;
  const idle_since_ms = now_ms - idle_timeout_ms;
  const session_hash = hashOf(request.session.sessionId);
  if (last_seen_at_ms >= idle_since_ms) {
    // Nothing is written to a session another request has just ended; this request then goes on
    // like one that started just before a sign-out, so the answer is not looked at.
    if (now_ms - last_seen_at_ms >= Math.min(LAST_SEEN_WRITE_EVERY_MS, idle_timeout_ms / 10)) {
      await deps.store.backoffice.touchSession(session_hash, now_ms, idle_since_ms);
    }
    return false;
  }
  // Only the request that deleted the row records the end: two instances seeing it at once write one line.
  if (await deps.store.backoffice.endIdleSession(session_hash, idle_since_ms)) {
    const user = await activeUser(deps.store, user_id);
    if (user !== null) {
      await recordAudit(deps, user, request.ip, {
        action: 'sign_out', outcome: 'done', detail: `after ${idleTimeoutMinutes(deps)} minutes without activity`,
      });
    }
  }
  // A new, empty session for the rest of this request; never saved (not signed in), and its cookie is cleared.
  await request.session.regenerate();
  return true;
}

/** What every back-office answer carries: never cached, never framed, nothing loaded from elsewhere. */
function securityHeaders(response: FastifyReply): void {
  void response.header('cache-control', 'no-store')
    .header('x-frame-options', 'DENY')
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'same-origin')
    .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'");
}

export function notFoundBody(what: string | undefined): Html {
  return html`<div class="card"><h1>Not found</h1><p>There is nothing here${what === undefined ? '' : html` for ${what}`}.</p>
<p><a href="/backoffice/transactions">Search transactions</a></p></div>`;
}

export function registerBackOffice(
  app: FastifyInstance, deps: HttpDeps, routes: readonly BackOfficeRoute[], public_routes: readonly PublicRoute[],
): void {
  void app.register(async (scope) => {
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
      store: new DatabaseSessionStore(deps.store, deps.clock) as never,
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
      return typeof user_id === 'string' ? activeUser(deps.store, user_id) : null;
    };
    const toSignIn = (response: FastifyReply) => response.code(303).header('location', `${BACKOFFICE_PREFIX}/`).send();
    const contextOf = (request: FastifyRequest, response: FastifyReply, viewer: Viewer): PageContext => {
      const csrf_token = response.generateCsrf();
      const send = (body: string, http_status: number) => response.code(http_status).type('text/html; charset=utf-8').send(body);
      return {
        deps, request, response, viewer, csrf: csrf_token, address: request.ip,
        page: (title, current, body, http_status = 200) => send(backOfficePage(title, { viewer, csrf: csrf_token, current }, body), http_status),
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
        return response.code(403).type('text/html; charset=utf-8').send(bareBackOfficePage('Form expired', html`<div class="card signin">
<h1>This form has expired</h1><p>It was not sent from this back office's current page. Go back, reload the page and try again.</p>
<p><a href="/backoffice/">Back office</a></p></div>`));
      }
      if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || error.statusCode === 400 || error.statusCode === 413 || error.statusCode === 415) {
        return response.code(error.statusCode ?? 400).type('text/html; charset=utf-8').send(bareBackOfficePage('Not accepted', html`<div class="card signin">
<h1>Form not accepted</h1><p>The form was too large or not a form. Go back and try again.</p></div>`));
      }
      request.log.error({ err: error }, 'back-office page failed');
      return response.code(500).type('text/html; charset=utf-8').send(bareBackOfficePage('Error', html`<div class="card signin">
<h1>Something went wrong</h1><p>Nothing was changed by this page's failure; try again in a moment.</p></div>`));
    });

    // Unknown back-office URLs: sign-in first, then the page that does not exist.
    scope.setNotFoundHandler(async (request, response) => {
      const viewer = await viewerOf(request);
      if (viewer === null) return toSignIn(response);
      return contextOf(request, response, viewer).notFound();
    });

    for (const route of public_routes) {
      scope.route({
        method: route.method, url: route.url,
        ...(route.method === 'POST' ? { preHandler: scope.csrfProtection } : {}),
        handler: (request, response) => route.handle(deps, request, response),
      });
    }
    for (const route of routes) {
      scope.route({
        method: route.method, url: route.url,
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
  }, { prefix: BACKOFFICE_PREFIX });
}

/** Starts a signed-in session for `user_id` under a new session id (no fixation), and sweeps a few expired ones. */
export async function beginSession(deps: OperationDeps, request: FastifyRequest, user_id: string): Promise<void> {
  const now_ms = deps.clock.now_ms();
  await request.session.regenerate();
  request.session.set('user_id', user_id);
  request.session.set('signed_in_at_ms', now_ms);
  await deps.store.backoffice.deleteExpiredSessions(now_ms, EXPIRED_SESSIONS_SWEEP);
}
