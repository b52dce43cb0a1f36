// POST /api/direct: payout to an e-wallet or bank account (spec §4.2). The body's fields come
// from the dictionary; the data_ fields (spec §2.1 data_PARAM) are checked here for name and
// size only, then the gateway's processor checks its own (operations/direct-payout.ts).
import { Type } from '@sinclair/typebox';
import { processDirectPayout } from '../../operations/direct-payout.js';
import { requestFingerprint, type TransactionAnswer } from '../../operations/lifecycle.js';
import { characterLength, describeTextProblem, textProblem } from '../../domain/text.js';
import { fieldError, type Reply } from '../envelope.js';
import { bodySchema, type BodyOf, type FieldError, fieldsRefused, literal } from '../fields.js';
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

/** The data_ fields, or what is wrong with them: too many (an answer of its own), or each bad one named. */
function dataFields(
  body: Readonly<Record<string, unknown>>,
):
  | { kind: 'valid'; data: Record<string, string> }
  | { kind: 'too_many'; reply: Reply }
  | { kind: 'invalid'; first: FieldError; others: readonly FieldError[] } {
  const names = Object.keys(body).filter((key) => key.startsWith('data_') && body[key] !== null && body[key] !== undefined);
  if (names.length > DATA_FIELDS_MAX)
    return { kind: 'too_many', reply: fieldError(`Too many data_ fields: at most ${DATA_FIELDS_MAX} are accepted`) };
  const data: Record<string, string> = {};
  const problems: FieldError[] = [];
  for (const name of names.sort()) {
    const value = body[name];
    const problem = typeof value === 'string' ? textProblem(value) : null;
    if (!DATA_FIELD_NAME.test(name)) {
      const shown = shownName(name);
      problems.push({
        field: shown,
        description: `Invalid field: ${shown} (expected a name of data_ followed by 1 to 32 lowercase letters, digits or underscores)`,
      });
    } else if (problem !== null) {
      problems.push({ field: name, description: `Invalid field: ${name} (${describeTextProblem(problem)})` });
    } else if (typeof value !== 'string' || characterLength(value) > DATA_FIELD_MAX_LENGTH) {
      problems.push({ field: name, description: `Invalid field: ${name} (expected text of up to ${DATA_FIELD_MAX_LENGTH} characters)` });
    } else {
      data[name] = value;
    }
  }
  const [first, ...others] = problems;
  return first === undefined ? { kind: 'valid', data } : { kind: 'invalid', first, others };
}

const directInput: SignedInput<DirectInput> = {
  schema: DirectPayoutBody.schema,
  parse(body) {
    // The schema's fields in its order, then the data_ fields in name order: every problem at once.
    const parsed = DirectPayoutBody.parse(body);
    const data = dataFields(body);
    const data_problems = data.kind === 'invalid' ? [data.first, ...data.others] : [];
    if (!parsed.ok) return fieldsRefused(parsed.error, [...parsed.errors.slice(1), ...data_problems]);
    if (data.kind === 'too_many') return { ok: false, reply: data.reply };
    if (data.kind === 'invalid') return fieldsRefused(data.first, data.others);
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
