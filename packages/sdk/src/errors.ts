// What the SDK throws. Expected business outcomes (a declined card, a duplicate order_id, an order
// still open) are values the methods return; these are the cases a merchant's code cannot carry on
// from as if it had an answer: an answer that does not verify, a clock off, a gateway unreachable
// after the retries, or an HTTP answer outside the contract. Each says what to do about it.

/** The base of every error the SDK throws. */
export class PaygateError extends Error {
  override readonly name: string = 'PaygateError';
}

/**
 * The answer (or its header, for v1.3) is missing a signature or its signature does not verify with
 * the secret: it may not come from the gateway, or was changed on the way, or the secret is wrong.
 * Never used as an answer; what it said is kept for diagnosis only, marked unverified.
 */
export class AnswerSignatureError extends PaygateError {
  override readonly name = 'AnswerSignatureError';
  constructor(
    message: string,
    /** What the unverified answer claimed, for the log; not to be trusted. */
    readonly unverified_status: number | null,
    readonly unverified_description: string | null,
  ) {
    super(message);
  }
}

/**
 * The gateway refused the request's timestamp (status 1 `Timestamp expired`, decisions.md §4): this
 * machine's clock is more than 60 seconds away from the gateway's. `skew_s` is how far, measured
 * against the timestamp of the gateway's own (verified) answer: positive when this clock is ahead.
 */
export class ClockSkewError extends PaygateError {
  override readonly name = 'ClockSkewError';
  constructor(
    readonly skew_s: number,
    /** The gateway's description (`Timestamp expired`, or the milliseconds hint). */
    readonly description: string,
  ) {
    super(
      `The gateway refused the request's timestamp (${description}): this machine's clock is ${Math.abs(skew_s)} s ` +
        `${skew_s >= 0 ? 'ahead of' : 'behind'} the gateway's, more than the 60 s allowed. Synchronise it (NTP).`,
    );
  }
}

/** Why no answer was received. */
export type NetworkFailure =
  'connection_refused' | 'dns' | 'connect_timeout' | 'connection_reset' | 'timeout' | 'answer_too_large' | 'other';

/**
 * No answer from the gateway after every attempt allowed. `maybe_processed` is true when a request
 * may have reached the gateway (the connection broke or timed out after sending): for a call keyed
 * by order_id, sending it again with the same order_id is safe (the gateway answers the first
 * outcome again, decisions.md §6); otherwise look before trying again (findOrder, transactionStatus,
 * a list call).
 */
export class GatewayUnreachableError extends PaygateError {
  override readonly name = 'GatewayUnreachableError';
  constructor(
    readonly reason: NetworkFailure,
    readonly attempts: number,
    readonly maybe_processed: boolean,
    override readonly cause: unknown,
  ) {
    super(
      `No answer from the gateway after ${attempts} attempt${attempts === 1 ? '' : 's'} (${reason.replace(/_/g, ' ')})` +
        (maybe_processed ? '; the request may have been processed' : '; the request was not processed'),
    );
  }
}

/**
 * The gateway answered with an HTTP status other than 200 (decisions.md §5: 400, 404, 405, 408, 413,
 * 429, 500 ...), which no business outcome uses. Never retried blindly. `status` and `description`
 * are the envelope's when there was one; `retry_after_s` is a 429's Retry-After.
 */
export class GatewayHttpError extends PaygateError {
  override readonly name = 'GatewayHttpError';
  constructor(
    readonly http_status: number,
    readonly status: number | null,
    readonly description: string | null,
    readonly retry_after_s: number | null,
  ) {
    super(
      `The gateway answered HTTP ${http_status}${description === null ? '' : `: ${description}`}${status === null ? '' : ` (status ${status})`}` +
        (http_status >= 500 ? '; a payment keyed by order_id may still complete: ask again later with the same order_id' : ''),
    );
  }
}

/** The answer is not what the contract promises (not JSON, not an object): a proxy in the way, or the wrong URL. */
export class UnexpectedAnswerError extends PaygateError {
  override readonly name = 'UnexpectedAnswerError';
}
