import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSession, query, readTrace, scriptedModel, type AgentEvent, type EngineObserver, type RunSummary } from "../../src/index.js";
import { echoTool as echo, removeDir, tempDir, writeTool as write } from "../support/engine.js";

let cwd: string;
beforeEach(() => {
  cwd = tempDir("statecraft-observers-");
});
afterEach(() => removeDir(cwd));

/** A caller's observer that keeps what it is told. */
function recorder() {
  const states: Array<{ state: string; from: string | undefined; turn: number; messages: number }> = [];
  const emitted: string[] = [];
  const finished: RunSummary[] = [];
  const observer: EngineObserver = {
    state: (entered) => states.push({ state: entered.state, from: entered.from, turn: entered.context.turn, messages: entered.context.messages.length }),
    emitted: (event) => emitted.push(event.type),
    finished: (summary) => finished.push(summary),
  };
  return { observer, states, emitted, finished };
}

describe("options.observers: a caller's observers beside the built-in ones", () => {
  it("hears every state, every emitted event and one finished(summary) equal to turn_end, the RunResult and the done line", async () => {
    const seen = recorder();
    const model = scriptedModel([{ toolCalls: [{ name: "echo", input: { text: "a" } }] }, { text: "Done." }]);
    const run = query("go", { model, cwd, tools: [echo], observers: [seen.observer] });
    const events: AgentEvent[] = [];
    for await (const event of run) events.push(event);
    const result = await run.result;

    // The states the caller saw, and done, in order, with the context as it stood on entry.
    const callerStates = events.flatMap((e) => (e.type === "state" ? [e.state] : []));
    expect(seen.states.map((s) => s.state)).toEqual([...callerStates, "done"]);
    expect(seen.states[0]).toEqual({ state: "build_context", from: undefined, turn: 0, messages: 0 });
    expect(seen.states.find((s) => s.state === "execute_tool")).toMatchObject({ turn: 1, messages: 2 });
    expect(seen.states.at(-1)).toMatchObject({ state: "done", turn: 2, messages: 4 });
    // Every event the machine emitted, in the order the caller got them.
    const callerEmitted = events.filter((e) => !["state", "turn_end"].includes(e.type)).map((e) => e.type);
    expect(seen.emitted).toEqual(callerEmitted);
    expect(seen.emitted).toEqual(["tool_start", "tool_result", "text_delta"]);

    expect(seen.finished).toHaveLength(1);
    const summary = seen.finished[0];
    const turnEnd = events.at(-1) as Extract<AgentEvent, { type: "turn_end" }>;
    expect(summary).toMatchObject({ status: "completed", reason: "final_answer", sessionId: run.sessionId, turns: 2, toolCalls: 1, text: "Done." });
    expect({ reason: summary.status === "completed" ? summary.reason : undefined, sessionId: summary.sessionId, turns: summary.turns, toolCalls: summary.toolCalls, usage: summary.usage }).toEqual({
      reason: turnEnd.reason,
      sessionId: turnEnd.sessionId,
      turns: turnEnd.turns,
      toolCalls: turnEnd.toolCalls,
      usage: turnEnd.usage,
    });
    expect(result).toMatchObject({ reason: turnEnd.reason, text: summary.text, turns: summary.turns, toolCalls: summary.toolCalls, usage: summary.usage });
    const lines = [];
    for await (const line of readTrace(join(cwd, ".agent", "trace.jsonl"))) lines.push(line);
    const done = lines.at(-1)!;
    expect(done).toMatchObject({ kind: "state", state: "done" });
    expect((done as { details: unknown }).details).toMatchObject({
      reason: "final_answer",
      turns: summary.turns,
      toolCalls: summary.toolCalls,
      usage: summary.usage,
      durationMs: summary.durationMs,
      text: summary.text,
    });
  });

  it("tells a suspended run's observers so, once, with its pending calls", async () => {
    const seen = recorder();
    const model = scriptedModel([{ toolCalls: [{ name: "write", input: { text: "x" } }] }]);
    const run = query("go", { model, cwd, tools: [write], permissions: { whenUnanswered: "suspend" }, observers: [seen.observer] });
    for await (const _ of run) void _;
    const result = await run.result;
    expect(result.status).toBe("suspended");
    expect(seen.finished).toEqual([expect.objectContaining({ status: "suspended", runId: (result as { runId: string }).runId, pending: (result as { pending: unknown }).pending, turns: 1 })]);
  });

  it("ends a run whose engine failed with one finished(summary): model_error, ENGINE_FAILED", async () => {
    const seen = recorder();
    const failing: EngineObserver = {
      state(entered) {
        if (entered.state === "call_model") throw new Error("observer broke");
      },
    };
    const run = query("go", { model: scriptedModel([{ text: "never" }]), cwd, observers: [failing, seen.observer] });
    for await (const _ of run) void _;
    const result = await run.result;
    expect(result).toMatchObject({ status: "completed", reason: "model_error", error: { code: "ENGINE_FAILED" } });
    expect(seen.finished).toEqual([expect.objectContaining({ status: "completed", reason: "model_error", error: expect.objectContaining({ code: "ENGINE_FAILED" }) })]);
  });

  it("a session's runs each tell the observers of their own end", async () => {
    const seen = recorder();
    const session = createSession({ model: scriptedModel([{ text: "one" }, { text: "two" }]), cwd, observers: [seen.observer] });
    for await (const _ of session.query("first")) void _;
    for await (const _ of session.query("second")) void _;
    expect(seen.finished.map((s) => s.text)).toEqual(["one", "two"]);
  });

  it("refuses observers that are not observers, naming the one that is wrong", () => {
    const model = scriptedModel([]);
    expect(() => query("go", { model, cwd, observers: {} as never })).toThrow(/options\.observers must be an array/);
    expect(() => query("go", { model, cwd, observers: [{}, { state: "yes" } as never] })).toThrow(/options\.observers\[1\]\.state must be a function/);
    expect(() => query("go", { model, cwd, observer: [] } as never)).toThrow(/did you mean observers\?/);
    expect(() => createSession({ model, cwd, observers: [null as never] })).toThrow(/options\.observers\[0\] must be an object/);
  });
});
