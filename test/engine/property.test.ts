/**
 * Property test: random scripts for `scriptedModel` (text, tool calls of known and unknown tools, invalid JSON,
 * invalid input, truncated responses, failed requests, small delays), random limits, a tool that sometimes throws,
 * a write tool whose permission is answered from the generated data, and sometimes a tight timeout or an abort —
 * run through the real `query()` in a temp dir. Whatever happens, every run keeps the engine's promises.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AgentError, defineTool, query, scriptedModel, type AgentEvent, type PermissionAnswer, type RunResult, type ScriptedStep, type ScriptedToolCall, type ToolOutput } from "../../src/index.js";
import { sleep } from "../../src/util/abortable.js";
import { conversationProblems } from "../support/conversation.js";
import { removeDir, tempDir } from "../support/engine.js";

// ---------------------------------------------------------------------------------------------------------------
// Generated data

type Outcome = "ok" | "soft_error" | "throw" | "fatal";
interface Case {
  steps: ScriptedStep[];
  maxTurns: number;
  maxToolCalls: number;
  /** A tight run time limit (the steps' and tools' delays may or may not outlast it). */
  timeoutMs?: number;
  /** Answers `onAsk` gives in turn (cycling); no `onAsk` at all when absent. */
  answers?: PermissionAnswer[];
  /** Abort the run once this many events were received (0: before the run starts). */
  abort?: { via: "signal" | "run"; afterEvents: number };
}

const delayMs = fc.integer({ min: 0, max: 5 });
const usage = fc.option(fc.record({ input: fc.nat({ max: 50 }), output: fc.nat({ max: 50 }) }), { nil: undefined });
const text = fc.constantFrom("", "Done.", "Let me look at that.", "two words");

/** `arbitrary` in `present` cases out of `present + absent`, otherwise absent. */
const sometimes = <T>(arbitrary: fc.Arbitrary<T>, present: number, absent: number): fc.Arbitrary<T | undefined> =>
  fc.oneof({ weight: absent, arbitrary: fc.constant(undefined) }, { weight: present, arbitrary });

/** Drops the keys whose value is undefined (a script step has no undefined keys). */
const defined = <T extends object>(value: T): T => Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;

const toolCall: fc.Arbitrary<ScriptedToolCall> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ name: fc.constant("echo"), input: fc.record({ text: fc.string({ maxLength: 8 }), ms: delayMs }) }) },
  { weight: 3, arbitrary: fc.record({ name: fc.constant("flaky"), input: fc.record({ outcome: fc.constantFrom<Outcome>("ok", "soft_error", "throw", "fatal") }) }) },
  { weight: 3, arbitrary: fc.record({ name: fc.constant("write_note"), input: fc.record({ note: fc.string({ maxLength: 8 }) }) }) },
  // unknown tools
  { weight: 1, arbitrary: fc.record({ name: fc.constantFrom("nope", "read_file"), input: fc.constant({}) }) },
  // invalid input for a known tool
  { weight: 1, arbitrary: fc.record({ name: fc.constantFrom("echo", "write_note"), input: fc.constantFrom({}, { text: 5 }, { note: ["x"] }, "not an object") }) },
  // arguments that are not JSON
  { weight: 1, arbitrary: fc.record({ name: fc.constantFrom("echo", "flaky"), rawArguments: fc.constantFrom("{not json", '{"text": "unfini', "") }) },
);
const step: fc.Arbitrary<ScriptedStep> = fc.oneof(
  { weight: 1, arbitrary: fc.record({ text: text.filter((t) => t !== ""), delayMs, usage }).map(defined) },
  {
    weight: 6,
    arbitrary: fc
      .record({
        text: sometimes(text, 1, 1),
        toolCalls: fc.array(toolCall, { minLength: 1, maxLength: 3 }),
        finishReason: sometimes(fc.constant("length"), 1, 6),
        delayMs,
        usage,
      })
      .map(defined),
  },
  {
    weight: 1,
    arbitrary: fc
      .record({
        text: sometimes(text, 1, 2),
        delayMs,
        error: fc.oneof(
          fc.record({ status: fc.constantFrom(400, 429, 500), message: fc.constantFrom("bad request", "upstream exploded") }),
          // a context overflow: one compaction and one retry per run
          fc.constant({ status: 400, code: "context_length_exceeded", message: "maximum context length exceeded" }),
        ),
      })
      .map(defined),
  },
);

const caseArb: fc.Arbitrary<Case> = fc
  .record({
    steps: fc.array(step, { minLength: 0, maxLength: 5 }),
    // Most scripts end with an answer; the others run out of steps (a model error) unless a limit comes first.
    closing: sometimes(fc.record({ text: text.filter((t) => t !== ""), delayMs }), 7, 3),
    maxTurns: fc.integer({ min: 1, max: 5 }),
    maxToolCalls: fc.integer({ min: 0, max: 6 }),
    timeoutMs: sometimes(fc.integer({ min: 1, max: 25 }), 1, 5),
    answers: sometimes(fc.array(fc.constantFrom<PermissionAnswer>("allow", "deny", "allow_always"), { minLength: 1, maxLength: 4 }), 4, 1),
    abort: sometimes(fc.record({ via: fc.constantFrom<"signal" | "run">("signal", "run"), afterEvents: fc.nat({ max: 14 }) }), 1, 4),
  })
  .map(({ steps, closing, ...rest }) => ({ ...rest, steps: closing ? [...steps, closing] : steps }));

// ---------------------------------------------------------------------------------------------------------------
// One run

interface Observed {
  events: AgentEvent[];
  result: RunResult;
  modelCalls: number;
  executions: number;
  /** Tool calls the model made, by name, in order, per model call that produced a response. */
  scriptedCalls: string[][];
  traceFile: string;
}

function toolsFor(count: { executions: number }) {
  const counted = <T>(execute: (input: T, signal: AbortSignal) => Promise<ToolOutput> | ToolOutput) => (input: T, context: { signal: AbortSignal }) => {
    count.executions++;
    return execute(input, context.signal);
  };
  return [
    defineTool({
      name: "echo",
      description: "Echoes its text after a short wait.",
      inputSchema: { type: "object", properties: { text: { type: "string" }, ms: { type: "integer" } }, required: ["text"], additionalProperties: false },
      risk: "read",
      execute: counted<{ text: string; ms?: number }>(async (input, signal) => {
        await sleep(input.ms ?? 0, signal);
        return `echo: ${input.text}`;
      }),
    }),
    defineTool({
      name: "flaky",
      description: "Succeeds, reports an error, throws, or fails fatally, as told.",
      inputSchema: { type: "object", properties: { outcome: { enum: ["ok", "soft_error", "throw", "fatal"] } }, required: ["outcome"] },
      risk: "read",
      execute: counted<{ outcome: Outcome }>((input) => {
        if (input.outcome === "throw") throw new Error("ENOENT: no such file");
        if (input.outcome === "fatal") throw new AgentError("TOOL_FATAL", "disk on fire");
        return input.outcome === "soft_error" ? { content: "soft failure", isError: true } : "fine";
      }),
    }),
    defineTool({
      name: "write_note",
      description: "Writes a note.",
      inputSchema: { type: "object", properties: { note: { type: "string" } }, required: ["note"], additionalProperties: false },
      risk: "write",
      execute: counted<{ note: string }>((input) => `wrote ${input.note}`),
    }),
  ];
}

async function runCase(c: Case, cwd: string): Promise<Observed> {
  const count = { executions: 0 };
  const model = scriptedModel(c.steps);
  const controller = new AbortController();
  if (c.abort?.via === "signal" && c.abort.afterEvents === 0) controller.abort();
  let asked = 0;
  const run = query("work on it", {
    model,
    tools: toolsFor(count),
    cwd,
    maxTurns: c.maxTurns,
    maxToolCalls: c.maxToolCalls,
    ...(c.timeoutMs !== undefined ? { timeoutMs: c.timeoutMs } : {}),
    ...(c.abort?.via === "signal" ? { signal: controller.signal } : {}),
    permissions: c.answers ? { onAsk: () => c.answers![asked++ % c.answers!.length] } : {},
  });
  if (c.abort?.via === "run" && c.abort.afterEvents === 0) run.abort();
  const events: AgentEvent[] = [];
  let result: RunResult;
  for (;;) {
    const next = await run.next();
    if (next.done) {
      result = next.value;
      break;
    }
    events.push(next.value);
    if (c.abort && events.length === c.abort.afterEvents) {
      if (c.abort.via === "signal") controller.abort();
      else run.abort();
    }
  }
  const after = await run.next();
  expect(after, "nothing is yielded after the generator returned").toEqual({ done: true, value: undefined });
  const scriptedCalls = c.steps.slice(0, model.calls).map((s) => (s.error ? [] : (s.toolCalls ?? []).map((call) => call.name)));
  return { events, result, modelCalls: model.calls, executions: count.executions, scriptedCalls, traceFile: join(cwd, ".agent", "trace.jsonl") };
}

/** Fails with a clear message if the run does not end within `ms` (a hang is the failure, not a slow machine). */
function terminates<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the run did not terminate within ${ms} ms`)), ms);
  });
  return Promise.race([work, hang]).finally(() => clearTimeout(timer));
}

// ---------------------------------------------------------------------------------------------------------------
// The properties

type TurnEnd = Extract<AgentEvent, { type: "turn_end" }>;
type ToolResultEvent = Extract<AgentEvent, { type: "tool_result" }>;

function checkRun(c: Case, o: Observed): void {
  const { events, result } = o;

  // Exactly one turn_end, and it is the last event; the result agrees with it.
  const ends = events.filter((e): e is TurnEnd => e.type === "turn_end");
  expect(ends, "exactly one turn_end").toHaveLength(1);
  expect(events.at(-1), "turn_end is the last event").toBe(ends[0]);
  const end = ends[0];
  expect(result.reason).toBe(end.reason);
  expect(result.sessionId).toBe(end.sessionId);
  if (end.reason === "final_answer") expect(end.error).toBeUndefined();
  else expect(end.error, `a ${end.reason} run says why`).toMatchObject({ code: expect.any(String), message: expect.any(String) });

  // Limits: model calls ≤ maxTurns, tool executions ≤ maxToolCalls (both as reported and as really run). A request
  // that overflowed the context window is compacted and retried once, as the same turn; a second overflow ends the run.
  const played = c.steps.slice(0, o.modelCalls);
  const overflows = played.flatMap((s, i) => (s.error?.code === "context_length_exceeded" ? [i] : []));
  const retried = overflows.length > 0 && overflows[0] < o.modelCalls - 1 ? 1 : 0;
  expect(o.modelCalls, "model calls").toBeLessThanOrEqual(c.maxTurns + retried);
  expect(end.turns).toBeLessThanOrEqual(c.maxTurns);
  expect(overflows.length, "never a cascade of compactions").toBeLessThanOrEqual(2);
  if (overflows.length === 2) {
    expect(overflows[1], "the second overflow ends the run").toBe(o.modelCalls - 1);
    if (end.reason !== "user_abort" && end.reason !== "timeout") expect(end).toMatchObject({ reason: "model_error", error: { code: "CONTEXT_OVERFLOW" } });
  }
  const starts = events.filter((e) => e.type === "tool_start");
  expect(starts.length, "tool_start events").toBeLessThanOrEqual(c.maxToolCalls);
  expect(o.executions, "tool executions").toBeLessThanOrEqual(c.maxToolCalls);
  expect(end.toolCalls).toBeLessThanOrEqual(c.maxToolCalls);

  // The tool calls the model made are the ones in the conversation (a response cut off by an abort or a timeout
  // may or may not have been delivered).
  const assistantCalls = result.messages.flatMap((m) => (m.role === "assistant" ? (m.toolCalls ?? []) : []));
  const made = assistantCalls.map((call) => call.name);
  const complete = o.scriptedCalls.slice(0, -1).flat();
  const withLast = o.scriptedCalls.flat();
  const lastMayBeCut = end.reason === "user_abort" || end.reason === "timeout";
  if (lastMayBeCut) expect([complete, withLast], "tool calls in the conversation").toContainEqual(made);
  else expect(made, "tool calls in the conversation").toEqual(withLast);

  // Every tool call gets exactly one tool_result event; a call with a tool_start gets it after its start.
  const results = events.filter((e): e is ToolResultEvent => e.type === "tool_result");
  expect(results.map((r) => r.call.id).sort(), "one tool_result per tool call").toEqual(assistantCalls.map((call) => call.id).sort());
  for (const start of starts) {
    const startAt = events.indexOf(start);
    const resultAt = events.findIndex((e) => e.type === "tool_result" && e.call.id === (start as { call: { id: string } }).call.id);
    expect(resultAt, "a started call's result comes after its start").toBeGreaterThan(startAt);
  }
  for (const r of results) {
    const message = result.messages.find((m) => m.role === "tool" && m.toolCallId === r.call.id);
    expect(message, "the tool_result is the tool message").toMatchObject({ content: r.result.content, isError: r.result.isError });
  }

  // The conversation stays valid: each call answered by exactly one tool message, right after it, in call order.
  expect(conversationProblems(result.messages)).toEqual([]);

  // The trace: valid JSONL, lines numbered 0..n-1, ending with done and the run's reason.
  const raw = readFileSync(o.traceFile, "utf8");
  expect(raw.endsWith("\n"), "the trace ends with a whole line").toBe(true);
  const lines = raw
    .slice(0, -1)
    .split("\n")
    .map((line, i) => {
      try {
        return JSON.parse(line) as { kind: string; seq: number; state?: string; details: { reason?: string } };
      } catch {
        throw new Error(`trace line ${i} is not JSON: ${line}`);
      }
    });
  expect(lines.map((l) => l.seq)).toEqual(lines.map((_, i) => i));
  const states = lines.filter((l) => l.kind === "state");
  expect(states.at(-1)).toBe(lines.at(-1));
  expect(states.at(-1)).toMatchObject({ state: "done", details: { reason: end.reason } });
  expect(states.filter((l) => l.state === "done"), "one done line").toHaveLength(1);
  // Every state the run reported is a trace line, in order (the trace adds the final done).
  const reported = events.flatMap((e) => (e.type === "state" ? [e.state] : []));
  expect(states.map((l) => l.state)).toEqual([...reported, "done"]);
}

const RUNS = Number(process.env.STATECRAFT_PROPERTY_RUNS ?? 100);

describe("property: random scripts through query()", () => {
  it("every run terminates with one final turn_end, stays within its limits, answers every tool call and leaves a valid trace", async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        const cwd = tempDir("statecraft-prop-");
        try {
          const observed = await terminates(runCase(c, cwd), 10_000);
          checkRun(c, observed);
        } finally {
          removeDir(cwd);
        }
      }),
      // More runs for a deeper search: STATECRAFT_PROPERTY_RUNS=2000 npx vitest run test/engine/property.test.ts
      { numRuns: RUNS },
    );
  }, Math.max(60_000, RUNS * 600));
});
