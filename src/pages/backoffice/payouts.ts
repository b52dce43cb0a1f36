// Payouts waiting for a decision as the back office shows them (docs/backoffice.md,
// docs/payouts.md): each with its facts, an Approve button and a Reject form that asks why, each
// leading to its confirmation page (pages/backoffice/confirmations.ts).
import { html, type Html } from '../html.js';
import { gatewayName, iso, money } from './format.js';
import { csrfField, noticeLine, problemLine } from './layout.js';
import type { GatewayLabels, PageParts, TransactionShown } from './records.js';

/** The longest reason for rejecting a payout. */
export const REASON_MAX_CHARS = 200;

const NOTICES: Readonly<Record<string, string>> = {
  approved: 'Payout approved and sent to the processor.',
  rejected: 'Payout rejected.',
};

/** `labels`: the payouts' gateways' labels. Each button leads to the decision's confirmation page, where it is made. */
export function waitingPayoutsBody(
  parts: PageParts,
  rows: readonly TransactionShown[],
  labels: GatewayLabels,
  problem: string | null,
): Html {
  return html`<h1>Payouts waiting for a decision</h1>
${noticeLine(parts.notice, NOTICES)}${problemLine(problem)}
${
  rows.length === 0
    ? html`<p class="card">No payout is waiting for a decision.</p>`
    : rows.map(
        (row) => html`<div class="card">
<dl><dt>Trace ID</dt><dd><a href="/backoffice/transactions/${row.trace_id}">${row.trace_id}</a></dd><dt>Merchant</dt><dd>${row.merchant_id}</dd>
<dt>Amount</dt><dd>${money(row.amount_minor, row.currency)}</dd><dt>Order ID</dt><dd>${row.cashier_order_id ?? row.order_id}</dd>
<dt>Card</dt><dd>${row.card_masked ?? row.payment_method ?? '—'}</dd>${row.pin ? html`<dt>Customer PIN</dt><dd>${row.pin}</dd>` : ''}
<dt>Gateway</dt><dd>${gatewayName(labels, row.gateway_id)}</dd><dt>Requested (UTC)</dt><dd>${iso(row.created_at_ms)}</dd></dl>
<form class="inline" method="post" action="/backoffice/payouts/${row.trace_id}/approve">${csrfField(parts.csrf)}<button class="primary" type="submit">Approve ${row.trace_id}…</button></form>
<form class="inline" method="post" action="/backoffice/payouts/${row.trace_id}/reject">${csrfField(parts.csrf)}
<label for="reason-${row.trace_id}">Reason for rejecting<input id="reason-${row.trace_id}" name="reason" required maxlength="${REASON_MAX_CHARS}"></label>
<button class="danger" type="submit">Reject ${row.trace_id}…</button></form>
<p class="muted">You confirm the amount, the card and the customer on the next page before anything is done.</p></div>`,
      )
}
<p><a href="/backoffice/transactions?type=payout">All payouts</a></p>`;
}
