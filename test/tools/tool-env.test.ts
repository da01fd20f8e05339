import { expect, it } from "vitest";
import { hideFromTools, toolEnv } from "../../src/tools/tool-env.js";

// The hidden set is process-wide: this file's module graph is its own (vitest isolates test files).
it("scrubs what looks secret always, and drops what a host hid (names, prefixes, values) even when sandbox.env passes it", () => {
  const base = { PATH: "/bin", PGPASSWORD: "pw-123456", APP_DB: "postgres://u:pw@h/db", COPY: "xx-the-secret-value-xx", SHORT: "abc", HOME: "/home/u", OPENAI_API_KEY: "sk-1", DB_HOST: "db" };
  // Nothing hidden yet: the scrub alone (libpq's PG*, a URL with credentials, a provider key).
  expect(toolEnv(base)).toEqual({ PATH: "/bin", COPY: "xx-the-secret-value-xx", SHORT: "abc", HOME: "/home/u", DB_HOST: "db" });
  expect(toolEnv(base, { pass: ["OPENAI_API_KEY"], set: { CI: "1" } })).toEqual({ PATH: "/bin", COPY: "xx-the-secret-value-xx", SHORT: "abc", HOME: "/home/u", DB_HOST: "db", OPENAI_API_KEY: "sk-1", CI: "1" });
  hideFromTools({ names: ["HOME"], prefixes: ["DB_"], values: ["the-secret-value", "abc"], valuePatterns: [/^postgres:\/\//] });
  // A value under 6 characters is not hidden by value (it would drop unrelated variables).
  expect(toolEnv(base)).toEqual({ PATH: "/bin", SHORT: "abc" });
  // What a host hid stays hidden whatever the run's sandbox.env passes.
  expect(toolEnv(base, { pass: ["HOME", "DB_HOST", "APP_DB", "PGPASSWORD"] })).toEqual({ PATH: "/bin", SHORT: "abc", PGPASSWORD: "pw-123456" });
  expect(base).toHaveProperty("PGPASSWORD");
});
