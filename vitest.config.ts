import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // one temporary directory per test run, removed at its end (test/support/tmpRoot.ts)
    globalSetup: ['test/support/tmpRoot.ts'],
  },
});
