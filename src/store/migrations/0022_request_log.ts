// Migration 0022_request_log: the request log (issue 28, item 5): one row per API request with
// its masked bodies, for the back office's Request log page. Its own file so each migration reads
// on its own; its key is recorded in databases, never rename it once released.
import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../store.js';
import { autoId } from './columns.js';

/**
 * 0022: request_log. The id is a plain rowid on SQLite (no AUTOINCREMENT: pruning deletes the
 * oldest rows, never the newest, and the sequence table would be one more write per batch).
 * Indexes: a merchant's rows by time (what its staff list), every row by time (the operators'
 * list and the days prune), and trace_id (a search by it).
 */
export function requestLog(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('request_log')
        .addColumn('id', autoId(dialect), (c) => c.primaryKey())
        .addColumn('merchant_id', 'text')
        .addColumn('method', 'text', (c) => c.notNull())
        .addColumn('route', 'text', (c) => c.notNull())
        .addColumn('path', 'text', (c) => c.notNull())
        .addColumn('operation', 'text')
        .addColumn('http_code', 'integer', (c) => c.notNull())
        .addColumn('api_status', 'integer')
        .addColumn('description', 'text')
        .addColumn('trace_id', 'bigint')
        .addColumn('latency_ms', 'integer', (c) => c.notNull())
        .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
        .addColumn('request_json', 'text')
        .addColumn('answer_json', 'text')
        .execute();
      await db.schema.createIndex('request_log_merchant_created').on('request_log').columns(['merchant_id', 'created_at_ms']).execute();
      await db.schema.createIndex('request_log_created').on('request_log').column('created_at_ms').execute();
      await db.schema.createIndex('request_log_trace').on('request_log').column('trace_id').execute();
    },
  };
}
