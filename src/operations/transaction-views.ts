// The back office's reads of transactions (docs/backoffice.md): the search newest first with
// keyset pages, the CSV export's batches, and one transaction with everything known of it —
// status history, refunds, cascade attempts, an authorization's capture or void, the payment's
// disputes, the processor's webhook events, notifications with every attempt — each with the
// labels of the gateways it names, shown instead of their ids. A merchant's staff see their
// merchant's only (domain/backoffice-access.ts).
import type { AuthorizationActionRow } from '../domain/authorization-record.js';
import { maySee, type Viewer } from '../domain/backoffice-access.js';
import type { DisputeRow } from '../domain/dispute-record.js';
import { isPayment } from '../domain/transaction-state.js';
import { redactUrl } from '../logging.js';
import type { TransactionPageKey, TransactionSearch } from '../domain/transaction-search.js';
import type { ProcessorEventRow } from '../domain/gateway-record.js';
import type { StatusChangeRow, TransactionRow } from '../domain/transaction-record.js';
import type { OperationDeps } from './deps.js';
import { type ShownNotification, shownNotifications } from './notification-views.js';

type ReadDeps = Pick<OperationDeps, 'store'>;

/** What one transaction's page shows at most of each list. */
const DETAIL_LIST_MAX = 100;
/** What a page lists at most of the processor's events, the newest. */
export const PROCESSOR_EVENTS_MAX = 50;
const TRACE_ID = /^[1-9][0-9]{0,14}$/;

/** One page of a search (`limit` rows older than `before`, newest first), with its gateways' labels. */
export async function searchTransactions(
  deps: ReadDeps,
  search: TransactionSearch,
  before: TransactionPageKey | null,
  limit: number,
): Promise<{ readonly rows: TransactionRow[]; readonly gateway_labels: ReadonlyMap<string, string> }> {
  const rows = await deps.store.transactions.search(search, before, limit);
  return { rows, gateway_labels: await deps.store.merchants.gatewayLabels(rows.map((r) => r.gateway_id)) };
}

/** The label of one gateway (a confirmation names the gateway a payment goes through); its id when it has none. */
export async function gatewayLabel(deps: ReadDeps, gateway_id: string): Promise<string> {
  return (await deps.store.merchants.gatewayLabels([gateway_id])).get(gateway_id) ?? gateway_id;
}

/** What the search's Gateway field lists at most. */
const GATEWAY_CHOICES_MAX = 500;

/**
 * The gateways the search's Gateway field offers, by label (a merchant's own, or every one for an
 * operator: `merchant_id` null), so that a person picks a name, never types an id.
 */
export async function gatewayChoices(
  deps: ReadDeps,
  merchant_id: string | null,
): Promise<readonly { readonly gateway_id: string; readonly label: string; readonly merchant_id: string }[]> {
  const gateways = await deps.store.merchants.listGateways(merchant_id);
  return gateways
    .slice(0, GATEWAY_CHOICES_MAX)
    .map((g) => ({ gateway_id: g.gateway_id, label: g.label, merchant_id: g.merchant_id }))
    .sort((a, b) => a.label.localeCompare(b.label));
}

/** A search's rows in batches of `batch_rows`, newest first, `max_rows` at most in all (the CSV export). */
export async function* transactionBatches(
  deps: ReadDeps,
  search: TransactionSearch,
  before: TransactionPageKey | null,
  max_rows: number,
  batch_rows: number,
): AsyncGenerator<TransactionRow[]> {
  let rows_read = 0;
  let after: TransactionPageKey | null = before;
  while (rows_read < max_rows) {
    const rows = await deps.store.transactions.search(search, after, Math.min(batch_rows, max_rows - rows_read));
    yield rows;
    rows_read += rows.length;
    if (rows.length < batch_rows) break;
    const last = rows[rows.length - 1]!;
    after = { created_at_ms: last.created_at_ms, trace_id: last.trace_id };
  }
}

/** The transaction a path names (its trace_id as typed), if this viewer may see it; else null. */
export async function visibleTransaction(deps: ReadDeps, viewer: Viewer, trace_id: string | number): Promise<TransactionRow | null> {
  if (typeof trace_id === 'string' && !TRACE_ID.test(trace_id)) return null;
  const row = await deps.store.transactions.get(Number(trace_id));
  return row !== null && maySee(viewer, row.merchant_id) ? row : null;
}

/** Everything one transaction's page shows besides the row itself. */
export interface TransactionDetail {
  readonly row: TransactionRow;
  /** The row's notification_url without secrets (null when none). */
  readonly notification_url: string | null;
  readonly history: readonly Pick<StatusChangeRow, 'from_status' | 'to_status' | 'reason' | 'at_ms'>[];
  readonly notifications: readonly ShownNotification[];
  readonly refunds: readonly TransactionRow[];
  readonly cascade: readonly TransactionRow[];
  readonly events: readonly ProcessorEventRow[];
  /** An authorization's capture or void, asked or done (decisions §16); null when none was, or for any other type. */
  readonly authorization_action: AuthorizationActionRow | null;
  /** The payment's disputes, oldest first (none for anything but a payment). */
  readonly disputes: readonly DisputeRow[];
  /** The labels of the gateways of the row, its refunds, cascade attempts and events, by id. */
  readonly gateway_labels: ReadonlyMap<string, string>;
}

export async function transactionDetail(deps: ReadDeps, row: TransactionRow): Promise<TransactionDetail> {
  const { store } = deps;
  const payment = isPayment(row.transaction_type);
  const [history, notifications, refunds, cascade, events, authorization_action, disputes] = await Promise.all([
    store.transactions.listStatusChanges(row.trace_id),
    store.notifications.listOfTransaction(row.trace_id),
    // A captured authorization is refunded like a sale (decisions §16).
    payment ? store.transactions.listRefundsOf(row.trace_id, DETAIL_LIST_MAX) : Promise.resolve([]),
    store.transactions.listCascade(row.cascade_root ?? row.trace_id, DETAIL_LIST_MAX),
    // Only events matched to this transaction, and those only among its own gateway's (processor-webhook.ts): its merchant's.
    store.merchants.listProcessorEventsOf(row.trace_id, PROCESSOR_EVENTS_MAX),
    row.transaction_type === 'authorize' ? store.authorizations.getAction(row.trace_id) : Promise.resolve(null),
    payment ? store.disputes.listForTransaction(row.trace_id, DETAIL_LIST_MAX) : Promise.resolve([]),
  ]);
  const gateway_ids = [row, ...refunds, ...cascade, ...events].map((r) => r.gateway_id);
  return {
    row,
    gateway_labels: await store.merchants.gatewayLabels(gateway_ids),
    notification_url: row.notification_url === null ? null : redactUrl(row.notification_url),
    history,
    notifications: await shownNotifications(deps, notifications),
    refunds,
    cascade,
    events,
    authorization_action,
    disputes,
  };
}

/** The detail of a transaction read afresh (after a change), or of `row` when it is gone. */
export async function freshTransactionDetail(deps: ReadDeps, row: TransactionRow): Promise<TransactionDetail> {
  return transactionDetail(deps, (await deps.store.transactions.get(row.trace_id)) ?? row);
}
