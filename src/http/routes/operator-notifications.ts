// Operator API for notifications (Authorization: Bearer PAYGATE_ADMIN_TOKEN): what was sent for a
// transaction or a subscription, every attempt with the merchant's reply and why it was resent,
// and a manual resend. `in_flight` and the resend's conflict check read leases on the real wall
// clock (deps.wall_clock); every time shown is on the gateway clock.
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { Clock } from '../../domain/clock.js';
import { redactUrl } from '../../logging.js';
import { SUBSCRIPTION_EVENT_KIND } from '../../notifications/subscription-event.js';
import type { OperationDeps } from '../../operations/deps.js';
import {
  type NotificationWithAttempts,
  resendNotification,
  withAttempts,
  subscriptionNotifications,
  transactionNotifications,
} from '../../operations/notification-views.js';
import { requireAdmin } from '../admin-auth.js';
import { Status } from '../envelope.js';
import type { PlainRoute } from '../route.js';

const Attempt = Type.Object({
  attempt_no: Type.Integer(),
  at: Type.String({ description: 'ISO 8601, gateway clock' }),
  duration_ms: Type.Integer(),
  http_status: Type.Union([Type.Integer(), Type.Null()], { description: 'null when no HTTP reply came (refused, time-out, not allowed)' }),
  reply_excerpt: Type.Union([Type.String({ maxLength: 320 }), Type.Null()], { description: 'start of the reply, cleaned and cut' }),
  outcome: Type.Union([Type.Literal('delivered'), Type.Literal('refused'), Type.Literal('retry'), Type.Literal('undeliverable')]),
  reason: Type.String(),
});

const NotificationView = Type.Object({
  id: Type.Integer(),
  kind: Type.Union([Type.Literal('transaction'), Type.Literal('subscription_event')]),
  trace_id: Type.Union([Type.Integer(), Type.Null()], { description: 'the transaction notified; null for a subscription event' }),
  subscription_id: Type.Union([Type.String(), Type.Null()], {
    description: 'the subscription of a subscription event; null for a transaction notification',
  }),
  event: Type.Union([Type.String(), Type.Null()], {
    description: "a subscription event's name (subscription.created, …); null for a transaction notification",
  }),
  transaction_status: Type.String({
    description: "the status this notification reports (a subscription event: the subscription's status)",
  }),
  url: Type.String(),
  state: Type.Union([
    Type.Literal('pending'),
    Type.Literal('delivered'),
    Type.Literal('refused'),
    Type.Literal('failed'),
    Type.Literal('superseded'),
  ]),
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

/** The answer's view of a notification; its attempts are those recorded when the row was read (operations/notification-views.ts). */
function viewOf(wall_clock: Clock, { notification: row, attempts }: NotificationWithAttempts): View {
  const body = JSON.parse(row.payload_json) as Record<string, unknown>;
  if (typeof body.card_token === 'string') body.card_token = '[redacted]';
  const event = row.kind === SUBSCRIPTION_EVENT_KIND;
  return {
    id: row.id,
    kind: event ? SUBSCRIPTION_EVENT_KIND : 'transaction',
    trace_id: row.trace_id,
    subscription_id: row.subscription_id,
    event: event ? String(body.event ?? '') : null,
    transaction_status: String((event ? body.subscription_status : body.transaction_status) ?? ''),
    url: redactUrl(row.url),
    state: row.state,
    attempt_count: row.attempts,
    created_at: iso(row.created_at_ms),
    next_attempt_at: row.state === 'pending' ? iso(row.next_attempt_at_ms) : null,
    // Leases are on the wall clock, whatever the sandbox clock says.
    in_flight: row.lease_owner !== null && row.lease_until_ms !== null && row.lease_until_ms >= wall_clock.now_ms(),
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

/** The operator's notification routes. Leases are read on deps.wall_clock (the real clock). */
export function operatorNotificationRoutes(deps: OperationDeps): PlainRoute[] {
  const wall_clock = deps.wall_clock;
  const views = (rows: readonly NotificationWithAttempts[]) => rows.map((row) => viewOf(wall_clock, row));
  return [
    {
      kind: 'plain',
      method: 'GET',
      url: '/operator/transactions/:trace_id/notifications',
      summary: 'Operator: every notification of a transaction with every delivery attempt (Authorization: Bearer PAYGATE_ADMIN_TOKEN)',
      produces: 'application/json',
      response: Type.Object({
        status: Type.Integer(),
        description: Type.String(),
        trace_id: Type.Integer(),
        transaction_status: Type.String(),
        notifications: Type.Array(NotificationView),
      }),
      async handle(request, response) {
        if (!requireAdmin(request, response, deps.config.admin_token)) return response;
        const trace_id = idParam((request.params as { trace_id?: string }).trace_id);
        if (trace_id === null) return problem(response, 400, Status.INVALID_FIELD, 'Invalid field: trace_id (expected a positive integer)');
        const found = await transactionNotifications(deps, trace_id);
        if (!found) return problem(response, 404, Status.TRANSACTION_NOT_FOUND, 'Transaction not found');
        return response.send({
          status: Status.OK,
          description: 'OK',
          trace_id,
          transaction_status: found.transaction_status,
          notifications: views(found.notifications),
        });
      },
    },
    {
      kind: 'plain',
      method: 'GET',
      url: '/operator/subscriptions/:subscription_id/notifications',
      summary:
        'Operator: every event notification of a subscription with every delivery attempt (Authorization: Bearer PAYGATE_ADMIN_TOKEN)',
      produces: 'application/json',
      response: Type.Object({
        status: Type.Integer(),
        description: Type.String(),
        subscription_id: Type.String(),
        notifications: Type.Array(NotificationView),
      }),
      async handle(request, response) {
        if (!requireAdmin(request, response, deps.config.admin_token)) return response;
        const raw = (request.params as { subscription_id?: string }).subscription_id;
        if (typeof raw !== 'string' || !/^[A-Za-z0-9_-]{1,128}$/.test(raw)) {
          return problem(response, 400, Status.INVALID_FIELD, 'Invalid field: subscription_id');
        }
        // Every subscription has its subscription.created event from the transaction that created
        // it (domain/subscription-state.ts), so no event means no such subscription.
        const rows = await subscriptionNotifications(deps, raw);
        if (rows.length === 0) return problem(response, 404, Status.SUBSCRIPTION_NOT_FOUND, 'Subscription not found');
        return response.send({ status: Status.OK, description: 'OK', subscription_id: raw, notifications: views(rows) });
      },
    },
    {
      kind: 'plain',
      method: 'POST',
      url: '/operator/notifications/:id/resend',
      summary:
        'Operator: send a notification again now, same content, with a fresh resend bound; 409 while an attempt is in flight (Authorization: Bearer PAYGATE_ADMIN_TOKEN)',
      produces: 'application/json',
      response: Type.Object({ status: Type.Integer(), description: Type.String(), notification: NotificationView }),
      async handle(request, response) {
        if (!requireAdmin(request, response, deps.config.admin_token)) return response;
        const id = idParam((request.params as { id?: string }).id);
        if (id === null) return problem(response, 400, Status.INVALID_FIELD, 'Invalid field: id (expected a positive integer)');
        // The stored body is untouched, so the merchant gets the same content and signature again.
        // Refused while an instance holds a live lease: the attempt in flight would record its own
        // outcome over the resend (or the merchant would get two sends at once).
        const outcome = await resendNotification(deps, id);
        if (outcome.kind === 'not_found') return problem(response, 404, Status.TRANSACTION_NOT_FOUND, 'Notification not found');
        const notification = views(await withAttempts(deps, [outcome.notification], true))[0]!;
        if (outcome.kind === 'in_flight') {
          request.log.info({ notification_id: id }, 'notification resend refused: an attempt is in flight');
          return response.code(409).send({
            status: Status.IN_PROGRESS,
            description: 'Notification attempt in flight: resend it once the attempt has ended',
            notification,
          });
        }
        request.log.info({ notification_id: id }, 'notification resend requested by operator');
        return response.send({ status: Status.OK, description: 'Notification scheduled for resend', notification });
      },
    },
  ];
}
