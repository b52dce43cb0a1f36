// The subscriptions aggregate over Kysely (subscription-store.ts): plans with their prices,
// subscriptions with their change history, and the billing worker's claims.
import { type ExpressionBuilder, type Insertable, sql } from 'kysely';
import type {
  Database,
  NewSubscriptionRow,
  SubscriptionChangeTable,
  SubscriptionPlanRow,
  SubscriptionPlanTable,
  SubscriptionPriceTable,
  SubscriptionRow,
} from '../schema.js';
import type { LeaseTimes } from '../notification-store.js';
import type {
  PageRequest,
  PlanPatch,
  PlanRecord,
  SubscriptionFilter,
  SubscriptionPatch,
  SubscriptionStore,
} from '../subscription-store.js';
import type { Executor, SqlContext } from './context.js';
import { claimSkippingLocked, lockForUpdate } from './dialect.js';

/**
 * A subscription whose merchant is not disabled: a disabled merchant's renewals are held, neither
 * claimed nor counted as due work, until it is enabled again (docs/subscriptions.md §5.6).
 */
function merchantEnabled(eb: ExpressionBuilder<Database, 'subscriptions'>) {
  return eb.not(
    eb.exists(
      eb
        .selectFrom('merchants')
        .select('merchants.merchant_id')
        .whereRef('merchants.merchant_id', '=', 'subscriptions.merchant_id')
        .where('merchants.disabled_at_ms', 'is not', null),
    ),
  );
}

export class SqlSubscriptionStore implements SubscriptionStore {
  private readonly db: Executor;

  constructor(private readonly ctx: SqlContext) {
    this.db = ctx.db;
  }

  async insertPlan(plan: Insertable<SubscriptionPlanTable>, prices: readonly Insertable<SubscriptionPriceTable>[]): Promise<void> {
    await this.db.insertInto('subscription_plans').values(plan).execute();
    if (prices.length > 0)
      await this.db
        .insertInto('subscription_prices')
        .values([...prices])
        .execute();
  }

  private async withPrices(plans: SubscriptionPlanRow[]): Promise<PlanRecord[]> {
    if (plans.length === 0) return [];
    const prices = await this.db
      .selectFrom('subscription_prices')
      .selectAll()
      .where(
        'plan_id',
        'in',
        plans.map((p) => p.plan_id),
      )
      .orderBy('position')
      .execute();
    return plans.map((plan) => ({ plan, prices: prices.filter((p) => p.plan_id === plan.plan_id) }));
  }

  async getPlan(merchant_id: string, plan_id: string): Promise<PlanRecord | null> {
    const plan = await this.db
      .selectFrom('subscription_plans')
      .selectAll()
      .where('merchant_id', '=', merchant_id)
      .where('plan_id', '=', plan_id)
      .executeTakeFirst();
    if (!plan) return null;
    return (await this.withPrices([plan]))[0] ?? null;
  }

  async listPlans(merchant_id: string, page: PageRequest): Promise<{ plans: PlanRecord[]; total: number }> {
    const visible = this.db.selectFrom('subscription_plans').where('merchant_id', '=', merchant_id).where('status', '!=', 'deleted');
    const [rows, count] = await Promise.all([
      visible.selectAll().orderBy('created_at_ms').orderBy('plan_id').offset(page.offset).limit(page.limit).execute(),
      visible.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { plans: await this.withPrices(rows), total: Number(count.n) };
  }

  async updatePlan(merchant_id: string, plan_id: string, patch: PlanPatch): Promise<boolean> {
    const result = await this.db
      .updateTable('subscription_plans')
      .set(patch)
      .where('merchant_id', '=', merchant_id)
      .where('plan_id', '=', plan_id)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async insert(row: NewSubscriptionRow): Promise<boolean> {
    const inserted = await this.db
      .insertInto('subscriptions')
      .values(row)
      // The conflict target names the partial index by its columns and predicate; the predicate
      // must be the literal of the index (a bound parameter would match no index).
      .onConflict((oc) =>
        oc.columns(['merchant_id', 'cid', 'plan_id', 'price_id', 'card_token']).where('status', '=', sql.lit('active')).doNothing(),
      )
      .executeTakeFirst();
    return Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  async findActive(
    key: Pick<NewSubscriptionRow, 'merchant_id' | 'cid' | 'plan_id' | 'price_id' | 'card_token'>,
  ): Promise<SubscriptionRow | null> {
    return (
      (await this.db
        .selectFrom('subscriptions')
        .selectAll()
        .where('merchant_id', '=', key.merchant_id)
        .where('cid', '=', key.cid)
        .where('plan_id', '=', key.plan_id)
        .where('price_id', '=', key.price_id)
        .where('card_token', '=', key.card_token)
        .where('status', '=', 'active')
        .executeTakeFirst()) ?? null
    );
  }

  async get(merchant_id: string, subscription_id: string): Promise<SubscriptionRow | null> {
    return (
      (await this.db
        .selectFrom('subscriptions')
        .selectAll()
        .where('merchant_id', '=', merchant_id)
        .where('subscription_id', '=', subscription_id)
        .executeTakeFirst()) ?? null
    );
  }

  async lock(subscription_id: string): Promise<SubscriptionRow | null> {
    const query = lockForUpdate(
      this.ctx.dialect,
      this.db.selectFrom('subscriptions').selectAll().where('subscription_id', '=', subscription_id),
    );
    return (await query.executeTakeFirst()) ?? null;
  }

  async list(
    merchant_id: string,
    filter: SubscriptionFilter,
    page: PageRequest,
  ): Promise<{ subscriptions: SubscriptionRow[]; total: number }> {
    let selected = this.db.selectFrom('subscriptions').where('merchant_id', '=', merchant_id);
    if (filter.plan_id !== undefined) selected = selected.where('plan_id', '=', filter.plan_id);
    if (filter.cid !== undefined) selected = selected.where('cid', '=', filter.cid);
    if (filter.status !== undefined) selected = selected.where('status', '=', filter.status);
    const [subscriptions, count] = await Promise.all([
      selected.selectAll().orderBy('created_at_ms', 'desc').orderBy('subscription_id').offset(page.offset).limit(page.limit).execute(),
      selected.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { subscriptions, total: Number(count.n) };
  }

  async updateIfVersion(subscription_id: string, version: number, patch: SubscriptionPatch): Promise<boolean> {
    const result = await this.db
      .updateTable('subscriptions')
      .set({ ...patch, version: version + 1 })
      .where('subscription_id', '=', subscription_id)
      .where('version', '=', version)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async insertChange(row: Insertable<SubscriptionChangeTable>): Promise<void> {
    await this.db.insertInto('subscription_changes').values(row).execute();
  }

  async listChanges(subscription_id: string) {
    return this.db
      .selectFrom('subscription_changes')
      .select(['from_status', 'to_status', 'event', 'reason', 'at_ms'])
      .where('subscription_id', '=', subscription_id)
      .orderBy('id')
      .execute();
  }

  async claimDue(at: LeaseTimes, limit: number, lease_until_ms: number, owner: string): Promise<SubscriptionRow[]> {
    const unclaimed = (eb: ExpressionBuilder<Database, 'subscriptions'>) =>
      eb.or([eb('lease_until_ms', 'is', null), eb('lease_until_ms', '<=', at.wall_ms)]);
    const candidates = claimSkippingLocked(
      this.ctx.dialect,
      this.db
        .selectFrom('subscriptions')
        .select('subscription_id')
        .where('status', '=', 'active')
        .where('next_charge_at_ms', '<=', at.due_ms)
        .where(unclaimed)
        .where(merchantEnabled)
        .orderBy('next_charge_at_ms')
        .limit(limit),
    );
    const ids = (await candidates.execute()).map((r) => r.subscription_id);
    if (ids.length === 0) return [];
    await this.db
      .updateTable('subscriptions')
      .set({ lease_until_ms, lease_owner: owner })
      .where('subscription_id', 'in', ids)
      .where(unclaimed)
      .execute();
    return this.db
      .selectFrom('subscriptions')
      .selectAll()
      .where('subscription_id', 'in', ids)
      .where('lease_owner', '=', owner)
      .where('lease_until_ms', '=', lease_until_ms)
      .orderBy('next_charge_at_ms')
      .execute();
  }

  async setLease(subscription_id: string, owner: string, lease_until_ms: number | null): Promise<void> {
    await this.db
      .updateTable('subscriptions')
      .set({ lease_until_ms, lease_owner: lease_until_ms === null ? null : owner })
      .where('subscription_id', '=', subscription_id)
      .where('lease_owner', '=', owner)
      .execute();
  }

  async countDue(now_ms: number): Promise<number> {
    const row = await this.db
      .selectFrom('subscriptions')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('status', '=', 'active')
      .where('next_charge_at_ms', '<=', now_ms)
      .where(merchantEnabled)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async listAll(merchant_id: string | null, limit: number): Promise<SubscriptionRow[]> {
    let query = this.db.selectFrom('subscriptions').selectAll();
    if (merchant_id !== null) query = query.where('merchant_id', '=', merchant_id);
    return query.orderBy('created_at_ms', 'desc').orderBy('subscription_id', 'desc').limit(limit).execute();
  }

  async getAny(subscription_id: string): Promise<SubscriptionRow | null> {
    return (
      (await this.db.selectFrom('subscriptions').selectAll().where('subscription_id', '=', subscription_id).executeTakeFirst()) ?? null
    );
  }

  async listAllPlans(merchant_id: string | null, limit: number): Promise<SubscriptionPlanRow[]> {
    let query = this.db.selectFrom('subscription_plans').selectAll().where('status', '<>', 'deleted');
    if (merchant_id !== null) query = query.where('merchant_id', '=', merchant_id);
    return query.orderBy('created_at_ms', 'desc').orderBy('plan_id', 'desc').limit(limit).execute();
  }
}
