// The sandbox clock's offset over Kysely (sandbox-clock-store.ts): one row, id 1, shared by every
// instance of the database.
import type { SandboxClockStore } from '../sandbox-clock-store.js';
import type { Executor, SqlContext } from './context.js';

export class SqlSandboxClockStore implements SandboxClockStore {
  private readonly db: Executor;

  constructor(ctx: SqlContext) {
    this.db = ctx.db;
  }

  async getOffset(): Promise<number> {
    const row = await this.db.selectFrom('sandbox_clock').select('offset_ms').where('id', '=', 1).executeTakeFirst();
    return row ? Number(row.offset_ms) : 0;
  }

  async setOffset(offset_ms: number): Promise<void> {
    await this.db
      .insertInto('sandbox_clock')
      .values({ id: 1, offset_ms })
      .onConflict((oc) => oc.column('id').doUpdateSet({ offset_ms }))
      .execute();
  }
}
