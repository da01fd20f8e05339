import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Writable } from "node:stream";
import { pino } from "pino";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { defineTool, query, scriptedModel, TRACE_VERSION } from "../../src/index.js";
import { lineSigner, sessionKey } from "../../src/record/session-key.js";
import { collect, readJsonl, removeDir, tempDir, echoTool } from "../support/engine.js";

let cwd: string;
beforeEach(() => {
  cwd = tempDir();
});
afterEach(() => removeDir(cwd));

const echo = echoTool;

type Line = { v: number; kind: string; sessionId: string; seq: number; time: string; state: string; turn: number; details: Record<string, unknown> };

describe("trace", () => {
  it("one line per state entered, seq from 0, details carrying what led into each state", async () => {
    const model = scriptedModel([
      { text: "Let me echo.", toolCalls: [{ name: "echo", input: { text: "x" } }], usage: { input: 5, output: 2 } },
      { text: "Echoed.", usage: { input: 9, output: 1 } },
    ]);
    const run = query("please echo", { model, tools: [echo], cwd, systemPrompt: "be brief", maxTurns: 4 });
    const { events, result } = await collect(run);
    const lines = readJsonl<Line>(join(cwd, ".agent", "trace.jsonl"));
    const stateEvents = events.filter((e) => e.type === "state").map((e) => (e as { state: string }).state);
    expect(lines.map((l) => l.state)).toEqual([...stateEvents, "done"]);
    expect(lines.map((l) => l.seq)).toEqual(lines.map((_, i) => i));
    for (const line of lines) {
      expect(line).toMatchObject({ v: TRACE_VERSION, kind: "state", sessionId: run.sessionId });
      expect(Number.isNaN(Date.parse(line.time))).toBe(false);
    }
    const [build] = lines;
    expect(build.details.input).toBe("please echo");
    expect(build.details.options).toMatchObject({
      model: "script",
      maxTurns: 4,
      maxToolCalls: 12,
      timeoutMs: 120000,
      systemPrompt: "be brief",
      permissions: { mode: "default", allow: [], ask: [], deny: [], onAsk: false },
      tools: [{ name: "echo", risk: "read", executionMode: "parallel", inputSchema: echo.inputSchema, description: "Echoes its text." }],
    });
    const parse = lines.find((l) => l.state === "parse_tool_call")!;
    const callId = (result.messages[1] as { toolCalls: { id: string }[] }).toolCalls[0].id;
    expect(parse.details.response).toEqual({
      text: "Let me echo.",
      toolCalls: [{ id: callId, name: "echo", arguments: '{"text":"x"}' }],
      finishReason: "tool_calls",
      usage: { input: 5, output: 2 },
    });
    const exec = lines.find((l) => l.state === "execute_tool")!;
    expect(exec.details.permissions).toEqual([{ toolCallId: callId, decision: "allow", by: "mode", input: { text: "x" }, name: "echo" }]);
    const append = lines.find((l) => l.state === "append_tool_result")!;
    expect(append.details.results).toEqual([{ toolCallId: callId, name: "echo", content: "echo: x", isError: false, durationMs: expect.any(Number) }]);
    const done = lines.at(-1)!;
    expect(done.details).toMatchObject({
      reason: "final_answer",
      turns: 2,
      toolCalls: 1,
      usage: { input: 14, output: 3, cached: 0, reasoning: 0 },
      text: "Echoed.",
      response: { text: "Echoed.", toolCalls: [], finishReason: "stop", usage: { input: 9, output: 1 } },
    });
    expect(done.details.durationMs).toEqual(expect.any(Number));
    expect(done.turn).toBe(2);
  });

  it("the done line of a failed run carries the error; recover carries the model's error", async () => {
    const model = scriptedModel([{ error: { status: 401, message: "bad key" } }]);
    await collect(query("x", { model, cwd }));
    const lines = readJsonl<Line>(join(cwd, ".agent", "trace.jsonl"));
    expect(lines.map((l) => l.state)).toEqual(["build_context", "call_model", "recover", "done"]);
    expect(lines[2].details.error).toMatchObject({ code: "MODEL_ERROR", status: 401 });
    expect(lines[3].details).toMatchObject({ reason: "model_error", error: { code: "MODEL_ERROR", status: 401 } });
  });

  it("traceFile: false writes no trace; a relative traceFile is under cwd", async () => {
    await collect(query("x", { model: scriptedModel([{ text: "a" }]), cwd, traceFile: false }));
    expect(readJsonl(join(cwd, ".agent", "trace.jsonl"))).toEqual([]);
    await collect(query("x", { model: scriptedModel([{ text: "a" }]), cwd, traceFile: "logs/t.jsonl" }));
    expect(readJsonl<Line>(join(cwd, "logs", "t.jsonl")).at(-1)?.state).toBe("done");
  });

  it("many runs append to one file, each session numbered from 0", async () => {
    const a = query("a", { model: scriptedModel([{ text: "a" }]), cwd });
    const b = query("b", { model: scriptedModel([{ text: "b" }]), cwd });
    await Promise.all([collect(a), collect(b)]);
    const lines = readJsonl<Line>(join(cwd, ".agent", "trace.jsonl"));
    for (const id of [a.sessionId, b.sessionId]) {
      const own = lines.filter((l) => l.sessionId === id);
      expect(own.map((l) => l.seq)).toEqual(own.map((_, i) => i));
      expect(own.at(-1)?.state).toBe("done");
    }
  });

  it("a long run's lines reach the file while it runs, not only at its end", async () => {
    const file = join(cwd, ".agent", "trace.jsonl");
    const sizes: number[] = [];
    const probe = defineTool({
      name: "probe",
      description: "Looks at the trace file.",
      inputSchema: { type: "object", properties: { i: { type: "integer" } }, required: ["i"] },
      risk: "read",
      execute: (input: { i: number }) => {
        sizes.push(existsSync(file) ? statSync(file).size : 0);
        return `step ${input.i}`;
      },
    });
    const steps = Array.from({ length: 80 }, (_, i) => ({ toolCalls: [{ name: "probe", input: { i } }] }));
    // The trace writer's own buffering, without checkpoints (which flush the trace before each one they write).
    const { result } = await collect(query("x", { model: scriptedModel([...steps, { text: "done" }]), tools: [probe], cwd, maxTurns: 100, maxToolCalls: 100, durable: false }));
    expect(result.reason).toBe("final_answer");
    expect(sizes[0]).toBe(0);
    expect(sizes.at(-1)).toBeGreaterThan(0);
  });

  it("a parallel group of many read-only calls raises no listener-leak warning", async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on("warning", onWarning);
    try {
      const wait = defineTool({
        name: "wait",
        description: "Waits for its signal or a moment.",
        inputSchema: { type: "object", properties: { i: { type: "integer" } } },
        risk: "read",
        execute: (_input, { signal }) =>
          new Promise<string>((resolve) => {
            signal.addEventListener("abort", () => resolve("aborted"));
            setTimeout(() => resolve("ok"), 5);
          }),
      });
      const calls = Array.from({ length: 16 }, (_, i) => ({ name: "wait", input: { i } }));
      const { result } = await collect(query("x", { model: scriptedModel([{ toolCalls: calls }, { text: "k" }]), tools: [wait], cwd, maxToolCalls: 16 }));
      expect(result.reason).toBe("final_answer");
      await new Promise((r) => setImmediate(r));
      expect(warnings).not.toContain("MaxListenersExceededWarning");
    } finally {
      process.off("warning", onWarning);
    }
  });

  it("a trace write failure is reported, never thrown into the run", async () => {
    const blocked = join(cwd, "blocked");
    writeFileSync(blocked, "a file, not a folder");
    let written = "";
    const logger = pino({}, new Writable({ write: (chunk, _enc, done) => ((written += String(chunk)), done()) }));
    const { result } = await collect(query("x", { model: scriptedModel([{ text: "fine" }]), cwd, traceFile: join(blocked, "trace.jsonl"), logger }));
    expect(result.reason).toBe("final_answer");
    expect(written).toContain("could not write");
    expect(written).toContain(join(blocked, "trace.jsonl"));
  });

  it("secrets from the environment never reach the trace or the audit", async () => {
    process.env.STATECRAFT_TEST_API_KEY = "sk-very-secret-value-123";
    try {
      const leaky = defineTool({
        name: "leaky",
        description: "Prints the environment.",
        inputSchema: { type: "object" },
        risk: "read",
        execute: () => `key=${process.env.STATECRAFT_TEST_API_KEY} auth: Bearer abcdefghijklmnop`,
      });
      const model = scriptedModel([{ toolCalls: [{ name: "leaky", input: { token: "sk-very-secret-value-123" } }] }, { text: "done" }]);
      await collect(query("x", { model, tools: [leaky], cwd }));
      const trace = readFileSync(join(cwd, ".agent", "trace.jsonl"), "utf8");
      const audit = readFileSync(join(cwd, ".agent", "audit.jsonl"), "utf8");
      for (const text of [trace, audit]) {
        expect(text).not.toContain("sk-very-secret-value-123");
        expect(text).toContain("[REDACTED]");
      }
      expect(trace).not.toContain("abcdefghijklmnop");
    } finally {
      delete process.env.STATECRAFT_TEST_API_KEY;
    }
  });
});

describe("transcript and audit", () => {
  it("a session continues from its transcript", async () => {
    const first = await collect(query("my name is Ada", { model: scriptedModel([{ text: "Hi Ada." }]), cwd, sessionId: "s-1" }));
    expect(first.result.sessionId).toBe("s-1");
    const model = scriptedModel([{ text: "You are Ada." }]);
    const second = await collect(query("who am I?", { model, cwd, sessionId: "s-1", systemPrompt: "sys" }));
    expect(model.requests[0].messages).toEqual([
      { role: "system", content: "sys" },
      { role: "user", content: "my name is Ada" },
      { role: "assistant", content: "Hi Ada." },
      { role: "user", content: "who am I?" },
    ]);
    expect(second.result.messages).toHaveLength(4);
    const transcript = readJsonl<{ type: string; message: { role: string } }>(join(cwd, ".agent", "sessions", "s-1.jsonl"));
    expect(transcript.map((e) => e.message.role)).toEqual(["user", "assistant", "user", "assistant"]);
  });

  it("a torn last transcript line (a crash mid-write) is skipped", async () => {
    mkdirSync(join(cwd, ".agent", "sessions"), { recursive: true });
    writeFileSync(
      join(cwd, ".agent", "sessions", "torn.jsonl"),
      lineSigner(sessionKey(), cwd, "torn").sign(JSON.stringify({ type: "message", time: "t", message: { role: "user", content: "before" } }), "") +
        "\n" +
        '{"type":"message","ti',
    );
    const model = scriptedModel([{ text: "ok" }]);
    await collect(query("after", { model, cwd, sessionId: "torn" }));
    expect(model.requests[0].messages.map((m) => m.content)).toEqual(["before", "after"]);
  });

  it("an aborted tool batch leaves a valid conversation that the next run continues", async () => {
    const controller = new AbortController();
    const stuck = defineTool({
      name: "stuck",
      description: "Waits.",
      inputSchema: { type: "object" },
      risk: "read",
      execute: (_i, { signal }) => new Promise<string>((resolve) => signal.addEventListener("abort", () => resolve("x"))),
    });
    const run = query("x", { model: scriptedModel([{ toolCalls: [{ name: "stuck", input: {} }, { name: "stuck", input: {} }] }]), tools: [stuck], cwd, sessionId: "ab", signal: controller.signal });
    for await (const e of run) if (e.type === "tool_start") controller.abort();
    const model = scriptedModel([{ text: "ok" }]);
    await collect(query("again", { model, cwd, sessionId: "ab" }));
    const roles = model.requests[0].messages.map((m) => m.role);
    expect(roles).toEqual(["user", "assistant", "tool", "tool", "user"]);
  });

  it("one audit line per call with permission, ok and duration", async () => {
    const w = defineTool({ name: "w", description: "w", inputSchema: { type: "object" }, risk: "write", execute: () => ({ content: "failed", isError: true }) });
    const model = scriptedModel([{ toolCalls: [{ name: "echo", input: { text: "1" } }, { name: "w", input: {} }, { name: "ghost", input: {} }] }, { text: "k" }]);
    const run = query("x", { model, tools: [echo, w], cwd, permissions: { onAsk: () => "allow" } });
    await collect(run);
    const audit = readJsonl<Record<string, unknown>>(join(cwd, ".agent", "audit.jsonl"));
    expect(audit).toHaveLength(3);
    expect(audit.map((a) => [a.tool, a.ok, (a.permission as { by: string } | null)?.by ?? null])).toEqual([
      ["echo", true, "mode"],
      ["w", false, "human"],
      ["ghost", false, null],
    ]);
    for (const a of audit) {
      expect(a).toMatchObject({ sessionId: run.sessionId, toolCallId: expect.stringMatching(/^call_/), durationMs: expect.any(Number), time: expect.any(String) });
    }
    expect(audit[2].error).toMatchObject({ code: "TOOL_NOT_FOUND" });
  });
});

describe("options are checked", () => {
  it.each([
    [{ maxTurns: 0 }, /maxTurns must be a whole number ≥ 1/],
    [{ maxTurns: 1.5 }, /maxTurns/],
    [{ maxToolCalls: -1 }, /maxToolCalls/],
    [{ timeoutMs: "10" }, /timeoutMs must be a number of milliseconds/],
    [{ sessionId: "../etc" }, /sessionId "..\/etc" is not valid/],
    [{ permissions: { mode: "yolo" } }, /^options\.permissions\.mode must be one of "default", "acceptEdits", "bypassPermissions", "plan", got "yolo"$/],
    [{ permissions: { onAsk: "yes" } }, /^options\.permissions\.onAsk must be a function \(request\) => "allow" \| "deny" \| "allow_always"$/],
    [{ tools: [{ name: "raw" }] }, /every tool must be made with defineTool/],
    [{ tools: [echo, echo] }, /two tools are named "echo"/],
  ])("%j", (bad, message) => {
    expect(() => query("x", { model: scriptedModel([]), cwd, ...(bad as object) })).toThrow(message);
  });

  it("a malformed permission rule throws INVALID_OPTIONS at once, before any model call", () => {
    const model = scriptedModel([{ text: "unreached" }]);
    for (const rule of ["bash(rm *", "bash()", "(x)", 42]) {
      expect(() => query("x", { model, cwd, permissions: { deny: [rule as string] } })).toThrow(/options\.permissions\.deny\[0\] .*(not a valid rule|must be a string|empty pattern)/);
    }
    expect(() => query("x", { model, cwd, permissions: { allow: ["read_file", "write_file(src/**"] } })).toThrow(/options\.permissions\.allow\[1\]/);
    expect(model.requests).toHaveLength(0);
  });

  it("a cwd that is not an existing folder throws INVALID_OPTIONS, and nothing is created there", () => {
    const model = scriptedModel([{ text: "unreached" }]);
    const missing = join(cwd, "no-such-folder");
    expect(() => query("x", { model, cwd: missing })).toThrow(/options\.cwd ".*no-such-folder" is not an existing folder/);
    expect(existsSync(missing)).toBe(false);
    writeFileSync(join(cwd, "a-file"), "");
    expect(() => query("x", { model, cwd: join(cwd, "a-file") })).toThrow(/is not an existing folder/);
    expect(() => query("x", { model, cwd: 42 as never })).toThrow(/options\.cwd must be a folder's path, got 42/);
  });

  it("a missing model is named", () => {
    expect(() => query("x", {} as never)).toThrow(/options.model must be a Model/);
  });

  it("defineTool rejects bad definitions with what to fix", () => {
    expect(() => defineTool({ name: "has space", description: "d", inputSchema: {}, risk: "read", execute: () => "" })).toThrow(/tool name "has space" is not valid/);
    expect(() => defineTool({ name: "t", description: "", inputSchema: {}, risk: "read", execute: () => "" })).toThrow(/description/);
    expect(() => defineTool({ name: "t", description: "d", inputSchema: {}, risk: "danger" as never, execute: () => "" })).toThrow(/risk must be/);
    expect(() => defineTool({ name: "t", description: "d", inputSchema: { type: "object", properties: { a: { type: "nonsense" } } }, risk: "read", execute: () => "" })).toThrow(
      /not a valid JSON Schema/,
    );
  });

  it("defineTool refuses an input schema that is not an object schema, at definition, saying how to wrap it", () => {
    const define = (inputSchema: Record<string, unknown>) => () => defineTool({ name: "t", description: "d", inputSchema, risk: "read", execute: () => "" });
    expect(define({ type: "array", items: { type: "string" } })).toThrow(/tool "t": inputSchema must describe an object \(type: "object"\), got type "array"; wrap other input in a property/);
    expect(define({ type: "string" })).toThrow(/got type "string"/);
    expect(define({})).toThrow(/got a schema without a type/);
    expect(define({ type: ["object", "null"] })).toThrow(/got type \["object","null"\]/);
    expect(define({ type: "object" }).call(null).inputSchema).toEqual({ type: "object" });
  });
});

describe("scriptedModel", () => {
  it("loads a script from a JSON file, as an array or { steps }", async () => {
    const file = join(cwd, "case.json");
    writeFileSync(file, JSON.stringify({ steps: [{ toolCalls: [{ name: "echo", input: { text: "f" } }] }, { text: "from file" }] }));
    const { result } = await collect(query("x", { model: scriptedModel.fromFile(file), tools: [echo], cwd }));
    expect(result.text).toBe("from file");
    writeFileSync(file, JSON.stringify([{ text: "array" }]));
    expect((await collect(query("x", { model: scriptedModel.fromFile(file), cwd }))).result.text).toBe("array");
  });

  it("bad scripts are refused naming the step and the problem", () => {
    const file = join(cwd, "bad.json");
    writeFileSync(file, JSON.stringify([{ text: "ok" }, { txt: "typo" }]));
    expect(() => scriptedModel.fromFile(file)).toThrow(/step 1: unknown key "txt"/);
    writeFileSync(file, "{ nope");
    expect(() => scriptedModel.fromFile(file)).toThrow(/cannot read script/);
    expect(() => scriptedModel([{ toolCalls: [{ name: "x" }] } as never])).toThrow(/needs "input"/);
  });

  it("a step may be a function of the request; usage and thinking are reported", async () => {
    const model = scriptedModel([(request) => ({ text: `you said ${request.messages.at(-1)?.content}`, thinking: "hmm", usage: { input: 3, output: 4 } })]);
    const { events, result } = await collect(query("ping", { model, cwd }));
    expect(result.text).toBe("you said ping");
    expect(events.find((e) => e.type === "thinking_delta")).toEqual({ type: "thinking_delta", text: "hmm" });
    expect(result.usage).toEqual({ input: 3, output: 4, cached: 0, reasoning: 0 });
  });

  it("a delay is abortable", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    const started = Date.now();
    const { result } = await collect(query("x", { model: scriptedModel([{ text: "x", delayMs: 30_000 }]), cwd, signal: controller.signal }));
    expect(result.reason).toBe("user_abort");
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
