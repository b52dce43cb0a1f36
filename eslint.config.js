// ESLint for the gateway, its tests and benchmarks and the npm workspaces (issue 25, items 1 and 5).
// `npm run lint` runs it (then `prettier --check`), and .ci/run runs that before the tests.
//
// Two parts:
//  - typescript-eslint's recommended rules, without type information (no parserOptions.project):
//    the type check is tsc's job (`npm run typecheck`) and this stays a few seconds' run.
//  - the house rules of what must never import what (../shared/tools/house-rules.mjs), as errors,
//    through eslint-plugin-boundaries.
import js from '@eslint/js';
import boundaries from 'eslint-plugin-boundaries';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

const TYPESCRIPT = [
  'src/**/*.ts',
  'test/**/*.ts',
  'bench/**/*.ts',
  'packages/*/src/**/*.ts',
  'packages/*/test/**/*.ts',
  'packages/*/scripts/**/*.ts',
];
const TESTS = ['test/**/*.ts', 'packages/*/test/**/*.ts'];

// The parts of src/, as house-rules.mjs names and finds them: a folder's part is that of everything
// under it, at any depth (each pattern is matched from the root, never as a path's tail). A file in
// no part (src/metrics.ts) is in no rule, as there. house-rules.mjs also names a part Boot
// (src/main.ts, cli.ts, cluster.ts, config.ts, logging.ts) that no rule mentions: it is left
// unclassified here, which has the same effect (and the plugin classifies folders, not files).
const PARTS = {
  Edge: 'src/http',
  Views: 'src/pages',
  Ops: 'src/operations',
  Domain: 'src/domain',
  Connectors: 'src/connectors', // src/connectors/registry.ts included, as there
  Notify: 'src/notifications',
  Store: 'src/store',
  Out: 'src/outbound',
  Workers: 'src/workers',
  Crypto: 'src/crypto',
  Transitions: 'src/transitions',
};

// house-rules.mjs's NEVER list, pair for pair: [from, to] is an import that must never be.
//   Domain imports none of Notify, Store, Ops, Connectors, Edge;
//   Store never imports Ops;   Ops never imports Edge;
//   Connectors never import Store or Ops;   Edge never imports Store (it goes through Ops).
// Issue 25's text says more than house-rules.mjs checks (connectors importing only domain/,
// outbound/ and their own folder; store/ importing nothing of http/ or connectors/): this holds
// the script's rules, no more, so that both always agree. Another pair is one more line here.
const NEVER = [
  ['Domain', 'Notify'],
  ['Domain', 'Store'],
  ['Domain', 'Ops'],
  ['Domain', 'Connectors'],
  ['Domain', 'Edge'],
  ['Store', 'Ops'],
  ['Ops', 'Edge'],
  ['Connectors', 'Store'],
  ['Connectors', 'Ops'],
  ['Edge', 'Store'],
];

export default defineConfig([
  {
    // Not ours to lint: builds, data, documents, third-party specifications and the spec's vectors,
    // the SDK's generated types (their generator writes them), and the root's own small scripts
    // and configuration files (outside the scope of issue 25's item 1).
    ignores: [
      '**/dist/',
      'data/',
      'docs/',
      'test/psp-specs/',
      'test/vectors/',
      'packages/sdk/src/generated/',
      'scripts/',
      '*.config.js',
      '*.config.ts',
    ],
  },
  {
    // An eslint-disable comment that no longer silences anything fails the run: it goes.
    linterOptions: { reportUnusedDisableDirectives: 'error' },
  },
  {
    files: TYPESCRIPT,
    extends: [js.configs.recommended, tseslint.configs.recommended],
    rules: {
      // A leading underscore is this code base's mark of a binding left unused on purpose: a
      // parameter an interface imposes (`_request`), a field dropped from a copy by destructuring
      // (`const { trace_id: _, ...copied } = previous`). Anything else unused is still an error.
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          args: 'after-used',
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
      // The code matches control characters on purpose: it rejects or strips them from text that
      // goes into headers, logs, HTML and notifications (src/domain/text.ts, src/notifications/
      // sender.ts, the SDK's client). Every hit of this rule here is such a check, never a mistake.
      'no-control-regex': 'off',
    },
  },
  {
    files: TESTS,
    rules: {
      // Tests read fields of answers of every shape (processors' JSON, the fakes' requests,
      // /openapi.json) and check them with expect(); typing each one would add nothing the
      // assertions do not already check. `any` stays an error in src/ and the workspaces' src/.
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    // The house rules. house-rules.mjs reads every .ts file of src/ but the *.test.ts ones, and
    // counts `import`, `import type`, `export … from` and `import()` alike: so does this (the
    // plugin's default dependency nodes: import and export declarations of either kind, require,
    // dynamic import; no policy below names a kind, so each covers type and value imports).
    files: ['src/**/*.ts'],
    ignores: ['src/**/*.test.ts'],
    plugins: { boundaries },
    settings: {
      // Resolves './x.js' to './x.ts' as tsc does (NodeNext), so a dependency's part is known.
      'import/resolver': { typescript: { project: './tsconfig.json', alwaysTryTypes: true } },
      'boundaries/elements': Object.entries(PARTS).map(([type, pattern]) => ({ type, pattern, partialMatch: false })),
      // Files of no part, and everything outside src/, are simply not in the rules.
      'boundaries/root-path': import.meta.dirname,
    },
    rules: {
      'boundaries/dependencies': [
        'error',
        {
          default: 'allow',
          policies: NEVER.map(([from, to]) => ({
            from: { element: { type: from } },
            disallow: { to: { element: { type: to } } },
            message: `house rule: ${from} never imports ${to} (../shared/tools/house-rules.mjs)`,
          })),
        },
      ],
    },
  },
]);
