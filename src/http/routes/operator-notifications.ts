// Operator API for notifications (Authorization: Bearer PAYGATE_ADMIN_TOKEN): what was sent for a
// transaction, every attempt with the merchant's reply and why it was resent, and a manual resend.
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { redactUrl } from '../../logging.js';
import type { OperationDeps } from '../../operations/deps.js';
import type { NotificationRow } from '../../store/schema.js';
import { requireAdmin } from '../admin-auth.js';
import { Status } from '../envelope.js';
import type { PlainRoute } from '../route.js';

const Attempt = Type.Object({
  attempt_no: Type.Integer(),
  at: Type.String({ description: 'ISO 8601, gateway clock' }),
  duration_ms: Type.Integer(),
  http_status: Type.Union([Type.Integer(), Type.Null()], { description: 'null when no HTTP reply came (refused, time-out, not allowed)' }),
  reply_excerpt: Type.Union([Type.String({ maxLength: 320 }), Type.Null()], { description: 'start of the reply, cleaned and cut' }),
  outcome: Type.Union([Type.Literal('delivered'), Type.Literal('refused'), Type.Literal('retry')]),
  reason: Type.String(),
});

const NotificationView = Type.Object({
  id: Type.Integer(),
  trace_id: Type.Integer(),
  transaction_status: Type.String({ description: 'the status this notification reports' }),
  url: Type.String(),
  state: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('refused'), Type.Literal('failed')]),
  attempt_count: Type.Integer(),
  created_at: Type.String(),
  next_attempt_at: Type.Union([Type.String(), Type.Null()], { description: 'null unless pending' }),
  in_flight: Type.Boolean({ description: 'an instance holds a live lease on it' }),
  last_error: Type.Union([Type.String(), Type.Null()]),
  body: Type.Record(Type.String(), Type.Unknown(), { description: 'the body as sent, without its signature; card_token redacted' }),
  attempts: Type.Array(Attempt),
});

type View = Record<string, unknown>;

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

async function viewOf(deps: OperationDeps, row: NotificationRow): Promise<View> {
  // The row was read first; an attempt recorded since (it commits with its row update) is left
  // out, so the view never shows an attempt whose effect on the row it does not show.
  const attempts = (await deps.store.listNotificationAttempts(row.id)).filter((a) => a.attempt_no <= row.attempts);
  const body = JSON.parse(row.payload_json) as Record<string, unknown>;
  if (typeof body.card_token === 'string') body.card_token = '[redacted]';
  const now_ms = deps.clock.now_ms();
  return {
    id: row.id,
    trace_id: row.trace_id,
    transaction_status: String(body.transaction_status ?? ''),
    url: redactUrl(row.url),
    state: row.state,
    attempt_count: row.attempts,
    created_at: iso(row.created_at_ms),
    next_attempt_at: row.state === 'pending' ? iso(row.next_attempt_at_ms) : null,
    in_flight: row.lease_until_ms !== null && row.lease_until_ms >= now_ms,
    last_error: row.last_error,
    body,
    attempts: attempts.map((a) => ({
      attempt_no: a.attempt_no,
      at: iso(a.started_at_ms),
      duration_ms: a.duration_ms,
      http_status: a.http_status ?? null,
      reply_excerpt: a.reply_excerpt ?? null,
      outcome: a.outcome,
      reason: a.reason,
    })),
  };
}

function idParam(raw: unknown): number | null {
  return typeof raw === 'string' && /^[1-9]\d{0,14}$/.test(raw) ? Number(raw) : null;
}

function problem(response: FastifyReply, code: number, status: number, description: string): FastifyReply {
  return response.code(code).send({ status, description });
}

export function operatorNotificationRoutes(deps: OperationDeps): PlainRoute[] {
  return [
    {
      kind: 'plain',
      method: 'GET',
      url: '/operator/transactions/:trace_id/notifications',
      summary: 'Operator: every notification of a transaction with every delivery attempt (Authorization: Bearer PAYGATE_ADMIN_TOKEN)',
      produces: 'application/json',
      response: Type.Object({
        status: Type.Integer(), description: Type.String(), trace_id: Type.Integer(), transaction_status: Type.String(),
        notifications: Type.Array(NotificationView),
      }),
      async handle(request, response) {
        if (!requireAdmin(request, response, deps.config.admin_token)) return response;
        const trace_id = idParam((request.params as { trace_id?: string }).trace_id);
        if (trace_id === null) return problem(response, 400, Status.INVALID_FIELD, 'Invalid field: trace_id (expected a positive integer)');
        const transaction = await deps.store.getTransaction(trace_id);
        if (!transaction) return problem(response, 404, Status.TRANSACTION_NOT_FOUND, 'Transaction not found');
        const rows = await deps.store.listNotifications(trace_id);
        const notifications = [];
        for (const row of rows) notifications.push(await viewOf(deps, row));
        return response.send({ status: Status.OK, description: 'OK', trace_id, transaction_status: transaction.status, notifications });
      },
    },
    {
      kind: 'plain',
      method: 'POST',
      url: '/operator/notifications/:id/resend',
      summary: 'Operator: send a notification again now, same content (Authorization: Bearer PAYGATE_ADMIN_TOKEN)',
      produces: 'application/json',
      response: Type.Object({ status: Type.Integer(), description: Type.String(), notification: NotificationView }),
      async handle(request, response) {
        if (!requireAdmin(request, response, deps.config.admin_token)) return response;
        const id = idParam((request.params as { id?: string }).id);
        if (id === null) return problem(response, 400, Status.INVALID_FIELD, 'Invalid field: id (expected a positive integer)');
        const now_ms = deps.clock.now_ms();
        // The stored body is untouched, so the merchant gets the same content and signature again.
        if (!(await deps.store.rescheduleNotification(id, now_ms, now_ms))) {
          return problem(response, 404, Status.TRANSACTION_NOT_FOUND, 'Notification not found');
        }
        request.log.info({ notification_id: id }, 'notification resend requested by operator');
        const row = await deps.store.getNotification(id);
        return response.send({ status: Status.OK, description: 'Notification scheduled for resend', notification: await viewOf(deps, row!) });
      },
    },
  ];
}
