// Migration 0009 (sparse indexes) on a database an older release left behind: built with the
// migrations up to 0008 and holding finished and in-flight transactions. After migrating, the
// indexes hold only the rows their queries ask for, the store's scans find the same rows as
// before, and each scan's plan reads its partial index (on PostgreSQL with sequential scans
// discouraged, so the plan shows whether the index can serve the query at all).
import type { Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { TransactionStatus, TransactionType } from '../../src/domain/transaction-state.js';
import { migrateTo } from '../../src/store/migrations/index.js';
import { transactionScans } from '../../src/store/sql-store.js';
import { SqlText } from '../../src/store/sql-text.js';
import { databaseAt, indexNames, queryPlan as plan } from '../support/old-database.js';
import { storeKinds } from '../support/stores.js';

const T0 = 1_800_000_000_000;

describe.each(storeKinds())('migration 0009 on %s', (kind) => {
  it('keeps only in-flight transactions, payouts and set references in the indexes, and the scans find the same rows', async () => {
    const db = await databaseAt(kind, '0008_pending_notification_indexes');
    expect(await indexNames(db, kind, 'transactions')).toEqual(
      expect.arrayContaining(['transactions_status_created', 'transactions_type_status']),
    );

    await db.insertInto('merchants').values({ merchant_id: 'm-0009', secret_sealed: 'v1:sealed', created_at_ms: T0 }).execute();
    const insert = async (
      order_id: string,
      transaction_type: TransactionType,
      status: TransactionStatus,
      extra: { reference_id?: number; psp_transaction_id?: string } = {},
    ) =>
      Number(
        (
          await db
            .insertInto('transactions')
            .values({
              merchant_id: 'm-0009',
              transaction_type,
              order_id,
              request_fingerprint: 'fp',
              api_version: '1.2',
              identity_kind: 'application_key',
              identity_value: 'app',
              gateway_id: 'gw',
              payment_processor: 'sandbox',
              payment_method: 'card',
              status,
              amount_minor: 100,
              currency: 'USD',
              charge_amount_minor: 100,
              charge_currency: 'USD',
              pin: 'p',
              created_at_ms: T0,
              updated_at_ms: T0,
              ...extra,
            })
            .returning('trace_id')
            .executeTakeFirstOrThrow()
        ).trace_id,
      );
    const approved_sale = await insert('o-sale', 'sale', 'approved', { psp_transaction_id: 'psp-1' });
    const stuck_sale = await insert('o-stuck', 'sale', 'pending');
    const refund = await insert('o-refund', 'refund', 'approved', { reference_id: approved_sale });
    const requested = await insert('o-requested', 'payout', 'requested');
    const interrupted = await insert('o-interrupted', 'payout', 'in progress');
    await insert('o-paid', 'payout', 'approved', { psp_transaction_id: 'psp-2' });

    await migrateTo(db as unknown as Kysely<unknown>, kind, '0009_sparse_indexes');
    expect(await indexNames(db, kind, 'transactions')).toEqual([
      'transactions_cashier_session',
      'transactions_payouts',
      'transactions_pending',
      'transactions_reference',
    ]);
    expect(await indexNames(db, kind, 'notifications')).toEqual([
      'notifications_pending_due',
      'notifications_pending_subscription',
      'notifications_pending_trace',
      'notifications_subscription',
      'notifications_trace',
    ]);

    const ids = async (query: { execute(): Promise<{ trace_id: number | string }[]> }) =>
      (await query.execute()).map((row) => Number(row.trace_id));
    expect(await ids(transactionScans.stuck(db, T0 + 1, 10))).toEqual([stuck_sale]);
    expect(await ids(transactionScans.interruptedPayouts(db, T0 + 1, 10))).toEqual([interrupted]);
    expect(await ids(transactionScans.payoutsByStatus(db, 'requested', null, 10))).toEqual([requested]);
    expect(await ids(db.selectFrom('transactions').selectAll().where('reference_id', '=', approved_sale))).toEqual([refund]);

    const uses = (index: string) => expect.arrayContaining([expect.stringContaining(index)]);
    expect(await plan(db, kind, transactionScans.stuck(db, T0 + 1, 10).compile())).toEqual(uses('transactions_pending'));
    expect(await plan(db, kind, transactionScans.interruptedPayouts(db, T0 + 1, 10).compile())).toEqual(uses('transactions_payouts'));
    expect(await plan(db, kind, transactionScans.payoutsByStatus(db, 'requested', null, 10).compile())).toEqual(
      uses('transactions_payouts'),
    );
    const text = new SqlText(kind);
    // listCashierTransactions' statement, and the look-ups by reference and by subscription.
    expect(await plan(db, kind, text.selectAll('transactions', { cashier_session_id: 'cs-1' }, 'trace_id'))).toEqual(
      uses('transactions_cashier_session'),
    );
    expect(await plan(db, kind, db.selectFrom('transactions').selectAll().where('reference_id', '=', approved_sale).compile())).toEqual(
      uses('transactions_reference'),
    );
    expect(
      await plan(
        db,
        kind,
        db
          .selectFrom('notifications')
          .selectAll()
          .where('kind', '=', 'subscription_event')
          .where('subscription_id', '=', 'sub-1')
          .orderBy('id')
          .compile(),
      ),
    ).toEqual(uses('notifications_subscription'));
  });
});
