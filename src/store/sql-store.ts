// The store over Kysely. One implementation serves both dialects; the few differences
// (row locks, SKIP LOCKED) are flagged by `dialect` right where they occur.
import { type Insertable, type Kysely, type Transaction, sql } from 'kysely';
import type {
  CardVaultRow, Database, DueActionTable, NewTransactionRow, NotificationAttemptTable, NotificationRow,
  NotificationTable, StatusChangeTable, TransactionRow,
} from './schema.js';
import type { Dialect, MerchantRecord, NewMerchant, Store, StoreOps, TransactionPatch } from './store.js';
import { migrateToLatest } from './migrations.js';

type Executor = Kysely<Database> | Transaction<Database>;

class SqlOps implements StoreOps {
  constructor(protected readonly db: Executor, readonly dialect: Dialect) {}

  async insertMerchant(merchant: NewMerchant): Promise<'created' | 'exists'> {
    const inserted = await this.db.insertInto('merchants')
      .values({ merchant_id: merchant.merchant_id, secret_sealed: merchant.secret_sealed, created_at_ms: merchant.created_at_ms })
      .onConflict((oc) => oc.column('merchant_id').doNothing())
      .returning('merchant_id')
      .executeTakeFirst();
    if (!inserted) return 'exists';
    for (const application_key of merchant.applications) {
      await this.db.insertInto('applications')
        .values({ merchant_id: merchant.merchant_id, application_key, created_at_ms: merchant.created_at_ms }).execute();
    }
    for (const frontend of merchant.frontends) {
      await this.db.insertInto('frontends')
        .values({ merchant_id: merchant.merchant_id, name: frontend.name, currency: frontend.currency, created_at_ms: merchant.created_at_ms })
        .execute();
    }
    for (const gateway of merchant.gateways) {
      await this.db.insertInto('gateways')
        .values({ ...gateway, merchant_id: merchant.merchant_id, created_at_ms: merchant.created_at_ms }).execute();
    }
    return 'created';
  }

  async getMerchant(merchant_id: string): Promise<MerchantRecord | null> {
    const merchant = await this.db.selectFrom('merchants').selectAll().where('merchant_id', '=', merchant_id).executeTakeFirst();
    if (!merchant) return null;
    const [applications, frontends, gateways] = await Promise.all([
      this.db.selectFrom('applications').select('application_key').where('merchant_id', '=', merchant_id).execute(),
      this.db.selectFrom('frontends').select(['name', 'currency']).where('merchant_id', '=', merchant_id).execute(),
      this.db.selectFrom('gateways').selectAll().where('merchant_id', '=', merchant_id).orderBy('created_at_ms').orderBy('gateway_id').execute(),
    ]);
    return {
      merchant_id: merchant.merchant_id,
      secret_sealed: merchant.secret_sealed,
      applications: applications.map((a) => a.application_key),
      frontends,
      gateways,
    };
  }

  async countMerchants(): Promise<number> {
    const row = await this.db.selectFrom('merchants').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async insertTransactionIfAbsent(row: NewTransactionRow): Promise<number | null> {
    const inserted = await this.db.insertInto('transactions').values(row)
      .onConflict((oc) => oc.columns(['merchant_id', 'transaction_type', 'order_id']).doNothing())
      .returning('trace_id')
      .executeTakeFirst();
    return inserted ? Number(inserted.trace_id) : null;
  }

  async findTransactionByKey(merchant_id: string, transaction_type: string, order_id: string): Promise<TransactionRow | null> {
    const row = await this.db.selectFrom('transactions').selectAll()
      .where('merchant_id', '=', merchant_id).where('transaction_type', '=', transaction_type).where('order_id', '=', order_id)
      .executeTakeFirst();
    return row ?? null;
  }

  async getTransaction(trace_id: number): Promise<TransactionRow | null> {
    return (await this.db.selectFrom('transactions').selectAll().where('trace_id', '=', trace_id).executeTakeFirst()) ?? null;
  }

  async lockTransaction(trace_id: number): Promise<TransactionRow | null> {
    let query = this.db.selectFrom('transactions').selectAll().where('trace_id', '=', trace_id);
    if (this.dialect === 'postgres') query = query.forUpdate();
    return (await query.executeTakeFirst()) ?? null;
  }

  async findTransactionByChallenge(challenge_token_hash: string): Promise<TransactionRow | null> {
    return (await this.db.selectFrom('transactions').selectAll()
      .where('challenge_token_hash', '=', challenge_token_hash).executeTakeFirst()) ?? null;
  }

  async updateTransactionIfStatus(trace_id: number, from_status: string, patch: TransactionPatch): Promise<boolean> {
    const result = await this.db.updateTable('transactions').set(patch)
      .where('trace_id', '=', trace_id).where('status', '=', from_status).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async updateTransaction(trace_id: number, patch: TransactionPatch): Promise<void> {
    await this.db.updateTable('transactions').set(patch).where('trace_id', '=', trace_id).execute();
  }

  async reserveRefund(sale_trace_id: number, amount_minor: number): Promise<boolean> {
    const result = await this.db.updateTable('transactions')
      .set((eb) => ({ refund_reserved_minor: eb('refund_reserved_minor', '+', amount_minor) }))
      .where('trace_id', '=', sale_trace_id)
      .where((eb) => eb(eb('refund_reserved_minor', '+', amount_minor), '<=', eb.ref('amount_minor')))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async releaseRefund(sale_trace_id: number, amount_minor: number): Promise<void> {
    await this.db.updateTable('transactions')
      .set((eb) => ({ refund_reserved_minor: eb('refund_reserved_minor', '-', amount_minor) }))
      .where('trace_id', '=', sale_trace_id).execute();
  }

  async insertStatusChange(row: Insertable<StatusChangeTable>): Promise<void> {
    await this.db.insertInto('status_changes').values(row).execute();
  }

  async listStatusChanges(trace_id: number) {
    return this.db.selectFrom('status_changes').select(['from_status', 'to_status', 'reason', 'at_ms'])
      .where('trace_id', '=', trace_id).orderBy('id').execute();
  }

  async insertDueAction(row: Insertable<DueActionTable>): Promise<void> {
    await this.db.insertInto('due_actions').values(row)
      .onConflict((oc) => oc.columns(['trace_id', 'kind']).doNothing()).execute();
  }

  async claimDueActions(now_ms: number, limit: number) {
    let query = this.db.selectFrom('due_actions').selectAll()
      .where('done', '=', 0).where('due_at_ms', '<=', now_ms).orderBy('due_at_ms').limit(limit);
    if (this.dialect === 'postgres') query = query.forUpdate().skipLocked();
    return query.execute();
  }

  async markDueActionDone(id: number): Promise<void> {
    await this.db.updateTable('due_actions').set({ done: 1 }).where('id', '=', id).execute();
  }

  async findStuckTransactions(older_than_ms: number, limit: number): Promise<TransactionRow[]> {
    let query = this.db.selectFrom('transactions').selectAll()
      .where('status', '=', 'pending').where('answer_json', 'is', null).where('created_at_ms', '<', older_than_ms)
      .orderBy('trace_id').limit(limit);
    if (this.dialect === 'postgres') query = query.forUpdate().skipLocked();
    return query.execute();
  }

  async insertNotification(row: Insertable<NotificationTable>): Promise<number> {
    const inserted = await this.db.insertInto('notifications').values(row).returning('id').executeTakeFirstOrThrow();
    return Number(inserted.id);
  }

  async listNotifications(trace_id: number): Promise<NotificationRow[]> {
    return this.db.selectFrom('notifications').selectAll().where('trace_id', '=', trace_id).orderBy('id').execute();
  }

  async getNotification(id: number): Promise<NotificationRow | null> {
    return (await this.db.selectFrom('notifications').selectAll().where('id', '=', id).executeTakeFirst()) ?? null;
  }

  async leaseNotifications(now_ms: number, limit: number, lease_ms: number, owner: string): Promise<NotificationRow[]> {
    // Candidates: pending and due, with no live lease. On PostgreSQL SKIP LOCKED lets
    // several instances pick disjoint sets; the conditional update makes the lease stick.
    let candidates = this.db.selectFrom('notifications').select('id')
      .where('state', '=', 'pending').where('next_attempt_at_ms', '<=', now_ms)
      .where((eb) => eb.or([eb('lease_until_ms', 'is', null), eb('lease_until_ms', '<', now_ms)]))
      .orderBy('next_attempt_at_ms').limit(limit);
    if (this.dialect === 'postgres') candidates = candidates.forUpdate().skipLocked();
    const ids = (await candidates.execute()).map((r) => Number(r.id));
    if (ids.length === 0) return [];
    await this.db.updateTable('notifications')
      .set({ lease_until_ms: now_ms + lease_ms, lease_owner: owner, updated_at_ms: now_ms })
      .where('id', 'in', ids)
      .where((eb) => eb.or([eb('lease_until_ms', 'is', null), eb('lease_until_ms', '<', now_ms)]))
      .execute();
    return this.db.selectFrom('notifications').selectAll()
      .where('id', 'in', ids).where('lease_owner', '=', owner).where('lease_until_ms', '=', now_ms + lease_ms).execute();
  }

  async finishNotificationAttempt(
    notification_id: number,
    owner: string,
    patch: Pick<NotificationRow, 'state' | 'next_attempt_at_ms' | 'last_error'> & { attempts: number },
    attempt: Insertable<NotificationAttemptTable>,
    now_ms: number,
  ): Promise<boolean> {
    const result = await this.db.updateTable('notifications')
      .set({ ...patch, lease_until_ms: null, lease_owner: null, updated_at_ms: now_ms })
      .where('id', '=', notification_id).where('lease_owner', '=', owner).executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1) return false;
    await this.db.insertInto('notification_attempts').values(attempt).execute();
    return true;
  }

  async listNotificationAttempts(notification_id: number) {
    return this.db.selectFrom('notification_attempts')
      .select(['notification_id', 'attempt_no', 'started_at_ms', 'duration_ms', 'http_status', 'reply_excerpt', 'outcome', 'reason'])
      .where('notification_id', '=', notification_id).orderBy('attempt_no').execute();
  }

  async rescheduleNotification(id: number, next_attempt_at_ms: number, now_ms: number): Promise<boolean> {
    const result = await this.db.updateTable('notifications')
      .set({ state: 'pending', next_attempt_at_ms, updated_at_ms: now_ms })
      .where('id', '=', id).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async insertCardIfAbsent(row: CardVaultRow): Promise<void> {
    await this.db.insertInto('card_vault').values(row)
      .onConflict((oc) => oc.columns(['merchant_id', 'pin', 'pan_fingerprint', 'card_exp']).doNothing()).execute();
  }

  async findCard(merchant_id: string, pin: string, pan_fingerprint: string, card_exp: string): Promise<CardVaultRow | null> {
    return (await this.db.selectFrom('card_vault').selectAll()
      .where('merchant_id', '=', merchant_id).where('pin', '=', pin)
      .where('pan_fingerprint', '=', pan_fingerprint).where('card_exp', '=', card_exp)
      .executeTakeFirst()) ?? null;
  }

  async getCard(merchant_id: string, card_token: string): Promise<CardVaultRow | null> {
    return (await this.db.selectFrom('card_vault').selectAll()
      .where('merchant_id', '=', merchant_id).where('card_token', '=', card_token).executeTakeFirst()) ?? null;
  }

  async getSandboxOffset(): Promise<number> {
    const row = await this.db.selectFrom('sandbox_clock').select('offset_ms').where('id', '=', 1).executeTakeFirst();
    return row ? Number(row.offset_ms) : 0;
  }

  async setSandboxOffset(offset_ms: number): Promise<void> {
    await this.db.insertInto('sandbox_clock').values({ id: 1, offset_ms })
      .onConflict((oc) => oc.column('id').doUpdateSet({ offset_ms })).execute();
  }
}

export class SqlStore extends SqlOps implements Store {
  constructor(private readonly root: Kysely<Database>, dialect: Dialect, private readonly on_close: () => Promise<void> = async () => {}) {
    super(root, dialect);
  }

  async migrate(): Promise<void> {
    await migrateToLatest(this.root as unknown as Kysely<unknown>, this.dialect);
  }

  async ping(): Promise<void> {
    await sql`select 1`.execute(this.root);
  }

  async close(): Promise<void> {
    await this.root.destroy();
    await this.on_close();
  }

  transaction<T>(work: (tx: StoreOps) => Promise<T>): Promise<T> {
    return this.root.transaction().execute((trx) => work(new SqlOps(trx, this.dialect)));
  }
}
