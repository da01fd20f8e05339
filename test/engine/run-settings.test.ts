import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defineTool, scriptedModel } from "../../src/index.js";
import type { EngineContext } from "../../src/machine/context.js";
import { prepare, startRun } from "../../src/query.js";
import { storedSettingsOf, tracedOptionsOf } from "../../src/run-settings.js";
import { collect, readJsonl, removeDir, tempDir } from "../support/engine.js";

let cwd: string;
beforeEach(() => {
  cwd = tempDir("statecraft-settings-");
});
afterEach(() => removeDir(cwd));

const note = defineTool({
  name: "note",
  description: "Writes a note.",
  inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  risk: "write",
  execute: (input: { text: string }) => `noted ${input.text}`,
});

describe("prepare() returns one RunSettings", () => {
  it("keeps the data settings once, with the defaults, and derives what a durable run stores from them", () => {
    const settings = prepare("hello", {
      model: scriptedModel([{ text: "hi" }]),
      cwd,
      maxTurns: 3,
      systemPrompt: "Be brief.",
      contextWindow: 50_000,
      permissions: { mode: "acceptEdits", allow: ["note"], deny: ["bash(rm *)"], whenUnanswered: "suspend" },
    });
    expect(settings.recorded).toEqual({
      systemPrompt: "Be brief.",
      maxTurns: 3,
      maxToolCalls: 12,
      timeoutMs: 120_000,
      permissions: { mode: "acceptEdits", allow: ["note"], ask: [], deny: ["bash(rm *)"], whenUnanswered: "suspend" },
      maxRepeatedCalls: 3,
      contextWindow: 50_000,
      maxDelegationDepth: 2,
    });
    // The engine's input is built from the same settings.
    expect(settings.input).toMatchObject({ maxTurns: 3, maxToolCalls: 12, timeoutMs: 120_000, systemPrompt: "Be brief." });
    expect(settings.input.loop.contextWindow).toBe(50_000);
    const stored = storedSettingsOf(settings);
    expect(stored).toEqual({ ...settings.recorded, userInput: "hello", model: "script", traceFile: join(cwd, ".agent", "trace.jsonl") });
    // A copy: the stored run never shares a list with the run's settings.
    expect(stored.permissions.allow).not.toBe(settings.recorded.permissions.allow);
  });

  it("derives the trace's options line: what a run's first line records is tracedOptionsOf its settings", async () => {
    const traceFile = join(cwd, "trace.jsonl");
    const options = { model: scriptedModel([{ text: "done" }]), cwd, tools: [note], traceFile, maxTokens: 9_000, beforeToolCall: () => undefined };
    const settings = prepare("go", options);
    await collect(startRun(settings, options));
    const [first] = readJsonl<{ details: { options: unknown } }>(traceFile);
    expect(first.details.options).toEqual(JSON.parse(JSON.stringify(tracedOptionsOf(settings))));
    expect(first.details.options).toEqual({
      model: "script",
      maxTurns: 8,
      maxToolCalls: 12,
      timeoutMs: 120_000,
      cwd,
      maxRepeatedCalls: 3,
      maxTokens: 9_000,
      maxDelegationDepth: 2,
      hooks: ["beforeToolCall"],
      permissions: { mode: "default", allow: [], ask: [], deny: [], onAsk: false },
      tools: [{ name: "note", description: "Writes a note.", inputSchema: note.inputSchema, risk: "write", executionMode: "sequential" }],
    });
  });

  it("builds the permission policy once: the run decides with prepare()'s policy, the session's remembered rules added", async () => {
    const call = { toolCalls: [{ name: "note", input: { text: "a" } }] };
    // A first run of the session answers allow_always: the rule is kept in the session's transcript.
    const first = { model: scriptedModel([call, { text: "ok" }]), cwd, tools: [note], traceFile: false as const, sessionId: "s1", permissions: { onAsk: () => "allow_always" as const } };
    const firstRun = await collect(startRun(prepare("one", first), first));
    expect(firstRun.result.status === "completed" && firstRun.result.reason).toBe("final_answer");

    // The next run is asked nothing: its own policy, made by prepare(), holds the remembered rule.
    let asked = 0;
    const second = { model: scriptedModel([call, { text: "ok" }]), cwd, tools: [note], traceFile: false as const, sessionId: "s1", permissions: { onAsk: () => (asked++, "deny" as const) } };
    const settings = prepare("two", second);
    const policy = settings.input.deps.policy!;
    expect(policy.evaluate(note, { text: "a" }).kind).toBe("ask");
    let settled: EngineContext | undefined;
    const { result } = await collect(startRun(settings, second, { settled: (context) => (settled = context) }));
    expect(result.status === "completed" && result.reason).toBe("final_answer");
    expect(asked).toBe(0);
    expect(settled!.deps.policy).toBe(policy);
    expect(policy.evaluate(note, { text: "a" })).toMatchObject({ kind: "allow", by: "rule", rule: "note" });
    // Remembered, not added by this run: not written to the transcript again.
    expect(policy.sessionRules).toEqual([]);
  });
});
