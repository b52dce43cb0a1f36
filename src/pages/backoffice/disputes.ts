// Disputes (chargebacks) in the back office (decisions §16, docs/backoffice.md): the Disputes view,
// by evidence deadline, soonest first, open ones by default, each linking to its transaction; and
// the same table on a payment's page for its own disputes.
import type { Viewer } from '../../domain/backoffice-access.js';
import { type Html, html } from '../html.js';
import { iso, money } from './format.js';
import { filtersBox, problemLine } from './layout.js';
import { type ColumnSpec, dataTable } from './table.js';
import type { DisputeShown } from './records.js';

/** Whose disputes a table lists: a payment's (no link, no merchant), or the view's (each links to its payment). */
export type DisputesOf = 'transaction' | 'view';

export function disputesTable(rows: readonly DisputeShown[], of: DisputesOf, viewer: Viewer, none: string): Html {
  if (rows.length === 0) return html`<p class="card">${none}</p>`;
  const view = of === 'view';
  const merchant = view && viewer.role === 'operator';
  // The view's link to the payment second, so a phone's card shows it near the top.
  const columns: ColumnSpec[] = [
    'Evidence due (UTC)',
    ...(view ? ['Transaction'] : []),
    'Stage',
    'Amount',
    ...(merchant ? [{ label: 'Merchant', wrap: true }] : []),
    { label: 'Reason', wrap: true },
    'Opened (UTC)',
    'Updated (UTC)',
    { label: 'Dispute ID', wrap: true },
  ];
  return dataTable(
    columns,
    rows.map((d) => [
      d.evidence_due_at_ms === null ? '—' : iso(d.evidence_due_at_ms),
      ...(view ? [html`<a href="/backoffice/transactions/${d.trace_id}">${d.trace_id}</a>`] : []),
      d.stage,
      money(d.amount_minor, d.currency),
      ...(merchant ? [d.merchant_id] : []),
      d.reason,
      iso(d.opened_at_ms),
      iso(d.updated_at_ms),
      d.psp_dispute_id,
    ]),
    'Disputes',
  );
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
${filtersBox(
  html`<form class="fields card" method="get" action="/backoffice/disputes"><label for="d-show">Show<select id="d-show" name="show">
${shows.map((s) => html`<option value="${s}"${chosen === s ? html` selected` : ''}>${s}</option>`)}</select></label>
<button class="primary" type="submit">Show</button></form>`,
  chosen === null || chosen === shows[0] ? 0 : 1,
  chosen === null,
)}
${chosen === null ? '' : disputesTable(rows, 'view', parts.viewer, NONE[chosen] ?? 'No dispute.')}
${rows.length >= rows_max ? html`<p class="muted">The ${rows_max} with the soonest deadlines are shown.</p>` : ''}`;
}
