import { afterEach, describe, expect, it } from "vitest";
import { ContextText, NOT_DATA } from "../../src/inspect/context-text.js";
import { toJsonText } from "../../src/inspect/serialize.js";
import { scriptedModel, type QueryOptions, type ScriptStep } from "../../src/index.js";
import { observeEngine } from "../../src/observers/observe.js";
import { prepare, type RunPlacement } from "../../src/query.js";
import { removeDir, tempDir } from "../support/engine.js";
import { echo, note, runInspected } from "./support/engine-run.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) removeDir(dir);
});


/** Runs the engine, and at every state compares the kept-text writer with serialising the whole context afresh. */
async function compareThroughRun(steps: ScriptStep[], options: Partial<QueryOptions> = {}, placement: RunPlacement = {}): Promise<number> {
  const cwd = tempDir();
  dirs.push(cwd);
  const writer = new ContextText();
  let compared = 0;
  const mismatches: string[] = [];
  const prepared = prepare("go", { model: scriptedModel(steps), tools: [echo, note], cwd, traceFile: false, ...options }, placement);
  const observer = {
    state(entered: { state: string; context: unknown }) {
      const context = entered.context as Record<string, unknown>;
      const data: Record<string, unknown> = {};
      for (const key in context) if (!NOT_DATA.has(key)) data[key] = context[key];
      const fresh = toJsonText(data);
      const kept = writer.of(context);
      compared++;
      if (kept !== fresh) mismatches.push(`${entered.state}:\n  kept  ${kept}\n  fresh ${fresh}`);
    },
  };
  await runInspected(prepared.input, observeEngine([observer]));
  expect(mismatches).toEqual([]);
  return compared;
}

describe("ContextText", () => {
  it("writes every state's context exactly as serialising it whole would: tools, errors, recovery, permissions", async () => {
    const compared = await compareThroughRun(
      [
        { toolCalls: [{ name: "echo", input: { text: "a" } }], usage: { input: 10, output: 2 } },
        { toolCalls: [{ name: "nope", input: {} }, { name: "echo", input: { wrong: 1 } }] },
        { toolCalls: [{ name: "echo", input: { text: "boom" } }] },
        { toolCalls: [{ name: "echo", rawArguments: "{not json" }] },
        { toolCalls: [{ name: "write_note", input: { note: "x" } }, { name: "echo", input: { text: "b" } }] },
        { error: { status: 500, message: "upstream" } },
        { toolCalls: [{ name: "echo", input: { text: "cut" } }], finishReason: "length" },
        { text: "All done.", usage: { input: 30, output: 5 } },
      ],
      { permissions: { onAsk: () => "allow_always" }, onModelError: (_e, attempt) => (attempt === 1 ? { action: "retry" } : { action: "abort" }) },
    );
    expect(compared).toBeGreaterThan(30);
  });

  it("and through queued messages, compaction, a deny and the tool-call limit", async () => {
    await compareThroughRun(
      [
        { toolCalls: [{ name: "echo", input: { text: "x".repeat(400) } }] },
        { toolCalls: [{ name: "echo", input: { text: "y".repeat(400) } }] },
        { text: "first answer" },
        { toolCalls: [{ name: "write_note", input: { note: "no" } }] },
      ],
      { contextWindow: 300, reserveTokens: 50, keepRecentTokens: 60, summarize: async () => "earlier: two echoes", permissions: { onAsk: () => "deny" } },
      { inbox: { steering: [{ role: "user", content: "also this" }], followUp: [{ role: "user", content: "then that" }] } },
    );
    await compareThroughRun(
      [{ toolCalls: [{ name: "echo", input: { text: "1" } }, { name: "echo", input: { text: "2" } }, { name: "echo", input: { text: "3" } }] }, { text: "never" }],
      { maxToolCalls: 2 },
    );
  });

  it("keeps a group's text only while the group is the same object", () => {
    const writer = new ContextText();
    const run = { sessionId: "s", maxTurns: 3 };
    const first = writer.of({ run, turn: 0, batch: [{ status: "pending" }], deps: { secret: "x" }, messages: ["m"] });
    expect(first).toBe('{"run":{"sessionId":"s","maxTurns":3},"turn":0,"batch":[{"status":"pending"}]}');
    // A replaced group is written afresh; the batch (changed in place by the engine) is written every time.
    const batch = [{ status: "pending" }];
    writer.of({ run, turn: 0, batch });
    batch[0].status = "finished";
    expect(writer.of({ run: { ...run, maxTurns: 4 }, turn: 1, batch })).toBe('{"run":{"sessionId":"s","maxTurns":4},"turn":1,"batch":[{"status":"finished"}]}');
  });
});
