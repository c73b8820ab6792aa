import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    // libp2p 3 needs Promise.withResolvers, which Node 20 lacks (DESIGN.md §2); a failed test shows the stderr of the processes it spawned.
    setupFiles: ['src/util/polyfill.ts', 'test/setup.ts'],
    // Spawned `noded` processes run dist/: rebuild it from the sources before any test.
    globalSetup: ['test/global-setup.ts'],
    // Two cores: integration suites spawn daemons, so run files two at a time.
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
