import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // The workspaces import the SDK by its package name; tests run its source, never a stale build
    // (tsconfig.json's customConditions does the same for the type check).
    alias: [{ find: /^@paygate\/sdk$/, replacement: fileURLToPath(new URL('packages/sdk/src/index.ts', import.meta.url)) }],
  },
  test: {
    // The gateway's suites, and the npm workspaces' own (the merchant SDK, the example shop).
    include: ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    // Each file starts its own gateways on free ports and its own databases; two cores.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    globalSetup: ['test/support/global-setup.ts'],
  },
});
