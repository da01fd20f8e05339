import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { DefaultChatTransport, readUIMessageStream, type UIMessage, type UIMessageChunk } from "ai";
import { describe, expect, it } from "vitest";
import { builtinTools, query, scriptedModel } from "../../src/index.js";
import { toUIMessageStream } from "../../src/server/index.js";
import { call, gate, serverPerTest, TOKEN } from "./helpers.js";

const live = serverPerTest();
const { start } = live;

/** The AI SDK's own client: its transport (which validates every chunk with its schema) and its message reader. */
function transport(): DefaultChatTransport<UIMessage> {
  return new DefaultChatTransport({ api: `${live.base}/api/chat`, headers: { authorization: `Bearer ${TOKEN}` } });
}

async function lastMessage(stream: ReadableStream<UIMessageChunk>, message?: UIMessage): Promise<UIMessage> {
  let last: UIMessage | undefined;
  let failure: unknown;
  for await (const m of readUIMessageStream({ stream, ...(message ? { message } : {}), onError: (e) => (failure = e), terminateOnError: true })) last = structuredClone(m);
  if (failure) throw failure;
  return last!;
}

const user = (text: string): UIMessage => ({ id: `u-${text.length}`, role: "user", parts: [{ type: "text", text }] });

describe("POST /api/chat speaks the AI SDK UI message stream", () => {
  it("text and reasoning stream into one assistant message, read by the AI SDK's parser", async () => {
    await start([{ thinking: "The user greets me.", text: "Hello! How can I help?" }]);
    const stream = await transport().sendMessages({ chatId: "chat-a", messages: [user("hi")], trigger: "submit-message", messageId: undefined, abortSignal: undefined });
    const message = await lastMessage(stream);
    expect(message.role).toBe("assistant");
    const parts = message.parts.filter((p) => p.type !== "step-start");
    expect(parts).toEqual([
      expect.objectContaining({ type: "reasoning", text: "The user greets me.", state: "done" }),
      expect.objectContaining({ type: "text", text: "Hello! How can I help?", state: "done" }),
    ]);
    // The chat id is the session: its conversation is kept there.
    const session = (await (await call(live.base, "/sessions/chat-a")).json()) as { messages: Array<{ role: string }> };
    expect(session.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
  });

  it("a write asks for approval (AI SDK 6 tool approval); the approval response resumes the run: tool output and final text", async () => {
    await start([{ text: "I'll write it.", toolCalls: [{ name: "write_file", input: { path: "a.txt", content: "from the chat\n" } }] }, { text: "Done: a.txt is written." }]);
    const messages: UIMessage[] = [user("write a.txt")];
    const asked = await lastMessage(await transport().sendMessages({ chatId: "chat-b", messages, trigger: "submit-message", messageId: undefined, abortSignal: undefined }));
    const tool = asked.parts.find((p) => p.type === "tool-write_file") as { state: string; toolCallId: string; input: unknown; approval?: { id: string } } | undefined;
    expect(tool).toMatchObject({ state: "approval-requested", input: { path: "a.txt", content: "from the chat\n" } });
    expect(tool!.approval!.id).toBe(tool!.toolCallId);
    expect(existsSync(join(live.cwd, "a.txt"))).toBe(false);
    // What useChat's addToolApprovalResponse makes of it.
    const approved: UIMessage = structuredClone(asked);
    const part = approved.parts.find((p) => p.type === "tool-write_file") as unknown as Record<string, unknown>;
    part.state = "approval-responded";
    part.approval = { id: tool!.approval!.id, approved: true };
    const done = await lastMessage(await transport().sendMessages({ chatId: "chat-b", messages: [...messages, approved], trigger: "submit-message", messageId: undefined, abortSignal: undefined }), approved);
    expect(done.id).toBe(asked.id);
    expect(done.parts.find((p) => p.type === "tool-write_file")).toMatchObject({ state: "output-available", toolCallId: tool!.toolCallId });
    expect(done.parts.filter((p) => p.type === "text").map((p) => (p as { text: string }).text)).toEqual(["I'll write it.", "Done: a.txt is written."]);
    expect(readFileSync(join(live.cwd, "a.txt"), "utf8")).toBe("from the chat\n");
  });

  it("a denied approval: the tool does not run, its part says output-denied", async () => {
    await start([{ toolCalls: [{ name: "write_file", input: { path: "b.txt", content: "no\n" } }] }]);
    const asked = await lastMessage(await transport().sendMessages({ chatId: "chat-c", messages: [user("write b.txt")], trigger: "submit-message", messageId: undefined, abortSignal: undefined }));
    const denied: UIMessage = structuredClone(asked);
    const part = denied.parts.find((p) => p.type === "tool-write_file") as unknown as Record<string, unknown>;
    part.state = "approval-responded";
    part.approval = { id: (part.approval as { id: string }).id, approved: false, reason: "not now" };
    const done = await lastMessage(await transport().sendMessages({ chatId: "chat-c", messages: [user("write b.txt"), denied], trigger: "submit-message", messageId: undefined, abortSignal: undefined }), denied);
    expect(done.parts.find((p) => p.type === "tool-write_file")).toMatchObject({ state: "output-denied" });
    expect(existsSync(join(live.cwd, "b.txt"))).toBe(false);
  });

  it("a reconnect (useChat resume) replays the running run from its start, its answered approval included, then goes on live", async () => {
    const held = gate();
    await start([{ toolCalls: [{ name: "write_file", input: { path: "r.txt", content: "r\n" } }] }, { toolCalls: [{ name: "wait_gate", input: {} }] }, { text: "All done." }], { tools: [...builtinTools(), held.tool] });
    const asked = await lastMessage(await transport().sendMessages({ chatId: "chat-r", messages: [user("go")], trigger: "submit-message", messageId: undefined, abortSignal: undefined }));
    const approved: UIMessage = structuredClone(asked);
    const part = approved.parts.find((p) => p.type === "tool-write_file") as unknown as Record<string, unknown>;
    part.state = "approval-responded";
    part.approval = { id: (part.approval as { id: string }).id, approved: true };
    // The continuation's stream is left unread, as by a page that reloads.
    const abandoned = new AbortController();
    await transport().sendMessages({ chatId: "chat-r", messages: [user("go"), approved], trigger: "submit-message", messageId: undefined, abortSignal: abandoned.signal });
    const resumed = await transport().reconnectToStream({ chatId: "chat-r" });
    expect(resumed).not.toBeNull();
    abandoned.abort();
    const reading = lastMessage(resumed!);
    held.open();
    const message = await reading;
    expect(message.parts.filter((p) => p.type !== "step-start").map((p) => [p.type, (p as { state?: string }).state])).toEqual([
      ["tool-write_file", "output-available"],
      ["tool-wait_gate", "output-available"],
      ["text", "done"],
    ]);
    expect(readFileSync(join(live.cwd, "r.txt"), "utf8")).toBe("r\n");
  });

  it("bad chat requests are 400s naming what is wrong; a reconnect with nothing running is 204", async () => {
    await start([{ text: "x" }]);
    const cases: Array<[unknown, RegExp]> = [
      [{ messages: [user("x")] }, /id \(the chat id/],
      [{ id: "c", messages: [] }, /messages must be/],
      [{ id: "c", messages: [{ role: "user", content: "old format" }] }, /no parts array/],
      [{ id: "c", messages: [{ id: "m", role: "user", parts: [{ type: "text", text: "look" }, { type: "file", url: "x" }] }] }, /has a "file" part; this server takes text only/],
      [{ id: "c", messages: [{ id: "m", role: "user", parts: [] }] }, /no text part/],
      [{ id: "c", messages: [{ id: "m", role: "assistant", parts: [{ type: "text", text: "x" }] }] }, /answers no approval/],
    ];
    for (const [body, message] of cases) {
      const response = await call(live.base, "/api/chat", { body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(message);
    }
    const reconnect = await transport().reconnectToStream({ chatId: "nothing-running" });
    expect(reconnect).toBeNull();
  });
});

describe("toUIMessageStream(run)", () => {
  it("turns a query's events into chunks the AI SDK reads: text, a tool call and its output", async () => {
    const model = scriptedModel([{ toolCalls: [{ name: "list_dir", input: { path: "." } }] }, { text: "There is nothing here." }]);
    const run = query("what is here?", { model, tools: builtinTools(), cwd: live.cwd, store: "memory" });
    const message = await lastMessage(toUIMessageStream(run, { messageId: "m-1" }));
    expect(message.id).toBe("m-1");
    expect(message.parts.map((p) => p.type)).toEqual(["step-start", "tool-list_dir", "step-start", "text"]);
    expect(message.parts[1]).toMatchObject({ state: "output-available" });
  });

  it("a failed tool is tool-output-error, a run stopped by its limit ends with an error chunk", async () => {
    const model = scriptedModel([{ toolCalls: [{ name: "read_file", input: { path: "missing.txt" } }] }, { toolCalls: [{ name: "read_file", input: { path: "missing2.txt" } }] }]);
    const chunks: UIMessageChunk[] = [];
    const stream = toUIMessageStream(query("read", { model, tools: builtinTools(), cwd: live.cwd, store: "memory", maxTurns: 1 }));
    for await (const chunk of stream as unknown as AsyncIterable<UIMessageChunk>) chunks.push(chunk);
    expect(chunks.find((c) => c.type === "tool-output-error")).toMatchObject({ errorText: expect.stringMatching(/missing\.txt/) });
    expect(chunks.at(-2)).toMatchObject({ type: "error", errorText: expect.stringMatching(/MAX_TURNS/) });
    expect(chunks.at(-1)).toEqual({ type: "finish", finishReason: "length" });
  });
});
