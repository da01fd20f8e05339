import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AgentError } from "../../../src/errors/agent-error.js";
import { openaiModel } from "../../../src/models/openai/index.js";
import { PLACEHOLDER_API_KEY, resolveOpenAIConfig } from "../../../src/models/openai/options.js";
import { buildRequestBody } from "../../../src/models/openai/request-body.js";
import { replies, startOpenAIServer, type OpenAIServer } from "../../support/openai-server.js";
import { collect, request } from "./helpers.js";

function invalid(fn: () => unknown): AgentError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(AgentError);
    expect((error as AgentError).code).toBe("INVALID_OPTIONS");
    return error as AgentError;
  }
  throw new Error("expected INVALID_OPTIONS");
}

describe("openaiModel options", () => {
  it("exposes the model name and contextWindow", () => {
    const model = openaiModel({ model: "qwen2.5:7b", baseURL: "http://localhost:11434/v1", contextWindow: 32_768 }, {});
    expect(model.name).toBe("qwen2.5:7b");
    expect(model.contextWindow).toBe(32_768);
    expect(openaiModel({ model: "m" }, {}).contextWindow).toBeUndefined();
  });

  it("defaults: OpenAI's URL, 2 retries, 60 s idle timeout, placeholder key", () => {
    const config = resolveOpenAIConfig({ model: "gpt-4o-mini" }, {});
    expect(config).toMatchObject({
      model: "gpt-4o-mini",
      baseURL: "https://api.openai.com/v1",
      maxRetries: 2,
      idleTimeoutMs: 60_000,
      apiKey: PLACEHOLDER_API_KEY,
      apiKeySource: "none",
    });
  });

  it("reads OPENAI_API_KEY, OPENAI_BASE_URL and STATECRAFT_MODEL; options win", () => {
    const env = { OPENAI_API_KEY: "sk-env", OPENAI_BASE_URL: "http://localhost:8000/v1", STATECRAFT_MODEL: "env-model" };
    expect(resolveOpenAIConfig({}, env)).toMatchObject({ model: "env-model", baseURL: "http://localhost:8000/v1", apiKey: "sk-env", apiKeySource: "env" });
    expect(resolveOpenAIConfig({ model: "opt-model", baseURL: "http://127.0.0.1:1234/v1", apiKey: "sk-opt" }, env)).toMatchObject({
      model: "opt-model",
      baseURL: "http://127.0.0.1:1234/v1",
      apiKey: "sk-opt",
      apiKeySource: "option",
    });
  });

  it("bad options fail at once, saying what to fix", () => {
    expect(invalid(() => openaiModel({}, {})).message).toContain("STATECRAFT_MODEL");
    expect(invalid(() => openaiModel({ model: "" }, {})).message).toContain("model");
    expect(invalid(() => openaiModel({ model: "m", baseURL: "localhost:11434" }, {})).message).toContain("http://localhost:11434/v1");
    expect(invalid(() => openaiModel({}, { STATECRAFT_MODEL: "m", OPENAI_BASE_URL: "nonsense" })).message).toContain("OPENAI_BASE_URL");
    expect(invalid(() => openaiModel({ model: "m", maxRetries: -1 }, {})).message).toContain("maxRetries");
    expect(invalid(() => openaiModel({ model: "m", idleTimeoutMs: 0 }, {})).message).toContain("idleTimeoutMs");
    expect(invalid(() => openaiModel({ model: "m", temperature: Number.NaN }, {})).message).toContain("temperature");
    expect(invalid(() => openaiModel({ model: "m", headers: { a: 1 as unknown as string } }, {})).message).toContain('headers["a"]');
    expect(invalid(() => openaiModel({ model: "m", maxTokkens: 5 } as never, {})).message).toContain('unknown option "maxTokkens"');
    expect(invalid(() => openaiModel({ model: "m", apiKey: "" }, {})).message).toContain("apiKey");
  });

  it("the API key never appears in an options error", () => {
    const error = invalid(() => openaiModel({ model: "m", apiKey: "sk-secret-value", maxRetries: 1.5 }, {}));
    expect(error.message).not.toContain("sk-secret-value");
  });

  it("api.openai.com gets max_completion_tokens (its reasoning models refuse max_tokens)", () => {
    const body = buildRequestBody(resolveOpenAIConfig({ model: "gpt-5-mini", maxTokens: 100 }, {}), request());
    expect(body.max_completion_tokens).toBe(100);
    expect(body).not.toHaveProperty("max_tokens");
  });
});

describe("environment defaults, end to end", () => {
  let server: OpenAIServer;
  const saved = { ...process.env };
  beforeEach(async () => {
    server = await startOpenAIServer();
  });
  afterEach(async () => {
    process.env = { ...saved };
    await server.close();
  });

  it("with only the environment set, openaiModel() talks to OPENAI_BASE_URL with OPENAI_API_KEY and STATECRAFT_MODEL", async () => {
    process.env.OPENAI_BASE_URL = server.baseURL;
    process.env.OPENAI_API_KEY = "sk-from-env";
    process.env.STATECRAFT_MODEL = "env-model";
    server.enqueue(replies.text("hi"));
    const result = await collect(openaiModel());
    expect(result.response?.text).toBe("hi");
    expect(server.chatRequests[0].body.model).toBe("env-model");
    expect(server.chatRequests[0].headers.authorization).toBe("Bearer sk-from-env");
  });

  it("without a key, a placeholder is sent so a local server just works", async () => {
    delete process.env.OPENAI_API_KEY;
    server.enqueue(replies.text("no key needed"));
    const result = await collect(openaiModel({ model: "llama3.2", baseURL: server.baseURL }));
    expect(result.response?.text).toBe("no key needed");
    expect(server.chatRequests[0].headers.authorization).toBe(`Bearer ${PLACEHOLDER_API_KEY}`);
  });
});
