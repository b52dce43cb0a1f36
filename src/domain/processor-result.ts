// What a processor answered, in our terms: the normalized result every connector returns and
// the operations, the routing rules (domain/routing.ts) and the state machine read. Defined here,
// so the domain depends on nothing; connectors/connector.ts re-exports it for the connectors.

/**
 * A result the processor will produce later by itself. A live processor reports it through its
 * webhooks; the sandbox simulates it, and the gateway keeps it as due work in the database.
 */
export interface LaterResult {
  readonly after_ms: number;
  readonly to: 'approved' | 'rejected' | 'error';
  readonly error_code: string;
  readonly error_details: string;
}

/**
 * A decline a cascade may retry on another gateway ('soft': do not honour, insufficient funds,
 * a processor error) or must not ('hard': lost or stolen card, fraud). Each connector classifies
 * its own codes (issue 17 builds the cascade on it).
 */
export type DeclineKind = 'soft' | 'hard';

export type ProcessorResult =
  | {
      readonly kind: 'approved';
      readonly psp_transaction_id: string;
      readonly charge_amount_minor: number;
      readonly charge_currency: string;
      readonly error_code: string;
      readonly error_details: string;
      /**
       * The sandbox only (CVV 259, decisions §16): the simulated issuer opens a chargeback of the
       * whole amount this long after the approval; the gateway keeps it as due work.
       */
      readonly chargeback_after_ms?: number;
    }
  | {
      readonly kind: 'rejected';
      readonly psp_transaction_id: string | null;
      readonly error_code: string;
      readonly error_details: string;
      readonly decline?: DeclineKind;
    }
  | { readonly kind: 'error'; readonly psp_transaction_id: string | null; readonly error_code: string; readonly error_details: string }
  /**
   * Accepted; the final answer comes later: `later` when the connector knows it now (the
   * sandbox), else from the processor's webhook or a lookup the gateway schedules
   * (`recheck_after_ms`; null: the connector's default).
   */
  | {
      readonly kind: 'pending';
      readonly psp_transaction_id: string;
      readonly error_code: string;
      readonly error_details: string;
      readonly later: LaterResult | null;
      readonly recheck_after_ms?: number;
    }
  /**
   * The outcome is unknown: the request may or may not have reached the processor (a time-out,
   * a connection lost after sending, an answer that does not parse, a processor error). Nothing
   * may be decided before the processor is asked: the transaction stays pending and a lookup is
   * scheduled. Retrying with the same idempotency key never charges twice.
   */
  | { readonly kind: 'unknown'; readonly psp_transaction_id: string | null; readonly reason: string }
  /** The customer must act on one of the gateway's own pages (the sandbox's 3-D Secure and e-wallet); `later` is what happens if nobody does. */
  | {
      readonly kind: 'challenge';
      readonly psp_transaction_id: string;
      readonly error_code: string;
      readonly error_details: string;
      readonly mode: 'interactive' | 'unresponsive';
      readonly later: LaterResult;
    }
  /**
   * The customer must act on the processor's own page (its 3-D Secure): `redirect_url` leads
   * there, and the processor sends the customer back to the request's return_to URLs. The outcome
   * arrives by webhook, by the customer's return, or by a lookup after `recheck_after_ms`.
   */
  | {
      readonly kind: 'redirect';
      readonly psp_transaction_id: string;
      readonly redirect_url: string;
      readonly error_code: string;
      readonly error_details: string;
      readonly recheck_after_ms: number;
    };
