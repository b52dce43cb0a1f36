// The instance record over Kysely (instance-store.ts): one row, id 1, replaced at each start.
import type { InstanceRecord, InstanceStore } from '../instance-store.js';
import type { Executor, SqlContext } from './context.js';

export class SqlInstanceStore implements InstanceStore {
  private readonly db: Executor;

  constructor(ctx: SqlContext) {
    this.db = ctx.db;
  }

  async recordInstance(record: InstanceRecord): Promise<void> {
    const values = {
      public_url: record.public_url,
      public_url_configured: record.public_url_configured ? 1 : 0,
      environment: record.environment,
      started_at_ms: record.started_at_ms,
    };
    await this.db
      .insertInto('instance_record')
      .values({ id: 1, ...values })
      .onConflict((oc) => oc.column('id').doUpdateSet(values))
      .execute();
  }

  async lastInstance(): Promise<InstanceRecord | null> {
    const row = await this.db.selectFrom('instance_record').selectAll().where('id', '=', 1).executeTakeFirst();
    return row
      ? {
          public_url: row.public_url,
          public_url_configured: row.public_url_configured === 1,
          environment: row.environment,
          started_at_ms: row.started_at_ms,
        }
      : null;
  }
}
