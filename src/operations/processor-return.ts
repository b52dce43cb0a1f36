// A customer back from a processor's own 3-D Secure page. The processor sends them to the
// gateway (never straight to the merchant), the gateway asks the processor for the outcome and
// applies it, then sends the customer on to the merchant's return_url. The way back is a URL
// with the trace_id and a keyed check of it, so nobody can make up one for another transaction;
// the customer's word (success or failure in the URL) is never taken: only the processor's.
import { timingSafeEqual } from 'node:crypto';
import type { OperationDeps } from './deps.js';
import { completeAndSettle, lookUpAndSettle } from './processor-lookup.js';

const RETURN_PURPOSE = 'processor-return';
/** Hex characters of the check: 128 bits. */
const CHECK_LENGTH = 32;

function returnCheck(deps: Pick<OperationDeps, 'sealer'>, trace_id: number): string {
  return deps.sealer.fingerprint(String(trace_id), RETURN_PURPOSE).slice(0, CHECK_LENGTH);
}

/** Where the processor sends the customer after its 3-D Secure page (success and failure alike). */
export function processorReturnUrls(
  deps: Pick<OperationDeps, 'sealer' | 'public_url'>,
  trace_id: number,
): { readonly success_url: string; readonly failure_url: string } {
  const base = `${deps.public_url()}/return/${trace_id}/${returnCheck(deps, trace_id)}`;
  return { success_url: `${base}?outcome=success`, failure_url: `${base}?outcome=failure` };
}

export type ReturnOutcome =
  /** Send the customer here: the merchant's return_url (or the cashier's result page). */
  | { readonly kind: 'continue'; readonly to: string }
  /** No such way back: a made-up or damaged link. */
  | { readonly kind: 'not_found' };

export async function customerReturned(
  deps: OperationDeps,
  trace_id_text: string,
  check: string,
  query: Readonly<Record<string, unknown>> = {},
): Promise<ReturnOutcome> {
  if (!/^[1-9][0-9]{0,15}$/.test(trace_id_text) || !/^[0-9a-f]{32}$/.test(check)) return { kind: 'not_found' };
  const trace_id = Number(trace_id_text);
  if (!timingSafeEqual(Buffer.from(check), Buffer.from(returnCheck(deps, trace_id)))) return { kind: 'not_found' };
  const row = await deps.store.transactions.get(trace_id);
  if (!row || row.return_url === null) return { kind: 'not_found' };
  if (row.status === 'pending_async' || row.status === 'pending') {
    const found = await deps.connectors.forGatewayId(deps.store, row.gateway_id);
    if (found) {
      const params: Record<string, string> = {};
      for (const [name, value] of Object.entries(query)) if (typeof value === 'string') params[name] = value;
      // Which way back is only a hint to the processor's completion (PayPal's cancel link); its word decides.
      const way = query.outcome === 'failure' ? 'failure' : 'success';
      const settled =
        row.status === 'pending_async' && found.connector.completeReturn
          ? await completeAndSettle(deps, row, found.connector, way, params)
          : await lookUpAndSettle(deps, row, found.connector, 'report');
      // The processor unreachable now: the customer goes on all the same; a scheduled lookup or
      // the processor's webhook settles it, and the merchant is notified then.
      if (settled.kind === 'unavailable')
        deps.logger.warn({ trace_id, reason: settled.reason }, 'processor not reachable when the customer came back from 3-D Secure');
    }
  }
  return { kind: 'continue', to: row.return_url };
}
