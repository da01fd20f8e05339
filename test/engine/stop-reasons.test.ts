/**
 * Why a run stops, cause by cause: each row drives the real engine through `query()` with a scripted model and real
 * tools, and checks the run's reason (one of the seed's eight) and its error code. The mapping itself lives in one
 * place (src/machine/actions/stop.ts); the model-based test walks every path to each reason.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AgentError, defineTool, query, scriptedModel, type Model, type QueryOptions } from "../../src/index.js";
import { outputOf } from "../../src/machine/actions/stop.js";
import type { EngineContext } from "../../src/machine/context.js";

let cwd: string;
beforeEach(() => {
  cwd = mkdtempSync(join(tmpdir(), "statecraft-stops-"));
});
afterEach(() => rmSync(cwd, { recursive: true, force: true }));

const echo = defineTool({
  name: "echo",
  description: "Echoes its text.",
  inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  risk: "read",
  execute: ({ text }) => `echo: ${text}`,
});
const writeNote = defineTool({
  name: "write_note",
  description: "Writes a note.",
  inputSchema: { type: "object", properties: { note: { type: "string" } }, required: ["note"] },
  risk: "write",
  execute: () => "written",
});
const onFire = defineTool({
  name: "on_fire",
  description: "Fails fatally.",
  inputSchema: { type: "object", properties: {} },
  risk: "read",
  execute: () => {
    throw new AgentError("TOOL_FATAL", "disk on fire");
  },
});
/** Waits until its signal aborts (the run's deadline or abort); `started` runs first. */
const waiter = (started: () => void = () => undefined) =>
  defineTool({
    name: "wait",
    description: "Waits until stopped.",
    inputSchema: { type: "object", properties: {} },
    risk: "read",
    execute: (_input, { signal }) => {
      started();
      return new Promise<string>((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason), { once: true }));
    },
  });
/**
 * A tool whose own code breaks outside `execute`: once the model has asked for it (the run's settings were read
 * before), reading its timeout throws, which the batch does as it starts the call.
 */
function brokenTool() {
  const tool = defineTool({ name: "broken", description: "Breaks.", inputSchema: { type: "object", properties: {} }, risk: "read", execute: () => "never" });
  let broken = false;
  Object.defineProperty(tool, "timeoutMs", {
    get() {
      if (broken) throw new Error("the tool's timeout getter broke");
      return undefined;
    },
  });
  const askFor = () => {
    broken = true;
    return call("broken");
  };
  return { tool, askFor };
}
/** A model that answers with something that is no response (no `toolCalls`): the engine cannot go on with it. */
const malformed: Model = {
  name: "malformed",
  async *stream() {
    yield { type: "response", response: { text: "half an answer" } as never };
  },
};

const call = (name: string, input: unknown = {}) => ({ toolCalls: [{ name, input }] });

interface Row {
  cause: string;
  options: () => QueryOptions;
  reason: string;
  code?: string;
  /** Part of the error's message. */
  says?: RegExp;
}

const ROWS: Row[] = [
  { cause: "final answer", options: () => ({ model: scriptedModel([{ text: "Done." }]) }), reason: "final_answer" },
  {
    cause: "max turns",
    options: () => ({ model: scriptedModel([call("echo", { text: "a" }), { text: "never" }]), tools: [echo], maxTurns: 1 }),
    reason: "max_turns",
    code: "MAX_TURNS",
  },
  {
    cause: "max tokens",
    options: () => ({ model: scriptedModel([{ ...call("echo", { text: "a" }), usage: { input: 8, output: 4 } }, { text: "never" }]), tools: [echo], maxTokens: 10 }),
    reason: "max_turns",
    code: "MAX_TOKENS",
    says: /12 tokens \(maxTokens = 10\)/,
  },
  {
    cause: "max tool calls",
    options: () => ({
      model: scriptedModel([{ toolCalls: [{ name: "echo", input: { text: "1" } }, { name: "echo", input: { text: "2" } }] }, { text: "never" }]),
      tools: [echo],
      maxToolCalls: 1,
    }),
    reason: "max_tool_calls",
    code: "MAX_TOOL_CALLS",
  },
  { cause: "timeout", options: () => ({ model: scriptedModel([call("wait")]), tools: [waiter()], timeoutMs: 100 }), reason: "timeout", code: "TIMEOUT" },
  {
    cause: "abort",
    options: () => {
      const controller = new AbortController();
      return { model: scriptedModel([call("wait")]), tools: [waiter(() => controller.abort())], signal: controller.signal };
    },
    reason: "user_abort",
    code: "USER_ABORT",
  },
  {
    cause: "permission denied",
    options: () => ({ model: scriptedModel([call("write_note", { note: "n" }), { text: "never" }]), tools: [writeNote] }),
    reason: "permission_denied",
    code: "PERMISSION_DENIED",
    says: /permission denied for write_note/,
  },
  {
    cause: "tool fatal error",
    options: () => ({ model: scriptedModel([call("on_fire"), { text: "never" }]), tools: [onFire] }),
    reason: "tool_error",
    code: "TOOL_FATAL",
    says: /tool on_fire failed fatally: disk on fire/,
  },
  {
    cause: "a call repeated past the loop guard",
    options: () => ({ model: scriptedModel([call("echo", { text: "a" }), call("echo", { text: "a" }), call("echo", { text: "a" })]), tools: [echo], maxRepeatedCalls: 1 }),
    reason: "tool_error",
    code: "REPEATED_CALL",
  },
  {
    cause: "tool crash",
    options: () => {
      const broken = brokenTool();
      return { model: scriptedModel([broken.askFor, { text: "never" }]), tools: [broken.tool] };
    },
    reason: "tool_error",
    code: "TOOL_CRASHED",
    says: /the tool's timeout getter broke/,
  },
  {
    cause: "model error after retries",
    options: () => ({
      model: scriptedModel([{ error: { status: 500, message: "upstream down" } }, { error: { status: 500, message: "upstream down" } }]),
      onModelError: (_error, attempt) => (attempt < 2 ? { action: "retry" } : { action: "abort" }),
    }),
    reason: "model_error",
    code: "MODEL_ERROR",
    says: /upstream down/,
  },
  {
    cause: "model error hook failure",
    options: () => ({
      model: scriptedModel([{ error: { status: 500, message: "upstream down" } }]),
      onModelError: () => {
        throw new Error("the hook broke");
      },
    }),
    reason: "model_error",
    code: "HOOK_FAILED",
    says: /the hook broke/,
  },
  {
    cause: "a hook failing while the context is built",
    options: () => ({
      model: scriptedModel([call("echo", { text: "a" }), { text: "never" }]),
      tools: [echo],
      prepareNextTurn: () => {
        throw new Error("the turn hook broke");
      },
    }),
    reason: "model_error",
    code: "HOOK_FAILED",
    says: /hook prepareNextTurn failed: the turn hook broke/,
  },
  { cause: "engine defect", options: () => ({ model: malformed }), reason: "model_error", code: "ENGINE_FAILED" },
];

describe("stop reasons: each cause ends the run with its reason and code", () => {
  for (const row of ROWS) {
    it(`${row.cause} → ${row.reason}${row.code ? ` (${row.code})` : ""}`, async () => {
      const run = query("go", { cwd, ...row.options() });
      let turnEnd: { reason: string; error?: { code: string } } | undefined;
      for await (const event of run) if (event.type === "turn_end") turnEnd = event;
      const result = await run.result;
      expect(result.reason).toBe(row.reason);
      expect(turnEnd?.reason).toBe(row.reason);
      if (row.code === undefined) {
        expect(result.error).toBeUndefined();
      } else {
        expect(result.error?.code).toBe(row.code);
        expect(turnEnd?.error?.code).toBe(row.code);
        if (row.says) expect(result.error?.message).toMatch(row.says);
      }
      // The trace's done line says the same (but for a crashed engine, which never reached done).
      const lines = readFileSync(join(cwd, ".agent", "trace.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
      const done = lines.find((l) => l.state === "done") as { details: { reason: string; error?: { code: string } } } | undefined;
      if (row.code === "ENGINE_FAILED") return;
      expect(done?.details.reason).toBe(row.reason);
      expect(done?.details.error?.code).toBe(row.code);
    }, 20_000);
  }

  it("reaching done with no reason set is an engine defect, never a model's code", () => {
    const context = { outcome: { finalText: "" } } as unknown as EngineContext;
    expect(outputOf(context)).toEqual({ reason: "model_error", error: { code: "ENGINE_FAILED", message: expect.stringContaining("without a stop reason") } });
  });
});
