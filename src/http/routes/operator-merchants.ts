// The operator API for a merchant's request security, behind PAYGATE_ADMIN_TOKEN: whether its
// v1.3 requests must carry Gt-Body-Signature, which binds the method, path and body that the
// Gt-Authentication header alone leaves open to replay (docs/security.md §3).
import { Type } from '@sinclair/typebox';
import type { OperationDeps } from '../../operations/deps.js';
import { requireAdmin } from '../admin-auth.js';
import { Status } from '../envelope.js';
import { isPlainObject, type PlainRoute } from '../route.js';

const URL_PATH = '/operator/merchants/:merchant_id/v13-body-signature';

const Answer = Type.Object({
  status: Type.Integer(), description: Type.String(),
  merchant_id: Type.Optional(Type.String()),
  required: Type.Optional(Type.Boolean({ description: 'true: v1.3 requests without a valid Gt-Body-Signature are refused (status 2)' })),
});

export function operatorMerchantRoutes(deps: OperationDeps): PlainRoute[] {
  return [
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
