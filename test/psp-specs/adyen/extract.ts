// Cuts the parts of Adyen's published descriptions the tests use out of the three files of
// Adyen/adyen-openapi (see SOURCE.md): the operations (or webhooks) named below, every component
// they reference followed through every $ref, and nothing else. Values are copied unchanged except
// that request/response `examples` (and components.examples) are left out. Test tooling only:
// `npx tsx test/psp-specs/adyen/extract.ts <dir with the three files>` writes the subsets again.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

type Json = { [key: string]: unknown };

const OUT_DIR = path.dirname(fileURLToPath(import.meta.url));

const CUTS: readonly { readonly file: string; readonly out: string; readonly section: 'paths' | 'webhooks'; readonly keep: readonly string[] }[] = [
  {
    file: 'CheckoutService-v71.json',
    out: 'CheckoutService-v71.subset.json',
    section: 'paths',
    keep: [
      '/payments',
      '/payments/details',
      '/payments/{paymentPspReference}/captures',
      '/payments/{paymentPspReference}/cancels',
      '/payments/{paymentPspReference}/refunds',
    ],
  },
  {
    file: 'PayoutService-v68.json',
    out: 'PayoutService-v68.subset.json',
    section: 'paths',
    keep: ['/storeDetailAndSubmitThirdParty', '/confirmThirdParty', '/declineThirdParty'],
  },
  {
    file: 'Webhooks-v1.json',
    out: 'Webhooks-v1.subset.json',
    section: 'webhooks',
    keep: [
      '/AUTHORISATION',
      '/CAPTURE',
      '/CAPTURE_FAILED',
      '/CANCELLATION',
      '/REFUND',
      '/REFUND_FAILED',
      '/CHARGEBACK',
      '/NOTIFICATION_OF_CHARGEBACK',
      '/CHARGEBACK_REVERSED',
      '/SECOND_CHARGEBACK',
      '/PAYOUT_THIRDPARTY',
      '/PAYOUT_DECLINE',
      '/PAYOUT_EXPIRE',
    ],
  },
];

/** A copy without `examples` keys (they only illustrate, and are most of the files' size). */
function withoutExamples(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutExamples);
  if (typeof value !== 'object' || value === null) return value;
  const out: Json = {};
  for (const [key, inner] of Object.entries(value)) if (key !== 'examples') out[key] = withoutExamples(inner);
  return out;
}

function refsIn(value: unknown, found: Set<string>): void {
  if (Array.isArray(value)) for (const v of value) refsIn(v, found);
  else if (typeof value === 'object' && value !== null) {
    for (const [key, inner] of Object.entries(value)) {
      if (key === '$ref' && typeof inner === 'string') found.add(inner);
      else refsIn(inner, found);
    }
  }
}

function cut(dir: string, spec: (typeof CUTS)[number]): void {
  const source = JSON.parse(fs.readFileSync(path.join(dir, spec.file), 'utf8')) as Json;
  const section = source[spec.section] as Json;
  const kept: Json = {};
  for (const name of spec.keep) {
    if (!(name in section)) throw new Error(`${spec.file}: no ${spec.section} ${name}`);
    kept[name] = withoutExamples(section[name]);
  }
  const components = source.components as Json;
  const out_components: Record<string, Json> = {};
  if (components.securitySchemes) out_components.securitySchemes = components.securitySchemes as Json;
  const pending = new Set<string>();
  refsIn(kept, pending);
  const done = new Set<string>();
  while (pending.size > 0) {
    const ref = pending.values().next().value!;
    pending.delete(ref);
    if (done.has(ref)) continue;
    done.add(ref);
    const m = /^#\/components\/([^/]+)\/(.+)$/.exec(ref);
    if (!m) throw new Error(`${spec.file}: unexpected reference ${ref}`);
    const [, kind, name] = m as unknown as [string, string, string];
    const value = withoutExamples((components[kind] as Json | undefined)?.[name]);
    if (value === undefined) throw new Error(`${spec.file}: ${ref} resolves to nothing`);
    (out_components[kind] ??= {})[name] = value;
    const inner = new Set<string>();
    refsIn(value, inner);
    for (const r of inner) if (!done.has(r)) pending.add(r);
  }
  for (const kind of Object.keys(out_components)) {
    const sorted: Json = {};
    for (const name of Object.keys(out_components[kind]!).sort()) sorted[name] = out_components[kind]![name];
    out_components[kind] = sorted;
  }
  const out: Json = {};
  for (const key of ['openapi', 'info', 'servers', 'security', 'tags']) if (source[key] !== undefined) out[key] = source[key];
  out[spec.section] = kept;
  out.components = out_components;
  fs.writeFileSync(path.join(OUT_DIR, spec.out), `${JSON.stringify(out, null, 2)}\n`);
  const schemas = Object.keys(out_components.schemas ?? {}).length;
  console.log(`${spec.out}: ${spec.keep.length} ${spec.section}, ${schemas} schemas`);
}

const dir = process.argv[2];
if (!dir) throw new Error('usage: extract.ts <directory holding the three Adyen files>');
for (const spec of CUTS) cut(dir, spec);
