// The back office's own records over Kysely (backoffice-store.ts): its users, their sessions,
// failed sign-ins and locks, and the audit log. The same statements serve both databases; the
// searches and sums its pages show are the other aggregates' (transactions.search, …).
import type { Insertable } from 'kysely';
import type { AuditLogRow, AuditLogTable, BackofficeUserRow } from '../schema.js';
import type { BackOfficeStore, NewUserRow } from '../backoffice-store.js';
import type { Executor } from './context.js';

export class SqlBackOfficeStore implements BackOfficeStore {
  /** Over an executor alone: nothing here differs between the databases (a test builds one over a bare database). */
  constructor(private readonly db: Executor) {}

  async insertUser(row: NewUserRow): Promise<'created' | 'exists'> {
    const inserted = await this.db
      .insertInto('backoffice_users')
      .values({ ...row, disabled_at_ms: null })
      .onConflict((oc) => oc.column('email').doNothing())
      .executeTakeFirst();
    return Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1 ? 'created' : 'exists';
  }

  async findUserByEmail(email: string): Promise<BackofficeUserRow | null> {
    return (await this.db.selectFrom('backoffice_users').selectAll().where('email', '=', email).executeTakeFirst()) ?? null;
  }

  async getUser(user_id: string): Promise<BackofficeUserRow | null> {
    return (await this.db.selectFrom('backoffice_users').selectAll().where('user_id', '=', user_id).executeTakeFirst()) ?? null;
  }

  async listUsers(merchant_id: string | null, limit: number): Promise<BackofficeUserRow[]> {
    let query = this.db.selectFrom('backoffice_users').selectAll();
    if (merchant_id !== null) query = query.where('merchant_id', '=', merchant_id);
    return query.orderBy('created_at_ms').orderBy('user_id').limit(limit).execute();
  }

  async setUserDisabled(user_id: string, disabled_at_ms: number | null): Promise<boolean> {
    // Two statements, no transaction of its own (SQLite's writer is the store's, group-committed):
    // every request reads its user anyway and refuses a disabled one, sessions or not.
    const updated = await this.db.updateTable('backoffice_users').set({ disabled_at_ms }).where('user_id', '=', user_id).executeTakeFirst();
    if (disabled_at_ms !== null) await this.db.deleteFrom('backoffice_sessions').where('user_id', '=', user_id).execute();
    return Number(updated.numUpdatedRows) === 1;
  }

  async saveSession(session_hash: string, user_id: string, data_json: string, expires_at_ms: number, now_ms: number): Promise<void> {
    await this.db
      .insertInto('backoffice_sessions')
      .values({ session_hash, user_id, data_json, expires_at_ms, created_at_ms: now_ms, last_seen_at_ms: now_ms })
      .onConflict((oc) => oc.column('session_hash').doUpdateSet({ data_json, expires_at_ms, last_seen_at_ms: now_ms }))
      .execute();
  }

  async getSession(session_hash: string, now_ms: number): Promise<{ user_id: string; data_json: string; last_seen_at_ms: number } | null> {
    const row = await this.db
      .selectFrom('backoffice_sessions')
      .select(['user_id', 'data_json', 'last_seen_at_ms'])
      .where('session_hash', '=', session_hash)
      .where('expires_at_ms', '>', now_ms)
      .executeTakeFirst();
    // PostgreSQL answers a bigint as text.
    return row === undefined ? null : { user_id: row.user_id, data_json: row.data_json, last_seen_at_ms: Number(row.last_seen_at_ms) };
  }

  async touchSession(session_hash: string, now_ms: number, idle_since_ms: number): Promise<boolean> {
    const updated = await this.db
      .updateTable('backoffice_sessions')
      .set({ last_seen_at_ms: now_ms })
      .where('session_hash', '=', session_hash)
      .where('last_seen_at_ms', '>=', idle_since_ms)
      .executeTakeFirst();
    return Number(updated.numUpdatedRows) === 1;
  }

  async endIdleSession(session_hash: string, idle_since_ms: number): Promise<boolean> {
    const deleted = await this.db
      .deleteFrom('backoffice_sessions')
      .where('session_hash', '=', session_hash)
      .where('last_seen_at_ms', '<', idle_since_ms)
      .executeTakeFirst();
    return Number(deleted.numDeletedRows) === 1;
  }

  async deleteSession(session_hash: string): Promise<void> {
    await this.db.deleteFrom('backoffice_sessions').where('session_hash', '=', session_hash).execute();
  }

  async deleteExpiredSessions(now_ms: number, limit: number): Promise<number> {
    const expired = this.db.selectFrom('backoffice_sessions').select('session_hash').where('expires_at_ms', '<=', now_ms).limit(limit);
    const deleted = await this.db.deleteFrom('backoffice_sessions').where('session_hash', 'in', expired).executeTakeFirst();
    return Number(deleted.numDeletedRows);
  }

  async recordSignInFailure(email: string, address: string, at_ms: number): Promise<void> {
    await this.db.insertInto('backoffice_sign_in_failures').values({ email, address, at_ms }).execute();
  }

  async countSignInFailures(email: string, since_ms: number): Promise<number> {
    const row = await this.db
      .selectFrom('backoffice_sign_in_failures')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('email', '=', email)
      .where('at_ms', '>=', since_ms)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async clearSignInFailures(email: string): Promise<void> {
    await this.db.deleteFrom('backoffice_sign_in_failures').where('email', '=', email).execute();
  }

  async signInLockedUntil(email: string, now_ms: number): Promise<number | null> {
    const row = await this.db
      .selectFrom('backoffice_sign_in_locks')
      .select('until_ms')
      .where('email', '=', email)
      .where('until_ms', '>', now_ms)
      .executeTakeFirst();
    return row === undefined ? null : Number(row.until_ms);
  }

  async lockSignIn(email: string, until_ms: number): Promise<void> {
    await this.db
      .insertInto('backoffice_sign_in_locks')
      .values({ email, until_ms })
      .onConflict((oc) => oc.column('email').doUpdateSet({ until_ms }))
      .execute();
  }

  async insertAudit(row: Insertable<AuditLogTable>): Promise<void> {
    await this.db.insertInto('audit_log').values(row).execute();
  }

  async listAudit(merchant_id: string | null, before_id: number | null, limit: number): Promise<AuditLogRow[]> {
    let query = this.db.selectFrom('audit_log').selectAll();
    if (merchant_id !== null) query = query.where('merchant_id', '=', merchant_id);
    if (before_id !== null) query = query.where('id', '<', before_id);
    return query.orderBy('id', 'desc').limit(limit).execute();
  }
}
