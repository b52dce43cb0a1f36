// SQL text for the statements on the path of every sale, find-order and notification attempt,
// written once per shape and kept. Kysely builds an operation tree, freezes it and walks it to
// text on every call: about a third of a sale's CPU time in the profile (bench/RESULTS.md).
// These statements are plain inserts, updates and key look-ups whose text depends only on the
// table, the columns named and the dialect, so the text is built the first time a shape is
// seen and the next calls only bind values. They still run through Kysely's executor
// (executeQuery), so transactions, group commit and the connection routing are unchanged.
//
// Identifiers come from this code base (column names of our own row types), never from a
// request; each is still checked against a plain-identifier pattern before it is quoted.
import { CompiledQuery } from 'kysely';
import type { Dialect } from './store.js';

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;
/** Shapes kept at most; there are a few dozen in practice, the bound stops a run-away caller. */
const MAX_SHAPES = 1_000;

/** `identifier` in double quotes, once it is checked to be a plain identifier (of our own code). */
export function quoted(identifier: string): string {
  if (!IDENTIFIER.test(identifier)) throw new Error(`not a plain identifier: ${identifier}`);
  return `"${identifier}"`;
}

/** The columns with a defined value, and those values, in the object's own order. */
function definedColumns(row: Readonly<Record<string, unknown>>): { columns: string[]; values: unknown[] } {
  const columns: string[] = [];
  const values: unknown[] = [];
  for (const column in row) {
    const value = row[column];
    if (value === undefined) continue;
    columns.push(column);
    values.push(value);
  }
  return { columns, values };
}

export interface InsertOptions {
  /**
   * Columns of the unique key: a row that would collide is not inserted (ON CONFLICT … DO
   * NOTHING); 'any': not inserted when it would collide on any unique key (ON CONFLICT DO NOTHING).
   */
  readonly conflict_columns?: readonly string[] | 'any';
  /** `*` or one column. */
  readonly returning?: string;
}

export class SqlText {
  private readonly shapes = new Map<string, string>();

  constructor(readonly dialect: Dialect) {}

  /** The n-th (1-based) bind parameter's placeholder. */
  private placeholder(n: number): string {
    return this.dialect === 'postgres' ? `$${n}` : '?';
  }

  private shape(key: string, build: () => string): string {
    let text = this.shapes.get(key);
    if (text === undefined) {
      text = build();
      if (this.shapes.size >= MAX_SHAPES) this.shapes.delete(this.shapes.keys().next().value!);
      this.shapes.set(key, text);
    }
    return text;
  }

  /** INSERT of the row's defined columns (undefined ones are left to their defaults, as Kysely does). */
  insert(table: string, row: Readonly<Record<string, unknown>>, options: InsertOptions = {}): CompiledQuery {
    const { columns, values } = definedColumns(row);
    const conflict = options.conflict_columns;
    const key = `i|${table}|${columns.join(',')}|${conflict === 'any' ? '*' : (conflict?.join(',') ?? '')}|${options.returning ?? ''}`;
    const text = this.shape(key, () => {
      let sql = `insert into ${quoted(table)} (${columns.map(quoted).join(', ')}) values (${columns.map((_, i) => this.placeholder(i + 1)).join(', ')})`;
      if (conflict === 'any') sql += ' on conflict do nothing';
      else if (conflict) sql += ` on conflict (${conflict.map(quoted).join(', ')}) do nothing`;
      if (options.returning) sql += ` returning ${options.returning === '*' ? '*' : quoted(options.returning)}`;
      return sql;
    });
    return CompiledQuery.raw(text, values);
  }

  /** UPDATE … SET the patch's defined columns WHERE every `where` column equals its value. */
  update(table: string, patch: Readonly<Record<string, unknown>>, where: Readonly<Record<string, unknown>>): CompiledQuery {
    const { columns: set_columns, values } = definedColumns(patch);
    if (set_columns.length === 0) throw new Error(`update of ${table} with nothing to set`);
    const where_columns = Object.keys(where);
    for (const column of where_columns) values.push(where[column]);
    const key = `u|${table}|${set_columns.join(',')}|${where_columns.join(',')}`;
    const text = this.shape(key, () => {
      const set = set_columns.map((column, i) => `${quoted(column)} = ${this.placeholder(i + 1)}`).join(', ');
      const condition = where_columns
        .map((column, i) => `${quoted(column)} = ${this.placeholder(set_columns.length + i + 1)}`)
        .join(' and ');
      return `update ${quoted(table)} set ${set} where ${condition}`;
    });
    return CompiledQuery.raw(text, values);
  }

  /** SELECT * … WHERE every `where` column equals its value, optionally ordered by one column. */
  selectAll(table: string, where: Readonly<Record<string, unknown>>, order_by?: string): CompiledQuery {
    return this.select(table, null, where, order_by);
  }

  /** SELECT the named columns (every one when null) … WHERE every `where` column equals its value. */
  select(table: string, columns: readonly string[] | null, where: Readonly<Record<string, unknown>>, order_by?: string): CompiledQuery {
    const where_columns = Object.keys(where);
    const key = `s|${table}|${columns?.join(',') ?? '*'}|${where_columns.join(',')}|${order_by ?? ''}`;
    const text = this.shape(key, () => {
      const condition = where_columns.map((column, i) => `${quoted(column)} = ${this.placeholder(i + 1)}`).join(' and ');
      const list = columns === null ? '*' : columns.map(quoted).join(', ');
      return `select ${list} from ${quoted(table)} where ${condition}${order_by ? ` order by ${quoted(order_by)}` : ''}`;
    });
    return CompiledQuery.raw(
      text,
      where_columns.map((column) => where[column]),
    );
  }

  /** A statement written by hand for one dialect pair, with `?` placeholders numbered for PostgreSQL. */
  fixed(name: string, sqlite_text: string, postgres_text: string | null, parameters: unknown[]): CompiledQuery {
    const text = this.shape(`f|${name}`, () => {
      if (this.dialect === 'sqlite') return sqlite_text;
      let n = 0;
      return (postgres_text ?? sqlite_text).replace(/\?/g, () => `$${++n}`);
    });
    return CompiledQuery.raw(text, parameters);
  }
}
