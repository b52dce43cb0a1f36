// Assembles Checkout.com's published OpenAPI 3 description (copied unchanged into
// test/psp-specs/checkout.com/nas_spec) into one document, the way that repository's own build
// (swagger-repo) did: `paths/**/a@{id}@b.yaml` is the path `/a/{id}/b`, and every
// `components/<kind>/**/Name.yaml` becomes `components.<kind>.Name`. Our own supplement
// (paygate-supplement.yaml, written by us, see SOURCE.md) is merged on top: it may add operations
// and components but never replace one, may add discriminator mappings, and may add alternatives
// (`oneOf` members) to the JSON body of an operation of Checkout.com's text, after its own
// members, which stay as they are. Anything else in it is refused. Test code only: the project
// never reads the description at run time.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { describedOperations, descriptionObject, type DescribedOperation, type JsonObject } from '../fake-processor/openapi-operations.js';

export type { JsonObject };

export interface CheckoutDescription {
  /** The assembled OpenAPI 3.0 document (paths, components, info, …). */
  readonly document: JsonObject;
  /** Operations and components that came from our supplement, not from Checkout.com ("GET /payments", "schemas.Name"). */
  readonly supplemented: readonly string[];
}

/** test/psp-specs/checkout.com, found from this file's place in the repository. */
export const CHECKOUT_SPEC_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../psp-specs/checkout.com');

const SUPPLEMENT_FILE = 'paygate-supplement.yaml';
/** What the supplement may hold; anything else (a misspelt key would otherwise be ignored silently) is refused. */
const SUPPLEMENT_KEYS = ['x-paygate-supplement', 'paths', 'components', 'x-paygate-discriminator-additions', 'x-paygate-body-alternatives'];
/** Bounds on what the loader reads: the copied description has 376 files of at most ~60 KiB. */
const MAX_FILES = 2000;
const MAX_FILE_BYTES = 512 * 1024;
const MAX_DEPTH = 8;

/** Reads and assembles the description under `dir` (default: the project's copy). */
export function loadCheckoutDescription(dir: string = CHECKOUT_SPEC_DIR): CheckoutDescription {
  const spec_dir = path.join(dir, 'nas_spec');
  const document = readYamlObject(path.join(spec_dir, 'swagger.yaml'));
  const counter = { files: 1 };

  const paths: JsonObject = {};
  for (const file of yamlFilesUnder(path.join(spec_dir, 'paths'), counter)) {
    const template = '/' + path.basename(file, '.yaml').replace(/@/g, '/');
    if (template in paths) throw new Error(`checkout description: two files for the path ${template}`);
    paths[template] = readYamlObject(file);
  }
  document.paths = paths;

  const components: Record<string, JsonObject> = {};
  const components_dir = path.join(spec_dir, 'components');
  for (const kind of fs.readdirSync(components_dir, { withFileTypes: true })) {
    if (!kind.isDirectory()) continue;
    const of_kind: JsonObject = {};
    for (const file of yamlFilesUnder(path.join(components_dir, kind.name), counter)) {
      const name = path.basename(file, '.yaml');
      if (name in of_kind) throw new Error(`checkout description: two components named ${kind.name}.${name}`);
      of_kind[name] = readYamlObject(file);
    }
    components[kind.name] = of_kind;
  }
  document.components = components;

  const supplemented = mergeSupplement(document, readYamlObject(path.join(dir, SUPPLEMENT_FILE)));
  return { document, supplemented };
}

/**
 * Adds the supplement's paths, components, `x-paygate-discriminator-additions` and
 * `x-paygate-body-alternatives` to the assembled document. Anything that would replace
 * Checkout.com's own text is an error.
 */
function mergeSupplement(document: JsonObject, supplement: JsonObject): string[] {
  for (const key of Object.keys(supplement)) {
    if (!SUPPLEMENT_KEYS.includes(key))
      throw new Error(`supplement: unknown top-level key ${key} (allowed: ${SUPPLEMENT_KEYS.join(', ')})`);
  }
  const added: string[] = [];
  const paths = document.paths as JsonObject;
  // The operations of Checkout.com's own text, before the supplement adds any: only those take body alternatives.
  const original_operations = new Set(operationsOf(document).map(({ method, template }) => `${method} ${template}`));
  for (const [template, item] of Object.entries(asObject(supplement.paths ?? {}, 'supplement paths'))) {
    const target = asObject((paths[template] ??= {}), `path ${template}`);
    for (const [method, operation] of Object.entries(asObject(item, `supplement path ${template}`))) {
      if (method in target) throw new Error(`supplement: ${method.toUpperCase()} ${template} already exists in the description`);
      target[method] = operation;
      added.push(`${method.toUpperCase()} ${template}`);
    }
  }
  const components = document.components as Record<string, JsonObject>;
  for (const [kind, entries] of Object.entries(asObject(asObject(supplement.components ?? {}, 'supplement components'), 'components'))) {
    const target = (components[kind] ??= {});
    for (const [name, value] of Object.entries(asObject(entries, `supplement components.${kind}`))) {
      if (name in target) throw new Error(`supplement: components.${kind}.${name} already exists in the description`);
      target[name] = value;
      added.push(`${kind}.${name}`);
    }
  }
  const schemas = components.schemas ?? {};
  const additions = asObject(supplement['x-paygate-discriminator-additions'] ?? {}, 'x-paygate-discriminator-additions');
  for (const [name, mapping] of Object.entries(additions)) {
    const schema = asObject(schemas[name], `schema ${name}`);
    const discriminator = asObject(schema.discriminator, `discriminator of ${name}`);
    // The copied file's object is replaced by a new one: the YAML on disk is never written.
    const merged: JsonObject = { ...asObject(discriminator.mapping ?? {}, `mapping of ${name}`) };
    for (const [value, ref] of Object.entries(asObject(mapping, `additions for ${name}`))) {
      if (value in merged) throw new Error(`supplement: ${name} already maps ${value}`);
      merged[value] = ref;
      added.push(`discriminator ${name}.${value}`);
    }
    schemas[name] = { ...schema, discriminator: { ...discriminator, mapping: merged } };
  }
  const supplement_schemas = new Set(added.filter((entry) => entry.startsWith('schemas.')).map((entry) => entry.slice('schemas.'.length)));
  const alternatives = supplement['x-paygate-body-alternatives'] ?? [];
  if (!Array.isArray(alternatives)) throw new Error('checkout description: x-paygate-body-alternatives is not a list');
  for (const [index, raw] of alternatives.entries()) {
    added.push(
      addBodyAlternative(document, asObject(raw, `x-paygate-body-alternatives[${index}]`), original_operations, supplement_schemas),
    );
  }
  return added;
}

/**
 * One `x-paygate-body-alternatives` entry: `{operation: "POST /payments", body: "request" or
 * "response <status>", add: "#/components/schemas/<a schema of the supplement>"}`. The body's
 * JSON schema must be a `oneOf` (the new member goes after Checkout.com's, which are kept as they
 * are, in their order) or a lone `$ref` (it becomes `oneOf: [that $ref, the new one]`); any other
 * schema would have to be rewritten, and is refused. The objects on the way (operation, body,
 * content, media type, schema) are replaced by copies; Checkout.com's members are not touched.
 */
function addBodyAlternative(
  document: JsonObject,
  entry: JsonObject,
  original_operations: ReadonlySet<string>,
  supplement_schemas: ReadonlySet<string>,
): string {
  for (const key of Object.keys(entry)) {
    if (!['operation', 'body', 'add'].includes(key)) throw new Error(`supplement: body alternative has unknown key ${key}`);
  }
  const { operation: key, body, add } = entry;
  if (typeof key !== 'string' || typeof body !== 'string' || typeof add !== 'string')
    throw new Error('supplement: a body alternative needs operation, body and add (all text)');
  const m = /^([A-Z]+) (\/\S*)$/.exec(key);
  if (!m || !original_operations.has(key))
    throw new Error(`supplement: body alternative for ${key}, which is no operation of Checkout.com's description`);
  const method = (m[1] ?? '').toLowerCase();
  const template = m[2] ?? '';
  const prefix = '#/components/schemas/';
  const name = add.startsWith(prefix) ? add.slice(prefix.length) : '';
  if (!supplement_schemas.has(name)) throw new Error(`supplement: body alternative ${add} is not a schema the supplement adds`);

  const item = asObject(asObject(document.paths, 'paths')[template], `path ${template}`);
  const operation = asObject(item[method], key);
  let holder: JsonObject;
  let rebuild: (next_holder: JsonObject) => JsonObject;
  const status = /^response (\d{3})$/.exec(body)?.[1];
  if (body === 'request') {
    holder = asObject(operation.requestBody, `request body of ${key}`);
    rebuild = (next_holder) => ({ ...operation, requestBody: next_holder });
  } else if (status !== undefined) {
    const responses = asObject(operation.responses, `responses of ${key}`);
    holder = asObject(responses[status], `response ${status} of ${key}`);
    rebuild = (next_holder) => ({ ...operation, responses: { ...responses, [status]: next_holder } });
  } else throw new Error(`supplement: body alternative for ${key}: body must be "request" or "response <status>", not ${body}`);
  const where = `${key} ${body}`;
  const content = asObject(holder.content, `content of ${where}`);
  const media = asObject(content['application/json'], `JSON body of ${where}`);
  const schema = asObject(media.schema, `schema of ${where}`);

  let members: unknown[];
  let rest: JsonObject;
  if (Array.isArray(schema.oneOf) && Object.keys(schema).every((k) => k === 'oneOf' || k === 'description')) {
    const { oneOf, ...others } = schema;
    members = [...(oneOf as unknown[])];
    rest = others;
  } else if (typeof schema.$ref === 'string' && Object.keys(schema).length === 1) {
    members = [{ $ref: schema.$ref }];
    rest = {};
  } else
    throw new Error(
      `supplement: the schema of ${where} is neither a oneOf nor a lone $ref; an alternative cannot be added without rewriting it`,
    );
  if (members.some((member) => typeof member === 'object' && member !== null && (member as JsonObject).$ref === add)) {
    throw new Error(`supplement: ${where} has ${add} already`);
  }
  const next_schema = { ...rest, oneOf: [...members, { $ref: add }] };
  const next_holder = { ...holder, content: { ...content, 'application/json': { ...media, schema: next_schema } } };
  item[method] = rebuild(next_holder);
  return `${body} alternative ${key} ${name}`;
}

function yamlFilesUnder(dir: string, counter: { files: number }, depth = 0): string[] {
  if (depth > MAX_DEPTH) throw new Error(`checkout description: folders nested deeper than ${MAX_DEPTH} at ${dir}`);
  const found: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...yamlFilesUnder(full, counter, depth + 1));
    else if (entry.isFile() && entry.name.endsWith('.yaml')) {
      counter.files += 1;
      if (counter.files > MAX_FILES) throw new Error(`checkout description: more than ${MAX_FILES} files`);
      found.push(full);
    }
  }
  return found;
}

function readYamlObject(file: string): JsonObject {
  const size = fs.statSync(file).size;
  if (size > MAX_FILE_BYTES) throw new Error(`checkout description: ${file} is ${size} bytes (limit ${MAX_FILE_BYTES})`);
  const parsed: unknown = parseYaml(fs.readFileSync(file, 'utf8'));
  return asObject(parsed, file);
}

export function asObject(value: unknown, what: string): JsonObject {
  return descriptionObject(value, what, 'checkout description');
}

export function operationsOf(document: JsonObject): DescribedOperation[] {
  return describedOperations(document, 'checkout description');
}
