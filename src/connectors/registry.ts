// The connectors this gateway knows, and the one Connector of each configured gateway. A gateway
// names its connector and keeps its settings sealed with the master key; the registry opens
// them and builds the connector once per version of the settings (a gateway's updated_at_ms), so
// new credentials take effect with the next request that sees the new version. A connector that
// may not run in this environment (the sandbox on a live instance) is never built here. Each
// connector sends through its gateway's labelled view of the one ProcessorHttp, so every call to
// a processor is counted by connector and gateway (metrics.ts) without the connector knowing.
import type { Environment } from '../domain/environment.js';
import { type Gateway, gatewayOf, type StarterGateway } from '../domain/merchants.js';
import type { ProcessorHttp } from '../outbound/processor-http.js';
import { adyenDefinition } from './adyen/connector.js';
import { checkoutDefinition } from './checkout/connector.js';
import { paypalDefinition } from './paypal/connector.js';
import { stripeDefinition } from './stripe/connector.js';
import type { Connector, ConnectorContext, ConnectorDefinition } from './connector.js';
import { SANDBOX_CURRENCIES, sandboxDefinition } from './sandbox/connector.js';

/** Every connector of this release, by name. Adding a processor adds its definition here (docs/connectors.md). */
export const CONNECTOR_DEFINITIONS: readonly ConnectorDefinition[] = [
  sandboxDefinition,
  checkoutDefinition,
  stripeDefinition,
  paypalDefinition,
  adyenDefinition,
];

/** Built connectors kept at most; beyond it the oldest is dropped (and built again when needed). */
const CACHE_MAX_CONNECTORS = 10_000;

/** The purpose a gateway's sealed settings are bound to: they open for that gateway only. */
export function gatewaySettingsPurpose(gateway_id: string): string {
  return `gateway-settings:${gateway_id}`;
}

/** The gateway a new merchant gets: a sandbox gateway in sandbox mode (decisions.md §8), none in live mode (§13). */
export function starterGateway(environment: Environment): StarterGateway | null {
  return environment === 'sandbox' ? { connector: sandboxDefinition.name, currencies: SANDBOX_CURRENCIES } : null;
}

/** What opens a gateway's sealed settings (crypto/sealer.ts Sealer, with the master key). */
export interface SettingsOpener {
  open(sealed: string, purpose: string): string;
}

/**
 * Where forGatewayId reads a gateway: the store's merchants (a unit of work or the store), passed
 * by the operation that holds it. Only this method's shape: the registry never imports the store.
 */
export interface GatewayReader {
  readonly merchants: { getGateway(gateway_id: string): Promise<Parameters<typeof gatewayOf>[0] | null> };
}

export class ConnectorRegistry {
  private readonly by_name: ReadonlyMap<string, ConnectorDefinition>;
  private readonly built = new Map<string, { readonly updated_at_ms: number; readonly connector: Connector }>();

  constructor(
    private readonly environment: Environment,
    private readonly sealer: SettingsOpener,
    /** `http` is the root ProcessorHttp: each connector gets its gateway's view of it. */
    private readonly context: ConnectorContext & { readonly http: ProcessorHttp },
    definitions: readonly ConnectorDefinition[] = CONNECTOR_DEFINITIONS,
  ) {
    this.by_name = new Map(definitions.map((d) => [d.name, d]));
  }

  /** A connector of this release by name, whether or not it may run here. */
  definition(name: string): ConnectorDefinition | null {
    return this.by_name.get(name) ?? null;
  }

  definitions(): readonly ConnectorDefinition[] {
    return [...this.by_name.values()];
  }

  /** Whether gateways of this connector may take payments in this environment. */
  runsHere(name: string): boolean {
    return this.by_name.get(name)?.environments.includes(this.environment) ?? false;
  }

  /**
   * The connector of a gateway, whether or not it is enabled (a disabled gateway's transactions
   * still refund, settle and take webhooks); null when its connector may not run here.
   */
  forGateway(gateway: Gateway): Connector | null {
    const definition = this.by_name.get(gateway.connector);
    if (!definition || !definition.environments.includes(this.environment)) return null;
    const cached = this.built.get(gateway.gateway_id);
    if (cached && cached.updated_at_ms === gateway.updated_at_ms) return cached.connector;
    const settings =
      gateway.settings_sealed === null
        ? {}
        : (JSON.parse(this.sealer.open(gateway.settings_sealed, gatewaySettingsPurpose(gateway.gateway_id))) as Record<string, string>);
    const http = this.context.http.forGateway({ connector: definition.name, gateway_id: gateway.gateway_id });
    const connector = definition.create(settings, { ...this.context, http }, gateway.gateway_id);
    this.built.delete(gateway.gateway_id);
    if (this.built.size >= CACHE_MAX_CONNECTORS) this.built.delete(this.built.keys().next().value!);
    this.built.set(gateway.gateway_id, { updated_at_ms: gateway.updated_at_ms, connector });
    return connector;
  }

  /** For work that starts from a stored transaction (due work, webhooks, refunds, operator actions). */
  async forGatewayId(
    store: GatewayReader,
    gateway_id: string,
  ): Promise<{ readonly gateway: Gateway; readonly connector: Connector } | null> {
    const row = await store.merchants.getGateway(gateway_id);
    if (!row) return null;
    const gateway = gatewayOf(row);
    const connector = this.forGateway(gateway);
    return connector ? { gateway, connector } : null;
  }
}
