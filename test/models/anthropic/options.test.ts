import { describe, expect, it } from "vitest";
import { anthropicModel, type AnthropicModelOptions } from "../../../src/index.js";
import { resolveAnthropicConfig } from "../../../src/models/anthropic/options.js";

const base = { model: "claude-sonnet-4-5", maxTokens: 4096 };

function invalid(options: unknown, env = {}): string {
  try {
    resolveAnthropicConfig(options as AnthropicModelOptions, env);
  } catch (error) {
    expect(error).toMatchObject({ code: "INVALID_OPTIONS" });
    return (error as Error).message;
  }
  throw new Error("expected INVALID_OPTIONS");
}

describe("anthropicModel options", () => {
  it("reads the key, the server and the model from the environment when not given", () => {
    const config = resolveAnthropicConfig({ maxTokens: 1024 } as AnthropicModelOptions, {
      ANTHROPIC_API_KEY: " sk-ant-env ",
      ANTHROPIC_BASE_URL: "http://127.0.0.1:8080/",
      STATECRAFT_MODEL: "claude-haiku-4-5",
    });
    expect(config).toMatchObject({ model: "claude-haiku-4-5", apiKey: "sk-ant-env", apiKeySource: "env", baseUrl: "http://127.0.0.1:8080", cache: false, maxRetries: 2 });
    expect(config.thinking).toBeUndefined();
  });

  it("an option wins over the environment; no key at all sends the placeholder and says so on 401", () => {
    expect(resolveAnthropicConfig({ ...base, apiKey: "sk-ant-opt" }, { ANTHROPIC_API_KEY: "sk-ant-env" })).toMatchObject({ apiKey: "sk-ant-opt", apiKeySource: "option" });
    expect(resolveAnthropicConfig(base, {})).toMatchObject({ apiKey: "statecraft-no-key", apiKeySource: "none", baseUrl: "https://api.anthropic.com" });
  });

  it("the model reports its name, server, context window and whether it sends a key", () => {
    const model = anthropicModel({ ...base, baseUrl: "http://127.0.0.1:8099/x", contextWindow: 200_000, apiKey: "k-1234" }, {});
    expect(model).toMatchObject({ name: "claude-sonnet-4-5", baseUrl: "http://127.0.0.1:8099/x", contextWindow: 200_000, sendsKey: true });
    expect(anthropicModel(base, {}).sendsKey).toBe(false);
  });

  it("bad options are refused with what to do", () => {
    expect(invalid({ ...base, baseURL: "http://x" })).toContain('unknown option "baseURL" (this option is spelled "baseUrl")');
    expect(invalid({ model: "claude-sonnet-4-5" })).toContain("maxTokens is required");
    expect(invalid({ maxTokens: 10 })).toContain("no model name");
    expect(invalid({ ...base, thinking: { budgetTokens: 500 } })).toContain("thinking.budgetTokens must be an integer ≥ 1024");
    expect(invalid({ ...base, thinking: { budgetTokens: 8192 } })).toContain("must be less than maxTokens (4096)");
    expect(invalid({ ...base, thinking: true })).toContain("thinking must be { budgetTokens: number } or false");
    expect(invalid({ ...base, thinking: { budgetTokens: 2048 }, temperature: 0.5 })).toContain("temperature can't be set with thinking on");
    expect(invalid({ ...base, baseUrl: "ftp://host" })).toContain("baseUrl must be an http(s) URL");
    expect(invalid(base, { ANTHROPIC_BASE_URL: "not a url" })).toContain("ANTHROPIC_BASE_URL must be an http(s) URL");
    expect(invalid({ ...base, baseUrl: "http://127.0.0.1:6000" })).toContain("port 6000, which fetch refuses");
    expect(invalid({ ...base, cache: "yes" })).toContain("cache must be true or false");
    expect(invalid({ ...base, maxTokens: 0 })).toContain("maxTokens must be an integer ≥ 1");
    expect(invalid({ ...base, apiKey: "" })).toContain("apiKey must be a non-empty string");
  });

  it("thinking: false is off", () => {
    expect(resolveAnthropicConfig({ ...base, thinking: false }, {}).thinking).toBeUndefined();
    expect(resolveAnthropicConfig({ ...base, thinking: { budgetTokens: 1024 } }, {}).thinking).toEqual({ budgetTokens: 1024 });
  });
});
