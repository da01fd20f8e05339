import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Message } from "../../../src/models/messages.js";
import { openaiModel } from "../../../src/models/openai/index.js";
import { EMPTY_RESULT_TEXT, MISSING_RESULT_TEXT, toWireMessages } from "../../../src/models/openai/request-messages.js";
import { mapToolCallIds } from "../../../src/models/openai/tool-id-mapping.js";
import { replies, startOpenAIServer, type OpenAIServer } from "../../support/openai-server.js";
import { WEATHER_TOOL, collect, request } from "./helpers.js";

let server: OpenAIServer;
beforeEach(async () => {
  server = await startOpenAIServer();
});
afterEach(async () => {
  await server.close();
});

/** A conversation as the engine stores it after two tool-using turns against a TGI-like server (ids "0"). */
const HISTORY: Message[] = [
  { role: "system", content: "You are terse." },
  { role: "user", content: "Weather in Paris and Rome?" },
  {
    role: "assistant",
    content: "",
    toolCalls: [
      { id: "call_engine_a", name: "weather", input: { location: "Paris" }, providerId: "0" },
      { id: "call_engine_b", name: "weather", input: { location: "Rome" }, providerId: "call_unique_b" },
    ],
  },
  // Results stored out of call order: they go on the wire in call order.
  { role: "tool", toolCallId: "call_engine_b", name: "weather", content: "Rome: 25C", isError: false },
  { role: "tool", toolCallId: "call_engine_a", name: "weather", content: "Paris: 18C", isError: false },
  { role: "assistant", content: "Paris 18C, Rome 25C." },
  { role: "user", content: "And Oslo?" },
  {
    role: "assistant",
    content: "Checking.",
    toolCalls: [{ id: "call_engine_c", name: "weather", input: { location: "Oslo" }, providerId: "0" }],
  },
  { role: "tool", toolCallId: "call_engine_c", name: "weather", content: "Oslo: 3C", isError: false },
];

describe("the request body", () => {
  it("maps a multi-turn tool conversation: ids, order, content null beside tool calls", async () => {
    server.enqueue(replies.text("Oslo 3C."));
    const result = await collect(openaiModel({ model: "test-model", baseURL: server.baseURL }, {}), request(HISTORY));
    expect(result.response?.text).toBe("Oslo 3C.");
    const body = server.chatRequests[0].body;
    expect(body.messages).toEqual([
      { role: "system", content: "You are terse." },
      { role: "user", content: "Weather in Paris and Rome?" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          // "0" appears twice in the conversation: the engine's id goes on the wire instead.
          { id: "call_engine_a", type: "function", function: { name: "weather", arguments: '{"location":"Paris"}' } },
          // A server id unique in the conversation is sent back as the server issued it.
          { id: "call_unique_b", type: "function", function: { name: "weather", arguments: '{"location":"Rome"}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_engine_a", content: "Paris: 18C" },
      { role: "tool", tool_call_id: "call_unique_b", content: "Rome: 25C" },
      { role: "assistant", content: "Paris 18C, Rome 25C." },
      { role: "user", content: "And Oslo?" },
      {
        role: "assistant",
        content: "Checking.",
        tool_calls: [{ id: "call_engine_c", type: "function", function: { name: "weather", arguments: '{"location":"Oslo"}' } }],
      },
      { role: "tool", tool_call_id: "call_engine_c", content: "Oslo: 3C" },
    ]);
    expect(body.tools).toEqual([
      { type: "function", function: { name: "weather", description: WEATHER_TOOL.description, parameters: WEATHER_TOOL.inputSchema } },
    ]);
    expect(body.stream).toBe(true);
    expect(body.stream_options).toEqual({ include_usage: true });
    expect(body).not.toHaveProperty("parallel_tool_calls");
    expect(body).not.toHaveProperty("temperature");
    expect(body).not.toHaveProperty("max_tokens");
  });

  it("no orphaned tool calls or results: a missing result is filled in, a stray result kept as context", () => {
    const wire = toWireMessages([
      { role: "user", content: "go" },
      {
        role: "assistant",
        content: "",
        cutOff: true,
        toolCalls: [
          { id: "e1", name: "bash", input: { command: "ls" } },
          { id: "e2", name: "bash", input: { command: "pwd" } },
        ],
      },
      { role: "tool", toolCallId: "e1", name: "bash", content: "", isError: false },
      // The run stopped before e2 ran; then the user came back.
      { role: "user", content: "continue" },
      { role: "tool", toolCallId: "ghost", name: "read_file", content: "stale output", isError: false },
      { role: "assistant", content: "done" },
    ]);
    expect(wire).toEqual([
      { role: "user", content: "go" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "e1", type: "function", function: { name: "bash", arguments: '{"command":"ls"}' } },
          { id: "e2", type: "function", function: { name: "bash", arguments: '{"command":"pwd"}' } },
        ],
      },
      { role: "tool", tool_call_id: "e1", content: EMPTY_RESULT_TEXT },
      { role: "tool", tool_call_id: "e2", content: MISSING_RESULT_TEXT },
      { role: "user", content: "continue" },
      { role: "user", content: "Result of an earlier read_file tool call (ghost):\nstale output" },
      { role: "assistant", content: "done" },
    ]);
    // Every tool call id is answered exactly once, right after its call.
    const calls = wire.flatMap((m) => (m.role === "assistant" ? (m.tool_calls ?? []).map((c) => c.id) : []));
    const results = wire.flatMap((m) => (m.role === "tool" ? [m.tool_call_id] : []));
    expect(results).toEqual(calls);
  });

  it("a result stored after a later user message moves up to follow its call", () => {
    const wire = toWireMessages([
      { role: "assistant", content: "", toolCalls: [{ id: "e1", name: "t", input: {} }] },
      { role: "user", content: "interjection" },
      { role: "tool", toolCallId: "e1", name: "t", content: "result", isError: true },
    ]);
    expect(wire.map((m) => m.role)).toEqual(["assistant", "tool", "user"]);
    expect(wire[1]).toEqual({ role: "tool", tool_call_id: "e1", content: "result" });
  });

  it("arguments go back as valid JSON objects, whatever the model sent", () => {
    const wire = toWireMessages([
      {
        role: "assistant",
        content: "",
        toolCalls: [
          { id: "a", name: "t", input: { b: 1 }, rawArguments: '{"b": 1}' },
          { id: "b", name: "t", input: '{"broken', rawArguments: '{"broken' },
          { id: "c", name: "t", input: {}, rawArguments: "" },
          { id: "d", name: "t", input: { nested: { x: [1, 2] } } },
        ],
      },
      { role: "tool", toolCallId: "a", name: "t", content: "ok", isError: false },
      { role: "tool", toolCallId: "b", name: "t", content: "Error: not valid JSON", isError: true },
      { role: "tool", toolCallId: "c", name: "t", content: "ok", isError: false },
      { role: "tool", toolCallId: "d", name: "t", content: "ok", isError: false },
    ]);
    const first = wire[0];
    if (first.role !== "assistant") throw new Error("expected the assistant message first");
    expect(first.tool_calls!.map((c) => c.function.arguments)).toEqual([
      '{"b": 1}',
      JSON.stringify({ unparsed_arguments: '{"broken' }),
      "{}",
      '{"nested":{"x":[1,2]}}',
    ]);
  });

  it("echoes what servers need back: Gemini's thought signature, DeepSeek's reasoning in a tool loop", () => {
    const wire = toWireMessages([
      {
        role: "assistant",
        content: "",
        thinking: "I should call the tool.",
        providerMetadata: { thought_signature: "sig-1", extra_content: { google: { thought_signature: "sig-1" } }, reasoningField: "reasoning_content" },
        toolCalls: [{ id: "e1", name: "t", input: {}, providerMetadata: { extra_content: { google: { thought_signature: "sig-call" } } } }],
      },
      { role: "tool", toolCallId: "e1", name: "t", content: "ok", isError: false },
      // Reasoning of a plain answer, or under another field name, is not sent back.
      { role: "assistant", content: "Done.", thinking: "easy", providerMetadata: { reasoningField: "reasoning_content" } },
      { role: "assistant", content: "", thinking: "hmm", providerMetadata: { reasoningField: "reasoning" }, toolCalls: [{ id: "e2", name: "t", input: {} }] },
      { role: "tool", toolCallId: "e2", name: "t", content: "ok", isError: false },
    ]);
    expect(wire[0]).toEqual({
      role: "assistant",
      content: null,
      thought_signature: "sig-1",
      extra_content: { google: { thought_signature: "sig-1" } },
      reasoning_content: "I should call the tool.",
      tool_calls: [
        { id: "e1", type: "function", function: { name: "t", arguments: "{}" }, extra_content: { google: { thought_signature: "sig-call" } } },
      ],
    });
    expect(wire[2]).toEqual({ role: "assistant", content: "Done." });
    expect(wire[3]).not.toHaveProperty("reasoning_content");
    expect(wire[3]).not.toHaveProperty("reasoningField");
  });

  it("tool ids: the server's id when unique, the engine's when repeated or colliding", () => {
    const ids = mapToolCallIds([
      { role: "assistant", content: "", toolCalls: [{ id: "e1", name: "t", input: {}, providerId: "0" }, { id: "e2", name: "t", input: {}, providerId: "call_x" }] },
      { role: "assistant", content: "", toolCalls: [{ id: "e3", name: "t", input: {}, providerId: "0" }, { id: "e4", name: "t", input: {}, providerId: "e1" }, { id: "e5", name: "t", input: {} }] },
    ]);
    expect(Object.fromEntries(ids)).toEqual({ e1: "e1", e2: "call_x", e3: "e3", e4: "e4", e5: "e5" });
  });

  it("options reach the body: temperature, max_tokens, parallel_tool_calls with tools, extraBody, headers", async () => {
    server.enqueue(replies.text("a"), replies.text("b"));
    const model = openaiModel(
      {
        model: "local-model",
        baseURL: server.baseURL,
        temperature: 0.2,
        maxTokens: 256,
        parallelToolCalls: false,
        extraBody: { top_p: 0.9, chat_template_kwargs: { enable_thinking: false } },
        headers: { "x-team": "statecraft" },
      },
      {},
    );
    await collect(model);
    const withTools = server.chatRequests[0];
    expect(withTools.body).toMatchObject({
      model: "local-model",
      temperature: 0.2,
      max_tokens: 256,
      parallel_tool_calls: false,
      top_p: 0.9,
      chat_template_kwargs: { enable_thinking: false },
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(withTools.body).not.toHaveProperty("max_completion_tokens");
    expect(withTools.headers["x-team"]).toBe("statecraft");
    // No key configured: a placeholder, which local servers ignore.
    expect(withTools.headers.authorization).toMatch(/^Bearer \S+$/);

    await collect(model, request(undefined, []));
    const withoutTools = server.chatRequests[1];
    expect(withoutTools.body).not.toHaveProperty("tools");
    expect(withoutTools.body).not.toHaveProperty("parallel_tool_calls");
  });

  it("retries send the very same body", async () => {
    server.enqueue(replies.error(502, "bad gateway"), replies.text("ok"));
    await collect(openaiModel({ model: "m", baseURL: server.baseURL, retryBaseDelayMs: 1 }, {}), request(HISTORY));
    expect(server.chatRequests).toHaveLength(2);
    expect(server.chatRequests[1].body).toEqual(server.chatRequests[0].body);
  });
});
