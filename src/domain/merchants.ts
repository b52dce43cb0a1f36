// Merchants and their gateways as requests see them, and the pure rules about them: what a new
// merchant's identifiers may be, which secrets a request may be signed with, and which gateway
// serves a request (or why none does).
// operations/merchant-directory.ts reads, caches and creates them.
import { randomBytes } from 'node:crypto';
import type { GatewayRow, RoutingRuleRow } from './gateway-record.js';
import { isKnownCurrency } from './money.js';
import { characterLength, describeTextProblem, hasContent, textProblem } from './text.js';

/** A merchant's account at one processor, as requests see it (decisions.md §13). */
export interface Gateway {
  readonly gateway_id: string;
  /** The connector it is reached through (sandbox, checkout). */
  readonly connector: string;
  readonly currencies: readonly string[];
  readonly mit_enabled: boolean;
  readonly hold_payouts: boolean;
  /** false once an operator disabled it: no new payment goes to it. */
  readonly enabled: boolean;
  /** Opened only by the connector registry, never here. */
  readonly settings_sealed: string | null;
  readonly updated_at_ms: number;
}

export interface Merchant {
  readonly merchant_id: string;
  /** The current secret: answers to requests signed with it, notifications and validation requests are signed with it. */
  readonly secret: string;
  /**
   * The secret before the last roll while its grace may still last, else null. Whether it is
   * still accepted is decided per request by acceptedSecrets on the gateway clock, not here: the
   * directory keeps a merchant for a few seconds, and the grace may end meanwhile.
   */
  readonly previous_secret: string | null;
  /** Gateway clock: the previous secret is accepted before this time; null when there is none. */
  readonly previous_secret_until_ms: number | null;
  /** An operator disabled it: its signed calls are answered as an unknown merchant's (docs/security.md §5). */
  readonly disabled: boolean;
  readonly applications: readonly string[];
  readonly frontends: readonly { readonly name: string; readonly currency: string }[];
  readonly gateways: readonly Gateway[];
  /** Its routing rules, by priority then creation (domain/routing.ts). */
  readonly routing_rules: readonly RoutingRuleRow[];
  /** Its v1.3 requests must carry Gt-Body-Signature (docs/security.md §3). */
  readonly v13_body_signature_required: boolean;
}

export interface NewMerchantInput {
  readonly merchant_id?: string | undefined;
  readonly secret?: string | undefined;
  readonly application_key?: string | undefined;
  readonly frontend?: string | undefined;
  readonly currency?: string | undefined;
}

export interface CreatedMerchant {
  readonly merchant_id: string;
  readonly secret: string;
  readonly application_key: string;
  readonly frontend: string;
  readonly currency: string;
  /** The sandbox gateway made with it (sandbox mode); null in live mode, where an operator adds gateways. */
  readonly gateway: string | null;
}

/** The gateway a new merchant starts with: its connector and currencies (the sandbox's, in sandbox mode). */
export interface StarterGateway {
  readonly connector: string;
  readonly currencies: readonly string[];
}

export type CreateMerchantOutcome =
  | { readonly kind: 'created'; readonly merchant: CreatedMerchant }
  | { readonly kind: 'exists'; readonly merchant_id: string }
  | { readonly kind: 'invalid'; readonly field: string; readonly reason: string };

/**
 * The secrets a request of this merchant may be signed with at now_ms (gateway clock): the
 * current one first, then the previous one while its grace lasts (strictly before its end, so a
 * grace of 0 ends it at once).
 */
export function acceptedSecrets(merchant: Merchant, now_ms: number): readonly string[] {
  const { previous_secret, previous_secret_until_ms } = merchant;
  return previous_secret !== null && previous_secret_until_ms !== null && now_ms < previous_secret_until_ms
    ? [merchant.secret, previous_secret]
    : [merchant.secret];
}

/** A new secret, as every merchant gets one unless it gives its own: 24 random bytes, base64url (32 characters). */
export function newMerchantSecret(): string {
  return randomBytes(24).toString('base64url');
}

const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const SECRET_PATTERN = /^[\x21-\x7e]+$/;

/** A new merchant's values, the omitted ones generated; or the first that is not acceptable. */
export function newMerchantValues(input: NewMerchantInput):
  | {
      readonly ok: true;
      readonly merchant_id: string;
      readonly secret: string;
      readonly application_key: string;
      readonly frontend: string;
      readonly currency: string;
    }
  | { readonly ok: false; readonly field: string; readonly reason: string } {
  const merchant_id = input.merchant_id ?? `merchant-${randomBytes(6).toString('hex')}`;
  const secret = input.secret ?? newMerchantSecret();
  const application_key = input.application_key ?? randomBytes(16).toString('hex');
  const frontend = input.frontend ?? `frontend-${randomBytes(4).toString('hex')}`;
  const currency = input.currency ?? 'USD';
  const checks: [string, boolean, string][] = [
    ['merchant-id', merchant_id.length <= 50 && ID_PATTERN.test(merchant_id), 'up to 50 letters, digits, ".", "_" or "-"'],
    ['secret', secret.length >= 8 && secret.length <= 64 && SECRET_PATTERN.test(secret), '8 to 64 printable characters without spaces'],
    ['application-key', application_key.length <= 32 && ID_PATTERN.test(application_key), 'up to 32 letters, digits, ".", "_" or "-"'],
    ['frontend', frontend.length <= 50 && ID_PATTERN.test(frontend), 'up to 50 letters, digits, ".", "_" or "-"'],
    ['currency', isKnownCurrency(currency), 'a known ISO 4217 code such as USD'],
  ];
  for (const [field, ok, reason] of checks) if (!ok) return { ok: false, field, reason };
  return { ok: true, merchant_id, secret, application_key, frontend, currency };
}

/** A gateway's id (spec `gateway`, varchar(32)): 32 random hex characters. */
export function newGatewayId(): string {
  return randomBytes(16).toString('hex');
}

/** A gateway's label: 1 to this many characters (Unicode code points). */
export const GATEWAY_LABEL_MAX_CHARS = 64;

/** The label of a gateway given none (and of every gateway older than labels, migration 0021): "<connector> <first 8 of its id>". */
export function defaultGatewayLabel(connector: string, gateway_id: string): string {
  return `${connector} ${gateway_id.slice(0, 8)}`;
}

/**
 * A label as given, checked: surrounding spaces dropped, then 1 to 64 characters of text (no
 * control characters), not only spaces. The reason says what is expected and what was given
 * (its length only: the CLI and the API echo the reason).
 */
export function checkGatewayLabel(
  given: string,
): { readonly ok: true; readonly label: string } | { readonly ok: false; readonly reason: string } {
  const label = given.trim();
  const expected = `expected text of 1 to ${GATEWAY_LABEL_MAX_CHARS} characters`;
  if (!hasContent(label)) return { ok: false, reason: `${expected}, got ${given === '' ? 'nothing' : 'only spaces'}` };
  const problem = textProblem(label);
  if (problem !== null) return { ok: false, reason: `${expected}: ${describeTextProblem(problem)}` };
  const length = characterLength(label);
  if (length > GATEWAY_LABEL_MAX_CHARS) return { ok: false, reason: `${expected}, got ${length}` };
  return { ok: true, label };
}

export function gatewayOf(row: GatewayRow): Gateway {
  return {
    gateway_id: row.gateway_id,
    connector: row.connector,
    currencies: row.currencies.split(',').filter((c) => c !== ''),
    mit_enabled: row.mit_enabled === 1,
    hold_payouts: row.hold_payouts === 1,
    enabled: row.enabled === 1,
    settings_sealed: row.settings_sealed,
    updated_at_ms: row.updated_at_ms,
  };
}

/** Why no gateway takes a request: each answered with status 15 and a description naming it. */
export type GatewayRefusal =
  /** The merchant has no gateway at all (live mode, before an operator adds one). */
  | { readonly kind: 'no_gateways' }
  /** The request named a gateway that is not this merchant's. */
  | { readonly kind: 'unknown'; readonly gateway_id: string }
  | { readonly kind: 'disabled'; readonly gateway_id: string }
  /** Its connector does not run in this environment (a sandbox gateway on a live instance). */
  | { readonly kind: 'not_here'; readonly gateway_id: string; readonly connector: string }
  | { readonly kind: 'currency'; readonly gateway_id: string; readonly currency: string }
  /** No gateway named: none of the merchant's usable gateways takes the currency. */
  | { readonly kind: 'no_currency'; readonly currency: string }
  /** No gateway named: the merchant has routing rules and none matches the payment. */
  | { readonly kind: 'no_rule'; readonly currency: string }
  /** Its connector cannot do what the request asks (card payouts, e-wallet, stored-card charges). */
  | { readonly kind: 'capability'; readonly gateway_id: string; readonly connector: string; readonly capability: string };

export type GatewayChoice =
  { readonly kind: 'chosen'; readonly gateway: Gateway } | { readonly kind: 'refused'; readonly refusal: GatewayRefusal };

/**
 * The gateway that serves a request: the one named (it must be the merchant's, enabled, run
 * here and take the currency), else the first usable one taking the currency. `runs_here` says
 * whether a connector may run in this environment. When none serves, the refusal names the
 * most specific cause: a merchant with gateways that take the currency but are disabled hears
 * that, not "no gateway".
 */
export function selectGateway(
  merchant: Merchant,
  currency: string,
  requested: string | null | undefined,
  runs_here: (connector: string) => boolean,
): GatewayChoice {
  const unusable = (g: Gateway): GatewayRefusal | null => {
    if (!g.enabled) return { kind: 'disabled', gateway_id: g.gateway_id };
    if (!runs_here(g.connector)) return { kind: 'not_here', gateway_id: g.gateway_id, connector: g.connector };
    return null;
  };
  if (requested !== undefined && requested !== null && requested !== '') {
    const named = merchant.gateways.find((g) => g.gateway_id === requested);
    if (!named) return { kind: 'refused', refusal: { kind: 'unknown', gateway_id: requested } };
    const refusal =
      unusable(named) ??
      (named.currencies.includes(currency) ? null : ({ kind: 'currency', gateway_id: named.gateway_id, currency } as const));
    return refusal ? { kind: 'refused', refusal } : { kind: 'chosen', gateway: named };
  }
  if (merchant.gateways.length === 0) return { kind: 'refused', refusal: { kind: 'no_gateways' } };
  const taking = merchant.gateways.filter((g) => g.currencies.includes(currency));
  const usable = taking.find((g) => unusable(g) === null);
  if (usable) return { kind: 'chosen', gateway: usable };
  const first = taking[0];
  return { kind: 'refused', refusal: first ? unusable(first)! : { kind: 'no_currency', currency } };
}

/** A merchant as a list page shows it (the store's merchants.list composes it with the counts). */
export interface MerchantSummary {
  readonly merchant_id: string;
  readonly created_at_ms: number;
  readonly disabled_at_ms: number | null;
  readonly application_count: number;
  readonly frontend_count: number;
  readonly gateway_count: number;
}
