// The operator API for a payment's books (decisions §16), behind PAYGATE_ADMIN_TOKEN:
// POST /operator/transactions/{trace_id}/reconcile asks the payment's processor what it knows
// (refunds made outside the gateway, a capture or void made there) and records what the gateway
// missed (operations/reconcile.ts), notified like any other change.
import { Type } from '@sinclair/typebox';
import type { OperationDeps } from '../../operations/deps.js';
import { reconcilePayment } from '../../operations/reconcile.js';
import { requireAdmin } from '../admin-auth.js';
import { Status } from '../envelope.js';
import type { PlainRoute } from '../route.js';

const TRACE_ID = /^[1-9][0-9]{0,14}$/;

export function operatorTransactionRoutes(deps: OperationDeps): PlainRoute[] {
  return [
    {
      kind: 'plain',
      method: 'POST',
      url: '/operator/transactions/:trace_id/reconcile',
      summary: "Ask a payment's processor for refunds made outside the gateway and captures or voids made there, and record them",
      produces: 'application/json',
      response: Type.Object({
        status: Type.Integer(),
        description: Type.String(),
        trace_id: Type.Optional(Type.Integer()),
        transaction_status: Type.Optional(Type.String()),
        applied: Type.Optional(Type.Array(Type.String())),
      }),
      async handle(request, response) {
        if (!requireAdmin(request, response, deps.config.admin_token)) return response;
        const raw = (request.params as { trace_id?: string }).trace_id ?? '';
        if (!TRACE_ID.test(raw))
          return response.code(404).send({ status: Status.TRANSACTION_NOT_FOUND, description: 'Transaction not found' });
        const outcome = await reconcilePayment(deps, Number(raw));
        switch (outcome.kind) {
          case 'not_found':
            return response.code(404).send({ status: Status.TRANSACTION_NOT_FOUND, description: 'Transaction not found' });
          case 'not_a_payment':
            return response.code(409).send({
              status: Status.TRANSITION_REFUSED,
              description: `Transition refused: transaction ${raw} is not an approved or authorized payment (transaction_type ${outcome.transaction_type}, status ${outcome.status})`,
            });
          case 'no_processor':
            return response
              .code(409)
              .send({ status: Status.NO_GATEWAY, description: "Gateway unavailable: the payment's processor is not available here" });
          case 'unavailable':
            return response
              .code(503)
              .send({ status: Status.NO_GATEWAY, description: `The processor could not be asked: ${outcome.reason}`.slice(0, 255) });
          case 'reconciled':
            return response.send({
              status: 0,
              description:
                outcome.applied.length === 0
                  ? 'The processor agrees with the gateway'
                  : `Recorded: ${outcome.applied.join('; ')}`.slice(0, 255),
              trace_id: Number(raw),
              transaction_status: outcome.transaction_status,
              applied: outcome.applied,
            });
        }
      },
    },
  ];
}
