// The processors' webhook events as the back office shows them (docs/backoffice.md §2): when each
// came, what it was and what it did. One table for a transaction's events and for a gateway's; an
// unmatched event (the gateway has no transaction it names) stands out, as it is the one an
// operator looks into.
import type { Viewer } from '../../domain/backoffice-access.js';
import { iso } from '../../pages/backoffice/format.js';
import { type Html, html } from '../../pages/html.js';
import type { ProcessorEventRow } from '../../domain/gateway-record.js';

/** What a page lists at most of the events, the newest. */
export const PROCESSOR_EVENTS_MAX = 50;

/** Whose events a table lists: a transaction's name their gateway, a gateway's their transaction. */
export type EventsOf = 'transaction' | 'gateway';

function outcomeCell(outcome: string): Html {
  return outcome === 'unmatched' ? html`<td><strong>unmatched</strong></td>` : html`<td>${outcome}</td>`;
}

/** An operator reaches the gateway's page; a merchant's staff read its id only. */
function gatewayCell(gateway_id: string, viewer: Viewer): Html {
  return viewer.role === 'operator' ? html`<td><a href="/backoffice/gateways/${gateway_id}">${gateway_id}</a></td>` : html`<td>${gateway_id}</td>`;
}

function transactionCell(trace_id: number | null): Html {
  return trace_id === null ? html`<td>—</td>` : html`<td><a href="/backoffice/transactions/${trace_id}">${trace_id}</a></td>`;
}

export function processorEventsTable(rows: readonly ProcessorEventRow[], of: EventsOf, viewer: Viewer, none: string): Html {
  if (rows.length === 0) return html`<p class="muted">${none}</p>`;
  return html`<div class="scroll"><table><thead><tr><th>Received (UTC)</th>${of === 'transaction' ? html`<th>Gateway</th>` : ''}
<th>Event type</th><th>Event ID</th><th>Outcome</th>${of === 'gateway' ? html`<th>Transaction</th>` : ''}</tr></thead><tbody>
${rows.map((e) => html`<tr><td>${iso(e.received_at_ms)}</td>${of === 'transaction' ? gatewayCell(e.gateway_id, viewer) : ''}
<td>${e.event_type}</td><td class="wrap">${e.event_id}</td>${outcomeCell(e.outcome)}${of === 'gateway' ? transactionCell(e.trace_id) : ''}</tr>`)}
</tbody></table></div>${rows.length >= PROCESSOR_EVENTS_MAX ? html`<p class="muted">The newest ${PROCESSOR_EVENTS_MAX} are shown.</p>` : ''}`;
}
