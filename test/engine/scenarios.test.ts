import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { join } from "node:path";
import { AgentError, defineTool, query, scriptedModel, type AgentEvent } from "../../src/index.js";
import { collect, outline, readJsonl, removeDir, tempDir, textOf, echoTool } from "../support/engine.js";

let cwd: string;
beforeEach(() => {
  cwd = tempDir();
});
afterEach(() => removeDir(cwd));

const echo = echoTool;

const writeNote = defineTool({
  name: "write_note",
  description: "Writes a note.",
  inputSchema: { type: "object", properties: { note: { type: "string" } }, required: ["note"] },
  risk: "write",
  execute: (input: { note: string }) => `wrote ${input.note}`,
});

const traceOf = (dir: string) => readJsonl<{ state?: string; kind: string; seq: number; details: Record<string, unknown> }>(join(dir, ".agent", "trace.jsonl"));

describe("stop reasons, with exact event sequences", () => {
  it("final_answer: a text-only answer", async () => {
    const { events, result } = await collect(query("hi", { model: scriptedModel([{ text: "Hello there." }]), cwd }));
    expect(outline(events)).toEqual(["state:build_context", "state:call_model", "state:stream_text", "text", "turn_end:final_answer"]);
    expect(textOf(events)).toBe("Hello there.");
    expect(result.reason).toBe("final_answer");
    expect(result.text).toBe("Hello there.");
    expect(result.error).toBeUndefined();
    const end = events.at(-1) as Extract<AgentEvent, { type: "turn_end" }>;
    expect(end).toMatchObject({ type: "turn_end", reason: "final_answer", turns: 1, toolCalls: 0, sessionId: result.sessionId });
    expect(end.error).toBeUndefined();
    expect(result.messages).toEqual([
      { role: "user", content: "hi" },
      { role: "assistant", content: "Hello there." },
    ]);
  });

  it("final_answer after a tool round trip", async () => {
    const model = scriptedModel([
      { text: "Looking.", toolCalls: [{ name: "echo", input: { text: "a" } }], usage: { input: 10, output: 3 } },
      { text: "Done.", usage: { input: 20, output: 4 } },
    ]);
    const { events, result } = await collect(query("go", { model, tools: [echo], cwd }));
    expect(outline(events)).toEqual([
      "state:build_context",
      "state:call_model",
      "state:stream_text",
      "text",
      "state:parse_tool_call",
      "state:validate_tool",
      "state:ask_permission",
      "state:execute_tool",
      "tool_start:echo",
      "tool_result:echo:ok",
      "state:append_tool_result",
      "state:build_context",
      "state:call_model",
      "state:stream_text",
      "text",
      "turn_end:final_answer",
    ]);
    expect(result.usage).toEqual({ input: 30, output: 7, cached: 0, reasoning: 0 });
    expect(result.turns).toBe(2);
    expect(result.toolCalls).toBe(1);
    // The second model call saw the tool result.
    const second = model.requests[1].messages;
    expect(second.at(-1)).toMatchObject({ role: "tool", name: "echo", content: "echo: a", isError: false });
    const states = events.filter((e) => e.type === "state").map((e) => (e as { turn: number }).turn);
    expect(states).toEqual([0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2]);
  });

  it("max_turns: the model keeps calling tools", async () => {
    const step = { toolCalls: [{ name: "echo", input: { text: "again" } }] };
    const model = scriptedModel([step, step, step, step]);
    const { events, result } = await collect(query("loop", { model, tools: [echo], cwd, maxTurns: 3 }));
    expect(result.reason).toBe("max_turns");
    expect(model.calls).toBe(3);
    expect(result.error).toEqual({ code: "MAX_TURNS", message: expect.stringContaining("stopped after 3 model calls (maxTurns") });
    expect(outline(events).slice(-3)).toEqual(["tool_result:echo:ok", "state:append_tool_result", "turn_end:max_turns"]);
  });

  it("max_turns with the default of 8 says so in words", async () => {
    const model = scriptedModel(Array.from({ length: 10 }, (_, i) => ({ toolCalls: [{ name: "echo", input: { text: `call ${i}` } }] })));
    const { result } = await collect(query("loop", { model, tools: [echo], cwd, maxToolCalls: 100 }));
    expect(model.calls).toBe(8);
    expect(result.error?.message).toContain("stopped after 8 model calls (maxTurns)");
  });

  it("max_tool_calls: the calls that fit run, the rest are told the limit, then the run stops", async () => {
    const model = scriptedModel([
      { toolCalls: [{ name: "echo", input: { text: "1" } }, { name: "echo", input: { text: "2" } }] },
      { toolCalls: [{ name: "echo", input: { text: "3" } }, { name: "echo", input: { text: "4" } }] },
      { text: "never" },
    ]);
    const { events, result } = await collect(query("many", { model, tools: [echo], cwd, maxToolCalls: 3 }));
    expect(result.reason).toBe("max_tool_calls");
    expect(result.toolCalls).toBe(3);
    expect(model.calls).toBe(2);
    expect(result.error?.code).toBe("MAX_TOOL_CALLS");
    const results = events.filter((e) => e.type === "tool_result") as Extract<AgentEvent, { type: "tool_result" }>[];
    expect(results.map((r) => [r.call.input, r.result.isError])).toEqual([
      [{ text: "1" }, false],
      [{ text: "2" }, false],
      [{ text: "3" }, false],
      [{ text: "4" }, true],
    ]);
    expect(results[3].result.content).toContain("maxToolCalls = 3");
    expect(events.filter((e) => e.type === "tool_start")).toHaveLength(3);
    // The last response's calls all have results in the transcript.
    const tools = result.messages.filter((m) => m.role === "tool");
    expect(tools).toHaveLength(4);
  });

  it("max_tool_calls when the budget is already spent: nothing runs, nobody is asked", async () => {
    let asked = 0;
    const model = scriptedModel([
      { toolCalls: [{ name: "echo", input: { text: "1" } }] },
      { toolCalls: [{ name: "write_note", input: { note: "x" } }] },
    ]);
    const { events, result } = await collect(
      query("x", { model, tools: [echo, writeNote], cwd, maxToolCalls: 1, permissions: { onAsk: () => (asked++, "allow") } }),
    );
    expect(result.reason).toBe("max_tool_calls");
    expect(asked).toBe(0);
    expect(outline(events).slice(-5)).toEqual([
      "state:parse_tool_call",
      "state:validate_tool",
      "state:append_tool_result",
      "tool_result:write_note:error",
      "turn_end:max_tool_calls",
    ]);
  });

  it("timeout: a hanging model call is cut off and the run ends promptly", async () => {
    const model = scriptedModel([{ text: "late", delayMs: 60_000 }]);
    const started = Date.now();
    const { events, result } = await collect(query("slow", { model, cwd, timeoutMs: 200 }));
    expect(result.reason).toBe("timeout");
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(result.error).toMatchObject({ code: "TIMEOUT" });
    expect(outline(events)).toEqual(["state:build_context", "state:call_model", "turn_end:timeout"]);
  });

  it("timeout: a hanging tool is aborted through its signal", async () => {
    let sawAbort = false;
    const hang = defineTool({
      name: "hang",
      description: "Never returns on its own.",
      inputSchema: { type: "object" },
      risk: "read",
      execute: (_input, { signal }) =>
        new Promise<string>((_resolve, reject) => {
          signal.addEventListener("abort", () => {
            sawAbort = true;
            reject(new Error("aborted"));
          });
        }),
    });
    const model = scriptedModel([{ toolCalls: [{ name: "hang", input: {} }] }]);
    const { events, result } = await collect(query("hang", { model, tools: [hang], cwd, timeoutMs: 200 }));
    expect(result.reason).toBe("timeout");
    expect(sawAbort).toBe(true);
    const last = outline(events).slice(-3);
    expect(last).toEqual(["tool_start:hang", "tool_result:hang:error", "turn_end:timeout"]);
    // The conversation stays valid: the call has its result.
    expect(result.messages.at(-1)).toMatchObject({ role: "tool", name: "hang", isError: true });
  });

  it("user_abort through options.signal, mid-stream: the partial answer is kept as cut off", async () => {
    const controller = new AbortController();
    const model = scriptedModel([
      async () => ({ text: "partial answer that goes on and on", delayMs: 0 }),
    ]);
    const run = query("stream", { model, cwd, signal: controller.signal });
    const events: AgentEvent[] = [];
    for await (const event of run) {
      events.push(event);
      if (event.type === "text_delta") controller.abort();
    }
    expect(events.at(-1)).toMatchObject({ type: "turn_end", reason: "user_abort", error: { code: "USER_ABORT" } });
    expect(events.filter((e) => e.type === "turn_end")).toHaveLength(1);
    const transcript = readJsonl<{ message: { role: string; content: string; cutOff?: boolean } }>(join(cwd, ".agent", "sessions", `${run.sessionId}.jsonl`));
    const last = transcript.at(-1)!.message;
    expect(last.role).toBe("assistant");
    expect(last.cutOff).toBe(true);
    expect("partial answer that goes on and on".startsWith(last.content)).toBe(true);
    expect(last.content.length).toBeGreaterThan(0);
  });

  it("user_abort through run.abort() while a tool runs; nothing is yielded after turn_end", async () => {
    let release!: () => void;
    const started = new Promise<void>((r) => (release = r));
    const slow = defineTool({
      name: "slow",
      description: "Slow.",
      inputSchema: { type: "object" },
      risk: "read",
      execute: (_i, { signal }) =>
        new Promise<string>((resolve) => {
          release();
          signal.addEventListener("abort", () => resolve("stopped"));
        }),
    });
    const run = query("x", { model: scriptedModel([{ toolCalls: [{ name: "slow", input: {} }] }]), tools: [slow], cwd });
    const pending = collect(run);
    await started;
    run.abort();
    const { events, result } = await pending;
    expect(result.reason).toBe("user_abort");
    expect(events.at(-1)?.type).toBe("turn_end");
    expect(outline(events).slice(-3)).toEqual(["tool_start:slow", "tool_result:slow:error", "turn_end:user_abort"]);
    expect(await run.next()).toEqual({ done: true, value: undefined });
  });

  it("user_abort when the signal is already aborted: no model call", async () => {
    const model = scriptedModel([{ text: "never" }]);
    const { events, result } = await collect(query("x", { model, cwd, signal: AbortSignal.abort() }));
    expect(result.reason).toBe("user_abort");
    expect(model.calls).toBe(0);
    expect(outline(events)).toEqual(["state:build_context", "turn_end:user_abort"]);
  });

  it("permission_denied: a write tool with no onAsk is denied, nothing of the response runs, every call gets a result", async () => {
    let ran = 0;
    const counted = defineTool({ ...echo, name: "counted", execute: () => (ran++, "ran") });
    const model = scriptedModel([{ toolCalls: [{ name: "counted", input: { text: "a" } }, { name: "write_note", input: { note: "n" } }, { name: "counted", input: { text: "b" } }] }]);
    const { events, result } = await collect(query("x", { model, tools: [counted, writeNote], cwd }));
    expect(result.reason).toBe("permission_denied");
    expect(ran).toBe(0);
    expect(result.error?.code).toBe("PERMISSION_DENIED");
    expect(result.error?.message).toContain("write_note");
    expect(outline(events).slice(-6)).toEqual([
      "state:validate_tool",
      "state:ask_permission",
      "tool_result:counted:error",
      "tool_result:write_note:error",
      "tool_result:counted:error",
      "turn_end:permission_denied",
    ]);
    const tools = result.messages.filter((m) => m.role === "tool") as { content: string }[];
    expect(tools.map((t) => t.content)).toEqual([
      "Not run: another call in this response was denied.",
      expect.stringMatching(/^Permission denied: .*write_note was not run\.$/),
      "Not run: another call in this response was denied.",
    ]);
    const done = traceOf(cwd).at(-1)!;
    expect(done.state).toBe("done");
    expect(done.details.permissions).toEqual([
      { toolCallId: expect.any(String), decision: "allow", by: "mode", input: { text: "a" }, name: "counted" },
      { toolCallId: expect.any(String), decision: "deny", by: "default", input: { note: "n" }, name: "write_note" },
    ]);
  });

  it("permission asked through onAsk: allow runs the call, and the request is an event", async () => {
    const asked: unknown[] = [];
    const model = scriptedModel([{ toolCalls: [{ name: "write_note", input: { note: "n" } }] }, { text: "ok" }]);
    const { events, result } = await collect(
      query("x", {
        model,
        tools: [writeNote],
        cwd,
        permissions: {
          onAsk: (request) => {
            asked.push(request);
            return "allow";
          },
        },
      }),
    );
    expect(result.reason).toBe("final_answer");
    expect(asked).toEqual([
      { call: { id: expect.stringMatching(/^call_/), name: "write_note", input: { note: "n" } }, reason: expect.any(String), signal: expect.any(AbortSignal) },
    ]);
    expect(outline(events)).toContain("permission_request");
    const request = events.find((e) => e.type === "permission_request") as Extract<AgentEvent, { type: "permission_request" }>;
    expect(request.call).toMatchObject({ name: "write_note", input: { note: "n" } });
    const exec = traceOf(cwd).find((l) => l.state === "execute_tool")!;
    expect(exec.details.permissions).toEqual([{ toolCallId: request.call.id, decision: "allow", by: "human", input: { note: "n" }, name: "write_note" }]);
  });

  it("permission_denied by a person", async () => {
    const model = scriptedModel([{ toolCalls: [{ name: "write_note", input: { note: "n" } }] }]);
    const { result } = await collect(query("x", { model, tools: [writeNote], cwd, permissions: { onAsk: () => "deny" } }));
    expect(result.reason).toBe("permission_denied");
    expect(result.messages.at(-1)).toMatchObject({ role: "tool", isError: true, content: expect.stringContaining("denied when asked") });
  });

  it("tool_error: a fatal tool error ends the run", async () => {
    const fatal = defineTool({
      name: "fatal",
      description: "Fails hard.",
      inputSchema: { type: "object" },
      risk: "read",
      execute: () => {
        throw new AgentError("TOOL_FATAL", "disk on fire");
      },
    });
    const model = scriptedModel([{ toolCalls: [{ name: "fatal", input: {} }] }, { text: "never" }]);
    const { events, result } = await collect(query("x", { model, tools: [fatal], cwd }));
    expect(result.reason).toBe("tool_error");
    expect(result.error).toEqual({ code: "TOOL_FATAL", message: "tool fatal failed fatally: disk on fire" });
    expect(model.calls).toBe(1);
    expect(outline(events).slice(-4)).toEqual(["tool_start:fatal", "state:recover", "tool_result:fatal:error", "turn_end:tool_error"]);
  });

  it("a tool that throws an ordinary error: the model gets it as an error result and goes on", async () => {
    const flaky = defineTool({
      name: "flaky",
      description: "Throws.",
      inputSchema: { type: "object" },
      risk: "read",
      execute: () => {
        throw new Error("ENOENT: no such file");
      },
    });
    const model = scriptedModel([{ toolCalls: [{ name: "flaky", input: {} }] }, { text: "recovered" }]);
    const { events, result } = await collect(query("x", { model, tools: [flaky], cwd }));
    expect(result.reason).toBe("final_answer");
    expect(outline(events)).toEqual([
      "state:build_context",
      "state:call_model",
      "state:parse_tool_call",
      "state:validate_tool",
      "state:ask_permission",
      "state:execute_tool",
      "tool_start:flaky",
      "state:recover",
      "tool_result:flaky:error",
      "state:append_tool_result",
      "state:build_context",
      "state:call_model",
      "state:stream_text",
      "text",
      "turn_end:final_answer",
    ]);
    expect(model.requests[1].messages.at(-1)).toMatchObject({ role: "tool", content: "Error: ENOENT: no such file", isError: true });
  });

  it("model_error: a failed request ends the run with the model's message", async () => {
    const model = scriptedModel([{ error: { status: 500, message: "upstream exploded" } }]);
    const { events, result } = await collect(query("x", { model, cwd }));
    expect(result.reason).toBe("model_error");
    expect(result.error).toMatchObject({ code: "MODEL_ERROR", status: 500, message: expect.stringContaining("upstream exploded") });
    expect(outline(events)).toEqual(["state:build_context", "state:call_model", "state:recover", "turn_end:model_error"]);
  });

  it("model_error: a script that runs out says so", async () => {
    const { result } = await collect(query("x", { model: scriptedModel([]), cwd }));
    expect(result.reason).toBe("model_error");
    expect(result.error).toMatchObject({ code: "MODEL_SCRIPT_EXHAUSTED", message: expect.stringContaining("ran out of steps") });
  });
});

describe("recovery", () => {
  it("unknown tool and invalid input go back as those calls' results; the valid call still runs", async () => {
    const model = scriptedModel([
      {
        toolCalls: [
          { name: "echo", input: { text: "ok" } },
          { name: "nope", input: {} },
          { name: "echo", input: { wrong: 1 } },
          { name: "echo", rawArguments: "{not json" },
        ],
      },
      { text: "fine" },
    ]);
    const { events, result } = await collect(query("x", { model, tools: [echo], cwd }));
    expect(result.reason).toBe("final_answer");
    expect(outline(events).slice(0, 13)).toEqual([
      "state:build_context",
      "state:call_model",
      "state:parse_tool_call",
      "state:validate_tool",
      "state:recover",
      "tool_result:nope:error",
      "tool_result:echo:error",
      "tool_result:echo:error",
      "state:ask_permission",
      "state:execute_tool",
      "tool_start:echo",
      "tool_result:echo:ok",
      "state:append_tool_result",
    ]);
    const sent = model.requests[1].messages.filter((m) => m.role === "tool") as { content: string; isError: boolean; toolCallId: string }[];
    expect(sent).toHaveLength(4);
    expect(sent[0]).toMatchObject({ content: "echo: ok", isError: false });
    expect(sent[1].content).toMatch(/unknown tool "nope"\. Available tools: echo/);
    expect(sent[2].content).toMatch(/invalid input for echo: input: (missing required property "text"|unknown property "wrong")/);
    expect(sent[3].content).toMatch(/not valid JSON/);
    // Results are in call order and answer the assistant's calls one to one.
    const assistant = model.requests[1].messages.find((m) => m.role === "assistant") as { toolCalls: { id: string }[] };
    expect(sent.map((m) => m.toolCallId)).toEqual(assistant.toolCalls.map((c) => c.id));
  });

  it("a response cut off by the token limit: none of its calls runs, each is told it was truncated", async () => {
    let ran = 0;
    const counted = defineTool({ ...echo, name: "counted", execute: () => (ran++, "ran") });
    const model = scriptedModel([
      { toolCalls: [{ name: "counted", input: { text: "a" } }, { name: "counted", rawArguments: '{"text": "unfini' }], finishReason: "length" },
      { text: "ok" },
    ]);
    const { events, result } = await collect(query("x", { model, tools: [counted], cwd }));
    expect(ran).toBe(0);
    expect(result.reason).toBe("final_answer");
    expect(outline(events).slice(0, 8)).toEqual([
      "state:build_context",
      "state:call_model",
      "state:parse_tool_call",
      "state:validate_tool",
      "state:recover",
      "tool_result:counted:error",
      "tool_result:counted:error",
      "state:append_tool_result",
    ]);
    const sent = model.requests[1].messages.filter((m) => m.role === "tool") as { content: string }[];
    for (const m of sent) expect(m.content).toContain('finish reason "length"');
  });

  it("numbers sent as strings are coerced to the schema's types", async () => {
    let got: unknown;
    const add = defineTool({
      name: "add",
      description: "Adds.",
      inputSchema: { type: "object", properties: { a: { type: "integer" }, b: { type: "boolean" } }, required: ["a", "b"] },
      risk: "read",
      execute: (input) => ((got = input), "ok"),
    });
    const model = scriptedModel([{ toolCalls: [{ name: "add", input: { a: "42", b: "true" } }] }, { text: "k" }]);
    await collect(query("x", { model, tools: [add], cwd }));
    expect(got).toEqual({ a: 42, b: true });
  });
});

describe("tools", () => {
  it("read-only calls run concurrently, others one at a time in call order; results join in call order", async () => {
    const log: string[] = [];
    const slowRead = (name: string, ms: number) =>
      defineTool({
        name,
        description: name,
        inputSchema: { type: "object" },
        risk: "read",
        execute: async () => {
          log.push(`start ${name}`);
          await new Promise((r) => setTimeout(r, ms));
          log.push(`end ${name}`);
          return name;
        },
      });
    const seqWrite = defineTool({
      name: "w",
      description: "w",
      inputSchema: { type: "object" },
      risk: "write",
      execute: async () => {
        log.push("start w");
        await new Promise((r) => setTimeout(r, 5));
        log.push("end w");
        return "w";
      },
    });
    const model = scriptedModel([
      { toolCalls: [{ name: "r1", input: {} }, { name: "r2", input: {} }, { name: "w", input: {} }, { name: "r3", input: {} }] },
      { text: "done" },
    ]);
    const { events, result } = await collect(
      query("x", { model, tools: [slowRead("r1", 60), slowRead("r2", 10), seqWrite, slowRead("r3", 1)], cwd, permissions: { mode: "acceptEdits" } }),
    );
    expect(result.reason).toBe("final_answer");
    // Each call's start is announced when it starts (the leading group as the batch is asked for), its result when it
    // finishes: r2 is quicker than r1; w waits for both; r3 for w.
    const o = outline(events);
    expect(o.slice(o.indexOf("state:execute_tool"), o.indexOf("state:append_tool_result") + 1)).toEqual([
      "state:execute_tool",
      "tool_start:r1",
      "tool_start:r2",
      "tool_result:r2:ok",
      "tool_result:r1:ok",
      "tool_start:w",
      "tool_result:w:ok",
      "tool_start:r3",
      "tool_result:r3:ok",
      "state:append_tool_result",
    ]);
    expect(log.slice(0, 2).sort()).toEqual(["start r1", "start r2"]);
    expect(log.indexOf("start w")).toBeGreaterThan(log.indexOf("end r1"));
    expect(log.indexOf("start r3")).toBeGreaterThan(log.indexOf("end w"));
    const tools = result.messages.filter((m) => m.role === "tool").map((m) => (m as { content: string }).content);
    expect(tools).toEqual(["r1", "r2", "w", "r3"]);
  });

  it("a tool over its timeoutMs is aborted and the model is told it timed out", async () => {
    let aborted = false;
    const slow = defineTool({
      name: "slow",
      description: "slow",
      inputSchema: { type: "object" },
      risk: "read",
      timeoutMs: 50,
      execute: (_i, { signal }) =>
        new Promise<string>((resolve) => {
          signal.addEventListener("abort", () => (aborted = true));
          setTimeout(() => resolve("late"), 10_000).unref();
        }),
    });
    const model = scriptedModel([{ toolCalls: [{ name: "slow", input: {} }] }, { text: "ok" }]);
    const { result } = await collect(query("x", { model, tools: [slow], cwd }));
    expect(aborted).toBe(true);
    expect(model.requests[1].messages.at(-1)).toMatchObject({ role: "tool", isError: true, content: expect.stringContaining("timed out after 50 ms") });
    expect(result.reason).toBe("final_answer");
  });

  it("long output is cut in the middle with a note", async () => {
    const big = defineTool({ name: "big", description: "big", inputSchema: { type: "object" }, risk: "read", maxOutputChars: 100, execute: () => "a".repeat(500) + "END" });
    const model = scriptedModel([{ toolCalls: [{ name: "big", input: {} }] }, { text: "ok" }]);
    await collect(query("x", { model, tools: [big], cwd }));
    const content = (model.requests[1].messages.at(-1) as { content: string }).content;
    expect(content.length).toBeLessThanOrEqual(100);
    expect(content).toMatch(/characters omitted/);
    expect(content.endsWith("END")).toBe(true);
  });

  it("a tool returning { content, isError } is passed through", async () => {
    const soft = defineTool({ name: "soft", description: "soft", inputSchema: { type: "object" }, risk: "read", execute: () => ({ content: "nope", isError: true }) });
    const model = scriptedModel([{ toolCalls: [{ name: "soft", input: {} }] }, { text: "ok" }]);
    const { events } = await collect(query("x", { model, tools: [soft], cwd }));
    expect(events.find((e) => e.type === "tool_result")).toMatchObject({ result: { content: "nope", isError: true } });
  });
});
