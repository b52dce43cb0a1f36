// POST /api/tokenize and POST /api/transaction-status (a documented addition: docs/api.md).
import { Type } from '@sinclair/typebox';
import { CardData, parseExpiry } from '../../domain/cards.js';
import { readTransaction } from '../../operations/read-transaction.js';
import { tokenizeCard } from '../../operations/tokenize.js';
import { fieldError, reply, Status } from '../envelope.js';
import { bodySchema, type BodyOf, literal } from '../fields.js';
import { identityOf, type SignedRoute, unknownCredentials } from '../route.js';

const TokenizeBody = bodySchema(
  {
    merchant_id: 'required',
    application_key: 'required',
    pin: 'required',
    card_number: 'required',
    card_exp: 'required',
    timestamp: 'required',
    signature: 'required',
  },
  { version: literal('1.2') },
);

export function tokenizeRoute(): SignedRoute<BodyOf<typeof TokenizeBody>> {
  return {
    kind: 'signed',
    method: 'POST',
    url: '/api/tokenize',
    summary: 'Store a card in the vault and answer its card_token, without a charge',
    answer_version: '1.2',
    input: TokenizeBody,
    response: Type.Object({
      status: Type.Integer(),
      description: Type.String(),
      card_token: Type.Optional(Type.String({ maxLength: 32 })),
      card_number: Type.Optional(Type.String({ description: 'masked' })),
      card_exp: Type.Optional(Type.String()),
      error_details: Type.Optional(
        Type.String({
          maxLength: 256,
          description:
            'every field problem when the description cannot name them all; in the sandbox, the string a refused signature was checked against (docs/errors.md)',
        }),
      ),
      version: Type.String(),
      timestamp: Type.Integer(),
      signature: Type.String(),
    }),
    async handle(context, body) {
      if (!identityOf(context.merchant, context.body)) return unknownCredentials();
      const card = new CardData(body.card_number, parseExpiry(body.card_exp)!, null);
      const outcome = await tokenizeCard(context.deps, context.merchant, body.pin, card);
      if (outcome.kind === 'invalid_card') return fieldError(`Invalid field: ${outcome.field} (${outcome.reason})`);
      return reply(Status.OK, 'Card stored', {
        card_token: outcome.card_token,
        card_number: outcome.card_masked,
        card_exp: outcome.card_exp,
      });
    },
  };
}

const StatusBody = bodySchema(
  {
    merchant_id: 'required',
    application_key: 'optional',
    frontend: 'optional',
    trace_id: 'required',
    timestamp: 'required',
    signature: 'required',
  },
  { version: Type.Union([literal('1.1'), literal('1.2')], { description: 'exactly "1.1" (frontend) or "1.2" (application_key)' }) },
);

export function transactionStatusRoute(): SignedRoute<BodyOf<typeof StatusBody>> {
  return {
    kind: 'signed',
    method: 'POST',
    url: '/api/transaction-status',
    summary: "Read one of the merchant's transactions by trace_id (fields as in a notification)",
    answer_version: '1.2',
    input: StatusBody,
    response: Type.Object(
      { status: Type.Integer(), description: Type.String(), version: Type.String(), timestamp: Type.Integer(), signature: Type.String() },
      { additionalProperties: true },
    ),
    async handle(context, body) {
      if (body.application_key === undefined && body.frontend === undefined)
        return fieldError('Missing required field: application_key or frontend');
      if (!identityOf(context.merchant, context.body)) return unknownCredentials();
      const outcome = await readTransaction(context.deps, context.merchant.merchant_id, Number(body.trace_id));
      if (outcome.kind === 'not_found') return reply(Status.TRANSACTION_NOT_FOUND, 'Transaction not found');
      return reply(Status.OK, 'Transaction found', outcome.fields);
    },
  };
}
