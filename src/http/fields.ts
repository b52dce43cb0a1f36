// The field dictionary of spec §2.1: each field's type, length and rule, written once and
// reused by every route's schema. The same TypeBox schemas validate requests, type the
// handlers (Static<>) and appear in /openapi.json.
import { isIP } from 'node:net';
import { OptionalKind, type Static, type TObject, type TProperties, type TSchema, type TString, Type } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { isKnownCurrency } from '../domain/money.js';
import { BILLING_CYCLES, TRIAL_UNITS } from '../domain/billing-calendar.js';
import { characterLength, describeTextProblem, hasContent, textProblem } from '../domain/text.js';

const MAX_AMOUNT = Number.MAX_SAFE_INTEGER;
/** Lists of plans and subscriptions answer at most this many per page. */
export const MAX_PAGE_SIZE = 100;

/** No control character (C0, DEL, C1): domain/text.ts says why. */
const NO_CONTROLS = '^[^\\u0000-\\u001f\\u007f-\\u009f]*$';
/** As NO_CONTROLS, and at least one character that is not a space. */
const SOME_CONTENT = '^\\s*[^\\s\\u0000-\\u001f\\u007f-\\u009f][^\\u0000-\\u001f\\u007f-\\u009f]*$';

function text(max: number, description = `text of 1 to ${max} characters`): TString {
  return Type.String({ minLength: 1, maxLength: max, pattern: SOME_CONTENT, description });
}

/** Optional free text: may be empty, never control characters. */
function freeText(max: number): TString {
  return Type.String({ maxLength: max, pattern: NO_CONTROLS, description: `free text of up to ${max} characters, no control characters` });
}

function url(max: number): TString {
  return Type.String({ maxLength: max, pattern: '^https?://[^\\s/?#]+[^\\s]*$', description: `an http(s) URL of up to ${max} characters` });
}

const DIGITS_ID = Type.Union([Type.Integer({ minimum: 1, maximum: 99_999_999_999 }), Type.String({ pattern: '^[1-9][0-9]{0,10}$' })], {
  description: 'a trace_id: a positive integer of up to 11 digits',
});

/** Extra checks a JSON schema cannot express; each returns true when the value is acceptable. */
const REFINEMENTS: Readonly<Record<string, (value: unknown) => boolean>> = {
  currency: (value) => isKnownCurrency(value as string),
  requester_ip: (value) => isIP(value as string) !== 0,
  dob: (value) => validDate(value as string),
  prices: (value) => (value as { currency: string }[]).every((price) => isKnownCurrency(price.currency)),
  page: (value) => Number(value) >= 1 && Number(value) <= 1_000_000,
  page_size: (value) => Number(value) >= 1 && Number(value) <= MAX_PAGE_SIZE,
};

function validDate(value: string): boolean {
  const iso = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  const us = /^(\d{2})\/(\d{2})\/(\d{4})$/.exec(value);
  const [year, month, day] = iso ? [iso[1], iso[2], iso[3]] : us ? [us[3], us[1], us[2]] : [];
  if (!year || !month || !day) return false;
  const date = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  return (
    date.getUTCFullYear() === Number(year) &&
    date.getUTCMonth() === Number(month) - 1 &&
    date.getUTCDate() === Number(day) &&
    Number(year) >= 1900
  );
}

export const FIELDS = {
  amount: Type.Integer({ minimum: 1, maximum: MAX_AMOUNT, description: `a whole number of minor units, 1 to ${MAX_AMOUNT}` }),
  currency: Type.String({ pattern: '^[A-Z]{3}$', maxLength: 10, description: 'an ISO 4217 code the gateway knows, such as USD' }),
  card_number: Type.String({ pattern: '^[0-9]{12,19}$', maxLength: 19, description: '12 to 19 digits' }),
  card_exp: Type.String({ pattern: '^(0[1-9]|1[0-2])/([0-9]{2}|[0-9]{4})$', maxLength: 8, description: 'MM/YYYY (MM/YY is accepted too)' }),
  cvv: Type.String({ pattern: '^[0-9]{3,4}$', maxLength: 4, description: '3 or 4 digits' }),
  card_token: Type.String({ pattern: '^[A-Za-z0-9]{1,32}$', description: 'a card_token of up to 32 characters' }),
  pin: text(50),
  dob: Type.String({
    maxLength: 10,
    pattern: '^([0-9]{4}-[0-9]{2}-[0-9]{2}|[0-9]{2}/[0-9]{2}/[0-9]{4})$',
    description: 'a date as YYYY-MM-DD or MM/DD/YYYY',
  }),
  email: Type.String({ maxLength: 50, pattern: '^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$', description: 'an e-mail address of up to 50 characters' }),
  phone: Type.Union([Type.Integer({ minimum: 100_000, maximum: 999_999_999_999_999 }), Type.String({ pattern: '^[0-9]{6,20}$' })], {
    description: '6 to 20 digits including the country code',
  }),
  requester_ip: Type.String({ maxLength: 45, description: 'an IPv4 or IPv6 address' }),
  address: text(100),
  city: text(50),
  country: Type.String({ pattern: '^[A-Z]{2}$', description: 'an ISO 3166-1 alpha-2 code such as US' }),
  first_name: text(25),
  last_name: text(25),
  state: Type.String({ maxLength: 2, pattern: '^[A-Za-z0-9]*$', description: 'a 2-character ISO state code, or empty' }),
  zip: Type.String({ pattern: '^[A-Za-z0-9 -]{1,12}$', description: 'up to 12 letters, digits, spaces or hyphens' }),
  gateway: text(32),
  application_key: text(32),
  frontend: text(256),
  merchant_id: text(50),
  return_url: url(256),
  notification_url: url(256),
  validation_url: url(256),
  order_id: text(50),
  reference_id: DIGITS_ID,
  trace_id: DIGITS_ID,
  timestamp: Type.Integer({ minimum: 0, maximum: 99_999_999_999, description: 'unix time in seconds' }),
  signature: Type.String({ pattern: '^[0-9a-f]{96}$', description: 'hex SHA-384 (decisions.md §1)' }),
  variable1: freeText(256),
  variable2: freeText(256),
  variable3: freeText(256),
  // Subscription plans and subscriptions (spec §2.6, §2.7, §4.8, §4.9; decisions.md §10)
  plan_id: Type.String({ pattern: '^[A-Za-z0-9_-]{1,32}$', description: 'a plan_id of up to 32 characters' }),
  price_id: Type.String({ pattern: '^[A-Za-z0-9_-]{1,32}$', description: 'a price_id of up to 32 characters' }),
  subscription_id: Type.String({ pattern: '^[A-Za-z0-9_-]{1,32}$', description: 'a subscription_id of up to 32 characters' }),
  cid: text(32),
  name: text(32),
  description: freeText(256),
  subscription_plan_status: Type.Union([Type.Literal('active'), Type.Literal('inactive'), Type.Literal('deleted')], {
    description: 'active, inactive or deleted',
  }),
  subscription_status: Type.Union([Type.Literal('active'), Type.Literal('inactive'), Type.Literal('expired'), Type.Literal('canceled')], {
    description: 'active, inactive, expired or canceled',
  }),
  billing_cycle: Type.Union(
    BILLING_CYCLES.map((c) => Type.Literal(c)),
    { description: BILLING_CYCLES.join(', ') },
  ),
  trial_period: Type.Integer({ minimum: 0, maximum: 3650, description: 'a whole number from 0 to 3650' }),
  trial_period_cycle: Type.Union(
    TRIAL_UNITS.map((u) => Type.Literal(u)),
    { description: 'days or months' },
  ),
  expiration_cycles: Type.Integer({ minimum: 0, maximum: 10_000, description: 'a whole number from 0 (no end) to 10000' }),
  retries_number: Type.Integer({ minimum: 0, maximum: 10, description: 'a whole number from 0 to 10' }),
  retries_delay_days: Type.Integer({ minimum: 1, maximum: 30, description: 'a whole number of days from 1 to 30' }),
  activate: Type.Union([Type.Boolean(), Type.Literal('true'), Type.Literal('false')], {
    description: 'true or false (JSON boolean or text)',
  }),
  prices: Type.Array(
    Type.Object(
      {
        amount: Type.Integer({ minimum: 1, maximum: MAX_AMOUNT }),
        currency: Type.String({ pattern: '^[A-Z]{3}$' }),
      },
      { additionalProperties: false },
    ),
    {
      minItems: 1,
      maxItems: 50,
      description: 'a list of 1 to 50 prices, each {"amount": minor units, "currency": a known ISO 4217 code}',
    },
  ),
  page: Type.Union([Type.Integer({ minimum: 1 }), Type.String({ pattern: '^[1-9][0-9]{0,6}$' })], { description: 'a page number from 1' }),
  page_size: Type.Union([Type.Integer({ minimum: 1 }), Type.String({ pattern: '^[1-9][0-9]{0,2}$' })], {
    description: `a whole number from 1 to ${MAX_PAGE_SIZE}`,
  }),
  // Cashier sessions (spec §2.1, §4.3-4.6; issue 5). Per-endpoint lengths: CASHIER_FIELDS below.
  locale: Type.String({
    maxLength: 5,
    pattern: '^[A-Za-z]{2}([-_][A-Za-z]{2})?$',
    description: 'a language code, optionally with a region: en, de-DE, es_ES',
  }),
  payment_method: text(50),
  balance: Type.Integer({ minimum: 0, maximum: MAX_AMOUNT, description: `the customer's balance in minor units, 0 to ${MAX_AMOUNT}` }),
  profile: Type.Union([Type.Integer({ minimum: 0, maximum: 99 }), Type.String({ pattern: '^[0-9]{1,2}$' })], {
    description: 'a profile level of up to 2 digits',
  }),
} as const;

/**
 * Where a cashier session call (spec §4.3-4.6) gives a field another length than the dictionary:
 * frontend varchar(50) in init-checkout and init-pay-out (and init-pay-out-order), state
 * varchar(3) in every init-* call, phone at least 9 digits in init-pay-in, payment_method
 * varchar(10) in init-checkout and varchar(32) in init-pay-out (varchar(50) in init-pay-in: the
 * dictionary's).
 */
export const CASHIER_FIELDS = {
  frontend: text(50),
  state: Type.String({ maxLength: 3, pattern: '^[A-Za-z0-9]*$', description: 'a state code of up to 3 letters or digits, or empty' }),
  phone_pay_in: Type.Union(
    [Type.Integer({ minimum: 100_000_000, maximum: 999_999_999_999_999 }), Type.String({ pattern: '^[0-9]{9,20}$' })],
    { description: '9 to 20 digits including the country code' },
  ),
  payment_method_checkout: text(10),
  payment_method_pay_out: text(32),
} as const;

/** v1.3 requests: version is v1.3 or 1.3 (decisions.md §10), absent meaning v1.3 (spec §4.8 "default v1.3"). */
export const V13_VERSION = Type.Union([Type.Literal('v1.3'), Type.Literal('1.3')], { description: 'v1.3 or 1.3' });

/** Spec §4.8 gives the subscription's notification_url 50 characters, not the dictionary's 256. */
export const SUBSCRIPTION_NOTIFICATION_URL = url(50);

export type FieldName = keyof typeof FIELDS;

type Presence = 'required' | 'optional';
export type Shape = { readonly [K in FieldName]?: Presence };

type RequiredKeys<S extends Shape> = { [K in keyof S & FieldName]: S[K] extends 'required' ? K : never }[keyof S & FieldName];
type OptionalKeys<S extends Shape> = Exclude<keyof S & FieldName, RequiredKeys<S>>;
type ValueOf<S extends Shape> = { -readonly [K in RequiredKeys<S>]: Static<(typeof FIELDS)[K]> } & {
  -readonly [K in OptionalKeys<S>]?: Static<(typeof FIELDS)[K]>;
};
type ExtraValue<E extends ExtraSchemas> = { -readonly [K in keyof E]: Static<E[K]> };

type ExtraSchemas = { readonly [key: string]: TSchema };

export type FieldError = { readonly field: string; readonly description: string };
/**
 * A refused body: every problem found, in the order of the route's schema (docs/errors.md,
 * "Every problem at once"); `error` is the first of them.
 */
export type FieldsRefused = { readonly ok: false; readonly error: FieldError; readonly errors: readonly FieldError[] };
export type Parsed<T> = { readonly ok: true; readonly value: T } | FieldsRefused;

/** A schema names at most this many problems: more than any route has fields, a bound all the same. */
export const MAX_PROBLEMS = 60;

/** The refusal naming these problems, the first one first, in the order given. */
export function fieldsRefused(first: FieldError, others: readonly FieldError[] = []): FieldsRefused {
  return { ok: false, error: first, errors: [first, ...others].slice(0, MAX_PROBLEMS) };
}

/** The validated body type of a BodySchema. */
export type BodyOf<B> = B extends BodySchema<infer T> ? T : never;

export interface BodySchema<T> {
  /** The JSON schema, for /openapi.json. */
  readonly schema: TObject;
  /** Checks every declared field in order and names each one that is missing or wrong, in that order. */
  parse(body: Readonly<Record<string, unknown>>): Parsed<T>;
}

interface CompiledField {
  readonly name: string;
  readonly required: boolean;
  /** The schema's checks with string lengths left to `lengths` (TypeBox counts UTF-16 units). */
  readonly check: TypeCheck<TSchema>;
  /** The schema's own string length bounds, counted in characters (code points). */
  readonly lengths: { readonly min: number; readonly max: number } | null;
  /** A text that must hold something other than white space (text() fields). */
  readonly needs_content: boolean;
  readonly rule: string;
}

/**
 * A copy of a string schema whose maxLength holds any text of maxLength characters in UTF-16
 * units (a character takes at most two), so that the exact bound is counted in characters by
 * the caller. Other schemas are compiled as they are: their strings are digits or codes.
 */
function lengthsAndCheck(schema: TSchema): { check: TypeCheck<TSchema>; lengths: CompiledField['lengths'] } {
  if (schema.type !== 'string' || (schema.maxLength === undefined && schema.minLength === undefined)) {
    return { check: TypeCompiler.Compile(schema), lengths: null };
  }
  const max = typeof schema.maxLength === 'number' ? schema.maxLength : Number.MAX_SAFE_INTEGER;
  const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const relaxed = { ...schema, minLength: undefined, maxLength: max === Number.MAX_SAFE_INTEGER ? undefined : max * 2 } as TSchema;
  return { check: TypeCompiler.Compile(relaxed), lengths: { min, max } };
}

/** Why a value the schema accepted is still not acceptable: its length in characters. */
function textRuleBroken(value: unknown, field: CompiledField): string | null {
  if (typeof value !== 'string') return null;
  if (field.lengths !== null) {
    const length = characterLength(value);
    if (length < field.lengths.min || length > field.lengths.max) return `expected ${field.rule}`;
  }
  return null;
}

function ruleOf(schema: TSchema): string {
  if (typeof schema.description === 'string') return schema.description;
  if (typeof schema.const === 'string') return `exactly "${schema.const}"`;
  return 'a valid value';
}

/** What is wrong with one field's value, worded as the answer's description names it; null when nothing is. */
function fieldProblem(field: CompiledField, value: unknown): string | null {
  if (value === undefined || value === null) return field.required ? `Missing required field: ${field.name}` : null;
  // Control characters, broken Unicode and blank text named as such, before the field's own rule.
  const problem = typeof value === 'string' ? textProblem(value) : null;
  if (problem !== null) return `Invalid field: ${field.name} (${describeTextProblem(problem)})`;
  if (field.needs_content && typeof value === 'string' && value !== '' && !hasContent(value)) {
    return `Invalid field: ${field.name} (must not be only spaces)`;
  }
  const refine = REFINEMENTS[field.name];
  if (!field.check.Check(value) || (refine !== undefined && !refine(value))) return `Invalid field: ${field.name} (expected ${field.rule})`;
  const broken = textRuleBroken(value, field);
  return broken === null ? null : `Invalid field: ${field.name} (${broken})`;
}

/**
 * A route's body: fields from the dictionary by presence, plus route-specific schemas
 * (a version or transaction_type literal). Other fields are allowed (they are signed) but unused.
 */
export function bodySchema<S extends Shape, E extends ExtraSchemas = Record<never, never>>(
  shape: S,
  extra?: E,
): BodySchema<ValueOf<S> & ExtraValue<E>> {
  const properties: TProperties = {};
  const compiled: CompiledField[] = [];
  const add = (name: string, schema: TSchema, required: boolean) => {
    properties[name] = required ? schema : Type.Optional(schema);
    compiled.push({ name, required, ...lengthsAndCheck(schema), needs_content: schema.pattern === SOME_CONTENT, rule: ruleOf(schema) });
  };
  for (const [name, presence] of Object.entries(shape) as [FieldName, Presence][]) add(name, FIELDS[name], presence === 'required');
  for (const [name, schema] of Object.entries(extra ?? {}))
    add(name, schema, (schema as { [OptionalKind]?: string })[OptionalKind] !== 'Optional');
  const schema = Type.Object(properties);
  return {
    schema,
    parse(body) {
      const problems: FieldError[] = [];
      for (const field of compiled) {
        const problem = fieldProblem(field, body[field.name]);
        if (problem !== null) problems.push({ field: field.name, description: problem });
        if (problems.length >= MAX_PROBLEMS) break;
      }
      const [first, ...others] = problems;
      if (first !== undefined) return fieldsRefused(first, others);
      return { ok: true, value: body as ValueOf<S> & ExtraValue<E> };
    },
  };
}

export function literal<T extends string>(value: T): ReturnType<typeof Type.Literal<T>> {
  return Type.Literal(value, { description: `exactly "${value}"` });
}
