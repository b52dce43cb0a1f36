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
import { csrfField, noticeLine, problemLine } from './layout.js';
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

function searchForm(values: Partial<Record<SearchField, string>>, viewer: Viewer): Html {
  const text = (name: SearchField, type = 'text') =>
    html`<label for="q-${name}">${SEARCH_LABELS[name]}<input id="q-${name}" name="${name}" type="${type}" value="${values[name] ?? ''}" maxlength="128"></label>`;
  const choice = (
    name: SearchField,
    options: readonly string[],
  ) => html`<label for="q-${name}">${SEARCH_LABELS[name]}<select id="q-${name}" name="${name}">
<option value="">any</option>${options.map((o) => html`<option value="${o}"${values[name] === o ? html` selected` : ''}>${o}</option>`)}</select></label>`;
  return html`<form class="fields card" method="get" action="/backoffice/transactions" role="search">
${text('trace_id')}${text('order_id')}${text('pin')}${choice('status', SEARCH_STATUSES)}${choice('type', SEARCH_TYPES)}${text('gateway')}
${viewer.role === 'operator' ? text('merchant') : ''}
${text('from', 'date')}${text('to', 'date')}${text('currency')}${text('amount_min')}${text('amount_max')}
<button class="primary" type="submit">Search</button></form>`;
}

/** `labels`: the rows' gateways' labels, shown instead of their ids. */
export function resultsTable(rows: readonly TransactionShown[], viewer: Viewer, labels: GatewayLabels): Html {
  if (rows.length === 0) return html`<p class="card">No transaction matches this search.</p>`;
  return html`<div class="scroll"><table><thead><tr><th>Trace ID</th><th>Created (UTC)</th>${viewer.role === 'operator' ? html`<th>Merchant</th>` : ''}
<th>Type</th><th>Status</th><th>Amount</th><th>Order ID</th><th>Card</th><th>Gateway</th></tr></thead><tbody>
${rows.map(
  (row) => html`<tr><td><a href="/backoffice/transactions/${row.trace_id}">${row.trace_id}</a></td><td>${iso(row.created_at_ms)}</td>
${viewer.role === 'operator' ? html`<td>${row.merchant_id}</td>` : ''}<td>${row.transaction_type}</td><td>${row.status}</td><td>${amountOf(row)}</td>
<td>${merchantOrderId(row)}</td><td>${row.card_masked ?? ''}</td><td>${gatewayName(labels, row.gateway_id)}</td></tr>`,
)}</tbody></table></div>`;
}

/** The search refused: the field named and what it expects, above the form as typed. */
export function searchRefusedBody(
  values: Partial<Record<SearchField, string>>,
  field: SearchField | 'before',
  reason: string,
  viewer: Viewer,
): Html {
  const label = field === 'before' ? 'Page' : SEARCH_LABELS[field];
  return html`<h1>Transactions</h1>
<p class="notice error" role="alert">${label}: expected ${reason}.</p>${searchForm(values, viewer)}`;
}

/** A page of results; `next` is the page key older results start below (null: this is the last page). */
export function searchBody(
  values: Partial<Record<SearchField, string>>,
  shown: readonly TransactionShown[],
  first_page: boolean,
  next: TransactionPageKey | null,
  viewer: Viewer,
  labels: GatewayLabels,
): Html {
  const query = searchQuery(values);
  return html`<h1>Transactions</h1>${searchForm(values, viewer)}
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
<h2>Status history</h2><div class="scroll"><table><thead><tr><th>At (UTC)</th><th>From</th><th>To</th><th>Why</th></tr></thead><tbody>
${history.map((h) => html`<tr><td>${iso(h.at_ms)}</td><td>${h.from_status || '—'}</td><td>${h.to_status}</td><td class="wrap">${h.reason}</td></tr>`)}</tbody></table></div>
${refunds.length > 0 ? html`<h2>Refunds</h2>${resultsTable(refunds, parts.viewer, gateway_labels)}` : ''}
${cascade.length > 1 ? html`<h2>Cascade attempts</h2>${resultsTable(cascade, parts.viewer, gateway_labels)}` : ''}
<h2>Processor events</h2>${processorEventsTable(events, 'transaction', parts.viewer, 'No processor webhook event was matched to this transaction.', events_max, gateway_labels)}
${notificationsSection(parts.csrf, notifications, 'None were sent for this transaction.')}`;
}
