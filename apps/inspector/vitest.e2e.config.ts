import { defineConfig } from "vitest/config";

// End-to-end tests (build the page once, serve it on 127.0.0.1, drive Debian's Chromium) and the
// unit tests of the page's pure modules (colour scale, hex view).
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/build-once.ts"],
    pool: "forks",
    fileParallelism: false,
    testTimeout: 240_000,
    hookTimeout: 240_000,
  },
});
