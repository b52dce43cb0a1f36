// The back office's transactions (docs/backoffice.md): the search (trace_id, order_id, pin,
// status, type, gateway, dates, amounts) newest first with keyset pages, its CSV export, and one
// transaction with everything known of it, where a signed-in person refunds a payment (partly too)
// and sends a notification again (an authorization's capture and void are authorizations.ts). A
// merchant's staff see their merchant's only. The reads are operations/transaction-views.ts, the
// pages pages/backoffice/transactions.ts.
import { randomBytes } from 'node:crypto';
import { maySee, merchantScope } from '../../domain/backoffice-access.js';
import { parseMajorAmount } from '../../domain/money.js';
import { parseTransactionSearch, searchQuery } from '../../domain/transaction-search.js';
import type { TransactionRow } from '../../domain/transaction-record.js';
import { isPayment } from '../../domain/transaction-state.js';
import { exportTransactions, resendFromBackOffice } from '../../operations/backoffice-actions.js';
import { refundInBackOffice } from '../../operations/backoffice-refund.js';
import {
  gatewayChoices,
  gatewayLabel,
  PROCESSOR_EVENTS_MAX,
  searchTransactions,
  type TransactionDetail,
  transactionDetail,
  visibleTransaction,
} from '../../operations/transaction-views.js';
import { CONFIRM_FIELD, confirmRefundBody } from '../../pages/backoffice/authorizations.js';
import { searchBody, searchRefusedBody, transactionDetailBody } from '../../pages/backoffice/transactions.js';
import { CSV_HEADER, csvLine } from '../../pages/backoffice/transactions-csv.js';
import { type BackOfficeRoute, formValue, type PageContext, partsOf } from './plugin.js';

export { csvField } from '../../pages/backoffice/transactions-csv.js';

/** Results per page of the search. */
const PAGE_ROWS = 50;
/** An export holds at most this many transactions (the newest of the search); docs/backoffice.md says so. */
export const CSV_MAX_ROWS = 50_000;
const CSV_BATCH_ROWS = 500;
const ALL_ROLES = ['operator', 'merchant'] as const;
const TRACE_ID = /^[1-9][0-9]{0,14}$/;

async function searchPage(context: PageContext): Promise<unknown> {
  const parsed = parseTransactionSearch(context.request.query as Record<string, unknown>);
  const gateways = await gatewayChoices(context.deps, merchantScope(context.viewer));
  if (!parsed.ok) {
    return context.page(
      'Transactions',
      '/backoffice/transactions',
      searchRefusedBody(parsed.values, parsed.field, parsed.reason, context.viewer, gateways),
      400,
    );
  }
  const { rows, gateway_labels } = await searchTransactions(
    context.deps,
    { ...parsed.search, merchant_id: merchantScope(context.viewer) ?? parsed.merchant },
    parsed.before,
    PAGE_ROWS + 1,
  );
  const shown = rows.slice(0, PAGE_ROWS);
  const next = rows.length > PAGE_ROWS ? shown[shown.length - 1]! : null;
  return context.page(
    'Transactions',
    '/backoffice/transactions',
    searchBody(parsed.values, shown, parsed.before === null, next, context.viewer, gateway_labels, gateways),
  );
}

async function csvExport(context: PageContext): Promise<unknown> {
  const parsed = parseTransactionSearch(context.request.query as Record<string, unknown>);
  if (!parsed.ok) return searchPage(context);
  const search = { ...parsed.search, merchant_id: merchantScope(context.viewer) ?? parsed.merchant };
  const lines = [CSV_HEADER];
  await exportTransactions(
    context.deps,
    context,
    { search, before: parsed.before, search_text: searchQuery(parsed.values), max_rows: CSV_MAX_ROWS, batch_rows: CSV_BATCH_ROWS },
    (rows, gateway_labels) => {
      for (const row of rows) lines.push(csvLine(row, gateway_labels));
    },
  );
  return context.response
    .code(200)
    .type('text/csv; charset=utf-8')
    .header(
      'content-disposition',
      `attachment; filename="transactions-${new Date(context.deps.clock.now_ms()).toISOString().slice(0, 10)}.csv"`,
    )
    .send(`${lines.join('\r\n')}\r\n`);
}

/** The transaction named in the path, if this viewer may see it; null answers as not found. */
export async function pathTransaction(context: PageContext): Promise<{ trace_id: string; row: TransactionRow | null }> {
  const { trace_id } = context.request.params as { trace_id: string };
  return { trace_id, row: await visibleTransaction(context.deps, context.viewer, trace_id) };
}

export interface DetailProblem {
  readonly message: string;
  readonly http_status: number;
}

export function detailPage(context: PageContext, detail: TransactionDetail, problem: DetailProblem | null = null): unknown {
  const body = transactionDetailBody(
    partsOf(context),
    detail,
    problem?.message ?? null,
    randomBytes(16).toString('hex'),
    PROCESSOR_EVENTS_MAX,
  );
  return context.page(`Transaction ${detail.row.trace_id}`, '/backoffice/transactions', body, problem?.http_status ?? 200);
}

const REFUSALS: Readonly<Record<string, string>> = {
  not_approved: 'Only an approved sale can be refunded.',
  exceeds_sale: 'That is more than is left to refund of this sale.',
  not_a_sale: 'Only a sale can be refunded.',
  currency_mismatch: "The refund must be in the sale's currency.",
};

export function transactionRoutes(): BackOfficeRoute[] {
  return [
    { method: 'GET', url: '/transactions', roles: ALL_ROLES, handle: searchPage },
    { method: 'GET', url: '/transactions.csv', roles: ALL_ROLES, handle: csvExport },
    {
      method: 'GET',
      url: '/transactions/:trace_id',
      roles: ALL_ROLES,
      async handle(context) {
        const { trace_id, row } = await pathTransaction(context);
        return row === null ? context.notFound(`transaction ${trace_id}`) : detailPage(context, await transactionDetail(context.deps, row));
      },
    },
    {
      method: 'POST',
      url: '/transactions/:trace_id/refund',
      roles: ALL_ROLES,
      async handle(context) {
        const { trace_id, row } = await pathTransaction(context);
        if (row === null) return context.notFound(`transaction ${trace_id}`);
        const refund_key = formValue(context.request, 'refund_key');
        let amount_minor: number | null = null;
        try {
          amount_minor = parseMajorAmount(formValue(context.request, 'amount'), row.currency);
        } catch {
          /* an unknown currency cannot be refunded from here */
        }
        // A refund moves money: the form answers with its confirmation first (amount, card, customer).
        if (formValue(context.request, CONFIRM_FIELD) !== 'yes') {
          const left = row.amount_minor - row.refund_reserved_minor;
          if (
            amount_minor !== null &&
            amount_minor > 0 &&
            amount_minor <= left &&
            isPayment(row.transaction_type) &&
            row.status === 'approved'
          )
            return context.page(
              'Confirm the refund',
              '/backoffice/transactions',
              confirmRefundBody(partsOf(context), row, amount_minor, refund_key, await gatewayLabel(context.deps, row.gateway_id)),
            );
          // Anything else is refused by the refund itself, with its reason, nothing moved.
        }
        const result = await refundInBackOffice(context.deps, context, row, amount_minor, refund_key);
        switch (result.kind) {
          case 'processed':
            return context.redirect(`/backoffice/transactions/${row.trace_id}?notice=refunded`);
          case 'invalid':
            return detailPage(context, result.detail, {
              message: `Amount: expected a positive amount in ${row.currency} with at most its decimals.`,
              http_status: 400,
            });
          case 'refused':
            return detailPage(context, result.detail, { message: REFUSALS[result.reason] ?? 'The refund was refused.', http_status: 409 });
          case 'in_progress':
            return detailPage(context, result.detail, {
              message: 'This refund is still being processed; reload in a moment.',
              http_status: 409,
            });
          case 'failed':
            return detailPage(context, result.detail, {
              message: 'The refund could not be made here (its processor is not available).',
              http_status: 409,
            });
        }
      },
    },
    {
      method: 'POST',
      url: '/notifications/:id/resend',
      roles: ALL_ROLES,
      async handle(context) {
        const { id } = context.request.params as { id: string };
        const outcome = TRACE_ID.test(id)
          ? await resendFromBackOffice(context.deps, context, Number(id), (merchant_id) => maySee(context.viewer, merchant_id))
          : { kind: 'not_found' as const };
        if (outcome.kind === 'not_found') return context.notFound(`notification ${id}`);
        const { notification } = outcome;
        const scheduled = outcome.kind === 'scheduled';
        const back =
          notification.trace_id === null
            ? `/backoffice/subscriptions/${encodeURIComponent(notification.subscription_id ?? '')}`
            : `/backoffice/transactions/${notification.trace_id}`;
        if (!scheduled && notification.trace_id !== null) {
          const row = await visibleTransaction(context.deps, context.viewer, notification.trace_id);
          if (row !== null) {
            return detailPage(context, await transactionDetail(context.deps, row), {
              message: 'An attempt is in flight right now; send it again once it has ended.',
              http_status: 409,
            });
          }
        }
        return context.redirect(`${back}?notice=resent`);
      },
    },
  ];
}
