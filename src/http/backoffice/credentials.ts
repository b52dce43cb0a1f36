// A merchant's staff look after their API credentials here (docs/backoffice.md): what identifies
// them (merchant_id, application keys, frontends), rolling the secret with a grace for the old one
// that they pick (at most 24 hours; the new one is shown once, on the answer to the form), and a
// test notification to their notification URL, with the merchant's reply shown. Operators roll
// a merchant's secret through the operator API (docs/security.md §5), not here.
import { recordAudit } from '../../operations/audit.js';
import { rollMerchantSecret, SECRET_GRACE_MAX_S, sendTestNotification } from '../../operations/merchant-credentials.js';
import { characterLength, textProblem } from '../../domain/text.js';
import { redactUrl } from '../../logging.js';
import { type Html, html } from '../../pages/html.js';
import { csrfField } from '../../pages/backoffice/layout.js';
import { type BackOfficeRoute, formValue, type PageContext } from './plugin.js';
import { iso } from '../../pages/backoffice/format.js';

const MERCHANT = ['merchant'] as const;
/** The graces offered, in seconds; the operation takes any whole number up to SECRET_GRACE_MAX_S. */
export const GRACE_CHOICES_S = [0, 15 * 60, 3600, 4 * 3600, 12 * 3600, SECRET_GRACE_MAX_S] as const;
const URL_MAX_CHARS = 2048;
/** Recent transactions looked at for the notification URL offered by default. */
const RECENT_FOR_URL = 20;

function graceLabel(seconds: number): string {
  if (seconds === 0) return 'none: the old secret stops now';
  return seconds < 3600 ? `${seconds / 60} minutes` : `${seconds / 3600} hour${seconds === 3600 ? '' : 's'}`;
}

async function credentialsPage(context: PageContext, result: Html | null = null, http_status = 200, url_value: string | null = null): Promise<unknown> {
  const merchant_id = context.viewer.merchant_id!;
  const record = await context.deps.store.merchants.get(merchant_id);
  if (record === null) return context.notFound();
  const recent = await context.deps.store.transactions.search({ merchant_id }, null, RECENT_FOR_URL);
  const last_url = url_value ?? recent.find((row) => row.notification_url !== null)?.notification_url ?? '';
  const grace_until = record.previous_secret_until_ms;
  const in_grace = grace_until !== null && record.previous_secret_sealed !== null && grace_until > context.deps.clock.now_ms();
  return context.page('API credentials', '/backoffice/credentials', html`<h1>API credentials</h1>${result ?? ''}
<div class="card"><dl><dt>Merchant ID</dt><dd>${merchant_id}</dd>
<dt>Application keys</dt><dd>${record.applications.join(', ') || 'none'}</dd>
<dt>Frontends</dt><dd>${record.frontends.map((f) => `${f.name} (${f.currency})`).join(', ') || 'none'}</dd>
<dt>Secret</dt><dd>set; it is shown only once, when it is made</dd>
${in_grace ? html`<dt>Previous secret</dt><dd>still accepted until ${iso(grace_until)} UTC</dd>` : ''}</dl></div>
<h2>Roll the secret</h2><form class="fields card" method="post" action="/backoffice/credentials/roll">${csrfField(context.csrf)}
<label for="grace">Keep accepting the old secret for<select id="grace" name="grace_seconds">
${GRACE_CHOICES_S.map((s) => html`<option value="${s}"${s === 3600 ? html` selected` : ''}>${graceLabel(s)}</option>`)}</select></label>
<button class="danger" type="submit">Roll the secret</button></form>
<p class="muted">Requests signed with either secret are accepted during the grace and answered with the one they used. Notifications are signed with the new secret at once: put it on your notification endpoint first.</p>
<h2>Send a test notification</h2><form class="fields card" method="post" action="/backoffice/credentials/test-notification">${csrfField(context.csrf)}
<label for="notify-url">Notification URL<input id="notify-url" name="url" type="url" required maxlength="${URL_MAX_CHARS}" value="${last_url}"></label>
<button class="primary" type="submit">Send a test notification</button></form>`, http_status);
}

function field(context: PageContext, name: string): string {
  return formValue(context.request, name).trim();
}

export function credentialRoutes(): BackOfficeRoute[] {
  return [
    { method: 'GET', url: '/credentials', roles: MERCHANT, handle: (context) => credentialsPage(context) },
    {
      method: 'POST', url: '/credentials/roll', roles: MERCHANT,
      async handle(context) {
        const merchant_id = context.viewer.merchant_id!;
        const grace_text = field(context, 'grace_seconds');
        const grace_s = /^[0-9]{1,6}$/.test(grace_text) ? Number(grace_text) : Number.NaN;
        const outcome = await rollMerchantSecret(context.deps, merchant_id, grace_s);
        await recordAudit(context.deps, context.viewer, context.address, {
          action: 'roll_secret', target: merchant_id, merchant_id, outcome: outcome.kind === 'rolled' ? 'done' : 'refused',
          // When the old one ends, never either secret.
          detail: outcome.kind === 'rolled' ? `old secret accepted until ${iso(outcome.previous_valid_until_ms)} UTC` : outcome.kind,
        });
        switch (outcome.kind) {
          case 'rolled':
            // Shown on this answer only; every back-office answer is no-store, and no redirect carries it.
            return credentialsPage(context, html`<div class="notice ok" role="status"><p>New secret (shown this once; copy it now):</p>
<p class="secret" data-testid="new-secret">${outcome.secret}</p>
<p>The old secret is accepted until ${iso(outcome.previous_valid_until_ms)} UTC.</p></div>`);
          case 'invalid_grace':
            return credentialsPage(context, html`<p class="notice error" role="alert">Grace: expected 0 to ${outcome.max_s / 3600} hours.</p>`, 400);
          case 'not_found':
            return context.notFound();
        }
      },
    },
    {
      method: 'POST', url: '/credentials/test-notification', roles: MERCHANT,
      async handle(context) {
        const merchant_id = context.viewer.merchant_id!;
        const url = field(context, 'url');
        const shown = url.slice(0, URL_MAX_CHARS);
        if (url === '' || characterLength(url) > URL_MAX_CHARS || textProblem(url) !== null || !/^https?:\/\//i.test(url)) {
          return credentialsPage(context, html`<p class="notice error" role="alert">Notification URL: expected an http or https URL.</p>`, 400, shown);
        }
        const outcome = await sendTestNotification(context.deps, merchant_id, url);
        await recordAudit(context.deps, context.viewer, context.address, {
          action: 'test_notification', target: redactUrl(url), merchant_id,
          outcome: outcome.kind === 'delivered' ? 'done' : 'failed', detail: outcome.kind === 'failed' ? outcome.reason : outcome.kind,
        });
        switch (outcome.kind) {
          case 'delivered':
            return credentialsPage(context, html`<div class="notice ok" role="status"><p>Delivered: your endpoint answered HTTP ${outcome.http_status} with a valid signed reply in ${outcome.duration_ms} ms.</p>
<p class="muted">Its reply: ${outcome.reply_excerpt}</p></div>`, 200, shown);
          case 'failed':
            return credentialsPage(context, html`<div class="notice error" role="alert"><p>Not delivered: ${outcome.reason}${outcome.http_status === null || outcome.reason === `HTTP ${outcome.http_status}` ? '' : ` (HTTP ${outcome.http_status})`}.</p>
${outcome.reply_excerpt === null ? '' : html`<p>Its reply: ${outcome.reply_excerpt}</p>`}</div>`, 200, shown);
          case 'url_not_allowed':
            return credentialsPage(context, html`<p class="notice error" role="alert">Notification URL: ${outcome.reason}.</p>`, 400, shown);
          case 'not_found':
            return context.notFound();
        }
      },
    },
  ];
}
