// The way back to the shop from the cashier (issue 19 item 10): the merchant's return_url with
// what happened added as query parameters, signed by the body rule (decisions.md §1) so the shop
// can trust them without waiting for the notification:
//
//   return_url?order_id=…&trace_id=…&transaction_status=…&timestamp=…&signature=…
//
// signature = sha384hex of the added parameters' values in sorted-key order, then the secret
// (the return_url's own parameters are not covered). order_id is the session's (absent for a
// deposit or withdrawal session without one); trace_id and transaction_status are those of the
// session's latest payment (absent before any). The notification stays the source of truth:
// a customer may never come back.
import { signBody } from './signing.js';

export interface ReturnFacts {
  readonly order_id: string | null;
  readonly trace_id: number | null;
  readonly transaction_status: string | null;
  /** Unix seconds. */
  readonly timestamp: number;
}

export function signedReturnUrl(return_url: string, facts: ReturnFacts, secret: string): string {
  const fields: Record<string, string | number> = { timestamp: facts.timestamp };
  if (facts.order_id !== null) fields.order_id = facts.order_id;
  if (facts.trace_id !== null) fields.trace_id = facts.trace_id;
  if (facts.transaction_status !== null) fields.transaction_status = facts.transaction_status;
  let url: URL;
  try {
    url = new URL(return_url);
  } catch {
    return return_url; // checked when the session was opened; never expected here
  }
  for (const [key, value] of Object.entries(fields)) url.searchParams.set(key, String(value));
  url.searchParams.set('signature', signBody(fields, secret));
  return url.toString();
}
