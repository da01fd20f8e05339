import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CONFIG_FILE_NAME, loadConfigFile, resolveModel, resolveRunSettings } from "../../src/cli/config.js";
import { createStyle } from "../../src/cli/colors.js";
import { headerLine } from "../../src/cli/commands/prepare-agent.js";
import { createLogger } from "../../src/cli/logger.js";
import { ANTHROPIC_MAX_TOKENS, createModel, DEFAULT_ANTHROPIC_MODEL } from "../../src/cli/model-factory.js";
import { UsageError } from "../../src/cli/usage-error.js";
import { makeTempDir, removeDir } from "./helpers/cli-process.js";

// --provider, STATECRAFT_PROVIDER, "provider" in a config and the anthropic: shorthand: which wire, which key and
// server variables, and the untrusted-project key rule for each provider.

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) removeDir(d);
});
function dir(config?: Record<string, unknown>): string {
  const d = makeTempDir("statecraft-provider-");
  dirs.push(d);
  if (config) writeFileSync(join(d, CONFIG_FILE_NAME), JSON.stringify(config));
  return d;
}
const usage = (fn: () => unknown): string => {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error("expected a usage error");
};

describe("choosing the provider", () => {
  it("openai by default, with OPENAI_* only; ANTHROPIC_* are not read for it", () => {
    const d = dir();
    expect(resolveModel({ model: "m" }, { OPENAI_API_KEY: "sk-o", ANTHROPIC_API_KEY: "sk-a", ANTHROPIC_BASE_URL: "http://127.0.0.1:9000" }, d)).toEqual({
      kind: "openai",
      model: "m",
      apiKey: "sk-o",
      source: "flag",
    });
  });

  it("--model anthropic:<name> picks anthropic, with ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL; Ollama's qwen2.5:7b stays a name", () => {
    const d = dir();
    const env = { OPENAI_API_KEY: "sk-o", OPENAI_BASE_URL: "http://127.0.0.1:1/v1", ANTHROPIC_API_KEY: "sk-a", ANTHROPIC_BASE_URL: "http://127.0.0.1:9000" };
    expect(resolveModel({ model: "anthropic:claude-sonnet-4-5" }, env, d)).toEqual({ kind: "anthropic", model: "claude-sonnet-4-5", baseURL: "http://127.0.0.1:9000", apiKey: "sk-a", source: "flag" });
    expect(resolveModel({ model: "qwen2.5:7b" }, env, d)).toMatchObject({ kind: "openai", model: "qwen2.5:7b" });
    expect(usage(() => resolveModel({ model: "anthropic:" }, env, d))).toContain('"anthropic:" must be followed by a model name');
  });

  it("--provider, then STATECRAFT_PROVIDER, then the project's config, then the user's", () => {
    const d = dir({ provider: "anthropic", model: "claude-haiku-4-5" });
    const config = loadConfigFile(d);
    expect(resolveModel({}, {}, d, config)).toEqual({ kind: "anthropic", model: "claude-haiku-4-5", source: "config" });
    expect(resolveModel({}, { STATECRAFT_PROVIDER: "openai", OPENAI_API_KEY: "k" }, d, config)).toMatchObject({ kind: "openai" });
    expect(resolveModel({ provider: "anthropic" }, { STATECRAFT_PROVIDER: "openai" }, d, config)).toMatchObject({ kind: "anthropic" });
    // No model anywhere: anthropic is still a choice (its default model), openai is not.
    expect(resolveModel({ provider: "anthropic" }, {}, dir())).toEqual({ kind: "anthropic", source: "env" });
  });

  it("contradictions and unknown providers are usage errors that say what to do", () => {
    const d = dir();
    expect(usage(() => resolveModel({ provider: "openai", model: "anthropic:claude-x" }, {}, d))).toContain("name different providers; leave out one of them");
    expect(usage(() => resolveModel({ model: "m" }, { STATECRAFT_PROVIDER: "gemini" }, d))).toBe('STATECRAFT_PROVIDER: must be one of openai, anthropic, got "gemini"');
    const bad = dir({ provider: "mistral" });
    expect(usage(() => loadConfigFile(bad))).toContain('"provider" must be one of openai, anthropic, got "mistral"');
  });

  it("an untrusted project's baseUrl never gets ANTHROPIC_API_KEY; a trusted one does", () => {
    const d = dir({ provider: "anthropic", baseUrl: "http://127.0.0.1:8111" });
    const config = loadConfigFile(d);
    const message = usage(() => resolveModel({}, { ANTHROPIC_API_KEY: "sk-a" }, d, config));
    expect(message).toContain("was chosen by the project, not by you, and ANTHROPIC_API_KEY is set: statecraft won't send your key to it.");
    expect(message).toContain("(or ANTHROPIC_BASE_URL: choose the server yourself)");
    expect(message).toContain("unset ANTHROPIC_API_KEY");
    expect(resolveModel({}, { ANTHROPIC_API_KEY: "sk-a" }, d, config, { trusted: true })).toEqual({ kind: "anthropic", baseURL: "http://127.0.0.1:8111", apiKey: "sk-a", source: "config" });
    // Without the key the project's server may be used: nothing of the user's goes to it.
    expect(resolveModel({}, {}, d, config)).toEqual({ kind: "anthropic", baseURL: "http://127.0.0.1:8111", source: "config" });
  });

  it("no ANTHROPIC_API_KEY and no server: a warning before the run", () => {
    const settings = resolveRunSettings({ provider: "anthropic" }, {}, dir());
    expect(settings.warnings).toEqual([expect.stringContaining("ANTHROPIC_API_KEY is not set")]);
  });

  it("the CLI's Claude model: default name, its output limit, caching on; the header names the provider", async () => {
    const d = dir();
    const settings = resolveRunSettings({ model: "anthropic:claude-opus-4-1", baseUrl: "http://127.0.0.1:8112" }, { ANTHROPIC_API_KEY: "sk-a" }, d);
    const created = await createModel(settings.model, createLogger("silent"));
    expect(created).toMatchObject({ provider: "anthropic", description: "claude-opus-4-1 at http://127.0.0.1:8112" });
    expect(created.model).toMatchObject({ name: "claude-opus-4-1", baseUrl: "http://127.0.0.1:8112", sendsKey: true, provider: "anthropic" });
    const line = headerLine(createStyle(false), { settings, created } as Parameters<typeof headerLine>[1]);
    expect(line).toBe(`statecraft · model claude-opus-4-1 at http://127.0.0.1:8112 · provider anthropic · cwd ${d} · permissions default · sandbox auto`);

    const defaulted = await createModel({ kind: "anthropic", source: "env" }, createLogger("silent"));
    expect(defaulted).toMatchObject({ nameFrom: "default", description: DEFAULT_ANTHROPIC_MODEL });
    expect(ANTHROPIC_MAX_TOKENS).toBeGreaterThan(0);

    const openai = await createModel({ kind: "openai", model: "m", baseURL: "http://127.0.0.1:8113/v1", source: "flag" }, createLogger("silent"));
    expect(headerLine(createStyle(false), { settings: { ...settings, model: { kind: "openai", source: "flag" } }, created: openai } as Parameters<typeof headerLine>[1])).toContain(
      "model m at http://127.0.0.1:8113/v1 · provider openai ·",
    );
  });
});
