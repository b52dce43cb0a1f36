// The processors' webhook events as the back office shows them (docs/backoffice.md §2): when each
// came, what it was and what it did. One table for a transaction's events and for a gateway's; an
// unmatched event (the gateway has no transaction it names) stands out, as it is the one an
// operator looks into.
import type { Viewer } from '../../domain/backoffice-access.js';
import { gatewayName, iso } from './format.js';
import { type Html, html } from '../html.js';
import type { GatewayLabels, ProcessorEventShown } from './records.js';
import { type ColumnSpec, dataTable } from './table.js';

/** Whose events a table lists: a transaction's name their gateway, a gateway's their transaction. */
export type EventsOf = 'transaction' | 'gateway';

function outcomeCell(outcome: string): Html | string {
  return outcome === 'unmatched' ? html`<strong>unmatched</strong>` : outcome;
}

/** The gateway by its label: an operator reaches its page; a merchant's staff read the label only. */
function gatewayCell(gateway_id: string, viewer: Viewer, labels: GatewayLabels): Html | string {
  const name = gatewayName(labels, gateway_id);
  return viewer.role === 'operator' ? html`<a href="/backoffice/gateways/${gateway_id}">${name}</a>` : name;
}

function transactionCell(trace_id: number | null): Html | string {
  return trace_id === null ? '—' : html`<a href="/backoffice/transactions/${trace_id}">${trace_id}</a>`;
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
  const by_transaction = of === 'transaction';
  const columns: ColumnSpec[] = [
    'Received (UTC)',
    ...(by_transaction ? [{ label: 'Gateway', wrap: true }] : []),
    { label: 'Event type', wrap: true },
    { label: 'Event ID', wrap: true },
    'Outcome',
    ...(by_transaction ? [] : ['Transaction']),
  ];
  return html`${dataTable(
    columns,
    rows.map((e) => [
      iso(e.received_at_ms),
      ...(by_transaction ? [gatewayCell(e.gateway_id, viewer, labels)] : []),
      e.event_type,
      e.event_id,
      outcomeCell(e.outcome),
      ...(by_transaction ? [] : [transactionCell(e.trace_id)]),
    ]),
    'Processor events',
  )}${rows.length >= events_max ? html`<p class="muted">The newest ${events_max} are shown.</p>` : ''}`;
}
