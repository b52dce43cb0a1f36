// The operator API for gateways (decisions.md §13, docs/connectors.md), behind
// PAYGATE_ADMIN_TOKEN: create a merchant's gateway for a connector with its settings, list and
// show them (never a secret: only which secret settings are set), disable or enable one, rename
// it (its label), hold its payouts for approval (docs/payouts.md), and replace its settings (new
// credentials). The same operations as `paygate gateway ...` (operations/gateways.ts).
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { OperationDeps } from '../../operations/deps.js';
import {
  createGateway,
  gatewayAdminDeps,
  type GatewayOutcome,
  type GatewayView,
  listGatewayViews,
  renameGateway,
  replaceGatewaySettings,
  setGatewayEnabled,
  setGatewayHoldPayouts,
  showGateway,
} from '../../operations/gateways.js';
import { requireAdmin } from '../admin-auth.js';
import { Status } from '../envelope.js';
import { isPlainObject, type PlainRoute } from '../route.js';

const GATEWAY_ID = /^[0-9a-f]{32}$/;
const MERCHANT_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,49}$/;
const CONNECTOR = /^[a-z][a-z0-9_-]{0,31}$/;
/** Longer than any label may be (64 characters), so the operation's check names the limit. */
const LABEL_MAX_UNITS = 256;
/** Settings in one request, at most (every connector takes far fewer). */
const SETTINGS_MAX = 32;
const LIST_MAX = 1_000;

const SettingsSchema = Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 2048 }), {
  description: "the connector's settings by name (docs/connectors.md)",
});

const GatewayViewSchema = Type.Object({
  status: Type.Integer(),
  description: Type.String(),
  gateway: Type.String(),
  gateway_id: Type.String(),
  label: Type.String({ description: 'the name operators read instead of the id, 1 to 64 characters' }),
  merchant_id: Type.String(),
  connector: Type.String(),
  processor: Type.String(),
  currencies: Type.Array(Type.String()),
  enabled: Type.Boolean(),
  mit_enabled: Type.Boolean(),
  hold_payouts: Type.Boolean(),
  settings: Type.Record(Type.String(), Type.String()),
  secret_settings: Type.Array(Type.String()),
  webhook_url: Type.Union([Type.String(), Type.Null()]),
  usable_here: Type.Boolean(),
  created_at_ms: Type.Integer(),
  updated_at_ms: Type.Integer(),
});

/** A gateway's view as answered (gateway_id and processor as the payout API named them before). */
function viewBody(view: GatewayView, description: string): Record<string, unknown> {
  return { status: Status.OK, description, ...view, gateway_id: view.gateway, processor: view.connector };
}

function badRequest(response: FastifyReply, description: string): FastifyReply {
  return response.code(400).send({ status: Status.INVALID_FIELD, description });
}

function notFound(response: FastifyReply): FastifyReply {
  return response.code(404).send({ status: Status.NO_GATEWAY, description: 'Gateway not found' });
}

/** The answer to a create, change or show; a change also drops this instance's copies of the merchants. */
function answer(deps: OperationDeps, response: FastifyReply, outcome: GatewayOutcome, description: string, code = 200): FastifyReply {
  switch (outcome.kind) {
    case 'ok':
      deps.merchants.invalidate();
      return response.code(code).send(viewBody(outcome.gateway, description));
    case 'gateway_not_found':
      return notFound(response);
    case 'merchant_not_found':
      return response.code(404).send({ status: Status.AUTHENTICATION_FAILED, description: 'Merchant not found' });
    case 'unknown_connector':
      return badRequest(response, `Invalid field: connector (expected one of ${outcome.known.join(', ')})`);
    case 'not_here':
      return badRequest(
        response,
        `Invalid field: connector (${outcome.connector} gateways take no payments in ${deps.config.environment} mode)`,
      );
    case 'invalid':
      return badRequest(response, `Invalid field: ${outcome.field} (${outcome.reason})`);
  }
}

/** A label as sent: text (checked by the operation), absent, or what is wrong with it. */
function labelOf(value: unknown): string | undefined | { readonly problem: string } {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length > LABEL_MAX_UNITS)
    return { problem: 'Invalid field: label (expected text of 1 to 64 characters)' };
  return value;
}

function settingsOf(value: unknown): Record<string, string> | string {
  if (value === undefined) return {};
  if (!isPlainObject(value)) return 'Invalid field: settings (expected an object of setting names and text values)';
  const entries = Object.entries(value);
  if (entries.length > SETTINGS_MAX) return `Invalid field: settings (at most ${SETTINGS_MAX})`;
  for (const [name, setting] of entries) {
    if (typeof setting !== 'string') return `Invalid field: settings.${name.slice(0, 64)} (expected text)`;
  }
  return value as Record<string, string>;
}

export function operatorGatewayRoutes(deps: OperationDeps): PlainRoute[] {
  const admin = gatewayAdminDeps(deps);
  return [
    {
      kind: 'plain',
      method: 'POST',
      url: '/operator/gateways',
      summary:
        'Create a merchant\'s gateway: {"merchant_id", "connector", "label", "currencies": [...], "settings": {...}} (Authorization: Bearer PAYGATE_ADMIN_TOKEN)',
      produces: 'application/json',
      body: Type.Object({
        merchant_id: Type.String({ maxLength: 50 }),
        connector: Type.String({ maxLength: 32 }),
        label: Type.Optional(Type.String({ maxLength: 64, description: 'default: "<connector> <first 8 of the id>"' })),
        currencies: Type.Optional(Type.Array(Type.String({ maxLength: 3 }))),
        settings: Type.Optional(SettingsSchema),
        mit_enabled: Type.Optional(Type.Boolean()),
        hold_payouts: Type.Optional(Type.Boolean()),
      }),
      response: GatewayViewSchema,
      async handle(request, response) {
        if (!requireAdmin(request, response, deps.config.admin_token)) return response;
        const body = request.body;
        if (!isPlainObject(body)) return badRequest(response, 'Body must be a JSON object');
        if (typeof body.merchant_id !== 'string' || !MERCHANT_ID.test(body.merchant_id))
          return badRequest(response, 'Invalid field: merchant_id (expected a merchant id)');
        if (typeof body.connector !== 'string' || !CONNECTOR.test(body.connector))
          return badRequest(response, 'Invalid field: connector (expected a connector name such as checkout)');
        const currencies = body.currencies;
        if (
          currencies !== undefined &&
          (!Array.isArray(currencies) ||
            currencies.length > 100 ||
            !currencies.every((c) => typeof c === 'string' && /^[A-Za-z]{3}$/.test(c)))
        ) {
          return badRequest(response, 'Invalid field: currencies (expected a list of ISO 4217 codes)');
        }
        for (const flag of ['mit_enabled', 'hold_payouts'] as const) {
          if (body[flag] !== undefined && typeof body[flag] !== 'boolean')
            return badRequest(response, `Invalid field: ${flag} (expected true or false)`);
        }
        const label = labelOf(body.label);
        if (typeof label === 'object') return badRequest(response, label.problem);
        const settings = settingsOf(body.settings);
        if (typeof settings === 'string') return badRequest(response, settings);
        const outcome = await createGateway(
          admin,
          {
            merchant_id: body.merchant_id,
            connector: body.connector,
            currencies: (currencies as string[] | undefined) ?? null,
            settings,
            mit_enabled: body.mit_enabled as boolean | undefined,
            hold_payouts: body.hold_payouts as boolean | undefined,
            label,
          },
          Date.now(),
        );
        return answer(deps, response, outcome, 'Gateway created', 201);
      },
    },
    {
      kind: 'plain',
      method: 'GET',
      url: '/operator/gateways',
      summary: "List gateways, all or one merchant's (?merchant_id=...), never their secrets (Authorization: Bearer PAYGATE_ADMIN_TOKEN)",
      produces: 'application/json',
      async handle(request, response) {
        if (!requireAdmin(request, response, deps.config.admin_token)) return response;
        const query = isPlainObject(request.query) ? request.query : {};
        const merchant_id = query.merchant_id;
        if (merchant_id !== undefined && (typeof merchant_id !== 'string' || !MERCHANT_ID.test(merchant_id))) {
          return badRequest(response, 'Invalid field: merchant_id (expected a merchant id)');
        }
        const views = await listGatewayViews(admin, (merchant_id as string | undefined) ?? null);
        return response.send({
          status: Status.OK,
          description: 'Gateways',
          gateways: views.slice(0, LIST_MAX).map((v) => ({ ...v, gateway_id: v.gateway, processor: v.connector })),
          more: views.length > LIST_MAX,
        });
      },
    },
    {
      kind: 'plain',
      method: 'GET',
      url: '/operator/gateways/:gateway_id',
      summary:
        'Show a gateway: connector, currencies, settings that are not secret, the names of those that are, webhook_url (Authorization: Bearer PAYGATE_ADMIN_TOKEN)',
      produces: 'application/json',
      response: GatewayViewSchema,
      async handle(request, response) {
        if (!requireAdmin(request, response, deps.config.admin_token)) return response;
        const { gateway_id } = request.params as { gateway_id: string };
        if (!GATEWAY_ID.test(gateway_id)) return notFound(response);
        const outcome = await showGateway(admin, gateway_id);
        return outcome.kind === 'ok' ? response.send(viewBody(outcome.gateway, 'Gateway found')) : notFound(response);
      },
    },
    {
      kind: 'plain',
      method: 'POST',
      url: '/operator/gateways/:gateway_id',
      summary:
        'Disable or enable a gateway, hold its payouts for approval or not, rename it: {"enabled": true|false, "hold_payouts": true|false, "label": "..."} (Authorization: Bearer PAYGATE_ADMIN_TOKEN)',
      produces: 'application/json',
      body: Type.Object({
        enabled: Type.Optional(Type.Boolean()),
        hold_payouts: Type.Optional(Type.Boolean()),
        label: Type.Optional(Type.String({ maxLength: 64, description: 'a new label, 1 to 64 characters' })),
      }),
      response: GatewayViewSchema,
      async handle(request, response) {
        if (!requireAdmin(request, response, deps.config.admin_token)) return response;
        const { gateway_id } = request.params as { gateway_id: string };
        const body = request.body;
        if (!isPlainObject(body) || (body.enabled === undefined && body.hold_payouts === undefined && body.label === undefined)) {
          return badRequest(response, 'Invalid field: hold_payouts (expected true or false; or enabled, or label)');
        }
        const label = labelOf(body.label);
        if (typeof label === 'object') return badRequest(response, label.problem);
        for (const flag of ['enabled', 'hold_payouts'] as const) {
          if (body[flag] !== undefined && typeof body[flag] !== 'boolean')
            return badRequest(response, `Invalid field: ${flag} (expected true or false)`);
        }
        if (!GATEWAY_ID.test(gateway_id)) return notFound(response);
        const now_ms = Date.now();
        let outcome: GatewayOutcome = await showGateway(admin, gateway_id);
        if (outcome.kind !== 'ok') return notFound(response);
        // The label first: a refused one changes nothing else of the request.
        if (label !== undefined) {
          outcome = await renameGateway(admin, gateway_id, label);
          if (outcome.kind !== 'ok') return answer(deps, response, outcome, '');
        }
        if (typeof body.hold_payouts === 'boolean') {
          if (!(await setGatewayHoldPayouts(deps, gateway_id, body.hold_payouts))) return notFound(response);
          outcome = await showGateway(admin, gateway_id);
        }
        if (typeof body.enabled === 'boolean') outcome = await setGatewayEnabled(admin, gateway_id, body.enabled, now_ms);
        const description =
          typeof body.enabled === 'boolean'
            ? body.enabled
              ? 'Gateway enabled'
              : 'Gateway disabled: it takes no new payments'
            : typeof body.hold_payouts === 'boolean'
              ? body.hold_payouts
                ? 'Payouts through this gateway now wait for approval'
                : 'Payouts through this gateway are processed at once'
              : 'Gateway renamed';
        return answer(deps, response, outcome, description);
      },
    },
    {
      kind: 'plain',
      method: 'PUT',
      url: '/operator/gateways/:gateway_id/settings',
      summary:
        'Replace some of a gateway\'s settings (new credentials): {"settings": {...}}; the others stay (Authorization: Bearer PAYGATE_ADMIN_TOKEN)',
      produces: 'application/json',
      body: Type.Object({ settings: SettingsSchema }),
      response: GatewayViewSchema,
      async handle(request, response) {
        if (!requireAdmin(request, response, deps.config.admin_token)) return response;
        const { gateway_id } = request.params as { gateway_id: string };
        const body = request.body;
        if (!isPlainObject(body) || body.settings === undefined) return badRequest(response, 'Missing required field: settings');
        const settings = settingsOf(body.settings);
        if (typeof settings === 'string') return badRequest(response, settings);
        if (!GATEWAY_ID.test(gateway_id)) return notFound(response);
        return answer(deps, response, await replaceGatewaySettings(admin, gateway_id, settings, Date.now()), 'Gateway settings replaced');
      },
    },
  ];
}
