// The back office's transactions (docs/backoffice.md): the search (trace_id, order_id, pin,
// status, type, gateway, dates, amounts) newest first with keyset pages, its CSV export, and one
// transaction with everything known of it — masked card, status history, processor ids, refunds,
// cascade attempts, the processor's webhook events, notifications with every attempt — where a
// signed-in person refunds a sale (partly too) and sends a notification again. A merchant's staff
// see their merchant's only.
import { randomBytes } from 'node:crypto';
import { maySee, merchantScope, type Viewer } from '../../domain/backoffice-access.js';
import { parseMajorAmount } from '../../domain/money.js';
import { iso, majorUnits, money } from '../../pages/backoffice/format.js';
import { parseTransactionSearch, SEARCH_STATUSES, SEARCH_TYPES, type SearchField, searchQuery } from '../../domain/transaction-search.js';
import { redactUrl } from '../../logging.js';
import { recordAudit } from '../../operations/audit.js';
import { REFUND_KEY, refundFromBackOffice } from '../../operations/backoffice-refund.js';
import { type Html, html } from '../../pages/html.js';
import { csrfField, noticeLine, problemLine } from '../../pages/backoffice/layout.js';
import type { TransactionRow } from '../../domain/transaction-record.js';
import { notificationsSection } from './notifications-view.js';
import { PROCESSOR_EVENTS_MAX, processorEventsTable } from './processor-events-view.js';
import { type BackOfficeRoute, formValue, type PageContext } from './plugin.js';

/** Results per page of the search. */
const PAGE_ROWS = 50;
/** An export holds at most this many transactions (the newest of the search); docs/backoffice.md says so. */
export const CSV_MAX_ROWS = 50_000;
const CSV_BATCH_ROWS = 500;
/** What one transaction's page shows at most of each list. */
const DETAIL_LIST_MAX = 100;
const ALL_ROLES = ['operator', 'merchant'] as const;
const TRACE_ID = /^[1-9][0-9]{0,14}$/;

/** The order_id the merchant knows: a cashier transaction's session order, else its own. */
function merchantOrderId(row: TransactionRow): string {
  return row.cashier_order_id ?? row.order_id;
}

function amountOf(row: Pick<TransactionRow, 'amount_minor' | 'currency'>): string {
  return money(row.amount_minor, row.currency);
}

const LABELS: Readonly<Record<SearchField, string>> = {
  trace_id: 'Trace ID', order_id: 'Order ID', pin: 'Customer PIN', status: 'Status', type: 'Type', gateway: 'Gateway',
  merchant: 'Merchant ID', from: 'From (date)', to: 'To (date)', amount_min: 'Amount from (minor units)', amount_max: 'Amount to (minor units)',
};

function searchForm(values: Partial<Record<SearchField, string>>, viewer: Viewer): Html {
  const text = (name: SearchField, type = 'text') =>
    html`<label for="q-${name}">${LABELS[name]}<input id="q-${name}" name="${name}" type="${type}" value="${values[name] ?? ''}" maxlength="128"></label>`;
  const choice = (name: SearchField, options: readonly string[]) => html`<label for="q-${name}">${LABELS[name]}<select id="q-${name}" name="${name}">
<option value="">any</option>${options.map((o) => html`<option value="${o}"${values[name] === o ? html` selected` : ''}>${o}</option>`)}</select></label>`;
  return html`<form class="fields card" method="get" action="/backoffice/transactions" role="search">
${text('trace_id')}${text('order_id')}${text('pin')}${choice('status', SEARCH_STATUSES)}${choice('type', SEARCH_TYPES)}${text('gateway')}
${viewer.role === 'operator' ? text('merchant') : ''}
${text('from', 'date')}${text('to', 'date')}${text('amount_min')}${text('amount_max')}
<button class="primary" type="submit">Search</button></form>`;
}

function resultsTable(rows: readonly TransactionRow[], viewer: Viewer): Html {
  if (rows.length === 0) return html`<p class="card">No transaction matches this search.</p>`;
  return html`<div class="scroll"><table><thead><tr><th>Trace ID</th><th>Created (UTC)</th>${viewer.role === 'operator' ? html`<th>Merchant</th>` : ''}
<th>Type</th><th>Status</th><th>Amount</th><th>Order ID</th><th>Card</th><th>Gateway</th></tr></thead><tbody>
${rows.map((row) => html`<tr><td><a href="/backoffice/transactions/${row.trace_id}">${row.trace_id}</a></td><td>${iso(row.created_at_ms)}</td>
${viewer.role === 'operator' ? html`<td>${row.merchant_id}</td>` : ''}<td>${row.transaction_type}</td><td>${row.status}</td><td>${amountOf(row)}</td>
<td>${merchantOrderId(row)}</td><td>${row.card_masked ?? ''}</td><td>${row.gateway_id}</td></tr>`)}</tbody></table></div>`;
}

async function searchPage(context: PageContext): Promise<unknown> {
  const parsed = parseTransactionSearch(context.request.query as Record<string, unknown>);
  if (!parsed.ok) {
    const label = parsed.field === 'before' ? 'Page' : LABELS[parsed.field];
    return context.page('Transactions', '/backoffice/transactions', html`<h1>Transactions</h1>
<p class="notice error" role="alert">${label}: expected ${parsed.reason}.</p>${searchForm(parsed.values, context.viewer)}`, 400);
  }
  const rows = await context.deps.store.transactions.search(
    { ...parsed.search, merchant_id: merchantScope(context.viewer) ?? parsed.merchant }, parsed.before, PAGE_ROWS + 1);
  const shown = rows.slice(0, PAGE_ROWS);
  const next = rows.length > PAGE_ROWS ? shown[shown.length - 1]!.trace_id : null;
  const query = searchQuery(parsed.values);
  return context.page('Transactions', '/backoffice/transactions', html`<h1>Transactions</h1>${searchForm(parsed.values, context.viewer)}
${resultsTable(shown, context.viewer)}
<div class="pager">${parsed.before !== null ? html`<a href="/backoffice/transactions?${query}">Newest</a>` : ''}
${next !== null ? html`<a href="/backoffice/transactions?${searchQuery(parsed.values, next)}" rel="next">Older</a>` : ''}
<a href="/backoffice/transactions.csv?${query}">Export this search as CSV</a></div>`);
}

/**
 * A CSV field: quoted when it must be, and a leading =, +, -, @, tab or carriage return defused
 * with an apostrophe, so a spreadsheet never runs a value a customer typed as a formula.
 */
export function csvField(value: string | number | null): string {
  if (value === null) return '';
  let text = String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

const CSV_COLUMNS = [
  'trace_id', 'created_at', 'merchant_id', 'transaction_type', 'status', 'order_id', 'amount', 'currency', 'amount_minor',
  'payment_method', 'gateway', 'processor_transaction_id', 'card', 'pin', 'reference_id', 'error_code', 'error_details',
] as const;

function csvLine(row: TransactionRow): string {
  const amount = majorUnits(row.amount_minor, row.currency);
  return [
    row.trace_id, new Date(row.created_at_ms).toISOString(), row.merchant_id, row.transaction_type, row.status, merchantOrderId(row),
    amount, row.currency, row.amount_minor, row.payment_method, row.gateway_id, row.psp_transaction_id, row.card_masked, row.pin,
    row.reference_id, row.error_code, row.error_details,
  ].map(csvField).join(',');
}

async function csvExport(context: PageContext): Promise<unknown> {
  const parsed = parseTransactionSearch(context.request.query as Record<string, unknown>);
  if (!parsed.ok) return searchPage(context);
  const search = { ...parsed.search, merchant_id: merchantScope(context.viewer) ?? parsed.merchant };
  const lines = [CSV_COLUMNS.join(',')];
  let before = parsed.before;
  let rows_written = 0;
  while (rows_written < CSV_MAX_ROWS) {
    const rows = await context.deps.store.transactions.search(search, before, Math.min(CSV_BATCH_ROWS, CSV_MAX_ROWS - rows_written));
    for (const row of rows) lines.push(csvLine(row));
    rows_written += rows.length;
    if (rows.length < CSV_BATCH_ROWS) break;
    before = rows[rows.length - 1]!.trace_id;
  }
  await recordAudit(context.deps, context.viewer, context.address, {
    action: 'export_transactions', outcome: 'done', detail: `${rows_written} row(s); search: ${searchQuery(parsed.values) || 'all'}`,
  });
  return context.response.code(200).type('text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="transactions-${new Date(context.deps.clock.now_ms()).toISOString().slice(0, 10)}.csv"`)
    .send(`${lines.join('\r\n')}\r\n`);
}

/** The transaction named in the path, if this viewer may see it; null answers as not found. */
async function visibleTransaction(context: PageContext): Promise<{ trace_id: string; row: TransactionRow | null }> {
  const { trace_id } = context.request.params as { trace_id: string };
  if (!TRACE_ID.test(trace_id)) return { trace_id, row: null };
  const row = await context.deps.store.transactions.get(Number(trace_id));
  return { trace_id, row: row !== null && maySee(context.viewer, row.merchant_id) ? row : null };
}

const NOTICES: Readonly<Record<string, string>> = {
  refunded: 'Refund sent. Its outcome is in the refunds below.',
  resent: 'The notification is scheduled to be sent again now.',
};

interface DetailProblem {
  readonly message: string;
  readonly http_status: number;
}

async function detailPage(context: PageContext, row: TransactionRow, problem: DetailProblem | null = null): Promise<unknown> {
  const { store } = context.deps;
  const [history, notifications, refunds, cascade, events] = await Promise.all([
    store.transactions.listStatusChanges(row.trace_id),
    store.notifications.listOfTransaction(row.trace_id),
    row.transaction_type === 'sale' ? store.transactions.listRefundsOf(row.trace_id, DETAIL_LIST_MAX) : Promise.resolve([]),
    store.transactions.listCascade(row.cascade_root ?? row.trace_id, DETAIL_LIST_MAX),
    // Only events matched to this transaction, and those only among its own gateway's (processor-webhook.ts): its merchant's.
    store.merchants.listProcessorEventsOf(row.trace_id, PROCESSOR_EVENTS_MAX),
  ]);
  const remaining = row.amount_minor - row.refund_reserved_minor;
  const refundable = row.transaction_type === 'sale' && row.status === 'approved' && remaining > 0;
  const remaining_text = majorUnits(remaining, row.currency);
  const facts: [string, string | number | null | Html][] = [
    ['Trace ID', row.trace_id], ['Merchant', row.merchant_id], ['Type', row.transaction_type], ['Status', row.status],
    ['Amount', amountOf(row)], ['Order ID', merchantOrderId(row)], ['Customer PIN', row.pin],
    ['Payment method', row.payment_method], ['Processor', row.payment_processor], ['Gateway', row.gateway_id],
    ['Processor transaction ID', row.psp_transaction_id], ['Card', row.card_masked], ['Card brand', row.card_brand],
    ['Refers to', row.reference_id === null ? null : html`<a href="/backoffice/transactions/${row.reference_id}">${row.reference_id}</a>`],
    ['Refunded or in flight', row.transaction_type === 'sale' ? amountOf({ amount_minor: row.refund_reserved_minor, currency: row.currency }) : null],
    ['Error', row.error_code === null ? null : `${row.error_code}${row.error_details ? `: ${row.error_details}` : ''}`],
    ['Description', row.description], ['Notification URL', row.notification_url === null ? null : redactUrl(row.notification_url)],
    ['Created (UTC)', iso(row.created_at_ms)], ['Updated (UTC)', iso(row.updated_at_ms)],
  ];
  const body = html`<h1>Transaction ${row.trace_id}</h1>
${noticeLine((context.request.query as Record<string, unknown>).notice, NOTICES)}${problemLine(problem?.message ?? null)}
<div class="card"><dl>${facts.filter(([, v]) => v !== null && v !== '').map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl></div>
${refundable ? html`<h2>Refund</h2><form class="card inline" method="post" action="/backoffice/transactions/${row.trace_id}/refund">${csrfField(context.csrf)}
<input type="hidden" name="refund_key" value="${randomBytes(16).toString('hex')}">
<label for="refund-amount">Amount (${row.currency}, at most ${remaining_text})<input id="refund-amount" name="amount" inputmode="decimal" required value="${remaining_text}"></label>
<button class="danger" type="submit">Refund</button></form>` : ''}
<h2>Status history</h2><div class="scroll"><table><thead><tr><th>At (UTC)</th><th>From</th><th>To</th><th>Why</th></tr></thead><tbody>
${history.map((h) => html`<tr><td>${iso(h.at_ms)}</td><td>${h.from_status || '—'}</td><td>${h.to_status}</td><td class="wrap">${h.reason}</td></tr>`)}</tbody></table></div>
${refunds.length > 0 ? html`<h2>Refunds</h2>${resultsTable(refunds, context.viewer)}` : ''}
${cascade.length > 1 ? html`<h2>Cascade attempts</h2>${resultsTable(cascade, context.viewer)}` : ''}
<h2>Processor events</h2>${processorEventsTable(events, 'transaction', context.viewer, 'No processor webhook event was matched to this transaction.')}
${await notificationsSection(context, notifications, 'None were sent for this transaction.')}`;
  return context.page(`Transaction ${row.trace_id}`, '/backoffice/transactions', body, problem?.http_status ?? 200);
}

const REFUSALS: Readonly<Record<string, string>> = {
  not_approved: 'Only an approved sale can be refunded.',
  exceeds_sale: 'That is more than is left to refund of this sale.',
  not_a_sale: 'Only a sale can be refunded.',
  currency_mismatch: 'The refund must be in the sale\'s currency.',
};

export function transactionRoutes(): BackOfficeRoute[] {
  return [
    { method: 'GET', url: '/transactions', roles: ALL_ROLES, handle: searchPage },
    { method: 'GET', url: '/transactions.csv', roles: ALL_ROLES, handle: csvExport },
    {
      method: 'GET', url: '/transactions/:trace_id', roles: ALL_ROLES,
      async handle(context) {
        const { trace_id, row } = await visibleTransaction(context);
        return row === null ? context.notFound(`transaction ${trace_id}`) : detailPage(context, row);
      },
    },
    {
      method: 'POST', url: '/transactions/:trace_id/refund', roles: ALL_ROLES,
      async handle(context) {
        const { trace_id, row } = await visibleTransaction(context);
        if (row === null) return context.notFound(`transaction ${trace_id}`);
        const refund_key = formValue(context.request, 'refund_key');
        let amount_minor: number | null = null;
        try {
          amount_minor = parseMajorAmount(formValue(context.request, 'amount'), row.currency);
        } catch { /* an unknown currency cannot be refunded from here */ }
        const audit = (outcome: 'done' | 'refused' | 'failed', detail: string) => recordAudit(context.deps, context.viewer, context.address, {
          action: 'refund', target: String(row.trace_id), merchant_id: row.merchant_id, outcome, detail,
        });
        if (amount_minor === null || !REFUND_KEY.test(refund_key)) {
          await audit('refused', 'invalid amount');
          return detailPage(context, row, { message: `Amount: expected a positive amount in ${row.currency} with at most its decimals.`, http_status: 400 });
        }
        const outcome = await refundFromBackOffice(context.deps, row, amount_minor, refund_key);
        const described = amountOf({ amount_minor, currency: row.currency });
        switch (outcome.kind) {
          case 'processed':
            await audit('done', `${described}: refund ${String(outcome.answer.trace_id ?? '')} ${String(outcome.answer.transaction_status ?? '')}${outcome.replayed ? ' (form sent again: same refund)' : ''}`);
            return context.redirect(`/backoffice/transactions/${row.trace_id}?notice=refunded`);
          case 'refused':
            await audit('refused', `${described}: ${outcome.reason}`);
            return detailPage(context, (await context.deps.store.transactions.get(row.trace_id)) ?? row,
              { message: REFUSALS[outcome.reason] ?? 'The refund was refused.', http_status: 409 });
          case 'in_progress':
            return detailPage(context, row, { message: 'This refund is still being processed; reload in a moment.', http_status: 409 });
          default:
            await audit('failed', `${described}: ${outcome.kind}`);
            return detailPage(context, row, { message: 'The refund could not be made here (its processor is not available).', http_status: 409 });
        }
      },
    },
    {
      method: 'POST', url: '/notifications/:id/resend', roles: ALL_ROLES,
      async handle(context) {
        const { id } = context.request.params as { id: string };
        const notification = TRACE_ID.test(id) ? await context.deps.store.notifications.get(Number(id)) : null;
        if (notification === null || !maySee(context.viewer, notification.merchant_id)) return context.notFound(`notification ${id}`);
        const now_ms = context.deps.clock.now_ms();
        const scheduled = await context.deps.store.notifications.reschedule(notification.id, now_ms, now_ms, context.deps.wall_clock.now_ms());
        await recordAudit(context.deps, context.viewer, context.address, {
          action: 'resend_notification', target: String(notification.id), merchant_id: notification.merchant_id,
          outcome: scheduled ? 'done' : 'refused', detail: scheduled ? null : 'an attempt was in flight',
        });
        const back = notification.trace_id === null
          ? `/backoffice/subscriptions/${encodeURIComponent(notification.subscription_id ?? '')}`
          : `/backoffice/transactions/${notification.trace_id}`;
        if (!scheduled && notification.trace_id !== null) {
          const row = await context.deps.store.transactions.get(notification.trace_id);
          if (row !== null) return detailPage(context, row, { message: 'An attempt is in flight right now; send it again once it has ended.', http_status: 409 });
        }
        return context.redirect(`${back}?notice=resent`);
      },
    },
  ];
}
