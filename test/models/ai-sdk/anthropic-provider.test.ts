import { createAnthropic } from "@ai-sdk/anthropic";
import { describe, expect, it } from "vitest";
import { aiSdkModel, query } from "../../../src/index.js";
import { collect, textOf } from "../../support/engine.js";
import { anthropicReplies } from "../../support/anthropic-server.js";
import { anthropicServerPerTest, endlessTextReply, tempDirPerTest, weatherTool } from "../../support/anthropic-per-test.js";

/**
 * aiSdkModel with a real provider package, @ai-sdk/anthropic (v3 line), against the local server speaking the
 * Anthropic Messages wire from test/fixtures/anthropic-wire/: the provider's own request building and stream parsing,
 * statecraft's adapter around it.
 */

const server = anthropicServerPerTest();
const work = tempDirPerTest("statecraft-ai-sdk-anthropic-");

const seen: unknown[] = [];
const getWeather = weatherTool(seen);

function providerModel() {
  const anthropic = createAnthropic({ baseURL: `${server.baseUrl}/v1`, apiKey: "sk-ant-provider-test" });
  return aiSdkModel(anthropic("claude-sonnet-4-5"), {
    maxTokens: 4096,
    providerOptions: { anthropic: { thinking: { type: "enabled", budgetTokens: 2048 } } },
    retryBaseDelayMs: 1,
  });
}

describe("aiSdkModel(@ai-sdk/anthropic) against a local Messages API server", () => {
  it("thinking with a tool: the provider's reasoning metadata goes back, and the second request carries the thinking block and signature unchanged", async () => {
    seen.length = 0;
    server.enqueue(anthropicReplies.fixture("thinking-tool-use"), anthropicReplies.fixture("after-tool-result-text"));
    const { events, result } = await collect(query("Weather in Paris?", { model: providerModel(), tools: [getWeather], cwd: work.path, systemPrompt: "Be brief." }));
    expect(result.reason).toBe("final_answer");
    expect(textOf(events)).toBe("It is 18°C and clear in Paris.");
    expect(events.filter((e) => e.type === "thinking_delta").map((e) => (e as { text: string }).text).join("")).toBe(
      "The user wants the weather in Paris. I should call get_weather.",
    );
    expect(seen).toEqual([{ location: "Paris" }]);
    // The provider's usage: input tokens with cache reads and writes, cached the reads.
    expect(result.usage).toEqual({ input: 12 + 1410 + 40 + 1410, output: 71 + 14, cached: 1410, reasoning: 0 });

    const [first, second] = server.requests;
    expect(first.headers["x-api-key"]).toBe("sk-ant-provider-test");
    expect(first.body.thinking).toEqual({ type: "enabled", budget_tokens: 2048 });
    // The tool in the spec's shape became the wire's (the provider adds its own streaming flag).
    expect(first.body.tools).toHaveLength(1);
    expect(first.body.tools[0]).toMatchObject({ name: "get_weather", description: "Get the current weather in a given location", input_schema: getWeather.inputSchema });
    expect(second.body.messages[1]).toEqual({
      role: "assistant",
      content: [
        { type: "thinking", thinking: "The user wants the weather in Paris. I should call get_weather.", signature: "EuYBCkQYAiJAgCs1le6/Pol5Z4/JMomVOouGrWdhYNsH3ukzUECbB6iWrSQtsQuRHJID6lWV..." },
        { type: "tool_use", id: "toolu_01CswdEQBMshySk6Y9DFKrfq", name: "get_weather", input: { location: "Paris" } },
      ],
    });
    expect(second.body.messages[2]).toEqual({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: "toolu_01CswdEQBMshySk6Y9DFKrfq", content: "Paris: 18C, clear" }],
    });
  });

  it("parallel calls and redacted thinking through the provider package", async () => {
    seen.length = 0;
    server.enqueue(anthropicReplies.fixture("redacted-thinking"), anthropicReplies.fixture("parallel-tool-use"), anthropicReplies.fixture("docs-basic-text"));
    const { result } = await collect(query("Weather?", { model: providerModel(), tools: [getWeather], cwd: work.path }));
    expect(result.text).toBe("Hello!");
    expect(seen).toEqual([{ location: "Oslo" }, { location: "San Francisco, CA" }, { location: "New York, NY" }]);
    const blocks = server.requests[1].body.messages[1].content;
    expect(blocks.map((b: { type: string }) => b.type)).toEqual(["redacted_thinking", "thinking", "tool_use"]);
    expect(blocks[0].data).toMatch(/^EmwKAhgBEgy3va3pzix/);
  });

  it("a 529 overloaded answer is retried by statecraft (the provider marks it retryable)", async () => {
    server.enqueue(anthropicReplies.jsonFixture("overloaded-error", 529), anthropicReplies.fixture("docs-basic-text"));
    const { events, result } = await collect(query("Hi", { model: providerModel(), cwd: work.path }));
    expect(result.text).toBe("Hello!");
    expect(events.filter((e) => e.type === "retry")).toHaveLength(1);
    expect(server.requests).toHaveLength(2);
  });

  it("abort mid-stream: the provider's request is stopped and the server sees the connection closed", async () => {
    const { reply, connectionClosed } = endlessTextReply("w");
    server.enqueue(reply);
    const controller = new AbortController();
    const reason = new Error("stop now");
    let deltas = 0;
    let thrown: unknown;
    try {
      for await (const event of providerModel().stream({ messages: [{ role: "user", content: "Hi" }], tools: [], sessionId: "s", turn: 0 }, { signal: controller.signal })) {
        if (event.type === "text_delta" && ++deltas === 3) controller.abort(reason);
      }
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBe(reason);
    await connectionClosed;
    expect(server.requests).toHaveLength(1);
  });
});
