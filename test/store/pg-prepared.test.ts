// The PostgreSQL store's prepared statements (store/pg-prepared.ts, issue 29 item 2), on the real
// server: a statement sent with parameters is prepared once per connection and then reused; a
// connection prepares a bounded number of texts; and a table changed under a prepared statement
// (a newer instance's migration) costs no failure outside a transaction and one failed (rolled
// back) transaction inside one, after which the statement is prepared afresh.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PREPARED_PER_CONNECTION, prepareStatements } from '../../src/store/pg-prepared.js';
import { createTestDatabase, type TestDatabase } from '../support/postgres.js';
import { storeKinds } from '../support/stores.js';

describe.runIf(storeKinds().includes('postgres'))('prepared statements on PostgreSQL', () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  beforeAll(async () => {
    database = await createTestDatabase();
    pool = new pg.Pool({ connectionString: database.url, max: 1 });
    pool.on('connect', (client) => prepareStatements(client));
    await pool.query('create table probe (id integer primary key, label text not null)');
    await pool.query(`insert into probe values (1, 'one'), (2, 'two')`);
  });
  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });

  const prepared = async (client: pg.PoolClient) =>
    (await client.query<{ statement: string }>('select statement from pg_prepared_statements order by prepare_time')).rows.map(
      (r) => r.statement,
    );

  it('prepares a statement with parameters once and reuses it; one without parameters is not prepared', async () => {
    const client = await pool.connect();
    try {
      const before = (await prepared(client)).length;
      for (const id of [1, 2, 1]) expect((await client.query('select label from probe where id = $1', [id])).rows).toHaveLength(1);
      await client.query('select count(*) from probe');
      const statements = await prepared(client);
      expect(statements.filter((s) => s === 'select label from probe where id = $1')).toHaveLength(1);
      expect(statements).toHaveLength(before + 1);
    } finally {
      client.release();
    }
  });

  it(`prepares at most ${PREPARED_PER_CONNECTION} texts on a connection; the rest run unnamed`, async () => {
    const client = await pool.connect();
    try {
      for (let i = 0; i < PREPARED_PER_CONNECTION + 20; i++) {
        const { rows } = await client.query(`select $1::integer + ${i} as n`, [1]);
        expect(rows[0]).toEqual({ n: i + 1 });
      }
      expect((await prepared(client)).length).toBe(PREPARED_PER_CONNECTION);
    } finally {
      client.release();
    }
  });

  it('a table changed under a prepared statement: sent again outside a transaction, one failed transaction inside one', async () => {
    // A connection of its own: the one above has used up its prepared texts.
    const own = new pg.Pool({ connectionString: database.url, max: 1 });
    own.on('connect', (c) => prepareStatements(c));
    const client = await own.connect();
    try {
      const text = 'select * from probe where id = $1';
      expect((await client.query(text, [1])).rows).toEqual([{ id: 1, label: 'one' }]);
      await client.query(`alter table probe add column extra text not null default 'x'`);
      // Outside a transaction: answered, with the new column.
      expect((await client.query(text, [1])).rows).toEqual([{ id: 1, label: 'one', extra: 'x' }]);
      // Prepared again under a new name on this use, then the table changes once more.
      expect((await client.query(text, [1])).rows).toEqual([{ id: 1, label: 'one', extra: 'x' }]);
      expect((await prepared(client)).filter((s) => s === text)).toHaveLength(2);
      await client.query(`alter table probe add column more integer not null default 7`);
      await client.query('begin');
      await expect(client.query(text, [2])).rejects.toMatchObject({ code: '0A000' });
      await client.query('rollback');
      // Prepared afresh: the next transaction runs it.
      await client.query('begin');
      expect((await client.query(text, [2])).rows).toEqual([{ id: 2, label: 'two', extra: 'x', more: 7 }]);
      await client.query('commit');
    } finally {
      client.release();
      await own.end();
    }
  });
});
