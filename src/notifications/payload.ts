// The body of a status notification (spec §6.2). Version 1.1 with `frontend` for transactions
// started in the frontend form, 1.2 with `application_key` for the others. Built once when the
// status changes and stored; the sender only adds the signature, so every resend is identical.
// The operator's test notification has the same fields for no transaction, marked as a test.
import type { TransactionRow } from '../domain/transaction-record.js';
import { cardTokenShown } from '../domain/transaction-state.js';

export type NotificationPayload = Record<string, string | number | null>;

export function buildNotificationPayload(row: TransactionRow, timestamp: number): NotificationPayload {
  const variables = row.variables_json ? (JSON.parse(row.variables_json) as Record<string, string>) : {};
  const payload: NotificationPayload = {
    transaction_type: row.transaction_type,
    transaction_status: row.status,
    transaction_id: row.psp_transaction_id ?? '',
    trace_id: row.trace_id,
    // A cashier transaction is notified with its session's order_id (its own order_id is internal).
    order_id: row.cashier_order_id ?? row.order_id,
    [row.identity_kind === 'frontend' ? 'frontend' : 'application_key']: row.identity_value,
    merchant_id: row.merchant_id,
    pin: row.pin,
    amount: row.amount_minor,
    currency: row.currency,
    charge_amount: row.charge_amount_minor,
    charge_currency: row.charge_currency,
    payment_method: row.payment_method,
    payment_processor: row.payment_processor,
    gateway: row.gateway_id,
    version: row.identity_kind === 'frontend' ? '1.1' : '1.2',
    timestamp,
  };
  // A cascade attempt (a retry of the merchant's sale on another gateway) says so (spec §6.2).
  if (row.cascade_level > 0) {
    payload.is_cascade = 1;
    payload.cascade_level = row.cascade_level;
  }
  if (row.card_masked) payload.card_number = row.card_masked;
  if (row.card_brand) payload.card_type = row.card_brand;
  if (row.card_exp) payload.card_exp = row.card_exp;
  if (row.card_token && cardTokenShown(row)) payload.card_token = row.card_token;
  // Cashier transactions carry the session's auth_token (spec §6.2).
  if (row.cashier_auth_token) payload.auth_token = row.cashier_auth_token;
  if (row.error_code !== null) payload.error_code = row.error_code;
  if (row.error_details !== null) payload.error_details = row.error_details;
  if (row.reference_id !== null) payload.reference_id = row.reference_id;
  for (const name of ['variable1', 'variable2', 'variable3'] as const) {
    if (typeof variables[name] === 'string') payload[name] = variables[name]!;
  }
  return payload;
}

/** Marks an operator's test notification (operations/merchant-credentials.ts); no real notification has it. */
export const TEST_NOTIFICATION_FIELD = 'test';

/**
 * The body of an operator's test notification: the §6.2 fields of a real one, for no
 * transaction. trace_id 0 is never a transaction's; the order_id `test-notification-<unix s>` is
 * no order of the merchant's; the status is `pending` with amount 0, so a receiver that ignores
 * the `test` mark still ships nothing. The variant is the merchant's first application's (1.2),
 * or its first frontend's (1.1) when it has no application.
 */
export function buildTestNotificationPayload(
  merchant: {
    readonly merchant_id: string;
    readonly applications: readonly string[];
    readonly frontends: readonly { readonly name: string; readonly currency: string }[];
  },
  timestamp: number,
): NotificationPayload {
  const application_key = merchant.applications[0];
  const frontend = merchant.frontends[0];
  const by_frontend = application_key === undefined && frontend !== undefined;
  const currency = frontend?.currency ?? 'USD';
  return {
    transaction_type: 'sale',
    transaction_status: 'pending',
    transaction_id: '',
    trace_id: 0,
    order_id: `test-notification-${timestamp}`,
    [by_frontend ? 'frontend' : 'application_key']: by_frontend ? frontend.name : (application_key ?? ''),
    merchant_id: merchant.merchant_id,
    pin: 'test',
    amount: 0,
    currency,
    charge_amount: 0,
    charge_currency: currency,
    payment_method: 'card',
    payment_processor: 'test',
    version: by_frontend ? '1.1' : '1.2',
    timestamp,
    [TEST_NOTIFICATION_FIELD]: '1',
  };
}
