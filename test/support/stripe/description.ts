// Loads the part of Stripe's published OpenAPI 3.0 description the tests use
// (test/psp-specs/stripe/spec3.subset.json, cut unchanged out of stripe/openapi by extract.ts
// beside it, see SOURCE.md) and merges our supplement (paygate-supplement.json, written by us):
// the supplement may only add properties to an object and values to an array at a JSON pointer;
// anything that would replace Stripe's text, or any key it does not know, is refused. Test code
// only: the project never reads the description at run time.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  describedOperations,
  descriptionObject,
  HTTP_METHODS,
  type DescribedOperation,
  type JsonObject,
} from '../fake-processor/openapi-operations.js';

export type { JsonObject };

export interface StripeDescription {
  /** The OpenAPI 3.0 document: Stripe's subset with the supplement's additions. */
  readonly document: JsonObject;
  /** What the supplement added, e.g. "add /paths/…/properties/card". */
  readonly supplemented: readonly string[];
}

/** test/psp-specs/stripe, found from this file's place in the repository. */
export const STRIPE_SPEC_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../psp-specs/stripe');
export const SUBSET_FILE = 'spec3.subset.json';
export const SUPPLEMENT_FILE = 'paygate-supplement.json';

/** The subset is ~1.2 MB; a file far larger means something other than the subset was written there. */
const MAX_FILE_BYTES = 8 * 1024 * 1024;
const SUPPLEMENT_KEYS = ['x-paygate-supplement', 'additions'];
const ADDITION_KEYS = ['why', 'at', 'add', 'append'];
const MAX_ADDITIONS = 100;
export { HTTP_METHODS };

/** Reads the description under `dir` (default: the project's copy) with the supplement merged. */
export function loadStripeDescription(dir: string = STRIPE_SPEC_DIR): StripeDescription {
  const document = readJsonObject(path.join(dir, SUBSET_FILE));
  const supplement = readJsonObject(path.join(dir, SUPPLEMENT_FILE));
  return { document, supplemented: mergeSupplement(document, supplement) };
}

/** Applies the supplement's additions to `document` (mutated); returns what was added. */
export function mergeSupplement(document: JsonObject, supplement: JsonObject): string[] {
  for (const key of Object.keys(supplement)) {
    if (!SUPPLEMENT_KEYS.includes(key))
      throw new Error(`stripe supplement: unknown top-level key ${key} (allowed: ${SUPPLEMENT_KEYS.join(', ')})`);
  }
  const additions = supplement.additions ?? [];
  if (!Array.isArray(additions)) throw new Error('stripe supplement: additions is not a list');
  if (additions.length > MAX_ADDITIONS) throw new Error(`stripe supplement: more than ${MAX_ADDITIONS} additions`);
  const added: string[] = [];
  for (const [index, raw] of additions.entries()) {
    const entry = asObject(raw, `additions[${index}]`);
    for (const key of Object.keys(entry)) {
      if (!ADDITION_KEYS.includes(key)) throw new Error(`stripe supplement: additions[${index}] has unknown key ${key}`);
    }
    if (typeof entry.at !== 'string') throw new Error(`stripe supplement: additions[${index}].at must be a JSON pointer`);
    if ((entry.add === undefined) === (entry.append === undefined))
      throw new Error(`stripe supplement: additions[${index}] needs exactly one of add, append`);
    const target = resolvePointer(document, entry.at);
    if (entry.add !== undefined) {
      const into = asObject(target, `the object at ${entry.at}`);
      for (const [name, value] of Object.entries(asObject(entry.add, `additions[${index}].add`))) {
        if (name in into) throw new Error(`stripe supplement: ${entry.at}/${name} already exists in Stripe's description`);
        into[name] = value;
        added.push(`add ${entry.at}/${name}`);
      }
    } else {
      if (!Array.isArray(target)) throw new Error(`stripe supplement: ${entry.at} is not a list`);
      if (!Array.isArray(entry.append)) throw new Error(`stripe supplement: additions[${index}].append is not a list`);
      for (const value of entry.append) {
        if (target.some((existing) => JSON.stringify(existing) === JSON.stringify(value)))
          throw new Error(`stripe supplement: ${entry.at} has ${JSON.stringify(value)} already`);
        target.push(value);
        added.push(`append ${entry.at} ${JSON.stringify(value)}`);
      }
    }
  }
  return added;
}

/** RFC 6901 pointer into the document ("~1" is "/", "~0" is "~"). */
export function resolvePointer(document: unknown, pointer: string): unknown {
  if (!pointer.startsWith('/')) throw new Error(`not a JSON pointer: ${pointer}`);
  let node: unknown = document;
  for (const raw of pointer.slice(1).split('/')) {
    const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node) && /^\d+$/.test(token)) node = node[Number(token)];
    else if (typeof node === 'object' && node !== null && token in node) node = (node as JsonObject)[token];
    else throw new Error(`stripe description: nothing at ${pointer} (stops at ${token})`);
  }
  return node;
}

function readJsonObject(file: string): JsonObject {
  const size = fs.statSync(file).size;
  if (size > MAX_FILE_BYTES) throw new Error(`stripe description: ${file} is ${size} bytes (limit ${MAX_FILE_BYTES})`);
  return asObject(JSON.parse(fs.readFileSync(file, 'utf8')) as unknown, file);
}

export function asObject(value: unknown, what: string): JsonObject {
  return descriptionObject(value, what, 'stripe description');
}

export function operationsOf(document: JsonObject): DescribedOperation[] {
  return describedOperations(document, 'stripe description');
}
