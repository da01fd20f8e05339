import { describe, expect, it } from "vitest";
import { aborted, timedOut, toolCallsExhausted, turnsExhausted } from "../../src/guards/index.js";
import {
  batchAwaitsPermission,
  batchHasErrors,
  fatalToolError,
  modelRequestedTools,
  permissionDenied,
} from "../../src/guards/batch.js";
import { AgentError } from "../../src/errors/agent-error.js";
import type { CallRecord } from "../../src/machine/context.js";

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
  });
});
