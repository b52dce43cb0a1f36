// A record's notifications as the back office shows them (docs/backoffice.md): each one's state,
// what it reports, every attempt with the merchant's reply, and "Send again". One view for a
// transaction's notifications and a subscription's events.
import { SUBSCRIPTION_EVENT_KIND } from '../../notifications/subscription-event.js';
import { redactUrl } from '../../logging.js';
import { iso } from '../../pages/backoffice/format.js';
import { csrfField } from '../../pages/backoffice/layout.js';
import { type Html, html } from '../../pages/html.js';
import type { NotificationRow } from '../../domain/notification-record.js';
import type { PageContext } from './plugin.js';

/** What a notification reports: a transaction's status, or a subscription event and its status. */
function reports(row: NotificationRow): string {
  const body = JSON.parse(row.payload_json) as Record<string, unknown>;
  return row.kind === SUBSCRIPTION_EVENT_KIND
    ? `${String(body.event ?? '')} (${String(body.subscription_status ?? '')})`
    : String(body.transaction_status ?? '');
}

export async function notificationsSection(context: PageContext, rows: readonly NotificationRow[], none: string): Promise<Html> {
  if (rows.length === 0) return html`<h2>Notifications</h2><p class="muted">${none}</p>`;
  const attempts = await Promise.all(rows.map((n) => context.deps.store.notifications.listAttempts(n.id)));
  return html`<h2>Notifications</h2>${rows.map((n, i) => html`<div class="card">
<dl><dt>Notification</dt><dd>${n.id}</dd><dt>Reports</dt><dd>${reports(n)}</dd>
<dt>State</dt><dd>${n.state}</dd><dt>URL</dt><dd>${redactUrl(n.url)}</dd><dt>Attempts</dt><dd>${n.attempts}</dd>
${n.state === 'pending' ? html`<dt>Next attempt (UTC)</dt><dd>${iso(n.next_attempt_at_ms)}</dd>` : ''}</dl>
${attempts[i]!.length === 0 ? '' : html`<div class="scroll"><table><thead><tr><th>#</th><th>At (UTC)</th><th>HTTP</th><th>Outcome</th><th>Merchant's reply</th><th>Why</th></tr></thead><tbody>
${attempts[i]!.map((a) => html`<tr><td>${a.attempt_no}</td><td>${iso(a.started_at_ms)}</td><td>${a.http_status ?? '—'}</td><td>${a.outcome}</td>
<td class="wrap">${a.reply_excerpt ?? ''}</td><td class="wrap">${a.reason}</td></tr>`)}</tbody></table></div>`}
<form class="inline" method="post" action="/backoffice/notifications/${n.id}/resend">${csrfField(context.csrf)}<button class="secondary" type="submit">Send again</button></form>
</div>`)}`;
}
