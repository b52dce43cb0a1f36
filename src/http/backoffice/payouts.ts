// Payouts waiting for a decision (docs/backoffice.md, docs/payouts.md): those `requested` (a
// gateway that holds payouts), oldest decisions first, each approved (sent to the processor) or
// rejected with a reason, through the payout state machine (operations/payout-review.ts).
import { maySee, merchantScope } from '../../domain/backoffice-access.js';
import { characterLength, hasContent, textProblem } from '../../domain/text.js';
import { recordAudit } from '../../operations/audit.js';
import { reviewPayout } from '../../operations/payout-review.js';
import { html } from '../../pages/html.js';
import { csrfField, noticeLine, problemLine } from '../../pages/backoffice/layout.js';
import { type BackOfficeRoute, formValue, type PageContext } from './plugin.js';
import { iso, money } from '../../pages/backoffice/format.js';

const PAGE_ROWS = 50;
const REASON_MAX_CHARS = 200;
const TRACE_ID = /^[1-9][0-9]{0,14}$/;

const NOTICES: Readonly<Record<string, string>> = {
  approved: 'Payout approved and sent to the processor.',
  rejected: 'Payout rejected.',
};

async function waitingPage(context: PageContext, problem: string | null = null, http_status = 200): Promise<unknown> {
  const rows = await context.deps.store.transactions.search(
    { merchant_id: merchantScope(context.viewer), transaction_type: 'payout', status: 'requested' }, null, PAGE_ROWS);
  return context.page('Payouts', '/backoffice/payouts', html`<h1>Payouts waiting for a decision</h1>
${noticeLine((context.request.query as Record<string, unknown>).notice, NOTICES)}${problemLine(problem)}
${rows.length === 0 ? html`<p class="card">No payout is waiting for a decision.</p>` : rows.map((row) => html`<div class="card">
<dl><dt>Trace ID</dt><dd><a href="/backoffice/transactions/${row.trace_id}">${row.trace_id}</a></dd><dt>Merchant</dt><dd>${row.merchant_id}</dd>
<dt>Amount</dt><dd>${money(row.amount_minor, row.currency)}</dd><dt>Order ID</dt><dd>${row.cashier_order_id ?? row.order_id}</dd>
<dt>Card</dt><dd>${row.card_masked ?? '—'}</dd><dt>Requested (UTC)</dt><dd>${iso(row.created_at_ms)}</dd></dl>
<form class="inline" method="post" action="/backoffice/payouts/${row.trace_id}/approve">${csrfField(context.csrf)}<button class="primary" type="submit">Approve ${row.trace_id}</button></form>
<form class="inline" method="post" action="/backoffice/payouts/${row.trace_id}/reject">${csrfField(context.csrf)}
<label for="reason-${row.trace_id}">Reason for rejecting<input id="reason-${row.trace_id}" name="reason" required maxlength="${REASON_MAX_CHARS}"></label>
<button class="danger" type="submit">Reject ${row.trace_id}</button></form></div>`)}
<p><a href="/backoffice/transactions?type=payout">All payouts</a></p>`, http_status);
}

function decisionRoute(action: 'approve' | 'reject'): BackOfficeRoute {
  return {
    method: 'POST', url: `/payouts/:trace_id/${action}`, roles: ['operator', 'merchant'],
    async handle(context) {
      const { trace_id } = context.request.params as { trace_id: string };
      const row = TRACE_ID.test(trace_id) ? await context.deps.store.transactions.get(Number(trace_id)) : null;
      if (row === null || row.transaction_type !== 'payout' || !maySee(context.viewer, row.merchant_id)) return context.notFound(`payout ${trace_id}`);
      const reason = formValue(context.request, 'reason').trim();
      if (action === 'reject' && (!hasContent(reason) || characterLength(reason) > REASON_MAX_CHARS || textProblem(reason) !== null)) {
        return waitingPage(context, `Reason: a reason of 1 to ${REASON_MAX_CHARS} characters is needed to reject payout ${row.trace_id}.`, 400);
      }
      const note = `${action === 'approve' ? 'approved' : 'rejected'} in the back office by ${context.viewer.email}${reason === '' ? '' : `: ${reason}`}`;
      const outcome = await reviewPayout(context.deps, row.trace_id, action, { note, submit: true });
      await recordAudit(context.deps, context.viewer, context.address, {
        action: `payout_${action}`, target: String(row.trace_id), merchant_id: row.merchant_id,
        outcome: outcome.kind === 'changed' ? 'done' : 'refused', detail: outcome.kind === 'changed' ? `now ${outcome.row.status}${reason ? `; reason: ${reason}` : ''}` : outcome.kind,
      });
      if (outcome.kind === 'changed') return context.redirect(`/backoffice/payouts?notice=${action === 'approve' ? 'approved' : 'rejected'}`);
      const status = outcome.kind === 'refused' || outcome.kind === 'processor_unavailable' ? outcome.status : 'unknown';
      return waitingPage(context, `Payout ${row.trace_id} is ${status} now: it can no longer be ${action === 'approve' ? 'approved' : 'rejected'} here.`, 409);
    },
  };
}

export function payoutRoutes(): BackOfficeRoute[] {
  return [
    { method: 'GET', url: '/payouts', roles: ['operator', 'merchant'], handle: (context) => waitingPage(context) },
    decisionRoute('approve'),
    decisionRoute('reject'),
  ];
}
