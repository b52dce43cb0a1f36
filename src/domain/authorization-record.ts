// The capture or void of an authorization (decisions §16), as the gateway keeps it: one row per
// authorization (its trace_id is the key), so an authorization is captured or voided once however
// often it is asked. The row is written before the processor is asked: a request that finds it
// answers from the authorization instead of asking again, and a process that dies while asking
// leaves it for the due-work sweep, which asks the processor before deciding anything.
// Object types, not interfaces, as Kysely's rows are.

/** What was asked of the authorization. */
export type AuthorizationActionKind = 'capture' | 'void';

/**
 * Where the action is:
 *
 *   requested -> accepted (the processor took it and confirms later) -> done
 *   requested -> done (the processor did it at once)
 *   requested, accepted -> (row deleted) when the processor refused it: nothing happened there,
 *   so the authorization may be captured or voided again.
 */
export type AuthorizationActionState = 'requested' | 'accepted' | 'done';

/**
 * Who asked: the merchant's API call, an agent in the back office, the gateway at the
 * authorization's expiry, or nobody here (the processor reported a capture or void made outside
 * the gateway, in its own dashboard).
 */
export type AuthorizationActionOrigin = 'merchant' | 'agent' | 'expiry' | 'processor';

export type AuthorizationActionRow = {
  /** The authorization's trace_id. */
  trace_id: number;
  action: AuthorizationActionKind;
  /** What was authorized, kept when a partial capture makes the transaction's amount the captured one. */
  authorized_minor: number;
  /** A capture: what is captured; a void: the authorized amount. */
  amount_minor: number;
  state: AuthorizationActionState;
  origin: AuthorizationActionOrigin;
  /** The agent's user name for an agent's action, else null. */
  agent: string | null;
  /** Sent as the processor's idempotency key: the same on every attempt of this action. */
  idempotency_key: string;
  /** The processor's id of the capture or void, when it gave one. */
  psp_action_id: string | null;
  /** How many times the processor was asked about it after the request lost its answer. */
  attempts: number;
  requested_at_ms: number;
  updated_at_ms: number;
};
