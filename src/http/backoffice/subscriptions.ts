// Subscriptions and plans as the back office shows them (docs/backoffice.md): the newest
// subscriptions with their status, price and next charge, and the plans that are not deleted.
// Read-only: subscriptions change through the API (spec §3), where the merchant's own systems are.
import { merchantScope } from '../../domain/backoffice-access.js';
import { html } from '../../pages/html.js';
import type { BackOfficeRoute } from './plugin.js';
import { iso, money } from '../../pages/backoffice/format.js';

const LIST_ROWS = 100;

export function subscriptionRoutes(): BackOfficeRoute[] {
  return [{
    method: 'GET', url: '/subscriptions', roles: ['operator', 'merchant'],
    async handle(context) {
      const scope = merchantScope(context.viewer);
      const operator = context.viewer.role === 'operator';
      const [subscriptions, plans] = await Promise.all([
        context.deps.store.backoffice.listSubscriptions(scope, LIST_ROWS),
        context.deps.store.backoffice.listPlans(scope, LIST_ROWS),
      ]);
      return context.page('Subscriptions', '/backoffice/subscriptions', html`<h1>Subscriptions</h1>
${subscriptions.length === 0 ? html`<p class="card">No subscriptions yet.</p>` : html`<div class="scroll"><table><thead><tr><th>Subscription</th>
${operator ? html`<th>Merchant</th>` : ''}<th>Customer (cid)</th><th>Plan</th><th>Price</th><th>Status</th><th>Charges</th><th>Next charge (UTC)</th><th>Created (UTC)</th></tr></thead><tbody>
${subscriptions.map((s) => html`<tr><td>${s.subscription_id}</td>${operator ? html`<td>${s.merchant_id}</td>` : ''}<td>${s.cid}</td><td>${s.plan_id}</td>
<td>${money(s.amount_minor, s.currency)} / ${s.billing_cycle}</td><td>${s.status}</td><td>${s.cycles_charged}</td><td>${iso(s.next_charge_at_ms)}</td><td>${iso(s.created_at_ms)}</td></tr>`)}
</tbody></table></div>`}
<h2>Plans</h2>
${plans.length === 0 ? html`<p class="card">No plans yet.</p>` : html`<div class="scroll"><table><thead><tr><th>Plan</th>${operator ? html`<th>Merchant</th>` : ''}
<th>Name</th><th>Cycle</th><th>Trial</th><th>Status</th><th>Created (UTC)</th></tr></thead><tbody>
${plans.map((p) => html`<tr><td>${p.plan_id}</td>${operator ? html`<td>${p.merchant_id}</td>` : ''}<td>${p.name}</td><td>${p.billing_cycle}</td>
<td>${p.trial_period > 0 ? `${p.trial_period} ${p.trial_period_cycle}` : 'none'}</td><td>${p.status}</td><td>${iso(p.created_at_ms)}</td></tr>`)}
</tbody></table></div>`}`);
    },
  }];
}
