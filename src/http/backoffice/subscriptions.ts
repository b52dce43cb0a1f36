// Subscriptions and plans as the back office shows them (docs/backoffice.md): the newest
// subscriptions with their status, price and next charge, the plans that are not deleted, and one
// subscription with its status history and its event notifications (sent again from there).
// One change is made here: cancelling, through the API's own cancel path, so that an operator can
// stop the charges of a merchant that cannot (a disabled one) and a merchant's staff can answer a
// customer who asks; the merchant's systems hear of it by the subscription.canceled event.
// Everything else about subscriptions changes through the API (spec §3).
import { maySee, merchantScope } from '../../domain/backoffice-access.js';
import { recordAudit } from '../../operations/audit.js';
import { cancelSubscription } from '../../operations/subscriptions.js';
import { csrfField, noticeLine } from '../../pages/backoffice/layout.js';
import { notificationsSection } from './notifications-view.js';
import { html } from '../../pages/html.js';
import type { BackOfficeRoute } from './plugin.js';
import { iso, money } from '../../pages/backoffice/format.js';

const LIST_ROWS = 100;
/** Longer ids are none of the gateway's (they are made by it, well under this). */
const SUBSCRIPTION_ID_MAX_CHARS = 128;

export function subscriptionRoutes(): BackOfficeRoute[] {
  return [{
    method: 'GET', url: '/subscriptions', roles: ['operator', 'merchant'],
    async handle(context) {
      const scope = merchantScope(context.viewer);
      const operator = context.viewer.role === 'operator';
      const [subscriptions, plans] = await Promise.all([
        context.deps.store.subscriptions.listAll(scope, LIST_ROWS),
        context.deps.store.subscriptions.listAllPlans(scope, LIST_ROWS),
      ]);
      return context.page('Subscriptions', '/backoffice/subscriptions', html`<h1>Subscriptions</h1>
${subscriptions.length === 0 ? html`<p class="card">No subscriptions yet.</p>` : html`<div class="scroll"><table><thead><tr><th>Subscription</th>
${operator ? html`<th>Merchant</th>` : ''}<th>Customer (cid)</th><th>Plan</th><th>Price</th><th>Status</th><th>Charges</th><th>Next charge (UTC)</th><th>Created (UTC)</th></tr></thead><tbody>
${subscriptions.map((s) => html`<tr><td><a href="/backoffice/subscriptions/${s.subscription_id}">${s.subscription_id}</a></td>${operator ? html`<td>${s.merchant_id}</td>` : ''}<td>${s.cid}</td><td>${s.plan_id}</td>
<td>${money(s.amount_minor, s.currency)} / ${s.billing_cycle}</td><td>${s.status}</td><td>${s.cycles_charged}</td><td>${iso(s.next_charge_at_ms)}</td><td>${iso(s.created_at_ms)}</td></tr>`)}
</tbody></table></div>`}
<h2>Plans</h2>
${plans.length === 0 ? html`<p class="card">No plans yet.</p>` : html`<div class="scroll"><table><thead><tr><th>Plan</th>${operator ? html`<th>Merchant</th>` : ''}
<th>Name</th><th>Cycle</th><th>Trial</th><th>Status</th><th>Created (UTC)</th></tr></thead><tbody>
${plans.map((p) => html`<tr><td>${p.plan_id}</td>${operator ? html`<td>${p.merchant_id}</td>` : ''}<td>${p.name}</td><td>${p.billing_cycle}</td>
<td>${p.trial_period > 0 ? `${p.trial_period} ${p.trial_period_cycle}` : 'none'}</td><td>${p.status}</td><td>${iso(p.created_at_ms)}</td></tr>`)}
</tbody></table></div>`}`);
    },
  },
  {
    method: 'GET', url: '/subscriptions/:subscription_id', roles: ['operator', 'merchant'],
    async handle(context) {
      const { subscription_id } = context.request.params as { subscription_id: string };
      const { store } = context.deps;
      const found = subscription_id.length <= SUBSCRIPTION_ID_MAX_CHARS ? await store.subscriptions.getAny(subscription_id) : null;
      if (found === null || !maySee(context.viewer, found.merchant_id)) return context.notFound(`subscription ${subscription_id}`);
      const [changes, events] = await Promise.all([store.subscriptions.listChanges(found.subscription_id), store.notifications.listOfSubscription(found.subscription_id)]);
      const facts: [string, string | number | null][] = [
        ['Subscription', found.subscription_id], ['Merchant', found.merchant_id], ['Customer (cid)', found.cid], ['Plan', found.plan_id],
        ['Price', `${money(found.amount_minor, found.currency)} / ${found.billing_cycle}`], ['Status', found.status],
        ['Charges', found.cycles_charged], ['Next charge (UTC)', iso(found.next_charge_at_ms)], ['Last error', found.last_error],
        ['Created (UTC)', iso(found.created_at_ms)], ['Ended (UTC)', iso(found.ended_at_ms)],
      ];
      // A disabled merchant's renewals wait, unchanged, for it to be enabled (docs/subscriptions.md §5.6).
      if (found.status === 'active' && (await context.deps.merchants.find(found.merchant_id))?.disabled === true) {
        facts.splice(8, 0, ['Renewals', 'held: the merchant is disabled; nothing is charged until it is enabled again']);
      }
      return context.page(`Subscription ${found.subscription_id}`, '/backoffice/subscriptions', html`<h1>Subscription ${found.subscription_id}</h1>
${noticeLine((context.request.query as Record<string, unknown>).notice, {
  resent: 'The notification is scheduled to be sent again now.',
  canceled: 'Subscription cancelled: nothing more will be charged. The merchant is notified (subscription.canceled).',
  already: 'This subscription was cancelled already.',
  ended: 'This subscription has ended (expired); there is nothing to cancel.',
})}
<div class="card"><dl>${facts.filter(([, v]) => v !== null && v !== '').map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>
${found.status === 'active' || found.status === 'inactive' ? html`<form class="inline" method="post" action="/backoffice/subscriptions/${found.subscription_id}/cancel">${csrfField(context.csrf)}
<button class="danger" type="submit">Cancel subscription ${found.subscription_id}</button></form>` : ''}</div>
${found.last_trace_id === null ? '' : html`<p><a href="/backoffice/transactions/${found.last_trace_id}">Its last charge: ${found.last_trace_id}</a></p>`}
<h2>Status history</h2><div class="scroll"><table><thead><tr><th>At (UTC)</th><th>From</th><th>To</th><th>Event</th><th>Why</th></tr></thead><tbody>
${changes.map((c) => html`<tr><td>${iso(c.at_ms)}</td><td>${c.from_status || '—'}</td><td>${c.to_status}</td><td>${c.event}</td><td class="wrap">${c.reason}</td></tr>`)}</tbody></table></div>
${await notificationsSection(context, events, 'No event was sent for this subscription.')}`);
    },
  },
  {
    method: 'POST', url: '/subscriptions/:subscription_id/cancel', roles: ['operator', 'merchant'],
    async handle(context) {
      const { subscription_id } = context.request.params as { subscription_id: string };
      const found = subscription_id.length <= SUBSCRIPTION_ID_MAX_CHARS ? await context.deps.store.subscriptions.getAny(subscription_id) : null;
      if (found === null || !maySee(context.viewer, found.merchant_id)) return context.notFound(`subscription ${subscription_id}`);
      const outcome = await cancelSubscription(
        context.deps, found.merchant_id, found.subscription_id, `cancelled in the back office by ${context.viewer.email} (${context.viewer.role})`,
      );
      const notice = outcome.kind === 'canceled' ? (outcome.already ? 'already' : 'canceled') : outcome.kind === 'ended' ? 'ended' : null;
      if (notice === null) return context.notFound(`subscription ${subscription_id}`);
      await recordAudit(context.deps, context.viewer, context.address, {
        action: 'cancel_subscription', target: found.subscription_id, merchant_id: found.merchant_id,
        outcome: notice === 'canceled' ? 'done' : 'refused', detail: notice === 'canceled' ? null : `was ${found.status}`,
      });
      return context.redirect(`/backoffice/subscriptions/${encodeURIComponent(found.subscription_id)}?notice=${notice}`);
    },
  }];
}
