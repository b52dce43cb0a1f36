// The operators' pages of the back office (docs/backoffice.md): merchants (create, and the
// merchant's page), gateways (create one per connector, rename, replace credentials, disable; secret
// settings are written, never shown again; one gateway's page with its processor's latest
// webhook events, filtered by outcome, so that an unmatched one is found), users (create,
// disable) and the audit log. Disabling or enabling a merchant, a gateway or a user first answers
// with its confirmation page (what it stops, and for whom); the change is made when that page's
// button sends the form again. A merchant's staff never reach these pages: to them these URLs are
// pages that do not exist.
import { textProblem } from '../../domain/text.js';
import {
  auditLines,
  backOfficeUser,
  backOfficeUsers,
  gatewaysOverview,
  gatewayToConfirm,
  gatewayWithEvents,
  merchantSummaries,
  merchantToConfirm,
} from '../../operations/admin-views.js';
import { PROCESSOR_EVENT_OUTCOMES, type ProcessorEventOutcome } from '../../domain/gateway-record.js';
import {
  changeGatewayFromBackOffice,
  createGatewayFromBackOffice,
  createMerchantFromBackOffice,
  createUserFromBackOffice,
  gatewayProblem,
  setMerchantDisabledFromBackOffice,
  setUserDisabledFromBackOffice,
} from '../../operations/backoffice-admin-actions.js';
import { PROCESSOR_EVENTS_MAX } from '../../operations/transaction-views.js';
import type { Html } from '../../pages/html.js';
import { CONFIRM_FIELD } from '../../pages/backoffice/authorizations.js';
import {
  type Confirmation,
  confirmationBody,
  gatewayStateConfirmation,
  merchantStateConfirmation,
  userStateConfirmation,
} from '../../pages/backoffice/confirmations.js';
import { auditBody, gatewayBody, gatewaysBody, merchantCreatedNotice, merchantsBody, usersBody } from '../../pages/backoffice/admin.js';
import { type BackOfficeRoute, formText, formValue, type PageContext, partsOf } from './plugin.js';

const OPERATOR = ['operator'] as const;
const LIST_ROWS = 200;

function field(context: PageContext, name: string): string {
  return formText(context.request, name);
}

/** Whether the form is the second, sent from the confirmation page: only then is the change made. */
function confirmed(context: PageContext): boolean {
  return formValue(context.request, CONFIRM_FIELD) === 'yes';
}

function confirmationPage(context: PageContext, current: string, confirmation: Confirmation): unknown {
  return context.page(confirmation.heading, current, confirmationBody(partsOf(context), confirmation));
}

// Merchants ---------------------------------------------------------------------------------

async function merchantsPage(
  context: PageContext,
  extra: Html | null = null,
  problem: string | null = null,
  http_status = 200,
): Promise<unknown> {
  const after_raw = (context.request.query as Record<string, unknown>).after;
  const after = typeof after_raw === 'string' && after_raw.length <= 50 && textProblem(after_raw) === null ? after_raw : '';
  const rows = await merchantSummaries(context.deps, after, LIST_ROWS + 1);
  const shown = rows.slice(0, LIST_ROWS);
  const next_after = rows.length > LIST_ROWS ? shown[shown.length - 1]!.merchant_id : null;
  return context.page(
    'Merchants',
    '/backoffice/merchants',
    merchantsBody(partsOf(context), shown, next_after, extra, problem),
    http_status,
  );
}

function merchantStateAction(action: 'disable' | 'enable'): BackOfficeRoute {
  return {
    method: 'POST',
    url: `/merchants/:merchant_id/${action}`,
    roles: OPERATOR,
    async handle(context) {
      const { merchant_id } = context.request.params as { merchant_id: string };
      if (!confirmed(context)) {
        const found = await merchantToConfirm(context.deps, merchant_id);
        if (found === null) return context.notFound(`merchant ${merchant_id}`);
        return confirmationPage(context, '/backoffice/merchants', merchantStateConfirmation(found, action));
      }
      if (!(await setMerchantDisabledFromBackOffice(context.deps, context, merchant_id, action)))
        return context.notFound(`merchant ${merchant_id}`);
      return context.redirect(`/backoffice/merchants?notice=${action}d`);
    },
  };
}

async function createMerchant(context: PageContext): Promise<unknown> {
  const optional = (name: string) => (field(context, name) === '' ? undefined : field(context, name));
  const outcome = await createMerchantFromBackOffice(context.deps, context, {
    merchant_id: optional('merchant_id'),
    frontend: optional('frontend'),
    currency: optional('currency')?.toUpperCase(),
  });
  switch (outcome.kind) {
    case 'created':
      // The secret is shown this once, on this answer (never cached: every back-office answer is no-store).
      return merchantsPage(context, merchantCreatedNotice(outcome.merchant));
    case 'exists':
      return merchantsPage(context, null, `Merchant ID: ${outcome.merchant_id} exists already.`, 409);
    case 'invalid':
      return merchantsPage(context, null, `${outcome.field}: expected ${outcome.reason}.`, 400);
  }
}

// Gateways ----------------------------------------------------------------------------------

async function gatewaysPage(context: PageContext, problem: string | null = null, http_status = 200): Promise<unknown> {
  const { gateways, new_gateway_forms } = await gatewaysOverview(context.deps);
  return context.page(
    'Gateways',
    '/backoffice/gateways',
    gatewaysBody(partsOf(context), gateways, new_gateway_forms, problem),
    http_status,
  );
}

/** The ?outcome= of a gateway's page: absent or empty is every outcome; anything else but the four is refused. */
function outcomeFilter(raw: unknown): { readonly ok: true; readonly outcome: ProcessorEventOutcome | null } | { readonly ok: false } {
  if (raw === undefined || raw === '') return { ok: true, outcome: null };
  const outcome = PROCESSOR_EVENT_OUTCOMES.find((o) => o === raw);
  return outcome === undefined ? { ok: false } : { ok: true, outcome };
}

/** One gateway: what it is, and its processor's latest webhook events with what each did. */
async function gatewayPage(context: PageContext): Promise<unknown> {
  const { gateway_id } = context.request.params as { gateway_id: string };
  const filter = outcomeFilter((context.request.query as Record<string, unknown>).outcome);
  const chosen = filter.ok ? filter.outcome : null;
  const found = await gatewayWithEvents(context.deps, gateway_id, chosen);
  if (found === null) return context.notFound(`gateway ${gateway_id}`);
  const g = found.gateway;
  const events = filter.ok ? found.events : [];
  return context.page(
    `Gateway ${g.label}`,
    '/backoffice/gateways',
    gatewayBody(partsOf(context), g, { valid: filter.ok, chosen, outcomes: PROCESSOR_EVENT_OUTCOMES }, events, PROCESSOR_EVENTS_MAX),
    filter.ok ? 200 : 400,
  );
}

/** The form's setting_* fields that were filled in. */
function settingsOf(context: PageContext): Record<string, string> {
  const settings: Record<string, string> = {};
  for (const key of Object.keys((context.request.body ?? {}) as Record<string, unknown>)) {
    if (!key.startsWith('setting_')) continue;
    const value = field(context, key);
    if (value !== '') settings[key.slice('setting_'.length)] = value;
  }
  return settings;
}

async function createGatewayAction(context: PageContext): Promise<unknown> {
  const currencies = field(context, 'currencies');
  const label = field(context, 'label');
  const outcome = await createGatewayFromBackOffice(context.deps, context, {
    merchant_id: field(context, 'merchant_id'),
    connector: field(context, 'connector'),
    // Empty: the default label.
    label: label === '' ? undefined : label,
    currencies: currencies === '' ? null : currencies.split(','),
    settings: settingsOf(context),
  });
  if (outcome.kind !== 'ok') return gatewaysPage(context, gatewayProblem(outcome), outcome.kind === 'merchant_not_found' ? 404 : 400);
  return context.redirect('/backoffice/gateways?notice=created');
}

const GATEWAY_NOTICES = { settings: 'updated', enable: 'enabled', disable: 'disabled', rename: 'renamed' } as const;

function gatewayAction(action: 'settings' | 'enable' | 'disable' | 'rename'): BackOfficeRoute {
  return {
    method: 'POST',
    url: `/gateways/:gateway_id/${action}`,
    roles: OPERATOR,
    async handle(context) {
      const { gateway_id } = context.request.params as { gateway_id: string };
      if ((action === 'enable' || action === 'disable') && !confirmed(context)) {
        const found = await gatewayToConfirm(context.deps, gateway_id);
        if (found === null) return context.notFound(`gateway ${gateway_id}`);
        return confirmationPage(context, '/backoffice/gateways', gatewayStateConfirmation(found, action));
      }
      const outcome = await changeGatewayFromBackOffice(
        context.deps,
        context,
        gateway_id,
        action,
        settingsOf(context),
        field(context, 'label'),
      );
      if (outcome.kind === 'gateway_not_found') return context.notFound(`gateway ${gateway_id}`);
      if (outcome.kind !== 'ok') return gatewaysPage(context, gatewayProblem(outcome), 400);
      return context.redirect(`/backoffice/gateways?notice=${GATEWAY_NOTICES[action]}`);
    },
  };
}

// Users -------------------------------------------------------------------------------------

async function usersPage(context: PageContext, problem: string | null = null, http_status = 200): Promise<unknown> {
  const users = await backOfficeUsers(context.deps, LIST_ROWS);
  return context.page('Users', '/backoffice/users', usersBody(partsOf(context), users, problem), http_status);
}

async function createUserAction(context: PageContext): Promise<unknown> {
  const password = formValue(context.request, 'password');
  const merchant_id = field(context, 'merchant_id');
  const outcome = await createUserFromBackOffice(context.deps, context, {
    email: field(context, 'email'),
    password,
    role: field(context, 'role'),
    merchant_id: merchant_id === '' ? null : merchant_id,
  });
  switch (outcome.kind) {
    case 'created':
      return context.redirect('/backoffice/users?notice=created');
    case 'exists':
      return usersPage(context, 'E-mail: a user with this e-mail exists already.', 409);
    case 'merchant_not_found':
      return usersPage(context, 'Merchant ID: no such merchant.', 400);
    case 'invalid':
      return usersPage(
        context,
        `${outcome.field === 'merchant_id' ? 'Merchant ID' : outcome.field === 'email' ? 'E-mail' : outcome.field === 'password' ? 'Password' : 'Role'}: expected ${outcome.reason}.`,
        400,
      );
  }
}

function userStateAction(action: 'disable' | 'enable'): BackOfficeRoute {
  return {
    method: 'POST',
    url: `/users/:user_id/${action}`,
    roles: OPERATOR,
    async handle(context) {
      const { user_id } = context.request.params as { user_id: string };
      if (!confirmed(context)) {
        const found = await backOfficeUser(context.deps, user_id);
        if (found === null) return context.notFound(`user ${user_id}`);
        if (found.user_id === context.viewer.user_id) return usersPage(context, 'You cannot disable yourself: ask another operator.', 409);
        return confirmationPage(context, '/backoffice/users', userStateConfirmation(found, action));
      }
      const outcome = await setUserDisabledFromBackOffice(context.deps, context, user_id, action);
      if (outcome.kind === 'not_found') return context.notFound(`user ${user_id}`);
      if (outcome.kind === 'self') return usersPage(context, 'You cannot disable yourself: ask another operator.', 409);
      return context.redirect(`/backoffice/users?notice=${action}d`);
    },
  };
}

// Audit log ---------------------------------------------------------------------------------

async function auditPage(context: PageContext): Promise<unknown> {
  const before_raw = (context.request.query as Record<string, string | undefined>).before;
  const before = before_raw !== undefined && /^[1-9][0-9]{0,14}$/.test(before_raw) ? Number(before_raw) : null;
  const { rows, gateway_labels } = await auditLines(context.deps, before, LIST_ROWS + 1);
  const shown = rows.slice(0, LIST_ROWS);
  return context.page(
    'Audit log',
    '/backoffice/audit',
    auditBody(shown, rows.length > LIST_ROWS ? shown[shown.length - 1]!.id : null, gateway_labels),
  );
}

export function adminRoutes(): BackOfficeRoute[] {
  return [
    { method: 'GET', url: '/merchants', roles: OPERATOR, handle: (context) => merchantsPage(context) },
    { method: 'POST', url: '/merchants', roles: OPERATOR, handle: createMerchant },
    merchantStateAction('disable'),
    merchantStateAction('enable'),
    { method: 'GET', url: '/gateways', roles: OPERATOR, handle: (context) => gatewaysPage(context) },
    { method: 'GET', url: '/gateways/:gateway_id', roles: OPERATOR, handle: gatewayPage },
    { method: 'POST', url: '/gateways', roles: OPERATOR, handle: createGatewayAction },
    gatewayAction('settings'),
    gatewayAction('enable'),
    gatewayAction('disable'),
    gatewayAction('rename'),
    { method: 'GET', url: '/users', roles: OPERATOR, handle: (context) => usersPage(context) },
    { method: 'POST', url: '/users', roles: OPERATOR, handle: createUserAction },
    userStateAction('disable'),
    userStateAction('enable'),
    { method: 'GET', url: '/audit', roles: OPERATOR, handle: auditPage },
  ];
}
