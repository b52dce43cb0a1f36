// The sandbox's own admin token over Kysely (sandbox-admin-store.ts): one row, id 1. The insert
// does nothing when the row exists, so two instances starting together keep the first one's token.
import type { SandboxAdminStore } from '../sandbox-admin-store.js';
import type { Executor, SqlContext } from './context.js';

export class SqlSandboxAdminStore implements SandboxAdminStore {
  private readonly db: Executor;

  constructor(ctx: SqlContext) {
    this.db = ctx.db;
  }

  async getAdminToken(): Promise<string | null> {
    const row = await this.db.selectFrom('sandbox_admin_token').select('token_sealed').where('id', '=', 1).executeTakeFirst();
    return row?.token_sealed ?? null;
  }

  async insertAdminToken(token_sealed: string, created_at_ms: number): Promise<boolean> {
    const result = await this.db
      .insertInto('sandbox_admin_token')
      .values({ id: 1, token_sealed, created_at_ms })
      .onConflict((oc) => oc.column('id').doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
  }
}
