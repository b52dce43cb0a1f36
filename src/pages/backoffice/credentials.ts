// A merchant's API credentials as its staff see them (docs/backoffice.md): what identifies them,
// the form that rolls the secret with a grace for the old one, the form that sends a test
// notification, and what came of the last form (a new secret is shown once, on that answer).
import { type Html, html } from '../html.js';
import { iso } from './format.js';
import { csrfField } from './layout.js';

/** The longest notification URL the test form takes. */
export const URL_MAX_CHARS = 2048;

export interface CredentialsShown {
  readonly merchant_id: string;
  readonly applications: readonly string[];
  readonly frontends: readonly { readonly name: string; readonly currency: string }[];
  readonly previous_secret_until_ms: number | null;
}

export function graceLabel(seconds: number): string {
  if (seconds === 0) return 'none: the old secret stops now';
  return seconds < 3600 ? `${seconds / 60} minutes` : `${seconds / 3600} hour${seconds === 3600 ? '' : 's'}`;
}

/** `grace_choices_s`: the graces offered; `url_value`: the test form's URL. */
export function credentialsBody(
  csrf: string,
  credentials: CredentialsShown,
  grace_choices_s: readonly number[],
  url_value: string,
  result: Html | null,
): Html {
  const grace_until = credentials.previous_secret_until_ms;
  return html`<h1>API credentials</h1>${result ?? ''}
<div class="card"><dl><dt>Merchant ID</dt><dd>${credentials.merchant_id}</dd>
<dt>Application keys</dt><dd>${credentials.applications.join(', ') || 'none'}</dd>
<dt>Frontends</dt><dd>${credentials.frontends.map((f) => `${f.name} (${f.currency})`).join(', ') || 'none'}</dd>
<dt>Secret</dt><dd>set; it is shown only once, when it is made</dd>
${grace_until !== null ? html`<dt>Previous secret</dt><dd>still accepted until ${iso(grace_until)} UTC</dd>` : ''}</dl></div>
<h2>Roll the secret</h2><form class="fields card" method="post" action="/backoffice/credentials/roll">${csrfField(csrf)}
<label for="grace">Keep accepting the old secret for<select id="grace" name="grace_seconds">
${grace_choices_s.map((s) => html`<option value="${s}"${s === 3600 ? html` selected` : ''}>${graceLabel(s)}</option>`)}</select></label>
<button class="danger" type="submit">Roll the secret</button></form>
<p class="muted">Requests signed with either secret are accepted during the grace and answered with the one they used. Notifications are signed with the new secret at once: put it on your notification endpoint first.</p>
<h2>Send a test notification</h2><form class="fields card" method="post" action="/backoffice/credentials/test-notification">${csrfField(csrf)}
<label for="notify-url">Notification URL<input id="notify-url" name="url" type="url" required maxlength="${URL_MAX_CHARS}" value="${url_value}"></label>
<button class="primary" type="submit">Send a test notification</button></form>
<h2>Check your endpoint</h2><form class="fields card" method="post" action="/backoffice/credentials/check-endpoint">${csrfField(csrf)}
<label for="check-url">Endpoint URL<input id="check-url" name="url" type="url" required maxlength="${URL_MAX_CHARS}" value="${url_value}"></label>
<button class="primary" type="submit">Check the endpoint</button></form>
<p class="muted">Sends nine signed test notifications (duplicates, statuses out of order, a forged and an unsigned one, unknown fields, a late resend) and grades each reply as the gateway reads it. Nothing ships: each is marked <code>test</code>.</p>`;
}

/** What the endpoint checker found, one row per check: what was sent, what a correct endpoint does, what this one did, the fix. */
export interface CheckedLine {
  readonly step: number;
  readonly title: string;
  readonly expected: string;
  readonly observed: string;
  readonly verdict: 'pass' | 'warn' | 'fail';
  readonly fix: string | null;
}

const VERDICT_WORDS = { pass: 'Pass', warn: 'Warning', fail: 'Fail' } as const;

export function endpointReportNotice(
  url: string,
  report: { readonly lines: readonly CheckedLine[]; readonly passed: number; readonly warnings: number; readonly failed: number },
): Html {
  const tone = report.failed > 0 ? 'error' : 'ok';
  // One card per check, not a table: the fixes are sentences, and a phone reads them down the page.
  const cards = report.lines.map(
    (
      line,
    ) => html`<div class="card" data-verdict="${line.verdict}"><p><strong>${VERDICT_WORDS[line.verdict]}</strong> · ${line.step}. ${line.title}</p>
<dl><dt>A correct endpoint</dt><dd>${line.expected}</dd><dt>Yours</dt><dd>${line.observed}</dd>${line.fix === null ? '' : html`<dt>Fix</dt><dd>${line.fix}</dd>`}</dl></div>`,
  );
  return html`<div class="notice ${tone}" role="${report.failed > 0 ? 'alert' : 'status'}" data-testid="endpoint-report"><p>${url}: ${report.passed} passed, ${report.warnings} warnings, ${report.failed} failed.</p></div>
${cards}`;
}

export function newSecretNotice(secret: string, previous_valid_until_ms: number): Html {
  return html`<div class="notice ok" role="status"><p>New secret (shown this once; copy it now):</p>
<p class="secret" data-testid="new-secret">${secret}</p>
<p>The old secret is accepted until ${iso(previous_valid_until_ms)} UTC.</p></div>`;
}

export function graceRefusedNotice(max_s: number): Html {
  return html`<p class="notice error" role="alert">Grace: expected 0 to ${max_s / 3600} hours.</p>`;
}

export function urlRefusedNotice(reason: string | null): Html {
  return reason === null
    ? html`<p class="notice error" role="alert">Notification URL: expected an http or https URL.</p>`
    : html`<p class="notice error" role="alert">Notification URL: ${reason}.</p>`;
}

export function deliveredNotice(http_status: number, duration_ms: number, reply_excerpt: string): Html {
  return html`<div class="notice ok" role="status"><p>Delivered: your endpoint answered HTTP ${http_status} with a valid signed reply in ${duration_ms} ms.</p>
<p class="muted">Its reply: ${reply_excerpt}</p></div>`;
}

export function notDeliveredNotice(reason: string, http_status: number | null, reply_excerpt: string | null): Html {
  return html`<div class="notice error" role="alert"><p>Not delivered: ${reason}${http_status === null || reason === `HTTP ${http_status}` ? '' : ` (HTTP ${http_status})`}.</p>
${reply_excerpt === null ? '' : html`<p>Its reply: ${reply_excerpt}</p>`}</div>`;
}
