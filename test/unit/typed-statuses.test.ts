// Statuses are typed end to end (issue 25 item 3): the records the store hands out and takes carry
// the state machines' unions, so a status no state machine knows does not compile. The
// `@ts-expect-error` lines below are the test: `npm test` type-checks this file first, and if a
// column went back to plain `string`, the expected error would vanish and the type check fail.
// The runtime half checks that the unions the columns use are the statuses the tables know.
import { describe, expect, it } from 'vitest';
import type { CashierSessionRow } from '../../src/domain/cashier-record.js';
import type { NotificationRow } from '../../src/domain/notification-record.js';
import type { SubscriptionRow } from '../../src/domain/subscription-record.js';
import type { StatusChangeRow, TransactionRow } from '../../src/domain/transaction-record.js';
import {
  DEPOSIT_TRANSITIONS,
  isTransactionStatus,
  PAYOUT_TRANSITIONS,
  TRANSACTION_STATUSES,
  type TransactionStatus,
} from '../../src/domain/transaction-state.js';
import type { TransactionStore } from '../../src/store/transaction-store.js';

type Status<R extends { status: unknown }> = R['status'];

// Each is a value the type must refuse.
// @ts-expect-error 'refunded' is no transaction status (a refund is its own transaction)
const unknown_transaction_status: Status<TransactionRow> = 'refunded';
// @ts-expect-error a status change's to_status is a transaction status too
const unknown_change: StatusChangeRow['to_status'] = 'done';
// @ts-expect-error 'paused' is no subscription status
const unknown_subscription_status: Status<SubscriptionRow> = 'paused';
// @ts-expect-error 'open' is no order status
const unknown_order_status: CashierSessionRow['order_status'] = 'open';
// @ts-expect-error 'sent' is no notification state
const unknown_notification_state: NotificationRow['state'] = 'sent';

/** The store's compare-and-set takes only statuses the state machine knows. */
function compareAndSet(store: TransactionStore, trace_id: number): Promise<boolean> {
  // @ts-expect-error a plain string is not a TransactionStatus
  return store.updateIfStatus(trace_id, 'whatever' as string, {});
}

describe('statuses typed end to end', () => {
  it('the refused values above are indeed none of the known statuses', () => {
    for (const value of [unknown_transaction_status, unknown_change]) expect(isTransactionStatus(value)).toBe(false);
    expect([unknown_subscription_status, unknown_order_status, unknown_notification_state]).toHaveLength(3);
    expect(typeof compareAndSet).toBe('function');
  });

  it('the transaction status union is every status of the deposit and payout tables', () => {
    // Exhaustive both ways by its type: a status missing from the union, or one the union has
    // and this list lacks, does not compile.
    const every_status: Record<TransactionStatus, true> = {
      pending: true,
      requested: true,
      pending_async: true,
      authorized: true,
      'in progress': true,
      approved: true,
      declined: true,
      rejected: true,
      chargeback: true,
      reversed: true,
      cancelled: true,
      error: true,
    };
    const in_tables = new Set<string>();
    for (const table of [DEPOSIT_TRANSITIONS, PAYOUT_TRANSITIONS]) {
      for (const [from, targets] of Object.entries(table)) {
        in_tables.add(from);
        for (const to of targets as readonly string[]) in_tables.add(to);
      }
    }
    expect([...in_tables].sort()).toEqual(Object.keys(every_status).sort());
    expect([...TRANSACTION_STATUSES]).toEqual(Object.keys(every_status).sort());
  });
});
