// What the operators' pages of the back office read (docs/backoffice.md): merchants a page at a
// time, the gateways with the forms their connectors need, one gateway with its processor's
// latest webhook events (filtered by outcome), the users, and the audit log a page at a time.
// Changes are made by their own operations (merchant-directory.ts, gateways.ts,
// backoffice-users.ts, merchant-credentials.ts).
import type { ConnectorDefinition } from '../connectors/connector.js';
import type { AuditLogRow, BackofficeUserRow } from '../domain/backoffice-record.js';
import type { ProcessorEventOutcome, ProcessorEventRow } from '../domain/gateway-record.js';
import type { MerchantSummary } from '../domain/merchants.js';
import type { OperationDeps } from './deps.js';
import { gatewayAdminDeps, type GatewayView, listGatewayViews, showGateway } from './gateways.js';
import { PROCESSOR_EVENTS_MAX } from './transaction-views.js';

export type { GatewayView } from './gateways.js';

type ReadDeps = Pick<OperationDeps, 'store'>;

/** The audit actions whose target is a gateway's id (create_gateway, disable_gateway, replace_gateway_settings…). */
const GATEWAY_ACTION = /_gateway(?:_settings)?$/;

/** Merchants by id after `after_merchant_id`, `limit` at most. */
export function merchantSummaries(deps: ReadDeps, after_merchant_id: string, limit: number): Promise<MerchantSummary[]> {
  return deps.store.merchants.list(after_merchant_id, limit);
}

/** What a gateway's form asks for: its connector's settings. */
export interface GatewayForm {
  readonly name: string;
  readonly default_currencies: readonly string[] | null;
  readonly settings: readonly { readonly name: string; readonly required: boolean; readonly secret: boolean; readonly default?: string }[];
}

function formOf(definition: ConnectorDefinition): GatewayForm {
  return { name: definition.name, default_currencies: definition.default_currencies, settings: definition.settings };
}

export interface GatewaysOverview {
  /** Every gateway, with the form to replace its settings (null: its connector is not in this release). */
  readonly gateways: readonly { readonly gateway: GatewayView; readonly form: GatewayForm | null }[];
  /** One form per connector that runs here, to add a gateway. */
  readonly new_gateway_forms: readonly GatewayForm[];
}

export async function gatewaysOverview(deps: OperationDeps): Promise<GatewaysOverview> {
  const admin = gatewayAdminDeps(deps);
  const gateways = await listGatewayViews(admin, null);
  const definitions = admin.connectors.definitions().filter((d) => admin.connectors.runsHere(d.name));
  return {
    gateways: gateways.map((gateway) => {
      const definition = admin.connectors.definition(gateway.connector);
      return { gateway, form: definition === null ? null : formOf(definition) };
    }),
    new_gateway_forms: definitions.map(formOf),
  };
}

/** One gateway and its processor's latest webhook events (of one outcome, or null: all); null when no such gateway. */
export async function gatewayWithEvents(
  deps: OperationDeps,
  gateway_id: string,
  outcome: ProcessorEventOutcome | null,
): Promise<{ readonly gateway: GatewayView; readonly events: readonly ProcessorEventRow[] } | null> {
  const shown = await showGateway(gatewayAdminDeps(deps), gateway_id);
  if (shown.kind !== 'ok') return null;
  const events = await deps.store.merchants.listGatewayProcessorEvents(shown.gateway.gateway, outcome, PROCESSOR_EVENTS_MAX);
  return { gateway: shown.gateway, events };
}

/** What an operator confirms before disabling or enabling a merchant: its state and its gateways; null when no such merchant. */
export interface MerchantToConfirm {
  readonly merchant_id: string;
  readonly disabled_at_ms: number | null;
  readonly gateways: readonly { readonly label: string; readonly enabled: boolean }[];
  readonly application_count: number;
}

export async function merchantToConfirm(deps: ReadDeps, merchant_id: string): Promise<MerchantToConfirm | null> {
  const merchant = await deps.store.merchants.get(merchant_id);
  if (merchant === null) return null;
  return {
    merchant_id: merchant.merchant_id,
    disabled_at_ms: merchant.disabled_at_ms,
    gateways: merchant.gateways.map((g) => ({ label: g.label, enabled: g.enabled === 1 })),
    application_count: merchant.applications.length,
  };
}

/** One gateway as its list shows it (what an operator confirms before disabling or enabling it); null when no such gateway. */
export async function gatewayToConfirm(deps: OperationDeps, gateway_id: string): Promise<GatewayView | null> {
  const shown = await showGateway(gatewayAdminDeps(deps), gateway_id);
  return shown.kind === 'ok' ? shown.gateway : null;
}

/** One user (what an operator confirms before disabling or enabling them); null when no such user. */
export function backOfficeUser(deps: ReadDeps, user_id: string): Promise<BackofficeUserRow | null> {
  return deps.store.backoffice.getUser(user_id);
}

/** The back office's users, `limit` at most. */
export function backOfficeUsers(deps: ReadDeps, limit: number): Promise<BackofficeUserRow[]> {
  return deps.store.backoffice.listUsers(null, limit);
}

/**
 * The audit log, newest first, before the line `before_id` (null: from the newest), with the
 * labels of the gateways its lines act on (their target is the gateway's id), shown instead.
 */
export async function auditLines(
  deps: ReadDeps,
  before_id: number | null,
  limit: number,
): Promise<{ readonly rows: AuditLogRow[]; readonly gateway_labels: ReadonlyMap<string, string> }> {
  const rows = await deps.store.backoffice.listAudit(null, before_id, limit);
  const gateway_ids = rows.filter((r) => r.target !== null && GATEWAY_ACTION.test(r.action)).map((r) => r.target!);
  return { rows, gateway_labels: await deps.store.merchants.gatewayLabels([...new Set(gateway_ids)]) };
}
