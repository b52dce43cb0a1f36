// The authorizations aggregate over Kysely (authorization-store.ts), on both databases.
import type { AuthorizationActionRow, AuthorizationActionState } from '../../domain/authorization-record.js';
import type { TransactionRow } from '../../domain/transaction-record.js';
import type { AuthorizationActionPatch, AuthorizationStore, NewAuthorizationAction } from '../authorization-store.js';
import type { Executor, SqlContext } from './context.js';

export class SqlAuthorizationStore implements AuthorizationStore {
  private readonly db: Executor;

  constructor(ctx: SqlContext) {
    this.db = ctx.db;
  }

  async reserveAction(row: NewAuthorizationAction): Promise<boolean> {
    const result = await this.db
      .insertInto('authorization_actions')
      .values(row)
      .onConflict((oc) => oc.column('trace_id').doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
  }

  async getAction(trace_id: number): Promise<AuthorizationActionRow | null> {
    return (await this.db.selectFrom('authorization_actions').selectAll().where('trace_id', '=', trace_id).executeTakeFirst()) ?? null;
  }

  async updateAction(trace_id: number, from_state: AuthorizationActionState, patch: AuthorizationActionPatch): Promise<boolean> {
    const result = await this.db
      .updateTable('authorization_actions')
      .set(patch)
      .where('trace_id', '=', trace_id)
      .where('state', '=', from_state)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async deleteAction(trace_id: number, from_state: AuthorizationActionState): Promise<boolean> {
    const result = await this.db
      .deleteFrom('authorization_actions')
      .where('trace_id', '=', trace_id)
      .where('state', '=', from_state)
      .executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }

  async listUnsettled(updated_before_ms: number, limit: number): Promise<AuthorizationActionRow[]> {
    return this.db
      .selectFrom('authorization_actions')
      .selectAll()
      .where('state', '<>', 'done')
      .where('updated_at_ms', '<', updated_before_ms)
      .orderBy('updated_at_ms')
      .limit(limit)
      .execute();
  }

  async listExpired(created_before_ms: number, limit: number): Promise<TransactionRow[]> {
    return this.db
      .selectFrom('transactions')
      .selectAll('transactions')
      .where('transactions.transaction_type', '=', 'authorize')
      .where('transactions.status', '=', 'authorized')
      .where('transactions.created_at_ms', '<', created_before_ms)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('authorization_actions').select('trace_id').whereRef('authorization_actions.trace_id', '=', 'transactions.trace_id'),
          ),
        ),
      )
      .orderBy('transactions.created_at_ms')
      .limit(limit)
      .execute();
  }
}
