import { defineConfig } from "vitest/config";

// GPU test files run in forked processes: Dawn's native state does not mix well with worker threads.
export default defineConfig({ test: { pool: "forks", testTimeout: 120_000, hookTimeout: 60_000 } });
