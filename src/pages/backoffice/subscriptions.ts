// Subscriptions and plans as the back office shows them (docs/backoffice.md): the newest
// subscriptions with their status, price and next charge, the plans that are not deleted, and one
// subscription with its status history, its event notifications and, while it can be, the
// button that cancels it.
import { html, type Html } from '../html.js';
import { iso, money } from './format.js';
import { csrfField, noticeLine } from './layout.js';
import { notificationsSection } from './notifications.js';
import type { NotificationShown, PageParts, PlanShown, SubscriptionShown } from './records.js';
import type { SubscriptionChangeRow } from '../../domain/subscription-record.js';

export function subscriptionsBody(parts: PageParts, subscriptions: readonly SubscriptionShown[], plans: readonly PlanShown[]): Html {
  const operator = parts.viewer.role === 'operator';
  return html`<h1>Subscriptions</h1>
${
  subscriptions.length === 0
    ? html`<p class="card">No subscriptions yet.</p>`
    : html`<div class="scroll"><table><thead><tr><th>Subscription</th>
${operator ? html`<th>Merchant</th>` : ''}<th>Customer (cid)</th><th>Plan</th><th>Price</th><th>Status</th><th>Charges</th><th>Next charge (UTC)</th><th>Created (UTC)</th></tr></thead><tbody>
${subscriptions.map(
  (
    s,
  ) => html`<tr><td><a href="/backoffice/subscriptions/${s.subscription_id}">${s.subscription_id}</a></td>${operator ? html`<td>${s.merchant_id}</td>` : ''}<td>${s.cid}</td><td>${s.plan_id}</td>
<td>${money(s.amount_minor, s.currency)} / ${s.billing_cycle}</td><td>${s.status}</td><td>${s.cycles_charged}</td><td>${iso(s.next_charge_at_ms)}</td><td>${iso(s.created_at_ms)}</td></tr>`,
)}
</tbody></table></div>`
}
<h2>Plans</h2>
${
  plans.length === 0
    ? html`<p class="card">No plans yet.</p>`
    : html`<div class="scroll"><table><thead><tr><th>Plan</th>${operator ? html`<th>Merchant</th>` : ''}
<th>Name</th><th>Cycle</th><th>Trial</th><th>Status</th><th>Created (UTC)</th></tr></thead><tbody>
${plans.map(
  (p) => html`<tr><td>${p.plan_id}</td>${operator ? html`<td>${p.merchant_id}</td>` : ''}<td>${p.name}</td><td>${p.billing_cycle}</td>
<td>${p.trial_period > 0 ? `${p.trial_period} ${p.trial_period_cycle}` : 'none'}</td><td>${p.status}</td><td>${iso(p.created_at_ms)}</td></tr>`,
)}
</tbody></table></div>`
}`;
}

export interface SubscriptionDetailShown {
  readonly subscription: SubscriptionShown;
  readonly changes: readonly Pick<SubscriptionChangeRow, 'from_status' | 'to_status' | 'event' | 'reason' | 'at_ms'>[];
  readonly notifications: readonly NotificationShown[];
  readonly renewals_held: boolean;
}

export function subscriptionDetailBody(parts: PageParts, detail: SubscriptionDetailShown): Html {
  const found = detail.subscription;
  const facts: [string, string | number | null][] = [
    ['Subscription', found.subscription_id],
    ['Merchant', found.merchant_id],
    ['Customer (cid)', found.cid],
    ['Plan', found.plan_id],
    ['Price', `${money(found.amount_minor, found.currency)} / ${found.billing_cycle}`],
    ['Status', found.status],
    ['Charges', found.cycles_charged],
    ['Next charge (UTC)', iso(found.next_charge_at_ms)],
    ['Last error', found.last_error],
    ['Created (UTC)', iso(found.created_at_ms)],
    ['Ended (UTC)', iso(found.ended_at_ms)],
  ];
  // A disabled merchant's renewals wait, unchanged, for it to be enabled (docs/subscriptions.md §5.6).
  if (detail.renewals_held) {
    facts.splice(8, 0, ['Renewals', 'held: the merchant is disabled; nothing is charged until it is enabled again']);
  }
  return html`<h1>Subscription ${found.subscription_id}</h1>
${noticeLine(parts.notice, {
  resent: 'The notification is scheduled to be sent again now.',
  canceled: 'Subscription cancelled: nothing more will be charged. The merchant is notified (subscription.canceled).',
  already: 'This subscription was cancelled already.',
  ended: 'This subscription has ended (expired); there is nothing to cancel.',
})}
<div class="card"><dl>${facts.filter(([, v]) => v !== null && v !== '').map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>
${
  found.status === 'active' || found.status === 'inactive'
    ? html`<form class="inline" method="post" action="/backoffice/subscriptions/${found.subscription_id}/cancel">${csrfField(parts.csrf)}
<button class="danger" type="submit">Cancel subscription ${found.subscription_id}</button></form>`
    : ''
}</div>
${found.last_trace_id === null ? '' : html`<p><a href="/backoffice/transactions/${found.last_trace_id}">Its last charge: ${found.last_trace_id}</a></p>`}
<h2>Status history</h2><div class="scroll"><table><thead><tr><th>At (UTC)</th><th>From</th><th>To</th><th>Event</th><th>Why</th></tr></thead><tbody>
${detail.changes.map((c) => html`<tr><td>${iso(c.at_ms)}</td><td>${c.from_status || '—'}</td><td>${c.to_status}</td><td>${c.event}</td><td class="wrap">${c.reason}</td></tr>`)}</tbody></table></div>
${notificationsSection(parts.csrf, detail.notifications, 'No event was sent for this subscription.')}`;
}
