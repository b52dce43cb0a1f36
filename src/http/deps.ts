// What the HTTP edge needs besides what operations need: the limits and watches that belong to
// requests, not to any operation. Built in main.ts and given to the app; operations never see them.
import type { OperationDeps } from '../operations/deps.js';
import type { RequestLogWriter } from '../operations/request-log.js';
import type { HeaderReuseWatch } from './header-reuse.js';
import type { RateLimits } from './rate-limits.js';

export interface HttpDeps extends OperationDeps {
  /** v1.3 Gt-Authentication headers seen, to notice one replayed with another body. */
  readonly header_reuse: HeaderReuseWatch;
  /** Requests per minute per client address and per merchant (docs/limits.md §3). */
  readonly rate_limits: RateLimits;
  /** Every API request, queued and written off the request's path (operations/request-log.ts). */
  readonly request_log: RequestLogWriter;
  /**
   * Resolves once everything the store has committed so far is on disk, null when it already is
   * (Store.durable). Every API answer waits for it before it leaves (signed-route.ts,
   * header-signed-route.ts): an answer read from a commit whose fsync has not ended would promise
   * what a crash could still undo. Only an answer that is the request's own commit, already on
   * disk, does not (Reply.from_own_commit: a new sale, refund or payout, a capture or void done).
   */
  readonly answers_durable: () => Promise<void> | null;
}
