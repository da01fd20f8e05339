import { expect, it } from "vitest";
import { hideFromTools, toolEnv } from "../../src/tools/tool-env.js";

// The hidden set is process-wide: this file's module graph is its own (vitest isolates test files).
it("passes the environment on whole until something is hidden, then drops hidden names, prefixes and values", () => {
  const base = { PATH: "/bin", PGPASSWORD: "pw-123456", APP_DB: "postgres://u:pw@h/db", COPY: "xx-the-secret-value-xx", SHORT: "abc", HOME: "/home/u" };
  expect(toolEnv(base)).toBe(base);
  hideFromTools({ names: ["HOME"], prefixes: ["PG"], values: ["the-secret-value", "abc"], valuePatterns: [/^postgres:\/\//] });
  // A value under 6 characters is not hidden by value (it would drop unrelated variables).
  expect(toolEnv(base)).toEqual({ PATH: "/bin", SHORT: "abc" });
  expect(base).toHaveProperty("PGPASSWORD");
});
