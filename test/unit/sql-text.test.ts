// The SQL text of the hot statements (store/sql-text.ts): built once per shape, bound with the
// dialect's placeholders, columns left out when undefined, identifiers checked.
import { RawNode } from 'kysely';
import { describe, expect, it } from 'vitest';
import { SqlText } from '../../src/store/sql-text.js';

describe('SqlText', () => {
  it("writes an insert with the row's defined columns, in order, with the dialect's placeholders", () => {
    const row = { trace_id: 7, reason: 'x', note: undefined, at_ms: 5 };
    const sqlite = new SqlText('sqlite').insert('status_changes', row);
    expect(sqlite.sql).toBe('insert into "status_changes" ("trace_id", "reason", "at_ms") values (?, ?, ?)');
    expect(sqlite.parameters).toEqual([7, 'x', 5]);
    expect(RawNode.is(sqlite.query)).toBe(true);
    const postgres = new SqlText('postgres').insert('status_changes', row, { conflict_columns: ['trace_id', 'at_ms'], returning: '*' });
    expect(postgres.sql).toBe(
      'insert into "status_changes" ("trace_id", "reason", "at_ms") values ($1, $2, $3) on conflict ("trace_id", "at_ms") do nothing returning *',
    );
  });

  it("numbers an update's WHERE parameters after its SET ones and binds them in that order", () => {
    const query = new SqlText('postgres').update(
      'transactions',
      { status: 'approved', card_token: undefined, updated_at_ms: 9 },
      { trace_id: 3, status: 'pending' },
    );
    expect(query.sql).toBe('update "transactions" set "status" = $1, "updated_at_ms" = $2 where "trace_id" = $3 and "status" = $4');
    expect(query.parameters).toEqual(['approved', 9, 3, 'pending']);
    expect(() => new SqlText('sqlite').update('transactions', { status: undefined }, { trace_id: 3 })).toThrow(/nothing to set/);
  });

  it('writes key look-ups that the SQLite driver may send to its reader connection', () => {
    const query = new SqlText('sqlite').selectAll('transactions', { cashier_session_id: 's' }, 'trace_id');
    expect(query.sql).toBe('select * from "transactions" where "cashier_session_id" = ? order by "trace_id"');
    expect(query.sql.startsWith('select ')).toBe(true);
  });

  it('selects only the named columns when asked to', () => {
    const query = new SqlText('postgres').select('cashier_sessions', ['session_id', 'kind'], { merchant_id: 'm', order_id: 'o' });
    expect(query.sql).toBe('select "session_id", "kind" from "cashier_sessions" where "merchant_id" = $1 and "order_id" = $2');
    expect(query.parameters).toEqual(['m', 'o']);
  });

  it('keeps one text per shape: the same shape gives the same string, another shape another one', () => {
    const text = new SqlText('sqlite');
    const first = text.insert('card_vault', { a_1: 1, b: 2 }).sql;
    expect(text.insert('card_vault', { a_1: 3, b: 4 }).sql).toBe(first);
    expect(text.insert('card_vault', { b: 4, a_1: 3 }).sql).not.toBe(first);
  });

  it('numbers the placeholders of a hand-written statement for PostgreSQL only', () => {
    expect(new SqlText('sqlite').fixed('f', 'select ? + ?', null, [1, 2]).sql).toBe('select ? + ?');
    expect(new SqlText('postgres').fixed('f', 'select ? + ?', null, [1, 2]).sql).toBe('select $1 + $2');
    expect(new SqlText('postgres').fixed('g', 'sqlite text', 'select ? for update', [1]).sql).toBe('select $1 for update');
  });

  it('refuses a table or column name that is not a plain identifier, so no text can be injected', () => {
    const text = new SqlText('sqlite');
    expect(() => text.insert('transactions', { 'x"; drop table transactions; --': 1 })).toThrow(/not a plain identifier/);
    expect(() => text.selectAll('Transactions', { trace_id: 1 })).toThrow(/not a plain identifier/);
    expect(() => text.update('transactions', { status: 'x' }, { 'trace_id or 1=1': 1 })).toThrow(/not a plain identifier/);
  });
});
