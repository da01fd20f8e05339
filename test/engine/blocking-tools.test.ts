/**
 * A user's tool that blocks the event loop (a synchronous busy loop) holds up everything, the run's deadline timer
 * and Ctrl-C included, until it returns. The engine can't interrupt it; what it guarantees is that the stop comes
 * right after: the deadline wins over the late result, no further call of the batch starts, and the model is not
 * called again.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defineTool, query, scriptedModel } from "../../src/index.js";
import { collect, outline, removeDir, tempDir } from "../support/engine.js";

let cwd: string;
beforeEach(() => {
  cwd = tempDir();
});
afterEach(() => removeDir(cwd));

function busyWait(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    // holding the thread on purpose
  }
}

/** A tool that blocks the thread for `ms`; `mode` picks how it ends, `onStart` runs just before it blocks. */
function blockingTool(name: string, ms: number, mode: "returns" | "throws" | "async-after" = "returns", onStart?: () => void) {
  let runs = 0;
  const tool = defineTool({
    name,
    description: `Blocks for ${ms} ms.`,
    inputSchema: { type: "object" },
    risk: "write",
    execute: () => {
      runs++;
      onStart?.();
      busyWait(ms);
      if (mode === "throws") throw new Error("failed after blocking");
      if (mode === "async-after") return Promise.resolve(`${name} done`);
      return `${name} done`;
    },
  });
  return { tool, runs: () => runs };
}

const bypass = { mode: "bypassPermissions" as const };

describe("a tool that blocks the event loop past the deadline", { timeout: 60_000 }, () => {
  it.each(["returns", "throws", "async-after"] as const)("a 3 s synchronous tool (%s) with timeoutMs 1000 ends `timeout` right after it yields", async (mode) => {
    const { tool: block } = blockingTool("block", 3_000, mode);
    const model = scriptedModel([{ toolCalls: [{ name: "block", input: {} }] }, { text: "must not be asked" }]);
    const started = performance.now();
    const { events, result } = await collect(query("x", { model, tools: [block], cwd, timeoutMs: 1_000, permissions: bypass, traceFile: false }));
    const elapsed = performance.now() - started;
    expect(result.reason).toBe("timeout");
    expect(result.error).toMatchObject({ code: "TIMEOUT" });
    // It can only end once the tool gives the thread back (3 s), and then at once.
    expect(elapsed).toBeGreaterThanOrEqual(2_900);
    expect(elapsed).toBeLessThan(5_000);
    // The late result is not taken as a success: the call is closed as cut off, and the model is not called again.
    expect(outline(events).slice(-3)).toEqual(["tool_start:block", "tool_result:block:error", "turn_end:timeout"]);
    expect(outline(events).filter((e) => e === "state:call_model")).toHaveLength(1);
    expect(result.messages.at(-1)).toMatchObject({ role: "tool", name: "block", isError: true, content: expect.stringContaining("timeout") });
  });

  it("no further call of the batch starts once the deadline has passed (sequential calls)", async () => {
    const { tool: first, runs: firstRuns } = blockingTool("first", 1_500);
    const { tool: second, runs: secondRuns } = blockingTool("second", 1_500);
    const model = scriptedModel([{ toolCalls: [{ name: "first", input: {} }, { name: "second", input: {} }] }, { text: "no" }]);
    const started = performance.now();
    const { result } = await collect(query("x", { model, tools: [first, second], cwd, timeoutMs: 1_000, permissions: bypass, traceFile: false }));
    expect(result.reason).toBe("timeout");
    expect([firstRuns(), secondRuns()]).toEqual([1, 0]);
    expect(performance.now() - started).toBeLessThan(3_500);
    // Both calls have a result, so the conversation stays valid.
    expect(result.messages.filter((m) => m.role === "tool").map((m) => m.isError)).toEqual([true, true]);
  });

  it("a later batch never starts either: the deadline passed during the first", async () => {
    const { tool: block, runs } = blockingTool("block", 1_500);
    const model = scriptedModel([{ toolCalls: [{ name: "block", input: {} }] }, { toolCalls: [{ name: "block", input: {} }] }, { text: "no" }]);
    const { result } = await collect(query("x", { model, tools: [block], cwd, timeoutMs: 1_000, permissions: bypass, traceFile: false }));
    expect(result.reason).toBe("timeout");
    expect(runs()).toBe(1);
  });

  it("an abort that came while a tool blocked is handled before the next call starts", async () => {
    const controller = new AbortController();
    // As a Ctrl-C would: the abort is due while the first call holds the thread.
    const { tool: first, runs: firstRuns } = blockingTool("first", 1_000, "returns", () => setTimeout(() => controller.abort(), 0));
    const { tool: second, runs: secondRuns } = blockingTool("second", 1_000);
    const { tool: third, runs: thirdRuns } = blockingTool("third", 1_000);
    const model = scriptedModel([{ toolCalls: ["first", "second", "third"].map((name) => ({ name, input: {} })) }, { text: "no" }]);
    const started = performance.now();
    const { result } = await collect(query("x", { model, tools: [first, second, third], cwd, signal: controller.signal, permissions: bypass, traceFile: false }));
    expect(result.reason).toBe("user_abort");
    expect([firstRuns(), secondRuns(), thirdRuns()]).toEqual([1, 0, 0]);
    expect(performance.now() - started).toBeLessThan(2_500);
  });

  it("a blocking tool that finishes before the deadline keeps its result and the run goes on", async () => {
    const { tool: block } = blockingTool("block", 300);
    const model = scriptedModel([{ toolCalls: [{ name: "block", input: {} }] }, { text: "all good" }]);
    const { events, result } = await collect(query("x", { model, tools: [block], cwd, timeoutMs: 10_000, permissions: bypass, traceFile: false }));
    expect(result.reason).toBe("final_answer");
    expect(outline(events)).toContain("tool_result:block:ok");
    expect(result.messages.find((m) => m.role === "tool")).toMatchObject({ content: "block done", isError: false });
  });
});
