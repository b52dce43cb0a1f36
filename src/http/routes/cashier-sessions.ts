// The cashier session calls (spec §4.3-4.6, docs/cashier.md): POST /api/init-pay-in,
// /api/init-checkout, /api/init-pay-out and /api/init-pay-out-order. Each parses its body with
// the dictionary's fields (and the spec's per-endpoint lengths, CASHIER_FIELDS) and hands over
// to operations/cashier-session.ts. Answer: status, description, redirect_url, auth_token,
// version, timestamp, signature; the description within spec §2.3's 75 characters.
import { type TSchema, Type } from '@sinclair/typebox';
import {
  type CustomerData,
  identityByField,
  identityFieldOf,
  type OpenSessionInput,
  openSession,
  type SessionKind,
} from '../../operations/cashier-session.js';
import { requestFingerprint } from '../../operations/lifecycle.js';
import { fieldError, reply, type Reply, Status } from '../envelope.js';
import { gatewayRefusalReply } from '../gateway-refusal.js';
import { bodySchema, type BodyOf, CASHIER_FIELDS, fieldsRefused, type Parsed, literal } from '../fields.js';
import { type SignedContext, type SignedRoute, unknownCredentials } from '../route.js';
import { variablesOf } from './process.js';

const OPTIONAL_CUSTOMER = {
  requester_ip: 'optional',
  first_name: 'optional',
  last_name: 'optional',
  dob: 'optional',
  email: 'optional',
  address: 'optional',
  city: 'optional',
  zip: 'optional',
  variable1: 'optional',
  variable2: 'optional',
  variable3: 'optional',
  profile: 'optional',
  locale: 'optional',
  gateway: 'optional',
} as const;

const REQUIRED_COMMON = {
  merchant_id: 'required',
  currency: 'required',
  pin: 'required',
  country: 'required',
  return_url: 'required',
  notification_url: 'required',
  timestamp: 'required',
  signature: 'required',
} as const;

const STATE = Type.Optional(CASHIER_FIELDS.state);

/** The typed fields of the calls a frontend makes (version 1.1); payment_method's length differs by call. */
const frontendFields = <M extends TSchema>(payment_method: M) => ({
  version: literal('1.1'),
  frontend: CASHIER_FIELDS.frontend,
  state: STATE,
  payment_method: Type.Optional(payment_method),
});

/** Spec §4.3, version 1.2: application_key; phone at least 9 digits; payment_method varchar(50). */
export const InitPayIn = bodySchema(
  {
    ...REQUIRED_COMMON,
    application_key: 'required',
    validation_url: 'required',
    ...OPTIONAL_CUSTOMER,
    payment_method: 'optional',
  },
  { version: literal('1.2'), state: STATE, phone: Type.Optional(CASHIER_FIELDS.phone_pay_in) },
);

/** Spec §4.4, version 1.1: frontend varchar(50), exact amount and order_id; payment_method varchar(10). No validation request. */
export const InitCheckout = bodySchema(
  {
    ...REQUIRED_COMMON,
    order_id: 'required',
    amount: 'required',
    ...OPTIONAL_CUSTOMER,
    phone: 'optional',
  },
  {
    ...frontendFields(CASHIER_FIELDS.payment_method_checkout),
    // Decisions §16: `authorize` makes the order's card payment an authorization, captured later with /api/capture.
    transaction_type: Type.Optional(
      Type.Union([literal('sale'), literal('authorize')], { description: 'sale (the default) or authorize' }),
    ),
  },
);

/** Spec §4.5, version 1.1: frontend varchar(50), optional balance; payment_method varchar(32). */
export const InitPayOut = bodySchema(
  {
    ...REQUIRED_COMMON,
    validation_url: 'required',
    balance: 'optional',
    ...OPTIONAL_CUSTOMER,
    phone: 'optional',
  },
  frontendFields(CASHIER_FIELDS.payment_method_pay_out),
);

/**
 * init-pay-out-order (spec §4.6 names it only; designed here, docs/cashier.md §3): the payout twin
 * of init-checkout. Version 1.1, frontend varchar(50), exact amount and order_id, payment_method
 * varchar(32) as init-pay-out; validation_url optional (when given, a validation request is sent
 * before the payout, as for init-pay-out).
 */
export const InitPayOutOrder = bodySchema(
  {
    ...REQUIRED_COMMON,
    order_id: 'required',
    amount: 'required',
    validation_url: 'optional',
    ...OPTIONAL_CUSTOMER,
    phone: 'optional',
  },
  frontendFields(CASHIER_FIELDS.payment_method_pay_out),
);

type AnyInitBody = BodyOf<typeof InitPayIn> | BodyOf<typeof InitCheckout> | BodyOf<typeof InitPayOut> | BodyOf<typeof InitPayOutOrder>;

export const SessionAnswer = Type.Object({
  status: Type.Integer(),
  description: Type.String({ maxLength: 75 }),
  redirect_url: Type.Optional(Type.String({ maxLength: 256, description: 'the cashier auto-login link (one use, valid 15 minutes)' })),
  auth_token: Type.Optional(Type.String({ maxLength: 32, description: 'logs the customer in for 15 minutes (docs/cashier.md)' })),
  version: Type.String(),
  timestamp: Type.Integer(),
  signature: Type.String(),
});

/** Spec §2.3 and §4.7: the description of an init-* or find-order answer is varchar(75). */
export const SESSION_DESCRIPTION_MAX = 75;

/**
 * Shorter wording of a field's rule, for the fields whose dictionary wording would make
 * `Invalid field: <name> (expected <rule>)` longer than SESSION_DESCRIPTION_MAX.
 */
const SHORT_RULES: Readonly<Record<string, string>> = {
  currency: 'an ISO 4217 code such as USD',
  return_url: 'an http(s) URL, max 256 chars',
  notification_url: 'an http(s) URL, max 256 chars',
  validation_url: 'an http(s) URL, max 256 chars',
  locale: 'a language code: en, de-DE, es_ES',
  state: 'up to 3 letters or digits, or empty',
  amount: 'a whole number of minor units, 1 or more',
  balance: 'a whole number of minor units, 0 or more',
};

/**
 * The description cut to SESSION_DESCRIPTION_MAX while still naming the field: the rule in its
 * short wording, else only `Invalid field: <name>`. Not a field error: cut at a word.
 */
export function fitDescription(description: string, field?: string): string {
  if (description.length <= SESSION_DESCRIPTION_MAX) return description;
  if (field !== undefined) {
    const short = SHORT_RULES[field];
    const with_rule = short === undefined ? null : `Invalid field: ${field} (expected ${short})`;
    if (with_rule !== null && with_rule.length <= SESSION_DESCRIPTION_MAX) return with_rule;
    const bare = `Invalid field: ${field}`;
    if (bare.length <= SESSION_DESCRIPTION_MAX) return bare;
  }
  const cut = description.slice(0, SESSION_DESCRIPTION_MAX - 1);
  return `${cut.slice(0, Math.max(cut.lastIndexOf(' '), 40))}…`;
}

/**
 * A route's parse whose field problems each fit SESSION_DESCRIPTION_MAX (for the init-* calls and
 * find-order); the pipeline names as many as fit together (http/field-problems.ts).
 */
export function fittedParse<T>(parse: (body: Readonly<Record<string, unknown>>) => Parsed<T>) {
  return (body: Readonly<Record<string, unknown>>): Parsed<T> => {
    const parsed = parse(body);
    if (parsed.ok) return parsed;
    const [first, ...others] = parsed.errors.map((problem) => ({
      ...problem,
      description: fitDescription(problem.description, problem.field),
    }));
    return first === undefined ? parsed : fieldsRefused(first, others);
  };
}

/** Any answer of an init-* call or find-order, its description within SESSION_DESCRIPTION_MAX. */
export function fitted(answer: Reply): Reply {
  return answer.description.length <= SESSION_DESCRIPTION_MAX ? answer : { ...answer, description: fitDescription(answer.description) };
}

function customerOf(body: Readonly<Record<string, unknown>>): CustomerData {
  const customer: CustomerData = {};
  for (const name of ['first_name', 'last_name', 'dob', 'email', 'address', 'city', 'state', 'zip', 'requester_ip'] as const) {
    if (typeof body[name] === 'string' && body[name] !== '') customer[name] = body[name] as string;
  }
  if (typeof body.phone === 'number' || (typeof body.phone === 'string' && body.phone !== '')) customer.phone = String(body.phone);
  return customer;
}

async function handleInit(context: SignedContext, kind: SessionKind, body: AnyInitBody, public_url: () => string): Promise<Reply> {
  // The call's own identity field, never the other one a body may also carry (docs/cashier.md §2.1).
  const field = identityFieldOf(kind);
  const identity = identityByField(context.merchant, field, context.body[field]);
  if (!identity) return unknownCredentials();
  const raw = context.body;
  const input: OpenSessionInput = {
    merchant: context.merchant,
    identity,
    kind,
    api_version: body.version,
    order_id: typeof raw.order_id === 'string' ? raw.order_id : null,
    amount_minor: typeof raw.amount === 'number' ? raw.amount : null,
    balance_minor: typeof raw.balance === 'number' ? raw.balance : null,
    currency: body.currency,
    pin: body.pin,
    country: body.country,
    customer: customerOf(raw),
    locale: body.locale ?? null,
    payment_method: body.payment_method ?? null,
    gateway: body.gateway ?? null,
    profile: body.profile === undefined ? null : Number(body.profile),
    return_url: body.return_url,
    notification_url: body.notification_url,
    // Spec §4.4: no validation request in the checkout flow, whatever the body carries.
    validation_url: kind !== 'checkout' && typeof raw.validation_url === 'string' ? raw.validation_url : null,
    variables: variablesOf(raw),
    request_fingerprint: requestFingerprint(context.deps, raw),
    transaction_type: kind === 'checkout' && raw.transaction_type === 'authorize' ? 'authorize' : 'sale',
  };
  const outcome = await openSession(context.deps, public_url(), input);
  switch (outcome.kind) {
    case 'opened':
      return reply(Status.OK, 'Cashier session opened', { redirect_url: outcome.redirect_url, auth_token: outcome.auth_token });
    case 'duplicate_order':
      return reply(Status.DUPLICATE_ORDER, 'Duplicate order_id');
    // The same call again for an order that can no longer be paid: no login link, none would work.
    case 'order_closed':
      return reply(
        Status.ORDER_CLOSED,
        outcome.order_status === 'approved' ? 'Order closed: this order_id is already paid' : 'Order closed: this order_id has expired',
      );
    // Within 75 characters whatever the gateway's length (up to 32).
    case 'no_gateway':
      return gatewayRefusalReply(outcome.refusal, true);
    case 'unknown_method':
      return fieldError(methodsRefusal(outcome.allowed));
  }
}

/** "card or ewallet", "card, paypal or bank_account": within init-*'s 75 characters, else the bare list. */
function methodsRefusal(allowed: readonly string[]): string {
  const last = allowed.at(-1) ?? '';
  const words = allowed.length <= 2 ? allowed.join(' or ') : `${allowed.slice(0, -1).join(', ')} or ${last}`;
  const sentence = `Invalid field: payment_method (expected ${words})`;
  return sentence.length <= 75 ? sentence : `Invalid field: payment_method (expected ${allowed.join(',')})`;
}

interface InitSpec {
  readonly url: string;
  readonly kind: SessionKind;
  readonly summary: string;
  readonly version: '1.1' | '1.2';
  readonly schema: {
    readonly schema: TSchema;
    parse: (typeof InitPayIn)['parse'] | (typeof InitCheckout)['parse'] | (typeof InitPayOut)['parse'] | (typeof InitPayOutOrder)['parse'];
  };
}

const INITS: readonly InitSpec[] = [
  {
    url: '/api/init-pay-in',
    kind: 'pay_in',
    version: '1.2',
    schema: InitPayIn,
    summary: 'Open a cashier deposit session (application_key, 1.2); redirect_url is meant for an iframe',
  },
  {
    url: '/api/init-checkout',
    kind: 'checkout',
    version: '1.1',
    schema: InitCheckout,
    summary: 'Open a checkout session for an exact amount and order_id (frontend, 1.1); find it with /api/find-order',
  },
  {
    url: '/api/init-pay-out',
    kind: 'pay_out',
    version: '1.1',
    schema: InitPayOut,
    summary: 'Open the cashier withdrawal section (frontend, 1.1), bounded by balance',
  },
  {
    url: '/api/init-pay-out-order',
    kind: 'pay_out_order',
    version: '1.1',
    schema: InitPayOutOrder,
    summary: 'Open a payout order for an exact amount and order_id (frontend, 1.1): the payout twin of init-checkout',
  },
];

export function cashierSessionRoutes(public_url: () => string): SignedRoute<AnyInitBody>[] {
  return INITS.map((spec) => ({
    kind: 'signed',
    method: 'POST',
    url: spec.url,
    summary: spec.summary,
    answer_version: spec.version,
    input: { schema: spec.schema.schema, parse: fittedParse((body) => spec.schema.parse(body) as Parsed<AnyInitBody>) },
    response: SessionAnswer,
    description_max: SESSION_DESCRIPTION_MAX,
    handle: async (context: SignedContext, body: AnyInitBody) => fitted(await handleInit(context, spec.kind, body, public_url)),
  }));
}
