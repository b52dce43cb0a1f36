// The rules of what never imports what (docs/architecture.md, "The rules") are kept by ESLint in
// `npm run lint`, which CI runs before the tests. This checks the keeper itself: for each rule an
// import that breaks it, written as a file of that part would write it (a value import and a type
// import), must be an error of eslint.config.js, and an import the rules allow must not be; and
// the project's own limits hold (no store interface above 40 methods, no source file above 500
// lines). If the plugin, the resolver or the config stopped seeing a break, this fails.
import fs from 'node:fs';
import path from 'node:path';
import { ESLint } from 'eslint';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const eslint = new ESLint({ cwd: process.cwd() });

/** The rule ids ESLint reports for `code` as the file `file_path` (which need not exist). */
async function errorsOf(file_path: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.resolve(file_path) });
  return (result?.messages ?? []).filter((m) => m.severity === 2).map((m) => `${m.ruleId}: ${m.message}`);
}

/** [the importing file, the import it must not have]: one per rule, through real targets. */
const BREAKS: readonly (readonly [string, string])[] = [
  ['src/domain/x.ts', '../store/store.js'],
  ['src/domain/x.ts', '../connectors/connector.js'],
  ['src/domain/x.ts', '../notifications/payload.js'],
  ['src/domain/x.ts', '../operations/deps.js'],
  ['src/domain/x.ts', '../http/envelope.js'],
  ['src/domain/x.ts', '../outbound/post.js'],
  ['src/domain/x.ts', '../transitions/transaction.js'],
  ['src/domain/x.ts', '../config.js'],
  ['src/connectors/x.ts', '../operations/deps.js'],
  ['src/connectors/x.ts', '../store/store.js'],
  ['src/connectors/sandbox/x.ts', '../../store/schema.js'],
  ['src/connectors/sandbox/x.ts', '../../http/route.js'],
  ['src/connectors/x.ts', '../transitions/transaction.js'],
  ['src/connectors/x.ts', '../notifications/payload.js'],
  ['src/connectors/x.ts', '../pages/html.js'],
  ['src/connectors/x.ts', '../crypto/sealer.js'],
  ['src/connectors/x.ts', '../config.js'],
  ['src/operations/x.ts', '../http/envelope.js'],
  ['src/http/x.ts', '../store/store.js'],
  ['src/http/backoffice/x.ts', '../../store/schema.js'],
  ['src/store/x.ts', '../operations/deps.js'],
  ['src/store/sql/x.ts', '../../operations/lifecycle.js'],
  ['src/store/x.ts', '../http/envelope.js'],
  ['src/store/x.ts', '../connectors/connector.js'],
  ['src/pages/x.ts', '../store/store.js'],
  ['src/pages/backoffice/x.ts', '../../operations/deps.js'],
];

/** Imports the rules allow: none of these may be reported. */
const ALLOWED: readonly (readonly [string, string])[] = [
  ['src/domain/x.ts', './money.js'],
  ['src/connectors/x.ts', '../domain/cards.js'],
  ['src/connectors/x.ts', '../outbound/processor-http.js'],
  ['src/operations/x.ts', '../store/store.js'],
  ['src/operations/x.ts', '../connectors/connector.js'],
  ['src/http/x.ts', '../operations/deps.js'],
  ['src/http/x.ts', '../domain/money.js'],
  ['src/store/x.ts', '../domain/transaction-state.js'],
  ['src/pages/x.ts', '../domain/money.js'],
];

describe('the import rules are kept by ESLint', () => {
  for (const [file, target] of BREAKS) {
    it(`${file} importing ${target} is an error, as a value and as a type`, async () => {
      const value = await errorsOf(file, `import * as m from '${target}';\nexport const used = m;\n`);
      const type = await errorsOf(file, `import type * as m from '${target}';\nexport type Used = typeof m;\n`);
      expect(value.some((e) => e.includes('house rule'))).toBe(true);
      expect(type.some((e) => e.includes('house rule'))).toBe(true);
    });
  }

  for (const [file, target] of ALLOWED) {
    it(`${file} importing ${target} is allowed`, async () => {
      expect(await errorsOf(file, `import type * as m from '${target}';\nexport type Used = typeof m;\n`)).toEqual([]);
    });
  }
});

/** Every TypeScript file under `dir`. */
function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

describe('the limits of issue 25', () => {
  it('no source file is above 500 lines', () => {
    const long = sourceFiles('src')
      .map((file) => ({ file, lines: fs.readFileSync(file, 'utf8').split('\n').length }))
      .filter((f) => f.lines > 500);
    expect(long).toEqual([]);
  });

  it('no store interface has more than 40 methods', () => {
    const counts: { name: string; methods: number }[] = [];
    for (const file of sourceFiles('src/store').filter((f) => f.endsWith('-store.ts') || f.endsWith('store.ts'))) {
      const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
      source.forEachChild((node) => {
        if (ts.isInterfaceDeclaration(node) && node.name.text.endsWith('Store')) {
          counts.push({ name: node.name.text, methods: node.members.filter((m) => ts.isMethodSignature(m)).length });
        }
      });
    }
    // The aggregates of docs/architecture.md, each behind its own interface.
    expect(counts.map((c) => c.name).sort()).toEqual(
      expect.arrayContaining([
        'BackOfficeStore',
        'CardStore',
        'CashierStore',
        'MerchantStore',
        'NotificationStore',
        'SubscriptionStore',
        'TransactionStore',
      ]),
    );
    expect(counts.filter((c) => c.methods > 40)).toEqual([]);
  });
});
