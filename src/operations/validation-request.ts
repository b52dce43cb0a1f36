// The validation request of decisions.md §11: before a cashier deposit (init-pay-in) or
// withdrawal (init-pay-out) is accepted, the merchant is asked. A body-signed JSON POST to the
// session's validation_url; the merchant's body-signed reply with status 0 accepts, a positive
// status refuses (its description is shown to the customer). Anything else refuses too:
// unreachable, timed out, not JSON, badly signed, negative status. It goes through the same
// outbound client as notifications (outbound/post.ts): one time-out, a reply size cap, and in
// live mode no private addresses.
import { signBody, verifyBody } from '../domain/signing.js';
import { postJson } from '../outbound/post.js';
import type { OperationDeps } from './deps.js';

export interface ValidationRequest {
  readonly url: string;
  readonly secret: string;
  /** The body without timestamp and signature (added here). */
  readonly fields: {
    readonly merchant_id: string;
    /** application_key (init-pay-in, version 1.2) or frontend (init-pay-out, version 1.1). */
    readonly identity: { readonly kind: 'application_key' | 'frontend'; readonly value: string };
    readonly pin: string;
    readonly order_id: string;
    readonly transaction_type: 'sale' | 'payout';
    readonly amount: number;
    readonly currency: string;
    readonly payment_method: string;
    readonly auth_token: string;
    readonly version: string;
  };
}

export type ValidationOutcome =
  | { readonly kind: 'accepted' }
  /** The merchant refused with a positive status; its description is for the customer. */
  | { readonly kind: 'refused'; readonly status: number; readonly description: string }
  /** No usable answer: refused as well, with our own text; `reason` is for the log. */
  | { readonly kind: 'failed'; readonly reason: string };

const DESCRIPTION_MAX = 256;

export function validationBody(request: ValidationRequest['fields'], timestamp: number, secret: string): Record<string, string | number> {
  const body: Record<string, string | number> = {
    merchant_id: request.merchant_id,
    [request.identity.kind]: request.identity.value,
    pin: request.pin,
    order_id: request.order_id,
    transaction_type: request.transaction_type,
    // decisions.md §11: pending for a deposit, requested for a payout (nothing exists yet).
    transaction_status: request.transaction_type === 'sale' ? 'pending' : 'requested',
    amount: request.amount,
    currency: request.currency,
    payment_method: request.payment_method,
    auth_token: request.auth_token,
    timestamp,
    version: request.version,
  };
  body.signature = signBody(body, secret);
  return body;
}

/** Reads the merchant's reply: only a JSON object with an integer status and a valid signature counts. */
export function readValidationReply(http_status: number, text: string, secret: string): ValidationOutcome {
  if (http_status < 200 || http_status > 299) return { kind: 'failed', reason: `HTTP ${http_status}` };
  let reply: unknown;
  try {
    reply = JSON.parse(text);
  } catch {
    return { kind: 'failed', reason: 'reply is not JSON' };
  }
  if (typeof reply !== 'object' || reply === null || Array.isArray(reply)) return { kind: 'failed', reason: 'reply is not a JSON object' };
  const fields = reply as Record<string, unknown>;
  if (Object.values(fields).some((value) => typeof value === 'object' && value !== null))
    return { kind: 'failed', reason: 'reply has nested values' };
  if (!verifyBody(fields, secret)) return { kind: 'failed', reason: 'reply signature missing or invalid' };
  const status = fields.status;
  if (typeof status !== 'number' || !Number.isSafeInteger(status))
    return { kind: 'failed', reason: 'reply status missing or not an integer' };
  if (status === 0) return { kind: 'accepted' };
  if (status < 0) return { kind: 'failed', reason: `merchant reported an internal error (status ${status})` };
  const description = typeof fields.description === 'string' ? fields.description.trim().slice(0, DESCRIPTION_MAX) : '';
  return { kind: 'refused', status, description };
}

export async function sendValidationRequest(deps: OperationDeps, request: ValidationRequest): Promise<ValidationOutcome> {
  const timestamp = Math.floor(deps.clock.now_ms() / 1000);
  const body = validationBody(request.fields, timestamp, request.secret);
  const result = await postJson(request.url, JSON.stringify(body), {
    timeout_ms: deps.config.limits.outbound_timeout_ms,
    max_reply_bytes: deps.config.limits.outbound_reply_max_bytes,
    allow_private: deps.config.environment === 'sandbox' || deps.config.limits.allow_private_urls,
  });
  let outcome: ValidationOutcome;
  if (result.kind === 'reply') outcome = readValidationReply(result.http_status, result.body, request.secret);
  else if (result.kind === 'reply_too_large') outcome = { kind: 'failed', reason: 'reply too large' };
  else outcome = { kind: 'failed', reason: result.reason };
  deps.logger.info(
    {
      merchant_id: request.fields.merchant_id,
      order_id: request.fields.order_id,
      outcome: outcome.kind,
      ...(outcome.kind === 'failed' ? { reason: outcome.reason } : {}),
      ...(outcome.kind === 'refused' ? { status: outcome.status } : {}),
      duration_ms: result.duration_ms,
    },
    'validation request',
  );
  return outcome;
}
