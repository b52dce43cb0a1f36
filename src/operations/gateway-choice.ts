// Which gateway, and so which connector, takes a new payment (decisions.md §13): the one the
// request names, else the first of the merchant's routing candidates (domain/routing.ts), with
// the others kept in order for a cascade. When none can, the refusal says exactly why (status 15
// names it: no gateway at all, no rule matching, disabled, not in this environment, not this
// currency, cannot do this kind of payment).
import type { Capabilities, Connector } from '../connectors/connector.js';
import type { CardData } from '../domain/cards.js';
import { cardBrand } from '../domain/cards.js';
import { type Gateway, type GatewayRefusal, type Merchant, selectGateway } from '../domain/merchants.js';
import { type PayoutMethod, routeCandidates, type RoutedPayment, rulesNeedBinCountry } from '../domain/routing.js';
import type { OperationDeps } from './deps.js';

export type GatewayRouting =
  | {
      readonly kind: 'routed';
      readonly gateway: Gateway;
      readonly connector: Connector;
      /** The next candidates, in order, for a cascade; empty when the request named its gateway. */
      readonly alternatives: readonly Gateway[];
    }
  | { readonly kind: 'refused'; readonly refusal: GatewayRefusal };

/** The capabilities a request may need beyond a card sale and a refund, which every connector has. */
export type NeededCapability = Exclude<keyof Capabilities, 'card_sale' | 'refund' | 'webhooks' | 'three_d_secure' | 'disputes'>;

const CAPABILITY_WORDS: Readonly<Record<NeededCapability, string>> = {
  card_payout: 'card payouts',
  direct_payout: 'direct payouts',
  wallet_deposit: 'e-wallet deposits',
  merchant_initiated: 'stored-card charges',
  authorize_capture: 'authorizations',
};

const PAYEE_WORDS: Readonly<Record<Exclude<PayoutMethod, 'card'>, string>> = {
  paypal: 'payouts to PayPal accounts',
  bank_account: 'payouts to bank accounts',
  ewallet: 'payouts to its e-wallet',
};

/** What routing looks at: the amount and the card when known (undefined: not known yet; null card: none). */
export interface PaymentToRoute {
  readonly currency: string;
  readonly amount_minor?: number;
  readonly card?: CardData | null;
  /** A payout's method (domain/routing.ts payoutMethodOf), 'unknown' for a payout whose method is not chosen yet (a cashier payout session); absent for a deposit. */
  readonly payout_method?: PayoutMethod | 'unknown';
}

/** BIN prefixes looked up in the BIN table: 8, 7 and 6 digits, the longest known one wins. */
function binPrefixes(pan: string): string[] {
  return [8, 7, 6].filter((n) => pan.length > n).map((n) => pan.slice(0, n));
}

async function routedPayment(deps: Pick<OperationDeps, 'store'>, merchant: Merchant, payment: PaymentToRoute): Promise<RoutedPayment> {
  const card = payment.card;
  const bin_country =
    card === undefined
      ? undefined
      : card === null
        ? null
        : // Looked up only when a rule of the merchant names countries: most payments cost no query.
          rulesNeedBinCountry(merchant.routing_rules)
          ? await deps.store.merchants.findBinCountry(binPrefixes(card.pan))
          : null;
  return {
    currency: payment.currency,
    amount_minor: payment.amount_minor,
    card_brand: card === undefined ? undefined : card === null ? null : cardBrand(card.pan),
    bin_country,
    payout_method: payment.payout_method === undefined ? null : payment.payout_method === 'unknown' ? undefined : payment.payout_method,
  };
}

export async function routePayment(
  deps: Pick<OperationDeps, 'merchants' | 'connectors' | 'store'>,
  merchant: Merchant,
  payment: PaymentToRoute,
  requested: string | null | undefined,
  need: NeededCapability | null = null,
): Promise<GatewayRouting> {
  const unusable = (gateway: Gateway): GatewayRefusal | null => {
    if (!gateway.enabled) return { kind: 'disabled', gateway_id: gateway.gateway_id };
    if (!deps.connectors.runsHere(gateway.connector))
      return { kind: 'not_here', gateway_id: gateway.gateway_id, connector: gateway.connector };
    if (!gateway.currencies.includes(payment.currency))
      return { kind: 'currency', gateway_id: gateway.gateway_id, currency: payment.currency };
    const capabilities = deps.connectors.definition(gateway.connector)?.capabilities;
    // A payment with a card to charge (a sale, an authorization, a stored-card charge) needs a connector that takes cards.
    const charges_card = payment.card !== undefined && payment.card !== null && need !== 'card_payout';
    if (charges_card && capabilities?.card_sale !== true) {
      return { kind: 'capability', gateway_id: gateway.gateway_id, connector: gateway.connector, capability: 'card sales' };
    }
    if (need !== null && capabilities?.[need] !== true) {
      return { kind: 'capability', gateway_id: gateway.gateway_id, connector: gateway.connector, capability: CAPABILITY_WORDS[need] };
    }
    // A direct payout goes only where its kind of payee is paid: a PayPal account never to a bank-only processor.
    const method = payment.payout_method;
    if (need === 'direct_payout' && method !== undefined && method !== 'unknown' && method !== 'card') {
      const methods = deps.connectors.forGateway(gateway)?.direct?.payee.methods ?? [];
      if (!methods.includes(method))
        return { kind: 'capability', gateway_id: gateway.gateway_id, connector: gateway.connector, capability: PAYEE_WORDS[method] };
    }
    return null;
  };
  const choose = async (current: Merchant): Promise<{ readonly gateways: readonly Gateway[] } | { readonly refusal: GatewayRefusal }> => {
    if (requested !== undefined && requested !== null && requested !== '') {
      const named = selectGateway(current, payment.currency, requested, (c) => deps.connectors.runsHere(c));
      if (named.kind === 'refused') return { refusal: named.refusal };
      const refusal = unusable(named.gateway);
      return refusal ? { refusal } : { gateways: [named.gateway] };
    }
    const candidates = routeCandidates(current, current.routing_rules, await routedPayment(deps, current, payment), unusable);
    return candidates.kind === 'candidates' ? { gateways: candidates.gateways } : { refusal: candidates.refusal };
  };
  let choice = await choose(merchant);
  // The merchant as this request found it may be a few seconds old (operations/merchant-directory.ts):
  // a gateway (or rule) added since then by the CLI or another instance is looked for once before refusing.
  if ('refusal' in choice && ['unknown', 'no_gateways', 'no_currency', 'no_rule'].includes(choice.refusal.kind)) {
    const fresh = await deps.merchants.findFresh(merchant.merchant_id);
    if (fresh) choice = await choose(fresh);
  }
  if ('refusal' in choice) return { kind: 'refused', refusal: choice.refusal };
  const [gateway, ...alternatives] = choice.gateways;
  const connector = deps.connectors.forGateway(gateway!);
  if (!connector) return { kind: 'refused', refusal: { kind: 'not_here', gateway_id: gateway!.gateway_id, connector: gateway!.connector } };
  return { kind: 'routed', gateway: gateway!, connector, alternatives };
}
