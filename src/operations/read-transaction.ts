// A merchant reads one of its transactions. Another merchant's transaction is reported
// exactly like a missing one, so trace_ids reveal nothing across merchants.
import { buildNotificationPayload } from '../notifications/payload.js';
import type { OperationDeps } from './deps.js';

export type ReadOutcome =
  { readonly kind: 'found'; readonly fields: Record<string, string | number | null> } | { readonly kind: 'not_found' };

export async function readTransaction(deps: OperationDeps, merchant_id: string, trace_id: number): Promise<ReadOutcome> {
  const row = await deps.store.transactions.get(trace_id);
  if (!row || row.merchant_id !== merchant_id) return { kind: 'not_found' };
  // The same view a notification gives (masked card, charge amounts), without its own version/timestamp.
  const { version: _version, timestamp: _timestamp, ...fields } = buildNotificationPayload(row, 0);
  return { kind: 'found', fields };
}
