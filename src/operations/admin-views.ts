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

/** The back office's users, `limit` at most. */
export function backOfficeUsers(deps: ReadDeps, limit: number): Promise<BackofficeUserRow[]> {
  return deps.store.backoffice.listUsers(null, limit);
}

/** The audit log, newest first, before the line `before_id` (null: from the newest). */
export function auditLines(deps: ReadDeps, before_id: number | null, limit: number): Promise<AuditLogRow[]> {
  return deps.store.backoffice.listAudit(null, before_id, limit);
}
