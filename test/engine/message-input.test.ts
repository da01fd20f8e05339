import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { scriptedModel } from "../../src/models/scripted.js";
import { query } from "../../src/query.js";
import { loadTranscript } from "../../src/record/transcript.js";
import { collect, echoTool, removeDir, tempDir } from "../support/engine.js";

let cwd: string;
beforeEach(() => {
  cwd = tempDir("statecraft-message-input-");
});
afterEach(() => removeDir(cwd));

describe("query(input): a user message or a conversation", () => {
  it("a conversation (with an earlier tool call and result) is the start; its last user message is the request; the transcript keeps it whole", async () => {
    const model = scriptedModel([{ text: "It said hi." }]);
    const conversation = [
      { role: "user" as const, content: "Echo hi." },
      { role: "assistant" as const, content: "", toolCalls: [{ id: "call_1", name: "echo", input: { text: "hi" } }] },
      { role: "tool" as const, toolCallId: "call_1", name: "echo", content: "hi", isError: false },
      { role: "assistant" as const, content: "Done." },
      { role: "user" as const, content: [{ type: "text" as const, text: "What did it say?" }] },
    ];
    const { result } = await collect(query(conversation, { model, cwd, tools: [echoTool] }));
    expect(result.reason).toBe("final_answer");
    expect(model.requests[0].messages).toEqual(conversation);
    const stored = loadTranscript(cwd, result.sessionId).messages;
    expect(stored).toEqual([...conversation, { role: "assistant", content: "It said hi." }]);
    // The session goes on from there.
    const next = scriptedModel([{ text: "Bye." }]);
    await collect(query("Thanks.", { model: next, cwd, sessionId: result.sessionId }));
    expect(next.requests[0].messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "user", "assistant", "user"]);
  });

  it("a conversation ending with the assistant adds no request", async () => {
    const model = scriptedModel([{ text: "More." }]);
    await collect(query([{ role: "user", content: "Go." }, { role: "assistant", content: "Partly done." }], { model, cwd }));
    expect(model.requests[0].messages).toEqual([{ role: "user", content: "Go." }, { role: "assistant", content: "Partly done." }]);
  });

  it("bad input is INVALID_OPTIONS saying what was wrong", () => {
    const model = scriptedModel([{ text: "x" }]);
    expect(() => query(42 as never, { model, cwd })).toThrow(/input must be a string, a user message \{ role: "user", content \} or a list of messages, got number/);
    expect(() => query([{ role: "system", content: "x" }] as never, { model, cwd })).toThrow(/input\[0\]\.role must be "user", "assistant" or "tool", got "system"/);
    expect(() => query({ role: "user", content: [{ type: "image", image: "not base64!" }] }, { model, cwd })).toThrow(/input\.content\[0\]\.image is neither base64 data nor an http\(s\) or data: URL/);
    expect(() => query({ role: "user", content: [{ type: "image", image: "file:///etc/passwd" }] }, { model, cwd })).toThrow(/only http\(s\) and data: URLs/);
    expect(() => query({ role: "user", content: [{ type: "image", image: new Uint8Array([1, 2, 3]) }] }, { model, cwd })).toThrow(/give the image's mediaType/);
    expect(() => query([{ role: "user", content: "a" }], { model, cwd, sessionId: "s1" })).toThrow(/a list of messages starts a new conversation/);
  });
});
