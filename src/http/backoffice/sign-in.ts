// Signing in and out of the back office (decisions.md §14): a form with an e-mail and a password
// that works without JavaScript, carrying a CSRF token (a forged sign-in is refused too). Wrong
// e-mail, wrong password and a disabled user get one answer; the lock-out after repeated failures
// answers 429 with Retry-After. Every attempt goes to the audit log. A session that ended idle
// (plugin.ts) is sent here with ?notice=idle, so its person reads why they must sign in again.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { idleTimeoutMinutes, sessionViewer, signInToBackOffice, signOutOfBackOffice } from '../../operations/backoffice-sessions.js';
import type { OperationDeps } from '../../operations/deps.js';
import type { HttpDeps } from '../deps.js';
import { signedOutNotice, signInPage } from '../../pages/backoffice/sign-in.js';
import { beginSession, formValue, type PublicRoute } from './plugin.js';

function noticeOf(deps: OperationDeps, request: FastifyRequest) {
  return signedOutNotice((request.query as Record<string, unknown> | undefined)?.notice, idleTimeoutMinutes(deps));
}

function sendPage(response: FastifyReply, status: number, body: string): FastifyReply {
  return response.code(status).type('text/html; charset=utf-8').send(body);
}

export function signInRoutes(): PublicRoute[] {
  return [
    {
      method: 'GET',
      url: '/',
      async handle(deps, request, response) {
        const user_id = request.session.get('user_id');
        if (typeof user_id === 'string' && (await sessionViewer(deps, user_id)) !== null) {
          return response.code(303).header('location', '/backoffice/overview').send();
        }
        return sendPage(response, 200, signInPage(response.generateCsrf(), '', null, noticeOf(deps, request)));
      },
    },
    {
      method: 'POST',
      url: '/sign-in',
      async handle(deps: HttpDeps, request, response) {
        const email = formValue(request, 'email');
        const limited = await deps.rate_limits.signIn(request);
        if (limited !== null) {
          return sendPage(
            response.header('retry-after', String(limited.retry_after_s)),
            429,
            signInPage(
              response.generateCsrf(),
              email.slice(0, 254),
              'Too many sign-in attempts from your address. Wait a minute and try again.',
            ),
          );
        }
        const outcome = await signInToBackOffice(deps, email, formValue(request, 'password'), request.ip);
        switch (outcome.kind) {
          case 'signed_in':
            await beginSession(deps, request, outcome.user.user_id);
            return response.code(303).header('location', '/backoffice/overview').send();
          case 'locked':
            return sendPage(
              response.header('retry-after', String(outcome.retry_after_s)),
              429,
              signInPage(
                response.generateCsrf(),
                outcome.email,
                `Too many failed sign-ins for this e-mail: it is locked for ${Math.ceil(outcome.retry_after_s / 60)} more minute(s).`,
              ),
            );
          case 'refused':
            return sendPage(response, 401, signInPage(response.generateCsrf(), email.slice(0, 254), 'E-mail or password is wrong.'));
        }
      },
    },
    {
      method: 'POST',
      url: '/sign-out',
      async handle(deps, request, response) {
        const user_id = request.session.get('user_id');
        await signOutOfBackOffice(deps, typeof user_id === 'string' ? user_id : null, request.ip);
        await request.session.destroy();
        return response.code(303).header('location', '/backoffice/').send();
      },
    },
  ];
}
