import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { HttpAgent } from "@ag-ui/client";
import type { BaseEvent, RunFinishedEvent } from "@ag-ui/core";
import { describe, expect, it } from "vitest";
import { builtinTools, query, scriptedModel } from "../../src/index.js";
import { toAgUiEvents } from "../../src/server/index.js";
import { call, serverPerTest, TOKEN } from "./helpers.js";

const live = serverPerTest();
const { start } = live;

/** `@ag-ui/client`'s HttpAgent against POST /ag-ui: it verifies the stream as the 1.0 spec says. */
function agent(threadId: string, text: string): HttpAgent {
  return new HttpAgent({ url: `${live.base}/ag-ui`, headers: { authorization: `Bearer ${TOKEN}` }, threadId, initialMessages: [{ id: "u1", role: "user", content: text }] });
}

async function runOnce(a: HttpAgent, parameters: Parameters<HttpAgent["runAgent"]>[0]): Promise<{ events: BaseEvent[]; failed?: Error }> {
  const events: BaseEvent[] = [];
  let failed: Error | undefined;
  await a.runAgent(parameters, { onEvent: ({ event }) => void events.push(event), onRunFailed: ({ error }) => void (failed = error) }).catch((error: Error) => (failed = error));
  return { events, ...(failed ? { failed } : {}) };
}

describe("POST /ag-ui speaks AG-UI 1.0, read by @ag-ui/client's HttpAgent", () => {
  it("text, reasoning, steps and state snapshots; RUN_FINISHED success; the agent's messages hold the answer", async () => {
    await start([{ thinking: "A greeting.", text: "Hello from statecraft." }]);
    const a = agent("thread-1", "hi");
    const { events, failed } = await runOnce(a, { runId: "run-1" });
    expect(failed).toBeUndefined();
    const types = events.map((e) => e.type as string);
    expect(types[0]).toBe("RUN_STARTED");
    expect(types.at(-1)).toBe("RUN_FINISHED");
    expect(types).toEqual(expect.arrayContaining(["STEP_STARTED", "STEP_FINISHED", "STATE_SNAPSHOT", "REASONING_START", "REASONING_MESSAGE_CONTENT", "REASONING_END", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"]));
    const steps = events.filter((e) => e.type === "STEP_STARTED").map((e) => (e as unknown as { stepName: string }).stepName);
    expect(steps).toEqual(["build_context", "call_model", "stream_text"]);
    expect((events.at(-1) as RunFinishedEvent).outcome).toEqual({ type: "success" });
    expect(a.state).toMatchObject({ turns: 1, toolCalls: 0, elapsedMs: expect.any(Number) });
    const assistant = a.messages.find((m) => m.role === "assistant");
    expect(assistant).toMatchObject({ content: "Hello from statecraft." });
  });

  it("a write ends the run with the interrupt outcome naming the call; resume answers it and the tool runs", async () => {
    await start([{ text: "Writing.", toolCalls: [{ name: "write_file", input: { path: "c.txt", content: "via AG-UI\n" } }] }, { text: "c.txt is written." }]);
    const a = agent("thread-2", "write c.txt");
    const first = await runOnce(a, { runId: "run-a" });
    expect(first.failed).toBeUndefined();
    const finished = first.events.at(-1) as RunFinishedEvent;
    expect(finished.outcome).toMatchObject({ type: "interrupt", interrupts: [expect.objectContaining({ reason: "tool_approval" })] });
    const interrupt = (finished.outcome as { interrupts: Array<{ id: string; toolCallId: string }> }).interrupts[0]!;
    expect(interrupt.toolCallId).toBe(interrupt.id);
    expect(first.events.find((e) => e.type === "TOOL_CALL_START")).toMatchObject({ toolCallId: interrupt.id, toolCallName: "write_file" });
    expect(a.pendingInterrupts.map((i) => i.id)).toEqual([interrupt.id]);
    expect(existsSync(join(live.cwd, "c.txt"))).toBe(false);
    const second = await runOnce(a, { runId: "run-b", resume: [{ interruptId: interrupt.id, status: "resolved", payload: { approved: true } }] });
    expect(second.failed).toBeUndefined();
    expect(second.events.find((e) => e.type === "TOOL_CALL_RESULT")).toMatchObject({ toolCallId: interrupt.id });
    expect((second.events.at(-1) as RunFinishedEvent).outcome).toEqual({ type: "success" });
    expect(readFileSync(join(live.cwd, "c.txt"), "utf8")).toBe("via AG-UI\n");
    expect(a.pendingInterrupts).toEqual([]);
  });

  it("the input's context entries reach the model after the message; a malformed one is a 400", async () => {
    const model = scriptedModel([{ text: "Noted." }]);
    await live.listen({ model, cwd: live.cwd, token: TOKEN, store: "memory" });
    const { failed } = await runOnce(agent("thread-ctx", "where am I?"), { runId: "run-ctx", context: [{ description: "page", value: "/checkout" }] });
    expect(failed).toBeUndefined();
    const sent = model.requests[0]!.messages.at(-1) as { role: string; content: string };
    expect(sent).toMatchObject({ role: "user", content: "where am I?\n\nContext:\n- page: /checkout" });
    const bad = await call(live.base, "/ag-ui", { body: { threadId: "t", runId: "r", messages: [{ id: "1", role: "user", content: "x" }], context: [{ description: 1 }] } });
    expect(bad.status).toBe(400);
  });

  it("a failed run is RUN_ERROR; bad input is a 400", async () => {
    await start([{ error: { status: 400, message: "the model refused the request" } }]);
    const { events } = await runOnce(agent("thread-3", "hi"), { runId: "run-x" });
    expect(events.at(-1)).toMatchObject({ type: "RUN_ERROR", code: "MODEL_ERROR", message: expect.stringMatching(/refused/) });
    const cases: Array<[unknown, RegExp]> = [
      [{ runId: "r", messages: [] }, /threadId/],
      [{ threadId: "t", messages: [] }, /runId/],
      [{ threadId: "t", runId: "r", messages: [{ id: "1", role: "assistant", content: "x" }] }, /last message must be the user's/],
      [{ threadId: "t", runId: "r", messages: [{ id: "1", role: "user", content: "x" }], tools: [{ name: "f", description: "", parameters: {} }] }, /frontend tools/],
      [{ threadId: "t", runId: "r", messages: [], resume: [{ interruptId: "i", status: "resolved", payload: "maybe" }] }, /payload must be/],
      [{ threadId: "t", runId: "r", messages: [], resume: [{ interruptId: "i", status: "done" }] }, /status must be "resolved" or "cancelled"/],
    ];
    for (const [body, message] of cases) {
      const response = await call(live.base, "/ag-ui", { body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(message);
    }
    const nothing = await call(live.base, "/ag-ui", { body: { threadId: "t", runId: "r", messages: [], resume: [{ interruptId: "i", status: "cancelled" }] } });
    expect(nothing.status).toBe(409);
  });
});

describe("toAgUiEvents(run)", () => {
  it("a query's tool call is TOOL_CALL_START/ARGS/END then TOOL_CALL_RESULT, with counters in the snapshots", async () => {
    const model = scriptedModel([{ toolCalls: [{ name: "list_dir", input: { path: "." } }] }, { text: "Empty." }]);
    const events: Array<Record<string, unknown>> = [];
    for await (const event of toAgUiEvents(query("list", { model, tools: builtinTools(), cwd: live.cwd, store: "memory" }), { threadId: "t", runId: "r" })) events.push(event);
    const tool = events.filter((e) => String(e.type).startsWith("TOOL_CALL_")).map((e) => e.type);
    expect(tool).toEqual(["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT"]);
    expect(JSON.parse(events.find((e) => e.type === "TOOL_CALL_ARGS")!.delta as string)).toEqual({ path: "." });
    expect(events.filter((e) => e.type === "STATE_SNAPSHOT").at(-1)!.snapshot).toMatchObject({ turns: 2, toolCalls: 1 });
    expect(events.at(-1)).toMatchObject({ type: "RUN_FINISHED", threadId: "t", runId: "r", outcome: { type: "success" } });
  });
});
