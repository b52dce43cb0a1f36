// The back office's sign-in page (decisions.md §14): a form with an e-mail and a password that
// works without JavaScript, carrying a CSRF token, with why the person is here again when a
// redirect says so (a session that ended idle).
import { type Html, html } from '../html.js';
import { bareBackOfficePage, csrfField, noticeLine, problemLine } from './layout.js';

export function signInPage(csrf: string, email: string, problem: string | null, notice: Html | '' = ''): string {
  return bareBackOfficePage(
    'Sign in',
    html`<div class="card signin"><h1>Sign in to the back office</h1>
${notice}${problemLine(problem)}
<form method="post" action="/backoffice/sign-in">${csrfField(csrf)}
<label for="email">E-mail<input id="email" name="email" type="email" autocomplete="username" required maxlength="254" value="${email}"></label>
<label for="password">Password<input id="password" name="password" type="password" autocomplete="current-password" required maxlength="256"></label>
<button class="primary" type="submit">Sign in</button></form></div>`,
  );
}

/** Why the person is here again, when the redirect says so (?notice=idle). */
export function signedOutNotice(notice: unknown, idle_timeout_minutes: number): Html | '' {
  return noticeLine(notice, {
    idle: `Signed out after ${idle_timeout_minutes} minutes without activity. Sign in again to go on.`,
  });
}
