// The operators' pages of the back office (docs/backoffice.md): merchants (the list, a page at a
// time, with the create form and the secret of one just created), gateways (one card per gateway,
// named by its label, with its rename and settings forms, one form per connector to add one;
// secret settings are written, never shown again), one gateway with its id to copy and its
// processor's latest webhook events filtered by outcome, users (the list and the create form) and
// the audit log.
import { PASSWORD_MIN_CHARS } from '../../domain/backoffice-access.js';
import { GATEWAY_LABEL_MAX_CHARS } from '../../domain/merchants.js';
import { type Html, html } from '../html.js';
import { iso } from './format.js';
import { csrfField, filtersBox, noticeLine, problemLine } from './layout.js';
import { dataTable } from './table.js';
import { processorEventsTable } from './processor-events.js';
import type {
  AuditLine,
  GatewayFormShown,
  GatewayLabels,
  GatewayShown,
  MerchantLine,
  PageParts,
  ProcessorEventShown,
  UserLine,
} from './records.js';

// Merchants ---------------------------------------------------------------------------------

/** `next_after`: the merchant_id the next page starts after (null: this is the last page); `extra`: a notice above the list. */
export function merchantsBody(
  parts: PageParts,
  shown: readonly MerchantLine[],
  next_after: string | null,
  extra: Html | null,
  problem: string | null,
): Html {
  return html`<h1>Merchants</h1>
${noticeLine(parts.notice, { disabled: "Merchant disabled: its API calls are now answered as an unknown merchant's.", enabled: 'Merchant enabled.' })}
${problemLine(problem)}${extra ?? ''}
${dataTable(
  [
    { label: 'Merchant', wrap: true },
    { label: 'State', wrap: true },
    'Applications',
    'Frontends',
    'Gateways',
    'Created (UTC)',
    { label: 'Action', wrap: true },
  ],
  shown.map((m) => [
    html`<a href="/backoffice/transactions?${new URLSearchParams({ merchant: m.merchant_id }).toString()}">${m.merchant_id}</a>`,
    m.disabled_at_ms === null ? 'enabled' : `disabled since ${iso(m.disabled_at_ms)}`,
    m.application_count,
    m.frontend_count,
    m.gateway_count,
    iso(m.created_at_ms),
    // The first step only: the next page says what disabling (or enabling) does, and asks.
    html`<form class="inline" method="post" action="/backoffice/merchants/${m.merchant_id}/${m.disabled_at_ms === null ? 'disable' : 'enable'}">${csrfField(parts.csrf)}
<button class="${m.disabled_at_ms === null ? 'danger' : 'secondary'}" type="submit">${m.disabled_at_ms === null ? 'Disable' : 'Enable'} ${m.merchant_id}…</button></form>`,
  ]),
  'Merchants',
)}
${next_after !== null ? html`<div class="pager"><a rel="next" href="/backoffice/merchants?${new URLSearchParams({ after: next_after }).toString()}">Next</a></div>` : ''}
<h2>Create a merchant</h2><form class="fields card" method="post" action="/backoffice/merchants">${csrfField(parts.csrf)}
<label for="m-id">Merchant ID (empty: generated)<input id="m-id" name="merchant_id" maxlength="50"></label>
<label for="m-frontend">Frontend (empty: generated)<input id="m-frontend" name="frontend" maxlength="50"></label>
<label for="m-currency">Base currency<input id="m-currency" name="currency" value="USD" maxlength="3"></label>
<button class="primary" type="submit">Create merchant</button></form>`;
}

/** A merchant just created; its secret is shown this once, on this answer (never cached: every back-office answer is no-store). */
export function merchantCreatedNotice(m: {
  readonly merchant_id: string;
  readonly secret: string;
  readonly application_key: string;
  readonly frontend: string;
  readonly currency: string;
  readonly gateway: string | null;
}): Html {
  return html`<div class="notice ok" role="status"><p>Merchant ${m.merchant_id} created. Its secret is shown this once:</p>
<p class="secret" data-testid="new-secret">${m.secret}</p><dl><dt>Application key</dt><dd>${m.application_key}</dd><dt>Frontend</dt><dd>${m.frontend}</dd>
<dt>Currency</dt><dd>${m.currency}</dd><dt>Sandbox gateway</dt><dd>${m.gateway ?? 'none (live: add one under Gateways)'}</dd></dl></div>`;
}

// Gateways ----------------------------------------------------------------------------------

/**
 * What a gateway is: the same on the list and on its own page; secret settings only named. Its
 * id only on its own page (`with_id`), where one click selects the whole of it to copy.
 */
function gatewayFacts(g: GatewayShown, with_id: boolean): Html {
  return html`<dl><dt>Label</dt><dd>${g.label}</dd>${with_id ? html`<dt>Gateway ID</dt><dd><code class="copy" data-testid="gateway-id">${g.gateway}</code></dd>` : ''}
<dt>Merchant</dt><dd>${g.merchant_id}</dd><dt>Connector</dt><dd>${g.connector}</dd>
<dt>Currencies</dt><dd>${g.currencies.join(', ')}</dd><dt>State</dt><dd>${g.enabled ? 'enabled' : 'disabled'}</dd>
${Object.entries(g.settings).map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}
<dt>Secret settings</dt><dd>${g.secret_settings.length === 0 ? 'none' : `${g.secret_settings.join(', ')} (set; never shown)`}</dd>
${g.webhook_url === null ? '' : html`<dt>Webhook URL</dt><dd>${g.webhook_url}</dd>`}<dt>Updated (UTC)</dt><dd>${iso(g.updated_at_ms)}</dd></dl>`;
}

/** The form that gives a gateway a new label. */
function renameForm(parts: PageParts, g: GatewayShown): Html {
  return html`<details><summary>Rename</summary><form class="fields" method="post" action="/backoffice/gateways/${g.gateway}/rename">${csrfField(parts.csrf)}
<label for="l-${g.gateway}">Label (1 to ${GATEWAY_LABEL_MAX_CHARS} characters)<input id="l-${g.gateway}" name="label" required maxlength="${GATEWAY_LABEL_MAX_CHARS}" value="${g.label}"></label>
<button class="primary" type="submit">Rename ${g.label}</button></form></details>`;
}

export function gatewaysBody(
  parts: PageParts,
  gateways: readonly { readonly gateway: GatewayShown; readonly form: GatewayFormShown | null }[],
  new_gateway_forms: readonly GatewayFormShown[],
  problem: string | null,
): Html {
  return html`<h1>Gateways</h1>
${noticeLine(parts.notice, {
  created: 'Gateway created.',
  updated: 'Gateway settings replaced.',
  enabled: 'Gateway enabled.',
  disabled: 'Gateway disabled.',
  renamed: 'Gateway renamed.',
})}
${problemLine(problem)}
${gateways.map(({ gateway: g, form: definition }) => {
  return html`<div class="card"><h2 class="gateway-name"><a href="/backoffice/gateways/${g.gateway}">${g.label}</a></h2>${gatewayFacts(g, false)}
${
  g.webhook_url === null
    ? ''
    : html`<p><a href="/backoffice/gateways/${g.gateway}">Processor events</a>
· <a href="/backoffice/gateways/${g.gateway}?outcome=unmatched">unmatched ones</a></p>`
}
<form class="inline" method="post" action="/backoffice/gateways/${g.gateway}/${g.enabled ? 'disable' : 'enable'}">${csrfField(parts.csrf)}
<button class="${g.enabled ? 'danger' : 'secondary'}" type="submit">${g.enabled ? 'Disable' : 'Enable'} ${g.label}…</button></form>
${renameForm(parts, g)}
${
  definition === null || definition.settings.length === 0
    ? ''
    : html`<details><summary>Replace settings (credentials)</summary>
<form class="fields" method="post" action="/backoffice/gateways/${g.gateway}/settings">${csrfField(parts.csrf)}
${definition.settings.map(
  (s) => html`<label for="s-${g.gateway}-${s.name}">${s.name}${s.secret ? ' (secret: empty keeps it)' : ''}
<input id="s-${g.gateway}-${s.name}" name="setting_${s.name}" type="${s.secret ? 'password' : 'text'}" autocomplete="off" value="${s.secret ? '' : (g.settings[s.name] ?? '')}"></label>`,
)}
<button class="primary" type="submit">Replace settings</button></form></details>`
}</div>`;
})}
<h2>Add a gateway</h2>${new_gateway_forms.map(
    (d) => html`<form class="fields card" method="post" action="/backoffice/gateways">${csrfField(parts.csrf)}
<input type="hidden" name="connector" value="${d.name}"><strong>${d.name}</strong>
<label for="g-${d.name}-merchant">Merchant ID<input id="g-${d.name}-merchant" name="merchant_id" required maxlength="50"></label>
<label for="g-${d.name}-label">Label (empty: ${d.name} and the id's first 8)<input id="g-${d.name}-label" name="label" maxlength="${GATEWAY_LABEL_MAX_CHARS}"></label>
<label for="g-${d.name}-currencies">Currencies (comma-separated)<input id="g-${d.name}-currencies" name="currencies" value="${(d.default_currencies ?? []).join(',')}"></label>
${d.settings.map(
  (s) => html`<label for="g-${d.name}-${s.name}">${s.name}${s.required ? '' : ' (optional)'}
<input id="g-${d.name}-${s.name}" name="setting_${s.name}" type="${s.secret ? 'password' : 'text'}" autocomplete="off" value="${s.secret ? '' : (s.default ?? '')}"></label>`,
)}
<button class="primary" type="submit">Add ${d.name} gateway</button></form>`,
  )}`;
}

/** The ?outcome= filter of a gateway's page: the outcome chosen (null: any), or refused (`valid` false). */
export interface OutcomeFilterShown {
  readonly valid: boolean;
  readonly chosen: string | null;
  readonly outcomes: readonly string[];
}

/** One gateway: what it is, and its processor's latest webhook events with what each did. */
export function gatewayBody(
  parts: PageParts,
  g: GatewayShown,
  filter: OutcomeFilterShown,
  events: readonly ProcessorEventShown[],
  events_max: number,
): Html {
  const { chosen } = filter;
  const none =
    g.webhook_url === null
      ? `The ${g.connector} connector takes no webhooks.`
      : chosen === null
        ? 'No webhook event has come for this gateway.'
        : `No ${chosen} webhook event has come for this gateway.`;
  return html`<h1>Gateway ${g.label}</h1>
<div class="card">${gatewayFacts(g, true)}</div>
<h2>Processor events</h2>
${problemLine(filter.valid ? null : `Outcome: expected one of ${filter.outcomes.join(', ')}.`)}
${filtersBox(
  html`<form class="fields card" method="get" action="/backoffice/gateways/${g.gateway}"><label for="e-outcome">Outcome<select id="e-outcome" name="outcome">
<option value="">any</option>${filter.outcomes.map((o) => html`<option value="${o}"${chosen === o ? html` selected` : ''}>${o}</option>`)}</select></label>
<button class="primary" type="submit">Show</button></form>`,
  chosen === null ? 0 : 1,
  !filter.valid,
)}
${filter.valid ? processorEventsTable(events, 'gateway', parts.viewer, none, events_max) : ''}`;
}

// Users -------------------------------------------------------------------------------------

export function usersBody(parts: PageParts, users: readonly UserLine[], problem: string | null): Html {
  return html`<h1>Users</h1>
${noticeLine(parts.notice, { created: 'User created.', disabled: 'User disabled: their sessions have ended.', enabled: 'User enabled.' })}${problemLine(problem)}
${dataTable(
  [{ label: 'E-mail', wrap: true }, 'Role', { label: 'Merchant', wrap: true }, 'State', 'Created (UTC)', { label: 'Action', wrap: true }],
  users.map((u) => [
    u.email,
    u.role,
    u.merchant_id,
    u.disabled_at_ms === null ? 'active' : 'disabled',
    iso(u.created_at_ms),
    u.user_id === parts.viewer.user_id
      ? html`<span class="muted">you</span>`
      : html`<form class="inline" method="post" action="/backoffice/users/${u.user_id}/${u.disabled_at_ms === null ? 'disable' : 'enable'}">${csrfField(parts.csrf)}
<button class="${u.disabled_at_ms === null ? 'danger' : 'secondary'}" type="submit">${u.disabled_at_ms === null ? 'Disable' : 'Enable'} ${u.email}…</button></form>`,
  ]),
  'Users',
)}
<h2>Create a user</h2><form class="fields card" method="post" action="/backoffice/users">${csrfField(parts.csrf)}
<label for="u-email">E-mail<input id="u-email" name="email" type="email" required maxlength="254" autocomplete="off"></label>
<label for="u-password">Password (at least ${PASSWORD_MIN_CHARS} characters)<input id="u-password" name="password" type="password" required minlength="${PASSWORD_MIN_CHARS}" autocomplete="new-password"></label>
<label for="u-role">Role<select id="u-role" name="role"><option value="merchant">merchant</option><option value="operator">operator</option></select></label>
<label for="u-merchant">Merchant ID (merchant users)<input id="u-merchant" name="merchant_id" maxlength="50"></label>
<button class="primary" type="submit">Create user</button></form>`;
}

// Audit log ---------------------------------------------------------------------------------

/** An audit line's target: a gateway (the target of a gateway's action) by its label, linking to its page; anything else as written. */
function auditTarget(a: AuditLine, gateway_labels: GatewayLabels): Html | string | null {
  if (a.target === null || !/_gateway(?:_settings)?$/.test(a.action)) return a.target;
  const label = gateway_labels.get(a.target);
  return label === undefined ? a.target : html`<a href="/backoffice/gateways/${a.target}">${label}</a>`;
}

/** `older_before`: the id older lines start below (null: this is the last page); `gateway_labels`: of the gateways the lines name. */
export function auditBody(shown: readonly AuditLine[], older_before: number | null, gateway_labels: GatewayLabels): Html {
  return html`<h1>Audit log</h1>
${dataTable(
  [
    'At (UTC)',
    { label: 'Who', wrap: true },
    'Role',
    'Action',
    { label: 'On', wrap: true },
    { label: 'Merchant', wrap: true },
    'Outcome',
    'From',
    { label: 'Detail', wrap: true },
  ],
  shown.map((a) => [
    iso(a.at_ms),
    a.email,
    a.role,
    a.action,
    auditTarget(a, gateway_labels),
    a.merchant_id,
    a.outcome,
    a.address,
    a.detail,
  ]),
  'Audit log',
)}
${older_before !== null ? html`<div class="pager"><a rel="next" href="/backoffice/audit?before=${older_before}">Older</a></div>` : ''}`;
}
