import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts", "test/setup/optional-parts.ts"],
    // Limits catch hangs; they are not speed targets: a test that takes 20 s on a busy 2-core machine is not hung.
    testTimeout: 120_000,
    hookTimeout: 180_000,
    pool: "forks",
    // Most files wait on processes they start (the CLI, servers, Chromium, PostgreSQL): three at a time keep two
    // cores busy where one at a time (vitest's default on two cores) left one idle.
    maxWorkers: 3,
  },
});
