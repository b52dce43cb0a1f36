// The operator API for an application's cashier framing (docs/cashier.md §7), behind
// PAYGATE_ADMIN_TOKEN: which origins may show its init-pay-in cashier in an iframe.
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { checkFrameOrigins, FRAME_ORIGINS_MAX } from '../../domain/frame-origins.js';
import type { OperationDeps } from '../../operations/deps.js';
import { frameOrigins, setFrameOrigins } from '../../operations/merchant-settings.js';
import { requireAdmin } from '../admin-auth.js';
import { Status } from '../envelope.js';
import { isPlainObject, type PlainRoute } from '../route.js';

const URL_PATH = '/operator/merchants/:merchant_id/applications/:application_key/frame-origins';

const FrameOriginsAnswer = Type.Object({
  status: Type.Integer(),
  description: Type.String(),
  merchant_id: Type.Optional(Type.String()),
  application_key: Type.Optional(Type.String()),
  frame_origins: Type.Optional(Type.Array(Type.String())),
});

function paramsOf(request: FastifyRequest): { merchant_id: string; application_key: string } {
  return request.params as { merchant_id: string; application_key: string };
}

function notFound(response: FastifyReply): FastifyReply {
  return response.code(404).send({ status: Status.AUTHENTICATION_FAILED, description: 'No such merchant application' });
}

export function operatorApplicationRoutes(deps: OperationDeps): PlainRoute[] {
  return [
    {
      kind: 'plain',
      method: 'GET',
      url: URL_PATH,
      summary: "Origins allowed to frame the application's init-pay-in cashier (operator)",
      produces: 'application/json',
      response: FrameOriginsAnswer,
      async handle(request, response) {
        if (!requireAdmin(request, response, deps.config.admin_token)) return response;
        const { merchant_id, application_key } = paramsOf(request);
        const origins = await frameOrigins(deps, merchant_id, application_key);
        if (origins === null) return notFound(response);
        return response.send({ status: Status.OK, description: 'Frame origins', merchant_id, application_key, frame_origins: origins });
      },
    },
    {
      kind: 'plain',
      method: 'PUT',
      url: URL_PATH,
      summary: "Replace the origins allowed to frame the application's init-pay-in cashier (operator); [] allows none",
      produces: 'application/json',
      body: Type.Object({
        frame_origins: Type.Array(Type.String(), { maxItems: FRAME_ORIGINS_MAX, description: 'http(s) origins: scheme, host, port' }),
      }),
      response: FrameOriginsAnswer,
      async handle(request, response) {
        if (!requireAdmin(request, response, deps.config.admin_token)) return response;
        const { merchant_id, application_key } = paramsOf(request);
        const body = request.body;
        const list = isPlainObject(body) ? body.frame_origins : undefined;
        if (!Array.isArray(list) || !list.every((item): item is string => typeof item === 'string')) {
          return response
            .code(400)
            .send({ status: Status.INVALID_FIELD, description: 'Invalid field: frame_origins (expected a list of http(s) origins)' });
        }
        const checked = checkFrameOrigins(list);
        if (!checked.ok) {
          return response.code(400).send({
            status: Status.INVALID_FIELD,
            description: `Invalid field: frame_origins (${checked.invalid} is not an http(s) origin such as https://shop.example)`,
          });
        }
        if (!(await setFrameOrigins(deps, merchant_id, application_key, checked.origins))) return notFound(response);
        return response.send({
          status: Status.OK,
          description: 'Frame origins set',
          merchant_id,
          application_key,
          frame_origins: checked.origins,
        });
      },
    },
  ];
}
