// The request log's record (issue 28, docs/backoffice.md): one row per API request (the merchant
// API under /api/, sandbox and live), kept so a merchant's developer can see what the gateway got
// and answered. Its bodies are stored masked only (operations/request-log-masking.ts): no PAN,
// CVV, secret, signature or token is ever in a row. The search form's rules are here too, pure.

export interface RequestLogRow {
  id: number;
  /** The merchant, once identified (a known merchant_id); null before that. */
  merchant_id: string | null;
  method: string;
  /** The route's pattern (`/api/v1.3/subscription/:subscriptionId`); the raw path when no route matched. */
  route: string;
  /** The path as requested, capability segments and credential query values cut (logging.ts redactUrl). */
  path: string;
  /** What the request asked for: transaction_type (sale, refund, …) when the body names one; null otherwise. */
  operation: string | null;
  http_code: number;
  /** The answer's status (docs/errors.md); null when the answer carried none. */
  api_status: number | null;
  description: string | null;
  trace_id: number | null;
  latency_ms: number;
  /** Gateway clock (the sandbox's moves forward with it). */
  created_at_ms: number;
  /** JSON text, masked and cut to REQUEST_LOG_BODY_MAX_CHARS; null when the request had none. */
  request_json: string | null;
  answer_json: string | null;
}

/** A row in the list: everything but the bodies. */
export type RequestLogSummary = Omit<RequestLogRow, 'request_json' | 'answer_json'>;

/** Each body is kept to this many characters of masked JSON, so a queue of them stays small. */
export const REQUEST_LOG_BODY_MAX_CHARS = 8_192;

/** One page of the back office's list, at most. */
export const REQUEST_LOG_PAGE_ROWS = 50;

/** The answer's status for a signature that does not verify (docs/errors.md: INVALID_SIGNATURE). */
export const INVALID_SIGNATURE_STATUS = 2;

/** What the list is narrowed to; every part optional. */
export interface RequestLogFilter {
  /** Only this merchant's rows (a merchant's staff; or an operator's choice); null: all. */
  readonly merchant_id: string | null;
  /** Matches the route pattern, the raw path or the operation: a prefix of any of them. */
  readonly path: string | null;
  readonly api_status: number | null;
  readonly trace_id: number | null;
  readonly from_ms: number | null;
  readonly to_ms: number | null;
  /** Keyset: rows strictly older than this (created_at_ms, id). */
  readonly before: { readonly created_at_ms: number; readonly id: number } | null;
}

/** The search form as typed, each field a string. */
export interface RequestLogQuery {
  readonly path: string;
  readonly api_status: string;
  readonly trace_id: string;
  readonly from: string;
  readonly to: string;
  readonly before: string;
}

const TEXT_MAX_CHARS = 100;

function dayStartMs(text: string): number | null {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return null;
  const ms = Date.parse(`${text}T00:00:00Z`);
  return Number.isFinite(ms) ? ms : null;
}

/**
 * The filter the form asks for, or what is wrong with it. `from` and `to` are UTC days
 * (YYYY-MM-DD), `to` included; `before` is the page key the list hands out (created_at_ms.id).
 */
export function requestLogFilter(
  query: Readonly<Record<string, unknown>>,
  merchant_id: string | null,
): { ok: true; filter: RequestLogFilter; shown: RequestLogQuery } | { ok: false; problem: string; shown: RequestLogQuery } {
  const text = (name: string) => {
    const value = query[name];
    return typeof value === 'string' ? value.trim().slice(0, TEXT_MAX_CHARS) : '';
  };
  const shown: RequestLogQuery = {
    path: text('path'),
    api_status: text('api_status'),
    trace_id: text('trace_id'),
    from: text('from'),
    to: text('to'),
    before: text('before'),
  };
  const integer = (value: string, min: number) => (/^-?\d{1,15}$/.test(value) && Number(value) >= min ? Number(value) : null);
  const api_status = shown.api_status === '' ? null : integer(shown.api_status, -1);
  if (shown.api_status !== '' && api_status === null) return { ok: false, problem: 'API status: a number, such as 0 or 2.', shown };
  const trace_id = shown.trace_id === '' ? null : integer(shown.trace_id, 1);
  if (shown.trace_id !== '' && trace_id === null) return { ok: false, problem: 'trace_id: a positive whole number.', shown };
  const from_ms = shown.from === '' ? null : dayStartMs(shown.from);
  if (shown.from !== '' && from_ms === null) return { ok: false, problem: 'From: a day as YYYY-MM-DD.', shown };
  const to_day = shown.to === '' ? null : dayStartMs(shown.to);
  if (shown.to !== '' && to_day === null) return { ok: false, problem: 'To: a day as YYYY-MM-DD.', shown };
  const key = /^(\d{1,15})\.(\d{1,15})$/.exec(shown.before);
  if (shown.before !== '' && key === null) return { ok: false, problem: 'The page asked for does not exist.', shown };
  return {
    ok: true,
    shown,
    filter: {
      merchant_id,
      path: shown.path === '' ? null : shown.path,
      api_status,
      trace_id,
      from_ms,
      to_ms: to_day === null ? null : to_day + 86_400_000 - 1,
      before: key === null ? null : { created_at_ms: Number(key[1]), id: Number(key[2]) },
    },
  };
}

/** The key of the page after the one ending with this row. */
export function requestLogPageKey(row: Pick<RequestLogSummary, 'created_at_ms' | 'id'>): string {
  return `${row.created_at_ms}.${row.id}`;
}
