// The body of a status notification (spec §6.2). Version 1.1 with `frontend` for transactions
// started in the frontend form, 1.2 with `application_key` for the others. Built once when the
// status changes and stored; the sender only adds the signature, so every resend is identical.
import type { TransactionRow } from '../store/schema.js';

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
  if (row.card_token && row.status === 'approved' && row.transaction_type === 'sale') payload.card_token = row.card_token;
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
