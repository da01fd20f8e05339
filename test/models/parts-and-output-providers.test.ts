import { convertArrayToReadableStream, MockLanguageModelV3 } from "ai/test";
import type { LanguageModelV3CallOptions, LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { aiSdkModel, anthropicModel, defineTool, query } from "../../src/index.js";
import { collect, removeDir, tempDir } from "../support/engine.js";
import { anthropicReplies, startAnthropicServer, type AnthropicServer } from "../support/anthropic-server.js";

/**
 * Image and file parts and a run's `output` on the Anthropic and AI SDK providers, through query(): what reaches the
 * Messages API server's request body, and what the AI SDK model is called with.
 */

// A 1×1 PNG.
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const PDF = Buffer.from("%PDF-1.4 a tiny pdf").toString("base64");
const Answer = { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false } as const;

const snapshot = defineTool({
  name: "snapshot",
  description: "Takes a picture.",
  risk: "read",
  inputSchema: { type: "object", properties: {} },
  execute: () => ({ content: [{ type: "text" as const, text: "here it is" }, { type: "image" as const, image: PNG, mediaType: "image/png" }] }),
});

let cwd: string;
beforeEach(() => {
  cwd = tempDir("statecraft-parts-");
});
afterEach(() => removeDir(cwd));

describe("anthropicModel", () => {
  let server: AnthropicServer;
  beforeEach(async () => {
    server = await startAnthropicServer();
  });
  afterEach(() => server.close());
  const model = () => anthropicModel({ model: "claude-sonnet-4-5", maxTokens: 512, baseUrl: server.baseUrl, apiKey: "sk-ant-test" }, {});

  it("sends image, URL and document parts as image and document blocks, and a tool's image inside its tool_result", async () => {
    server.enqueue(anthropicReplies.toolUse([{ name: "snapshot", input: {} }]), anthropicReplies.text("a red dot"));
    const input = {
      role: "user" as const,
      content: [
        { type: "text" as const, text: "What is in these?" },
        { type: "image" as const, image: Buffer.from(PNG, "base64"), mediaType: "image/png" },
        { type: "image" as const, image: new URL("https://example.com/cat.jpg") },
        { type: "file" as const, data: PDF, mediaType: "application/pdf", filename: "tiny.pdf" },
      ],
    };
    const { result } = await collect(query(input, { model: model(), tools: [snapshot], cwd }));
    expect(result.reason).toBe("final_answer");
    expect(server.requests[0]!.body.messages[0]).toEqual({
      role: "user",
      content: [
        { type: "text", text: "What is in these?" },
        { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
        { type: "image", source: { type: "url", url: "https://example.com/cat.jpg" } },
        { type: "document", source: { type: "base64", media_type: "application/pdf", data: PDF }, title: "tiny.pdf" },
      ],
    });
    const toolTurn = server.requests[1]!.body.messages.at(-1);
    expect(toolTurn.content[0]).toMatchObject({
      type: "tool_result",
      content: [
        { type: "text", text: "here it is" },
        { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
      ],
    });
  });

  it("a file it can't take is refused by name, before anything is sent", async () => {
    const input = { role: "user" as const, content: [{ type: "file" as const, data: "AAAA", mediaType: "application/zip", filename: "x.zip" }] };
    const { result } = await collect(query(input, { model: model(), cwd }));
    expect(result.reason).toBe("model_error");
    expect(JSON.stringify(result)).toMatch(/application\/zip \(x\.zip\) can't be sent to Anthropic/);
    expect(server.requests).toHaveLength(0);
  });

  it("asks for the output's shape at the end of the system prompt, and the run's output is the validated answer", async () => {
    server.enqueue(anthropicReplies.text('{"city":"Paris"}'));
    const { result } = await collect(query("Which city?", { model: model(), cwd, systemPrompt: "Be brief.", output: Answer }));
    expect(result.reason).toBe("final_answer");
    expect(result.reason === "final_answer" && result.output).toEqual({ city: "Paris" });
    const system = server.requests[0]!.body.system as Array<{ type: string; text: string }>;
    expect(system[0]).toEqual({ type: "text", text: "Be brief." });
    expect(system.at(-1)!.text).toContain(JSON.stringify(Answer));
  });
});

describe("aiSdkModel", () => {
  const answer = (text: string): LanguageModelV3StreamPart[] => [
    { type: "stream-start", warnings: [] },
    { type: "text-start", id: "t" },
    { type: "text-delta", id: "t", delta: text },
    { type: "text-end", id: "t" },
    { type: "finish", usage: { inputTokens: { total: 5, noCache: 5, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 2, text: 2, reasoning: undefined } }, finishReason: { unified: "stop", raw: "stop" } },
  ];
  const toolCall: LanguageModelV3StreamPart[] = [
    { type: "stream-start", warnings: [] },
    { type: "tool-call", toolCallId: "c1", toolName: "snapshot", input: "{}" },
    { type: "finish", usage: { inputTokens: { total: 5, noCache: 5, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 2, text: 2, reasoning: undefined } }, finishReason: { unified: "tool-calls", raw: "tool_use" } },
  ];

  function scripted(...replies: LanguageModelV3StreamPart[][]) {
    const calls: LanguageModelV3CallOptions[] = [];
    const model = new MockLanguageModelV3({
      doStream: async (options: LanguageModelV3CallOptions) => {
        calls.push(options);
        return { stream: convertArrayToReadableStream(replies[calls.length - 1]!) };
      },
    });
    return { model, calls };
  }

  it("gives image and file parts as the specification's file parts, and a tool's image as content", async () => {
    const { model, calls } = scripted(toolCall, answer("a red dot"));
    const input = {
      role: "user" as const,
      content: [
        { type: "text" as const, text: "Look" },
        { type: "image" as const, image: `data:image/png;base64,${PNG}` },
        { type: "image" as const, image: "https://example.com/cat.jpg", mediaType: "image/jpeg" },
        { type: "file" as const, data: PDF, mediaType: "application/pdf", filename: "tiny.pdf" },
      ],
    };
    const { result } = await collect(query(input, { model: aiSdkModel(model), tools: [snapshot], cwd }));
    expect(result.reason).toBe("final_answer");
    const user = calls[0]!.prompt.find((m) => m.role === "user")!;
    expect(user.content).toEqual([
      { type: "text", text: "Look" },
      { type: "file", data: PNG, mediaType: "image/png" },
      { type: "file", data: new URL("https://example.com/cat.jpg"), mediaType: "image/*" },
      { type: "file", data: PDF, mediaType: "application/pdf", filename: "tiny.pdf" },
    ]);
    const toolMessage = calls[1]!.prompt.find((m) => m.role === "tool")!;
    expect(toolMessage.content[0]).toMatchObject({
      type: "tool-result",
      output: { type: "content", value: [{ type: "text", text: "here it is" }, { type: "image-data", data: PNG, mediaType: "image/png" }] },
    });
  });

  it("asks for the output's shape through responseFormat", async () => {
    const { model, calls } = scripted(answer('{"city":"Oslo"}'));
    const { result } = await collect(query("Which city?", { model: aiSdkModel(model), cwd, output: Answer }));
    expect(result.reason === "final_answer" && result.output).toEqual({ city: "Oslo" });
    expect(calls[0]!.responseFormat).toMatchObject({ type: "json", schema: { type: "object", required: ["city"] } });
  });
});
