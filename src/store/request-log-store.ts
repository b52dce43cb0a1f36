// The request log's aggregate (issue 28, docs/backoffice.md): rows written in batches by the
// request log's writer (operations/request-log.ts), listed newest first by key for the back
// office, and pruned by age and by count. Its Kysely implementation is sql/request-log.ts. The
// rows arrive masked: the store keeps what it is given and decides nothing.
import type { RequestLogFilter, RequestLogRow, RequestLogSummary } from '../domain/request-log-record.js';

export type NewRequestLogRow = Omit<RequestLogRow, 'id'>;

export interface RequestLogStore {
  /** Writes the rows in one statement (the caller holds them to a bounded batch). */
  insertRequestLogs(rows: readonly NewRequestLogRow[]): Promise<void>;
  /** Newest first (created_at_ms, then id), at most `limit`, narrowed by `filter`. */
  searchRequestLogs(filter: RequestLogFilter, limit: number): Promise<RequestLogSummary[]>;
  /** One row with its bodies; null when absent or not of `merchant_id` (when given). */
  getRequestLog(id: number, merchant_id: string | null): Promise<RequestLogRow | null>;
  /** Deletes rows created before `before_ms`, at most `limit` of them; how many went. */
  pruneRequestLogsBefore(before_ms: number, limit: number): Promise<number>;
  /** Deletes all but the newest `keep_rows` rows (by id), at most `limit` of them; how many went. */
  pruneRequestLogsBeyond(keep_rows: number, limit: number): Promise<number>;
}
