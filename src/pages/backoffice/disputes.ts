// Disputes (chargebacks) in the back office (decisions §16, docs/backoffice.md): the Disputes view,
// by evidence deadline, soonest first, open ones by default, each linking to its transaction; and
// the same table on a payment's page for its own disputes.
import type { Viewer } from '../../domain/backoffice-access.js';
import { type Html, html } from '../html.js';
import { iso, money } from './format.js';
import { problemLine } from './layout.js';
import type { DisputeShown } from './records.js';

/** Whose disputes a table lists: a payment's (no link, no merchant), or the view's (each links to its payment). */
export type DisputesOf = 'transaction' | 'view';

export function disputesTable(rows: readonly DisputeShown[], of: DisputesOf, viewer: Viewer, none: string): Html {
  if (rows.length === 0) return html`<p class="card">${none}</p>`;
  const view = of === 'view';
  const merchant = view && viewer.role === 'operator';
  // The view's link to the payment second, so a phone shows it without scrolling sideways.
  const line = (d: DisputeShown) =>
    html`<tr><td>${d.evidence_due_at_ms === null ? '—' : iso(d.evidence_due_at_ms)}</td>
${view ? html`<td><a href="/backoffice/transactions/${d.trace_id}">${d.trace_id}</a></td>` : ''}<td>${d.stage}</td><td>${money(d.amount_minor, d.currency)}</td>
${merchant ? html`<td>${d.merchant_id}</td>` : ''}<td class="wrap">${d.reason ?? ''}</td><td>${iso(d.opened_at_ms)}</td><td>${iso(d.updated_at_ms)}</td><td>${d.psp_dispute_id}</td></tr>`;
  return html`<div class="scroll"><table><thead><tr><th>Evidence due (UTC)</th>${view ? html`<th>Transaction</th>` : ''}<th>Stage</th><th>Amount</th>
${merchant ? html`<th>Merchant</th>` : ''}<th>Reason</th><th>Opened (UTC)</th><th>Updated (UTC)</th><th>Dispute ID</th></tr></thead><tbody>
${rows.map(line)}</tbody></table></div>`;
}

export interface DisputeFilterShown {
  /** null: the ?show= given was not one of `shows`. */
  readonly chosen: string | null;
  readonly shows: readonly string[];
}

const NONE: Readonly<Record<string, string>> = {
  open: 'No dispute is open.',
  closed: 'No dispute is closed.',
  all: 'No dispute has been reported.',
};

/** `rows_max`: what the operation lists at most; a full list says that later deadlines are left out. */
export function disputesBody(
  parts: { readonly viewer: Viewer },
  filter: DisputeFilterShown,
  rows: readonly DisputeShown[],
  rows_max: number,
): Html {
  const { chosen, shows } = filter;
  return html`<h1>Disputes</h1>
${problemLine(chosen === null ? `Show: expected one of ${shows.join(', ')}.` : null)}
<form class="fields card" method="get" action="/backoffice/disputes"><label for="d-show">Show<select id="d-show" name="show">
${shows.map((s) => html`<option value="${s}"${chosen === s ? html` selected` : ''}>${s}</option>`)}</select></label>
<button class="primary" type="submit">Show</button></form>
${chosen === null ? '' : disputesTable(rows, 'view', parts.viewer, NONE[chosen] ?? 'No dispute.')}
${rows.length >= rows_max ? html`<p class="muted">The ${rows_max} with the soonest deadlines are shown.</p>` : ''}`;
}
