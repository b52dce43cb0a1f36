// The back office's Request log reads (issue 28, docs/backoffice.md): one page of rows, newest
// first, narrowed by the search form, and one row with its masked bodies. A merchant's staff see
// their merchant's rows only (domain/backoffice-access.ts); another merchant's row, or a row of
// no known merchant, is to them a row that does not exist. For a refused signature the row carries
// the help the sandbox answered with (the string hashed and the likely mistake), read from the
// stored answer.
import { merchantScope, type Viewer } from '../domain/backoffice-access.js';
import {
  INVALID_SIGNATURE_STATUS,
  REQUEST_LOG_PAGE_ROWS,
  type RequestLogFilter,
  type RequestLogRow,
  type RequestLogSummary,
} from '../domain/request-log-record.js';
import type { OperationDeps } from './deps.js';

export interface RequestLogPage {
  readonly rows: readonly RequestLogSummary[];
  /** More rows are older than the last one shown. */
  readonly more: boolean;
}

/** One page: at most REQUEST_LOG_PAGE_ROWS rows this viewer may see. */
export async function requestLogPage(
  deps: Pick<OperationDeps, 'store'>,
  viewer: Viewer,
  filter: RequestLogFilter,
): Promise<RequestLogPage> {
  const scope = merchantScope(viewer);
  const scoped: RequestLogFilter = scope === null ? filter : { ...filter, merchant_id: scope };
  const rows = await deps.store.requestLog.searchRequestLogs(scoped, REQUEST_LOG_PAGE_ROWS + 1);
  return { rows: rows.slice(0, REQUEST_LOG_PAGE_ROWS), more: rows.length > REQUEST_LOG_PAGE_ROWS };
}

export interface RequestLogDetail {
  readonly row: RequestLogRow;
  /** A refused signature: what the answer said to help (its description and error_details); null otherwise. */
  readonly signature_help: { readonly description: string | null; readonly error_details: string | null } | null;
}

/** One row with its bodies, or null when it does not exist for this viewer. */
export async function requestLogDetail(deps: Pick<OperationDeps, 'store'>, viewer: Viewer, id: number): Promise<RequestLogDetail | null> {
  const scope = merchantScope(viewer);
  const row = await deps.store.requestLog.getRequestLog(id, scope);
  if (row === null || (scope !== null && row.merchant_id !== scope)) return null;
  return { row, signature_help: row.api_status === INVALID_SIGNATURE_STATUS ? signatureHelpOf(row) : null };
}

function signatureHelpOf(row: RequestLogRow): RequestLogDetail['signature_help'] {
  let answer: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(row.answer_json ?? '{}') as unknown;
    if (typeof parsed === 'object' && parsed !== null) answer = parsed as Record<string, unknown>;
  } catch {
    // A body cut to its limit is no longer JSON: the description column still says it.
  }
  const details = answer.error_details;
  return {
    description: row.description,
    error_details: typeof details === 'string' ? details : details === undefined || details === null ? null : JSON.stringify(details),
  };
}
