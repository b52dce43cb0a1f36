// The back office's actions by a merchant's staff or an operator (docs/backoffice.md), each one
// operation that performs the action and writes its audit line: rolling the API secret, a test
// notification, the CSV export, a notification sent again, a payout approved or rejected, a
// subscription cancelled. The handlers (http/backoffice/) read the form, call one of these and
// render what it answers. Each audit line is written right after its action, with its outcome,
// as before the fold: the actions they wrap (shared with the API) run their own transactions.
// The back office's refund is operations/backoffice-refund.ts; the operators' pages'
// actions are operations/backoffice-admin-actions.ts.
import { iso } from '../domain/backoffice-format.js';
import type { TransactionRow } from '../domain/transaction-record.js';
import type { SubscriptionRow } from '../domain/subscription-record.js';
import type { TransactionPageKey, TransactionSearch } from '../domain/transaction-search.js';
import { redactUrl } from '../logging.js';
import { type Actor, recordAudit } from './audit.js';
import type { OperationDeps } from './deps.js';
import { rollMerchantSecret, type RollSecretOutcome, sendTestNotification, type TestNotificationOutcome } from './merchant-credentials.js';
import { resendNotification, type ResendOutcome } from './notification-views.js';
import { reviewPayout, type ReviewOutcome } from './payout-review.js';
import { cancelSubscription, type CancelOutcome } from './subscriptions.js';
import { transactionBatches } from './transaction-views.js';
import { checkEndpoint, type EndpointCheckOutcome } from './endpoint-check.js';

/** The viewer's merchant gets a new secret (the viewer is a merchant's staff); the audit says until when the old one holds, never either secret. */
export async function rollSecretFromBackOffice(deps: OperationDeps, actor: Actor, grace_s: number): Promise<RollSecretOutcome> {
  const merchant_id = actor.viewer.merchant_id!;
  const outcome = await rollMerchantSecret(deps, merchant_id, grace_s);
  await recordAudit(deps, actor.viewer, actor.address, {
    action: 'roll_secret',
    target: merchant_id,
    merchant_id,
    outcome: outcome.kind === 'rolled' ? 'done' : 'refused',
    // When the old one ends, never either secret.
    detail: outcome.kind === 'rolled' ? `old secret accepted until ${iso(outcome.previous_valid_until_ms)} UTC` : outcome.kind,
  });
  return outcome;
}

/** A test notification to `url` for the viewer's merchant; the audit names the URL redacted. */
export async function testNotificationFromBackOffice(deps: OperationDeps, actor: Actor, url: string): Promise<TestNotificationOutcome> {
  const merchant_id = actor.viewer.merchant_id!;
  const outcome = await sendTestNotification(deps, merchant_id, url);
  await recordAudit(deps, actor.viewer, actor.address, {
    action: 'test_notification',
    target: redactUrl(url),
    merchant_id,
    outcome: outcome.kind === 'delivered' ? 'done' : 'failed',
    detail: outcome.kind === 'failed' ? outcome.reason : outcome.kind,
  });
  return outcome;
}

/**
 * The endpoint checker (operations/endpoint-check.ts) on the merchant's own endpoint, from its
 * credentials page, with an audit line giving the grade. The slow resend waits a second: a person
 * is waiting for the page.
 */
export async function checkEndpointFromBackOffice(deps: OperationDeps, actor: Actor, url: string): Promise<EndpointCheckOutcome> {
  const merchant_id = actor.viewer.merchant_id!;
  const outcome = await checkEndpoint(deps, merchant_id, url, { slow_resend_ms: 1_000 });
  await recordAudit(deps, actor.viewer, actor.address, {
    action: 'check_endpoint',
    target: redactUrl(url),
    merchant_id,
    outcome: outcome.kind === 'report' ? 'done' : 'failed',
    detail:
      outcome.kind === 'report'
        ? `${outcome.report.passed} passed, ${outcome.report.warnings} warnings, ${outcome.report.failed} failed`
        : outcome.kind,
  });
  return outcome;
}

export interface TransactionExport {
  readonly search: TransactionSearch;
  readonly before: TransactionPageKey | null;
  /** The search as its query string reads, for the audit line ('' for every transaction). */
  readonly search_text: string;
  readonly max_rows: number;
  readonly batch_rows: number;
}

/**
 * The search's transactions, newest first, handed to `each` batch by batch with the labels of
 * their gateways (the caller writes them out), then the export's audit line with the rows
 * written. Answers the rows written.
 */
export async function exportTransactions(
  deps: OperationDeps,
  actor: Actor,
  request: TransactionExport,
  each: (rows: readonly TransactionRow[], gateway_labels: ReadonlyMap<string, string>) => void,
): Promise<number> {
  let rows_written = 0;
  // Read once per gateway for the whole export: a batch asks only for the gateways not seen yet.
  const labels = new Map<string, string>();
  for await (const rows of transactionBatches(deps, request.search, request.before, request.max_rows, request.batch_rows)) {
    const unseen = [...new Set(rows.map((r) => r.gateway_id))].filter((id) => !labels.has(id));
    if (unseen.length > 0) for (const [id, label] of await deps.store.merchants.gatewayLabels(unseen)) labels.set(id, label);
    each(rows, labels);
    rows_written += rows.length;
  }
  await recordAudit(deps, actor.viewer, actor.address, {
    action: 'export_transactions',
    outcome: 'done',
    detail: `${rows_written} row(s); search: ${request.search_text || 'all'}`,
  });
  return rows_written;
}

/** Notification `id` sent again, if the viewer may see it; a refusal (an attempt in flight) is audited, an unknown one is not. */
export async function resendFromBackOffice(
  deps: OperationDeps,
  actor: Actor,
  id: number,
  may_see: (merchant_id: string) => boolean,
): Promise<ResendOutcome> {
  const outcome = await resendNotification(deps, id, may_see);
  if (outcome.kind === 'not_found') return outcome;
  const { notification } = outcome;
  const scheduled = outcome.kind === 'scheduled';
  await recordAudit(deps, actor.viewer, actor.address, {
    action: 'resend_notification',
    target: String(notification.id),
    merchant_id: notification.merchant_id,
    outcome: scheduled ? 'done' : 'refused',
    detail: scheduled ? null : 'an attempt was in flight',
  });
  return outcome;
}

/** A waiting payout approved (and sent) or rejected, the reason kept in its history and the audit line. */
export async function decidePayout(
  deps: OperationDeps,
  actor: Actor,
  row: TransactionRow,
  action: 'approve' | 'reject',
  reason: string,
): Promise<ReviewOutcome> {
  const note = `${action === 'approve' ? 'approved' : 'rejected'} in the back office by ${actor.viewer.email}${reason === '' ? '' : `: ${reason}`}`;
  const outcome = await reviewPayout(deps, row.trace_id, action, { note, submit: true });
  await recordAudit(deps, actor.viewer, actor.address, {
    action: `payout_${action}`,
    target: String(row.trace_id),
    merchant_id: row.merchant_id,
    outcome: outcome.kind === 'changed' ? 'done' : 'refused',
    detail: outcome.kind === 'changed' ? `now ${outcome.row.status}${reason ? `; reason: ${reason}` : ''}` : outcome.kind,
  });
  return outcome;
}

/** The subscription the viewer found cancelled through the API's own cancel path; not_found is not audited. */
export async function cancelFromBackOffice(deps: OperationDeps, actor: Actor, found: SubscriptionRow): Promise<CancelOutcome> {
  const outcome = await cancelSubscription(
    deps,
    found.merchant_id,
    found.subscription_id,
    `cancelled in the back office by ${actor.viewer.email} (${actor.viewer.role})`,
  );
  if (outcome.kind === 'not_found') return outcome;
  const done = outcome.kind === 'canceled' && !outcome.already;
  await recordAudit(deps, actor.viewer, actor.address, {
    action: 'cancel_subscription',
    target: found.subscription_id,
    merchant_id: found.merchant_id,
    outcome: done ? 'done' : 'refused',
    detail: done ? null : `was ${found.status}`,
  });
  return outcome;
}
