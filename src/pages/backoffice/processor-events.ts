// The processors' webhook events as the back office shows them (docs/backoffice.md §2): when each
// came, what it was and what it did. One table for a transaction's events and for a gateway's; an
// unmatched event (the gateway has no transaction it names) stands out, as it is the one an
// operator looks into.
import type { Viewer } from '../../domain/backoffice-access.js';
import { gatewayName, iso } from './format.js';
import { type Html, html } from '../html.js';
import type { GatewayLabels, ProcessorEventShown } from './records.js';

/** Whose events a table lists: a transaction's name their gateway, a gateway's their transaction. */
export type EventsOf = 'transaction' | 'gateway';

function outcomeCell(outcome: string): Html {
  return outcome === 'unmatched' ? html`<td><strong>unmatched</strong></td>` : html`<td>${outcome}</td>`;
}

/** The gateway by its label: an operator reaches its page; a merchant's staff read the label only. */
function gatewayCell(gateway_id: string, viewer: Viewer, labels: GatewayLabels): Html {
  const name = gatewayName(labels, gateway_id);
  return viewer.role === 'operator' ? html`<td><a href="/backoffice/gateways/${gateway_id}">${name}</a></td>` : html`<td>${name}</td>`;
}

function transactionCell(trace_id: number | null): Html {
  return trace_id === null ? html`<td>—</td>` : html`<td><a href="/backoffice/transactions/${trace_id}">${trace_id}</a></td>`;
}

/** `events_max`: what the operation lists at most, the newest; a full list says so. `labels`: the gateways' (a transaction's list). */
export function processorEventsTable(
  rows: readonly ProcessorEventShown[],
  of: EventsOf,
  viewer: Viewer,
  none: string,
  events_max: number,
  labels: GatewayLabels = new Map(),
): Html {
  if (rows.length === 0) return html`<p class="muted">${none}</p>`;
  return html`<div class="scroll"><table><thead><tr><th>Received (UTC)</th>${of === 'transaction' ? html`<th>Gateway</th>` : ''}
<th>Event type</th><th>Event ID</th><th>Outcome</th>${of === 'gateway' ? html`<th>Transaction</th>` : ''}</tr></thead><tbody>
${rows.map(
  (e) => html`<tr><td>${iso(e.received_at_ms)}</td>${of === 'transaction' ? gatewayCell(e.gateway_id, viewer, labels) : ''}
<td>${e.event_type}</td><td class="wrap">${e.event_id}</td>${outcomeCell(e.outcome)}${of === 'gateway' ? transactionCell(e.trace_id) : ''}</tr>`,
)}
</tbody></table></div>${rows.length >= events_max ? html`<p class="muted">The newest ${events_max} are shown.</p>` : ''}`;
}
