// Status 15 (NO_GATEWAY): the description names why no gateway takes the request, so a merchant
// (or their operator) knows what to fix: no gateway yet, a disabled one, one that does not run
// here, a currency, a kind of payment the processor does not make. Nothing in it reveals another
// merchant's gateways: a gateway that is not this merchant's is "not this merchant's", whether
// it exists or not.
import type { GatewayRefusal } from '../domain/merchants.js';
import { reply, type Reply, Status } from './envelope.js';

/** `short` leaves the gateway's id out, for the 75-character descriptions of the cashier calls (spec §2.3). */
export function gatewayRefusalText(refusal: GatewayRefusal, short = false): string {
  const gateway = (id: string) => (short ? 'the gateway' : `gateway ${id}`);
  switch (refusal.kind) {
    case 'no_gateways':
      return 'Gateway unavailable: this merchant has no gateway yet';
    case 'unknown':
      return `Gateway unavailable: ${gateway(refusal.gateway_id)} is not this merchant's`;
    case 'disabled':
      return `Gateway unavailable: ${gateway(refusal.gateway_id)} is disabled`;
    case 'not_here':
      return short
        ? `Gateway unavailable: ${refusal.connector} gateways take no payments here`
        : `Gateway unavailable: gateway ${refusal.gateway_id} is a ${refusal.connector} gateway, which takes no payments in this environment`;
    case 'currency':
      return `Gateway unavailable: ${gateway(refusal.gateway_id)} does not accept ${refusal.currency}`;
    case 'no_currency':
      return `Gateway unavailable: no gateway of this merchant accepts ${refusal.currency}`;
    case 'no_rule':
      return 'Gateway unavailable: no routing rule of this merchant matches this payment';
    case 'capability':
      return short
        ? `Gateway unavailable: the gateway makes no ${refusal.capability}`
        : `Gateway unavailable: gateway ${refusal.gateway_id} (${refusal.connector}) does not support ${refusal.capability}`;
  }
}

export function gatewayRefusalReply(refusal: GatewayRefusal, short = false): Reply {
  return reply(Status.NO_GATEWAY, gatewayRefusalText(refusal, short));
}
