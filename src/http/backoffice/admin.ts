// The operators' pages of the back office (docs/backoffice.md): merchants (create, and the
// merchant's page), gateways (create one per connector, replace credentials, disable; secret
// settings are written, never shown again; one gateway's page with its processor's latest
// webhook events, filtered by outcome, so that an unmatched one is found), users (create,
// disable) and the audit log. A merchant's staff never reach them: to them these URLs are pages
// that do not exist.
import { starterGateway } from '../../connectors/registry.js';
import { PASSWORD_MIN_CHARS } from '../../domain/backoffice-access.js';
import { textProblem } from '../../domain/text.js';
import { recordAudit } from '../../operations/audit.js';
import { createUser } from '../../operations/backoffice-users.js';
import { setMerchantDisabled } from '../../operations/merchant-credentials.js';
import type { OperationDeps } from '../../operations/deps.js';
import {
  createGateway, type GatewayAdminDeps, type GatewayOutcome, type GatewayView, listGatewayViews, replaceGatewaySettings, setGatewayEnabled,
  showGateway,
} from '../../operations/gateways.js';
import { type Html, html } from '../../pages/html.js';
import { csrfField, noticeLine, problemLine } from '../../pages/backoffice/layout.js';
import { PROCESSOR_EVENT_OUTCOMES, type ProcessorEventOutcome } from '../../domain/gateway-record.js';
import { type BackOfficeRoute, formText, formValue, type PageContext } from './plugin.js';
import { iso } from '../../pages/backoffice/format.js';
import { PROCESSOR_EVENTS_MAX, processorEventsTable } from './processor-events-view.js';

const OPERATOR = ['operator'] as const;
const LIST_ROWS = 200;

function adminDeps(deps: OperationDeps): GatewayAdminDeps {
  return {
    store: deps.store, sealer: deps.sealer, connectors: deps.connectors, environment: deps.config.environment,
    allow_private_urls: deps.config.limits.allow_private_urls, public_url: deps.public_url,
  };
}

function field(context: PageContext, name: string): string {
  return formText(context.request, name);
}

function notices(context: PageContext, known: Readonly<Record<string, string>>): Html | '' {
  return noticeLine((context.request.query as Record<string, unknown>).notice, known);
}

// Merchants ---------------------------------------------------------------------------------

async function merchantsPage(context: PageContext, extra: Html | null = null, problem: string | null = null, http_status = 200): Promise<unknown> {
  const after_raw = (context.request.query as Record<string, unknown>).after;
  const after = typeof after_raw === 'string' && after_raw.length <= 50 && textProblem(after_raw) === null ? after_raw : '';
  const rows = await context.deps.store.merchants.list(after, LIST_ROWS + 1);
  const shown = rows.slice(0, LIST_ROWS);
  return context.page('Merchants', '/backoffice/merchants', html`<h1>Merchants</h1>
${notices(context, { disabled: 'Merchant disabled: its API calls are now answered as an unknown merchant\'s.', enabled: 'Merchant enabled.' })}
${problemLine(problem)}${extra ?? ''}
<div class="scroll"><table><thead><tr><th>Merchant</th><th>State</th><th>Applications</th><th>Frontends</th><th>Gateways</th><th>Created (UTC)</th><th></th></tr></thead><tbody>
${shown.map((m) => html`<tr><td><a href="/backoffice/transactions?${new URLSearchParams({ merchant: m.merchant_id }).toString()}">${m.merchant_id}</a></td>
<td>${m.disabled_at_ms === null ? 'enabled' : `disabled since ${iso(m.disabled_at_ms)}`}</td><td>${m.application_count}</td><td>${m.frontend_count}</td><td>${m.gateway_count}</td>
<td>${iso(m.created_at_ms)}</td><td><form class="inline" method="post" action="/backoffice/merchants/${m.merchant_id}/${m.disabled_at_ms === null ? 'disable' : 'enable'}">${csrfField(context.csrf)}
<button class="${m.disabled_at_ms === null ? 'danger' : 'secondary'}" type="submit">${m.disabled_at_ms === null ? 'Disable' : 'Enable'} ${m.merchant_id}</button></form></td></tr>`)}
</tbody></table></div>
${rows.length > LIST_ROWS ? html`<div class="pager"><a rel="next" href="/backoffice/merchants?${new URLSearchParams({ after: shown[shown.length - 1]!.merchant_id }).toString()}">Next</a></div>` : ''}
<h2>Create a merchant</h2><form class="fields card" method="post" action="/backoffice/merchants">${csrfField(context.csrf)}
<label for="m-id">Merchant ID (empty: generated)<input id="m-id" name="merchant_id" maxlength="50"></label>
<label for="m-frontend">Frontend (empty: generated)<input id="m-frontend" name="frontend" maxlength="50"></label>
<label for="m-currency">Base currency<input id="m-currency" name="currency" value="USD" maxlength="3"></label>
<button class="primary" type="submit">Create merchant</button></form>`, http_status);
}

function merchantStateAction(action: 'disable' | 'enable'): BackOfficeRoute {
  return {
    method: 'POST', url: `/merchants/:merchant_id/${action}`, roles: OPERATOR,
    async handle(context) {
      const { merchant_id } = context.request.params as { merchant_id: string };
      if (!(await setMerchantDisabled(context.deps, merchant_id, action === 'disable'))) return context.notFound(`merchant ${merchant_id}`);
      await recordAudit(context.deps, context.viewer, context.address, { action: `${action}_merchant`, target: merchant_id, merchant_id, outcome: 'done' });
      return context.redirect(`/backoffice/merchants?notice=${action}d`);
    },
  };
}

async function createMerchant(context: PageContext): Promise<unknown> {
  const optional = (name: string) => (field(context, name) === '' ? undefined : field(context, name));
  const outcome = await context.deps.merchants.create({
    merchant_id: optional('merchant_id'), frontend: optional('frontend'), currency: optional('currency')?.toUpperCase(),
  }, context.deps.clock.now_ms(), starterGateway(context.deps.config.environment));
  const audit = (outcome_text: 'done' | 'refused', target: string | null, detail: string | null) =>
    recordAudit(context.deps, context.viewer, context.address, { action: 'create_merchant', target, merchant_id: target, outcome: outcome_text, detail });
  switch (outcome.kind) {
    case 'created': {
      const m = outcome.merchant;
      await audit('done', m.merchant_id, null);
      // The secret is shown this once, on this answer (never cached: every back-office answer is no-store).
      return merchantsPage(context, html`<div class="notice ok" role="status"><p>Merchant ${m.merchant_id} created. Its secret is shown this once:</p>
<p class="secret" data-testid="new-secret">${m.secret}</p><dl><dt>Application key</dt><dd>${m.application_key}</dd><dt>Frontend</dt><dd>${m.frontend}</dd>
<dt>Currency</dt><dd>${m.currency}</dd><dt>Sandbox gateway</dt><dd>${m.gateway ?? 'none (live: add one under Gateways)'}</dd></dl></div>`);
    }
    case 'exists':
      await audit('refused', outcome.merchant_id, 'exists');
      return merchantsPage(context, null, `Merchant ID: ${outcome.merchant_id} exists already.`, 409);
    case 'invalid':
      await audit('refused', null, `invalid ${outcome.field}`);
      return merchantsPage(context, null, `${outcome.field}: expected ${outcome.reason}.`, 400);
  }
}

// Gateways ----------------------------------------------------------------------------------

function gatewayProblem(outcome: Exclude<GatewayOutcome, { kind: 'ok' }>): string {
  switch (outcome.kind) {
    case 'merchant_not_found': return 'Merchant ID: no such merchant.';
    case 'gateway_not_found': return 'No such gateway.';
    case 'unknown_connector': return `Connector: one of ${outcome.known.join(', ')}.`;
    case 'not_here': return `Connector: ${outcome.connector} does not take payments in this environment.`;
    case 'invalid': return `${outcome.field}: expected ${outcome.reason}.`;
  }
}

/** What a gateway is: the same on the list and on its own page; secret settings only named. */
function gatewayFacts(g: GatewayView): Html {
  return html`<dl><dt>Gateway</dt><dd>${g.gateway}</dd><dt>Merchant</dt><dd>${g.merchant_id}</dd><dt>Connector</dt><dd>${g.connector}</dd>
<dt>Currencies</dt><dd>${g.currencies.join(', ')}</dd><dt>State</dt><dd>${g.enabled ? 'enabled' : 'disabled'}</dd>
${Object.entries(g.settings).map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}
<dt>Secret settings</dt><dd>${g.secret_settings.length === 0 ? 'none' : `${g.secret_settings.join(', ')} (set; never shown)`}</dd>
${g.webhook_url === null ? '' : html`<dt>Webhook URL</dt><dd>${g.webhook_url}</dd>`}<dt>Updated (UTC)</dt><dd>${iso(g.updated_at_ms)}</dd></dl>`;
}

async function gatewaysPage(context: PageContext, problem: string | null = null, http_status = 200): Promise<unknown> {
  const deps = adminDeps(context.deps);
  const gateways = await listGatewayViews(deps, null);
  const definitions = deps.connectors.definitions().filter((d) => deps.connectors.runsHere(d.name));
  return context.page('Gateways', '/backoffice/gateways', html`<h1>Gateways</h1>
${notices(context, { created: 'Gateway created.', updated: 'Gateway settings replaced.', enabled: 'Gateway enabled.', disabled: 'Gateway disabled.' })}
${problemLine(problem)}
${gateways.map((g) => {
    const definition = deps.connectors.definition(g.connector);
    return html`<div class="card">${gatewayFacts(g)}
${g.webhook_url === null ? '' : html`<p><a href="/backoffice/gateways/${g.gateway}">Processor events</a>
· <a href="/backoffice/gateways/${g.gateway}?outcome=unmatched">unmatched ones</a></p>`}
<form class="inline" method="post" action="/backoffice/gateways/${g.gateway}/${g.enabled ? 'disable' : 'enable'}">${csrfField(context.csrf)}
<button class="${g.enabled ? 'danger' : 'secondary'}" type="submit">${g.enabled ? 'Disable' : 'Enable'} ${g.gateway}</button></form>
${definition === null || definition.settings.length === 0 ? '' : html`<details><summary>Replace settings (credentials)</summary>
<form class="fields" method="post" action="/backoffice/gateways/${g.gateway}/settings">${csrfField(context.csrf)}
${definition.settings.map((s) => html`<label for="s-${g.gateway}-${s.name}">${s.name}${s.secret ? ' (secret: empty keeps it)' : ''}
<input id="s-${g.gateway}-${s.name}" name="setting_${s.name}" type="${s.secret ? 'password' : 'text'}" autocomplete="off" value="${s.secret ? '' : g.settings[s.name] ?? ''}"></label>`)}
<button class="primary" type="submit">Replace settings</button></form></details>`}</div>`;
  })}
<h2>Add a gateway</h2>${definitions.map((d) => html`<form class="fields card" method="post" action="/backoffice/gateways">${csrfField(context.csrf)}
<input type="hidden" name="connector" value="${d.name}"><strong>${d.name}</strong>
<label for="g-${d.name}-merchant">Merchant ID<input id="g-${d.name}-merchant" name="merchant_id" required maxlength="50"></label>
<label for="g-${d.name}-currencies">Currencies (comma-separated)<input id="g-${d.name}-currencies" name="currencies" value="${(d.default_currencies ?? []).join(',')}"></label>
${d.settings.map((s) => html`<label for="g-${d.name}-${s.name}">${s.name}${s.required ? '' : ' (optional)'}
<input id="g-${d.name}-${s.name}" name="setting_${s.name}" type="${s.secret ? 'password' : 'text'}" autocomplete="off" value="${s.secret ? '' : s.default ?? ''}"></label>`)}
<button class="primary" type="submit">Add ${d.name} gateway</button></form>`)}`, http_status);
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
  const shown = await showGateway(adminDeps(context.deps), gateway_id);
  if (shown.kind !== 'ok') return context.notFound(`gateway ${gateway_id}`);
  const g = shown.gateway;
  const filter = outcomeFilter((context.request.query as Record<string, unknown>).outcome);
  const chosen = filter.ok ? filter.outcome : null;
  const events = filter.ok ? await context.deps.store.merchants.listGatewayProcessorEvents(g.gateway, chosen, PROCESSOR_EVENTS_MAX) : [];
  const none = g.webhook_url === null ? `The ${g.connector} connector takes no webhooks.`
    : chosen === null ? 'No webhook event has come for this gateway.' : `No ${chosen} webhook event has come for this gateway.`;
  return context.page(`Gateway ${g.gateway}`, '/backoffice/gateways', html`<h1>Gateway ${g.gateway}</h1>
<div class="card">${gatewayFacts(g)}</div>
<h2>Processor events</h2>
${problemLine(filter.ok ? null : `Outcome: expected one of ${PROCESSOR_EVENT_OUTCOMES.join(', ')}.`)}
<form class="fields card" method="get" action="/backoffice/gateways/${g.gateway}"><label for="e-outcome">Outcome<select id="e-outcome" name="outcome">
<option value="">any</option>${PROCESSOR_EVENT_OUTCOMES.map((o) => html`<option value="${o}"${chosen === o ? html` selected` : ''}>${o}</option>`)}</select></label>
<button class="primary" type="submit">Show</button></form>
${filter.ok ? processorEventsTable(events, 'gateway', context.viewer, none) : ''}`, filter.ok ? 200 : 400);
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
  const outcome = await createGateway(adminDeps(context.deps), {
    merchant_id: field(context, 'merchant_id'), connector: field(context, 'connector'),
    currencies: currencies === '' ? null : currencies.split(','), settings: settingsOf(context),
  }, context.deps.clock.now_ms());
  await recordAudit(context.deps, context.viewer, context.address, {
    action: 'create_gateway', target: outcome.kind === 'ok' ? outcome.gateway.gateway : null, merchant_id: field(context, 'merchant_id') || null,
    outcome: outcome.kind === 'ok' ? 'done' : 'refused', detail: outcome.kind === 'ok' ? field(context, 'connector') : gatewayProblem(outcome),
  });
  if (outcome.kind !== 'ok') return gatewaysPage(context, gatewayProblem(outcome), outcome.kind === 'merchant_not_found' ? 404 : 400);
  context.deps.merchants.invalidate();
  return context.redirect('/backoffice/gateways?notice=created');
}

function gatewayAction(action: 'settings' | 'enable' | 'disable'): BackOfficeRoute {
  return {
    method: 'POST', url: `/gateways/:gateway_id/${action}`, roles: OPERATOR,
    async handle(context) {
      const { gateway_id } = context.request.params as { gateway_id: string };
      const now_ms = context.deps.clock.now_ms();
      const deps = adminDeps(context.deps);
      const outcome = action === 'settings'
        ? await replaceGatewaySettings(deps, gateway_id, settingsOf(context), now_ms)
        : await setGatewayEnabled(deps, gateway_id, action === 'enable', now_ms);
      if (outcome.kind === 'gateway_not_found') return context.notFound(`gateway ${gateway_id}`);
      await recordAudit(context.deps, context.viewer, context.address, {
        action: action === 'settings' ? 'replace_gateway_settings' : `${action}_gateway`, target: gateway_id,
        merchant_id: outcome.kind === 'ok' ? outcome.gateway.merchant_id : null,
        // Which settings changed, never their values.
        outcome: outcome.kind === 'ok' ? 'done' : 'refused', detail: action === 'settings' ? `settings: ${Object.keys(settingsOf(context)).join(', ') || 'none'}` : null,
      });
      if (outcome.kind !== 'ok') return gatewaysPage(context, gatewayProblem(outcome), 400);
      context.deps.merchants.invalidate();
      return context.redirect(`/backoffice/gateways?notice=${action === 'settings' ? 'updated' : `${action}d`}`);
    },
  };
}

// Users -------------------------------------------------------------------------------------

async function usersPage(context: PageContext, problem: string | null = null, http_status = 200): Promise<unknown> {
  const users = await context.deps.store.backoffice.listUsers(null, LIST_ROWS);
  return context.page('Users', '/backoffice/users', html`<h1>Users</h1>
${notices(context, { created: 'User created.', disabled: 'User disabled: their sessions have ended.', enabled: 'User enabled.' })}${problemLine(problem)}
<div class="scroll"><table><thead><tr><th>E-mail</th><th>Role</th><th>Merchant</th><th>State</th><th>Created (UTC)</th><th></th></tr></thead><tbody>
${users.map((u) => html`<tr><td>${u.email}</td><td>${u.role}</td><td>${u.merchant_id ?? ''}</td><td>${u.disabled_at_ms === null ? 'active' : 'disabled'}</td>
<td>${iso(u.created_at_ms)}</td><td>${u.user_id === context.viewer.user_id ? html`<span class="muted">you</span>` : html`<form class="inline" method="post" action="/backoffice/users/${u.user_id}/${u.disabled_at_ms === null ? 'disable' : 'enable'}">${csrfField(context.csrf)}
<button class="secondary" type="submit">${u.disabled_at_ms === null ? 'Disable' : 'Enable'} ${u.email}</button></form>`}</td></tr>`)}
</tbody></table></div>
<h2>Create a user</h2><form class="fields card" method="post" action="/backoffice/users">${csrfField(context.csrf)}
<label for="u-email">E-mail<input id="u-email" name="email" type="email" required maxlength="254" autocomplete="off"></label>
<label for="u-password">Password (at least ${PASSWORD_MIN_CHARS} characters)<input id="u-password" name="password" type="password" required minlength="${PASSWORD_MIN_CHARS}" autocomplete="new-password"></label>
<label for="u-role">Role<select id="u-role" name="role"><option value="merchant">merchant</option><option value="operator">operator</option></select></label>
<label for="u-merchant">Merchant ID (merchant users)<input id="u-merchant" name="merchant_id" maxlength="50"></label>
<button class="primary" type="submit">Create user</button></form>`, http_status);
}

async function createUserAction(context: PageContext): Promise<unknown> {
  const password = formValue(context.request, 'password');
  const merchant_id = field(context, 'merchant_id');
  const outcome = await createUser(context.deps, {
    email: field(context, 'email'), password, role: field(context, 'role'), merchant_id: merchant_id === '' ? null : merchant_id,
  });
  await recordAudit(context.deps, context.viewer, context.address, {
    action: 'create_user', target: field(context, 'email') || null, merchant_id: merchant_id || null,
    outcome: outcome.kind === 'created' ? 'done' : 'refused', detail: outcome.kind === 'created' ? `role ${outcome.user.role}` : outcome.kind === 'invalid' ? `invalid ${outcome.field}` : outcome.kind,
  });
  switch (outcome.kind) {
    case 'created': return context.redirect('/backoffice/users?notice=created');
    case 'exists': return usersPage(context, 'E-mail: a user with this e-mail exists already.', 409);
    case 'merchant_not_found': return usersPage(context, 'Merchant ID: no such merchant.', 400);
    case 'invalid': return usersPage(context, `${outcome.field === 'merchant_id' ? 'Merchant ID' : outcome.field === 'email' ? 'E-mail' : outcome.field === 'password' ? 'Password' : 'Role'}: expected ${outcome.reason}.`, 400);
  }
}

function userStateAction(action: 'disable' | 'enable'): BackOfficeRoute {
  return {
    method: 'POST', url: `/users/:user_id/${action}`, roles: OPERATOR,
    async handle(context) {
      const { user_id } = context.request.params as { user_id: string };
      const user = await context.deps.store.backoffice.getUser(user_id);
      if (user === null) return context.notFound(`user ${user_id}`);
      if (user.user_id === context.viewer.user_id) return usersPage(context, 'You cannot disable yourself: ask another operator.', 409);
      await context.deps.store.backoffice.setUserDisabled(user_id, action === 'disable' ? context.deps.clock.now_ms() : null);
      await recordAudit(context.deps, context.viewer, context.address, {
        action: `${action}_user`, target: user.email, merchant_id: user.merchant_id, outcome: 'done',
      });
      return context.redirect(`/backoffice/users?notice=${action}d`);
    },
  };
}

// Audit log ---------------------------------------------------------------------------------

async function auditPage(context: PageContext): Promise<unknown> {
  const before_raw = (context.request.query as Record<string, string | undefined>).before;
  const before = before_raw !== undefined && /^[1-9][0-9]{0,14}$/.test(before_raw) ? Number(before_raw) : null;
  const rows = await context.deps.store.backoffice.listAudit(null, before, LIST_ROWS + 1);
  const shown = rows.slice(0, LIST_ROWS);
  return context.page('Audit log', '/backoffice/audit', html`<h1>Audit log</h1>
<div class="scroll"><table><thead><tr><th>At (UTC)</th><th>Who</th><th>Role</th><th>Action</th><th>On</th><th>Merchant</th><th>Outcome</th><th>From</th><th>Detail</th></tr></thead><tbody>
${shown.map((a) => html`<tr><td>${iso(a.at_ms)}</td><td>${a.email}</td><td>${a.role ?? ''}</td><td>${a.action}</td><td>${a.target ?? ''}</td><td>${a.merchant_id ?? ''}</td>
<td>${a.outcome}</td><td>${a.address}</td><td class="wrap">${a.detail ?? ''}</td></tr>`)}</tbody></table></div>
${rows.length > LIST_ROWS ? html`<div class="pager"><a rel="next" href="/backoffice/audit?before=${shown[shown.length - 1]!.id}">Older</a></div>` : ''}`);
}

export function adminRoutes(): BackOfficeRoute[] {
  return [
    { method: 'GET', url: '/merchants', roles: OPERATOR, handle: (context) => merchantsPage(context) },
    { method: 'POST', url: '/merchants', roles: OPERATOR, handle: createMerchant },
    merchantStateAction('disable'), merchantStateAction('enable'),
    { method: 'GET', url: '/gateways', roles: OPERATOR, handle: (context) => gatewaysPage(context) },
    { method: 'GET', url: '/gateways/:gateway_id', roles: OPERATOR, handle: gatewayPage },
    { method: 'POST', url: '/gateways', roles: OPERATOR, handle: createGatewayAction },
    gatewayAction('settings'), gatewayAction('enable'), gatewayAction('disable'),
    { method: 'GET', url: '/users', roles: OPERATOR, handle: (context) => usersPage(context) },
    { method: 'POST', url: '/users', roles: OPERATOR, handle: createUserAction },
    userStateAction('disable'), userStateAction('enable'),
    { method: 'GET', url: '/audit', roles: OPERATOR, handle: auditPage },
  ];
}
