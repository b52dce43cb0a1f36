// The master-key state, the sealed columns and the rotation's progress over Kysely
// (master-key-store.ts, migration 0023). The sealed tables are read generically from
// SEALED_TABLES (fixed names, never input) with `sql` fragments, by primary key order (a keyset
// page: each batch reads from where the last one stopped, never from the start). A value is
// written back only where it is still the one read, so a concurrent change (a merchant's secret
// rolled meanwhile) is never overwritten with an older value.
import { type RawBuilder, sql } from 'kysely';
import {
  type MasterKeyState,
  type MasterKeyStore,
  type RotationProgress,
  type RowKey,
  SEALED_TABLE_NAMES,
  SEALED_TABLES,
  type SealedCount,
  type SealedRow,
  type SealedTable,
} from '../master-key-store.js';
import type { Executor, SqlContext } from './context.js';

function spec(table: SealedTable): {
  readonly key: readonly string[];
  readonly columns: readonly string[];
  readonly merchant: string | null;
} {
  return SEALED_TABLES[table];
}

const refs = (names: readonly string[]): RawBuilder<unknown> => sql.join(names.map((n) => sql.ref(n)));

/** `(k1, k2) > (v1, v2)`, or `k > v` for a one-column key. */
function after(key: readonly string[], values: RowKey): RawBuilder<unknown> {
  if (key.length === 1) return sql`${sql.ref(key[0]!)} > ${values[0]}`;
  return sql`(${refs(key)}) > (${sql.join(values.map((v) => sql`${v}`))})`;
}

function anySealed(columns: readonly string[]): RawBuilder<unknown> {
  return sql.join(
    columns.map((c) => sql`${sql.ref(c)} is not null`),
    sql` or `,
  );
}

export class SqlMasterKeyStore implements MasterKeyStore {
  private readonly db: Executor;

  constructor(ctx: SqlContext) {
    this.db = ctx.db;
  }

  async state(): Promise<MasterKeyState | null> {
    const row = await this.db
      .selectFrom('master_key_state')
      .select(['fingerprint_key_sealed', 'sealing_key_id', 'updated_at_ms'])
      .where('id', '=', 1)
      .executeTakeFirst();
    return row === undefined ? null : { ...row, updated_at_ms: Number(row.updated_at_ms) };
  }

  async insertState(state: MasterKeyState): Promise<boolean> {
    const result = await this.db
      .insertInto('master_key_state')
      .values({ id: 1, ...state })
      .onConflict((oc) => oc.column('id').doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  async replaceState(expected_fingerprint_key_sealed: string, state: MasterKeyState): Promise<boolean> {
    const result = await this.db
      .updateTable('master_key_state')
      .set({ ...state })
      .where('id', '=', 1)
      .where('fingerprint_key_sealed', '=', expected_fingerprint_key_sealed)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async sealedBatch(table: SealedTable, after_key: RowKey | null, limit: number): Promise<SealedRow[]> {
    const { key, columns, merchant } = spec(table);
    const selected = [...new Set([...key, ...(merchant === null ? [] : [merchant]), ...columns])];
    const where = after_key === null ? sql`(${anySealed(columns)})` : sql`${after(key, after_key)} and (${anySealed(columns)})`;
    const { rows } = await sql<Record<string, string | number | null>>`
      select ${refs(selected)} from ${sql.table(table)} where ${where} order by ${refs(key)} limit ${limit}`.execute(this.db);
    return rows.map((row) => ({
      key: key.map((k) => row[k] as string | number),
      merchant_id: merchant === null ? null : (row[merchant] as string),
      values: Object.fromEntries(columns.map((c) => [c, (row[c] as string | null) ?? null])),
    }));
  }

  async firstSealed(table: SealedTable): Promise<SealedRow | null> {
    return (await this.sealedBatch(table, null, 1))[0] ?? null;
  }

  async replaceSealed(table: SealedTable, key: RowKey, column: string, expected: string, sealed: string): Promise<boolean> {
    const names = spec(table).key;
    if (!spec(table).columns.includes(column) || key.length !== names.length) throw new Error(`${table}.${column} is not a sealed column`);
    const matches = sql.join(
      names.map((n, i) => sql`${sql.ref(n)} = ${key[i]}`),
      sql` and `,
    );
    const result =
      await sql`update ${sql.table(table)} set ${sql.ref(column)} = ${sealed} where ${matches} and ${sql.ref(column)} = ${expected}`.execute(
        this.db,
      );
    return Number(result.numAffectedRows ?? 0n) === 1;
  }

  async countSealed(): Promise<SealedCount[]> {
    const counts: SealedCount[] = [];
    for (const table of SEALED_TABLE_NAMES) {
      for (const column of spec(table).columns) {
        const c = sql.ref(column);
        // 'v2:' + 16 hex + ':' names its key; a v1 value names none.
        const { rows } = await sql<{ key_id: string; n: number | string }>`
          select case when ${c} like 'v1:%' then 'v1' when ${c} like 'v2:%' then substr(${c}, 4, 16) else 'other' end as key_id,
                 count(*) as n
          from ${sql.table(table)} where ${c} is not null group by 1`.execute(this.db);
        for (const row of rows) counts.push({ table, column, key_id: row.key_id, count: Number(row.n) });
      }
    }
    return counts;
  }

  async rotationProgress(): Promise<RotationProgress[]> {
    const rows = await this.db.selectFrom('master_key_rotation').selectAll().orderBy('table_name').execute();
    return rows
      .filter((row) => Object.hasOwn(SEALED_TABLES, row.table_name))
      .map((row) => ({
        table: row.table_name as SealedTable,
        target_key_id: row.target_key_id,
        after: row.after_key === null ? null : (JSON.parse(row.after_key) as RowKey),
        resealed: Number(row.resealed),
        done: Number(row.done) === 1,
        updated_at_ms: Number(row.updated_at_ms),
      }));
  }

  async saveRotationProgress(progress: RotationProgress): Promise<void> {
    const values = {
      target_key_id: progress.target_key_id,
      after_key: progress.after === null ? null : JSON.stringify(progress.after),
      resealed: progress.resealed,
      done: progress.done ? 1 : 0,
      updated_at_ms: progress.updated_at_ms,
    };
    await this.db
      .insertInto('master_key_rotation')
      .values({ table_name: progress.table, ...values })
      .onConflict((oc) => oc.column('table_name').doUpdateSet(values))
      .execute();
  }
}
