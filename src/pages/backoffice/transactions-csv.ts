// The back office's CSV export of a transactions search (docs/backoffice.md): its header and one
// line per transaction, every field defused so that a spreadsheet never runs what a customer typed.
// The gateway is named by its label, as every page names it; its id follows in the last column,
// gateway_id, for a script that matches on it.
import { gatewayName, majorUnits } from './format.js';
import type { GatewayLabels, TransactionShown } from './records.js';
import { merchantOrderId } from './transactions.js';

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
  'trace_id',
  'created_at',
  'merchant_id',
  'transaction_type',
  'status',
  'order_id',
  'amount',
  'currency',
  'amount_minor',
  'payment_method',
  'gateway',
  'processor_transaction_id',
  'card',
  'pin',
  'reference_id',
  'error_code',
  'error_details',
  'gateway_id',
] as const;

export const CSV_HEADER = CSV_COLUMNS.join(',');

/** `labels`: the gateways' labels by id (a gateway without one is named by its id). */
export function csvLine(row: TransactionShown, labels: GatewayLabels): string {
  const amount = majorUnits(row.amount_minor, row.currency);
  return [
    row.trace_id,
    new Date(row.created_at_ms).toISOString(),
    row.merchant_id,
    row.transaction_type,
    row.status,
    merchantOrderId(row),
    amount,
    row.currency,
    row.amount_minor,
    row.payment_method,
    gatewayName(labels, row.gateway_id),
    row.psp_transaction_id,
    row.card_masked,
    row.pin,
    row.reference_id,
    row.error_code,
    row.error_details,
    row.gateway_id,
  ]
    .map(csvField)
    .join(',');
}
