// The back office's transactions pages (docs/backoffice.md): the search form and its results
// newest first with keyset pages, and one transaction with everything known of it — masked card,
// status history, processor ids, refunds, cascade attempts, an authorization's capture or void,
// a payment's disputes, the processor's webhook events, notifications with every attempt — with
// the refund form for an approved payment and the Capture and Void forms for an authorization.
import type { Viewer } from '../../domain/backoffice-access.js';
import { isPayment } from '../../domain/transaction-state.js';
import { SEARCH_STATUSES, SEARCH_TYPES, type SearchField, searchQuery, type TransactionPageKey } from '../../domain/transaction-search.js';
import { type Html, html } from '../html.js';
import { gatewayName, iso, majorUnits, money } from './format.js';
import { actionable, authorizationActionSection, authorizationForms } from './authorizations.js';
import { disputesTable } from './disputes.js';
import { csrfField, filtersBox, noticeLine, problemLine } from './layout.js';
import { type ColumnSpec, dataTable } from './table.js';
import { notificationsSection } from './notifications.js';
import { processorEventsTable } from './processor-events.js';
import type {
  AuthorizationActionShown,
  DisputeShown,
  GatewayLabels,
  NotificationShown,
  PageParts,
  ProcessorEventShown,
  StatusChangeShown,
  TransactionShown,
} from './records.js';

/** The order_id the merchant knows: a cashier transaction's session order, else its own. */
export function merchantOrderId(row: Pick<TransactionShown, 'order_id' | 'cashier_order_id'>): string {
  return row.cashier_order_id ?? row.order_id;
}

export function amountOf(row: Pick<TransactionShown, 'amount_minor' | 'currency'>): string {
  return money(row.amount_minor, row.currency);
}

export const SEARCH_LABELS: Readonly<Record<SearchField, string>> = {
  trace_id: 'Trace ID',
  order_id: 'Order ID',
  pin: 'Customer PIN',
  status: 'Status',
  type: 'Type',
  gateway: 'Gateway',
  merchant: 'Merchant ID',
  from: 'From (date)',
  to: 'To (date)',
  currency: 'Currency',
  amount_min: 'Amount from (e.g. 12.50)',
  amount_max: 'Amount to (e.g. 99.99)',
};

/** A gateway the search's Gateway field offers: its label shown, its id sent (what a script's URL names too). */
export interface GatewayChoice {
  readonly gateway_id: string;
  readonly label: string;
  readonly merchant_id: string;
}

function searchForm(
  values: Partial<Record<SearchField, string>>,
  viewer: Viewer,
  gateways: readonly GatewayChoice[],
  refused: boolean,
): Html {
  const text = (name: SearchField, type = 'text') =>
    html`<label for="q-${name}">${SEARCH_LABELS[name]}<input id="q-${name}" name="${name}" type="${type}" value="${values[name] ?? ''}" maxlength="128"></label>`;
  const choice = (
    name: SearchField,
    options: readonly { readonly value: string; readonly text: string }[],
  ) => html`<label for="q-${name}">${SEARCH_LABELS[name]}<select id="q-${name}" name="${name}">
<option value="">any</option>${options.map((o) => html`<option value="${o.value}"${values[name] === o.value ? html` selected` : ''}>${o.text}</option>`)}</select></label>`;
  const plain = (list: readonly string[]) => list.map((o) => ({ value: o, text: o }));
  // Gateways by label (an operator's with their merchant: two merchants may name theirs alike); one
  // asked for by a URL that the list does not hold still shows as asked.
  const gateway_options = gateways.map((g) => ({
    value: g.gateway_id,
    text: viewer.role === 'operator' ? `${g.label} (${g.merchant_id})` : g.label,
  }));
  const asked = values.gateway;
  if (asked !== undefined && !gateways.some((g) => g.gateway_id === asked)) gateway_options.push({ value: asked, text: asked });
  const set_count = Object.keys(values).length;
  return filtersBox(
    html`<form class="fields card" method="get" action="/backoffice/transactions" role="search">
${text('trace_id')}${text('order_id')}${text('pin')}${choice('status', plain(SEARCH_STATUSES))}${choice('type', plain(SEARCH_TYPES))}${choice('gateway', gateway_options)}
${viewer.role === 'operator' ? text('merchant') : ''}
${text('from', 'date')}${text('to', 'date')}${text('currency')}${text('amount_min')}${text('amount_max')}
<button class="primary" type="submit">Search</button></form>`,
    set_count,
    refused,
  );
}

/** `labels`: the rows' gateways' labels, shown instead of their ids. */
export function resultsTable(rows: readonly TransactionShown[], viewer: Viewer, labels: GatewayLabels, name = 'Transactions'): Html {
  if (rows.length === 0) return html`<p class="card">No transaction matches this search.</p>`;
  const operator = viewer.role === 'operator';
  const columns: ColumnSpec[] = [
    'Trace ID',
    'Created (UTC)',
    ...(operator ? [{ label: 'Merchant', wrap: true }] : []),
    'Type',
    'Status',
    'Amount',
    { label: 'Order ID', wrap: true },
    'Card',
    { label: 'Gateway', wrap: true },
  ];
  return dataTable(
    columns,
    rows.map((row) => [
      html`<a href="/backoffice/transactions/${row.trace_id}">${row.trace_id}</a>`,
      iso(row.created_at_ms),
      ...(operator ? [row.merchant_id] : []),
      row.transaction_type,
      row.status,
      amountOf(row),
      merchantOrderId(row),
      row.card_masked,
      gatewayName(labels, row.gateway_id),
    ]),
    name,
  );
}

/** The search refused: the field named and what it expects, above the form as typed. */
export function searchRefusedBody(
  values: Partial<Record<SearchField, string>>,
  field: SearchField | 'before',
  reason: string,
  viewer: Viewer,
  gateways: readonly GatewayChoice[],
): Html {
  const label = field === 'before' ? 'Page' : SEARCH_LABELS[field];
  return html`<h1>Transactions</h1>
<p class="notice error" role="alert">${label}: expected ${reason}.</p>${searchForm(values, viewer, gateways, true)}`;
}

/** A page of results; `next` is the page key older results start below (null: this is the last page). */
export function searchBody(
  values: Partial<Record<SearchField, string>>,
  shown: readonly TransactionShown[],
  first_page: boolean,
  next: TransactionPageKey | null,
  viewer: Viewer,
  labels: GatewayLabels,
  gateways: readonly GatewayChoice[],
): Html {
  const query = searchQuery(values);
  return html`<h1>Transactions</h1>${searchForm(values, viewer, gateways, false)}
${resultsTable(shown, viewer, labels)}
<div class="pager">${!first_page ? html`<a href="/backoffice/transactions?${query}">Newest</a>` : ''}
${next !== null ? html`<a href="/backoffice/transactions?${searchQuery(values, next)}" rel="next">Older</a>` : ''}
<a href="/backoffice/transactions.csv?${query}">Export this search as CSV</a></div>`;
}

const NOTICES: Readonly<Record<string, string>> = {
  refunded: 'Refund sent. Its outcome is in the refunds below.',
  resent: 'The notification is scheduled to be sent again now.',
  captured: 'Captured. The capture is below.',
  voided: 'Voided: the held funds are released.',
  action_sent: 'Sent to the processor, which confirms it later; its state is below.',
};

/** One transaction and what the operation read of it. */
export interface TransactionDetailShown {
  readonly row: TransactionShown;
  readonly notification_url: string | null;
  readonly history: readonly StatusChangeShown[];
  readonly notifications: readonly NotificationShown[];
  readonly refunds: readonly TransactionShown[];
  readonly cascade: readonly TransactionShown[];
  readonly events: readonly ProcessorEventShown[];
  readonly authorization_action: AuthorizationActionShown | null;
  readonly disputes: readonly DisputeShown[];
  readonly gateway_labels: GatewayLabels;
}

/** `refund_key`: a fresh key for the refund form, so a form sent twice makes one refund; `events_max`: what the events list holds at most. */
export function transactionDetailBody(
  parts: PageParts,
  detail: TransactionDetailShown,
  problem: string | null,
  refund_key: string,
  events_max: number,
): Html {
  const { row, history, notifications, refunds, cascade, events, authorization_action, disputes, gateway_labels } = detail;
  const gateway_name = gatewayName(gateway_labels, row.gateway_id);
  const remaining = row.amount_minor - row.refund_reserved_minor;
  // A sale, or an authorization once captured: both took the money (decisions §16).
  const payment = isPayment(row.transaction_type);
  const refundable = payment && row.status === 'approved' && remaining > 0;
  // What was refunded means something once the money was taken: a sale, a captured authorization.
  const took_money = row.transaction_type === 'sale' || authorization_action?.action === 'capture';
  const remaining_text = majorUnits(remaining, row.currency);
  const facts: [string, string | number | null | Html][] = [
    ['Trace ID', row.trace_id],
    ['Merchant', row.merchant_id],
    ['Type', row.transaction_type],
    ['Status', row.status],
    ['Amount', amountOf(row)],
    ['Order ID', merchantOrderId(row)],
    ['Customer PIN', row.pin],
    ['Payment method', row.payment_method],
    ['Processor', row.payment_processor],
    // An operator reaches the gateway's page (with its id); a merchant's staff read its label.
    [
      'Gateway',
      parts.viewer.role === 'operator' ? html`<a href="/backoffice/gateways/${row.gateway_id}">${gateway_name}</a>` : gateway_name,
    ],
    ['Processor transaction ID', row.psp_transaction_id],
    ['Card', row.card_masked],
    ['Card brand', row.card_brand],
    ['Refers to', row.reference_id === null ? null : html`<a href="/backoffice/transactions/${row.reference_id}">${row.reference_id}</a>`],
    ['Refunded or in flight', took_money ? amountOf({ amount_minor: row.refund_reserved_minor, currency: row.currency }) : null],
    ['Error', row.error_code === null ? null : `${row.error_code}${row.error_details ? `: ${row.error_details}` : ''}`],
    ['Description', row.description],
    ['Notification URL', detail.notification_url],
    ['Created (UTC)', iso(row.created_at_ms)],
    ['Updated (UTC)', iso(row.updated_at_ms)],
  ];
  return html`<h1>Transaction ${row.trace_id}</h1>
${noticeLine(parts.notice, NOTICES)}${problemLine(problem)}
<div class="card"><dl>${facts.filter(([, v]) => v !== null && v !== '').map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl></div>
${actionable(row, authorization_action) ? authorizationForms(parts, row) : ''}
${authorization_action === null ? '' : authorizationActionSection(authorization_action, row.currency)}
${disputes.length > 0 ? html`<h2>Disputes</h2>${disputesTable(disputes, 'transaction', parts.viewer, '')}` : ''}
${
  refundable
    ? html`<h2>Refund</h2><form class="card inline" method="post" action="/backoffice/transactions/${row.trace_id}/refund">${csrfField(parts.csrf)}
<input type="hidden" name="refund_key" value="${refund_key}">
<label for="refund-amount">Amount (${row.currency}, at most ${remaining_text})<input id="refund-amount" name="amount" inputmode="decimal" required value="${remaining_text}"></label>
<button class="danger" type="submit">Refund…</button></form><p class="muted">You confirm the amount, the card and the customer on the next page before anything moves.</p>`
    : ''
}
<h2>Status history</h2>${dataTable(
    ['At (UTC)', 'From', 'To', { label: 'Why', wrap: true }],
    history.map((h) => [iso(h.at_ms), h.from_status || '—', h.to_status, h.reason]),
    'Status history',
  )}
${refunds.length > 0 ? html`<h2>Refunds</h2>${resultsTable(refunds, parts.viewer, gateway_labels, 'Refunds')}` : ''}
${cascade.length > 1 ? html`<h2>Cascade attempts</h2>${resultsTable(cascade, parts.viewer, gateway_labels, 'Cascade attempts')}` : ''}
<h2>Processor events</h2>${processorEventsTable(events, 'transaction', parts.viewer, 'No processor webhook event was matched to this transaction.', events_max, gateway_labels)}
${notificationsSection(parts.csrf, notifications, 'None were sent for this transaction.')}`;
}
