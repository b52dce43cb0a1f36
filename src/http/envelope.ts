// The answer envelope (decisions.md §5): every answer carries status, description, version,
// timestamp and (when the merchant is known) signature. Positive statuses are the merchant's
// doing and name the problem; negative means our fault. docs/errors.md lists each value.
import type { FlatValue } from '../domain/signing.js';
import { signBody } from '../domain/signing.js';

export const Status = {
  OK: 0,
  /** |server time - timestamp| > 60 s. Also "order not found" on find-order (spec §4.7). */
  TIMESTAMP_EXPIRED: 1,
  INVALID_SIGNATURE: 2,
  /** find-order only (spec §4.7). */
  ORDER_OPEN: 3,
  /** find-order only (spec §4.7). */
  ORDER_TIMED_OUT: 4,
  INVALID_FIELD: 10,
  AUTHENTICATION_FAILED: 11,
  DUPLICATE_ORDER: 12,
  TRANSACTION_NOT_FOUND: 13,
  REFUND_REFUSED: 14,
  NO_GATEWAY: 15,
  IN_PROGRESS: 16,
  CARD_DATA_UNREADABLE: 17,
  CARD_TOKEN_NOT_FOUND: 18,
  UNKNOWN_PATH: 20,
  METHOD_NOT_ALLOWED: 21,
  BODY_TOO_LARGE: 22,
  MALFORMED_BODY: 23,
  INTERNAL_ERROR: -1,
} as const;

export interface Reply {
  readonly status: number;
  readonly description: string;
  /** Fields of the answer besides the envelope's own. */
  readonly fields?: Readonly<Record<string, FlatValue>>;
  /** 200 unless the edge itself refused the request (decisions.md §5). */
  readonly http_code?: number;
}

export function reply(status: number, description: string, fields?: Record<string, FlatValue>): Reply {
  return fields ? { status, description, fields } : { status, description };
}

export function fieldError(description: string): Reply {
  return reply(Status.INVALID_FIELD, description);
}

/** The body sent: envelope plus fields, with a fresh timestamp and, when we can, a signature last. */
export function answerBody(
  answer: Reply,
  version: string,
  timestamp: number,
  secret: string | null,
): Record<string, FlatValue> {
  const body: Record<string, FlatValue> = { status: answer.status, description: answer.description, ...answer.fields, version, timestamp };
  if (secret !== null) body.signature = signBody(body, secret);
  return body;
}
