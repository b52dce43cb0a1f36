// The field dictionary of spec §2.1: each field's type, length and rule, written once and
// reused by every route's schema. The same TypeBox schemas validate requests, type the
// handlers (Static<>) and appear in /openapi.json.
import { isIP } from 'node:net';
import { OptionalKind, type Static, type TObject, type TProperties, type TSchema, type TString, Type } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { isKnownCurrency } from '../domain/money.js';

const MAX_AMOUNT = Number.MAX_SAFE_INTEGER;

function text(max: number, description = `text of 1 to ${max} characters`): TString {
  // No control characters: they have no place in these fields and confuse logs and pages.
  return Type.String({ minLength: 1, maxLength: max, pattern: '^[^\\u0000-\\u001f\\u007f]*$', description });
}

function url(max: number): TString {
  return Type.String({ maxLength: max, pattern: '^https?://[^\\s/?#]+[^\\s]*$', description: `an http(s) URL of up to ${max} characters` });
}

const DIGITS_ID = Type.Union([
  Type.Integer({ minimum: 1, maximum: 99_999_999_999 }),
  Type.String({ pattern: '^[1-9][0-9]{0,10}$' }),
], { description: 'a trace_id: a positive integer of up to 11 digits' });

/** Extra checks a JSON schema cannot express; each returns true when the value is acceptable. */
const REFINEMENTS: Readonly<Record<string, (value: unknown) => boolean>> = {
  currency: (value) => isKnownCurrency(value as string),
  requester_ip: (value) => isIP(value as string) !== 0,
  dob: (value) => validDate(value as string),
};

function validDate(value: string): boolean {
  const iso = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  const us = /^(\d{2})\/(\d{2})\/(\d{4})$/.exec(value);
  const [year, month, day] = iso ? [iso[1], iso[2], iso[3]] : us ? [us[3], us[1], us[2]] : [];
  if (!year || !month || !day) return false;
  const date = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  return date.getUTCFullYear() === Number(year) && date.getUTCMonth() === Number(month) - 1 && date.getUTCDate() === Number(day)
    && Number(year) >= 1900;
}

export const FIELDS = {
  amount: Type.Integer({ minimum: 1, maximum: MAX_AMOUNT, description: `a whole number of minor units, 1 to ${MAX_AMOUNT}` }),
  currency: Type.String({ pattern: '^[A-Z]{3}$', maxLength: 10, description: 'an ISO 4217 code the gateway knows, such as USD' }),
  card_number: Type.String({ pattern: '^[0-9]{12,19}$', maxLength: 19, description: '12 to 19 digits' }),
  card_exp: Type.String({ pattern: '^(0[1-9]|1[0-2])/([0-9]{2}|[0-9]{4})$', maxLength: 8, description: 'MM/YYYY' }),
  cvv: Type.String({ pattern: '^[0-9]{3,4}$', maxLength: 4, description: '3 or 4 digits' }),
  card_token: Type.String({ pattern: '^[A-Za-z0-9]{1,32}$', description: 'a card_token of up to 32 characters' }),
  pin: text(50),
  dob: Type.String({ maxLength: 10, pattern: '^([0-9]{4}-[0-9]{2}-[0-9]{2}|[0-9]{2}/[0-9]{2}/[0-9]{4})$', description: 'a date as YYYY-MM-DD or MM/DD/YYYY' }),
  email: Type.String({ maxLength: 50, pattern: '^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$', description: 'an e-mail address of up to 50 characters' }),
  phone: Type.Union([
    Type.Integer({ minimum: 100_000, maximum: 999_999_999_999_999 }),
    Type.String({ pattern: '^[0-9]{6,20}$' }),
  ], { description: '6 to 20 digits including the country code' }),
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
  variable1: Type.String({ maxLength: 256, description: 'free text of up to 256 characters' }),
  variable2: Type.String({ maxLength: 256, description: 'free text of up to 256 characters' }),
  variable3: Type.String({ maxLength: 256, description: 'free text of up to 256 characters' }),
} as const;

export type FieldName = keyof typeof FIELDS;

type Presence = 'required' | 'optional';
export type Shape = { readonly [K in FieldName]?: Presence };

type RequiredKeys<S extends Shape> = { [K in keyof S & FieldName]: S[K] extends 'required' ? K : never }[keyof S & FieldName];
type OptionalKeys<S extends Shape> = Exclude<keyof S & FieldName, RequiredKeys<S>>;
type ValueOf<S extends Shape> = { -readonly [K in RequiredKeys<S>]: Static<(typeof FIELDS)[K]> }
  & { -readonly [K in OptionalKeys<S>]?: Static<(typeof FIELDS)[K]> };
type ExtraValue<E extends ExtraSchemas> = { -readonly [K in keyof E]: Static<E[K]> };

type ExtraSchemas = { readonly [key: string]: TSchema };

export type FieldError = { readonly field: string; readonly description: string };
export type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: FieldError };

/** The validated body type of a BodySchema. */
export type BodyOf<B> = B extends BodySchema<infer T> ? T : never;

export interface BodySchema<T> {
  /** The JSON schema, for /openapi.json. */
  readonly schema: TObject;
  /** Checks every declared field in order and names the first one that is missing or wrong. */
  parse(body: Readonly<Record<string, unknown>>): Parsed<T>;
}

interface CompiledField {
  readonly name: string;
  readonly required: boolean;
  readonly check: TypeCheck<TSchema>;
  readonly rule: string;
}

function ruleOf(schema: TSchema): string {
  if (typeof schema.description === 'string') return schema.description;
  if (typeof schema.const === 'string') return `exactly "${schema.const}"`;
  return 'a valid value';
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
    compiled.push({ name, required, check: TypeCompiler.Compile(schema), rule: ruleOf(schema) });
  };
  for (const [name, presence] of Object.entries(shape) as [FieldName, Presence][]) add(name, FIELDS[name], presence === 'required');
  for (const [name, schema] of Object.entries(extra ?? {})) add(name, schema, (schema as { [OptionalKind]?: string })[OptionalKind] !== 'Optional');
  const schema = Type.Object(properties);
  return {
    schema,
    parse(body) {
      for (const field of compiled) {
        const value = body[field.name];
        if (value === undefined || value === null) {
          if (field.required) return { ok: false, error: { field: field.name, description: `Missing required field: ${field.name}` } };
          continue;
        }
        const refine = REFINEMENTS[field.name];
        if (!field.check.Check(value) || (refine !== undefined && !refine(value))) {
          return { ok: false, error: { field: field.name, description: `Invalid field: ${field.name} (expected ${field.rule})` } };
        }
      }
      return { ok: true, value: body as ValueOf<S> & ExtraValue<E> };
    },
  };
}

export function literal<T extends string>(value: T): ReturnType<typeof Type.Literal<T>> {
  return Type.Literal(value, { description: `exactly "${value}"` });
}
