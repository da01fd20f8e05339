import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { anthropicModel, defineTool, query } from "../../../src/index.js";
import { collect, readJsonl, textOf } from "../../support/engine.js";
import { anthropicReplies } from "../../support/anthropic-server.js";
import { anthropicServerPerTest, tempDirPerTest, weatherTool } from "../../support/anthropic-per-test.js";

/**
 * Full `query()` runs with `anthropicModel({ baseUrl })` against the local Messages API server: the engine, the
 * provider, the official SDK and HTTP all real.
 */

const server = anthropicServerPerTest();
const work = tempDirPerTest("statecraft-anthropic-");

const calls: unknown[] = [];
const getWeather = weatherTool(calls);

const KEY = "sk-ant-api03-test-key";

interface TraceLine {
  state: string;
  details?: { response?: { finishReason: string; usage?: Record<string, number>; thinking?: string } };
}

describe("query() with anthropicModel against a local Messages API server", () => {
  it("thinking with tools: the second request carries the first response's thinking block and signature unchanged", async () => {
    calls.length = 0;
    server.enqueue(anthropicReplies.fixture("thinking-tool-use"), anthropicReplies.fixture("after-tool-result-text"));
    const model = anthropicModel({ model: "claude-sonnet-4-5", maxTokens: 4096, thinking: { budgetTokens: 2048 }, cache: true, baseUrl: server.baseUrl, apiKey: KEY }, {});
    const { events, result } = await collect(query("Weather in Paris?", { model, tools: [getWeather], cwd: work.path, systemPrompt: "Be brief." }));

    expect(result.reason).toBe("final_answer");
    expect(result.text).toBe("It is 18°C and clear in Paris.");
    expect(textOf(events)).toBe("It is 18°C and clear in Paris.");
    expect(events.filter((e) => e.type === "thinking_delta").map((e) => (e as { text: string }).text)).toEqual([
      "The user wants the weather in Paris.",
      " I should call get_weather.",
    ]);
    expect(calls).toEqual([{ location: "Paris" }]);
    // Input counts every input token (cache writes and reads too); cached is what was read from the cache.
    expect(result.usage).toEqual({ input: 12 + 1410 + 40 + 1410, output: 71 + 14, cached: 1410, reasoning: 0 });

    expect(server.requests).toHaveLength(2);
    const [first, second] = server.requests;
    expect(first.path).toBe("/v1/messages");
    // The official SDK (1.x) sends the key as a bearer token.
    expect(first.headers.authorization).toBe(`Bearer ${KEY}`);
    // The version the SDK pins (a date).
    expect(first.headers["anthropic-version"]).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(first.body.thinking).toEqual({ type: "enabled", budget_tokens: 2048 });
    expect(first.body.max_tokens).toBe(4096);
    expect(first.body.stream).toBe(true);
    expect(first.body.model).toBe("claude-sonnet-4-5");

    expect(second.body.messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(second.body.messages[1].content).toEqual([
      { type: "thinking", thinking: "The user wants the weather in Paris. I should call get_weather.", signature: "EuYBCkQYAiJAgCs1le6/Pol5Z4/JMomVOouGrWdhYNsH3ukzUECbB6iWrSQtsQuRHJID6lWV..." },
      { type: "tool_use", id: "toolu_01CswdEQBMshySk6Y9DFKrfq", name: "get_weather", input: { location: "Paris" } },
    ]);
    expect(second.body.messages[2].content).toEqual([
      { type: "tool_result", tool_use_id: "toolu_01CswdEQBMshySk6Y9DFKrfq", content: "Paris: 18C, clear", cache_control: { type: "ephemeral" } },
    ]);

    // The trace records each answer's finish reason and usage as the provider reported them.
    const responses = readJsonl<TraceLine>(join(work.path, ".agent", "trace.jsonl"))
      .map((line) => line.details?.response)
      .filter((r) => r !== undefined);
    expect(responses.map((r) => r!.finishReason)).toEqual(["tool_calls", "stop"]);
    expect(responses[0]!.usage).toEqual({ input: 1422, output: 71, cached: 0, cacheWrite: 1410 });
    expect(responses[1]!.usage).toEqual({ input: 1450, output: 14, cached: 1410, cacheWrite: 0 });
  });

  it("cache on: breakpoints on the last tool, the end of the system prompt and the last block of the last message only", async () => {
    server.enqueue(anthropicReplies.fixture("docs-basic-text"));
    const model = anthropicModel({ model: "claude-sonnet-4-5", maxTokens: 1024, cache: true, baseUrl: server.baseUrl, apiKey: KEY }, {});
    const second = defineTool({ ...getWeather, name: "get_time", description: "The time in a location" });
    await collect(query("Hello", { model, tools: [getWeather, second], cwd: work.path, systemPrompt: "Be brief." }));
    const body = server.requests[0].body;
    expect(body.tools.map((t: { name: string; cache_control?: unknown }) => [t.name, t.cache_control])).toEqual([
      ["get_weather", undefined],
      ["get_time", { type: "ephemeral" }],
    ]);
    expect(body.tools[0].input_schema).toEqual(getWeather.inputSchema);
    expect(body.system).toHaveLength(1);
    expect(body.system[0]).toMatchObject({ type: "text", cache_control: { type: "ephemeral" } });
    expect(body.system[0].text).toContain("Be brief.");
    expect(body.messages).toEqual([{ role: "user", content: [{ type: "text", text: "Hello", cache_control: { type: "ephemeral" } }] }]);
    const marks = JSON.stringify(body).split('"cache_control"').length - 1;
    expect(marks).toBe(3);
  });

  it("cache off: no cache_control anywhere", async () => {
    server.enqueue(anthropicReplies.fixture("docs-basic-text"));
    const model = anthropicModel({ model: "claude-sonnet-4-5", maxTokens: 1024, baseUrl: server.baseUrl, apiKey: KEY }, {});
    await collect(query("Hello", { model, tools: [getWeather], cwd: work.path, systemPrompt: "Be brief." }));
    expect(JSON.stringify(server.requests[0].body)).not.toContain("cache_control");
    expect(server.requests[0].body.thinking).toBeUndefined();
  });

  it("parallel tool calls: both run, and both results go back first in one user turn, in call order", async () => {
    calls.length = 0;
    server.enqueue(anthropicReplies.fixture("parallel-tool-use"), anthropicReplies.fixture("docs-basic-text"));
    const model = anthropicModel({ model: "claude-sonnet-4-5", maxTokens: 1024, baseUrl: server.baseUrl, apiKey: KEY }, {});
    const { result } = await collect(query("Weather in SF and NYC?", { model, tools: [getWeather], cwd: work.path }));
    expect(result.toolCalls).toBe(2);
    expect(calls).toEqual([{ location: "San Francisco, CA" }, { location: "New York, NY" }]);
    const sent = server.requests[1].body.messages;
    expect(sent[1].content).toEqual([
      { type: "text", text: "I'll check both cities." },
      { type: "tool_use", id: "toolu_01A09q90qw90lq917835lq9", name: "get_weather", input: { location: "San Francisco, CA" } },
      { type: "tool_use", id: "toolu_01B19r91rx91mr928946mr0", name: "get_weather", input: { location: "New York, NY" } },
    ]);
    expect(sent[2]).toEqual({
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "toolu_01A09q90qw90lq917835lq9", content: "San Francisco, CA: 18C, clear" },
        { type: "tool_result", tool_use_id: "toolu_01B19r91rx91mr928946mr0", content: "New York, NY: 18C, clear" },
      ],
    });
  });

  it("redacted thinking goes back exactly as it came, before the thinking block and the call", async () => {
    server.enqueue(anthropicReplies.fixture("redacted-thinking"), anthropicReplies.fixture("docs-basic-text"));
    const model = anthropicModel({ model: "claude-3-7-sonnet-20250219", maxTokens: 4096, thinking: { budgetTokens: 1024 }, baseUrl: server.baseUrl, apiKey: KEY }, {});
    await collect(query("Weather in Oslo?", { model, tools: [getWeather], cwd: work.path }));
    expect(server.requests[1].body.messages[1].content.map((b: { type: string }) => b.type)).toEqual(["redacted_thinking", "thinking", "tool_use"]);
    expect(server.requests[1].body.messages[1].content[0].data).toBe(
      "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB+URSKF7oqxqRQ8L5L8rLVyIwxtE3rAFBa8cr3qpP",
    );
  });

  it("a session continued in a second run sends the first run's thinking blocks back too", async () => {
    server.enqueue(anthropicReplies.fixture("docs-thinking"));
    const model = anthropicModel({ model: "claude-sonnet-4-5", maxTokens: 20000, thinking: { budgetTokens: 16000 }, baseUrl: server.baseUrl, apiKey: KEY }, {});
    const first = await collect(query("What is 27 * 453?", { model, cwd: work.path }));
    server.enqueue(anthropicReplies.fixture("docs-basic-text"));
    await collect(query("Thanks", { model, cwd: work.path, sessionId: first.result.sessionId }));
    const sent = server.requests[1].body.messages;
    expect(sent.map((m: { role: string }) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(sent[1].content[0]).toEqual({
      type: "thinking",
      thinking: "Let me solve this step by step:\n\n1. First break down 27 * 453\n2. 453 = 400 + 50 + 3\n3. 27 * 400 = 10,800\n4. 27 * 50 = 1,350\n5. 27 * 3 = 81\n6. 10,800 + 1,350 + 81 = 12,231",
      signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds...",
    });
    expect(sent[1].content[1]).toEqual({ type: "text", text: "27 * 453 = 12,231" });
  });

  it('"prompt is too long" from the API makes the run compact once and retry, as compaction promises', async () => {
    let summaries = 0;
    const bulky = defineTool({ ...getWeather, name: "bulky", execute: () => "x ".repeat(2000) });
    server.enqueue(
      anthropicReplies.toolUse([{ name: "bulky", input: { location: "a" } }]),
      anthropicReplies.error(400, "invalid_request_error", "prompt is too long: 208310 tokens > 200000 maximum"),
      anthropicReplies.text("fits now"),
    );
    const model = anthropicModel({ model: "claude-sonnet-4-5", maxTokens: 1024, baseUrl: server.baseUrl, apiKey: KEY }, {});
    const { result } = await collect(query("x", { model, tools: [bulky], cwd: work.path, contextWindow: 800, reserveTokens: 0, summarize: () => (summaries++, "short summary") }));
    expect(result.reason).toBe("final_answer");
    expect(result.text).toBe("fits now");
    expect(summaries).toBe(1);
    expect(server.requests).toHaveLength(3);
    expect(JSON.stringify(server.requests[2].body.messages)).toContain("short summary");
  });
});
