// POST /api/find-order (spec §4.7): where an order opened by init-checkout (or init-pay-out-order)
// stands. Non-zero outcomes carry only status, description, timestamp, version, signature.
// The merchant is identified by frontend (the field §4.7 requires), whatever else the body
// carries; descriptions stay within §4.7's 75 characters.
import { Type } from '@sinclair/typebox';
import { identityByField } from '../../operations/cashier-session.js';
import { findOrder } from '../../operations/find-order.js';
import { reply, Status } from '../envelope.js';
import { bodySchema, type BodyOf, literal } from '../fields.js';
import { type SignedRoute, unknownCredentials } from '../route.js';
import { fitted, fittedParse, SESSION_DESCRIPTION_MAX } from './cashier-sessions.js';

const FindOrderBody = bodySchema(
  {
    order_id: 'required',
    frontend: 'required',
    merchant_id: 'required',
    timestamp: 'required',
    signature: 'required',
  },
  { version: literal('1.1') },
);

const FindOrderAnswer = Type.Object({
  status: Type.Integer({ description: '0 found, 1 not found, 3 still open, 4 timed out with no transactions' }),
  description: Type.String({ maxLength: 75 }),
  order_status: Type.Optional(Type.String({ maxLength: 16, description: 'pending, authorized, approved, rejected (spec §3.3)' })),
  transaction_type: Type.Optional(Type.String()),
  transaction_status: Type.Optional(Type.String()),
  transaction_id: Type.Optional(Type.String()),
  trace_id: Type.Optional(Type.Integer()),
  order_id: Type.Optional(Type.String()),
  frontend: Type.Optional(Type.String()),
  pin: Type.Optional(Type.String()),
  amount: Type.Optional(Type.Integer()),
  currency: Type.Optional(Type.String()),
  charge_amount: Type.Optional(Type.Integer()),
  charge_currency: Type.Optional(Type.String()),
  payment_method: Type.Optional(Type.String()),
  payment_processor: Type.Optional(Type.String()),
  gateway: Type.Optional(Type.String()),
  auth_token: Type.Optional(Type.String()),
  merchant_id: Type.Optional(Type.String()),
  card_number: Type.Optional(Type.String({ description: 'masked' })),
  card_type: Type.Optional(Type.String()),
  card_exp: Type.Optional(Type.String()),
  error_code: Type.Optional(Type.String()),
  error_details: Type.Optional(Type.String()),
  reference_id: Type.Optional(Type.Integer()),
  variable1: Type.Optional(Type.String()),
  variable2: Type.Optional(Type.String()),
  variable3: Type.Optional(Type.String()),
  version: Type.String(),
  timestamp: Type.Integer(),
  signature: Type.String(),
});

export function findOrderRoute(): SignedRoute<BodyOf<typeof FindOrderBody>> {
  return {
    kind: 'signed',
    method: 'POST',
    url: '/api/find-order',
    summary: 'Where an order opened by init-checkout (or init-pay-out-order) stands',
    answer_version: '1.1',
    input: { schema: FindOrderBody.schema, parse: fittedParse((body) => FindOrderBody.parse(body)) },
    response: FindOrderAnswer,
    description_max: SESSION_DESCRIPTION_MAX,
    async handle(context, body) {
      if (!identityByField(context.merchant, 'frontend', body.frontend)) return unknownCredentials();
      const outcome = await findOrder(context.deps, context.merchant.merchant_id, body.frontend, body.order_id);
      switch (outcome.kind) {
        case 'found':
          return fitted(reply(Status.OK, 'Order found', outcome.fields));
        case 'not_found':
          return reply(Status.ORDER_NOT_FOUND, 'Order not found');
        case 'open':
          return reply(Status.ORDER_OPEN, 'Order is still open');
        case 'timed_out_empty':
          return reply(Status.ORDER_TIMED_OUT, 'Order timed out with no transactions');
      }
    },
  };
}
