import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool, query } from "../../../src/index.js";
import { openaiModel } from "../../../src/models/openai/index.js";
import { collect, removeDir, tempDir } from "../../support/engine.js";
import { replies, startOpenAIServer, type OpenAIServer } from "../../support/openai-server.js";

/** Image parts and structured output reaching a real local OpenAI-compatible server, as the wire format says. */

let server: OpenAIServer;
let cwd: string;
beforeEach(async () => {
  server = await startOpenAIServer();
  cwd = tempDir("statecraft-openai-parts-");
});
afterEach(async () => {
  await server.close();
  removeDir(cwd);
});

const model = (options: { structuredOutput?: "json_schema" | "instructions" } = {}) => openaiModel({ model: "test-model", baseURL: server.baseURL, retryBaseDelayMs: 5, ...options }, {});
// A 1×1 PNG.
const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=", "base64");

describe("the OpenAI-compatible provider: content parts", () => {
  it("a user message's image (bytes, base64, URL) and file parts go as image_url data URLs, URLs and file parts", async () => {
    server.enqueue(replies.text("A red dot."));
    const input = {
      role: "user" as const,
      content: [
        { type: "text" as const, text: "What is in these?" },
        { type: "image" as const, image: new Uint8Array(PNG) },
        { type: "image" as const, image: PNG.toString("base64"), mediaType: "image/png" },
        { type: "image" as const, image: new URL("https://example.com/cat.jpg") },
        { type: "file" as const, data: Buffer.from("%PDF-1.4").toString("base64"), mediaType: "application/pdf", filename: "a.pdf" },
      ],
    };
    const { result } = await collect(query(input, { model: model(), cwd }));
    expect(result.reason).toBe("final_answer");
    const sent = server.chatRequests[0].body.messages!;
    expect(sent.at(-1)).toEqual({
      role: "user",
      content: [
        { type: "text", text: "What is in these?" },
        { type: "image_url", image_url: { url: `data:image/png;base64,${PNG.toString("base64")}` } },
        { type: "image_url", image_url: { url: `data:image/png;base64,${PNG.toString("base64")}` } },
        { type: "image_url", image_url: { url: "https://example.com/cat.jpg" } },
        { type: "file", file: { file_data: `data:application/pdf;base64,${Buffer.from("%PDF-1.4").toString("base64")}`, filename: "a.pdf" } },
      ],
    });
  });

  it("a server that refuses a request with images says so, with what to do", async () => {
    server.enqueue(replies.error(400, "image_url is only supported by certain models", { type: "invalid_request_error" }));
    const { result } = await collect(query({ role: "user", content: [{ type: "text", text: "?" }, { type: "image", image: new Uint8Array(PNG) }] }, { model: model(), cwd }));
    expect(result.reason).toBe("model_error");
    expect(result.error?.message).toContain("image_url is only supported by certain models");
    expect(result.error?.message).toContain("the request carried images or files: this model or server may not take them");
  });

  it("an image a tool returned follows the tool results as a user message (tool messages take text only)", async () => {
    const snap = defineTool({
      name: "snap",
      description: "Takes a picture.",
      inputSchema: z.object({}),
      risk: "read",
      execute: () => ({ content: [{ type: "text" as const, text: "one picture" }, { type: "image" as const, image: new Uint8Array(PNG) }] }),
    });
    server.enqueue(replies.toolCalls([{ id: "c1", name: "snap", arguments: {} }]), replies.text("I see a dot."));
    const { result } = await collect(query("look", { model: model(), cwd, tools: [snap] }));
    expect(result.reason).toBe("final_answer");
    const sent = server.chatRequests[1].body.messages!;
    const tool = sent.findIndex((m) => m.role === "tool");
    expect(sent[tool]).toMatchObject({ role: "tool", content: "one picture" });
    expect(sent[tool + 1]).toEqual({
      role: "user",
      content: [
        { type: "text", text: expect.stringMatching(/^The snap tool call \(.+\) returned:$/) },
        { type: "image_url", image_url: { url: `data:image/png;base64,${PNG.toString("base64")}` } },
      ],
    });
  });
});

describe("the OpenAI-compatible provider: structured output", () => {
  const Answer = z.object({ city: z.string(), celsius: z.number() }).strict();

  it("an object schema goes as response_format json_schema (strict when the schema allows), the answer is validated", async () => {
    server.enqueue(replies.text('{"city":"Oslo","celsius":4}'));
    const { result } = await collect(query("weather?", { model: model(), cwd, output: Answer }));
    expect(result.status === "completed" && result.output).toEqual({ city: "Oslo", celsius: 4 });
    const body = server.chatRequests[0].body;
    expect(body.response_format).toEqual({
      type: "json_schema",
      json_schema: { name: "final_answer", strict: true, schema: { type: "object", properties: { city: { type: "string" }, celsius: { type: "number" } }, required: ["city", "celsius"], additionalProperties: false } },
    });
  });

  it("a schema strict mode cannot take is sent with strict: false", async () => {
    server.enqueue(replies.text('{"city":"Oslo"}'));
    await collect(query("weather?", { model: model(), cwd, output: z.object({ city: z.string(), celsius: z.number().optional() }) }));
    expect((server.chatRequests[0].body.response_format as { json_schema: { strict: boolean } }).json_schema.strict).toBe(false);
  });

  it("an array schema, or structuredOutput: instructions, puts the schema in the system message instead", async () => {
    server.enqueue(replies.text('["a"]'), replies.text('{"city":"Oslo","celsius":4}'));
    await collect(query("tags", { model: model(), cwd, systemPrompt: "Be brief.", output: { type: "array", items: { type: "string" } } }));
    await collect(query("weather?", { model: model({ structuredOutput: "instructions" }), cwd, output: Answer }));
    for (const request of server.chatRequests) {
      expect(request.body.response_format).toBeUndefined();
      expect(request.body.messages![0]).toMatchObject({ role: "system", content: expect.stringContaining("Give your final answer as a JSON value") });
    }
    expect(server.chatRequests[0].body.messages![0].content).toMatch(/^Be brief\.\n\nGive your final answer/);
  });
});
