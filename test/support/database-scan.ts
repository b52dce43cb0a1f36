// Reads what a test gateway wrote to its database from outside the gateway (its own connection,
// not the store), for tests that check what is and is not kept at rest.
import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import type { TestGateway } from './gateway.js';

const SQLITE_FILE = 'paygate.sqlite';

/**
 * Everything the database holds, as text to search. SQLite: the raw bytes of the database file and
 * its WAL and journal (freed pages and not yet checkpointed writes included). PostgreSQL: every row
 * of every table of the test database, as JSON.
 */
export async function storedText(gw: Pick<TestGateway, 'data_dir' | 'database_url'>): Promise<string> {
  if (gw.database_url === null) {
    return fs
      .readdirSync(gw.data_dir)
      .filter((file) => file.startsWith(SQLITE_FILE))
      .map((file) => fs.readFileSync(path.join(gw.data_dir, file)).toString('latin1'))
      .join('\n');
  }
  const client = new pg.Client({ connectionString: gw.database_url });
  await client.connect();
  try {
    const tables = await client.query<{ tablename: string }>(`select tablename from pg_tables where schemaname = 'public'`);
    const parts: string[] = [];
    for (const { tablename } of tables.rows) {
      const rows = await client.query<{ j: string }>(`select row_to_json(t)::text as j from "${tablename}" t`);
      parts.push(...rows.rows.map((row) => row.j));
    }
    return parts.join('\n');
  } finally {
    await client.end();
  }
}

/** The rows of one table where each given column equals its value (names are the test's own, not input). */
export async function tableRows(
  gw: Pick<TestGateway, 'data_dir' | 'database_url'>,
  table: string,
  where: Readonly<Record<string, string | number>> = {},
): Promise<Record<string, unknown>[]> {
  const identifier = /^[a-z_][a-z0-9_]*$/;
  if (!identifier.test(table) || !Object.keys(where).every((column) => identifier.test(column)))
    throw new Error('bad table or column name');
  const columns = Object.keys(where);
  const values = Object.values(where);
  if (gw.database_url === null) {
    const db = new BetterSqlite3(path.join(gw.data_dir, SQLITE_FILE), { readonly: true, fileMustExist: true });
    try {
      const condition = columns.length > 0 ? ` where ${columns.map((c) => `"${c}" = ?`).join(' and ')}` : '';
      return db.prepare(`select * from "${table}"${condition}`).all(...values) as Record<string, unknown>[];
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: gw.database_url });
  await client.connect();
  try {
    const condition = columns.length > 0 ? ` where ${columns.map((c, i) => `"${c}" = $${i + 1}`).join(' and ')}` : '';
    return (await client.query(`select * from "${table}"${condition}`, values)).rows as Record<string, unknown>[];
  } finally {
    await client.end();
  }
}
