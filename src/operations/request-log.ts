// The request log's writer (issue 28, item 5; docs/backoffice.md, docs/limits.md §7): the HTTP
// edge hands it each API request once its answer is sent (http/app.ts, onResponse), and it keeps
// them off the request's path: in a bounded in-memory queue (full: the entry is dropped and
// counted, the answer never waits), masked (request-log-masking.ts) and written in batches, each
// in its own transaction, by a timer or as soon as a batch is full. A second timer prunes by age
// (PAYGATE_REQUEST_LOG_DAYS, on the gateway clock) and by count (PAYGATE_REQUEST_LOG_MAX_ROWS).
// What is queued and not yet written when the process dies is lost: it is a log, not a record
// of payments.
import type { NewRequestLogRow } from '../store/store.js';
import { maskedBodyJson, maskText } from './request-log-masking.js';
import type { OperationDeps } from './deps.js';

/** What the edge knows of one API request when its answer has been sent. */
export interface RequestLogEntry {
  readonly merchant_id: string | null;
  readonly method: string;
  readonly route: string;
  /** The raw path and query (masked before it is kept). */
  readonly path: string;
  readonly operation: string | null;
  readonly http_code: number;
  readonly api_status: number | null;
  readonly description: string | null;
  readonly trace_id: number | null;
  readonly latency_ms: number;
  /** The parsed request body (or the query of a GET), as received: masked at write time. */
  readonly request_body: unknown;
  /** The answer: an object, or its JSON text when only that was seen. */
  readonly answer_body: unknown;
  /** Roughly what holding the entry costs (the raw body's length): bounds the queue's memory. */
  readonly size_bytes: number;
}

export interface RequestLogOptions {
  /** Entries waiting at most; more are dropped (and counted). */
  readonly queue_max_entries: number;
  /** And at most this many bytes of raw bodies waiting. */
  readonly queue_max_bytes: number;
  /** Rows per INSERT and per transaction. */
  readonly batch_rows: number;
  /** A partial batch waits at most this long. */
  readonly flush_ms: number;
  /** How often the log is pruned. */
  readonly prune_ms: number;
}

export const REQUEST_LOG_DEFAULTS: RequestLogOptions = {
  queue_max_entries: 10_000,
  queue_max_bytes: 32 * 1024 * 1024,
  batch_rows: 500,
  flush_ms: 500,
  prune_ms: 60_000,
};

/** What one prune statement deletes at most, and how many statements one pass runs. */
const PRUNE_BATCH_ROWS = 5_000;
const PRUNE_PASS_STATEMENTS = 20;
/** A full queue is reported in the log at most this often (the count itself is exact). */
const DROP_WARNING_MS = 60_000;
const DAY_MS = 86_400_000;
/** The description column holds what the answer said, within the spec's 256 characters. */
const DESCRIPTION_MAX_CHARS = 256;
const FIELD_MAX_CHARS = 512;

interface Queued {
  readonly entry: RequestLogEntry;
  readonly created_at_ms: number;
}

export type RequestLogDeps = Pick<OperationDeps, 'store' | 'clock' | 'logger' | 'config'>;

export class RequestLogWriter {
  private queue: Queued[] = [];
  private queued_bytes = 0;
  private flushing: Promise<void> = Promise.resolve();
  private flush_soon = false;
  private flush_timer: NodeJS.Timeout | null = null;
  private prune_timer: NodeJS.Timeout | null = null;
  private last_drop_warning_ms = 0;
  /** Entries dropped since start: the queue was full, or their batch could not be written. */
  dropped = 0;
  /** Rows written since start. */
  written = 0;

  constructor(
    private readonly deps: RequestLogDeps,
    private readonly options: RequestLogOptions = REQUEST_LOG_DEFAULTS,
  ) {}

  /** PAYGATE_REQUEST_LOG_DAYS=0 keeps no request log. */
  get enabled(): boolean {
    return this.deps.config.limits.request_log_days > 0;
  }

  /** Takes one request; never waits and never throws. */
  record(entry: RequestLogEntry): void {
    if (!this.enabled) return;
    if (this.queue.length >= this.options.queue_max_entries || this.queued_bytes + entry.size_bytes > this.options.queue_max_bytes) {
      this.drop(1);
      return;
    }
    this.queue.push({ entry, created_at_ms: this.deps.clock.now_ms() });
    this.queued_bytes += entry.size_bytes;
    if (this.queue.length >= this.options.batch_rows && !this.flush_soon) {
      this.flush_soon = true;
      setImmediate(() => {
        this.flush_soon = false;
        void this.flush();
      });
    }
  }

  /** Writes everything queued so far, a batch per transaction; resolves once it is written (or dropped). */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.writeQueued());
    return this.flushing;
  }

  private async writeQueued(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.options.batch_rows);
      for (const item of batch) this.queued_bytes -= item.entry.size_bytes;
      try {
        const rows = batch.map(rowOf);
        await this.deps.store.transaction((tx) => tx.requestLog.insertRequestLogs(rows));
        this.written += rows.length;
      } catch (error) {
        this.deps.logger.error({ err: error, rows: batch.length }, 'request log batch not written');
        this.drop(batch.length);
      }
    }
  }

  private drop(count: number): void {
    this.dropped += count;
    const now_ms = Date.now();
    if (now_ms - this.last_drop_warning_ms >= DROP_WARNING_MS) {
      this.last_drop_warning_ms = now_ms;
      this.deps.logger.warn({ dropped: this.dropped }, 'request log entries dropped (queue full or write failed)');
    }
  }

  /** One pruning pass: rows older than the days limit (gateway clock), then all but the newest max_rows. How many went. */
  async prune(): Promise<number> {
    const { request_log_days, request_log_max_rows } = this.deps.config.limits;
    if (request_log_days <= 0) return 0;
    const before_ms = this.deps.clock.now_ms() - request_log_days * DAY_MS;
    let deleted = 0;
    for (let i = 0; i < PRUNE_PASS_STATEMENTS; i += 1) {
      const gone = await this.deps.store.requestLog.pruneRequestLogsBefore(before_ms, PRUNE_BATCH_ROWS);
      deleted += gone;
      if (gone < PRUNE_BATCH_ROWS) break;
    }
    for (let i = 0; i < PRUNE_PASS_STATEMENTS; i += 1) {
      const gone = await this.deps.store.requestLog.pruneRequestLogsBeyond(request_log_max_rows, PRUNE_BATCH_ROWS);
      deleted += gone;
      if (gone < PRUNE_BATCH_ROWS) break;
    }
    return deleted;
  }

  /** Starts the flush and prune timers (unref'd: they never keep the process alive). */
  start(): this {
    if (!this.enabled) return this;
    this.flush_timer = setInterval(() => {
      if (this.queue.length > 0) void this.flush();
    }, this.options.flush_ms).unref();
    this.prune_timer = setInterval(() => {
      this.prune().catch((error: unknown) => this.deps.logger.error({ err: error }, 'request log prune failed'));
    }, this.options.prune_ms).unref();
    return this;
  }

  /** Stops the timers and writes what is queued: called before the store closes. */
  async stop(): Promise<void> {
    if (this.flush_timer) clearInterval(this.flush_timer);
    if (this.prune_timer) clearInterval(this.prune_timer);
    this.flush_timer = null;
    this.prune_timer = null;
    await this.flush();
  }
}

function cut(text: string | null, max_chars: number): string | null {
  return text === null ? null : text.length > max_chars ? `${text.slice(0, max_chars - 1)}…` : text;
}

/** The row kept of an entry: every text masked, every body masked and cut. */
function rowOf({ entry, created_at_ms }: Queued): NewRequestLogRow {
  const answer = typeof entry.answer_body === 'string' ? parsedOrText(entry.answer_body) : entry.answer_body;
  // An edge answer (404, 413, …) was seen only as text: its status and description are read from it.
  const fields = typeof answer === 'object' && answer !== null ? (answer as Record<string, unknown>) : {};
  const api_status = entry.api_status ?? (typeof fields.status === 'number' ? fields.status : null);
  const description = entry.description ?? (typeof fields.description === 'string' ? fields.description : null);
  return {
    merchant_id: entry.merchant_id,
    method: entry.method.slice(0, 16),
    route: cut(maskText(entry.route), FIELD_MAX_CHARS)!,
    path: cut(maskText(entry.path.startsWith('/') ? entry.path : `/${entry.path}`), FIELD_MAX_CHARS)!,
    operation: cut(entry.operation === null ? null : maskText(entry.operation), 64),
    http_code: entry.http_code,
    api_status,
    description: cut(description === null ? null : maskText(description), DESCRIPTION_MAX_CHARS),
    trace_id: entry.trace_id,
    latency_ms: Math.max(0, Math.round(entry.latency_ms)),
    created_at_ms,
    request_json: maskedBodyJson(entry.request_body),
    answer_json: maskedBodyJson(answer),
  };
}

function parsedOrText(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return { text };
  }
}
