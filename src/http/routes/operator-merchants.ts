// The operator API for a merchant's settings, behind PAYGATE_ADMIN_TOKEN: the shop name the
// cashier shows per frontend or application (docs/cashier.md), and whether its v1.3 requests
// must carry Gt-Body-Signature, which binds the method, path and body that the
// Gt-Authentication header alone leaves open to replay (docs/security.md §3).
import { Type } from '@sinclair/typebox';
import type { OperationDeps } from '../../operations/deps.js';
import { requireAdmin } from '../admin-auth.js';
import { characterLength, hasContent, textProblem } from '../../domain/text.js';
import { Status } from '../envelope.js';
import { isPlainObject, type PlainRoute } from '../route.js';

const URL_PATH = '/operator/merchants/:merchant_id/v13-body-signature';

const Answer = Type.Object({
  status: Type.Integer(), description: Type.String(),
  merchant_id: Type.Optional(Type.String()),
  required: Type.Optional(Type.Boolean({ description: 'true: v1.3 requests without a valid Gt-Body-Signature are refused (status 2)' })),
});

/** A shop's name as the cashier shows it: 1 to 64 characters of text (docs/limits.md §2), or null to show the merchant_id. */
const DISPLAY_NAME_MAX = 64;

export function operatorMerchantRoutes(deps: OperationDeps): PlainRoute[] {
  return [
    {
      kind: 'plain',
      method: 'PUT',
      url: '/operator/merchants/:merchant_id/display-name',
      summary: 'The shop name the cashier shows for one of the merchant\'s frontends or applications, instead of its merchant_id (operator)',
      produces: 'application/json',
      body: Type.Object({
        frontend: Type.Optional(Type.String()), application_key: Type.Optional(Type.String()),
        display_name: Type.Union([Type.String({ minLength: 1, maxLength: DISPLAY_NAME_MAX }), Type.Null()]),
      }),
      response: Type.Object({ status: Type.Integer(), description: Type.String(), display_name: Type.Optional(Type.Union([Type.String(), Type.Null()])) }),
      async handle(request, response) {
        if (!requireAdmin(request, response, deps.config.admin_token)) return response;
        const { merchant_id } = request.params as { merchant_id: string };
        const body = isPlainObject(request.body) ? request.body : {};
        const identity = typeof body.frontend === 'string' && body.application_key === undefined
          ? { kind: 'frontend' as const, value: body.frontend }
          : typeof body.application_key === 'string' && body.frontend === undefined ? { kind: 'application_key' as const, value: body.application_key } : null;
        if (identity === null) {
          return response.code(400).send({ status: Status.INVALID_FIELD, description: 'Invalid field: frontend or application_key (expected exactly one of them)' });
        }
        const name = body.display_name;
        if (name !== null && (typeof name !== 'string' || characterLength(name) < 1 || characterLength(name) > DISPLAY_NAME_MAX
          || textProblem(name) !== null || !hasContent(name))) {
          return response.code(400).send({ status: Status.INVALID_FIELD, description: `Invalid field: display_name (expected text of 1 to ${DISPLAY_NAME_MAX} characters, or null)` });
        }
        if (!(await deps.store.setDisplayName(merchant_id, identity, name))) {
          return response.code(404).send({ status: Status.AUTHENTICATION_FAILED, description: 'No such merchant frontend or application' });
        }
        request.log.info({ merchant_id, [identity.kind]: identity.value }, 'display name set');
        return response.send({ status: Status.OK, description: name === null ? 'Display name cleared' : 'Display name set', display_name: name });
      },
    },
    {
      kind: 'plain',
      method: 'GET',
      url: URL_PATH,
      summary: 'Whether the merchant\'s v1.3 requests must carry Gt-Body-Signature (operator)',
      produces: 'application/json',
      response: Answer,
      async handle(request, response) {
        if (!requireAdmin(request, response, deps.config.admin_token)) return response;
        const { merchant_id } = request.params as { merchant_id: string };
        const merchant = await deps.merchants.findFresh(merchant_id);
        if (merchant === null) return response.code(404).send({ status: Status.AUTHENTICATION_FAILED, description: 'No such merchant' });
        return response.send({ status: Status.OK, description: 'v1.3 body signature', merchant_id, required: merchant.v13_body_signature_required });
      },
    },
    {
      kind: 'plain',
      method: 'PUT',
      url: URL_PATH,
      summary: 'Require (or stop requiring) Gt-Body-Signature on the merchant\'s v1.3 requests (operator)',
      produces: 'application/json',
      body: Type.Object({ required: Type.Boolean() }),
      response: Answer,
      async handle(request, response) {
        if (!requireAdmin(request, response, deps.config.admin_token)) return response;
        const { merchant_id } = request.params as { merchant_id: string };
        const body = request.body;
        const required = isPlainObject(body) ? body.required : undefined;
        if (typeof required !== 'boolean') {
          return response.code(400).send({ status: Status.INVALID_FIELD, description: 'Invalid field: required (expected true or false)' });
        }
        if (!(await deps.store.setV13BodySignatureRequired(merchant_id, required))) {
          return response.code(404).send({ status: Status.AUTHENTICATION_FAILED, description: 'No such merchant' });
        }
        // This instance applies it at once; others within PAYGATE_MERCHANT_CACHE_MS.
        deps.merchants.invalidate();
        request.log.info({ merchant_id, required }, 'v1.3 body signature requirement set');
        return response.send({ status: Status.OK, description: required ? 'v1.3 body signature required' : 'v1.3 body signature optional', merchant_id, required });
      },
    },
  ];
}
