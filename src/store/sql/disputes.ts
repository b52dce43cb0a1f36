// The disputes aggregate over Kysely (dispute-store.ts), on both databases.
import { sql } from 'kysely';
import type { DisputeRow } from '../../domain/dispute-record.js';
import type { DisputeFilter, DisputePatch, DisputeStore } from '../dispute-store.js';
import type { Executor, SqlContext } from './context.js';

export class SqlDisputeStore implements DisputeStore {
  private readonly db: Executor;

  constructor(ctx: SqlContext) {
    this.db = ctx.db;
  }

  async insertIfAbsent(row: DisputeRow): Promise<boolean> {
    const result = await this.db
      .insertInto('disputes')
      .values(row)
      .onConflict((oc) => oc.columns(['gateway_id', 'psp_dispute_id']).doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
  }

  async get(gateway_id: string, psp_dispute_id: string): Promise<DisputeRow | null> {
    return (
      (await this.db
        .selectFrom('disputes')
        .selectAll()
        .where('gateway_id', '=', gateway_id)
        .where('psp_dispute_id', '=', psp_dispute_id)
        .executeTakeFirst()) ?? null
    );
  }

  async update(gateway_id: string, psp_dispute_id: string, patch: DisputePatch): Promise<void> {
    await this.db
      .updateTable('disputes')
      .set(patch)
      .where('gateway_id', '=', gateway_id)
      .where('psp_dispute_id', '=', psp_dispute_id)
      .execute();
  }

  async listForTransaction(trace_id: number, limit: number): Promise<DisputeRow[]> {
    return this.db.selectFrom('disputes').selectAll().where('trace_id', '=', trace_id).orderBy('opened_at_ms').limit(limit).execute();
  }

  async list(filter: DisputeFilter, limit: number): Promise<DisputeRow[]> {
    let query = this.db.selectFrom('disputes').selectAll();
    if (filter.merchant_id !== null) query = query.where('merchant_id', '=', filter.merchant_id);
    if (filter.stages.length > 0) query = query.where('stage', 'in', [...filter.stages]);
    // Soonest deadline first; a dispute without one after those that have one (both databases).
    return query
      .orderBy(sql`CASE WHEN evidence_due_at_ms IS NULL THEN 1 ELSE 0 END`)
      .orderBy('evidence_due_at_ms')
      .orderBy('opened_at_ms', 'desc')
      .limit(limit)
      .execute();
  }
}
