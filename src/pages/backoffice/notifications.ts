// A record's notifications as the back office shows them (docs/backoffice.md): each one's state,
// what it reports, every attempt with the merchant's reply, and "Send again". One view for a
// transaction's notifications and a subscription's events.
import { iso } from './format.js';
import { csrfField } from './layout.js';
import { dataTable } from './table.js';
import { type Html, html } from '../html.js';
import type { NotificationShown } from './records.js';

export function notificationsSection(csrf: string, rows: readonly NotificationShown[], none: string): Html {
  if (rows.length === 0) return html`<h2>Notifications</h2><p class="muted">${none}</p>`;
  return html`<h2>Notifications</h2>${rows.map(
    (n) => html`<div class="card">
<dl><dt>Notification</dt><dd>${n.id}</dd><dt>Reports</dt><dd>${n.reports}</dd>
<dt>State</dt><dd>${n.state}</dd><dt>URL</dt><dd>${n.url}</dd><dt>Attempts</dt><dd>${n.attempts}</dd>
${n.state === 'pending' ? html`<dt>Next attempt (UTC)</dt><dd>${iso(n.next_attempt_at_ms)}</dd>` : ''}</dl>
${
  n.attempt_list.length === 0
    ? ''
    : dataTable(
        ['#', 'At (UTC)', 'HTTP', 'Outcome', { label: "Merchant's reply", wrap: true }, { label: 'Why', wrap: true }],
        n.attempt_list.map((a) => [a.attempt_no, iso(a.started_at_ms), a.http_status ?? '—', a.outcome, a.reply_excerpt, a.reason]),
        `Attempts of notification ${n.id}`,
      )
}
<form class="inline" method="post" action="/backoffice/notifications/${n.id}/resend">${csrfField(csrf)}<button class="secondary" type="submit">Send again</button></form>
</div>`,
  )}`;
}
