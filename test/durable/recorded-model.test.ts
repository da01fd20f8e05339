import { afterEach, describe, expect, it } from "vitest";
import { anthropicModel, defineTool, fileRunStore, openaiModel, query, scriptedModel } from "../../src/index.js";
import { recordedModelChoice } from "../../src/cli/recorded-model.js";
import { runRecordProblem, type StoredSettings } from "../../src/durable/run-store.js";
import { collect, removeDir, tempDir } from "../support/engine.js";
import { replies, startOpenAIServer, type OpenAIServer } from "../support/openai-server.js";
import { anthropicReplies, startAnthropicServer } from "../support/anthropic-server.js";

// What a stored run records of its model (name, server, whether a key went to it), and how `statecraft resume`
// turns that record into the model it uses.

const dirs: string[] = [];
const servers: OpenAIServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  for (const d of dirs.splice(0)) removeDir(d);
});

const note = defineTool({
  name: "write_note",
  description: "writes a note",
  inputSchema: { type: "object", properties: { note: { type: "string" } }, required: ["note"] },
  risk: "write",
  execute: async () => "written",
});

async function suspendedSettings(model: Parameters<typeof query>[1]["model"]): Promise<StoredSettings> {
  const cwd = tempDir();
  dirs.push(cwd);
  const { result } = await collect(query("note a", { model, tools: [note], cwd, permissions: { whenUnanswered: "suspend" } }));
  expect(result.status).toBe("suspended");
  const stored = await fileRunStore(cwd).load(result.sessionId);
  return stored!.settings;
}

describe("the stored run records the model's server", () => {
  it("an OpenAI-compatible model: its name, base URL and whether it sent a key", async () => {
    const server = await startOpenAIServer();
    servers.push(server);
    server.enqueue(replies.toolCalls([{ name: "write_note", arguments: { note: "a" } }]), replies.toolCalls([{ name: "write_note", arguments: { note: "a" } }]));
    const keyed = openaiModel({ model: "m-1", baseURL: server.baseURL, apiKey: "sk-x" }, {});
    expect(keyed).toMatchObject({ baseUrl: server.baseURL, sendsKey: true });
    expect(await suspendedSettings(keyed)).toMatchObject({ model: "m-1", baseUrl: server.baseURL, keySent: true });
    const keyless = openaiModel({ model: "m-2", baseURL: server.baseURL }, {});
    expect(keyless.sendsKey).toBe(false);
    expect(await suspendedSettings(keyless)).toMatchObject({ model: "m-2", baseUrl: server.baseURL, keySent: false });
  });

  it("a model with no server (scripted) records none", async () => {
    const settings = await suspendedSettings(scriptedModel([{ toolCalls: [{ name: "write_note", input: { note: "a" } }] }]));
    expect(settings.baseUrl).toBeUndefined();
    expect(settings.keySent).toBeUndefined();
  });

  it("a stored baseUrl that is not http(s), or a keySent that is not a boolean, is a damaged record", () => {
    const base = { v: 1, sessionId: "s", runId: "r", since: "x", cwd: "/", status: "suspended", at: "ask_permission", activeMs: 0, traceSeq: 0, turn: 0, toolCallCount: 0 };
    const settings = { userInput: "x", maxTurns: 1, maxToolCalls: 1, timeoutMs: 1, maxRepeatedCalls: 1, maxDelegationDepth: 1, traceFile: false, permissions: { mode: "default", allow: [], ask: [], deny: [] } };
    const rest = {
      usage: { input: 0, output: 0, cached: 0, reasoning: 0 },
      messages: [],
      batch: [],
      batchState: { open: false, hitToolLimit: false, repeat: { key: "", count: 0, refused: false } },
      call: { overflowCompacted: false, modelErrorAttempts: 0 },
      inbox: { steering: [], followUp: [] },
      pending: [{ callId: "c", name: "n", input: {}, reason: "r" }],
      started: [],
    };
    expect(runRecordProblem({ ...base, settings, ...rest })).toBeUndefined();
    for (const baseUrl of ["file:///etc/passwd", "javascript:alert(1)", "not a url", 42]) {
      expect(runRecordProblem({ ...base, settings: { ...settings, baseUrl }, ...rest })).toMatch(/settings\.baseUrl/);
    }
    for (const keySent of ["true", 1, null]) {
      expect(runRecordProblem({ ...base, settings: { ...settings, keySent }, ...rest })).toMatch(/settings\.keySent/);
    }
    expect(runRecordProblem({ ...base, settings: { ...settings, model: 7 }, ...rest })).toMatch(/settings\.model/);
    expect(runRecordProblem({ ...base, settings: { ...settings, provider: 1 }, ...rest })).toMatch(/settings\.provider/);
    // The mode is checked with the record: resume() hands it to the run's policy as a permission mode.
    expect(runRecordProblem({ ...base, settings: { ...settings, permissions: { ...settings.permissions, mode: "yolo" } }, ...rest })).toMatch(/settings\.permissions.*known mode/);
  });
});

describe("statecraft resume's model from the record", () => {
  const recorded = (extra: Partial<StoredSettings>): StoredSettings =>
    ({ userInput: "x", maxTurns: 1, maxToolCalls: 1, timeoutMs: 1, maxRepeatedCalls: 1, maxDelegationDepth: 1, traceFile: false, permissions: { mode: "default", allow: [], ask: [], deny: [] }, ...extra }) as StoredSettings;
  const env = { OPENAI_API_KEY: "sk-user" };
  const noWarn = () => {
    throw new Error("no warning expected");
  };

  it("chooses as run does when the run recorded no server, both flags are given, or --model names a script", () => {
    expect(recordedModelChoice({}, recorded({ model: "script" }), env, noWarn)).toBeUndefined();
    const keyed = recorded({ model: "m", baseUrl: "http://127.0.0.1:1/v1", keySent: true });
    expect(recordedModelChoice({ model: "x", baseUrl: "http://127.0.0.1:2/v1" }, keyed, env, noWarn)).toBeUndefined();
    expect(recordedModelChoice({ model: "script:case.json" }, keyed, env, noWarn)).toBeUndefined();
  });

  it("the key goes to the recorded server only if the run sent one; always to a --base-url the user gives", () => {
    const keyed = recorded({ model: "m", baseUrl: "http://127.0.0.1:1/v1", keySent: true });
    expect(recordedModelChoice({}, keyed, env, noWarn)).toEqual({ kind: "openai", model: "m", baseURL: "http://127.0.0.1:1/v1", apiKey: "sk-user", source: "run" });
    for (const keySent of [false, undefined]) {
      const warnings: string[] = [];
      const keyless = recorded({ model: "m", baseUrl: "http://127.0.0.1:1/v1", ...(keySent !== undefined ? { keySent } : {}) });
      const choice = recordedModelChoice({ model: "other" }, keyless, env, (w) => warnings.push(w));
      expect(choice).toEqual({ kind: "openai", model: "other", baseURL: "http://127.0.0.1:1/v1", source: "flag" });
      expect(warnings).toEqual([expect.stringContaining("--base-url http://127.0.0.1:1/v1")]);
      expect(recordedModelChoice({ baseUrl: "http://127.0.0.1:3/v1" }, keyless, env, noWarn)).toEqual({ kind: "openai", model: "m", baseURL: "http://127.0.0.1:3/v1", apiKey: "sk-user", source: "flag" });
      // No key in the environment: nothing withheld, nothing said.
      expect(recordedModelChoice({}, keyless, {}, noWarn)).toEqual({ kind: "openai", model: "m", baseURL: "http://127.0.0.1:1/v1", source: "run" });
    }
  });
});

describe("the provider of a stored run", () => {
  const recorded = (extra: Partial<StoredSettings>): StoredSettings =>
    ({ userInput: "x", maxTurns: 1, maxToolCalls: 1, timeoutMs: 1, maxRepeatedCalls: 1, maxDelegationDepth: 1, traceFile: false, permissions: { mode: "default", allow: [], ask: [], deny: [] }, ...extra }) as StoredSettings;

  it("is recorded with the server: openai for openaiModel, anthropic for anthropicModel", async () => {
    expect(openaiModel({ model: "m", baseURL: "http://127.0.0.1:8101/v1" }, {}).provider).toBe("openai");
    const server = await startAnthropicServer();
    try {
      server.enqueue(anthropicReplies.toolUse([{ name: "write_note", input: { note: "a" } }]));
      const model = anthropicModel({ model: "claude-x", maxTokens: 10, baseUrl: server.baseUrl, apiKey: "sk-ant" }, {});
      expect(await suspendedSettings(model)).toMatchObject({ model: "claude-x", baseUrl: server.baseUrl, keySent: true, provider: "anthropic" });
    } finally {
      await server.close();
    }
  });

  it("an anthropic run resumes as one, with ANTHROPIC_API_KEY (never OPENAI_API_KEY); an older record without one is openai", () => {
    const env = { OPENAI_API_KEY: "sk-openai", ANTHROPIC_API_KEY: "sk-ant" };
    const never = () => {
      throw new Error("no warning expected");
    };
    const anthropicRun = recorded({ model: "claude-x", baseUrl: "http://127.0.0.1:2", keySent: true, provider: "anthropic" });
    expect(recordedModelChoice({}, anthropicRun, env, never)).toEqual({ kind: "anthropic", model: "claude-x", baseURL: "http://127.0.0.1:2", apiKey: "sk-ant", source: "run" });
    const older = recorded({ model: "m", baseUrl: "http://127.0.0.1:1/v1", keySent: true });
    expect(recordedModelChoice({}, older, env, never)).toEqual({ kind: "openai", model: "m", baseURL: "http://127.0.0.1:1/v1", apiKey: "sk-openai", source: "run" });
    expect(() => recordedModelChoice({}, recorded({ baseUrl: "http://127.0.0.1:3", provider: "bedrock" }), env, never)).toThrow(/provider "bedrock", which statecraft resume can't build/);
  });
});
