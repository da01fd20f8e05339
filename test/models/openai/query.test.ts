import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defineTool, query, type AgentEvent, type AnyTool } from "../../../src/index.js";
import { openaiModel } from "../../../src/models/openai/index.js";
import { collect, readJsonl, removeDir, tempDir, textOf } from "../../support/engine.js";
import { chunk, fixtureNames, replies, startOpenAIServer, type OpenAIServer } from "../../support/openai-server.js";
import { EXPECTED } from "./fixture-expectations.js";

/**
 * Full `query()` runs with `openaiModel({ baseURL })` against the real local server: the engine, the provider,
 * the SDK and HTTP all real.
 */

let server: OpenAIServer;
let cwd: string;
beforeEach(async () => {
  server = await startOpenAIServer();
  cwd = tempDir("statecraft-openai-");
});
afterEach(async () => {
  await server.close();
  removeDir(cwd);
});

const weatherCalls: unknown[] = [];
const weather = defineTool({
  name: "weather",
  description: "Current weather for a location.",
  inputSchema: { type: "object", properties: { location: { type: "string" } }, required: ["location"], additionalProperties: false },
  risk: "read",
  execute: (input: { location: string }) => {
    weatherCalls.push(input);
    return `${input.location}: 18C, clear`;
  },
});

function model(options: { maxRetries?: number; apiKey?: string } = {}) {
  return openaiModel({ model: "test-model", baseURL: server.baseURL, retryBaseDelayMs: 5, ...options }, {});
}

type TurnEnd = Extract<AgentEvent, { type: "turn_end" }>;

describe("query() with openaiModel against a local server", () => {
  it("runs a multi-turn tool-using conversation, across two runs of one session", async () => {
    weatherCalls.length = 0;
    // TGI-style ids: "0" for every call, in every turn.
    server.enqueue(
      replies.toolCalls([{ name: "weather", arguments: { location: "Paris" }, id: "0" }], { text: "Let me check.", usage: { prompt_tokens: 50, completion_tokens: 10 } }),
      replies.text("It is 18C and clear in Paris.", { usage: { prompt_tokens: 80, completion_tokens: 9, prompt_tokens_details: { cached_tokens: 40 } } }),
    );
    const first = await collect(query("Weather in Paris?", { model: model(), tools: [weather], cwd, systemPrompt: "Be brief." }));

    expect(first.result.reason).toBe("final_answer");
    expect(first.result.text).toBe("It is 18C and clear in Paris.");
    expect(textOf(first.events)).toBe("Let me check.It is 18C and clear in Paris.");
    expect(first.result.turns).toBe(2);
    expect(first.result.toolCalls).toBe(1);
    expect(first.result.usage).toEqual({ input: 130, output: 19, cached: 40, reasoning: 0 });
    expect(weatherCalls).toEqual([{ location: "Paris" }]);

    // The second request carried the call and its result, in order, with the system prompt first.
    const second = server.chatRequests[1].body.messages!;
    expect(second.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool"]);
    expect(second[0]).toEqual({ role: "system", content: expect.stringContaining("Be brief.") });
    expect(second[2]).toMatchObject({ role: "assistant", content: "Let me check." });
    const [sentCall] = second[2].tool_calls!;
    // "0" is unique so far: the server gets its own id back.
    expect(sentCall).toEqual({ id: "0", type: "function", function: { name: "weather", arguments: '{"location":"Paris"}' } });
    expect(second[3]).toEqual({ role: "tool", tool_call_id: "0", content: "Paris: 18C, clear" });
    // The engine owns the call's id; the server's is kept as providerId.
    const stored = first.result.messages.find((m) => m.role === "assistant" && m.toolCalls)!;
    if (stored.role !== "assistant") throw new Error("expected an assistant message");
    expect(stored.toolCalls![0].id).not.toBe("0");
    expect(stored.toolCalls![0].providerId).toBe("0");

    // The conversation goes on in the same session; the server reuses id "0".
    server.enqueue(
      replies.toolCalls([{ name: "weather", arguments: { location: "Rome" }, id: "0" }]),
      replies.text("Rome is 18C too."),
    );
    const again = await collect(query("And Rome?", { model: model(), tools: [weather], cwd, systemPrompt: "Be brief.", sessionId: first.result.sessionId }));
    expect(again.result.reason).toBe("final_answer");
    expect(again.result.text).toBe("Rome is 18C too.");
    expect(weatherCalls).toEqual([{ location: "Paris" }, { location: "Rome" }]);

    const last = server.chatRequests[3].body.messages!;
    expect(last.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "assistant", "user", "assistant", "tool"]);
    // "0" now appears twice in the conversation: both calls go back under the engine's ids, consistently.
    const ids = last.flatMap((m) => (m.tool_calls ?? []).map((c) => c.id));
    const resultIds = last.flatMap((m) => (m.role === "tool" ? [m.tool_call_id] : []));
    expect(ids).toHaveLength(2);
    expect(new Set(ids).size).toBe(2);
    expect(ids).not.toContain("0");
    expect(resultIds).toEqual(ids);
    expect(last[7]).toMatchObject({ role: "tool", content: "Rome: 18C, clear" });
  });

  it("a 401 ends the run model_error, turn_end.error naming OPENAI_API_KEY, without retrying", async () => {
    server.enqueue(replies.error(401, "Incorrect API key provided: sk-wr***ng.", { code: "invalid_api_key" }));
    const { events, result } = await collect(query("hi", { model: model({ apiKey: "sk-wrong-key-123" }), cwd }));
    const end = events.at(-1) as TurnEnd;
    expect(end.type).toBe("turn_end");
    expect(end.reason).toBe("model_error");
    expect(end.error?.code).toBe("MODEL_ERROR");
    expect(end.error?.status).toBe(401);
    expect(end.error?.message).toContain("OPENAI_API_KEY");
    expect(end.error?.message).not.toContain("sk-wrong-key-123");
    expect(result.reason).toBe("model_error");
    expect(events.some((e) => e.type === "retry")).toBe(false);
    expect(server.chatRequests).toHaveLength(1);
  });

  it("retries show as retry events and kind:\"retry\" trace lines", async () => {
    server.enqueue(replies.error(503, "overloaded", { type: "server_error" }), replies.text("Fine."));
    const { events, result } = await collect(query("hi", { model: model(), cwd }));
    expect(result.reason).toBe("final_answer");
    expect(result.text).toBe("Fine.");
    const retry = events.find((e) => e.type === "retry");
    expect(retry).toMatchObject({ type: "retry", attempt: 1, error: { code: "MODEL_ERROR", message: expect.stringContaining("HTTP 503") } });
    const lines = readJsonl<{ kind: string; attempt?: number; error?: { message: string } }>(join(cwd, ".agent", "trace.jsonl"));
    const retryLines = lines.filter((l) => l.kind === "retry");
    expect(retryLines).toHaveLength(1);
    expect(retryLines[0]).toMatchObject({ attempt: 1, error: { message: expect.stringContaining("overloaded") } });
  });

  it("retries exhausted end the run model_error", async () => {
    server.enqueue(replies.error(500, "down"), replies.error(500, "still down"));
    const { events, result } = await collect(query("hi", { model: model({ maxRetries: 1 }), cwd }));
    expect(result.reason).toBe("model_error");
    expect(events.filter((e) => e.type === "retry")).toHaveLength(1);
    expect((events.at(-1) as TurnEnd).error?.message).toContain("still down");
  });

  it("aborting mid-stream keeps the partial text in the transcript, marked cut off", async () => {
    const words = Array.from({ length: 100 }, (_, i) => chunk({ content: `w${i} ` }));
    server.enqueue(replies.chunks([chunk({ role: "assistant", content: "" }), ...words], { lineDelayMs: 30 }));
    const run = query("talk", { model: model(), cwd });
    const events: AgentEvent[] = [];
    let texts = 0;
    let abortedAt = 0;
    for (;;) {
      const next = await run.next();
      if (next.done) {
        expect(next.value.reason).toBe("user_abort");
        const last = next.value.messages.at(-1);
        expect(last).toMatchObject({ role: "assistant", cutOff: true });
        expect(last?.content).toBe(textOf(events));
        expect(last?.content.startsWith("w0 w1 w2 ")).toBe(true);
        break;
      }
      events.push(next.value);
      if (next.value.type === "text_delta" && ++texts === 3) {
        abortedAt = Date.now();
        run.abort();
      }
    }
    expect(Date.now() - abortedAt).toBeLessThan(1000);
  });
});

describe("every recorded fixture through a full run", () => {
  const TOOL_NAMES = [
    "weather",
    "GetWeatherArgs",
    "get_stock_price",
    "get_weather",
    "get_something_by_name",
    "get_capital",
    "get_current_weather",
    "read_file",
    "webSearchTool",
    "searchGoogle",
    "get_current_time",
    "final_result",
    "divide",
  ];
  const executed: { name: string; input: unknown }[] = [];
  // Schemas accept any object: what is under test is that each call arrives with exactly the recorded arguments.
  const tools: AnyTool[] = [
    ...TOOL_NAMES.map((name) =>
      defineTool({
        name,
        description: `The ${name} tool.`,
        inputSchema: { type: "object" },
        risk: "read",
        execute: (input: Record<string, unknown>) => {
          executed.push({ name, input });
          return `${name} result`;
        },
      }),
    ),
  ];

  for (const name of [...fixtureNames().sse, ...fixtureNames().json]) {
    const expected = EXPECTED[name];
    it(name, async () => {
      executed.length = 0;
      server.enqueue(replies.fixture(name), replies.text("All done."));
      const { events, result } = await collect(query("Go.", { model: model(), tools, cwd }));
      const end = events.at(-1) as TurnEnd;
      expect(events.filter((e) => e.type === "turn_end")).toHaveLength(1);

      if ("error" in expected) {
        expect(end.reason).toBe("model_error");
        expect(end.error?.code).toBe(expected.error.code);
        expect(end.error?.message).toContain(expected.error.messageIncludes);
        expect(server.chatRequests).toHaveLength(1);
        return;
      }

      const startedCalls = events.flatMap((e) => (e.type === "tool_start" ? [{ name: e.call.name, input: e.call.input }] : []));
      expect(startedCalls).toEqual(expected.calls.map((c) => ({ name: c.name, input: c.args })));
      expect(executed).toEqual(startedCalls);

      if (expected.calls.length === 0) {
        // A text-only answer ends the run (a "length" cut-off included), with exactly that text.
        expect(end.reason).toBe("final_answer");
        expect(result.text).toBe(expected.text);
        expect(textOf(events)).toBe(expected.text);
        expect(server.chatRequests).toHaveLength(1);
        expect(result.usage.input).toBe(expected.usage?.input ?? 0);
        expect(result.usage.output).toBe(expected.usage?.output ?? 0);
        return;
      }

      // Tool calls ran, their results went back, and the model's next answer ended the run.
      expect(end.reason).toBe("final_answer");
      expect(result.text).toBe("All done.");
      expect(server.chatRequests).toHaveLength(2);
      const sent = server.chatRequests[1].body.messages!;
      const assistant = sent.find((m) => m.role === "assistant")!;
      expect(assistant.tool_calls!.map((c) => [c.function.name, JSON.parse(c.function.arguments) as unknown])).toEqual(
        expected.calls.map((c) => [c.name, c.args]),
      );
      const results = sent.filter((m) => m.role === "tool");
      expect(results.map((m) => m.tool_call_id)).toEqual(assistant.tool_calls!.map((c) => c.id));
      // Server ids go back as they came when present and unique; otherwise the engine's own.
      expected.calls.forEach((call, i) => {
        const id = assistant.tool_calls![i].id;
        if (call.providerId) expect(id).toBe(call.providerId);
        else expect(id).toMatch(/^call_/);
      });
      expect(result.usage.input).toBe((expected.usage?.input ?? 0) + 10);
    });
  }
});
