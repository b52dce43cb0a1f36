// The SDK's types are the gateway's, never a second copy: the committed src/generated/api.ts must be
// what scripts/generate.ts makes from today's /openapi.json, every merchant operation in it must have
// a client method, and the SDK's own code must import nothing but Node's built-ins and itself (a
// merchant installs the SDK alone, without the gateway).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ENDPOINTS } from '@paygate/sdk';
import { fetchOpenApiDocument, GENERATED_FILE, renderModule } from '../scripts/generate.js';

const SRC = fileURLToPath(new URL('../src', import.meta.url));

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? sourceFiles(full) : entry.name.endsWith('.ts') ? [full] : [];
  });
}

describe('generated types', () => {
  it("src/generated/api.ts is what the gateway's /openapi.json generates today (else: npm run generate --workspace @paygate/sdk)", async () => {
    const fresh = renderModule(await fetchOpenApiDocument());
    expect(fs.readFileSync(GENERATED_FILE, 'utf8')).toBe(fresh);
  });

  it('every merchant operation of /openapi.json has a method of the client', () => {
    const client = fs.readFileSync(path.join(SRC, 'client.ts'), 'utf8');
    const operations = Object.keys(ENDPOINTS);
    expect(operations.length).toBeGreaterThanOrEqual(18);
    for (const operation of operations) expect(client, operation).toContain(`operation: '${operation}'`);
  });

  it("the SDK imports only Node's built-ins and its own files", () => {
    const files = sourceFiles(SRC);
    expect(files.length).toBeGreaterThan(5);
    for (const file of files) {
      const text = fs.readFileSync(file, 'utf8');
      for (const match of text.matchAll(/\bfrom\s+'([^']+)'|\bimport\(\s*'([^']+)'\s*\)|\brequire\(\s*'([^']+)'\s*\)/g)) {
        const specifier = match[1] ?? match[2] ?? match[3]!;
        const own = specifier.startsWith('./') || specifier.startsWith('../');
        if (own) expect(path.resolve(path.dirname(file), specifier).startsWith(SRC), `${file}: ${specifier}`).toBe(true);
        else expect(specifier, `${file}: ${specifier}`).toMatch(/^node:/);
      }
    }
    const manifest = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { dependencies?: object };
    expect(manifest.dependencies ?? {}).toEqual({});
  });
});
