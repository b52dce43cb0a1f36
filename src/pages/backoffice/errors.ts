// The back office's own answers when no page can be shown (docs/backoffice.md): a page that does
// not exist (also a record of another merchant's, and a page a role may not see: the same text),
// a form whose CSRF token is not valid, a form too large or not a form, and a failure.
import { type Html, html } from '../html.js';

export function notFoundBody(what: string | undefined): Html {
  return html`<div class="card"><h1>Not found</h1><p>There is nothing here${what === undefined ? '' : html` for ${what}`}.</p>
<p><a href="/backoffice/transactions">Search transactions</a></p></div>`;
}

export function formExpiredBody(): Html {
  return html`<div class="card signin">
<h1>This form has expired</h1><p>It was not sent from this back office's current page. Go back, reload the page and try again.</p>
<p><a href="/backoffice/">Back office</a></p></div>`;
}

export function formNotAcceptedBody(): Html {
  return html`<div class="card signin">
<h1>Form not accepted</h1><p>The form was too large or not a form. Go back and try again.</p></div>`;
}

export function failedBody(): Html {
  return html`<div class="card signin">
<h1>Something went wrong</h1><p>Nothing was changed by this page's failure; try again in a moment.</p></div>`;
}
