// Reads Stripe's request encoding: application/x-www-form-urlencoded bodies and query strings with
// bracket notation (`metadata[paygate_trace_id]=42`, `payment_method_data[card][number]=4242…`,
// arrays as `expand[0]=x` as the official stripe package sends them, or `expand[]=x`), decoded
// into nested objects the way Stripe reads them (https://docs.stripe.com/api/metadata,
// https://docs.stripe.com/api/expanding_objects), then typed by the operation's schema: every
// value arrives as text, so a field the schema declares integer, number or boolean is read as one
// when it spells one ("42", "true"), and an object whose keys are 0…n-1 is read as a list where
// the schema declares a list. A value that does not spell its type is left as text, for the
// validator to report. Test code only.
import type { JsonObject } from './description.js';

/** Bounds on one form: Stripe's own requests are far below these. */
export const FORM_MAX_PAIRS = 1000;
export const FORM_MAX_DEPTH = 8;
const MAX_INDEX = 1000;

export type FormValue = string | FormValue[] | { [key: string]: FormValue };

export interface DecodedForm {
  readonly value: { [key: string]: FormValue };
  /** Keys that could not be read (unbalanced brackets, a name used both as a value and as a hash, …). */
  readonly problems: readonly string[];
}

/** Decodes a form body or query string (without "?") into nested objects; leaves are text. */
export function decodeStripeForm(text: string): DecodedForm {
  const value: { [key: string]: FormValue } = {};
  const problems: string[] = [];
  const params = new URLSearchParams(text);
  let count = 0;
  for (const [key, raw] of params) {
    count += 1;
    if (count > FORM_MAX_PAIRS) {
      problems.push(`more than ${FORM_MAX_PAIRS} parameters`);
      break;
    }
    const path = parseKey(key);
    if (!path) {
      problems.push(`cannot read the parameter name ${JSON.stringify(key)}`);
      continue;
    }
    if (path.length > FORM_MAX_DEPTH) {
      problems.push(`${key} nests deeper than ${FORM_MAX_DEPTH} levels`);
      continue;
    }
    const problem = assign(value, path, raw, key);
    if (problem) problems.push(problem);
  }
  return { value, problems };
}

/** `a[b][0][]` → ['a', 'b', '0', '']; null when the brackets do not balance. */
function parseKey(key: string): string[] | null {
  const open = key.indexOf('[');
  if (open < 0) return key === '' ? null : [key];
  const head = key.slice(0, open);
  if (head === '') return null;
  const path = [head];
  let rest = key.slice(open);
  while (rest.length > 0) {
    const m = /^\[([^[\]]*)\]/.exec(rest);
    if (!m) return null;
    path.push(m[1] ?? '');
    rest = rest.slice(m[0].length);
  }
  return path;
}

function assign(root: { [key: string]: FormValue }, path: readonly string[], raw: string, key: string): string | null {
  let container: { [key: string]: FormValue } | FormValue[] = root;
  for (let i = 0; i < path.length; i += 1) {
    const segment = path[i] ?? '';
    const last = i === path.length - 1;
    if (Array.isArray(container)) {
      if (segment !== '') return `${key}: a list given with [] cannot take named members`;
      if (!last) return `${key}: [] followed by more brackets is not supported`;
      if (container.length >= MAX_INDEX) return `${key}: more than ${MAX_INDEX} list members`;
      container.push(raw);
      return null;
    }
    if (segment === '') return `${key}: an empty bracket is only allowed for a list`;
    if (last) {
      if (segment in container && typeof container[segment] !== 'string') return `${key}: ${segment} is already a hash or a list`;
      if (segment in container) return `${key} is given more than once`;
      container[segment] = raw;
      return null;
    }
    const next_is_push = path[i + 1] === '';
    const existing: FormValue | undefined = container[segment];
    if (existing === undefined) {
      const created: { [key: string]: FormValue } | FormValue[] = next_is_push ? [] : {};
      container[segment] = created;
      container = created;
    } else if (typeof existing === 'string') return `${key}: ${segment} is already a plain value`;
    else if (Array.isArray(existing) !== next_is_push) return `${key}: ${segment} is used both as a list and as a hash`;
    else container = existing;
  }
  return null;
}

/** Looks up `#/components/schemas/<name>` references. */
export type SchemaResolver = (ref: string) => JsonObject | undefined;

/**
 * Types a decoded value by an OpenAPI schema: integers, numbers and booleans from their text,
 * lists from `0…n-1` hashes, members of objects by their declared schemas, `anyOf`/`oneOf` by the
 * first member the value can be read as. Anything else is returned as it is.
 */
export function coerceByStripeSchema(value: unknown, schema: unknown, resolve: SchemaResolver, depth = 0): unknown {
  if (depth > 32 || typeof schema !== 'object' || schema === null) return value;
  let node = schema as JsonObject;
  if (typeof node.$ref === 'string') {
    const target = resolve(node.$ref);
    if (!target) return value;
    node = target;
  }
  const members = Array.isArray(node.anyOf) ? node.anyOf : Array.isArray(node.oneOf) ? node.oneOf : null;
  if (members) {
    for (const member of members) {
      const coerced = coerceByStripeSchema(value, member, resolve, depth + 1);
      if (shallowFits(coerced, member, resolve)) return coerced;
    }
    return value;
  }
  const type = node.type;
  if (typeof value === 'string') {
    if (type === 'integer' && /^-?\d{1,15}$/.test(value)) return Number(value);
    if (type === 'number' && /^-?\d{1,15}(\.\d{1,15})?$/.test(value)) return Number(value);
    if (type === 'boolean' && (value === 'true' || value === 'false')) return value === 'true';
    return value;
  }
  if (type === 'array') {
    const list = Array.isArray(value) ? value : indexedList(value);
    if (!list) return value;
    return list.map((item) => coerceByStripeSchema(item, node.items, resolve, depth + 1));
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const properties = typeof node.properties === 'object' && node.properties !== null ? (node.properties as JsonObject) : {};
    const extra = node.additionalProperties;
    const out: Record<string, unknown> = {};
    for (const [name, member] of Object.entries(value as Record<string, unknown>)) {
      const member_schema = name in properties ? properties[name] : typeof extra === 'object' ? extra : undefined;
      out[name] = member_schema === undefined ? member : coerceByStripeSchema(member, member_schema, resolve, depth + 1);
    }
    return out;
  }
  return value;
}

/** A hash whose keys are exactly "0"…"n-1", as a list in index order; otherwise null. */
function indexedList(value: unknown): unknown[] | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const keys = Object.keys(value);
  if (keys.length === 0 || keys.length > MAX_INDEX) return null;
  const list: unknown[] = [];
  for (let i = 0; i < keys.length; i += 1) {
    if (!(String(i) in value)) return null;
    list.push((value as Record<string, unknown>)[String(i)]);
  }
  return list;
}

/** Whether a value has the JSON type (and, for an enum of text, one of the values) the schema names. */
function shallowFits(value: unknown, schema: unknown, resolve: SchemaResolver): boolean {
  if (typeof schema !== 'object' || schema === null) return true;
  let node = schema as JsonObject;
  if (typeof node.$ref === 'string') node = resolve(node.$ref) ?? {};
  if (Array.isArray(node.enum) && !node.enum.includes(value)) return false;
  switch (node.type) {
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    case 'boolean':
      return typeof value === 'boolean';
    case 'string':
      return typeof value === 'string';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    default:
      return true;
  }
}

/** The bracket name of a location in a decoded form: ['payment_method_data', 'card', 'number'] → payment_method_data[card][number]. */
export function bracketName(path: readonly (string | number)[]): string {
  const [head, ...rest] = path;
  return `${String(head ?? '')}${rest.map((segment) => `[${String(segment)}]`).join('')}`;
}
