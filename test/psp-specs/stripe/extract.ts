// Cuts the part of Stripe's published OpenAPI description that the tests need out of the whole
// file (stripe/openapi, openapi/spec3.yaml, several MB), and writes it as spec3.subset.json
// beside this script. Test tooling, run by hand when the copy is refreshed (see SOURCE.md):
//
//   git -C <stripe/openapi clone> show <commit>:openapi/spec3.yaml > /tmp/spec3.yaml
//   npx tsx test/psp-specs/stripe/extract.ts /tmp/spec3.yaml
//
// What is kept, unchanged: `openapi`, `info`, `servers`, `security`, `components.securitySchemes`;
// the operations listed in OPERATIONS (each path item keeps only those methods, the objects of an
// operation are copied as they are); every component schema those operations and the ROOT_SCHEMAS
// reference, followed through every `$ref` until none is left out (expandable fields included, so
// no reference points outside the file). Nothing inside a kept schema or operation is altered:
// the output is a subset, key order as in the source. The run prints what it kept and its size.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** The operations the fake processor serves and the connector calls. */
export const OPERATIONS: readonly (readonly [method: string, template: string])[] = [
  ['post', '/v1/payment_intents'],
  ['get', '/v1/payment_intents/{intent}'],
  ['get', '/v1/payment_intents/search'],
  ['post', '/v1/payment_intents/{intent}/capture'],
  ['post', '/v1/payment_intents/{intent}/cancel'],
  ['post', '/v1/refunds'],
  ['get', '/v1/refunds/{refund}'],
  ['get', '/v1/refunds'],
];

/** Schemas kept even when no operation names them: webhook events and what they carry (a dispute: charge.dispute.*). */
export const ROOT_SCHEMAS: readonly string[] = ['payment_intent', 'refund', 'error', 'event', 'charge', 'dispute'];

/** The top-level keys copied as they are. */
const TOP_LEVEL_KEPT = ['openapi', 'info', 'servers', 'security'] as const;
/** Bounds: the whole description is ~4 MB of YAML with ~800 schemas; a deeper walk means a broken input. */
const MAX_INPUT_BYTES = 64 * 1024 * 1024;
const MAX_DEPTH = 200;
const REF_PREFIX = '#/components/schemas/';

export interface SubsetResult {
  readonly document: JsonObject;
  readonly schema_names: readonly string[];
}

/** Builds the subset document from the parsed whole description. */
export function extractSubset(whole: JsonObject): SubsetResult {
  const components = asObject(whole.components, 'components');
  const schemas = asObject(components.schemas, 'components.schemas');
  const all_paths = asObject(whole.paths, 'paths');

  const paths: JsonObject = {};
  for (const [method, template] of OPERATIONS) {
    const item = asObject(all_paths[template], `path ${template}`);
    const operation = item[method];
    if (operation === undefined) throw new Error(`the description has no ${method.toUpperCase()} ${template}`);
    const kept = asObject((paths[template] ??= {}), template);
    kept[method] = operation;
  }
  // Path-level keys other than methods (parameters, summary) are copied too, should there be any.
  for (const template of Object.keys(paths)) {
    const item = asObject(all_paths[template], template);
    for (const [key, value] of Object.entries(item)) {
      if (!['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'].includes(key)) asObject(paths[template], template)[key] = value;
    }
  }

  const wanted = new Set<string>();
  const queue: string[] = [];
  const want = (name: string): void => {
    if (wanted.has(name)) return;
    if (!(name in schemas)) throw new Error(`a reference names the schema ${name}, which the description does not have`);
    wanted.add(name);
    queue.push(name);
  };
  for (const name of ROOT_SCHEMAS) want(name);
  collectRefs(paths, want, 0);
  while (queue.length > 0) {
    const name = queue.shift() as string;
    collectRefs(schemas[name] as Json, want, 0);
  }

  // Schemas in the order the description has them.
  const kept_schemas: JsonObject = {};
  for (const name of Object.keys(schemas)) if (wanted.has(name)) kept_schemas[name] = schemas[name] as Json;

  const document: JsonObject = {};
  for (const key of TOP_LEVEL_KEPT) if (whole[key] !== undefined) document[key] = whole[key] as Json;
  const kept_components: JsonObject = { schemas: kept_schemas };
  if (components.securitySchemes !== undefined) kept_components.securitySchemes = components.securitySchemes;
  document.components = kept_components;
  document.paths = paths;
  return { document, schema_names: Object.keys(kept_schemas) };
}

function collectRefs(node: Json, want: (name: string) => void, depth: number): void {
  if (depth > MAX_DEPTH) throw new Error(`the description nests deeper than ${MAX_DEPTH} levels`);
  if (Array.isArray(node)) {
    for (const item of node) collectRefs(item, want, depth + 1);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const ref = node.$ref;
  if (typeof ref === 'string') {
    if (!ref.startsWith(REF_PREFIX)) throw new Error(`unsupported reference ${ref}`);
    want(ref.slice(REF_PREFIX.length));
  }
  for (const value of Object.values(node)) collectRefs(value, want, depth + 1);
}

function asObject(value: Json | undefined, what: string): JsonObject {
  if (value === null || value === undefined || typeof value !== 'object' || Array.isArray(value)) throw new Error(`${what} is not an object`);
  return value;
}

function main(argv: readonly string[]): void {
  const input = argv[0];
  if (!input) {
    process.stderr.write('usage: npx tsx test/psp-specs/stripe/extract.ts <spec3.yaml or spec3.json> [output]\n');
    process.exit(2);
  }
  const here = path.dirname(fileURLToPath(import.meta.url));
  const output = argv[1] ?? path.join(here, 'spec3.subset.json');
  const size = fs.statSync(input).size;
  if (size > MAX_INPUT_BYTES) throw new Error(`${input} is ${size} bytes (limit ${MAX_INPUT_BYTES})`);
  const text = fs.readFileSync(input, 'utf8');
  const whole = (input.endsWith('.json') ? JSON.parse(text) : parseYaml(text, { maxAliasCount: -1 })) as Json;
  const { document, schema_names } = extractSubset(asObject(whole, 'the description'));
  const out = `${JSON.stringify(document, null, 2)}\n`;
  fs.writeFileSync(output, out);
  const info = asObject(document.info, 'info');
  process.stdout.write(
    `input ${input}: ${size} bytes, sha256 ${crypto.createHash('sha256').update(text).digest('hex')}, API version ${String(info.version)}\n`
      + `kept ${OPERATIONS.length} operations and ${schema_names.length} of ${Object.keys(asObject(asObject(asObject(whole, 'd').components, 'c').schemas, 's')).length} schemas\n`
      + `wrote ${output}: ${Buffer.byteLength(out)} bytes, sha256 ${crypto.createHash('sha256').update(out).digest('hex')}\n`,
  );
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main(process.argv.slice(2));
