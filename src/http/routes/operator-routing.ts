// The operator API for a merchant's routing rules (decisions.md §13, docs/connectors.md §9),
// behind PAYGATE_ADMIN_TOKEN: list, add, delete. The same operations as `paygate route ...`
// (operations/routing-rules.ts). A change drops this instance's copies of the merchants, so it
// routes by the new rules at once; other instances within PAYGATE_MERCHANT_CACHE_MS.
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { OperationDeps } from '../../operations/deps.js';
import { addMerchantRoutingRule, deleteRoutingRule, merchantRoutingRules } from '../../operations/routing-rules.js';
import { requireAdmin } from '../admin-auth.js';
import { Status } from '../envelope.js';
import { isPlainObject, type PlainRoute } from '../route.js';

const MERCHANT_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,49}$/;
const RULE_ID = /^rule_[0-9a-f]{24}$/;

function badRequest(response: FastifyReply, description: string): FastifyReply {
  return response.code(400).send({ status: Status.INVALID_FIELD, description });
}

function merchantNotFound(response: FastifyReply): FastifyReply {
  return response.code(404).send({ status: Status.AUTHENTICATION_FAILED, description: 'Merchant not found' });
}

/** A list of text values of a body field, or a description of what is wrong with it. */
function textList(body: Record<string, unknown>, field: string): string[] | undefined | string {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.length > 50 || !value.every((item) => typeof item === 'string' && item.length <= 16)) {
    return `Invalid field: ${field} (expected a list of up to 50 codes)`;
  }
  return value as string[];
}

function wholeNumber(body: Record<string, unknown>, field: string): number | undefined | string {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
    ? value
    : `Invalid field: ${field} (expected a whole number, 0 or more)`;
}

export function operatorRoutingRoutes(deps: OperationDeps): PlainRoute[] {
  return [
    {
      kind: 'plain',
      method: 'GET',
      url: '/operator/merchants/:merchant_id/routing-rules',
      summary: "A merchant's routing rules, by priority (Authorization: Bearer PAYGATE_ADMIN_TOKEN)",
      produces: 'application/json',
      async handle(request, response) {
        if (!requireAdmin(request, response, deps.config.admin_token)) return response;
        const { merchant_id } = request.params as { merchant_id: string };
        if (!MERCHANT_ID.test(merchant_id)) return merchantNotFound(response);
        const rules = await merchantRoutingRules(deps, merchant_id);
        return rules === null ? merchantNotFound(response) : response.send({ status: Status.OK, description: 'Routing rules', rules });
      },
    },
    {
      kind: 'plain',
      method: 'POST',
      url: '/operator/merchants/:merchant_id/routing-rules',
      summary:
        'Add a routing rule: {"gateway", "priority", "currencies", "amount_min", "amount_max", "card_brands", "bin_countries", "payout_methods"} (Authorization: Bearer PAYGATE_ADMIN_TOKEN)',
      produces: 'application/json',
      body: Type.Object({
        gateway: Type.String({ maxLength: 32 }),
        priority: Type.Integer({ minimum: 0, maximum: 1_000_000 }),
        currencies: Type.Optional(Type.Array(Type.String({ maxLength: 3 }))),
        amount_min: Type.Optional(Type.Integer({ minimum: 0 })),
        amount_max: Type.Optional(Type.Integer({ minimum: 0 })),
        card_brands: Type.Optional(Type.Array(Type.String({ maxLength: 16 }))),
        bin_countries: Type.Optional(Type.Array(Type.String({ maxLength: 2 }))),
        payout_methods: Type.Optional(Type.Array(Type.String({ maxLength: 16 }))),
      }),
      async handle(request, response) {
        if (!requireAdmin(request, response, deps.config.admin_token)) return response;
        const { merchant_id } = request.params as { merchant_id: string };
        const body = request.body;
        if (!isPlainObject(body)) return badRequest(response, 'Body must be a JSON object');
        if (!MERCHANT_ID.test(merchant_id)) return merchantNotFound(response);
        if (typeof body.gateway !== 'string' || body.gateway.length > 32)
          return badRequest(response, 'Invalid field: gateway (expected a gateway id)');
        const priority = wholeNumber(body, 'priority');
        if (priority === undefined) return badRequest(response, 'Missing required field: priority');
        const fields = {
          priority,
          amount_min: wholeNumber(body, 'amount_min'),
          amount_max: wholeNumber(body, 'amount_max'),
          currencies: textList(body, 'currencies'),
          card_brands: textList(body, 'card_brands'),
          bin_countries: textList(body, 'bin_countries'),
          payout_methods: textList(body, 'payout_methods'),
        };
        for (const value of Object.values(fields)) if (typeof value === 'string') return badRequest(response, value);
        const outcome = await addMerchantRoutingRule(
          deps,
          {
            merchant_id,
            gateway_id: body.gateway,
            priority: fields.priority as number,
            amount_min_minor: fields.amount_min as number | undefined,
            amount_max_minor: fields.amount_max as number | undefined,
            currencies: fields.currencies as string[] | undefined,
            card_brands: fields.card_brands as string[] | undefined,
            bin_countries: fields.bin_countries as string[] | undefined,
            payout_methods: fields.payout_methods as string[] | undefined,
          },
          Date.now(),
        );
        switch (outcome.kind) {
          case 'ok':
            deps.merchants.invalidate();
            return response.code(201).send({ status: Status.OK, description: 'Routing rule added', rule: outcome.rule });
          case 'merchant_not_found':
            return merchantNotFound(response);
          case 'invalid': {
            const names: Readonly<Record<string, string>> = {
              'min-amount': 'amount_min',
              'max-amount': 'amount_max',
              currency: 'currencies',
              'card-brand': 'card_brands',
              'bin-country': 'bin_countries',
              'payout-method': 'payout_methods',
            };
            return badRequest(response, `Invalid field: ${names[outcome.field] ?? outcome.field} (${outcome.reason})`);
          }
        }
      },
    },
    {
      kind: 'plain',
      method: 'DELETE',
      url: '/operator/merchants/:merchant_id/routing-rules/:rule_id',
      summary: 'Delete a routing rule (Authorization: Bearer PAYGATE_ADMIN_TOKEN)',
      produces: 'application/json',
      async handle(request, response) {
        if (!requireAdmin(request, response, deps.config.admin_token)) return response;
        const { merchant_id, rule_id } = request.params as { merchant_id: string; rule_id: string };
        if (!MERCHANT_ID.test(merchant_id) || !RULE_ID.test(rule_id) || !(await deleteRoutingRule(deps, merchant_id, rule_id))) {
          return response.code(404).send({ status: Status.NO_GATEWAY, description: 'Routing rule not found' });
        }
        deps.merchants.invalidate();
        return response.send({ status: Status.OK, description: 'Routing rule deleted' });
      },
    },
  ];
}
