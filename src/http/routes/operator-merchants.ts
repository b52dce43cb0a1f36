// The operator API for a merchant's settings, behind PAYGATE_ADMIN_TOKEN: the shop name the
// cashier shows per frontend or application (docs/cashier.md), whether its v1.3 requests
// must carry Gt-Body-Signature, which binds the method, path and body that the
// Gt-Authentication header alone leaves open to replay (docs/security.md §3), and its
// credentials: roll its secret with a grace for the old one, disable or enable it, send it a
// test notification (docs/security.md §5, operations/merchant-credentials.ts).
import { Type } from '@sinclair/typebox';
import type { OperationDeps } from '../../operations/deps.js';
import {
  rollMerchantSecret,
  SECRET_GRACE_MAX_S,
  sendTestNotification,
  setMerchantDisabled,
} from '../../operations/merchant-credentials.js';
import { setDisplayName, setV13BodySignatureRequired } from '../../operations/merchant-settings.js';
import { requireAdmin } from '../admin-auth.js';
import { characterLength, hasContent, textProblem } from '../../domain/text.js';
import { Status } from '../envelope.js';
import { isPlainObject, type PlainRoute } from '../route.js';

const URL_PATH = '/operator/merchants/:merchant_id/v13-body-signature';

const Answer = Type.Object({
  status: Type.Integer(),
  description: Type.String(),
  merchant_id: Type.Optional(Type.String()),
  required: Type.Optional(Type.Boolean({ description: 'true: v1.3 requests without a valid Gt-Body-Signature are refused (status 2)' })),
});

/** A shop's name as the cashier shows it: 1 to 64 characters of text (docs/limits.md §2), or null to show the merchant_id. */
const DISPLAY_NAME_MAX = 64;

/** A test notification's URL: a notification_url's own limit (the dictionary's 256 characters). */
const TEST_URL_MAX = 256;

const NO_SUCH_MERCHANT = { status: Status.AUTHENTICATION_FAILED, description: 'No such merchant' } as const;

const Plain = Type.Object({ status: Type.Integer(), description: Type.String() });

export function operatorMerchantRoutes(deps: OperationDeps): PlainRoute[] {
  return [
    {
      kind: 'plain',
      method: 'PUT',
      url: '/operator/merchants/:merchant_id/display-name',
      summary: "The shop name the cashier shows for one of the merchant's frontends or applications, instead of its merchant_id (operator)",
      produces: 'application/json',
      body: Type.Object({
        frontend: Type.Optional(Type.String()),
        application_key: Type.Optional(Type.String()),
        display_name: Type.Union([Type.String({ minLength: 1, maxLength: DISPLAY_NAME_MAX }), Type.Null()]),
      }),
      response: Type.Object({
        status: Type.Integer(),
        description: Type.String(),
        display_name: Type.Optional(Type.Union([Type.String(), Type.Null()])),
      }),
      async handle(request, response) {
        if (!requireAdmin(request, response, deps.config.admin_token)) return response;
        const { merchant_id } = request.params as { merchant_id: string };
        const body = isPlainObject(request.body) ? request.body : {};
        const identity =
          typeof body.frontend === 'string' && body.application_key === undefined
            ? { kind: 'frontend' as const, value: body.frontend }
            : typeof body.application_key === 'string' && body.frontend === undefined
              ? { kind: 'application_key' as const, value: body.application_key }
              : null;
        if (identity === null) {
          return response.code(400).send({
            status: Status.INVALID_FIELD,
            description: 'Invalid field: frontend or application_key (expected exactly one of them)',
          });
        }
        const name = body.display_name;
        if (
          name !== null &&
          (typeof name !== 'string' ||
            characterLength(name) < 1 ||
            characterLength(name) > DISPLAY_NAME_MAX ||
            textProblem(name) !== null ||
            !hasContent(name))
        ) {
          return response.code(400).send({
            status: Status.INVALID_FIELD,
            description: `Invalid field: display_name (expected text of 1 to ${DISPLAY_NAME_MAX} characters, or null)`,
          });
        }
        if (!(await setDisplayName(deps, merchant_id, identity, name))) {
          return response.code(404).send({ status: Status.AUTHENTICATION_FAILED, description: 'No such merchant frontend or application' });
        }
        request.log.info({ merchant_id, [identity.kind]: identity.value }, 'display name set');
        return response.send({
          status: Status.OK,
          description: name === null ? 'Display name cleared' : 'Display name set',
          display_name: name,
        });
      },
    },
    {
      kind: 'plain',
      method: 'GET',
      url: URL_PATH,
      summary: "Whether the merchant's v1.3 requests must carry Gt-Body-Signature (operator)",
      produces: 'application/json',
      response: Answer,
      async handle(request, response) {
        if (!requireAdmin(request, response, deps.config.admin_token)) return response;
        const { merchant_id } = request.params as { merchant_id: string };
        const merchant = await deps.merchants.findFresh(merchant_id);
        if (merchant === null) return response.code(404).send({ status: Status.AUTHENTICATION_FAILED, description: 'No such merchant' });
        return response.send({
          status: Status.OK,
          description: 'v1.3 body signature',
          merchant_id,
          required: merchant.v13_body_signature_required,
        });
      },
    },
    {
      kind: 'plain',
      method: 'PUT',
      url: URL_PATH,
      summary: "Require (or stop requiring) Gt-Body-Signature on the merchant's v1.3 requests (operator)",
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
        if (!(await setV13BodySignatureRequired(deps, merchant_id, required))) {
          return response.code(404).send({ status: Status.AUTHENTICATION_FAILED, description: 'No such merchant' });
        }
        // This instance applies it at once; others within PAYGATE_MERCHANT_CACHE_MS.
        deps.merchants.invalidate();
        request.log.info({ merchant_id, required }, 'v1.3 body signature requirement set');
        return response.send({
          status: Status.OK,
          description: required ? 'v1.3 body signature required' : 'v1.3 body signature optional',
          merchant_id,
          required,
        });
      },
    },
    {
      kind: 'plain',
      method: 'POST',
      url: '/operator/merchants/:merchant_id/roll-secret',
      summary: 'Give the merchant a new secret; the old one stays accepted for grace_seconds (0 to 86400) (operator)',
      produces: 'application/json',
      body: Type.Object({ grace_seconds: Type.Integer({ minimum: 0, maximum: SECRET_GRACE_MAX_S }) }),
      response: Type.Union([
        Plain,
        Type.Object({
          status: Type.Integer(),
          description: Type.String(),
          merchant_id: Type.String(),
          secret: Type.String({ description: 'the new secret, shown this once' }),
          previous_valid_until: Type.String({
            description: 'ISO 8601, gateway clock: requests signed with the old secret are accepted before this time',
          }),
        }),
      ]),
      async handle(request, response) {
        if (!requireAdmin(request, response, deps.config.admin_token)) return response;
        const { merchant_id } = request.params as { merchant_id: string };
        const grace_s = isPlainObject(request.body) ? request.body.grace_seconds : undefined;
        const outcome = await rollMerchantSecret(deps, merchant_id, typeof grace_s === 'number' ? grace_s : Number.NaN);
        switch (outcome.kind) {
          case 'invalid_grace':
            return response.code(400).send({
              status: Status.INVALID_FIELD,
              description: `Invalid field: grace_seconds (expected a whole number of seconds from 0 to ${outcome.max_s})`,
            });
          case 'not_found':
            return response.code(404).send(NO_SUCH_MERCHANT);
          case 'rolled':
            // The answer holds a secret: no cache anywhere may keep it.
            return response.header('cache-control', 'no-store').send({
              status: Status.OK,
              description: 'Secret rolled',
              merchant_id,
              secret: outcome.secret,
              previous_valid_until: new Date(outcome.previous_valid_until_ms).toISOString(),
            });
        }
      },
    },
    {
      kind: 'plain',
      method: 'PUT',
      url: '/operator/merchants/:merchant_id/disabled',
      summary: "Disable the merchant (its calls are answered as an unknown merchant's) or enable it again (operator)",
      produces: 'application/json',
      body: Type.Object({ disabled: Type.Boolean() }),
      response: Type.Object({
        status: Type.Integer(),
        description: Type.String(),
        merchant_id: Type.Optional(Type.String()),
        disabled: Type.Optional(Type.Boolean()),
      }),
      async handle(request, response) {
        if (!requireAdmin(request, response, deps.config.admin_token)) return response;
        const { merchant_id } = request.params as { merchant_id: string };
        const disabled = isPlainObject(request.body) ? request.body.disabled : undefined;
        if (typeof disabled !== 'boolean') {
          return response.code(400).send({ status: Status.INVALID_FIELD, description: 'Invalid field: disabled (expected true or false)' });
        }
        if (!(await setMerchantDisabled(deps, merchant_id, disabled))) return response.code(404).send(NO_SUCH_MERCHANT);
        return response.send({
          status: Status.OK,
          description: disabled ? 'Merchant disabled' : 'Merchant enabled',
          merchant_id,
          disabled,
        });
      },
    },
    {
      kind: 'plain',
      method: 'POST',
      url: '/operator/merchants/:merchant_id/test-notification',
      summary: 'Send the merchant a test notification now, signed with its current secret, and say how its endpoint answered (operator)',
      produces: 'application/json',
      body: Type.Object({ url: Type.String({ maxLength: TEST_URL_MAX, description: 'an http(s) URL' }) }),
      response: Type.Object({
        status: Type.Integer(),
        description: Type.String(),
        delivered: Type.Optional(
          Type.Boolean({ description: 'HTTP 2xx with a reply signed with the current secret and status 0, as for a real notification' }),
        ),
        http_status: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
        reason: Type.Optional(Type.String()),
        reply_excerpt: Type.Optional(Type.Union([Type.String(), Type.Null()])),
        duration_ms: Type.Optional(Type.Integer()),
      }),
      async handle(request, response) {
        if (!requireAdmin(request, response, deps.config.admin_token)) return response;
        const { merchant_id } = request.params as { merchant_id: string };
        const url = isPlainObject(request.body) ? request.body.url : undefined;
        if (typeof url !== 'string' || url.length > TEST_URL_MAX || !/^https?:\/\/[^\s/?#]+[^\s]*$/.test(url)) {
          return response.code(400).send({
            status: Status.INVALID_FIELD,
            description: `Invalid field: url (expected an http(s) URL of up to ${TEST_URL_MAX} characters)`,
          });
        }
        const outcome = await sendTestNotification(deps, merchant_id, url);
        switch (outcome.kind) {
          case 'not_found':
            return response.code(404).send(NO_SUCH_MERCHANT);
          case 'url_not_allowed':
            return response.code(400).send({ status: Status.INVALID_FIELD, description: `Invalid field: url (${outcome.reason})` });
          case 'delivered':
            return response.send({
              status: Status.OK,
              description: 'Test notification delivered',
              delivered: true,
              http_status: outcome.http_status,
              reply_excerpt: outcome.reply_excerpt,
              duration_ms: outcome.duration_ms,
            });
          case 'failed':
            // The call did its work; the merchant's endpoint did not acknowledge. Said in `delivered` and `reason`.
            return response.send({
              status: Status.OK,
              description: `Test notification not delivered: ${outcome.reason}`,
              delivered: false,
              http_status: outcome.http_status,
              reason: outcome.reason,
              reply_excerpt: outcome.reply_excerpt,
              duration_ms: outcome.duration_ms,
            });
        }
      },
    },
  ];
}
