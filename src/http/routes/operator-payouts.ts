// The operator API for payouts (docs/payouts.md), behind PAYGATE_ADMIN_TOKEN (decisions.md §8):
// list and read payouts, approve / submit / cancel / reject / reverse one (each a state-machine
// transition recorded with its notification, operations/payout-review.ts). A refused transition
// answers HTTP 409 with the current status. A gateway's hold_payouts setting is set with the
// other gateway settings (operator-gateways.ts).
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { PAYOUT_TRANSITIONS, type PayoutStatus } from '../../domain/transaction-state.js';
import type { OperationDeps } from '../../operations/deps.js';
import { findPayout, REVIEW_ACTIONS, type ReviewAction, reviewPayout } from '../../operations/payout-review.js';
import { payoutsByStatus, statusHistory } from '../../operations/payout-views.js';
import type { TransactionRow } from '../../domain/transaction-record.js';
import { requireAdmin } from '../admin-auth.js';
import { Status } from '../envelope.js';
import { isPlainObject, type PlainRoute } from '../route.js';

const TRACE_ID = /^[1-9][0-9]{0,14}$/;
const NOTE_MAX = 200;
const LIST_MAX = 100;

const DONE: Readonly<Record<ReviewAction, string>> = {
  approve: 'Payout approved',
  submit: 'Payout sent to the processor',
  cancel: 'Payout cancelled',
  reject: 'Payout rejected',
  reverse: 'Payout reversed',
};

const SUMMARY: Readonly<Record<ReviewAction, string>> = {
  approve: 'Approve a requested payout (requested → authorized) and send it to the processor unless {"submit": false}',
  submit: 'Send an authorized payout to the processor (authorized → in progress → approved / rejected / error)',
  cancel: 'Cancel a requested or authorized payout (→ cancelled)',
  reject: 'Reject a requested or authorized payout (→ rejected)',
  reverse: 'Record that the PSP reversed an approved payout (approved → reversed)',
};

function payoutView(row: TransactionRow): Record<string, unknown> {
  return {
    trace_id: row.trace_id,
    merchant_id: row.merchant_id,
    order_id: row.order_id,
    transaction_status: row.status,
    amount: row.amount_minor,
    currency: row.currency,
    payment_method: row.payment_method,
    payment_processor: row.payment_processor,
    gateway: row.gateway_id,
    pin: row.pin,
    card_number: row.card_masked,
    transaction_id: row.psp_transaction_id,
    error_code: row.error_code,
    error_details: row.error_details,
    created_at_ms: row.created_at_ms,
    updated_at_ms: row.updated_at_ms,
  };
}

function badRequest(response: FastifyReply, description: string): FastifyReply {
  return response.code(400).send({ status: Status.INVALID_FIELD, description });
}

function notFound(response: FastifyReply): FastifyReply {
  return response.code(404).send({ status: Status.TRANSACTION_NOT_FOUND, description: 'Payout not found' });
}

function traceIdOf(request: FastifyRequest): number | null {
  const { trace_id } = request.params as { trace_id: string };
  return TRACE_ID.test(trace_id) ? Number(trace_id) : null;
}

const ActionBody = Type.Object({
  note: Type.Optional(Type.String({ maxLength: NOTE_MAX, description: 'kept in the status history' })),
  submit: Type.Optional(Type.Boolean({ description: 'approve only: false stops at authorized (default true)' })),
});

const ActionAnswer = Type.Object({
  status: Type.Integer(),
  description: Type.String(),
  trace_id: Type.Optional(Type.Integer()),
  previous_status: Type.Optional(Type.String()),
  transaction_status: Type.Optional(Type.String()),
  payout: Type.Optional(Type.Object({}, { additionalProperties: true })),
});

function actionRoute(deps: OperationDeps, action: ReviewAction): PlainRoute {
  return {
    kind: 'plain',
    method: 'POST',
    url: `/operator/payouts/:trace_id/${action}`,
    summary: `${SUMMARY[action]} (Authorization: Bearer PAYGATE_ADMIN_TOKEN)`,
    produces: 'application/json',
    body: ActionBody,
    response: ActionAnswer,
    async handle(request, response) {
      if (!requireAdmin(request, response, deps.config.admin_token)) return response;
      const trace_id = traceIdOf(request);
      if (trace_id === null) return badRequest(response, 'Invalid trace_id (expected a positive integer)');
      const body = request.body === undefined || request.body === null ? {} : request.body;
      if (!isPlainObject(body)) return badRequest(response, 'Body must be a JSON object');
      const { note, submit } = body;
      if (note !== undefined && (typeof note !== 'string' || note.length > NOTE_MAX || /[\u0000-\u001f\u007f]/.test(note))) {
        return badRequest(response, `Invalid field: note (expected text of up to ${NOTE_MAX} characters)`);
      }
      if (submit !== undefined && (action !== 'approve' || typeof submit !== 'boolean')) {
        return badRequest(response, 'Invalid field: submit (approve only; expected true or false)');
      }
      const outcome = await reviewPayout(deps, trace_id, action, { note: note === '' ? undefined : note, submit });
      switch (outcome.kind) {
        case 'not_found':
          return notFound(response);
        case 'refused':
          return response.code(409).send({
            status: Status.TRANSITION_REFUSED,
            description: `Transition refused: cannot ${action} a payout that is ${outcome.status} (${action} applies to ${outcome.accepted_from.join(' or ')})`,
            trace_id,
            transaction_status: outcome.status,
          });
        case 'processor_unavailable':
          return response.code(409).send({
            status: Status.TRANSITION_REFUSED,
            description: `Transition refused: the payout's processor is not available on this instance; it stays ${outcome.status}`,
            trace_id,
            transaction_status: outcome.status,
          });
        case 'changed':
          return response.send({
            status: Status.OK,
            description: DONE[action],
            trace_id,
            previous_status: outcome.previous_status,
            transaction_status: outcome.row.status,
            payout: payoutView(outcome.row),
          });
      }
    },
  };
}

export function operatorPayoutRoutes(deps: OperationDeps): PlainRoute[] {
  const statuses = Object.keys(PAYOUT_TRANSITIONS) as PayoutStatus[];
  return [
    {
      kind: 'plain',
      method: 'GET',
      url: '/operator/payouts',
      summary:
        'List payouts in one status, oldest first (?status=requested&after=TRACE_ID&limit=N; Authorization: Bearer PAYGATE_ADMIN_TOKEN)',
      produces: 'application/json',
      async handle(request, response) {
        if (!requireAdmin(request, response, deps.config.admin_token)) return response;
        const query = request.query as Record<string, string | undefined>;
        const status = statuses.find((known) => known === (query.status ?? 'requested'));
        if (status === undefined) return badRequest(response, `Invalid field: status (expected one of ${statuses.join(', ')})`);
        const after = query.after ?? '0';
        if (after !== '0' && !TRACE_ID.test(after)) return badRequest(response, 'Invalid field: after (expected a trace_id)');
        const limit = query.limit ?? '50';
        if (!/^[0-9]{1,3}$/.test(limit) || Number(limit) < 1 || Number(limit) > LIST_MAX) {
          return badRequest(response, `Invalid field: limit (expected 1 to ${LIST_MAX})`);
        }
        const page = await payoutsByStatus(deps, status, after === '0' ? null : Number(after), Number(limit));
        if (page.kind === 'unknown_after') return badRequest(response, 'Invalid field: after (expected the trace_id of a payout)');
        const rows = page.rows;
        return response.send({ status: Status.OK, description: `${rows.length} payout(s)`, payouts: rows.map(payoutView) });
      },
    },
    {
      kind: 'plain',
      method: 'GET',
      url: '/operator/payouts/:trace_id',
      summary: 'Read one payout with its status history (Authorization: Bearer PAYGATE_ADMIN_TOKEN)',
      produces: 'application/json',
      async handle(request, response) {
        if (!requireAdmin(request, response, deps.config.admin_token)) return response;
        const trace_id = traceIdOf(request);
        if (trace_id === null) return badRequest(response, 'Invalid trace_id (expected a positive integer)');
        const row = await findPayout(deps, trace_id);
        if (!row) return notFound(response);
        const history = await statusHistory(deps, trace_id);
        const allowed = (Object.keys(REVIEW_ACTIONS) as ReviewAction[]).filter((a) =>
          REVIEW_ACTIONS[a].from.includes(row.status as PayoutStatus),
        );
        return response.send({
          status: Status.OK,
          description: 'Payout found',
          payout: { ...payoutView(row), data: row.data_json ? (JSON.parse(row.data_json) as Record<string, string>) : null },
          actions: allowed,
          history,
        });
      },
    },
    ...(Object.keys(REVIEW_ACTIONS) as ReviewAction[]).map((action) => actionRoute(deps, action)),
  ];
}
