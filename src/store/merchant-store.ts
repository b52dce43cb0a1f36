// The merchants aggregate: a merchant with its applications, frontends, gateways (and their
// processors' webhook events) and routing rules, and the BIN table routing reads. One interface,
// one Kysely module (sql/merchants.ts) behind it for both databases.
import type { Insertable } from 'kysely';
import type { GatewayRow, NewGatewayRow, ProcessorEventOutcome, ProcessorEventRow, ProcessorEventTable, RoutingRuleRow } from './schema.js';

export interface MerchantRecord {
  readonly merchant_id: string;
  readonly secret_sealed: string;
  readonly applications: readonly string[];
  readonly frontends: readonly { readonly name: string; readonly currency: string }[];
  readonly gateways: readonly GatewayRow[];
  /** Its routing rules, by priority then creation. */
  readonly routing_rules: readonly RoutingRuleRow[];
  /** Its v1.3 requests must carry Gt-Body-Signature. */
  readonly v13_body_signature_required: boolean;
  /** When an operator disabled it (gateway clock); null while enabled. */
  readonly disabled_at_ms: number | null;
  /** The secret before the last roll, sealed; null when it was never rolled. */
  readonly previous_secret_sealed: string | null;
  /** Gateway clock: the previous secret is accepted before this time; null when there is none. */
  readonly previous_secret_until_ms: number | null;
}

import type { MerchantSummary } from '../domain/merchants.js';

export type { MerchantSummary };

export interface NewMerchant {
  readonly merchant_id: string;
  readonly secret_sealed: string;
  readonly applications: readonly string[];
  readonly frontends: readonly { readonly name: string; readonly currency: string }[];
  readonly gateways: readonly NewGatewayRow[];
  readonly created_at_ms: number;
}

export type GatewayPatch = Partial<Pick<GatewayRow, 'enabled' | 'settings_sealed' | 'currencies' | 'label'>> & {
  readonly updated_at_ms: number;
};

export interface MerchantStore {
  insert(merchant: NewMerchant): Promise<'created' | 'exists'>;
  get(merchant_id: string): Promise<MerchantRecord | null>;
  count(): Promise<number>;
  /** The first `limit` merchant ids in order. */
  listIds(limit: number): Promise<string[]>;
  /**
   * A page of merchants by merchant_id: the first `limit` after `after_merchant_id` ('' for the
   * first page), with their applications, frontends and gateways counted (index look-ups, no scan).
   */
  list(after_merchant_id: string, limit: number): Promise<MerchantSummary[]>;
  /**
   * The merchant's current sealed secret becomes its previous one, accepted until
   * previous_secret_until_ms, and `new_secret_sealed` the current one: one statement, so a
   * concurrent roll cannot lose a secret in between. Only one previous secret is kept: rolling
   * again drops the older one. False when there is no such merchant.
   */
  rollSecret(merchant_id: string, new_secret_sealed: string, previous_secret_until_ms: number): Promise<boolean>;
  /**
   * Disables the merchant since disabled_at_ms (an earlier time of a merchant already disabled is
   * kept), or with null enables it. False when there is no such merchant.
   */
  setDisabled(merchant_id: string, disabled_at_ms: number | null): Promise<boolean>;
  getGateway(gateway_id: string): Promise<GatewayRow | null>;
  /** 'exists' when the gateway_id is taken; the merchant must exist (a foreign key). */
  insertGateway(row: NewGatewayRow): Promise<'created' | 'exists'>;
  /** One merchant's gateways, or every gateway (null), oldest first. */
  listGateways(merchant_id: string | null): Promise<GatewayRow[]>;
  /** The labels of these gateways, by id (an id of no gateway is left out); a page's worth at a time. */
  gatewayLabels(gateway_ids: readonly string[]): Promise<Map<string, string>>;
  /** False when there is no such gateway. */
  updateGateway(gateway_id: string, patch: GatewayPatch): Promise<boolean>;
  /** Records a processor's webhook event; false when this gateway already has an event of that id (a replay). */
  insertProcessorEvent(row: Insertable<ProcessorEventTable>): Promise<boolean>;
  /** A gateway's webhook events, oldest first, at most `limit`. */
  listProcessorEvents(gateway_id: string, limit: number): Promise<ProcessorEventRow[]>;
  insertRoutingRule(row: RoutingRuleRow): Promise<void>;
  /** False when the merchant has no such rule. */
  deleteRoutingRule(merchant_id: string, rule_id: string): Promise<boolean>;
  /** Replaces the whole BIN table (the operator's load) in one step. */
  replaceBinRanges(rows: readonly { readonly prefix: string; readonly country: string }[]): Promise<void>;
  /** The country of the longest of these prefixes in the BIN table, or null. */
  findBinCountry(prefixes: readonly string[]): Promise<string | null>;
  countBinRanges(): Promise<number>;
  /** Operator setting: payouts through this gateway wait in `requested` for approval. False when no such gateway. */
  setGatewayHoldPayouts(gateway_id: string, hold_payouts: boolean): Promise<boolean>;
  /** The origins allowed to frame the application's init-pay-in pages; null when there is no such application. */
  getFrameOrigins(merchant_id: string, application_key: string): Promise<string[] | null>;
  /** false when there is no such application. */
  setFrameOrigins(merchant_id: string, application_key: string, origins: readonly string[]): Promise<boolean>;
  /** The shop's name for a frontend or an application of the merchant, or null when none is set (or no such identity). */
  getDisplayName(
    merchant_id: string,
    identity: { readonly kind: 'frontend' | 'application_key'; readonly value: string },
  ): Promise<string | null>;
  /** Sets (or, with null, clears) it; false when the merchant has no such frontend or application. */
  setDisplayName(
    merchant_id: string,
    identity: { readonly kind: 'frontend' | 'application_key'; readonly value: string },
    display_name: string | null,
  ): Promise<boolean>;
  /** Sets whether the merchant's v1.3 requests must carry Gt-Body-Signature; false when there is no such merchant. */
  setV13BodySignatureRequired(merchant_id: string, required: boolean): Promise<boolean>;
  /** The processor's webhook events matched to a transaction, newest first, at most `limit`. */
  listProcessorEventsOf(trace_id: number, limit: number): Promise<ProcessorEventRow[]>;
  /** A gateway's webhook events, newest first, at most `limit`; only those of `outcome` when it is given. */
  listGatewayProcessorEvents(gateway_id: string, outcome: ProcessorEventOutcome | null, limit: number): Promise<ProcessorEventRow[]>;
}
