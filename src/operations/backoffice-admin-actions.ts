// The operators' actions in the back office (docs/backoffice.md), each one operation that performs
// the action and writes its audit line: a merchant created, disabled or enabled; a gateway created,
// renamed, its settings replaced, enabled or disabled; a user created, disabled or enabled. The handlers
// (http/backoffice/admin.ts) read the form, call one of these and render what it answers. Each
// audit line is written right after its action, with its outcome, as before the fold: the actions
// (shared with the CLI and the operator API) run their own transactions.
import { starterGateway } from '../connectors/registry.js';
import type { CreateMerchantOutcome, NewMerchantInput } from '../domain/merchants.js';
import { type Actor, recordAudit } from './audit.js';
import { createUser, type CreateUserOutcome, type NewUserInput, setUserDisabled, type SetUserDisabledOutcome } from './backoffice-users.js';
import type { OperationDeps } from './deps.js';
import {
  createGateway,
  gatewayAdminDeps,
  type GatewayOutcome,
  type NewGatewayInput,
  renameGateway,
  replaceGatewaySettings,
  setGatewayEnabled,
} from './gateways.js';
import { setMerchantDisabled } from './merchant-credentials.js';

// Merchants ---------------------------------------------------------------------------------

/** A new merchant (with the environment's starter gateway); its secret is in the answer, never in the audit line. */
export async function createMerchantFromBackOffice(
  deps: OperationDeps,
  actor: Actor,
  input: NewMerchantInput,
): Promise<CreateMerchantOutcome> {
  const outcome = await deps.merchants.create(input, deps.clock.now_ms(), starterGateway(deps.config.environment));
  const audit = (outcome_text: 'done' | 'refused', target: string | null, detail: string | null) =>
    recordAudit(deps, actor.viewer, actor.address, {
      action: 'create_merchant',
      target,
      merchant_id: target,
      outcome: outcome_text,
      detail,
    });
  switch (outcome.kind) {
    case 'created':
      await audit('done', outcome.merchant.merchant_id, null);
      break;
    case 'exists':
      await audit('refused', outcome.merchant_id, 'exists');
      break;
    case 'invalid':
      await audit('refused', null, `invalid ${outcome.field}`);
      break;
  }
  return outcome;
}

/** Disables or enables a merchant; false (nothing audited) when there is no such merchant. */
export async function setMerchantDisabledFromBackOffice(
  deps: OperationDeps,
  actor: Actor,
  merchant_id: string,
  action: 'disable' | 'enable',
): Promise<boolean> {
  if (!(await setMerchantDisabled(deps, merchant_id, action === 'disable'))) return false;
  await recordAudit(deps, actor.viewer, actor.address, {
    action: `${action}_merchant`,
    target: merchant_id,
    merchant_id,
    outcome: 'done',
  });
  return true;
}

// Gateways ----------------------------------------------------------------------------------

/** What a refused gateway action says, on the page and in the audit line alike. */
export function gatewayProblem(outcome: Exclude<GatewayOutcome, { kind: 'ok' }>): string {
  switch (outcome.kind) {
    case 'merchant_not_found':
      return 'Merchant ID: no such merchant.';
    case 'gateway_not_found':
      return 'No such gateway.';
    case 'unknown_connector':
      return `Connector: one of ${outcome.known.join(', ')}.`;
    case 'not_here':
      return `Connector: ${outcome.connector} does not take payments in this environment.`;
    case 'invalid':
      return `${outcome.field === 'label' ? 'Label' : outcome.field}: ${outcome.reason}.`;
  }
}

/** A new gateway from the operators' form; the audit names its connector, never its settings. */
export async function createGatewayFromBackOffice(deps: OperationDeps, actor: Actor, input: NewGatewayInput): Promise<GatewayOutcome> {
  const outcome = await createGateway(gatewayAdminDeps(deps), input, deps.clock.now_ms());
  await recordAudit(deps, actor.viewer, actor.address, {
    action: 'create_gateway',
    target: outcome.kind === 'ok' ? outcome.gateway.gateway : null,
    merchant_id: input.merchant_id || null,
    outcome: outcome.kind === 'ok' ? 'done' : 'refused',
    detail: outcome.kind === 'ok' ? `${input.connector}, label: ${outcome.gateway.label}` : gatewayProblem(outcome),
  });
  if (outcome.kind === 'ok') deps.merchants.invalidate();
  return outcome;
}

/**
 * A gateway's settings replaced (`settings`: the filled-in ones), the gateway renamed (`label`),
 * enabled or disabled; an unknown gateway is not audited.
 */
export async function changeGatewayFromBackOffice(
  deps: OperationDeps,
  actor: Actor,
  gateway_id: string,
  action: 'settings' | 'enable' | 'disable' | 'rename',
  settings: Readonly<Record<string, string>>,
  label: string,
): Promise<GatewayOutcome> {
  const now_ms = deps.clock.now_ms();
  const admin_deps = gatewayAdminDeps(deps);
  const before = action === 'rename' ? await deps.store.merchants.getGateway(gateway_id) : null;
  const outcome =
    action === 'settings'
      ? await replaceGatewaySettings(admin_deps, gateway_id, settings, now_ms)
      : action === 'rename'
        ? await renameGateway(admin_deps, gateway_id, label)
        : await setGatewayEnabled(admin_deps, gateway_id, action === 'enable', now_ms);
  if (outcome.kind === 'gateway_not_found') return outcome;
  const detail =
    action === 'settings'
      ? // Which settings changed, never their values.
        `settings: ${Object.keys(settings).join(', ') || 'none'}`
      : action === 'rename'
        ? outcome.kind === 'ok'
          ? `label: ${before?.label ?? '?'} -> ${outcome.gateway.label}`
          : gatewayProblem(outcome)
        : outcome.kind === 'ok'
          ? `label: ${outcome.gateway.label}`
          : null;
  await recordAudit(deps, actor.viewer, actor.address, {
    action: action === 'settings' ? 'replace_gateway_settings' : `${action}_gateway`,
    target: gateway_id,
    merchant_id: outcome.kind === 'ok' ? outcome.gateway.merchant_id : null,
    outcome: outcome.kind === 'ok' ? 'done' : 'refused',
    detail,
  });
  if (outcome.kind === 'ok') deps.merchants.invalidate();
  return outcome;
}

// Users -------------------------------------------------------------------------------------

/** A new user from the operators' form; the audit names the e-mail as typed and the role, never the password. */
export async function createUserFromBackOffice(deps: OperationDeps, actor: Actor, input: NewUserInput): Promise<CreateUserOutcome> {
  const outcome = await createUser(deps, input);
  await recordAudit(deps, actor.viewer, actor.address, {
    action: 'create_user',
    target: input.email || null,
    merchant_id: input.merchant_id || null,
    outcome: outcome.kind === 'created' ? 'done' : 'refused',
    detail:
      outcome.kind === 'created' ? `role ${outcome.user.role}` : outcome.kind === 'invalid' ? `invalid ${outcome.field}` : outcome.kind,
  });
  return outcome;
}

/** Disables or enables a user; only a change made is audited (not an unknown user, nor an operator's own account). */
export async function setUserDisabledFromBackOffice(
  deps: OperationDeps,
  actor: Actor,
  user_id: string,
  action: 'disable' | 'enable',
): Promise<SetUserDisabledOutcome> {
  const outcome = await setUserDisabled(deps, actor.viewer, user_id, action === 'disable');
  if (outcome.kind !== 'done') return outcome;
  const { user } = outcome;
  await recordAudit(deps, actor.viewer, actor.address, {
    action: `${action}_user`,
    target: user.email,
    merchant_id: user.merchant_id,
    outcome: 'done',
  });
  return outcome;
}
