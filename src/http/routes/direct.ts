// POST /api/direct: payout to an e-wallet or bank account (spec §4.2). The body's fields come
// from the dictionary; the data_ fields (spec §2.1 data_PARAM) are checked here for name and
// size only, then the gateway's processor checks its own (operations/direct-payout.ts).
import { Type } from '@sinclair/typebox';
import { processDirectPayout } from '../../operations/direct-payout.js';
import { requestFingerprint, type TransactionAnswer } from '../../operations/lifecycle.js';
import { characterLength, describeTextProblem, textProblem } from '../../domain/text.js';
import { fieldError, type Reply } from '../envelope.js';
import { bodySchema, type BodyOf, literal } from '../fields.js';
import { identityOf, type SignedContext, type SignedInput, type SignedRoute, unknownCredentials } from '../route.js';
import { customerFrom } from '../../connectors/connector.js';
import { payoutReply, variablesOf } from './process.js';

export const DirectPayoutBody = bodySchema(
  {
    amount: 'required',
    currency: 'required',
    pin: 'required',
    country: 'required',
    // Optional (decisions §17): without it the merchant's routing rules choose a gateway that can make the payout.
    gateway: 'optional',
    application_key: 'required',
    merchant_id: 'required',
    return_url: 'required',
    notification_url: 'required',
    order_id: 'required',
    timestamp: 'required',
    signature: 'required',
    variable1: 'optional',
    variable2: 'optional',
    variable3: 'optional',
  },
  {
    // The spec's table says sale, its sample payout (decisions.md §7: both mean a payout).
    transaction_type: Type.Union([literal('payout'), literal('sale')], { description: 'payout or sale (both mean a payout)' }),
    version: literal('1.2'),
  },
);

type DirectBody = BodyOf<typeof DirectPayoutBody>;

interface DirectInput {
  readonly body: DirectBody;
  readonly data: Readonly<Record<string, string>>;
}

/** The data_ family (docs/payouts.md): name, size and count limits every processor shares. */
export const DATA_FIELD_NAME = /^data_[a-z0-9_]{1,32}$/;
export const DATA_FIELD_MAX_LENGTH = 256;
export const DATA_FIELDS_MAX = 20;

/** A field name as it may appear in a description: bounded and printable. */
function shownName(name: string): string {
  const printable = name.replace(/[^\x20-\x7e]/g, '?');
  return printable.length > 40 ? `${printable.slice(0, 40)}...` : printable;
}

function dataFields(body: Readonly<Record<string, unknown>>): { ok: true; data: Record<string, string> } | { ok: false; reply: Reply } {
  const names = Object.keys(body).filter((key) => key.startsWith('data_') && body[key] !== null && body[key] !== undefined);
  if (names.length > DATA_FIELDS_MAX)
    return { ok: false, reply: fieldError(`Too many data_ fields: at most ${DATA_FIELDS_MAX} are accepted`) };
  const data: Record<string, string> = {};
  for (const name of names.sort()) {
    if (!DATA_FIELD_NAME.test(name)) {
      return {
        ok: false,
        reply: fieldError(
          `Invalid field: ${shownName(name)} (expected a name of data_ followed by 1 to 32 lowercase letters, digits or underscores)`,
        ),
      };
    }
    const value = body[name];
    const problem = typeof value === 'string' ? textProblem(value) : null;
    if (problem !== null) return { ok: false, reply: fieldError(`Invalid field: ${name} (${describeTextProblem(problem)})`) };
    if (typeof value !== 'string' || characterLength(value) > DATA_FIELD_MAX_LENGTH) {
      return { ok: false, reply: fieldError(`Invalid field: ${name} (expected text of up to ${DATA_FIELD_MAX_LENGTH} characters)`) };
    }
    data[name] = value;
  }
  return { ok: true, data };
}

const directInput: SignedInput<DirectInput> = {
  schema: DirectPayoutBody.schema,
  parse(body) {
    const parsed = DirectPayoutBody.parse(body);
    if (!parsed.ok) return parsed;
    const data = dataFields(body);
    if (!data.ok) return data;
    return { ok: true, value: { body: parsed.value, data: data.data } };
  },
};

/** Direct answers (spec §4.2): error_code is int(10), and the answer says payout whatever transaction_type was sent. */
function directAnswer(answer: TransactionAnswer): TransactionAnswer {
  const shaped: TransactionAnswer = { ...answer, transaction_type: 'payout' };
  if (typeof answer.error_code === 'string' && /^[0-9]{1,10}$/.test(answer.error_code)) shaped.error_code = Number(answer.error_code);
  return shaped;
}

async function handleDirect(context: SignedContext, { body, data }: DirectInput): Promise<Reply> {
  const identity = identityOf(context.merchant, context.body);
  if (!identity) return unknownCredentials();
  const outcome = await processDirectPayout(context.deps, {
    merchant: context.merchant,
    identity,
    api_version: body.version,
    order_id: body.order_id,
    amount_minor: body.amount,
    currency: body.currency,
    pin: body.pin,
    gateway: body.gateway ?? null,
    return_url: body.return_url,
    notification_url: body.notification_url,
    // sale and payout are the same request here, so a replay may say either.
    request_fingerprint: requestFingerprint(context.deps, { ...context.body, transaction_type: 'payout' }),
    variables: variablesOf(context.body),
    customer: customerFrom(context.body),
    data,
  });
  if (outcome.kind === 'invalid_data') {
    const { field, kind, rule } = outcome.problem;
    return fieldError(kind === 'missing' ? `Missing required field: ${field}` : `Invalid field: ${field} (expected ${rule})`);
  }
  return payoutReply(outcome, directAnswer);
}

export const DirectAnswer = Type.Object({
  status: Type.Integer(),
  description: Type.String({ maxLength: 256 }),
  transaction_type: Type.Optional(Type.Literal('payout')),
  trace_id: Type.Optional(Type.Integer()),
  transaction_id: Type.Optional(Type.String({ maxLength: 50 })),
  transaction_status: Type.Optional(Type.String({ maxLength: 16 })),
  payment_processor: Type.Optional(Type.String({ maxLength: 25 })),
  payment_method: Type.Optional(Type.String({ maxLength: 25 })),
  redirect_url: Type.Optional(Type.Union([Type.String({ maxLength: 256 }), Type.Null()])),
  error_code: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
  error_details: Type.Optional(Type.Union([Type.String({ maxLength: 256 }), Type.Null()])),
  version: Type.String(),
  timestamp: Type.Integer(),
  signature: Type.String(),
});

export function directRoute(): SignedRoute<DirectInput> {
  return {
    kind: 'signed',
    method: 'POST',
    url: '/api/direct',
    summary: 'Direct payout to an e-wallet or bank account (data_ fields per processor: docs/payouts.md)',
    answer_version: '1.2',
    input: directInput,
    response: DirectAnswer,
    handle: handleDirect,
  };
}
