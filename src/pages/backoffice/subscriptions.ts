// Subscriptions and plans as the back office shows them (docs/backoffice.md): the newest
// subscriptions with their status, price and next charge, the plans that are not deleted, and one
// subscription with its status history, its event notifications and, while it can be, the
// button that cancels it.
import { html, type Html } from '../html.js';
import { iso, money } from './format.js';
import { csrfField, noticeLine } from './layout.js';
import { dataTable } from './table.js';
import { notificationsSection } from './notifications.js';
import type { NotificationShown, PageParts, PlanShown, SubscriptionShown } from './records.js';
import type { SubscriptionChangeRow } from '../../domain/subscription-record.js';

export function subscriptionsBody(parts: PageParts, subscriptions: readonly SubscriptionShown[], plans: readonly PlanShown[]): Html {
  const operator = parts.viewer.role === 'operator';
  return html`<h1>Subscriptions</h1>
${
  subscriptions.length === 0
    ? html`<p class="card">No subscriptions yet.</p>`
    : dataTable(
        [
          { label: 'Subscription', wrap: true },
          ...(operator ? [{ label: 'Merchant', wrap: true }] : []),
          { label: 'Customer (cid)', wrap: true },
          { label: 'Plan', wrap: true },
          'Price',
          'Status',
          'Charges',
          'Next charge (UTC)',
          'Created (UTC)',
        ],
        subscriptions.map((s) => [
          html`<a href="/backoffice/subscriptions/${s.subscription_id}">${s.subscription_id}</a>`,
          ...(operator ? [s.merchant_id] : []),
          s.cid,
          s.plan_id,
          `${money(s.amount_minor, s.currency)} / ${s.billing_cycle}`,
          s.status,
          s.cycles_charged,
          iso(s.next_charge_at_ms),
          iso(s.created_at_ms),
        ]),
        'Subscriptions',
      )
}
<h2>Plans</h2>
${
  plans.length === 0
    ? html`<p class="card">No plans yet.</p>`
    : dataTable(
        [
          { label: 'Plan', wrap: true },
          ...(operator ? [{ label: 'Merchant', wrap: true }] : []),
          { label: 'Name', wrap: true },
          'Cycle',
          'Trial',
          'Status',
          'Created (UTC)',
        ],
        plans.map((p) => [
          p.plan_id,
          ...(operator ? [p.merchant_id] : []),
          p.name,
          p.billing_cycle,
          p.trial_period > 0 ? `${p.trial_period} ${p.trial_period_cycle}` : 'none',
          p.status,
          iso(p.created_at_ms),
        ]),
        'Plans',
      )
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
<button class="danger" type="submit">Cancel subscription ${found.subscription_id}…</button></form>`
    : ''
}</div>
${found.last_trace_id === null ? '' : html`<p><a href="/backoffice/transactions/${found.last_trace_id}">Its last charge: ${found.last_trace_id}</a></p>`}
<h2>Status history</h2>${dataTable(
    ['At (UTC)', 'From', 'To', { label: 'Event', wrap: true }, { label: 'Why', wrap: true }],
    detail.changes.map((c) => [iso(c.at_ms), c.from_status || '—', c.to_status, c.event, c.reason]),
    'Status history',
  )}
${notificationsSection(parts.csrf, detail.notifications, 'No event was sent for this subscription.')}`;
}
