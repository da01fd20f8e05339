import { APICallError, type LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { convertArrayToReadableStream, MockLanguageModelV3 } from "ai/test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { aiSdkModel, defineTool, query } from "../../../src/index.js";
import type { ModelRequest, ModelStreamEvent } from "../../../src/models/model.js";
import { collect, removeDir, tempDir, textOf } from "../../support/engine.js";

/** aiSdkModel with the AI SDK's own MockLanguageModelV3 (ai/test): stream parts in, statecraft events and requests out. */

let cwd: string;
beforeEach(() => {
  cwd = tempDir("statecraft-ai-sdk-");
});
afterEach(() => removeDir(cwd));

const usage = (input: number, output: number, extra: { cacheRead?: number; cacheWrite?: number; reasoning?: number } = {}) => ({
  inputTokens: { total: input, noCache: input - (extra.cacheRead ?? 0), cacheRead: extra.cacheRead, cacheWrite: extra.cacheWrite },
  outputTokens: { total: output, text: output - (extra.reasoning ?? 0), reasoning: extra.reasoning },
});

function streamOf(parts: LanguageModelV3StreamPart[]) {
  return { stream: convertArrayToReadableStream(parts) };
}

const textAnswer = (text: string): LanguageModelV3StreamPart[] => [
  { type: "stream-start", warnings: [] },
  { type: "text-start", id: "t0" },
  { type: "text-delta", id: "t0", delta: text },
  { type: "text-end", id: "t0" },
  { type: "finish", usage: usage(10, 3), finishReason: { unified: "stop", raw: "STOP" } },
];

const request: ModelRequest = { messages: [{ role: "user", content: "Hi" }], tools: [], sessionId: "s", turn: 0 };

async function events(model: ReturnType<typeof aiSdkModel>, signal = new AbortController().signal) {
  const out: ModelStreamEvent[] = [];
  for await (const event of model.stream(request, { signal })) out.push(event);
  return out;
}

const calls: unknown[] = [];
const weather = defineTool({
  name: "weather",
  description: "Current weather for a location.",
  inputSchema: { type: "object", properties: { location: { type: "string" } }, required: ["location"], additionalProperties: false },
  risk: "read",
  execute: (input: { location: string }) => {
    calls.push(input);
    return `${input.location}: 18C`;
  },
});

describe("aiSdkModel with MockLanguageModelV3", () => {
  it("text and reasoning parts: the exact events, the usage mapped (cache reads and writes, reasoning), the finish reason", async () => {
    const mock = new MockLanguageModelV3({
      doStream: streamOf([
        { type: "stream-start", warnings: [] },
        { type: "response-metadata", id: "r1", modelId: "mock-model-id" },
        { type: "reasoning-start", id: "r0" },
        { type: "reasoning-delta", id: "r0", delta: "Think" },
        { type: "reasoning-delta", id: "r0", delta: "ing.", providerMetadata: { anthropic: { signature: "sig-1" } } },
        { type: "reasoning-end", id: "r0" },
        { type: "text-start", id: "t0" },
        { type: "text-delta", id: "t0", delta: "Hello" },
        { type: "text-delta", id: "t0", delta: " world" },
        { type: "text-end", id: "t0" },
        { type: "finish", usage: usage(100, 20, { cacheRead: 60, cacheWrite: 40, reasoning: 5 }), finishReason: { unified: "stop", raw: "end_turn" } },
      ]),
    });
    const out = await events(aiSdkModel(mock));
    expect(out).toEqual([
      { type: "thinking_delta", text: "Think" },
      { type: "thinking_delta", text: "ing." },
      { type: "text_delta", text: "Hello" },
      { type: "text_delta", text: " world" },
      {
        type: "response",
        response: {
          text: "Hello world",
          thinking: "Thinking.",
          toolCalls: [],
          finishReason: "stop",
          usage: { input: 100, output: 20, cached: 60, reasoning: 5, cacheWrite: 40 },
          providerMetadata: {
            aiSdk: {
              content: [
                { type: "reasoning", text: "Thinking.", providerOptions: { anthropic: { signature: "sig-1" } } },
                { type: "text", text: "Hello world" },
              ],
            },
          },
        },
      },
    ]);
    expect(mock.doStreamCalls[0].prompt).toEqual([{ role: "user", content: [{ type: "text", text: "Hi" }] }]);
    expect(mock.doStreamCalls[0].abortSignal).toBeInstanceOf(AbortSignal);
  });

  it("several tool calls through query(): tools in the spec's shape, calls run, metadata of each part sent back as providerOptions", async () => {
    calls.length = 0;
    const mock = new MockLanguageModelV3({
      doStream: [
        streamOf([
          { type: "stream-start", warnings: [] },
          { type: "reasoning-start", id: "r0", providerMetadata: { google: { thoughtSignature: "thought-A" } } },
          { type: "reasoning-delta", id: "r0", delta: "Two cities." },
          { type: "reasoning-end", id: "r0" },
          { type: "tool-input-start", id: "c1", toolName: "weather" },
          { type: "tool-input-delta", id: "c1", delta: '{"location":' },
          { type: "tool-input-delta", id: "c1", delta: '"Paris"}' },
          { type: "tool-input-end", id: "c1" },
          { type: "tool-call", toolCallId: "c1", toolName: "weather", input: '{"location":"Paris"}', providerMetadata: { google: { thoughtSignature: "sig-call-1" } } },
          { type: "tool-call", toolCallId: "c2", toolName: "weather", input: '{"location":"Rome"}' },
          { type: "finish", usage: usage(50, 12), finishReason: { unified: "tool-calls", raw: "STOP" } },
        ]),
        streamOf(textAnswer("Both 18C.")),
      ],
    });
    const { events: evts, result } = await collect(query("Weather in Paris and Rome?", { model: aiSdkModel(mock, { maxTokens: 512 }), tools: [weather], cwd, systemPrompt: "Be brief." }));
    expect(result.reason).toBe("final_answer");
    expect(textOf(evts)).toBe("Both 18C.");
    expect(calls).toEqual([{ location: "Paris" }, { location: "Rome" }]);
    expect(result.usage).toEqual({ input: 60, output: 15, cached: 0, reasoning: 0 });

    const [first, second] = mock.doStreamCalls;
    expect(first.tools).toEqual([{ type: "function", name: "weather", description: "Current weather for a location.", inputSchema: weather.inputSchema }]);
    expect(first.toolChoice).toEqual({ type: "auto" });
    expect(first.maxOutputTokens).toBe(512);
    expect(second.prompt.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool"]);
    expect(second.prompt[2]).toEqual({
      role: "assistant",
      content: [
        { type: "reasoning", text: "Two cities.", providerOptions: { google: { thoughtSignature: "thought-A" } } },
        { type: "tool-call", toolCallId: "c1", toolName: "weather", input: { location: "Paris" }, providerOptions: { google: { thoughtSignature: "sig-call-1" } } },
        { type: "tool-call", toolCallId: "c2", toolName: "weather", input: { location: "Rome" } },
      ],
    });
    expect(second.prompt[3]).toEqual({
      role: "tool",
      content: [
        { type: "tool-result", toolCallId: "c1", toolName: "weather", output: { type: "text", value: "Paris: 18C" } },
        { type: "tool-result", toolCallId: "c2", toolName: "weather", output: { type: "text", value: "Rome: 18C" } },
      ],
    });
  });

  it("an error part before any text is retried when it says overloaded; a later success is the answer", async () => {
    const mock = new MockLanguageModelV3({
      doStream: [streamOf([{ type: "stream-start", warnings: [] }, { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }]), streamOf(textAnswer("ok"))],
    });
    const out = await events(aiSdkModel(mock, { retryBaseDelayMs: 1 }));
    expect(out[0]).toEqual({
      type: "retry",
      attempt: 1,
      delayMs: expect.any(Number),
      error: { code: "MODEL_ERROR", message: 'mock-provider model "mock-model-id" reported an error in its stream (overloaded_error): Overloaded' },
    });
    expect(out[out.length - 1]).toMatchObject({ type: "response", response: { text: "ok" } });
  });

  it("an error part of another kind is not retried; text already streamed is kept in the error", async () => {
    const mock = new MockLanguageModelV3({
      doStream: streamOf([
        { type: "text-start", id: "t0" },
        { type: "text-delta", id: "t0", delta: "Partial" },
        { type: "error", error: { type: "invalid_request_error", message: "bad" } },
      ]),
    });
    await expect(events(aiSdkModel(mock))).rejects.toMatchObject({ code: "MODEL_ERROR", retryable: false, data: { attempts: 1, partial: { text: "Partial" } } });
    expect(mock.doStreamCalls).toHaveLength(1);
  });

  it("a thrown APICallError: 429 retried (its retry-after honoured, capped), 401 not, an overflowing prompt is CONTEXT_OVERFLOW", async () => {
    const apiError = (statusCode: number, message: string, headers: Record<string, string> = {}) =>
      new APICallError({ message, url: "https://example.test/v1", requestBodyValues: {}, statusCode, responseHeaders: headers, responseBody: JSON.stringify({ error: { message } }), isRetryable: statusCode === 429 || statusCode >= 500 });
    let n = 0;
    const limited = new MockLanguageModelV3({
      doStream: async () => {
        if (n++ === 0) throw apiError(429, "Resource has been exhausted", { "retry-after": "5" });
        return streamOf(textAnswer("after wait"));
      },
    });
    const out = await events(aiSdkModel(limited, { maxRetryDelayMs: 15 }));
    expect(out[0]).toMatchObject({ type: "retry", attempt: 1, delayMs: 15, error: { message: expect.stringContaining("HTTP 429") } });
    expect(out[out.length - 1]).toMatchObject({ type: "response", response: { text: "after wait" } });

    const denied = new MockLanguageModelV3({ doStream: async () => Promise.reject(apiError(401, "API key not valid")) });
    await expect(events(aiSdkModel(denied))).rejects.toMatchObject({ code: "MODEL_ERROR", status: 401, retryable: false });
    expect(denied.doStreamCalls).toHaveLength(1);

    const overflow = new MockLanguageModelV3({ doStream: async () => Promise.reject(apiError(400, "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).")) });
    await expect(events(aiSdkModel(overflow))).rejects.toMatchObject({ code: "CONTEXT_OVERFLOW", status: 400 });
  });

  it("abort: the signal reaches the provider and the stream is cancelled; the call ends with the abort reason", async () => {
    let cancelled: unknown;
    let seenSignal: AbortSignal | undefined;
    const mock = new MockLanguageModelV3({
      doStream: async (options) => {
        seenSignal = options.abortSignal;
        let n = 0;
        const stream = new ReadableStream<LanguageModelV3StreamPart>({
          start(controller) {
            controller.enqueue({ type: "text-start", id: "t0" });
          },
          pull(controller) {
            controller.enqueue({ type: "text-delta", id: "t0", delta: `w${n++} ` });
            return new Promise((resolve) => setTimeout(resolve, 5));
          },
          cancel(reason) {
            cancelled = reason ?? "cancelled";
          },
        });
        return { stream };
      },
    });
    const controller = new AbortController();
    const reason = new Error("stop now");
    const seen: ModelStreamEvent[] = [];
    let thrown: unknown;
    try {
      for await (const event of aiSdkModel(mock).stream(request, { signal: controller.signal })) {
        seen.push(event);
        if (seen.length === 3) controller.abort(reason);
      }
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBe(reason);
    expect(seenSignal?.aborted).toBe(true);
    expect(cancelled).toBeDefined();
    expect(seen.some((e) => e.type === "response")).toBe(false);
  });

  it("a v2 model (AI SDK 5): flat usage and a string finish reason", async () => {
    const v2 = {
      specificationVersion: "v2" as const,
      provider: "v2-provider",
      modelId: "v2-model",
      doStream: async () => ({
        stream: convertArrayToReadableStream<unknown>([
          { type: "text-start", id: "0" },
          { type: "text-delta", id: "0", delta: "old" },
          { type: "text-end", id: "0" },
          { type: "finish", usage: { inputTokens: 7, outputTokens: 2, totalTokens: 9, cachedInputTokens: 3 }, finishReason: "length" },
        ]),
      }),
    };
    const out = await events(aiSdkModel(v2));
    expect(out[out.length - 1]).toMatchObject({ type: "response", response: { text: "old", finishReason: "length", usage: { input: 7, output: 2, cached: 3 } } });
  });

  it("refuses what is not a v3 or v2 language model, saying what to pass", () => {
    expect(() => aiSdkModel("openai/gpt-4o" as never)).toThrow(/expected an AI SDK language model/);
    expect(() => aiSdkModel({ specificationVersion: "v1", provider: "x", modelId: "y", doStream: () => {} } as never)).toThrow(/supports "v3" .* and "v2"/);
    expect(() => aiSdkModel(new MockLanguageModelV3(), { maxTokens: 0 })).toThrow(/maxTokens must be an integer ≥ 1/);
  });
});
