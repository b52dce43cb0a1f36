// What a fake payment processor records about itself for the tests to inspect: the problems it
// found in the messages it received or sent (`fake.violations`, which tests assert is empty), and
// bounded lists of what it saw. The fake Checkout.com and the fake Stripe both check every request,
// answer and webhook event against the processor's published description and keep the problems
// here in one shape, so that a test reads them the same way whichever processor it drives; so
// are the requests they received.
import type http from 'node:http';
import type { FakeFailureMode } from './failure-modes.js';

export interface Violation {
  readonly kind: 'request' | 'response' | 'event' | 'fake';
  /** e.g. "POST /payments", "GET /v1/refunds → 400" or "event payment_approved evt_…". */
  readonly label: string;
  readonly problems: readonly string[];
}

export interface ViolationLog {
  /** The violations so far, oldest first (the same array for the fake's whole life). */
  readonly violations: readonly Violation[];
  /** Records the problems under this label; no problems, nothing recorded. */
  add(kind: Violation['kind'], label: string, problems: readonly string[]): void;
  clear(): void;
}

/** A log that keeps at most `max_violations` (later ones are dropped: the first ones explain). */
export function createViolationLog(max_violations: number): ViolationLog {
  const violations: Violation[] = [];
  return {
    violations,
    add(kind, label, problems) {
      if (problems.length === 0 || violations.length >= max_violations) return;
      violations.push({ kind, label, problems: [...problems] });
    },
    clear() {
      violations.length = 0;
    },
  };
}

/** Drops the oldest entries of `list` beyond `max_length` (lists a fake records into without end). */
export function keepBounded<T>(list: T[], max_length: number): void {
  if (list.length > max_length) list.splice(0, list.length - max_length);
}

/** What every fake records of a request it received (each fake adds what its processor's requests carry). */
export interface RecordedRequestBase<Route extends string> {
  readonly seq: number;
  readonly method: string;
  /** Without the query string. */
  readonly path: string;
  /** The operation it matched, or null (a browser's page, an unknown path). */
  readonly route: Route | null;
  /** Lower-case names, as Node gives them. */
  readonly headers: Readonly<http.IncomingHttpHeaders>;
  readonly idempotency_key: string | null;
  /** Raw body text ('' when none). */
  readonly body: string;
  readonly at_ms: number;
  /** The status answered; null when no answer was sent (held or destroyed socket). */
  readonly status: number | null;
  readonly answer_body: string | null;
  readonly failure: FakeFailureMode | null;
}

/** The same fields, writable: a fake's own record, which it fills in as it handles the request. */
export type Writable<T> = { -readonly [K in keyof T]: T[K] };
