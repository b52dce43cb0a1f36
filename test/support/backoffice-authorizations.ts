// What the back office's authorization and dispute tests share (docs/backoffice.md, decisions §16):
// an authorization made through POST /api/process, a chargeback made with the sandbox's trigger,
// and the notifications that reported a transaction's status.
import { expect } from 'vitest';
import type { CreatedMerchant } from '../../src/domain/merchants.js';
import { sale } from './backoffice.js';
import { ADMIN_TOKEN, type TestGateway } from './gateway.js';

/** An authorization (transaction_type `authorize`) of `amount` minor units, answered `authorized`. */
export async function authorize(
  gw: TestGateway,
  merchant: CreatedMerchant,
  overrides: Record<string, unknown> = {},
): Promise<{ trace_id: number; order_id: string }> {
  const made = await sale(gw, merchant, { transaction_type: 'authorize', ...overrides });
  expect(made.status).toBe('authorized');
  return made;
}

/** POST /sandbox/transactions/{trace_id}/chargeback: a dispute of an approved payment, now. */
export async function chargeback(gw: TestGateway, trace_id: number): Promise<void> {
  const response = await fetch(`${gw.url}/sandbox/transactions/${trace_id}/chargeback`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: '{}',
  });
  expect([response.status, await response.json()]).toMatchObject([200, { status: 0, transaction_status: 'chargeback' }]);
}

/** How many of the transaction's notifications report `status` (one per status it was notified of). */
export async function notificationsReporting(gw: TestGateway, trace_id: number, status: string): Promise<number> {
  const rows = await gw.gateway.deps.store.notifications.listOfTransaction(trace_id);
  return rows.filter((row) => (JSON.parse(row.payload_json) as { transaction_status?: string }).transaction_status === status).length;
}
