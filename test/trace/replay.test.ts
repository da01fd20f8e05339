import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { agentTool, createSession, defineTool, scriptedModel, type Model, type ModelStreamEvent } from "../../src/index.js";
import { ENGINE_STATES } from "../../src/machine/states.js";
import { STOP_REASONS } from "../../src/machine/stop-reasons.js";
import { loadSession } from "../../src/debug/session.js";
import { replay } from "../../src/debug/replay.js";
import { removeDir, tempDir } from "../support/engine.js";
import { ALL_TOOLS, busy, count, echo, readLines, record, sleepy, stateOf, stuck, fatal, type Recorded } from "./helpers.js";

let cwd: string;
beforeEach(() => {
  cwd = tempDir();
});
afterEach(() => removeDir(cwd));

/** Waits for the call's signal: a model that never finishes on its own. */
const untilAborted = (signal: AbortSignal) =>
  new Promise<never>((_resolve, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });

/** Streams some text, then waits until the run stops it. */
function stallsAfter(text: string): Model {
  return {
    name: "stalls",
    async *stream(_request, { signal }): AsyncGenerator<ModelStreamEvent> {
      yield { type: "text_delta", text };
      await untilAborted(signal);
    },
  };
}

/** Reports two provider retries, then answers. */
const flaky: Model = {
  name: "flaky",
  async *stream(): AsyncGenerator<ModelStreamEvent> {
    yield { type: "retry", attempt: 1, delayMs: 10, error: { code: "RATE_LIMITED", message: "429 slow down" } };
    yield { type: "retry", attempt: 2, delayMs: 20, error: { code: "SERVER_ERROR", message: "503" } };
    yield { type: "text_delta", text: "Fine now." };
    yield { type: "response", response: { text: "Fine now.", toolCalls: [], finishReason: "stop", usage: { input: 3, output: 2 } } };
  },
};

interface Scenario {
  name: string;
  reason: string;
  run: (cwd: string) => Promise<Recorded>;
}

const scenarios: Scenario[] = [
  { name: "final answer, text only", reason: "final_answer", run: (dir) => record(dir, "hi", { model: scriptedModel([{ text: "Hello there." }]) }) },
  {
    name: "structured output: an answer that does not match goes back with its errors, the next one matches",
    reason: "final_answer",
    run: (dir) =>
      record(dir, "a number", {
        model: scriptedModel([{ text: "seven" }, { text: '{"n": 7}' }]),
        output: { type: "object", properties: { n: { type: "integer" } }, required: ["n"], additionalProperties: false },
      }),
  },
  {
    name: "tool round trip: parallel and sequential calls, thinking, a person allows",
    reason: "final_answer",
    run: (dir) =>
      record(dir, "go", {
        model: scriptedModel([
          {
            thinking: "Three things to do.",
            text: "Looking.",
            toolCalls: [
              { name: "echo", input: { text: "a" } },
              { name: "count", input: { n: 3 } },
              { name: "write_note", input: { note: "n1" } },
            ],
            usage: { input: 10, output: 4 },
          },
          { text: "Done.", usage: { input: 20, output: 2 } },
        ]),
        tools: ALL_TOOLS,
        systemPrompt: "be brief",
        permissions: { onAsk: () => "allow" },
      }),
  },
  {
    name: "recover: unknown tool, invalid input, invalid JSON, a failing tool, a coerced input",
    reason: "final_answer",
    run: (dir) =>
      record(dir, "go", {
        model: scriptedModel([
          {
            toolCalls: [
              { name: "ghost", input: {} },
              { name: "echo", input: {} },
              { name: "echo", rawArguments: "{nope" },
              { name: "broken", input: {} },
              { name: "count", input: { n: "2" } },
            ],
          },
          { text: "Recovered." },
        ]),
        tools: ALL_TOOLS,
      }),
  },
  {
    name: "a response cut by the output limit (finish reason length)",
    reason: "final_answer",
    run: (dir) =>
      record(dir, "go", {
        model: scriptedModel([{ text: "Writing", toolCalls: [{ name: "echo", input: { text: "long" } }], finishReason: "length" }, { text: "ok" }]),
        tools: ALL_TOOLS,
      }),
  },
  {
    name: "a tool over its own time limit",
    reason: "final_answer",
    run: (dir) => record(dir, "go", { model: scriptedModel([{ toolCalls: [{ name: "sleepy", input: {} }] }, { text: "it timed out" }]), tools: [sleepy] }),
  },
  {
    name: "allow_always: a person allows once, the remembered rule allows the repeat",
    reason: "final_answer",
    run: (dir) =>
      record(dir, "go", {
        model: scriptedModel([
          { toolCalls: [{ name: "write_note", input: { note: "same" } }] },
          { toolCalls: [{ name: "write_note", input: { note: "same" } }] },
          { text: "ok" },
        ]),
        tools: ALL_TOOLS,
        permissions: { onAsk: () => "allow_always" },
      }),
  },
  {
    name: "provider retries are recorded",
    reason: "final_answer",
    run: (dir) => record(dir, "go", { model: flaky }),
  },
  {
    name: "max_turns",
    reason: "max_turns",
    run: (dir) =>
      record(dir, "go", {
        model: scriptedModel([{ toolCalls: [{ name: "echo", input: { text: "1" } }] }, { toolCalls: [{ name: "echo", input: { text: "2" } }] }, { text: "never" }]),
        tools: ALL_TOOLS,
        maxTurns: 2,
      }),
  },
  {
    name: "max_tool_calls",
    reason: "max_tool_calls",
    run: (dir) =>
      record(dir, "go", {
        model: scriptedModel([{ toolCalls: [{ name: "echo", input: { text: "a" } }, { name: "echo", input: { text: "b" } }] }, { text: "never" }]),
        tools: ALL_TOOLS,
        maxToolCalls: 1,
      }),
  },
  {
    name: "permission_denied by a deny rule",
    reason: "permission_denied",
    run: (dir) =>
      record(dir, "go", {
        model: scriptedModel([{ toolCalls: [{ name: "echo", input: { text: "a" } }, { name: "write_note", input: { note: "x" } }] }]),
        tools: ALL_TOOLS,
        permissions: { deny: ["write_note"] },
      }),
  },
  {
    name: "permission_denied: no one could be asked",
    reason: "permission_denied",
    run: (dir) => record(dir, "go", { model: scriptedModel([{ toolCalls: [{ name: "write_note", input: { note: "x" } }] }]), tools: ALL_TOOLS }),
  },
  {
    name: "permission_denied by a person, plan mode",
    reason: "permission_denied",
    run: (dir) =>
      record(dir, "go", {
        model: scriptedModel([{ toolCalls: [{ name: "echo", input: { text: "a" } }, { name: "write_note", input: { note: "x" } }] }]),
        tools: ALL_TOOLS,
        permissions: { mode: "plan", onAsk: () => "deny" },
      }),
  },
  {
    name: "tool_error: a fatal tool error",
    reason: "tool_error",
    run: (dir) => record(dir, "go", { model: scriptedModel([{ toolCalls: [{ name: "fatal", input: {} }] }, { text: "never" }]), tools: [fatal] }),
  },
  {
    name: "model_error: the request fails",
    reason: "model_error",
    run: (dir) => record(dir, "go", { model: scriptedModel([{ error: { status: 401, message: "bad key" } }]) }),
  },
  {
    name: "model_error after streamed text",
    reason: "model_error",
    run: (dir) => record(dir, "go", { model: scriptedModel([{ text: "Half an answer", error: { status: 500, message: "connection reset" } }]) }),
  },
  {
    name: "timeout while waiting for the model",
    reason: "timeout",
    run: (dir) => record(dir, "go", { model: scriptedModel([{ text: "late", delayMs: 60_000 }]), timeoutMs: 50 }),
  },
  {
    name: "timeout while the model streams",
    reason: "timeout",
    run: (dir) => record(dir, "go", { model: stallsAfter("I am thinking about"), timeoutMs: 50 }),
  },
  {
    name: "timeout while a tool runs, after another finished",
    reason: "timeout",
    run: (dir) =>
      record(dir, "go", { model: scriptedModel([{ toolCalls: [{ name: "echo", input: { text: "quick" } }, { name: "stuck", input: {} }] }]), tools: [echo, stuck], timeoutMs: 100 }),
  },
  {
    name: "timeout seen by append_tool_result after a tool that kept the process busy",
    reason: "timeout",
    run: (dir) => record(dir, "go", { model: scriptedModel([{ toolCalls: [{ name: "busy", input: { ms: 150 } }] }, { text: "never" }]), tools: [busy], timeoutMs: 40 }),
  },
  {
    name: "user_abort before the run started",
    reason: "user_abort",
    run: (dir) => record(dir, "go", { model: scriptedModel([{ text: "never" }]), signal: AbortSignal.abort() }),
  },
  {
    name: "user_abort while the model streams",
    reason: "user_abort",
    run: (dir) => record(dir, "go", { model: stallsAfter("Let me see") }, (event, abort) => event.type === "text_delta" && abort()),
  },
  {
    name: "user_abort while waiting for a permission answer",
    reason: "user_abort",
    run: (dir) =>
      record(
        dir,
        "go",
        { model: scriptedModel([{ toolCalls: [{ name: "write_note", input: { note: "x" } }] }]), tools: ALL_TOOLS, permissions: { onAsk: () => new Promise(() => {}) } },
        (event, abort) => event.type === "permission_request" && abort(),
      ),
  },
  {
    name: "user_abort while a tool runs, after another finished",
    reason: "user_abort",
    run: (dir) =>
      record(
        dir,
        "go",
        { model: scriptedModel([{ toolCalls: [{ name: "echo", input: { text: "quick" } }, { name: "stuck", input: {} }] }]), tools: [echo, stuck] },
        (event, abort) => event.type === "tool_result" && event.call.name === "echo" && abort(),
      ),
  },
];

const seenStates = new Set<string>();
const seenReasons = new Set<string>();

describe("replay: every recorded run replays identical", () => {
  it.each(scenarios.map((s) => [s.name, s] as const))("%s", async (_name, scenario) => {
    const recorded = await scenario.run(cwd);
    expect(recorded.result.reason).toBe(scenario.reason);
    const session = await loadSession(recorded.file, recorded.sessionId);
    for (const line of session.lines) seenStates.add(stateOf(line));
    seenReasons.add(recorded.result.reason);
    const sizeBefore = statSync(recorded.file).size;
    const result = await replay(session);
    expect(result.divergence, result.divergence ? [result.divergence.message, result.divergence.reason, ...result.divergence.context].join("\n") : "").toBeUndefined();
    expect(result.identical).toBe(true);
    expect(result.replayed[0].map(stateOf)).toEqual(session.lines.map(stateOf));
    // Replaying writes nothing: no trace lines, no transcript, no audit.
    expect(statSync(recorded.file).size).toBe(sizeBefore);
  });

  afterAll(() => {
    // Guarded so a filtered run (-t) does not fail on coverage it did not try to reach.
    if (seenReasons.size < scenarios.length / 4) return;
    expect([...seenStates].filter((s) => (ENGINE_STATES as readonly string[]).includes(s)).sort()).toEqual([...ENGINE_STATES].sort());
    expect([...seenReasons].sort()).toEqual([...STOP_REASONS].sort());
    expect(seenStates.has("retry")).toBe(true);
  });
});

describe("replay: the two-level loop's inputs from outside are played back", () => {
  const replayOf = async (recorded: Recorded) => {
    const session = await loadSession(recorded.file, recorded.sessionId);
    const result = await replay(session);
    expect(result.divergence, result.divergence ? [result.divergence.message, result.divergence.reason, ...result.divergence.context].join("\n") : "").toBeUndefined();
    return { session, result };
  };
  const sessionRun = async (session: ReturnType<typeof createSession>, prompt: string): Promise<Recorded> => {
    const run = session.query(prompt);
    const events = [];
    for (;;) {
      const next = await run.next();
      if (next.done) return { sessionId: run.sessionId, file: join(cwd, ".agent", "trace.jsonl"), events, result: next.value };
      events.push(next.value);
    }
  };

  it("steering and follow-up messages queued during the run enter where they entered", async () => {
    let session!: ReturnType<typeof createSession>;
    const steps = defineTool({
      name: "steps",
      description: "Queues messages as it runs.",
      inputSchema: { type: "object" },
      risk: "read",
      execute: () => {
        session.steer("also check the tests");
        session.followUp("then summarise");
        return "queued";
      },
    });
    session = createSession({ model: scriptedModel([{ toolCalls: [{ name: "steps", input: {} }] }, { text: "checked" }, { text: "summary" }]), tools: [steps], cwd });
    session.steer("before the start");
    const recorded = await sessionRun(session, "go");
    expect(recorded.result.text).toBe("summary");
    const { session: trace } = await replayOf(recorded);
    const claimed = trace.lines.filter((l) => (l as { details?: { claimed?: unknown } }).details?.claimed);
    expect(claimed).toHaveLength(3);
  });

  it("onModelError: a retry and a continue", async () => {
    let failures = 0;
    const recorded = await record(cwd, "go", {
      model: scriptedModel([
        { error: { status: 500, message: "first failure" } },
        { text: "Partial", error: { status: 502, message: "second failure" } },
        { text: "Recovered." },
      ]),
      onModelError: () => (++failures === 1 ? { action: "retry" } : { action: "continue" }),
    });
    expect(recorded.result.text).toBe("Recovered.");
    const { session } = await replayOf(recorded);
    expect(session.lines.filter((l) => stateOf(l) === "recover")).toHaveLength(2);
  });

  it("beforeToolCall: a blocked call, an edited input, a hook that throws; afterToolCall replacing a result", async () => {
    const recorded = await record(cwd, "go", {
      model: scriptedModel([
        {
          toolCalls: [
            { name: "echo", input: { text: "blocked" } },
            { name: "echo", input: { text: "edit me" } },
            { name: "echo", input: { text: "boom" } },
            { name: "count", input: { n: 2 } },
          ],
        },
        { text: "ok" },
      ]),
      tools: [echo, count],
      beforeToolCall: (call) => {
        const text = (call.input as { text?: string }).text;
        if (text === "blocked") return { block: true, reason: "not today" };
        if (text === "edit me") return { input: { text: "edited" } };
        if (text === "boom") throw new Error("hook exploded");
        return undefined;
      },
      afterToolCall: (call, result) => (call.name === "count" ? { content: `${result.content} (checked)`, isError: false } : undefined),
    });
    const results = recorded.events.filter((e) => e.type === "tool_result").map((e) => (e as { result: { content: string } }).result.content);
    expect(results).toEqual(expect.arrayContaining(["Blocked: not today", "echo: edited", "1 2 (checked)"]));
    await replayOf(recorded);
  });

  it("compaction before an over-budget call, and after a context overflow, with the recorded summaries", async () => {
    const bulky = defineTool({ ...echo, name: "bulky", execute: () => "x".repeat(2000) });
    const windowed = await record(cwd, "start", {
      model: scriptedModel([
        { toolCalls: [{ name: "bulky", input: { text: "1" } }] },
        { toolCalls: [{ name: "bulky", input: { text: "2" } }] },
        { toolCalls: [{ name: "bulky", input: { text: "3" } }] },
        { text: "done" },
      ]),
      tools: [bulky],
      contextWindow: 1500,
      reserveTokens: 200,
      keepRecentTokens: 600,
      summarize: (messages) => `summary of ${messages.length} messages`,
    });
    const { session } = await replayOf(windowed);
    expect(session.lines.some((l) => l.kind === "compaction")).toBe(true);

    const overflow = { error: { status: 400, code: "context_length_exceeded", message: "too long" } };
    const overflowed = await record(cwd, "x", {
      model: scriptedModel([{ toolCalls: [{ name: "bulky", input: { text: "a" } }] }, overflow, { text: "fits now" }]),
      tools: [bulky],
      contextWindow: 800,
      reserveTokens: 0,
      summarize: () => "short",
    });
    expect(overflowed.result.reason).toBe("final_answer");
    await replayOf(overflowed);
  });

  it("a run with a subagent: the parent and the child session each replay identical", async () => {
    const child = scriptedModel([{ toolCalls: [{ name: "echo", input: { text: "deep" } }] }, { text: "child answer" }]);
    const researcher = agentTool({ name: "researcher", description: "Researches.", model: child, tools: [echo] });
    const recorded = await record(cwd, "ask the researcher", {
      model: scriptedModel([{ toolCalls: [{ name: "researcher", input: { prompt: "look it up" } }] }, { text: "parent done" }]),
      tools: [researcher],
    });
    expect(recorded.result.reason).toBe("final_answer");
    const childId = readLines(recorded.file).find((l) => l.parentSession === recorded.sessionId)!.sessionId;
    await replayOf(recorded);
    const childSession = await loadSession(recorded.file, childId);
    expect(childSession.parentSession).toBe(recorded.sessionId);
    expect((await replay(childSession)).divergence).toBeUndefined();
  });

  it("shouldStopAfterTurn ends the run where it did", async () => {
    const recorded = await record(cwd, "go", {
      model: scriptedModel([{ toolCalls: [{ name: "echo", input: { text: "a" } }] }, { text: "never" }]),
      tools: [echo],
      shouldStopAfterTurn: ({ turn }) => turn >= 1,
    });
    expect(recorded.result.reason).toBe("final_answer");
    const { result } = await replayOf(recorded);
    expect(result.replayed[0].map(stateOf).at(-2)).toBe("build_context");
  });
});

describe("replay plays the outside world back, it does not run it", () => {
  it("tools are not executed and the model is not called during a replay", async () => {
    let executions = 0;
    const counted = defineTool({
      name: "counted",
      description: "Counts its executions.",
      inputSchema: { type: "object" },
      risk: "read",
      execute: () => `execution ${++executions}`,
    });
    const model = scriptedModel([{ toolCalls: [{ name: "counted", input: {} }] }, { text: "done" }]);
    const recorded = await record(cwd, "go", { model, tools: [counted] });
    expect(executions).toBe(1);
    const result = await replay(await loadSession(recorded.file, recorded.sessionId));
    expect(result.identical).toBe(true);
    expect(executions).toBe(1);
    expect(model.calls).toBe(2);
    const results = result.replayed[0].flatMap((l) => ((l as { details?: { results?: Array<{ content: string }> } }).details?.results ?? []).map((r) => r.content));
    expect(results).toEqual(["execution 1"]);
  });

  it("a session continued over several runs replays run by run", async () => {
    const first = await record(cwd, "my name is Ada", { model: scriptedModel([{ text: "Hi Ada." }]), sessionId: "chat-1", systemPrompt: "sys" });
    await record(cwd, "count to two", {
      model: scriptedModel([{ toolCalls: [{ name: "count", input: { n: 2 } }] }, { text: "1 2" }]),
      sessionId: "chat-1",
      systemPrompt: "sys",
      tools: [count],
    });
    const session = await loadSession(first.file, "chat-1");
    const result = await replay(session);
    expect(result.divergence).toBeUndefined();
    expect(result.runs).toBe(2);
    expect(result.replayed).toHaveLength(2);
    // The second run's first model call was sent the earlier conversation too.
    const secondCall = result.replayed[1].find((l) => stateOf(l) === "call_model") as { details: { messages: number } };
    expect(secondCall.details.messages).toBe(4);
  });

  it("a replayed run's lines have the recording's shape: seq from 0, the recorded session id, states and turns", async () => {
    const recorded = await record(cwd, "go", { model: scriptedModel([{ toolCalls: [{ name: "echo", input: { text: "a" } }] }, { text: "ok" }]), tools: [echo] });
    const session = await loadSession(recorded.file, recorded.sessionId);
    const result = await replay(session);
    const replayed = result.replayed[0];
    expect(replayed.map((l) => l.seq)).toEqual(session.lines.map((l) => l.seq));
    expect(replayed.every((l) => l.sessionId === recorded.sessionId)).toBe(true);
    expect(replayed.map((l) => (l as { turn?: number }).turn)).toEqual(session.lines.map((l) => (l as { turn?: number }).turn));
    expect(readFileSync(recorded.file, "utf8").split("\n").filter(Boolean)).toHaveLength(session.lines.length);
  });
});
