import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { scriptedModel, type Model, type ModelStreamEvent } from "../../src/index.js";
import type { TraceLine } from "../../src/record/format.js";
import { scriptOf } from "../../src/debug/script.js";
import { loadSession } from "../../src/debug/session.js";
import { removeDir, tempDir } from "../support/engine.js";
import { ALL_TOOLS, record, stateOf } from "./helpers.js";

let cwd: string;
beforeEach(() => {
  cwd = tempDir();
});
afterEach(() => removeDir(cwd));

/** What a run did, without times, durations and ids: states, turns, model outputs, calls, results, the stop. */
function shape(lines: readonly TraceLine[]) {
  return lines.map((line) => {
    const d = ((line as { details?: Record<string, unknown> }).details ?? {}) as Record<string, unknown>;
    const response = d.response as { text?: string; toolCalls?: Array<{ name: string; arguments: unknown }>; finishReason?: string; usage?: unknown } | undefined;
    return {
      state: stateOf(line),
      turn: (line as { turn?: number }).turn,
      ...(response ? { response: { text: response.text, calls: response.toolCalls?.map((c) => [c.name, c.arguments]), finish: response.finishReason, usage: response.usage } } : {}),
      ...(Array.isArray(d.calls) && stateOf(line) === "validate_tool" ? { calls: (d.calls as Array<{ name: string; input: unknown }>).map((c) => [c.name, c.input]) } : {}),
      ...(Array.isArray(d.results) ? { results: (d.results as Array<{ name: string; content: string; isError: boolean }>).map((r) => [r.name, r.content, r.isError]) } : {}),
      ...(stateOf(line) === "done" ? { reason: d.reason, text: d.text, usage: d.usage, error: (d.error as { code?: string } | undefined)?.code } : {}),
    };
  });
}

async function reproduce(name: string, prompt: string, options: Parameters<typeof record>[2]) {
  const original = await record(cwd, prompt, options);
  const session = await loadSession(original.file, original.sessionId);
  const script = scriptOf(session);
  const file = join(cwd, `${name}.json`);
  writeFileSync(file, JSON.stringify(script, null, 2));
  const again = await record(cwd, script.request, { ...options, model: scriptedModel.fromFile(file) });
  const rerun = await loadSession(again.file, again.sessionId);
  return { original: session, rerun, script };
}

describe("trace script", () => {
  it("a session's model outputs become a scripted-model file that reproduces the run", async () => {
    const { original, rerun, script } = await reproduce("case", "fix it", {
      model: scriptedModel([
        {
          thinking: "Look first.",
          text: "Looking.",
          toolCalls: [
            { name: "echo", input: { text: "a" } },
            { name: "echo", rawArguments: "{broken" },
            { name: "count", input: { n: 2 }, id: "provider-7" },
          ],
          usage: { input: 12, output: 7 },
        },
        { text: "Cut", toolCalls: [{ name: "echo", input: { text: "b" } }], finishReason: "length" },
        { text: "Fixed.", usage: { input: 30, output: 3 } },
      ]),
      tools: ALL_TOOLS,
    });
    expect(script.request).toBe("fix it");
    expect(script.steps).toEqual([
      {
        text: "Looking.",
        thinking: "Look first.",
        toolCalls: [
          { name: "echo", input: { text: "a" } },
          { name: "echo", rawArguments: "{broken" },
          { name: "count", input: { n: 2 }, id: "provider-7" },
        ],
        usage: { input: 12, output: 7 },
      },
      { text: "Cut", toolCalls: [{ name: "echo", input: { text: "b" } }], finishReason: "length" },
      { text: "Fixed.", usage: { input: 30, output: 3 } },
    ]);
    expect(script.options).toMatchObject({ maxTurns: 8, maxToolCalls: 12, permissions: { mode: "default" }, tools: ALL_TOOLS.map((t) => t.name) });
    expect(shape(rerun.lines)).toEqual(shape(original.lines));
  });

  it("a failed request becomes an error step with its status, and a run stopped by its time limit stops again", async () => {
    const failed = await reproduce("failed", "x", {
      model: scriptedModel([{ toolCalls: [{ name: "echo", input: { text: "a" } }] }, { text: "Half", error: { status: 503, code: "overloaded", message: "try later" } }]),
      tools: ALL_TOOLS,
    });
    expect(failed.script.steps[1]).toEqual({ text: "Half", error: { status: 503, code: "overloaded", message: "try later" } });
    expect(shape(failed.rerun.lines)).toEqual(shape(failed.original.lines));

    const slow = await reproduce("slow", "y", { model: scriptedModel([{ text: "late", delayMs: 60_000 }]), timeoutMs: 60 });
    expect(slow.script.steps).toEqual([{ delayMs: 60 }]);
    expect(slow.script.notes?.[0]).toContain("cut off by the run's stop (timeout)");
    expect(shape(slow.rerun.lines)).toEqual(shape(slow.original.lines));
  });

  it("provider retries are noted: the script answers at once", async () => {
    const flaky: Model = {
      name: "flaky",
      async *stream(): AsyncGenerator<ModelStreamEvent> {
        yield { type: "retry", attempt: 1, delayMs: 5, error: { code: "RATE_LIMITED", message: "429" } };
        yield { type: "response", response: { text: "", toolCalls: [], finishReason: "stop" } };
      },
    };
    const recorded = await record(cwd, "z", { model: flaky });
    const script = scriptOf(await loadSession(recorded.file, recorded.sessionId));
    expect(script.steps).toEqual([{}]);
    expect(script.notes).toEqual(["model call 1 (seq 1) was retried by the provider; the script answers at once"]);
  });

  it("several runs of a session: all in order, or one", async () => {
    await record(cwd, "first", { model: scriptedModel([{ text: "one" }]), sessionId: "chat" });
    const second = await record(cwd, "second", { model: scriptedModel([{ text: "two" }]), sessionId: "chat" });
    const session = await loadSession(second.file, "chat");
    expect(scriptOf(session)).toMatchObject({ request: "first", requests: ["first", "second"], steps: [{ text: "one" }, { text: "two" }] });
    expect(scriptOf(session, { run: 2 })).toMatchObject({ request: "second", steps: [{ text: "two" }] });
    expect(() => scriptOf(session, { run: 3 })).toThrow(/run must be a whole number from 1 to 2/);
  });
});
