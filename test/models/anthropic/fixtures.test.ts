import { describe, expect, it } from "vitest";
import { anthropicModel } from "../../../src/index.js";
import type { Message } from "../../../src/models/messages.js";
import type { ModelRequest, ModelStreamEvent } from "../../../src/models/model.js";
import { anthropicReplies } from "../../support/anthropic-server.js";
import { anthropicServerPerTest } from "../../support/anthropic-per-test.js";

/**
 * Each recorded-shape stream of test/fixtures/anthropic-wire/ through `anthropicModel().stream()`, the SDK and HTTP:
 * the exact events streamed, and the response (text, tool calls, finish reason, usage, the blocks kept to send back).
 */

const server = anthropicServerPerTest();

const WEATHER = {
  name: "get_weather",
  description: "Get the current weather in a given location",
  inputSchema: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
};

function request(messages: Message[] = [{ role: "user", content: "What is the weather like in San Francisco?" }]): ModelRequest {
  return { messages, tools: [WEATHER], sessionId: "s", turn: 0 };
}

function model(options: { thinking?: { budgetTokens: number } } = {}) {
  return anthropicModel({ model: "claude-sonnet-4-5", maxTokens: 20_000, baseUrl: server.baseUrl, apiKey: "sk-ant-test", retryBaseDelayMs: 1, ...options }, {});
}

async function run(fixture: string | string[]): Promise<ModelStreamEvent[]> {
  for (const name of [fixture].flat()) server.enqueue(anthropicReplies.fixture(name));
  const events: ModelStreamEvent[] = [];
  for await (const event of model().stream(request(), { signal: new AbortController().signal })) events.push(event);
  return events;
}

const text = (t: string) => ({ type: "text_delta", text: t });
const thinking = (t: string) => ({ type: "thinking_delta", text: t });

describe("anthropic-wire fixtures through anthropicModel", () => {
  it("docs-basic-text: two text deltas, end_turn → stop, output usage from message_delta", async () => {
    const events = await run("docs-basic-text");
    expect(events).toEqual([
      text("Hello"),
      text("!"),
      {
        type: "response",
        response: {
          text: "Hello!",
          toolCalls: [],
          finishReason: "stop",
          usage: { input: 25, output: 15 },
          providerMetadata: { anthropic: { content: [{ type: "text", text: "Hello!" }], stopReason: "end_turn" } },
        },
      },
    ]);
  });

  it("docs-tool-use: text, then one tool call assembled from input_json_delta pieces; tool_use → tool_calls", async () => {
    const events = await run("docs-tool-use");
    const deltas = events.filter((e) => e.type === "text_delta").map((e) => (e as { text: string }).text);
    expect(deltas.join("")).toBe("Okay, let's check the weather for San Francisco, CA:");
    expect(deltas).toHaveLength(13);
    const last = events[events.length - 1];
    expect(last).toEqual({
      type: "response",
      response: {
        text: "Okay, let's check the weather for San Francisco, CA:",
        toolCalls: [{ providerId: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", name: "get_weather", arguments: '{"location": "San Francisco, CA", "unit": "fahrenheit"}' }],
        finishReason: "tool_calls",
        usage: { input: 472, output: 89 },
        providerMetadata: {
          anthropic: {
            content: [
              { type: "text", text: "Okay, let's check the weather for San Francisco, CA:" },
              { type: "tool_use", id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", name: "get_weather" },
            ],
            stopReason: "tool_use",
          },
        },
      },
    });
  });

  it("docs-thinking: thinking deltas, the signature kept on the block, then text; no usage in the stream → none reported", async () => {
    const events = await run("docs-thinking");
    expect(events.slice(0, 6)).toEqual([
      thinking("Let me solve this step by step:\n\n1. First break down 27 * 453"),
      thinking("\n2. 453 = 400 + 50 + 3"),
      thinking("\n3. 27 * 400 = 10,800"),
      thinking("\n4. 27 * 50 = 1,350"),
      thinking("\n5. 27 * 3 = 81"),
      thinking("\n6. 10,800 + 1,350 + 81 = 12,231"),
    ]);
    expect(events[6]).toEqual(text("27 * 453 = 12,231"));
    const response = (events[7] as Extract<ModelStreamEvent, { type: "response" }>).response;
    expect(response.text).toBe("27 * 453 = 12,231");
    expect(response.finishReason).toBe("stop");
    expect(response.usage).toBeUndefined();
    expect(response.thinking).toBe(
      "Let me solve this step by step:\n\n1. First break down 27 * 453\n2. 453 = 400 + 50 + 3\n3. 27 * 400 = 10,800\n4. 27 * 50 = 1,350\n5. 27 * 3 = 81\n6. 10,800 + 1,350 + 81 = 12,231",
    );
    expect(response.providerMetadata).toEqual({
      anthropic: {
        content: [
          { type: "thinking", thinking: response.thinking, signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds..." },
          { type: "text", text: "27 * 453 = 12,231" },
        ],
        stopReason: "end_turn",
      },
    });
  });

  it("thinking-tool-use: cache writes counted in input and as cacheWrite; the call's input from two pieces", async () => {
    const events = await run("thinking-tool-use");
    expect(events.slice(0, 2)).toEqual([thinking("The user wants the weather in Paris."), thinking(" I should call get_weather.")]);
    const response = (events[2] as Extract<ModelStreamEvent, { type: "response" }>).response;
    expect(response.toolCalls).toEqual([{ providerId: "toolu_01CswdEQBMshySk6Y9DFKrfq", name: "get_weather", arguments: '{"location": "Paris"}' }]);
    expect(response.usage).toEqual({ input: 12 + 1410, output: 71, cached: 0, cacheWrite: 1410 });
    expect(response.finishReason).toBe("tool_calls");
  });

  it("redacted-thinking: the redacted block's data kept whole, beside the thinking block and its signature", async () => {
    const events = await run("redacted-thinking");
    expect(events.filter((e) => e.type !== "response")).toEqual([thinking("I'll look the weather up.")]);
    const response = (events[1] as Extract<ModelStreamEvent, { type: "response" }>).response;
    const content = (response.providerMetadata!.anthropic as { content: unknown[] }).content;
    expect(content).toEqual([
      {
        type: "redacted_thinking",
        data: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB+URSKF7oqxqRQ8L5L8rLVyIwxtE3rAFBa8cr3qpP",
      },
      { type: "thinking", thinking: "I'll look the weather up.", signature: "ErUBCkYIBBgCIkB2UmVkYWN0ZWQtdGhpbmtpbmctc2lnbmF0dXJl..." },
      { type: "tool_use", id: "toolu_01RdctdThnkWthTl5Us3Pq", name: "get_weather" },
    ]);
    expect(response.toolCalls).toEqual([{ providerId: "toolu_01RdctdThnkWthTl5Us3Pq", name: "get_weather", arguments: '{"location": "Oslo"}' }]);
  });

  it("parallel-tool-use: two calls in order, each with its own id and input", async () => {
    const events = await run("parallel-tool-use");
    const response = (events[events.length - 1] as Extract<ModelStreamEvent, { type: "response" }>).response;
    expect(response.toolCalls).toEqual([
      { providerId: "toolu_01A09q90qw90lq917835lq9", name: "get_weather", arguments: '{"location": "San Francisco, CA"}' },
      { providerId: "toolu_01B19r91rx91mr928946mr0", name: "get_weather", arguments: '{"location": "New York, NY"}' },
    ]);
    expect(response.usage).toEqual({ input: 512, output: 102, cached: 0, cacheWrite: 0 });
  });

  it("pause-turn: the paused turn is continued at once, sent back whole, and the two parts make one response", async () => {
    const events = await run(["pause-turn", "pause-turn-continued"]);
    expect(server.requests).toHaveLength(2);
    const sent = server.requests[1].body.messages;
    expect(sent.map((m: { role: string }) => m.role)).toEqual(["user", "assistant"]);
    // The paused content goes back as the API sent it: text, the server tool call (its input parsed), its result.
    expect(sent[1].content).toEqual([
      { type: "text", text: "I'll check the current weather in New York City for you." },
      { type: "server_tool_use", id: "srvtoolu_014hJH82Qum7Td6UV8gDXThB", name: "web_search", input: { query: "weather NYC today" } },
      {
        type: "web_search_tool_result",
        tool_use_id: "srvtoolu_014hJH82Qum7Td6UV8gDXThB",
        content: [
          {
            type: "web_search_result",
            title: "Weather in New York City in May 2025 (New York) - detailed Weather Forecast for a month",
            url: "https://world-weather.info/forecast/usa/new_york/may-2025/",
            encrypted_content: "Ev0DCioIAxgCIiQ3NmU4ZmI4OC1k...",
            page_age: null,
          },
        ],
      },
    ]);
    const response = (events[events.length - 1] as Extract<ModelStreamEvent, { type: "response" }>).response;
    expect(response.text).toBe("I'll check the current weather in New York City for you.Here's the current weather information for New York City: sunny, 22°C.");
    expect(response.finishReason).toBe("stop");
    // Both requests' usage, summed.
    expect(response.usage).toEqual({ input: 2679 + 8003, output: 48 + 21, cached: 0, cacheWrite: 0 });
    expect(events.filter((e) => e.type === "text_delta").map((e) => (e as { text: string }).text)).toEqual([
      "I'll check",
      " the current weather in New York City for you",
      ".",
      "Here's the current weather information for New York",
      " City: sunny, 22°C.",
    ]);
  });

  it("refusal: the text so far, finish reason content_filter", async () => {
    const events = await run("refusal");
    const response = (events[events.length - 1] as Extract<ModelStreamEvent, { type: "response" }>).response;
    expect(response.text).toBe("I can't help");
    expect(response.finishReason).toBe("content_filter");
    expect(response.usage).toEqual({ input: 31, output: 4 });
  });
});
