// The merchants aggregate over Kysely (merchant-store.ts): a merchant with its applications,
// frontends, gateways (and their processors' webhook events) and routing rules, and the BIN table
// routing reads. None of it is on the hot path's SQL text: a merchant is read once per request and
// these are Kysely-built.
import { type Insertable, sql } from 'kysely';
import type {
  GatewayRow,
  NewGatewayRow,
  ProcessorEventOutcome,
  ProcessorEventRow,
  ProcessorEventTable,
  RoutingRuleRow,
} from '../schema.js';
import type { GatewayPatch, MerchantRecord, MerchantStore, MerchantSummary, NewMerchant } from '../merchant-store.js';
import type { Executor, SqlContext } from './context.js';
import { defaultGatewayLabel } from '../../domain/merchants.js';

/** A new gateway row with a label: its own, or the default one, never the column's empty default. */
function labelled(row: NewGatewayRow): NewGatewayRow {
  return row.label !== undefined && row.label !== '' ? row : { ...row, label: defaultGatewayLabel(row.connector, row.gateway_id) };
}

/**
 * The lists of processor events, apart so that a test reads their plans (migration 0017): each
 * walks its index from the newest end and stops at `limit`, however many events the gateway
 * has. event_id breaks ties of the same millisecond, so the order is the same on both databases.
 */
export const processorEventLists = {
  /** processor_events_trace, a partial index: the term on trace_id being set lets both planners use it. */
  ofTransaction: (db: Executor, trace_id: number, limit: number) =>
    db
      .selectFrom('processor_events')
      .selectAll()
      .where('trace_id', '=', trace_id)
      .where('trace_id', 'is not', null)
      .orderBy('received_at_ms', 'desc')
      .orderBy('event_id', 'desc')
      .limit(limit),
  /** processor_events_gateway, or processor_events_gateway_outcome for one outcome (an unmatched one is rare among many). */
  ofGateway: (db: Executor, gateway_id: string, outcome: ProcessorEventOutcome | null, limit: number) => {
    let query = db.selectFrom('processor_events').selectAll().where('gateway_id', '=', gateway_id);
    if (outcome !== null) query = query.where('outcome', '=', outcome);
    return query.orderBy('received_at_ms', 'desc').orderBy('event_id', 'desc').limit(limit);
  },
};

export class SqlMerchantStore implements MerchantStore {
  private readonly db: Executor;

  constructor(ctx: SqlContext) {
    this.db = ctx.db;
  }

  async insert(merchant: NewMerchant): Promise<'created' | 'exists'> {
    const inserted = await this.db
      .insertInto('merchants')
      .values({ merchant_id: merchant.merchant_id, secret_sealed: merchant.secret_sealed, created_at_ms: merchant.created_at_ms })
      .onConflict((oc) => oc.column('merchant_id').doNothing())
      .returning('merchant_id')
      .executeTakeFirst();
    if (!inserted) return 'exists';
    for (const application_key of merchant.applications) {
      await this.db
        .insertInto('applications')
        .values({ merchant_id: merchant.merchant_id, application_key, created_at_ms: merchant.created_at_ms })
        .execute();
    }
    for (const frontend of merchant.frontends) {
      await this.db
        .insertInto('frontends')
        .values({
          merchant_id: merchant.merchant_id,
          name: frontend.name,
          currency: frontend.currency,
          created_at_ms: merchant.created_at_ms,
        })
        .execute();
    }
    for (const gateway of merchant.gateways) await this.db.insertInto('gateways').values(labelled(gateway)).execute();
    return 'created';
  }

  async get(merchant_id: string): Promise<MerchantRecord | null> {
    const merchant = await this.db.selectFrom('merchants').selectAll().where('merchant_id', '=', merchant_id).executeTakeFirst();
    if (!merchant) return null;
    const [applications, frontends, gateways, routing_rules] = await Promise.all([
      this.db.selectFrom('applications').select('application_key').where('merchant_id', '=', merchant_id).execute(),
      this.db.selectFrom('frontends').select(['name', 'currency']).where('merchant_id', '=', merchant_id).execute(),
      this.db
        .selectFrom('gateways')
        .selectAll()
        .where('merchant_id', '=', merchant_id)
        .orderBy('created_at_ms')
        .orderBy('gateway_id')
        .execute(),
      this.db
        .selectFrom('routing_rules')
        .selectAll()
        .where('merchant_id', '=', merchant_id)
        .orderBy('priority')
        .orderBy('created_at_ms')
        .orderBy('rule_id')
        .execute(),
    ]);
    return {
      merchant_id: merchant.merchant_id,
      secret_sealed: merchant.secret_sealed,
      applications: applications.map((a) => a.application_key),
      frontends,
      gateways,
      routing_rules,
      v13_body_signature_required: Number(merchant.v13_body_signature_required) === 1,
      disabled_at_ms: merchant.disabled_at_ms === null ? null : Number(merchant.disabled_at_ms),
      previous_secret_sealed: merchant.previous_secret_sealed,
      previous_secret_until_ms: merchant.previous_secret_until_ms === null ? null : Number(merchant.previous_secret_until_ms),
    };
  }

  async getDisplayName(
    merchant_id: string,
    identity: { readonly kind: 'frontend' | 'application_key'; readonly value: string },
  ): Promise<string | null> {
    const row =
      identity.kind === 'frontend'
        ? await this.db
            .selectFrom('frontends')
            .select('display_name')
            .where('merchant_id', '=', merchant_id)
            .where('name', '=', identity.value)
            .executeTakeFirst()
        : await this.db
            .selectFrom('applications')
            .select('display_name')
            .where('merchant_id', '=', merchant_id)
            .where('application_key', '=', identity.value)
            .executeTakeFirst();
    return row?.display_name ?? null;
  }

  async setDisplayName(
    merchant_id: string,
    identity: { readonly kind: 'frontend' | 'application_key'; readonly value: string },
    display_name: string | null,
  ): Promise<boolean> {
    const result =
      identity.kind === 'frontend'
        ? await this.db
            .updateTable('frontends')
            .set({ display_name })
            .where('merchant_id', '=', merchant_id)
            .where('name', '=', identity.value)
            .executeTakeFirst()
        : await this.db
            .updateTable('applications')
            .set({ display_name })
            .where('merchant_id', '=', merchant_id)
            .where('application_key', '=', identity.value)
            .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async setV13BodySignatureRequired(merchant_id: string, required: boolean): Promise<boolean> {
    const result = await this.db
      .updateTable('merchants')
      .set({ v13_body_signature_required: required ? 1 : 0 })
      .where('merchant_id', '=', merchant_id)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async rollSecret(merchant_id: string, new_secret_sealed: string, previous_secret_until_ms: number): Promise<boolean> {
    // The right-hand sides read the row as it was before this UPDATE (both dialects), so the old
    // current secret is what moves to previous_secret_sealed.
    const result = await this.db
      .updateTable('merchants')
      .set((eb) => ({ previous_secret_sealed: eb.ref('secret_sealed'), secret_sealed: new_secret_sealed, previous_secret_until_ms }))
      .where('merchant_id', '=', merchant_id)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async setDisabled(merchant_id: string, disabled_at_ms: number | null): Promise<boolean> {
    const result = await this.db
      .updateTable('merchants')
      .set({ disabled_at_ms: disabled_at_ms === null ? null : sql<number>`coalesce(disabled_at_ms, ${disabled_at_ms})` })
      .where('merchant_id', '=', merchant_id)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async list(after_merchant_id: string, limit: number): Promise<MerchantSummary[]> {
    // Correlated counts: each is a range of the child table's primary key or merchant index, and
    // there are only `limit` of them.
    const rows = await this.db
      .selectFrom('merchants as m')
      .select((eb) => [
        'm.merchant_id',
        'm.created_at_ms',
        'm.disabled_at_ms',
        eb
          .selectFrom('applications as a')
          .select((c) => c.fn.countAll<number>().as('n'))
          .whereRef('a.merchant_id', '=', 'm.merchant_id')
          .as('application_count'),
        eb
          .selectFrom('frontends as f')
          .select((c) => c.fn.countAll<number>().as('n'))
          .whereRef('f.merchant_id', '=', 'm.merchant_id')
          .as('frontend_count'),
        eb
          .selectFrom('gateways as g')
          .select((c) => c.fn.countAll<number>().as('n'))
          .whereRef('g.merchant_id', '=', 'm.merchant_id')
          .as('gateway_count'),
      ])
      .where('m.merchant_id', '>', after_merchant_id)
      .orderBy('m.merchant_id')
      .limit(limit)
      .execute();
    // PostgreSQL answers count(*) as int8 text unless parsed; Number() serves both dialects.
    return rows.map((r) => ({
      merchant_id: r.merchant_id,
      created_at_ms: Number(r.created_at_ms),
      disabled_at_ms: r.disabled_at_ms === null ? null : Number(r.disabled_at_ms),
      application_count: Number(r.application_count ?? 0),
      frontend_count: Number(r.frontend_count ?? 0),
      gateway_count: Number(r.gateway_count ?? 0),
    }));
  }

  async count(): Promise<number> {
    const row = await this.db
      .selectFrom('merchants')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async listIds(limit: number): Promise<string[]> {
    return (await this.db.selectFrom('merchants').select('merchant_id').orderBy('merchant_id').limit(limit).execute()).map(
      (r) => r.merchant_id,
    );
  }

  async getGateway(gateway_id: string): Promise<GatewayRow | null> {
    return (await this.db.selectFrom('gateways').selectAll().where('gateway_id', '=', gateway_id).executeTakeFirst()) ?? null;
  }

  async insertGateway(row: NewGatewayRow): Promise<'created' | 'exists'> {
    const inserted = await this.db
      .insertInto('gateways')
      .values(labelled(row))
      .onConflict((oc) => oc.column('gateway_id').doNothing())
      .returning('gateway_id')
      .executeTakeFirst();
    return inserted ? 'created' : 'exists';
  }

  async listGateways(merchant_id: string | null): Promise<GatewayRow[]> {
    let query = this.db.selectFrom('gateways').selectAll().orderBy('created_at_ms').orderBy('gateway_id');
    if (merchant_id !== null) query = query.where('merchant_id', '=', merchant_id);
    return query.execute();
  }

  async gatewayLabels(gateway_ids: readonly string[]): Promise<Map<string, string>> {
    const unique = [...new Set(gateway_ids)];
    if (unique.length === 0) return new Map();
    const rows = await this.db.selectFrom('gateways').select(['gateway_id', 'label']).where('gateway_id', 'in', unique).execute();
    return new Map(rows.map((r) => [r.gateway_id, r.label]));
  }

  async updateGateway(gateway_id: string, patch: GatewayPatch): Promise<boolean> {
    const result = await this.db.updateTable('gateways').set(patch).where('gateway_id', '=', gateway_id).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async insertProcessorEvent(row: Insertable<ProcessorEventTable>): Promise<boolean> {
    const inserted = await this.db
      .insertInto('processor_events')
      .values(row)
      .onConflict((oc) => oc.columns(['gateway_id', 'event_id']).doNothing())
      .returning('event_id')
      .executeTakeFirst();
    return inserted !== undefined;
  }

  async listProcessorEvents(gateway_id: string, limit: number): Promise<ProcessorEventRow[]> {
    return this.db
      .selectFrom('processor_events')
      .selectAll()
      .where('gateway_id', '=', gateway_id)
      .orderBy('received_at_ms')
      .orderBy('event_id')
      .limit(limit)
      .execute();
  }

  async insertRoutingRule(row: RoutingRuleRow): Promise<void> {
    await this.db.insertInto('routing_rules').values(row).execute();
  }

  async deleteRoutingRule(merchant_id: string, rule_id: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('routing_rules')
      .where('merchant_id', '=', merchant_id)
      .where('rule_id', '=', rule_id)
      .executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }

  async replaceBinRanges(rows: readonly { readonly prefix: string; readonly country: string }[]): Promise<void> {
    await this.db.deleteFrom('bin_ranges').execute();
    // In slices: a statement's parameters are bounded (SQLite 32,766, PostgreSQL 65,535).
    for (let at = 0; at < rows.length; at += 1000)
      await this.db
        .insertInto('bin_ranges')
        .values(rows.slice(at, at + 1000))
        .execute();
  }

  async findBinCountry(prefixes: readonly string[]): Promise<string | null> {
    if (prefixes.length === 0) return null;
    const rows = await this.db
      .selectFrom('bin_ranges')
      .select(['prefix', 'country'])
      .where('prefix', 'in', [...prefixes])
      .execute();
    return rows.sort((a, b) => b.prefix.length - a.prefix.length)[0]?.country ?? null;
  }

  async countBinRanges(): Promise<number> {
    const row = await this.db
      .selectFrom('bin_ranges')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async setGatewayHoldPayouts(gateway_id: string, hold_payouts: boolean): Promise<boolean> {
    const result = await this.db
      .updateTable('gateways')
      .set({ hold_payouts: hold_payouts ? 1 : 0 })
      .where('gateway_id', '=', gateway_id)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async getFrameOrigins(merchant_id: string, application_key: string): Promise<string[] | null> {
    const row = await this.db
      .selectFrom('applications')
      .select('frame_origins')
      .where('merchant_id', '=', merchant_id)
      .where('application_key', '=', application_key)
      .executeTakeFirst();
    if (!row) return null;
    return row.frame_origins.split(' ').filter((origin) => origin !== '');
  }

  async setFrameOrigins(merchant_id: string, application_key: string, origins: readonly string[]): Promise<boolean> {
    const result = await this.db
      .updateTable('applications')
      .set({ frame_origins: origins.join(' ') })
      .where('merchant_id', '=', merchant_id)
      .where('application_key', '=', application_key)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async listProcessorEventsOf(trace_id: number, limit: number): Promise<ProcessorEventRow[]> {
    return processorEventLists.ofTransaction(this.db, trace_id, limit).execute();
  }

  async listGatewayProcessorEvents(gateway_id: string, outcome: ProcessorEventOutcome | null, limit: number): Promise<ProcessorEventRow[]> {
    return processorEventLists.ofGateway(this.db, gateway_id, outcome, limit).execute();
  }
}
