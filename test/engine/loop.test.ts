import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { join } from "node:path";
import {
  AgentError,
  agentTool,
  createSession,
  defineTool,
  query,
  scriptedModel,
  type AgentEvent,
  type Message,
} from "../../src/index.js";
import { collect, outline, readJsonl, removeDir, tempDir, echoTool } from "../support/engine.js";

let cwd: string;
beforeEach(() => {
  cwd = tempDir();
});
afterEach(() => removeDir(cwd));

const echo = echoTool;

const contents = (messages: readonly Message[]) => messages.map((m) => `${m.role}:${m.content}`);
const calls = (text: string) => ({ toolCalls: [{ name: "echo", input: { text } }] });

describe("session and inbox", () => {
  it("steering enters after the whole tool batch (tools run one at a time), before the next model call, exactly once", async () => {
    const order: string[] = [];
    let session!: ReturnType<typeof createSession>;
    const step = defineTool({
      name: "step",
      description: "A sequential step.",
      inputSchema: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] },
      risk: "read",
      executionMode: "sequential",
      execute: (input: { n: number }) => {
        order.push(`tool ${input.n}`);
        if (input.n === 1) session.steer("please also check the tests");
        return `done ${input.n}`;
      },
    });
    const model = scriptedModel([
      { toolCalls: [{ name: "step", input: { n: 1 } }, { name: "step", input: { n: 2 } }, { name: "step", input: { n: 3 } }] },
      { text: "checked" },
    ]);
    session = createSession({ model, tools: [step], cwd });
    const { events, result } = await collect(session.query("do three steps"));
    expect(order).toEqual(["tool 1", "tool 2", "tool 3"]);
    expect(result.reason).toBe("final_answer");
    expect(contents(model.requests[1].messages)).toEqual([
      "user:do three steps",
      "assistant:",
      "tool:done 1",
      "tool:done 2",
      "tool:done 3",
      "user:please also check the tests",
    ]);
    expect(events.filter((e) => e.type === "user_message")).toEqual([
      { type: "user_message", message: { role: "user", content: "please also check the tests" }, source: "steering" },
    ]);
    expect(session.queued).toEqual({ steering: [], followUp: [] });
    const o = outline(events);
    expect(o.slice(o.indexOf("state:append_tool_result"), o.indexOf("state:append_tool_result") + 4)).toEqual([
      "state:append_tool_result",
      "state:build_context",
      "state:call_model",
      "user_message",
    ]);
  });

  it("steering arriving while the model answers without tools keeps the run going", async () => {
    let session!: ReturnType<typeof createSession>;
    const model = scriptedModel([
      () => {
        session.steer("one more thing");
        return { text: "first answer" };
      },
      { text: "second answer" },
    ]);
    session = createSession({ model, cwd });
    const { result } = await collect(session.query("hi"));
    expect(model.calls).toBe(2);
    expect(result.text).toBe("second answer");
    expect(contents(model.requests[1].messages).slice(-2)).toEqual(["assistant:first answer", "user:one more thing"]);
  });

  it("a follow-up runs only when the agent would otherwise stop", async () => {
    let session!: ReturnType<typeof createSession>;
    const tool = defineTool({
      ...echo,
      name: "queue_followup",
      execute: () => {
        session.followUp("now summarise");
        return "queued";
      },
    });
    const model = scriptedModel([{ toolCalls: [{ name: "queue_followup", input: { text: "x" } }] }, { text: "tool done" }, { text: "summary" }]);
    session = createSession({ model, tools: [tool], cwd });
    const { events, result } = await collect(session.query("go"));
    // Not after the tool batch: the second call sees the tool result last.
    expect(model.requests[1].messages.at(-1)).toMatchObject({ role: "tool" });
    // After the answer without tools: a third call with the follow-up.
    expect(contents(model.requests[2].messages).slice(-2)).toEqual(["assistant:tool done", "user:now summarise"]);
    expect(result.text).toBe("summary");
    expect(events.find((e) => e.type === "user_message")).toMatchObject({ source: "follow_up" });
  });

  it("one-at-a-time takes one queued message per model call; all takes every one", async () => {
    for (const mode of ["one-at-a-time", "all"] as const) {
      const model = scriptedModel([{ text: "a" }, { text: "b" }, { text: "c" }]);
      const session = createSession({ model, cwd, followUpMode: mode, steeringMode: mode });
      session.followUp("f1");
      session.followUp("f2");
      await collect(session.query("start"));
      if (mode === "one-at-a-time") {
        expect(model.calls).toBe(3);
        expect(contents(model.requests[1].messages).slice(-1)).toEqual(["user:f1"]);
        expect(contents(model.requests[2].messages).slice(-1)).toEqual(["user:f2"]);
      } else {
        expect(model.calls).toBe(2);
        expect(contents(model.requests[1].messages).slice(-2)).toEqual(["user:f1", "user:f2"]);
      }
      session.steer("s1");
      session.steer("s2");
      const steered = scriptedModel([{ text: "x" }, { text: "y" }, { text: "z" }]);
      const s2 = createSession({ model: steered, cwd, steeringMode: mode });
      s2.steer("s1");
      s2.steer("s2");
      await collect(s2.query("begin"));
      if (mode === "one-at-a-time") {
        expect(contents(steered.requests[0].messages)).toEqual(["user:begin", "user:s1"]);
        expect(contents(steered.requests[1].messages).slice(-1)).toEqual(["user:s2"]);
      } else {
        expect(contents(steered.requests[0].messages)).toEqual(["user:begin", "user:s1", "user:s2"]);
      }
    }
  });

  it("queued messages survive an abort and are delivered by the next run, once", async () => {
    let session!: ReturnType<typeof createSession>;
    let run!: ReturnType<typeof session.query>;
    const stuck = defineTool({
      name: "stuck",
      description: "Waits until aborted.",
      inputSchema: { type: "object" },
      risk: "read",
      execute: (_i, { signal }) =>
        new Promise<string>((resolve) => {
          session.steer("steer me");
          session.followUp("follow me");
          setTimeout(() => run.abort(), 5);
          signal.addEventListener("abort", () => resolve("aborted"));
        }),
    });
    const model = scriptedModel([{ toolCalls: [{ name: "stuck", input: {} }] }, { text: "next run" }, { text: "after follow-up" }]);
    session = createSession({ model, tools: [stuck], cwd });
    run = session.query("first");
    const first = await collect(run);
    expect(first.result.reason).toBe("user_abort");
    expect(session.queued).toEqual({ steering: [{ role: "user", content: "steer me" }], followUp: [{ role: "user", content: "follow me" }] });
    const second = await collect(session.query("second"));
    expect(second.result.reason).toBe("final_answer");
    expect(contents(model.requests[1].messages).slice(-2)).toEqual(["user:second", "user:steer me"]);
    expect(contents(model.requests[2].messages).slice(-2)).toEqual(["assistant:next run", "user:follow me"]);
    expect(session.queued).toEqual({ steering: [], followUp: [] });
    const transcript = readJsonl<{ message?: Message }>(join(cwd, ".agent", "sessions", `${session.sessionId}.jsonl`));
    expect(transcript.filter((e) => e.message?.content === "steer me")).toHaveLength(1);
    expect(transcript.filter((e) => e.message?.content === "follow me")).toHaveLength(1);
  });

  it("a fresh run claims what an aborted run left queued, exactly once", async () => {
    const model = scriptedModel([{ text: "one" }, { text: "two" }]);
    const session = createSession({ model, cwd });
    session.steer("queued before");
    session.followUp("later");
    const { result } = await collect(session.query("go"));
    expect(result.reason).toBe("final_answer");
    expect(contents(model.requests[0].messages)).toEqual(["user:go", "user:queued before"]);
    expect(contents(model.requests[1].messages).slice(-1)).toEqual(["user:later"]);
    expect(session.queued).toEqual({ steering: [], followUp: [] });
    const transcript = readJsonl<{ type: string; message?: Message }>(join(cwd, ".agent", "sessions", `${session.sessionId}.jsonl`));
    expect(transcript.filter((e) => e.message?.content === "queued before")).toHaveLength(1);
    expect(transcript.filter((e) => e.message?.content === "later")).toHaveLength(1);
  });

  it("a second query while one runs is refused with SESSION_BUSY, and the first is undisturbed", async () => {
    const model = scriptedModel([{ text: "slow", delayMs: 50 }, { text: "next" }]);
    const session = createSession({ model, cwd });
    const first = session.query("one");
    const firstDone = collect(first);
    await new Promise((r) => setTimeout(r, 5));
    expect(session.running).toBe(true);
    const second = session.query("two");
    await expect(second.next()).rejects.toMatchObject({ code: "SESSION_BUSY" });
    const { result } = await firstDone;
    expect(result.reason).toBe("final_answer");
    expect(result.text).toBe("slow");
    expect(session.running).toBe(false);
    const third = await collect(session.query("three"));
    expect(third.result.text).toBe("next");
    // The conversation goes on across runs.
    expect(contents(model.requests[1].messages)).toEqual(["user:one", "assistant:slow", "user:three"]);
  });

  it("rejects bad modes and bad messages", () => {
    expect(() => createSession({ model: scriptedModel([]), steeringMode: "some" as never })).toThrow(/steeringMode must be "one-at-a-time" or "all"/);
    const session = createSession({ model: scriptedModel([]), cwd });
    expect(() => session.steer(42 as never)).toThrow(/must be a string/);
  });
});

describe("hooks", () => {
  it("transformContext shapes what is sent, never the stored history", async () => {
    const model = scriptedModel([{ text: "ok" }]);
    const { result } = await collect(
      query("original", { model, cwd, transformContext: (messages) => [...messages, { role: "user", content: "injected" }] }),
    );
    expect(contents(model.requests[0].messages)).toEqual(["user:original", "user:injected"]);
    expect(contents(result.messages)).toEqual(["user:original", "assistant:ok"]);
  });

  it("beforeToolCall blocks a call (the model gets the reason) or edits its input (validated again, then run)", async () => {
    const seen: unknown[] = [];
    const record = defineTool({ ...echo, name: "record", execute: (input: { text: string }) => (seen.push(input), "ran") });
    const model = scriptedModel([
      {
        toolCalls: [
          { name: "record", input: { text: "block me" } },
          { name: "record", input: { text: "edit me" } },
          { name: "record", input: { text: "break me" } },
          { name: "record", input: { text: "plain" } },
        ],
      },
      { text: "done" },
    ]);
    const { events } = await collect(
      query("x", {
        model,
        tools: [record],
        cwd,
        beforeToolCall: (call) => {
          const text = (call.input as { text: string }).text;
          if (text === "block me") return { block: true, reason: "not today" };
          if (text === "edit me") return { input: { text: "edited" } };
          if (text === "break me") return { input: { wrong: 1 } as never };
          return undefined;
        },
      }),
    );
    expect(seen).toEqual([{ text: "edited" }, { text: "plain" }]);
    const sent = model.requests[1].messages.filter((m) => m.role === "tool").map((m) => m.content);
    expect(sent[0]).toBe("Blocked: not today");
    expect(sent[1]).toBe("ran");
    expect(sent[2]).toMatch(/edited by beforeToolCall/);
    expect(sent[3]).toBe("ran");
    const starts = events.filter((e) => e.type === "tool_start") as Extract<AgentEvent, { type: "tool_start" }>[];
    expect(starts.map((s) => s.call.input)).toEqual([{ text: "edited" }, { text: "plain" }]);
  });

  it("a permission decision covers the edited input, and onAsk sees it", async () => {
    const asked: unknown[] = [];
    const write = defineTool({ ...echo, name: "write", risk: "write", execute: (i: { text: string }) => `wrote ${i.text}` });
    const model = scriptedModel([{ toolCalls: [{ name: "write", input: { text: "a" } }] }, { text: "ok" }]);
    await collect(
      query("x", {
        model,
        tools: [write],
        cwd,
        beforeToolCall: () => ({ input: { text: "b" } }),
        permissions: { onAsk: (request) => (asked.push(request.call.input), "allow") },
      }),
    );
    expect(asked).toEqual([{ text: "b" }]);
    expect(model.requests[1].messages.at(-1)).toMatchObject({ content: "wrote b" });
  });

  it("a throwing beforeToolCall or afterToolCall gives that call an error result; the other calls go on", async () => {
    const model = scriptedModel([{ toolCalls: [{ name: "echo", input: { text: "bad-before" } }, { name: "echo", input: { text: "bad-after" } }, { name: "echo", input: { text: "fine" } }] }, { text: "ok" }]);
    const { result } = await collect(
      query("x", {
        model,
        tools: [echo],
        cwd,
        beforeToolCall: (call) => {
          if ((call.input as { text: string }).text === "bad-before") throw new Error("before broke");
        },
        afterToolCall: (call, r) => {
          if ((call.input as { text: string }).text === "bad-after") throw new Error("after broke");
          return { content: r.content.toUpperCase(), isError: false };
        },
      }),
    );
    expect(result.reason).toBe("final_answer");
    const sent = model.requests[1].messages.filter((m) => m.role === "tool") as { content: string; isError: boolean }[];
    expect(sent[0]).toMatchObject({ isError: true, content: expect.stringContaining("hook beforeToolCall failed: before broke") });
    expect(sent[1]).toMatchObject({ isError: true, content: expect.stringContaining("hook afterToolCall failed: after broke") });
    expect(sent[2]).toEqual(expect.objectContaining({ content: "ECHO: FINE", isError: false }));
  });

  it("prepareNextTurn runs before every model call after the first; what it returns holds from then on", async () => {
    const turns: number[] = [];
    const other = scriptedModel([{ text: "from the other model" }], { name: "other" });
    const model = scriptedModel([calls("1"), calls("2")]);
    const { result } = await collect(
      query("x", {
        model,
        tools: [echo],
        cwd,
        systemPrompt: "first prompt",
        prepareNextTurn: ({ turn }) => {
          turns.push(turn);
          if (turn === 3) return { model: other, systemPrompt: "second prompt" };
          return undefined;
        },
      }),
    );
    expect(turns).toEqual([2, 3]);
    expect(model.calls).toBe(2);
    expect(other.calls).toBe(1);
    expect(other.requests[0].messages[0]).toEqual({ role: "system", content: "second prompt" });
    expect(result.text).toBe("from the other model");
  });

  it("shouldStopAfterTurn ends the run after the turn's whole batch, final_answer, without another model call", async () => {
    const ran: string[] = [];
    const track = defineTool({ ...echo, name: "track", execute: (i: { text: string }) => (ran.push(i.text), "ok") });
    const model = scriptedModel([{ text: "working", toolCalls: [{ name: "track", input: { text: "a" } }, { name: "track", input: { text: "b" } }] }, { text: "never" }]);
    const { events, result } = await collect(query("x", { model, tools: [track], cwd, shouldStopAfterTurn: ({ turn }) => turn === 1 }));
    expect(ran).toEqual(["a", "b"]);
    expect(model.calls).toBe(1);
    expect(result.reason).toBe("final_answer");
    expect(result.text).toBe("working");
    expect(outline(events).slice(-3)).toEqual(["state:append_tool_result", "state:build_context", "turn_end:final_answer"]);
  });

  it("onModelError: retry repeats the same request (not a new turn), continue adds a note and asks again, abort ends model_error", async () => {
    const attempts: number[] = [];
    const model = scriptedModel([
      { error: { status: 500, message: "flaky" } },
      { text: "second try worked" },
    ]);
    const retried = await collect(
      query("x", { model, cwd, onModelError: (_e, attempt) => (attempts.push(attempt), { action: "retry", delayMs: 1 }) }),
    );
    expect(retried.result.reason).toBe("final_answer");
    expect(retried.result.turns).toBe(1);
    expect(attempts).toEqual([1]);
    expect(contents(model.requests[1].messages)).toEqual(contents(model.requests[0].messages));

    const cont = scriptedModel([{ error: { status: 503, message: "overloaded" } }, { text: "carried on" }]);
    const continued = await collect(query("y", { model: cont, cwd, onModelError: () => ({ action: "continue" }) }));
    expect(continued.result.reason).toBe("final_answer");
    expect(continued.result.turns).toBe(2);
    expect(cont.requests[1].messages.at(-1)?.content).toContain("overloaded");

    const ab = scriptedModel([{ error: { status: 500, message: "down" } }]);
    const aborted = await collect(query("z", { model: ab, cwd, onModelError: () => ({ action: "abort" }) }));
    expect(aborted.result.reason).toBe("model_error");
    expect(aborted.result.error?.message).toContain("down");

    const silent = await collect(query("z", { model: scriptedModel([{ error: { status: 500, message: "down" } }]), cwd, onModelError: () => undefined }));
    expect(silent.result.reason).toBe("model_error");
  });

  it("retries stop when the hook stops asking for them; attempts count from 1", async () => {
    const attempts: number[] = [];
    const model = scriptedModel([{ error: { status: 500, message: "a" } }, { error: { status: 500, message: "b" } }, { error: { status: 500, message: "c" } }]);
    const { result, events } = await collect(
      query("x", { model, cwd, onModelError: (_e, attempt) => (attempts.push(attempt), attempt < 3 ? { action: "retry" } : { action: "abort" }) }),
    );
    expect(attempts).toEqual([1, 2, 3]);
    expect(result.reason).toBe("model_error");
    expect(result.error?.message).toContain("c");
    expect(outline(events).filter((e) => e === "state:recover")).toHaveLength(3);
  });

  it.each([
    ["transformContext", { transformContext: () => { throw new Error("tc boom"); } }],
    ["prepareNextTurn", { prepareNextTurn: () => { throw new Error("pnt boom"); } }],
    ["shouldStopAfterTurn", { shouldStopAfterTurn: () => { throw new Error("ssat boom"); } }],
    ["onModelError", { onModelError: () => { throw new Error("ome boom"); } }],
  ])("a throwing %s ends the run model_error with HOOK_FAILED and its message", async (name, hooks) => {
    const model = scriptedModel(name === "onModelError" ? [{ error: { status: 500, message: "x" } }] : [calls("a"), { text: "never" }]);
    const { events, result } = await collect(query("x", { model, tools: [echo], cwd, ...(hooks as object) }));
    expect(result.reason).toBe("model_error");
    expect(result.error).toMatchObject({ code: "HOOK_FAILED", message: expect.stringContaining(`hook ${name} failed`) });
    expect(result.error?.message).toContain("boom");
    expect(events.filter((e) => e.type === "turn_end")).toHaveLength(1);
    expect(events.at(-1)?.type).toBe("turn_end");
    expect(outline(events)).toContain("state:recover");
  });
});

describe("context compaction", () => {
  const big = (n: number) => "x".repeat(n);

  it("compacts before an over-budget model call, mid-run, never separating a tool call from its result", async () => {
    const summarized: Message[][] = [];
    const bulky = defineTool({ ...echo, name: "bulky", execute: () => big(2000) });
    const model = scriptedModel([
      { toolCalls: [{ name: "bulky", input: { text: "1" } }] },
      { toolCalls: [{ name: "bulky", input: { text: "2" } }] },
      { toolCalls: [{ name: "bulky", input: { text: "3" } }] },
      { text: "done" },
    ]);
    const { events, result } = await collect(
      query("start", {
        model,
        tools: [bulky],
        cwd,
        contextWindow: 1500,
        reserveTokens: 200,
        keepRecentTokens: 600,
        summarize: (messages) => {
          summarized.push([...messages]);
          return `summary of ${messages.length} messages`;
        },
      }),
    );
    expect(result.reason).toBe("final_answer");
    expect(summarized.length).toBeGreaterThanOrEqual(1);
    for (const request of model.requests) {
      const msgs = request.messages;
      // Every tool result follows its assistant call in the same request: nothing was split.
      msgs.forEach((m, i) => {
        if (m.role === "tool") {
          const owner = msgs.slice(0, i).reverse().find((x) => x.role === "assistant");
          expect(owner && owner.role === "assistant" && owner.toolCalls?.some((c) => c.id === m.toolCallId)).toBe(true);
        }
      });
    }
    const compacted = model.requests.find((r) => r.messages.some((m) => m.content.startsWith("[Summary of the earlier conversation]")));
    expect(compacted).toBeDefined();
    expect(events.filter((e) => e.type === "compaction").length).toBe(summarized.length);
    const trace = readJsonl<{ kind: string; tokensBefore?: number; tokensAfter?: number }>(join(cwd, ".agent", "trace.jsonl"));
    const line = trace.find((l) => l.kind === "compaction")!;
    expect(line.tokensBefore).toBeGreaterThan(line.tokensAfter!);
    const transcript = readJsonl<{ type: string; summary?: string }>(join(cwd, ".agent", "sessions", `${result.sessionId}.jsonl`));
    expect(transcript.find((e) => e.type === "compaction")?.summary).toMatch(/^summary of \d+ messages$/);
  });

  it("the session's next run continues from the compacted history", async () => {
    const model = scriptedModel([{ text: big(3000) }, { text: "a" }, { text: "b" }]);
    const session = createSession({ model, cwd, contextWindow: 600, reserveTokens: 100, keepRecentTokens: 50, summarize: () => "S" });
    await collect(session.query("one"));
    await collect(session.query("two"));
    const third = scriptedModel([{ text: "c" }]);
    await collect(query("three", { model: third, cwd, sessionId: session.sessionId }));
    expect(third.requests[0].messages[0].content).toBe("[Summary of the earlier conversation]\nS");
  });

  it("a context overflow error triggers one compaction and one retry per run, never a cascade", async () => {
    let summaries = 0;
    const overflow = { error: { status: 400, code: "context_length_exceeded", message: "too long" } };
    const bulky = defineTool({ ...echo, name: "echo", execute: () => big(2000) });
    const model = scriptedModel([calls("a"), overflow, { text: "fits now" }]);
    const { result } = await collect(
      query("x", { model, tools: [bulky], cwd, contextWindow: 800, reserveTokens: 0, summarize: () => (summaries++, "short") }),
    );
    expect(result.reason).toBe("final_answer");
    expect(summaries).toBe(1);
    expect(model.requests[2].messages.some((m) => m.content.includes("short"))).toBe(true);
    expect(result.turns).toBe(2);

    const again = scriptedModel([calls("a"), overflow, overflow, { text: "never" }]);
    const second = await collect(query("x", { model: again, tools: [echo], cwd, summarize: () => "s" }));
    expect(second.result.reason).toBe("model_error");
    expect(second.result.error?.code).toBe("CONTEXT_OVERFLOW");
    expect(again.calls).toBe(3);
  });
});

describe("loop guards", () => {
  it("a repeated identical call is refused once, then stops the run tool_error REPEATED_CALL", async () => {
    let ran = 0;
    const same = defineTool({ ...echo, name: "same", execute: () => (ran++, "same result") });
    const step = { toolCalls: [{ name: "same", input: { text: "x" } }] };
    const model = scriptedModel([step, step, step, step, step, step]);
    const { result } = await collect(query("x", { model, tools: [same], cwd, maxRepeatedCalls: 3 }));
    expect(ran).toBe(3);
    expect(model.calls).toBe(5);
    expect(model.requests[4].messages.at(-1)).toMatchObject({ isError: true, content: expect.stringContaining("3 times in a row") });
    expect(result.reason).toBe("tool_error");
    expect(result.error?.code).toBe("REPEATED_CALL");
  });

  it("identical calls in one batch count as in a row; a different call resets the count", async () => {
    let ran = 0;
    const same = defineTool({ ...echo, name: "same", execute: () => (ran++, "r") });
    const c = (text: string) => ({ name: "same", input: { text } });
    const model = scriptedModel([{ toolCalls: [c("a"), c("a"), c("b"), c("b"), c("b")] }, { text: "ok" }]);
    const { result } = await collect(query("x", { model, tools: [same], cwd, maxRepeatedCalls: 2 }));
    expect(ran).toBe(4);
    expect(result.reason).toBe("final_answer");
    const last = model.requests[1].messages.at(-1) as { content: string; isError: boolean };
    expect(last.isError).toBe(true);
  });

  it("maxTokens ends the run cleanly before the next model call, after the current batch", async () => {
    let ran = 0;
    const counted = defineTool({ ...echo, name: "counted", execute: () => (ran++, "ok") });
    const model = scriptedModel([
      { toolCalls: [{ name: "counted", input: { text: "1" } }], usage: { input: 60, output: 10 } },
      { toolCalls: [{ name: "counted", input: { text: "2" } }], usage: { input: 80, output: 10 } },
      { text: "never" },
    ]);
    const { result } = await collect(query("x", { model, tools: [counted], cwd, maxTokens: 100 }));
    expect(model.calls).toBe(2);
    expect(ran).toBe(2);
    expect(result.reason).toBe("max_turns");
    expect(result.error?.code).toBe("MAX_TOKENS");
  });
});

describe("subagents", () => {
  it("a subagent runs with its own tools, returns its final text, and its events reach the parent's caller", async () => {
    const child = scriptedModel([calls("from child"), { text: "child answer" }]);
    const researcher = agentTool({ name: "researcher", description: "Researches.", model: child, tools: [echo] });
    const parent = scriptedModel([{ toolCalls: [{ name: "researcher", input: { prompt: "look it up" } }] }, { text: "parent done" }]);
    const run = query("x", { model: parent, tools: [researcher], cwd });
    const { events, result } = await collect(run);
    expect(result.reason).toBe("final_answer");
    expect(parent.requests[1].messages.at(-1)).toMatchObject({ role: "tool", content: "child answer", isError: false });
    const sub = events.filter((e) => e.type === "subagent_event") as Extract<AgentEvent, { type: "subagent_event" }>[];
    expect(sub.length).toBeGreaterThan(0);
    expect(sub.every((e) => e.parentSession === run.sessionId && e.depth === 1)).toBe(true);
    expect(sub.at(-1)?.event).toMatchObject({ type: "turn_end", reason: "final_answer" });
    expect(events.filter((e) => e.type === "turn_end")).toHaveLength(1);
    expect(events.at(-1)?.type).toBe("turn_end");
    expect(child.requests[0].messages).toEqual([{ role: "user", content: "look it up" }]);
    const trace = readJsonl<{ sessionId: string; parentSession?: string; state?: string }>(join(cwd, ".agent", "trace.jsonl"));
    const childLines = trace.filter((l) => l.sessionId === sub[0].sessionId);
    expect(childLines.length).toBeGreaterThan(0);
    expect(childLines.every((l) => l.parentSession === run.sessionId)).toBe(true);
    expect(childLines.at(-1)?.state).toBe("done");
  });

  it("limits are clamped to what the parent has left; depth beyond maxDelegationDepth gets an error result", async () => {
    const childModel = scriptedModel([calls("1"), calls("2"), calls("3"), { text: "never" }]);
    const limited = agentTool({ name: "limited", description: "d", model: childModel, tools: [echo], maxTurns: 10 });
    const parent = scriptedModel([{ toolCalls: [{ name: "limited", input: { prompt: "go" } }] }, { text: "end" }]);
    const { result } = await collect(query("x", { model: parent, tools: [limited], cwd, maxTurns: 3 }));
    // The parent had 2 model calls left when it called the subagent.
    expect(childModel.calls).toBe(2);
    expect(parent.requests[1].messages.at(-1)).toMatchObject({ isError: true, content: expect.stringContaining("max_turns") });
    expect(result.reason).toBe("final_answer");

    const innermost = agentTool({ name: "inner", description: "d", model: scriptedModel([{ text: "deep" }]) });
    const middle = agentTool({ name: "middle", description: "d", model: scriptedModel([{ toolCalls: [{ name: "inner", input: { prompt: "p" } }] }, { text: "mid" }]), tools: [innermost] });
    const top = scriptedModel([{ toolCalls: [{ name: "middle", input: { prompt: "p" } }] }, { text: "top" }]);
    const events: AgentEvent[] = [];
    for await (const e of query("x", { model: top, tools: [middle], cwd, maxDelegationDepth: 1 })) events.push(e);
    const depths = new Set((events.filter((e) => e.type === "subagent_event") as Extract<AgentEvent, { type: "subagent_event" }>[]).map((e) => e.depth));
    expect([...depths]).toEqual([1]);
    const innerResult = (events.filter((e) => e.type === "subagent_event") as Extract<AgentEvent, { type: "subagent_event" }>[])
      .map((e) => e.event)
      .find((e) => e.type === "tool_result") as Extract<AgentEvent, { type: "tool_result" }>;
    expect(innerResult.result).toMatchObject({ isError: true, content: expect.stringContaining("maxDelegationDepth = 1") });
  });

  it("a grandchild's events are passed up with their own depth", async () => {
    const inner = agentTool({ name: "inner", description: "d", model: scriptedModel([{ text: "deep" }]) });
    const middle = agentTool({ name: "middle", description: "d", model: scriptedModel([{ toolCalls: [{ name: "inner", input: { prompt: "p" } }] }, { text: "mid" }]), tools: [inner] });
    const top = scriptedModel([{ toolCalls: [{ name: "middle", input: { prompt: "p" } }] }, { text: "top" }]);
    const { events } = await collect(query("x", { model: top, tools: [middle], cwd }));
    const sub = events.filter((e) => e.type === "subagent_event") as Extract<AgentEvent, { type: "subagent_event" }>[];
    expect(new Set(sub.map((e) => e.depth))).toEqual(new Set([1, 2]));
    const deep = sub.filter((e) => e.depth === 2);
    expect(deep.at(-1)?.event).toMatchObject({ type: "turn_end", reason: "final_answer" });
    expect(new Set(deep.map((e) => e.parentSession)).size).toBe(1);
    expect(deep[0].parentSession).toBe(sub.find((e) => e.depth === 1)!.sessionId);
  });

  it("a subagent is aborted with its parent", async () => {
    const controller = new AbortController();
    let childSignal: AbortSignal | undefined;
    const wait = defineTool({
      name: "wait",
      description: "Waits.",
      inputSchema: { type: "object" },
      risk: "read",
      execute: (_i, { signal }) =>
        new Promise<string>((resolve) => {
          childSignal = signal;
          setTimeout(() => controller.abort(), 5);
          signal.addEventListener("abort", () => resolve("stopped"));
        }),
    });
    const sub = agentTool({ name: "sub", description: "d", model: scriptedModel([{ toolCalls: [{ name: "wait", input: {} }] }, { text: "never" }]), tools: [wait] });
    const top = scriptedModel([{ toolCalls: [{ name: "sub", input: { prompt: "p" } }] }, { text: "never" }]);
    const { result } = await collect(query("x", { model: top, tools: [sub], cwd, signal: controller.signal }));
    expect(result.reason).toBe("user_abort");
    expect(childSignal?.aborted).toBe(true);
  });
});

void AgentError;
