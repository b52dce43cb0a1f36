// Which gateway, and so which connector, takes a new payment: the one the request names, else
// the merchant's first usable gateway for the currency (decisions.md §13). When none does, the
// refusal says exactly why (status 15 names it: no gateway at all, disabled, not in this
// environment, not this currency, cannot do this kind of payment).
import type { Capabilities, Connector } from '../connectors/connector.js';
import { type Gateway, type GatewayRefusal, type Merchant, selectGateway } from '../domain/merchants.js';
import type { OperationDeps } from './deps.js';

export type GatewayRouting =
  | { readonly kind: 'routed'; readonly gateway: Gateway; readonly connector: Connector }
  | { readonly kind: 'refused'; readonly refusal: GatewayRefusal };

/** The capabilities a request may need beyond a card sale and a refund, which every connector has. */
export type NeededCapability = Exclude<keyof Capabilities, 'card_sale' | 'refund' | 'webhooks' | 'three_d_secure'>;

const CAPABILITY_WORDS: Readonly<Record<NeededCapability, string>> = {
  card_payout: 'card payouts',
  direct_payout: 'direct payouts',
  wallet_deposit: 'e-wallet deposits',
  merchant_initiated: 'stored-card charges',
};

export async function routePayment(
  deps: Pick<OperationDeps, 'merchants' | 'connectors'>,
  merchant: Merchant,
  currency: string,
  requested: string | null | undefined,
  need: NeededCapability | null = null,
): Promise<GatewayRouting> {
  const runs_here = (connector: string) => deps.connectors.runsHere(connector);
  let choice = selectGateway(merchant, currency, requested, runs_here);
  // The merchant as this request found it may be a few seconds old (operations/merchant-directory.ts):
  // a gateway added since then by the CLI or another instance is looked for once before refusing.
  if (choice.kind === 'refused' && ['unknown', 'no_gateways', 'no_currency'].includes(choice.refusal.kind)) {
    const fresh = await deps.merchants.findFresh(merchant.merchant_id);
    if (fresh) choice = selectGateway(fresh, currency, requested, runs_here);
  }
  if (choice.kind === 'refused') return choice;
  const gateway = choice.gateway;
  const connector = deps.connectors.forGateway(gateway);
  if (!connector) return { kind: 'refused', refusal: { kind: 'not_here', gateway_id: gateway.gateway_id, connector: gateway.connector } };
  if (need !== null && deps.connectors.definition(gateway.connector)?.capabilities[need] !== true) {
    return { kind: 'refused', refusal: { kind: 'capability', gateway_id: gateway.gateway_id, connector: gateway.connector, capability: CAPABILITY_WORDS[need] } };
  }
  return { kind: 'routed', gateway, connector };
}
