import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defineTool, query, type Model } from "../../src/index.js";
import { removeDir, tempDir } from "../support/engine.js";

let cwd: string;
beforeEach(() => {
  cwd = tempDir();
});
afterEach(() => removeDir(cwd));

const noop = defineTool({ name: "noop", description: "Does nothing.", inputSchema: { type: "object" }, risk: "read", execute: () => "ok" });

/** Answers at once: `steps` responses of one tool call (each with new arguments), then a text answer; counts its calls. */
function instantModel(steps: number, progress: { calls: number; deltas: number }, deltasPerCall = 0): Model {
  return {
    name: "instant",
    async *stream() {
      const i = progress.calls++;
      for (let d = 0; d < deltasPerCall; d++) {
        progress.deltas++;
        yield { type: "text_delta", text: "x" };
      }
      yield {
        type: "response",
        response: i < steps ? { text: "", toolCalls: [{ name: "noop", arguments: `{"i":${i}}` }], finishReason: "tool_calls" } : { text: "done", toolCalls: [], finishReason: "stop" },
      };
    },
  };
}

/** A caller slower than the engine: it gives the event loop a turn for every event it takes. */
const slowly = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("the query bridge with a caller slower than the engine", () => {
  it("keeps the engine at most a bounded number of steps ahead of what the caller has taken", async () => {
    const steps = 1500;
    const progress = { calls: 0, deltas: 0 };
    const run = query("go", { model: instantModel(steps, progress), tools: [noop], cwd, traceFile: false, maxTurns: steps + 1, maxToolCalls: steps });
    let ahead = 0;
    let end: { reason: string; toolCalls: number } | undefined;
    for await (const event of run) {
      // The engine has started progress.calls model calls; the caller has seen the turn this event belongs to.
      if (event.type === "state") ahead = Math.max(ahead, progress.calls - event.turn);
      if (event.type === "turn_end") end = event;
      await slowly();
    }
    expect(end).toMatchObject({ reason: "final_answer", toolCalls: steps });
    // 1 024 undelivered events are about 115 steps of nine events each; unbounded, the engine ran the whole run ahead.
    expect(ahead).toBeGreaterThan(50);
    expect(ahead).toBeLessThanOrEqual(130);
  });

  it("holds a streaming model call's deltas to the same bound", async () => {
    const progress = { calls: 0, deltas: 0 };
    const run = query("go", { model: instantModel(0, progress, 5000), tools: [noop], cwd, traceFile: false });
    let taken = 0;
    let ahead = 0;
    let text = "";
    for await (const event of run) {
      if (event.type === "text_delta") {
        taken++;
        text += event.text;
        ahead = Math.max(ahead, progress.deltas - taken);
      }
      await slowly();
    }
    expect(text).toBe("x".repeat(5000));
    expect(ahead).toBeGreaterThan(500);
    expect(ahead).toBeLessThanOrEqual(1030);
  });
});
