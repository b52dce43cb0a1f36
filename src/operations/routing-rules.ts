// A merchant's routing rules (decisions.md §13, docs/connectors.md §9), kept in the database and
// managed by the operator (CLI `paygate route ...`, operator API /operator/merchants/{id}/routing-rules),
// and the BIN table their card-country conditions read (`paygate bins load`). Every rule is checked
// before anything is written: its gateway is the merchant's, its currencies and countries are
// codes, its amounts a range, its brands ones the gateway can tell.
import { randomBytes } from 'node:crypto';
import type { Store } from '../store/store.js';
import type { OperationDeps } from './deps.js';
import type { RoutingRuleRow } from '../domain/gateway-record.js';
import { CARD_BRANDS } from '../domain/cards.js';
import { isKnownCurrency } from '../domain/money.js';
import { PAYOUT_METHODS } from '../domain/routing.js';

/** Rules a merchant may have, at most; BIN prefixes the table may hold, at most. */
export const RULES_MAX_PER_MERCHANT = 100;
export const BIN_RANGES_MAX = 500_000;

export interface NewRuleInput {
  readonly merchant_id: string;
  readonly gateway_id: string;
  readonly priority: number;
  readonly currencies?: readonly string[] | undefined;
  readonly amount_min_minor?: number | undefined;
  readonly amount_max_minor?: number | undefined;
  readonly card_brands?: readonly string[] | undefined;
  readonly bin_countries?: readonly string[] | undefined;
  /** Payout methods (domain/routing.ts PAYOUT_METHODS): the rule routes payouts of these methods only. */
  readonly payout_methods?: readonly string[] | undefined;
}

/** A rule as the operator sees it: lists, not comma-separated text. */
export interface RuleView {
  readonly rule_id: string;
  readonly merchant_id: string;
  readonly gateway: string;
  /** Its gateway's label, which an operator reads instead of the id. */
  readonly gateway_label: string;
  readonly priority: number;
  readonly currencies: readonly string[] | null;
  readonly amount_min: number | null;
  readonly amount_max: number | null;
  readonly card_brands: readonly string[] | null;
  readonly bin_countries: readonly string[] | null;
  readonly payout_methods: readonly string[] | null;
  readonly created_at_ms: number;
}

export type RuleOutcome =
  | { readonly kind: 'ok'; readonly rule: RuleView }
  | { readonly kind: 'merchant_not_found' }
  | { readonly kind: 'invalid'; readonly field: string; readonly reason: string };

const COUNTRY = /^[A-Z]{2}$/;

/** `gateway_label`: the label of the rule's gateway (its id when it has none to show). */
export function ruleView(row: RoutingRuleRow, gateway_label: string): RuleView {
  const list = (text: string | null) => (text === null ? null : text.split(',').filter((item) => item !== ''));
  return {
    rule_id: row.rule_id,
    merchant_id: row.merchant_id,
    gateway: row.gateway_id,
    gateway_label,
    priority: row.priority,
    currencies: list(row.currencies),
    amount_min: row.amount_min_minor,
    amount_max: row.amount_max_minor,
    card_brands: list(row.card_brands),
    bin_countries: list(row.bin_countries),
    payout_methods: list(row.payout_methods),
    created_at_ms: row.created_at_ms,
  };
}

/**
 * A condition's list as stored (comma-separated, each value in its canonical spelling), or the
 * first value that is not one. `canonical` gives a value's spelling, or null when it is none.
 */
function conditionList(
  values: readonly string[] | undefined,
  field: string,
  canonical: (value: string) => string | null,
  rule: string,
): { ok: true; text: string | null } | { ok: false; field: string; reason: string } {
  if (values === undefined) return { ok: true, text: null };
  const spelled: string[] = [];
  for (const value of values) {
    const known = canonical(value.trim());
    if (known === null) return { ok: false, field, reason: `${value.trim().slice(0, 12)} is not one of ${rule}` };
    if (!spelled.includes(known)) spelled.push(known);
  }
  if (spelled.length === 0 || spelled.length > 50) return { ok: false, field, reason: `1 to 50 ${rule}` };
  return { ok: true, text: spelled.join(',') };
}

export async function addRoutingRule(store: Store, input: NewRuleInput, now_ms: number): Promise<RuleOutcome> {
  const merchant = await store.merchants.get(input.merchant_id);
  if (!merchant) return { kind: 'merchant_not_found' };
  const gateway = merchant.gateways.find((g) => g.gateway_id === input.gateway_id);
  if (!gateway) return { kind: 'invalid', field: 'gateway', reason: 'not a gateway of this merchant' };
  if (!Number.isSafeInteger(input.priority) || input.priority < 0 || input.priority > 1_000_000)
    return { kind: 'invalid', field: 'priority', reason: 'a whole number from 0 to 1000000 (lower first)' };
  if (merchant.routing_rules.length >= RULES_MAX_PER_MERCHANT)
    return { kind: 'invalid', field: 'merchant_id', reason: `at most ${RULES_MAX_PER_MERCHANT} rules per merchant` };
  for (const [field, value] of [
    ['min-amount', input.amount_min_minor],
    ['max-amount', input.amount_max_minor],
  ] as const) {
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 0))
      return { kind: 'invalid', field, reason: 'a whole number of minor units, 0 or more' };
  }
  if (input.amount_min_minor !== undefined && input.amount_max_minor !== undefined && input.amount_min_minor > input.amount_max_minor) {
    return { kind: 'invalid', field: 'min-amount', reason: 'not more than max-amount' };
  }
  const currencies = conditionList(
    input.currencies,
    'currency',
    (c) => (isKnownCurrency(c.toUpperCase()) ? c.toUpperCase() : null),
    'the ISO 4217 codes',
  );
  if (!currencies.ok) return { kind: 'invalid', field: currencies.field, reason: currencies.reason };
  const brands = conditionList(
    input.card_brands,
    'card-brand',
    (b) => CARD_BRANDS.find((known) => known.toLowerCase() === b.toLowerCase()) ?? null,
    `the card brands ${CARD_BRANDS.join(', ')}`,
  );
  if (!brands.ok) return { kind: 'invalid', field: brands.field, reason: brands.reason };
  const countries = conditionList(
    input.bin_countries,
    'bin-country',
    (c) => (COUNTRY.test(c.toUpperCase()) ? c.toUpperCase() : null),
    'the ISO 3166-1 alpha-2 codes',
  );
  if (!countries.ok) return { kind: 'invalid', field: countries.field, reason: countries.reason };
  const methods = conditionList(
    input.payout_methods,
    'payout-method',
    (m) => PAYOUT_METHODS.find((known) => known === m.toLowerCase()) ?? null,
    `the payout methods ${PAYOUT_METHODS.join(', ')}`,
  );
  if (!methods.ok) return { kind: 'invalid', field: methods.field, reason: methods.reason };
  const row: RoutingRuleRow = {
    rule_id: `rule_${randomBytes(12).toString('hex')}`,
    merchant_id: input.merchant_id,
    gateway_id: input.gateway_id,
    priority: input.priority,
    currencies: currencies.text,
    amount_min_minor: input.amount_min_minor ?? null,
    amount_max_minor: input.amount_max_minor ?? null,
    card_brands: brands.text,
    bin_countries: countries.text,
    payout_methods: methods.text,
    created_at_ms: now_ms,
  };
  await store.merchants.insertRoutingRule(row);
  return { kind: 'ok', rule: ruleView(row, gateway.label) };
}

export async function listRoutingRules(store: Store, merchant_id: string): Promise<RuleView[] | null> {
  const merchant = await store.merchants.get(merchant_id);
  if (!merchant) return null;
  const labels = new Map(merchant.gateways.map((g) => [g.gateway_id, g.label]));
  return merchant.routing_rules.map((rule) => ruleView(rule, labels.get(rule.gateway_id) ?? rule.gateway_id));
}

/**
 * The BIN table from CSV text: one `prefix,country` a line (6 to 8 digits, ISO 3166-1 alpha-2),
 * blank lines and lines starting with # ignored; a later line for the same prefix wins. The
 * first bad line refuses the whole file, naming its number.
 */
export function parseBinCsv(
  text: string,
): { ok: true; rows: { prefix: string; country: string }[] } | { ok: false; line: number; reason: string } {
  const by_prefix = new Map<string, string>();
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i]!.trim();
    if (line === '' || line.startsWith('#')) continue;
    const [prefix, country, ...rest] = line.split(',').map((part) => part.trim());
    if (rest.length > 0 || !prefix || !/^[0-9]{6,8}$/.test(prefix))
      return { ok: false, line: i + 1, reason: 'expected "prefix,country" with a prefix of 6 to 8 digits' };
    if (!country || !COUNTRY.test(country.toUpperCase()))
      return { ok: false, line: i + 1, reason: 'expected an ISO 3166-1 alpha-2 country after the prefix' };
    by_prefix.set(prefix, country.toUpperCase());
    if (by_prefix.size > BIN_RANGES_MAX) return { ok: false, line: i + 1, reason: `more than ${BIN_RANGES_MAX} prefixes` };
  }
  return { ok: true, rows: [...by_prefix].map(([prefix, country]) => ({ prefix, country })) };
}

/** A merchant's rules by priority, through the operations' deps; null when no such merchant. */
export function merchantRoutingRules(deps: Pick<OperationDeps, 'store'>, merchant_id: string): Promise<RuleView[] | null> {
  return listRoutingRules(deps.store, merchant_id);
}

/** Adds a rule through the operations' deps. */
export function addMerchantRoutingRule(deps: Pick<OperationDeps, 'store'>, input: NewRuleInput, now_ms: number): Promise<RuleOutcome> {
  return addRoutingRule(deps.store, input, now_ms);
}

/** Deletes one of a merchant's rules; false when there is no such rule. */
export function deleteRoutingRule(deps: Pick<OperationDeps, 'store'>, merchant_id: string, rule_id: string): Promise<boolean> {
  return deps.store.merchants.deleteRoutingRule(merchant_id, rule_id);
}
