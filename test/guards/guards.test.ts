import { describe, expect, it } from "vitest";
import { aborted, awaitsRecoveryDecision, callsAllowed, permissionSuspended, preparesContext, resumesAt, resuming, timedOut, toolCallsExhausted, turnsExhausted } from "../../src/machine/guards/index.js";
import type { AgentHooks } from "../../src/hooks.js";
import {
  batchAwaitsPermission,
  batchHasErrors,
  fatalToolError,
  modelRequestedTools,
  permissionDenied,
} from "../../src/machine/guards/batch.js";
import { AgentError } from "../../src/errors/agent-error.js";
import type { CallRecord, EngineContext } from "../../src/machine/context.js";
import { Conversation } from "../../src/machine/conversation.js";

const record = (over: Partial<CallRecord>): CallRecord => ({
  call: { id: "c1", name: "t", input: {}, sessionId: "s" },
  raw: { name: "t", arguments: "{}" },
  status: "pending",
  ...over,
});

describe("turnsExhausted", () => {
  it("allows model calls up to maxTurns and stops the one after", () => {
    expect(turnsExhausted({ turn: 0, maxTurns: 8 })).toBe(false);
    expect(turnsExhausted({ turn: 7, maxTurns: 8 })).toBe(false);
    expect(turnsExhausted({ turn: 8, maxTurns: 8 })).toBe(true);
    expect(turnsExhausted({ turn: 9, maxTurns: 8 })).toBe(true);
    expect(turnsExhausted({ turn: 1, maxTurns: 1 })).toBe(true);
  });
});

describe("toolCallsExhausted", () => {
  it("is true once maxToolCalls executions happened", () => {
    expect(toolCallsExhausted({ toolCallCount: 0, maxToolCalls: 12 })).toBe(false);
    expect(toolCallsExhausted({ toolCallCount: 11, maxToolCalls: 12 })).toBe(false);
    expect(toolCallsExhausted({ toolCallCount: 12, maxToolCalls: 12 })).toBe(true);
    expect(toolCallsExhausted({ toolCallCount: 0, maxToolCalls: 0 })).toBe(true);
  });
});

describe("timedOut", () => {
  it("compares the deadline with the given time", () => {
    expect(timedOut({ deadline: 1000 }, 999)).toBe(false);
    expect(timedOut({ deadline: 1000 }, 1000)).toBe(true);
    expect(timedOut({ deadline: 1000 }, 5000)).toBe(true);
  });
  it("uses the clock when no time is given", () => {
    expect(timedOut({ deadline: Date.now() + 60_000 })).toBe(false);
    expect(timedOut({ deadline: Date.now() - 1 })).toBe(true);
  });
});

describe("aborted", () => {
  it("follows the caller's signal", () => {
    const controller = new AbortController();
    expect(aborted({ deps: {} })).toBe(false);
    expect(aborted({ deps: { signal: controller.signal } })).toBe(false);
    controller.abort();
    expect(aborted({ deps: { signal: controller.signal } })).toBe(true);
  });
});

describe("batch guards", () => {
  it("modelRequestedTools looks at the response's tool calls, not its finish reason", () => {
    expect(modelRequestedTools({ text: "x", toolCalls: [], finishReason: "tool_calls" })).toBe(false);
    expect(modelRequestedTools({ text: "", toolCalls: [{ name: "a", arguments: "{}" }], finishReason: "stop" })).toBe(true);
  });
  it("batchHasErrors sees errors not yet turned into results", () => {
    const err = new AgentError("TOOL_NOT_FOUND", "x");
    expect(batchHasErrors({ batch: [record({})] })).toBe(false);
    expect(batchHasErrors({ batch: [record({ error: err })] })).toBe(true);
    expect(batchHasErrors({ batch: [record({ error: err, result: { content: "x", isError: true } })] })).toBe(false);
  });
  it("batchAwaitsPermission follows call status", () => {
    expect(batchAwaitsPermission({ batch: [record({ status: "pending" })] })).toBe(true);
    expect(batchAwaitsPermission({ batch: [record({ status: "allowed" })] })).toBe(false);
  });
  it("fatalToolError and permissionDenied", () => {
    expect(fatalToolError({ batch: [record({ fatal: true })] })).toBe(true);
    expect(fatalToolError({ batch: [record({})] })).toBe(false);
    const allow = { toolCallId: "a", kind: "decided", decision: { toolCallId: "a", decision: "allow", by: "mode" } } as const;
    const deny = { toolCallId: "b", kind: "decided", decision: { toolCallId: "b", decision: "deny", by: "human" } } as const;
    const blocked = { toolCallId: "c", kind: "blocked", reason: "no" } as const;
    expect(permissionDenied([allow])).toBe(false);
    expect(permissionDenied([allow, blocked])).toBe(false);
    expect(permissionDenied([allow, deny])).toBe(true);
    expect(permissionDenied([allow, deny], "end")).toBe(true);
    // onDeny: "continue": a deny is the call's result, not the run's end.
    expect(permissionDenied([allow, deny], "continue")).toBe(false);
    expect(permissionDenied([deny], "continue")).toBe(false);
  });
});

describe("preparesContext and awaitsRecoveryDecision: work is asked for only where the state will wait", () => {
  const context = (over: { contextBuilt?: boolean; retrying?: boolean; turn?: number; hooks?: AgentHooks; signal?: AbortSignal; maxTokens?: number; used?: number }) =>
    ({
      run: { maxTurns: 2 },
      turn: over.turn ?? 0,
      deps: { hooks: over.hooks ?? {}, ...(over.signal ? { signal: over.signal } : {}) },
      call: { contextBuilt: over.contextBuilt ?? false, retrying: over.retrying ?? false, overflowCompacted: false },
      loop: { contextWindow: 0, reserveTokens: 0, ...(over.maxTokens !== undefined ? { maxTokens: over.maxTokens } : {}) },
      usage: { input: over.used ?? 0, output: 0 },
      messages: Conversation.of(),
      batch: [],
      outcome: { finalText: "" },
    }) as unknown as EngineContext;
  const hook: AgentHooks = { prepareNextTurn: () => undefined };

  it("the first build is asked for unless the run is already aborted", () => {
    expect(preparesContext(context({}))).toBe(true);
    expect(preparesContext(context({ signal: AbortSignal.abort() }))).toBe(false);
  });
  it("a later build only with work to do and no limit reached", () => {
    expect(preparesContext(context({ contextBuilt: true, turn: 1 }))).toBe(false);
    expect(preparesContext(context({ contextBuilt: true, turn: 1, hooks: hook }))).toBe(true);
    expect(preparesContext(context({ contextBuilt: true, turn: 2, hooks: hook }))).toBe(false);
    expect(preparesContext(context({ contextBuilt: true, turn: 2, hooks: hook, retrying: true }))).toBe(true);
    expect(preparesContext(context({ contextBuilt: true, turn: 1, hooks: hook, maxTokens: 10, used: 10 }))).toBe(false);
  });
  it("recover waits for onModelError only for a failed model request it applies to", () => {
    const failed = (code: "MODEL_ERROR" | "CONTEXT_OVERFLOW" | "HOOK_FAILED", hooks: AgentHooks) => {
      const c = context({ hooks });
      (c.outcome as { failure?: AgentError; failedIn?: string }).failure = new AgentError(code, "failed");
      (c.outcome as { failedIn?: string }).failedIn = "call_model";
      return c;
    };
    const onModelError: AgentHooks = { onModelError: () => undefined };
    expect(awaitsRecoveryDecision(failed("MODEL_ERROR", onModelError))).toBe(true);
    expect(awaitsRecoveryDecision(failed("MODEL_ERROR", {}))).toBe(false);
    expect(awaitsRecoveryDecision(failed("HOOK_FAILED", onModelError))).toBe(false);
    // a first context overflow is compacted and retried before anyone is asked
    expect(awaitsRecoveryDecision(failed("CONTEXT_OVERFLOW", onModelError))).toBe(false);
    expect(awaitsRecoveryDecision(context({ hooks: onModelError }))).toBe(false);
  });
});

describe("durable runs: permissionSuspended, callsAllowed across a resume, resuming", () => {
  const decided = (decision: "allow" | "deny") => ({ toolCallId: "c1", kind: "decided" as const, decision: { toolCallId: "c1", decision, by: "human" as const } });
  const suspended = { toolCallId: "c2", kind: "suspended" as const, reason: "asked", input: {} };
  it("permissionSuspended: some question of the response was suspended", () => {
    expect(permissionSuspended([suspended])).toBe(true);
    expect(permissionSuspended([decided("allow"), suspended])).toBe(true);
    expect(permissionSuspended([decided("allow")])).toBe(false);
    expect(permissionSuspended([{ toolCallId: "c1", kind: "blocked", reason: "no" }])).toBe(false);
    expect(permissionSuspended([])).toBe(false);
  });
  it("callsAllowed counts calls allowed before the run suspended", () => {
    expect(callsAllowed([decided("allow")])).toBe(true);
    expect(callsAllowed([{ toolCallId: "c2", kind: "blocked", reason: "no" }])).toBe(false);
    expect(callsAllowed([{ toolCallId: "c2", kind: "blocked", reason: "no" }], [record({ status: "allowed" })])).toBe(true);
    expect(callsAllowed([{ toolCallId: "c2", kind: "blocked", reason: "no" }], [record({ status: "denied" })])).toBe(false);
  });
  it("resuming holds until the machine is back at its question, and keeps build_context from building", () => {
    expect(resuming({ durable: { runId: "r", resumeAt: "ask_permission" } })).toBe(true);
    expect(resuming({ durable: { runId: "r" } })).toBe(false);
    for (const at of ["ask_permission", "model", "execute_tool", "append_tool_result"] as const) {
      expect(resumesAt({ durable: { runId: "r", resumeAt: at } }, at)).toBe(true);
      expect(resumesAt({ durable: { runId: "r", resumeAt: at } }, at === "model" ? "execute_tool" : "model")).toBe(false);
      expect(resumesAt({ durable: { runId: "r" } }, at)).toBe(false);
    }
    const context = {
      run: { maxTurns: 2 },
      turn: 1,
      deps: { hooks: {} },
      call: { contextBuilt: false, retrying: false, overflowCompacted: false },
      loop: { contextWindow: 0, reserveTokens: 0 },
      usage: { input: 0, output: 0 },
      messages: Conversation.of(),
      batch: [],
      outcome: { finalText: "" },
    };
    expect(preparesContext({ ...context, durable: { runId: "r" } } as unknown as EngineContext)).toBe(true);
    expect(preparesContext({ ...context, durable: { runId: "r", resumeAt: "model" } } as unknown as EngineContext)).toBe(false);
  });
});
