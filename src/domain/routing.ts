// Routing rules and the cascade, as pure rules (decisions.md §13, docs/connectors.md §9): which of
// a merchant's gateways may take a payment, in which order, and whether a failed attempt may be
// retried on the next one.
//
//   a request that names `gateway`   → that gateway only (it overrides the rules; no cascade)
//   a merchant without rules         → its usable gateways taking the currency, oldest first
//   a merchant with rules            → the gateways of its matching rules, by priority (then
//                                      creation), each once; none matching → status 15
//
// A rule matches when each of its conditions that is set holds: the currency is one of its
// currencies, the amount lies in [amount_min_minor, amount_max_minor], the card's brand is one of
// its brands, the card's issuing country (by BIN) is one of its countries (an unknown country
// matches no rule that names countries), the payout's method is one of its payout methods (a rule
// that names payout methods routes those payouts only, never a deposit). "Usable" means enabled, of a connector that runs here,
// taking the currency, and able to make this kind of payment.
//
// Cascade: an attempt that ended rejected with a soft decline (do not honour, insufficient funds)
// or error (the processor failed, nothing moved) is tried on the next gateway, at most
// `max_retries` times. Never after a hard decline (lost or stolen card, fraud: another processor
// must not be asked), never once the customer was sent to a 3-D Secure page, never when the
// outcome is unknown or pending (it may still move money).
import type { RoutingRuleRow } from './gateway-record.js';
import type { ProcessorResult } from './processor-result.js';
import type { Gateway, GatewayRefusal, Merchant } from './merchants.js';

/**
 * What a rule's conditions look at. `undefined` means not known yet (a cashier session opened
 * before the customer chose an amount or card): conditions on it are not applied.
 */
export interface RoutedPayment {
  readonly currency: string;
  readonly amount_minor: number | undefined;
  /** As domain/cards.ts cardBrand names it; null when the payment has no card (an e-wallet). */
  readonly card_brand: string | null | undefined;
  /** The card's issuing country by its BIN; null when unknown (no BIN table, or not in it) or no card. */
  readonly bin_country: string | null | undefined;
  /** A payout's method (payoutMethodOf); null for a deposit; undefined while not known (a cashier payout session before the choice). */
  readonly payout_method?: PayoutMethod | null | undefined;
}

/** How a payout reaches its payee, as routing rules name it (issue 27, decisions §17). */
export const PAYOUT_METHODS = ['card', 'bank_account', 'paypal', 'ewallet'] as const;
export type PayoutMethod = (typeof PAYOUT_METHODS)[number];

/**
 * A direct payout's method, from the data_ fields it carries (spec §4.2), before any gateway is
 * chosen: a PayPal receiver, an e-wallet (the sandbox's data_method ewallet), else a bank account
 * (an IBAN, or an account number).
 */
export function payoutMethodOf(data: Readonly<Record<string, string>>): PayoutMethod {
  if (data.data_receiver !== undefined || data.data_recipient_type !== undefined) return 'paypal';
  if (data.data_method === 'ewallet') return 'ewallet';
  return 'bank_account';
}

function listOf(text: string | null): string[] | null {
  return text === null ? null : text.split(',').filter((item) => item !== '');
}

export function ruleMatches(rule: RoutingRuleRow, payment: RoutedPayment): boolean {
  const currencies = listOf(rule.currencies);
  if (currencies !== null && !currencies.includes(payment.currency)) return false;
  if (payment.amount_minor !== undefined) {
    if (rule.amount_min_minor !== null && payment.amount_minor < rule.amount_min_minor) return false;
    if (rule.amount_max_minor !== null && payment.amount_minor > rule.amount_max_minor) return false;
  }
  const brands = listOf(rule.card_brands);
  if (brands !== null && payment.card_brand !== undefined && (payment.card_brand === null || !brands.includes(payment.card_brand)))
    return false;
  const countries = listOf(rule.bin_countries);
  if (countries !== null && payment.bin_country !== undefined && (payment.bin_country === null || !countries.includes(payment.bin_country)))
    return false;
  const methods = listOf(rule.payout_methods);
  if (
    methods !== null &&
    payment.payout_method !== undefined &&
    (payment.payout_method === null || !methods.includes(payment.payout_method))
  )
    return false;
  return true;
}

/** Whether any of the merchant's rules looks at the card's country (so its BIN must be looked up). */
export function rulesNeedBinCountry(rules: readonly RoutingRuleRow[]): boolean {
  return rules.some((rule) => rule.bin_countries !== null);
}

export type RouteCandidates =
  { readonly kind: 'candidates'; readonly gateways: readonly Gateway[] } | { readonly kind: 'refused'; readonly refusal: GatewayRefusal };

/**
 * The gateways that may take an unnamed payment, in the order to try them. `usable` says why a
 * gateway cannot take it (null: it can). When none can, the refusal names the most specific
 * cause: no gateway at all, no rule matching, or why the first candidate cannot.
 */
export function routeCandidates(
  merchant: Merchant,
  rules: readonly RoutingRuleRow[],
  payment: RoutedPayment,
  usable: (gateway: Gateway) => GatewayRefusal | null,
): RouteCandidates {
  if (merchant.gateways.length === 0) return { kind: 'refused', refusal: { kind: 'no_gateways' } };
  let ordered: Gateway[];
  if (rules.length === 0) {
    ordered = merchant.gateways.filter((g) => g.currencies.includes(payment.currency));
    if (ordered.length === 0) return { kind: 'refused', refusal: { kind: 'no_currency', currency: payment.currency } };
  } else {
    ordered = [];
    for (const rule of rules) {
      if (!ruleMatches(rule, payment)) continue;
      const gateway = merchant.gateways.find((g) => g.gateway_id === rule.gateway_id);
      if (gateway && !ordered.includes(gateway)) ordered.push(gateway);
    }
    if (ordered.length === 0) return { kind: 'refused', refusal: { kind: 'no_rule', currency: payment.currency } };
  }
  const gateways = ordered.filter((g) => usable(g) === null);
  return gateways.length > 0 ? { kind: 'candidates', gateways } : { kind: 'refused', refusal: usable(ordered[0]!)! };
}

/** Whether a failed attempt may be tried on another gateway (the file's header). */
export function cascadable(result: ProcessorResult): boolean {
  if (result.kind === 'error') return true;
  return result.kind === 'rejected' && result.decline === 'soft';
}
