import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openaiModel } from "../../../src/models/openai/index.js";
import { fixtureNames, replies, startOpenAIServer, type OpenAIServer } from "../../support/openai-server.js";
import { EXPECTED, type Expected } from "./fixture-expectations.js";
import { asAgentError, collect, parsedCalls } from "./helpers.js";

/**
 * Every recorded stream and body of test/fixtures/openai-wire/ replayed by a real local server, read by
 * openaiModel through the real openai SDK.
 */

function expectThinking(actual: string, expected: Expected["thinking"]): void {
  if (expected === undefined) expect(actual).toBe("");
  else if (typeof expected === "string") expect(actual).toBe(expected);
  else {
    expect(actual.length).toBe(expected.length);
    expect(actual.startsWith(expected.start)).toBe(true);
    expect(actual.endsWith(expected.end)).toBe(true);
  }
}

describe("openaiModel replays every recorded server response", () => {
  let server: OpenAIServer;
  beforeAll(async () => {
    server = await startOpenAIServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it("covers every fixture file", () => {
    const { sse, json } = fixtureNames();
    expect([...sse, ...json].sort()).toEqual(Object.keys(EXPECTED).sort());
    expect(sse.length + json.length).toBe(32);
  });

  for (const [name, expected] of Object.entries(EXPECTED)) {
    it(name, async () => {
      const before = server.chatRequests.length;
      server.enqueue(replies.fixture(name));
      // maxRetries 2: a failure that must not be retried shows as exactly one request.
      const model = openaiModel({ model: "test-model", baseURL: server.baseURL, retryBaseDelayMs: 1 }, {});
      const result = await collect(model);
      expect(server.chatRequests.length - before).toBe(1);
      expect(result.events.filter((e) => e.type === "retry")).toEqual([]);

      if ("error" in expected) {
        const error = asAgentError(result.error);
        expect(error.code).toBe(expected.error.code);
        expect(error.status).toBe(expected.error.status);
        expect(error.retryable).toBe(expected.error.retryable);
        expect(error.message).toContain(expected.error.messageIncludes);
        expect(result.events.some((e) => e.type === "response")).toBe(false);
        // What streamed before the error reached the caller and is kept on the error.
        expectThinking(result.thinking, expected.thinking);
        expect((error.data?.partial as { thinking?: string } | undefined)?.thinking).toBe(result.thinking);
        return;
      }

      expect(result.error).toBeUndefined();
      expect(result.events.filter((e) => e.type === "response")).toHaveLength(1);
      expect(result.events.at(-1)?.type).toBe("response");
      const response = result.response!;
      expect(response.text).toBe(expected.text);
      expect(result.text).toBe(expected.text);
      expectThinking(response.thinking ?? "", expected.thinking);
      expectThinking(result.thinking, expected.thinking);
      expect(parsedCalls(response.toolCalls)).toEqual(expected.calls);
      expect(response.finishReason).toBe(expected.finishReason);
      expect(response.usage).toEqual(expected.usage);
      if (expected.metadata) expect(response.providerMetadata).toEqual(expected.metadata);
      else expect(response.providerMetadata).toBeUndefined();
    });
  }

  it("streams text as it arrives, one delta per server delta", async () => {
    server.enqueue(replies.fixture("pydantic-ai-snowflake-claude-no-finish-reason"));
    const result = await collect(openaiModel({ model: "test-model", baseURL: server.baseURL }, {}));
    const textDeltas = result.events.filter((e) => e.type === "text_delta").map((e) => (e.type === "text_delta" ? e.text : ""));
    expect(textDeltas).toEqual([
      "15 × 27 = **",
      "405**\n\nHere",
      "'s the breakdown",
      ":\n- 15 × ",
      "20",
      " = 300\n- 15",
      " × 7 = 105",
      "\n- 300 + 105",
      " = **",
      "405**",
    ]);
    // Reasoning comes first, as two deltas.
    expect(result.events.slice(0, 2)).toEqual([
      { type: "thinking_delta", text: "15" },
      { type: "thinking_delta", text: " * 27 = 405" },
    ]);
  });

  it("sends the request the way the wire expects: stream with usage, tools as JSON Schema", async () => {
    server.enqueue(replies.fixture("vercel-openai-after-tool-result-stop"));
    await collect(openaiModel({ model: "test-model", baseURL: server.baseURL }, {}));
    const seen = server.chatRequests.at(-1)!;
    expect(seen.body.model).toBe("test-model");
    expect(seen.body.stream).toBe(true);
    expect(seen.body.stream_options).toEqual({ include_usage: true });
    expect(seen.body.tools).toEqual([
      {
        type: "function",
        function: {
          name: "weather",
          description: "Current weather for a location",
          parameters: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
        },
      },
    ]);
  });
});
