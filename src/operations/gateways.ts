// Gateways are configured, not built in (decisions.md §13): an operator creates a merchant's
// gateway for a connector with its settings (credentials included), lists and shows them (never
// a secret), disables one, renames it (its label, shown instead of its id), and replaces its settings. The CLI (`paygate gateway ...`) and the
// operator API (http/routes/operator-gateways.ts) are two doors to these same functions.
// Settings are checked against the connector's own schema before anything is written, then
// sealed with the master key as one JSON object bound to the gateway's id.
import { Value } from '@sinclair/typebox/value';
import type { Environment } from '../config.js';
import type { ConnectorDefinition, SettingSpec } from '../connectors/connector.js';
import { gatewaySettingsPurpose } from '../connectors/registry.js';
import type { Sealer } from '../crypto/sealer.js';
import { checkGatewayLabel, defaultGatewayLabel, gatewayOf, newGatewayId } from '../domain/merchants.js';
import { isKnownCurrency } from '../domain/money.js';
import type { Logger } from 'pino';
import type { GatewayRow } from '../domain/gateway-record.js';
import type { Store } from '../store/store.js';
import type { OperationDeps } from './deps.js';

/** Which connectors exist and where they run: the registry, or its definitions alone (the CLI). */
export interface ConnectorCatalog {
  definition(name: string): ConnectorDefinition | null;
  definitions(): readonly ConnectorDefinition[];
  runsHere(name: string): boolean;
}

export interface GatewayAdminDeps {
  readonly store: Store;
  readonly sealer: Sealer;
  readonly connectors: ConnectorCatalog;
  readonly environment: Environment;
  /** Live mode: a base_url on a loopback or private address is allowed (tests), as for merchant URLs. */
  readonly allow_private_urls: boolean;
  /** The base of webhook_url. */
  readonly public_url: () => string;
}

/** A gateway as an operator sees it: never a secret setting's value, only that it is set. */
export interface GatewayView {
  readonly gateway: string;
  /** The name an operator reads instead of the id (1 to 64 characters). */
  readonly label: string;
  readonly merchant_id: string;
  readonly connector: string;
  readonly currencies: readonly string[];
  readonly enabled: boolean;
  readonly mit_enabled: boolean;
  readonly hold_payouts: boolean;
  /** The settings that are not secret (base_url, processing_channel_id...). */
  readonly settings: Readonly<Record<string, string>>;
  /** The names of the secret settings that are set. */
  readonly secret_settings: readonly string[];
  /** Where the processor sends its webhooks; null when the connector takes none. */
  readonly webhook_url: string | null;
  /** False when its connector takes no payments in this environment (a sandbox gateway on a live instance). */
  readonly usable_here: boolean;
  readonly created_at_ms: number;
  readonly updated_at_ms: number;
}

export interface NewGatewayInput {
  readonly merchant_id: string;
  readonly connector: string;
  /** null: the connector's default currencies (the sandbox's), required otherwise. */
  readonly currencies: readonly string[] | null;
  readonly settings: Readonly<Record<string, string>>;
  readonly mit_enabled?: boolean | undefined;
  readonly hold_payouts?: boolean | undefined;
  /** Its name; absent: "<connector> <first 8 of its id>". */
  readonly label?: string | undefined;
}

export type GatewayProblem =
  | { readonly kind: 'merchant_not_found' }
  | { readonly kind: 'gateway_not_found' }
  | { readonly kind: 'unknown_connector'; readonly known: readonly string[] }
  | { readonly kind: 'not_here'; readonly connector: string }
  /** A setting or option that is missing or not acceptable; `field` names it, never a secret's value. */
  | { readonly kind: 'invalid'; readonly field: string; readonly reason: string };

export type GatewayOutcome = { readonly kind: 'ok'; readonly gateway: GatewayView } | GatewayProblem;

/** At most this many currencies per gateway, and settings per connector call. */
const MAX_CURRENCIES = 100;
const MAX_SETTING_LENGTH = 2048;
/** What a refusal quotes of a value that is not secret, at most. */
const SHOWN_VALUE_MAX = 64;

export function webhookUrlOf(deps: Pick<GatewayAdminDeps, 'public_url'>, connector: string, gateway_id: string): string {
  return `${deps.public_url()}/webhooks/${connector}/${gateway_id}`;
}

function openSettings(deps: Pick<GatewayAdminDeps, 'sealer'>, row: GatewayRow): Record<string, string> {
  return row.settings_sealed === null
    ? {}
    : (JSON.parse(deps.sealer.open(row.settings_sealed, gatewaySettingsPurpose(row.gateway_id))) as Record<string, string>);
}

export function viewOf(deps: GatewayAdminDeps, row: GatewayRow): GatewayView {
  const definition = deps.connectors.definition(row.connector);
  const gateway = gatewayOf(row);
  const settings = openSettings(deps, row);
  const shown: Record<string, string> = {};
  const secret: string[] = [];
  for (const [name, value] of Object.entries(settings)) {
    // A setting the connector does not declare (an older release's) is treated as secret: never shown.
    const spec = definition?.settings.find((s) => s.name === name);
    if (spec && !spec.secret) shown[name] = value;
    else secret.push(name);
  }
  return {
    gateway: row.gateway_id,
    label: row.label,
    merchant_id: row.merchant_id,
    connector: row.connector,
    currencies: gateway.currencies,
    enabled: gateway.enabled,
    mit_enabled: gateway.mit_enabled,
    hold_payouts: gateway.hold_payouts,
    settings: shown,
    secret_settings: secret.sort(),
    webhook_url: definition?.capabilities.webhooks ? webhookUrlOf(deps, row.connector, row.gateway_id) : null,
    usable_here: gateway.enabled && deps.connectors.runsHere(row.connector),
    created_at_ms: row.created_at_ms,
    updated_at_ms: row.updated_at_ms,
  };
}

/** A given value shown in what a refusal says: a plain one quoted (cut at 64 characters), a secret one only by its length. */
function givenValue(spec: SettingSpec, value: unknown): string {
  if (typeof value !== 'string') return 'no text';
  if (value === '') return 'nothing';
  // A secret may be a real credential typed in the wrong place: never echoed, not even in part.
  if (spec.secret) return `a value of ${value.length} characters that does not fit (not shown: the setting is secret)`;
  return value.length > SHOWN_VALUE_MAX
    ? `${JSON.stringify(value.slice(0, SHOWN_VALUE_MAX))}… (${value.length} characters)`
    : JSON.stringify(value);
}

/**
 * A connector's settings, whole: every given name declared, each value fitting its schema, the
 * required ones present (defaults filled in), and the connector's own checks across them.
 */
export function checkSettings(
  deps: Pick<GatewayAdminDeps, 'environment' | 'allow_private_urls'>,
  definition: ConnectorDefinition,
  given: Readonly<Record<string, string>>,
):
  | { readonly ok: true; readonly settings: Record<string, string> }
  | { readonly ok: false; readonly field: string; readonly reason: string } {
  const settings: Record<string, string> = {};
  for (const [name, value] of Object.entries(given)) {
    const spec = definition.settings.find((s) => s.name === name);
    if (!spec) {
      const known = definition.settings.map((s) => s.name);
      return {
        ok: false,
        field: name,
        reason:
          known.length > 0
            ? `not a setting of the ${definition.name} connector (its settings: ${known.join(', ')})`
            : `the ${definition.name} connector takes no settings`,
      };
    }
    if (typeof value !== 'string' || value.length > MAX_SETTING_LENGTH || !Value.Check(spec.schema, value)) {
      return { ok: false, field: name, reason: `expected ${spec.shape}, got ${givenValue(spec, value)}` };
    }
    settings[name] = value;
  }
  for (const spec of definition.settings) {
    if (settings[spec.name] !== undefined) continue;
    if (spec.default !== undefined) settings[spec.name] = spec.default;
    else if (spec.required) return { ok: false, field: spec.name, reason: `required: ${spec.description}; expected ${spec.shape}` };
  }
  const problem = definition.check?.(settings, { environment: deps.environment, allow_private_urls: deps.allow_private_urls }) ?? null;
  return problem ? { ok: false, field: problem.field, reason: problem.reason } : { ok: true, settings };
}

function checkCurrencies(
  definition: ConnectorDefinition,
  given: readonly string[] | null,
): { ok: true; currencies: string[] } | { ok: false; reason: string } {
  const currencies = given ?? definition.default_currencies;
  if (currencies === null) return { ok: false, reason: 'required: the ISO 4217 codes this gateway takes, comma-separated (e.g. USD,EUR)' };
  const unique = [...new Set(currencies.map((c) => c.trim().toUpperCase()))];
  if (unique.length === 0 || unique.length > MAX_CURRENCIES) return { ok: false, reason: `expected 1 to ${MAX_CURRENCIES} ISO 4217 codes` };
  const unknown = unique.find((c) => !isKnownCurrency(c));
  return unknown === undefined
    ? { ok: true, currencies: unique }
    : { ok: false, reason: `${unknown.slice(0, 8)} is not a known ISO 4217 code` };
}

export async function createGateway(deps: GatewayAdminDeps, input: NewGatewayInput, now_ms: number): Promise<GatewayOutcome> {
  const definition = deps.connectors.definition(input.connector);
  if (!definition) return { kind: 'unknown_connector', known: deps.connectors.definitions().map((d) => d.name) };
  // A sandbox gateway would only ever answer status 15 on a live instance: refused at once.
  if (!deps.connectors.runsHere(definition.name)) return { kind: 'not_here', connector: definition.name };
  const currencies = checkCurrencies(definition, input.currencies);
  if (!currencies.ok) return { kind: 'invalid', field: 'currencies', reason: currencies.reason };
  const label = input.label === undefined ? null : checkGatewayLabel(input.label);
  if (label !== null && !label.ok) return { kind: 'invalid', field: 'label', reason: label.reason };
  const settings = checkSettings(deps, definition, input.settings);
  if (!settings.ok) return { kind: 'invalid', field: settings.field, reason: settings.reason };
  if (!(await deps.store.merchants.get(input.merchant_id))) return { kind: 'merchant_not_found' };
  const gateway_id = newGatewayId();
  const row = {
    gateway_id,
    label: label?.label ?? defaultGatewayLabel(definition.name, gateway_id),
    merchant_id: input.merchant_id,
    connector: definition.name,
    currencies: currencies.currencies.join(','),
    mit_enabled: input.mit_enabled === false ? 0 : 1,
    hold_payouts: input.hold_payouts === true ? 1 : 0,
    settings_sealed:
      Object.keys(settings.settings).length === 0
        ? null
        : deps.sealer.seal(JSON.stringify(settings.settings), gatewaySettingsPurpose(gateway_id)),
    enabled: 1,
    created_at_ms: now_ms,
    updated_at_ms: now_ms,
  };
  if ((await deps.store.merchants.insertGateway(row)) === 'exists') throw new Error('a random gateway id collided');
  const stored = await deps.store.merchants.getGateway(gateway_id);
  if (!stored) throw new Error(`gateway ${gateway_id} vanished after insert`);
  return { kind: 'ok', gateway: viewOf(deps, stored) };
}

export async function listGatewayViews(deps: GatewayAdminDeps, merchant_id: string | null): Promise<GatewayView[]> {
  return (await deps.store.merchants.listGateways(merchant_id)).map((row) => viewOf(deps, row));
}

/** What a gateway named by the operator (its id or its label) turned out to be. */
export type GatewayLookup =
  | { readonly kind: 'found'; readonly gateway_id: string }
  | { readonly kind: 'none' }
  /** Several gateways have that label: the operator gives the id (or narrows to a merchant). */
  | { readonly kind: 'ambiguous'; readonly gateways: readonly { readonly gateway_id: string; readonly merchant_id: string }[] };

const GATEWAY_ID = /^[0-9a-f]{32}$/;

/**
 * A gateway by its id, or by its label when exactly one gateway (of `merchant_id` when given) has
 * it: an operator reads labels, so the CLI takes one where it takes an id. An id is tried first.
 */
export async function findGateway(
  deps: Pick<GatewayAdminDeps, 'store'>,
  given: string,
  merchant_id: string | null,
): Promise<GatewayLookup> {
  if (GATEWAY_ID.test(given)) {
    const row = await deps.store.merchants.getGateway(given);
    if (row && (merchant_id === null || row.merchant_id === merchant_id)) return { kind: 'found', gateway_id: row.gateway_id };
  }
  const label = given.trim();
  const named = (await deps.store.merchants.listGateways(merchant_id)).filter((g) => g.label === label);
  if (named.length === 1) return { kind: 'found', gateway_id: named[0]!.gateway_id };
  if (named.length === 0) return { kind: 'none' };
  return { kind: 'ambiguous', gateways: named.map((g) => ({ gateway_id: g.gateway_id, merchant_id: g.merchant_id })) };
}

export async function showGateway(deps: GatewayAdminDeps, gateway_id: string): Promise<GatewayOutcome> {
  const row = await deps.store.merchants.getGateway(gateway_id);
  return row ? { kind: 'ok', gateway: viewOf(deps, row) } : { kind: 'gateway_not_found' };
}

/**
 * Disables (or enables again) a gateway: a disabled one takes no new payment; what it already
 * took still settles, refunds and takes its processor's webhooks.
 */
export async function setGatewayEnabled(
  deps: GatewayAdminDeps,
  gateway_id: string,
  enabled: boolean,
  now_ms: number,
): Promise<GatewayOutcome> {
  if (!(await deps.store.merchants.updateGateway(gateway_id, { enabled: enabled ? 1 : 0, updated_at_ms: now_ms })))
    return { kind: 'gateway_not_found' };
  return showGateway(deps, gateway_id);
}

/** A gateway's new label (1 to 64 characters, surrounding spaces dropped); it names the gateway wherever an operator reads it. */
export async function renameGateway(deps: GatewayAdminDeps, gateway_id: string, given: string): Promise<GatewayOutcome> {
  const label = checkGatewayLabel(given);
  if (!label.ok) return { kind: 'invalid', field: 'label', reason: label.reason };
  const row = await deps.store.merchants.getGateway(gateway_id);
  if (!row) return { kind: 'gateway_not_found' };
  // updated_at_ms stays: it marks a change of settings, on which every instance rebuilds the connector; a name changes nothing there.
  await deps.store.merchants.updateGateway(gateway_id, { label: label.label, updated_at_ms: row.updated_at_ms });
  return showGateway(deps, gateway_id);
}

/**
 * New values for some settings (new credentials): merged over the current ones, checked whole,
 * sealed again. The new version takes effect with the next request on every instance
 * (connectors/registry.ts rebuilds a connector whose settings changed).
 */
export async function replaceGatewaySettings(
  deps: GatewayAdminDeps,
  gateway_id: string,
  changes: Readonly<Record<string, string>>,
  now_ms: number,
): Promise<GatewayOutcome> {
  const row = await deps.store.merchants.getGateway(gateway_id);
  if (!row) return { kind: 'gateway_not_found' };
  const definition = deps.connectors.definition(row.connector);
  if (!definition) return { kind: 'unknown_connector', known: deps.connectors.definitions().map((d) => d.name) };
  if (Object.keys(changes).length === 0) return { kind: 'invalid', field: 'settings', reason: 'expected at least one setting to change' };
  const settings = checkSettings(deps, definition, { ...openSettings(deps, row), ...changes });
  if (!settings.ok) return { kind: 'invalid', field: settings.field, reason: settings.reason };
  await deps.store.merchants.updateGateway(gateway_id, {
    settings_sealed: deps.sealer.seal(JSON.stringify(settings.settings), gatewaySettingsPurpose(gateway_id)),
    // Strictly later, so that every copy of the connector built from the old settings is replaced.
    updated_at_ms: Math.max(now_ms, row.updated_at_ms + 1),
  });
  return showGateway(deps, gateway_id);
}

/** Merchants listed at start-up at most; the log says how many more there are. */
const REPORT_MAX_MERCHANTS = 1_000;

/**
 * Live mode, at start-up: each merchant that has no usable gateway (none at all, only disabled
 * ones, or only gateways of a connector that does not run live, like the sandbox's), logged once,
 * so an operator sees before the first payment who would get status 15.
 */
export async function reportUnusableMerchants(deps: {
  readonly store: Store;
  readonly logger: Logger;
  readonly connectors: Pick<ConnectorCatalog, 'runsHere'>;
}): Promise<number> {
  const merchant_ids = await deps.store.merchants.listIds(REPORT_MAX_MERCHANTS + 1);
  const gateways = await deps.store.merchants.listGateways(null);
  const usable = new Set(gateways.filter((g) => g.enabled === 1 && deps.connectors.runsHere(g.connector)).map((g) => g.merchant_id));
  const without = merchant_ids.filter((id) => !usable.has(id));
  for (const merchant_id of without.slice(0, REPORT_MAX_MERCHANTS)) {
    const own = gateways.filter((g) => g.merchant_id === merchant_id);
    const why =
      own.length === 0
        ? 'it has no gateway'
        : `its gateways are ${own.map((g) => `"${g.label}" ${g.gateway_id} (${g.connector}${g.enabled === 1 ? '' : ', disabled'})`).join(', ')}`;
    deps.logger.warn(
      { merchant_id },
      `merchant ${merchant_id} has no usable gateway in live mode: ${why}; add one with paygate gateway create`,
    );
  }
  if (merchant_ids.length > REPORT_MAX_MERCHANTS)
    deps.logger.warn(`more than ${REPORT_MAX_MERCHANTS} merchants: only the first were checked for a usable gateway`);
  return without.length;
}

/** The gateway operations' deps out of the operations' own. */
export function gatewayAdminDeps(deps: OperationDeps): GatewayAdminDeps {
  return {
    store: deps.store,
    sealer: deps.sealer,
    connectors: deps.connectors,
    environment: deps.config.environment,
    allow_private_urls: deps.config.limits.allow_private_urls,
    public_url: deps.public_url,
  };
}

/** Holds a gateway's payouts for approval, or not (docs/payouts.md); false when no such gateway. */
export function setGatewayHoldPayouts(deps: Pick<OperationDeps, 'store'>, gateway_id: string, hold_payouts: boolean): Promise<boolean> {
  return deps.store.merchants.setGatewayHoldPayouts(gateway_id, hold_payouts);
}
