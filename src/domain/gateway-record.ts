// A merchant's gateways (its accounts at processors), its routing rules and the processors'
// webhook events, as the gateway keeps them: records that operations, the routing rules and the
// back office pass around. Defined here, so the domain depends on nothing; store/schema.ts builds
// its tables from them. Booleans are 0/1 integers, times are unix milliseconds.
// Object types, not interfaces, as Kysely's rows are: a record is also a Readonly<Record<string, unknown>>.

/** A merchant's account at one processor, reached through a connector (decisions.md §13, docs/connectors.md). */
export type GatewayRow = {
  gateway_id: string;
  merchant_id: string;
  /** The connector's name: sandbox, checkout (migration 0010 renamed it from `processor`). */
  connector: string;
  /** Comma-separated ISO codes. */
  currencies: string;
  mit_enabled: number;
  hold_payouts: number;
  created_at_ms: number;
  /** The connector's settings as one JSON object, sealed with the master key (credentials included); null: none. */
  settings_sealed: string | null;
  /** 0 once an operator disabled it: no new payment goes to it; its transactions still settle, refund and take webhooks. */
  enabled: number;
  /** Changes with its settings, so every instance's copy of the connector is rebuilt (connectors/registry.ts). */
  updated_at_ms: number;
  /** The name an operator reads instead of the id, 1 to 64 characters (migration 0021; domain/merchants.ts checks it). */
  label: string;
};

/**
 * A merchant's routing rule (migration 0011, docs/connectors.md): the payments it matches go to
 * its gateway, rules tried by priority. Each condition null matches any payment.
 */
export type RoutingRuleRow = {
  rule_id: string;
  merchant_id: string;
  gateway_id: string;
  /** Lower first; equal priorities in creation order. */
  priority: number;
  /** Comma-separated ISO 4217 codes. */
  currencies: string | null;
  amount_min_minor: number | null;
  amount_max_minor: number | null;
  /** Comma-separated card brands as domain/cards.ts names them (VISA, MASTERCARD, ...). */
  card_brands: string | null;
  /** Comma-separated ISO 3166-1 alpha-2 codes of the card's issuing country, by its BIN (bin_ranges). */
  bin_countries: string | null;
  /** Comma-separated payout methods (domain/routing.ts PAYOUT_METHODS): a rule that names them routes payouts of those methods only (migration 0019). */
  payout_methods: string | null;
  created_at_ms: number;
};

/**
 * What a recorded webhook event did (operations/processor-webhook.ts): changed its transaction,
 * found it with that outcome already, found no transaction of the gateway (what an operator
 * looks into), or decided nothing. A replay is never recorded: its id is taken.
 */
export const PROCESSOR_EVENT_OUTCOMES = ['applied', 'unchanged', 'unmatched', 'ignored'] as const;
export type ProcessorEventOutcome = (typeof PROCESSOR_EVENT_OUTCOMES)[number];

/** The processors' webhook events applied, by their own id: a replayed event changes nothing (migration 0010). */
export type ProcessorEventRow = {
  gateway_id: string;
  event_id: string;
  event_type: string;
  /** The transaction it was matched to; null when none was found. */
  trace_id: number | null;
  /** What it did: one of PROCESSOR_EVENT_OUTCOMES. */
  outcome: ProcessorEventOutcome;
  received_at_ms: number;
};
