import { describe, expect, it } from "vitest";
import { StreamAccumulator } from "../../../src/models/openai/stream-accumulator.js";
import { ServerErrorPayload } from "../../../src/models/openai/server-error-payload.js";

/** Quirks seen in the wild but not in the recorded fixtures, fed chunk by chunk. */
function run(chunks: unknown[]) {
  const acc = new StreamAccumulator();
  const deltas = chunks.flatMap((c) => acc.addChunk(c));
  return { deltas, response: acc.response() };
}

const choice = (delta: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ choices: [{ index: 0, delta, ...extra }] });
const call = (fields: Record<string, unknown>) => choice({ tool_calls: [fields] });

describe("tool-call assembly", () => {
  it("all calls at index 0 with distinct ids (Ollama) are separate calls", () => {
    const { response } = run([
      call({ index: 0, id: "call_a", function: { name: "read", arguments: '{"path":"a"}' } }),
      call({ index: 0, id: "call_b", function: { name: "read", arguments: '{"path":"b"}' } }),
    ]);
    expect(response.toolCalls).toEqual([
      { providerId: "call_a", name: "read", arguments: '{"path":"a"}' },
      { providerId: "call_b", name: "read", arguments: '{"path":"b"}' },
    ]);
    expect(response.finishReason).toBe("tool_calls");
  });

  it("a different name at the same index starts a new call; names are never concatenated", () => {
    const { response } = run([
      call({ index: 0, function: { name: "read", arguments: '{"path":"a"}' } }),
      call({ index: 0, function: { name: "write", arguments: '{"path":"b"}' } }),
      call({ index: 0, function: { name: "write" } }),
    ]);
    expect(response.toolCalls.map((c) => [c.name, c.arguments])).toEqual([
      ["read", '{"path":"a"}'],
      ["write", '{"path":"b"}'],
    ]);
  });

  it("the same tool twice at index 0 without ids: a complete call followed by fresh arguments is a second call", () => {
    const { response } = run([
      call({ index: 0, function: { name: "read", arguments: '{"path":"a"}' } }),
      call({ index: 0, function: { name: "read", arguments: '{"path":"b"}' } }),
    ]);
    expect(response.toolCalls.map((c) => c.arguments)).toEqual(['{"path":"a"}', '{"path":"b"}']);
  });

  it("a server repeating a finished call's whole arguments does not double them", () => {
    const { response } = run([
      call({ index: 0, id: "c1", function: { name: "read", arguments: '{"path":' } }),
      call({ index: 0, function: { arguments: '"a"}' } }),
      call({ index: 0, id: "c1", function: { arguments: '{"path":"a"}' } }),
    ]);
    expect(response.toolCalls).toEqual([{ providerId: "c1", name: "read", arguments: '{"path":"a"}' }]);
  });

  it("arguments sent as an object are passed on as an object; double-encoded JSON is unwrapped", () => {
    const { response } = run([
      call({ index: 0, id: "c1", function: { name: "a", arguments: { path: "x", n: 2 } } }),
      call({ index: 1, id: "c2", function: { name: "b", arguments: JSON.stringify('{"q":"y"}') } }),
      call({ index: 2, id: "c3", function: { name: "c", arguments: "" } }),
      call({ index: 3, id: "c4", function: { name: "d", arguments: "{not json" } }),
    ]);
    expect(response.toolCalls.map((c) => c.arguments)).toEqual([{ path: "x", n: 2 }, '{"q":"y"}', "{}", "{not json"]);
  });

  it("sparse indexes keep arrival order; noise deltas create no call", () => {
    const { response } = run([
      call({ index: 5, id: "late", function: { name: "x", arguments: "{}" } }),
      call({ index: 2, id: "early", function: { name: "y", arguments: "{}" } }),
      call({ index: 9, function: { arguments: "" } }),
      call({ function: {} }),
    ]);
    expect(response.toolCalls.map((c) => c.providerId)).toEqual(["late", "early"]);
  });

  it("a call that never got a name is kept (the engine tells the model), not dropped", () => {
    const { response } = run([call({ index: 0, function: { arguments: '{"a":1}' } })]);
    expect(response.toolCalls).toEqual([{ name: "", arguments: '{"a":1}' }]);
  });

  it("tool-call extras are kept for echoing back (Gemini's extra_content)", () => {
    const extra = { google: { thought_signature: "sig" } };
    const { response } = run([call({ index: 0, id: "c1", function: { name: "t", arguments: "{}" }, extra_content: extra })]);
    expect(response.toolCalls[0].providerMetadata).toEqual({ extra_content: extra });
  });
});

describe("chunk tolerance", () => {
  it("content given as parts, usage inside the choice (Kimi), other choices ignored", () => {
    const { deltas, response } = run([
      { choices: [{ index: 0, delta: { content: [{ type: "text", text: "Hel" }, { type: "text", text: "lo" }] } }] },
      { choices: [{ index: 1, delta: { content: "IGNORED" } }] },
      { choices: [{ index: 0, delta: {}, finish_reason: "stop", usage: { prompt_tokens: 3, completion_tokens: 2 } }] },
    ]);
    expect(deltas).toEqual([{ type: "text_delta", text: "Hello" }]);
    expect(response.text).toBe("Hello");
    expect(response.usage).toEqual({ input: 3, output: 2 });
  });

  it("usage is the last one seen, never a sum; a null usage does not erase it", () => {
    const { response } = run([
      { choices: [], usage: { prompt_tokens: 10, completion_tokens: 1 } },
      { choices: [], usage: { prompt_tokens: 10, completion_tokens: 7, prompt_cache_hit_tokens: 4 } },
      { choices: [], usage: null },
    ]);
    expect(response.usage).toEqual({ input: 10, output: 7, cached: 4 });
  });

  it("finish reasons: aliases normalised, unknown kept, missing inferred", () => {
    expect(run([choice({ content: "x" }, { finish_reason: "end_turn" })]).response.finishReason).toBe("stop");
    expect(run([choice({ content: "x" }, { finish_reason: "max_tokens" })]).response.finishReason).toBe("length");
    expect(run([choice({ content: "x" }, { finish_reason: "eos_weird" })]).response.finishReason).toBe("eos_weird");
    expect(run([choice({ content: "x" })]).response.finishReason).toBe("stop");
  });

  it("non-object chunks and choices are skipped", () => {
    const { response } = run(["garbage", null, { choices: [null, 3, { index: 0 }] }, choice({ content: "ok" })]);
    expect(response.text).toBe("ok");
  });

  it("an error key inside a chunk is thrown as a server error, after the output before it", () => {
    const acc = new StreamAccumulator();
    expect(acc.addChunk(choice({ content: "partial" }))).toEqual([{ type: "text_delta", text: "partial" }]);
    expect(() => acc.addChunk({ error: { message: "boom", code: 500 } })).toThrow(ServerErrorPayload);
    expect(acc.response().text).toBe("partial");
  });

  it("a whole JSON body is read like a stream of one chunk", () => {
    const acc = new StreamAccumulator();
    const deltas = acc.addCompletion({
      choices: [{ index: 0, message: { role: "assistant", content: "Answer.", reasoning_content: "Thought." }, finish_reason: "stop" }],
      usage: { prompt_tokens: 5, completion_tokens: 2 },
    });
    expect(deltas).toEqual([
      { type: "thinking_delta", text: "Thought." },
      { type: "text_delta", text: "Answer." },
    ]);
    expect(acc.response()).toEqual({
      text: "Answer.",
      toolCalls: [],
      finishReason: "stop",
      usage: { input: 5, output: 2 },
      thinking: "Thought.",
      providerMetadata: { reasoningField: "reasoning_content" },
    });
    expect(() => new StreamAccumulator().addCompletion({ error: { message: "quota" } })).toThrow("quota");
  });
});
