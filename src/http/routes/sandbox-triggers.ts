// The sandbox's flow triggers over HTTP (docs/triggers.md): `GET /sandbox/triggers` lists them,
// `POST /sandbox/triggers/{name}` (the admin token) runs one for a merchant and answers when its
// named notification was sent, with the trace_id and every notification body of the flow.
// Registered with the other sandbox routes (sandbox.ts), so none of this exists in live mode.
// `paygate trigger` (src/cli/trigger.ts) is this endpoint's client.
import { Type } from '@sinclair/typebox';
import { requireAdmin } from '../admin-auth.js';
import { Status } from '../envelope.js';
import { isPlainObject, type PlainRoute } from '../route.js';
import { endLabel, SANDBOX_TRIGGERS } from '../../domain/sandbox-triggers.js';
import type { OperationDeps } from '../../operations/deps.js';
import { runFlowTrigger, type TriggerReport } from '../../operations/sandbox-trigger-run.js';

const URL_PATTERN = /^https?:\/\/[^\s/?#]+\S*$/;
const URL_MAX_CHARS = 256;
const MERCHANT_ID_MAX_CHARS = 50;

const SENT_NOTIFICATION = Type.Object({
  id: Type.Integer(),
  kind: Type.String({ description: 'transaction or subscription_event' }),
  trace_id: Type.Union([Type.Integer(), Type.Null()]),
  subscription_id: Type.Union([Type.String(), Type.Null()]),
  reports: Type.String({ description: 'the transaction status (`sale approved`) or subscription event it reports' }),
  url: Type.String(),
  state: Type.String({ description: 'pending, delivered, refused, failed or superseded (docs/notifications.md)' }),
  attempts: Type.Integer(),
  last_error: Type.Union([Type.String(), Type.Null()]),
  body: Type.Record(Type.String(), Type.Unknown(), { description: 'the JSON body exactly as POSTed (signed)' }),
  headers: Type.Record(Type.String(), Type.String(), { description: "a subscription event's Gt-Authentication header" }),
});

function describe(report: TriggerReport): string {
  const subject = report.subscription_id !== null ? `subscription ${report.subscription_id}` : `transaction ${report.trace_id ?? '?'}`;
  if (!report.reached || !report.notification) {
    return `${report.trigger}: ${subject} has not reached ${report.ends_in} yet (now ${report.status_now ?? 'unknown'}); it will be notified`;
  }
  const sent = report.notification;
  return `${report.trigger}: ${subject} notified ${report.ends_in} to ${sent.url} (${sent.state}${sent.last_error ? `: ${sent.last_error}` : ''})`.slice(
    0,
    256,
  );
}

export function sandboxTriggerRoutes(deps: OperationDeps): PlainRoute[] {
  return [
    {
      kind: 'plain',
      method: 'GET',
      url: '/sandbox/triggers',
      summary: 'Sandbox: the flow triggers, one line each (docs/triggers.md)',
      produces: 'application/json',
      response: Type.Object({
        triggers: Type.Array(Type.Object({ name: Type.String(), summary: Type.String(), ends_in: Type.String() })),
      }),
      async handle(_request, response) {
        return response.send({
          triggers: SANDBOX_TRIGGERS.map((t) => ({ name: t.name, summary: t.summary, ends_in: endLabel(t.ends_in) })),
        });
      },
    },
    {
      kind: 'plain',
      method: 'POST',
      url: '/sandbox/triggers/:name',
      summary:
        "Sandbox: make a real flow of the merchant's that ends in the named notification, sent to its notification_url (Authorization: Bearer PAYGATE_ADMIN_TOKEN)",
      produces: 'application/json',
      body: Type.Object({
        merchant_id: Type.String({ minLength: 1, maxLength: MERCHANT_ID_MAX_CHARS }),
        notification_url: Type.Optional(
          Type.String({
            maxLength: URL_MAX_CHARS,
            description: "where the flow's notifications go; absent: the newest one of the merchant's recent transactions",
          }),
        ),
      }),
      response: Type.Object({
        status: Type.Integer(),
        description: Type.String(),
        trigger: Type.Optional(Type.String()),
        merchant_id: Type.Optional(Type.String()),
        notification_url: Type.Optional(Type.String()),
        ends_in: Type.Optional(Type.String()),
        reached: Type.Optional(Type.Boolean()),
        trace_id: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
        subscription_id: Type.Optional(Type.Union([Type.String(), Type.Null()])),
        status_now: Type.Optional(Type.Union([Type.String(), Type.Null()])),
        notification: Type.Optional(Type.Union([SENT_NOTIFICATION, Type.Null()])),
        notifications: Type.Optional(Type.Array(SENT_NOTIFICATION)),
      }),
      async handle(request, response) {
        if (!requireAdmin(request, response, deps.config.admin_token)) return response;
        const name = (request.params as { name?: string }).name ?? '';
        const body = isPlainObject(request.body) ? request.body : {};
        const merchant_id = body.merchant_id;
        if (typeof merchant_id !== 'string' || merchant_id === '' || merchant_id.length > MERCHANT_ID_MAX_CHARS) {
          return response.code(400).send({ status: Status.INVALID_FIELD, description: 'Missing required field: merchant_id' });
        }
        const notification_url = body.notification_url;
        if (
          notification_url !== undefined &&
          (typeof notification_url !== 'string' || notification_url.length > URL_MAX_CHARS || !URL_PATTERN.test(notification_url))
        ) {
          return response.code(400).send({
            status: Status.INVALID_FIELD,
            description: 'Invalid field: notification_url (expected an http(s) URL of up to 256 characters)',
          });
        }
        const outcome = await runFlowTrigger(deps, name, { merchant_id, notification_url: notification_url ?? null });
        switch (outcome.kind) {
          case 'unknown_trigger':
            return response.code(404).send({
              status: Status.UNKNOWN_PATH,
              description: `Unknown trigger: ${name.slice(0, 60)} (GET /sandbox/triggers lists them)`,
            });
          case 'merchant_not_found':
            return response.code(404).send({ status: Status.AUTHENTICATION_FAILED, description: 'No such merchant' });
          case 'no_sandbox_gateway':
            return response.code(409).send({
              status: Status.NO_GATEWAY,
              description: `Gateway unavailable: merchant ${merchant_id} has no enabled sandbox gateway`,
            });
          case 'no_notification_url':
            return response.code(400).send({
              status: Status.INVALID_FIELD,
              description: "Missing required field: notification_url (none of the merchant's recent transactions had one)",
            });
          case 'flow_failed':
            return response
              .code(409)
              .send({ status: Status.TRANSITION_REFUSED, description: `Trigger stopped: ${outcome.reason}`.slice(0, 256) });
          case 'ran':
            return response.send({ status: Status.OK, description: describe(outcome.report), ...outcome.report });
        }
      },
    },
  ];
}
