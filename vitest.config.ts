import { defineConfig } from 'vitest/config';

// Two projects over one set of files: `unit` is every `*.test.ts(x)` that needs no server, process or
// browser (`pnpm test:unit`); `integration` is `*.int.test.ts` (real DuckDB, HTTP, child processes)
// and `*.e2e.test.ts` (real Chromium). `vitest run` runs both.
const ALL_TESTS = '{apps,packages,test,dashboards,scripts}/**/*.test.{ts,tsx}';
const SLOW_TESTS = [
  '{apps,packages,test,dashboards,scripts}/**/*.int.test.{ts,tsx}',
  '{apps,packages,test,dashboards,scripts}/**/*.e2e.test.{ts,tsx}',
];

export default defineConfig({
  test: {
    exclude: ['**/node_modules/**', '**/dist/**'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: [ALL_TESTS],
          // Unit files share their workers' module graph instead of importing it afresh per file:
          // they keep no state between files (no servers, no env), and the project ran in 23 s
          // instead of 55 s here (most of it was imports).
          isolate: false,
          exclude: ['**/node_modules/**', '**/dist/**', ...SLOW_TESTS],
        },
      },
      { extends: true, test: { name: 'integration', include: SLOW_TESTS } },
    ],
  },
});
