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

// What never imports what (docs/architecture.md, "The rules"). house-rules.mjs checks ten of these
// pairs; issue 25 asks for more, and every pair below is an error, with no exception:
//   Domain imports nothing of the project but domain/ (it owns the records, statuses, processor
//     results and event details that the others pass around);
//   Connectors import only domain/, outbound/ and connectors/: a connector is called, it never
//     calls back into operations/, reads or writes the store, or knows HTTP or the configuration;
//   Ops never import Edge (operations know no HTTP);   Edge never imports Store (only through Ops);
//   Store imports no Ops, Edge, Connectors, Views, Workers or Notify (it knows no operations);
//   Views (pages/) import no Store, Ops, Edge or Connectors: a page renders what it is given.
const ALL_PARTS = Object.keys(PARTS);
const NEVER = [
  ...ALL_PARTS.filter((to) => to !== 'Domain').map((to) => ['Domain', to]),
  ...ALL_PARTS.filter((to) => !['Connectors', 'Domain', 'Out'].includes(to)).map((to) => ['Connectors', to]),
  ['Ops', 'Edge'],
  ['Edge', 'Store'],
  ...['Ops', 'Edge', 'Connectors', 'Views', 'Workers', 'Notify'].map((to) => ['Store', to]),
  ...['Store', 'Ops', 'Edge', 'Connectors'].map((to) => ['Views', to]),
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
      'boundaries/elements': [...Object.entries(PARTS).map(([type, pattern]) => ({ type, pattern, partialMatch: false }))],
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
            message: `house rule: ${from} never imports ${to} (docs/architecture.md, "The rules")`,
          })),
        },
      ],
    },
  },
  {
    // The boot files (src/main.ts, cli.ts, cluster.ts, config.ts, logging.ts, metrics.ts) are in no
    // part above (the plugin classifies folders): this keeps Domain and Connectors from them, as
    // the rules say (a connector gets its options, never the configuration). Type imports too.
    files: ['src/domain/**/*.ts', 'src/connectors/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(\\.\\./)+((main|cli|cluster|config|logging|metrics)\\.js|cli/.*)$',
              message: 'house rule: domain/ and connectors/ never import the boot files (docs/architecture.md, "The rules")',
            },
          ],
        },
      ],
    },
  },
]);
