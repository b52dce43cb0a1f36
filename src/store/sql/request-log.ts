// The request log over Kysely (request-log-store.ts), the same statements on SQLite and
// PostgreSQL. A batch is one multi-row INSERT; the list pages by key (created_at_ms, id), never by
// offset; a prune deletes by id ranges found through the indexes, a bounded number at a time.
import { sql } from 'kysely';
import type { RequestLogFilter, RequestLogRow, RequestLogSummary } from '../../domain/request-log-record.js';
import type { NewRequestLogRow, RequestLogStore } from '../request-log-store.js';
import type { Executor, SqlContext } from './context.js';

const SUMMARY_COLUMNS = [
  'id',
  'merchant_id',
  'method',
  'route',
  'path',
  'operation',
  'http_code',
  'api_status',
  'description',
  'trace_id',
  'latency_ms',
  'created_at_ms',
] as const;

/**
 * The row counts a request-log INSERT is made of, largest first: a batch of any size goes in
 * statements of these four shapes only. Each distinct row count is an INSERT of its own text, and
 * SQLite keeps each prepared (sqlite-driver.ts): batches of every size from 1 to 500 left 500 of
 * them in the cache, 141 MB of native memory (measured), the request log's share of the RSS that
 * kept growing through the memory soak, each new size prepared at 0.5 ms. On PostgreSQL a batch
 * is so a few round trips instead of one, twice a second at most.
 */
const INSERT_CHUNK_ROWS = [64, 16, 4, 1] as const;

/** A LIKE prefix pattern matching `text` literally ('\' escapes the wildcards). */
function prefixPattern(text: string): string {
  return `${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export class SqlRequestLogStore implements RequestLogStore {
  private readonly db: Executor;

  constructor(ctx: SqlContext) {
    this.db = ctx.db;
  }

  async insertRequestLogs(rows: readonly NewRequestLogRow[]): Promise<void> {
    // In the batch's order, so that ids follow it.
    let at = 0;
    for (const size of INSERT_CHUNK_ROWS) {
      for (; rows.length - at >= size; at += size) {
        await this.db
          .insertInto('request_log')
          .values(rows.slice(at, at + size).map((row) => ({ ...row })))
          .execute();
      }
    }
  }

  async searchRequestLogs(filter: RequestLogFilter, limit: number): Promise<RequestLogSummary[]> {
    let query = this.db.selectFrom('request_log').select(SUMMARY_COLUMNS);
    if (filter.merchant_id !== null) query = query.where('merchant_id', '=', filter.merchant_id);
    if (filter.api_status !== null) query = query.where('api_status', '=', filter.api_status);
    if (filter.trace_id !== null) query = query.where('trace_id', '=', filter.trace_id);
    if (filter.from_ms !== null) query = query.where('created_at_ms', '>=', filter.from_ms);
    if (filter.to_ms !== null) query = query.where('created_at_ms', '<=', filter.to_ms);
    const path = filter.path;
    if (path !== null) {
      const pattern = prefixPattern(path);
      query = query.where((eb) =>
        eb.or([
          eb('operation', '=', path),
          sql<boolean>`${eb.ref('route')} like ${pattern} escape '\\'`,
          sql<boolean>`${eb.ref('path')} like ${pattern} escape '\\'`,
        ]),
      );
    }
    const before = filter.before;
    if (before !== null) {
      query = query.where((eb) =>
        eb.or([
          eb('created_at_ms', '<', before.created_at_ms),
          eb.and([eb('created_at_ms', '=', before.created_at_ms), eb('id', '<', before.id)]),
        ]),
      );
    }
    return query.orderBy('created_at_ms', 'desc').orderBy('id', 'desc').limit(limit).execute();
  }

  async getRequestLog(id: number, merchant_id: string | null): Promise<RequestLogRow | null> {
    let query = this.db.selectFrom('request_log').selectAll().where('id', '=', id);
    if (merchant_id !== null) query = query.where('merchant_id', '=', merchant_id);
    return (await query.executeTakeFirst()) ?? null;
  }

  async pruneRequestLogsBefore(before_ms: number, limit: number): Promise<number> {
    const ids = this.db.selectFrom('request_log').select('id').where('created_at_ms', '<', before_ms).orderBy('created_at_ms').limit(limit);
    const result = await this.db.deleteFrom('request_log').where('id', 'in', ids).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  async pruneRequestLogsBeyond(keep_rows: number, limit: number): Promise<number> {
    // Ids only grow (a rowid, a sequence), with gaps at most: everything at or below the newest
    // id less keep_rows goes, so at most keep_rows stay, found through the key, never counted.
    const newest = await this.db
      .selectFrom('request_log')
      .select((eb) => eb.fn.max<number | null>('id').as('id'))
      .executeTakeFirst();
    const edge = newest?.id === null || newest?.id === undefined ? null : Number(newest.id) - keep_rows;
    if (edge === null || edge < 1) return 0;
    const ids = this.db.selectFrom('request_log').select('id').where('id', '<=', edge).orderBy('id').limit(limit);
    const result = await this.db.deleteFrom('request_log').where('id', 'in', ids).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
