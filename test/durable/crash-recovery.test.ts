import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { defineTool, loadSession, replay, resume, type AgentEvent, type Model, type ModelResponse } from "../../src/index.js";
import { collect, readJsonl, removeDir, tempDir } from "../support/engine.js";

const dist = pathToFileURL(join(import.meta.dirname, "..", "..", "dist", "index.js")).href;

let cwd: string;
beforeEach(() => {
  cwd = tempDir();
});
afterEach(() => removeDir(cwd));

/**
 * The child: a run (durable by default) whose model asks for `look` (read) and `write_note` (write) in one response. What blocks
 * until the process is killed is the argument: the model's first call, `look`, or `write_note`. Every model call and
 * every tool run is counted in a file; `ready` is written when the blocking part has started.
 */
const CHILD = `
import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { defineTool, query } from ${JSON.stringify(dist)};
const [cwd, blockIn] = process.argv.slice(2);
const count = (what) => appendFileSync(join(cwd, what + ".count"), "x");
// Ready once the event loop has turned: the blocking part is under way, as in a process killed while it waits.
const forever = () => { setImmediate(() => writeFileSync(join(cwd, "ready"), "1")); return new Promise(() => {}); };
const look = defineTool({ name: "look", description: "Looks.", risk: "read", inputSchema: { type: "object" },
  execute: async () => { count("look"); if (blockIn === "read") await forever(); return "seen"; } });
const note = defineTool({ name: "write_note", description: "Writes.", risk: "write", inputSchema: { type: "object" },
  execute: async () => { count("write"); if (blockIn === "write") await forever(); return "written"; } });
const model = { name: "blocking", async *stream() {
  count("model");
  if (blockIn === "model") await forever();
  if (blockIn === "stream") {
    // Part of the answer streamed after the call's checkpoint was written: lines of the dead process the resumed run
    // does not go on from.
    await new Promise((resolve) => setImmediate(resolve));
    yield { type: "text_delta", text: "Let me" };
    await new Promise((resolve) => setImmediate(resolve));
    yield { type: "text_delta", text: " look" };
    await forever();
  }
  yield { type: "response", response: { text: "", finishReason: "tool_calls", usage: { input: 5, output: 1 },
    toolCalls: [{ name: "write_note", arguments: "{}" }, { name: "look", arguments: "{}" }] } };
} };
// Checkpoints are on by default: nothing here asks for them.
const run = query("go", { model, tools: [look, note], cwd, sessionId: "crashy", permissions: { mode: "acceptEdits" } });
for await (const _ of run) {}
`;

const counted = (what: string) => (existsSync(join(cwd, `${what}.count`)) ? readFileSync(join(cwd, `${what}.count`), "utf8").length : 0);

/** Starts the child, waits until the part that blocks has started, and kills it with SIGKILL. */
async function killedIn(blockIn: "model" | "stream" | "read" | "write"): Promise<void> {
  writeFileSync(join(cwd, "child.mjs"), CHILD);
  const child = spawn(process.execPath, [join(cwd, "child.mjs"), cwd, blockIn], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on("exit", (_code, signal) => resolve(signal)));
  const deadline = Date.now() + 60_000;
  while (!existsSync(join(cwd, "ready"))) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the child never got ready: ${stderr}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  child.kill("SIGKILL");
  expect(await exited).toBe("SIGKILL");
}

/** The resumed run's model: counts its calls, answers with text. */
function finishingModel(): Model & { requests: unknown[][] } {
  const requests: unknown[][] = [];
  return {
    name: "finishing",
    requests,
    async *stream(request) {
      appendFileSync(join(cwd, "model.count"), "x");
      requests.push(request.messages.slice());
      const response: ModelResponse = { text: "All done.", toolCalls: [], finishReason: "stop", usage: { input: 7, output: 2 } };
      yield { type: "response", response };
    },
  };
}
const tools = () => [
  defineTool({ name: "look", description: "Looks.", risk: "read", inputSchema: { type: "object" }, execute: () => (appendFileSync(join(cwd, "look.count"), "x"), "seen") }),
  defineTool({ name: "write_note", description: "Writes.", risk: "write", inputSchema: { type: "object" }, execute: () => (appendFileSync(join(cwd, "write.count"), "x"), "written") }),
];
type Line = { seq: number; kind: string; state?: string; sessionId: string; recovered?: boolean; interrupted?: string[]; details?: Record<string, unknown> };
const traceOf = () => readJsonl<Line>(join(cwd, ".agent", "trace.jsonl")).filter((l) => l.sessionId === "crashy");

/** The session's trace, dead process's lines and resumed run's together, replays identical. */
async function expectReplayIdentical() {
  const replayed = await replay(await loadSession(join(cwd, ".agent", "trace.jsonl"), "crashy"));
  expect(replayed.divergence).toBeUndefined();
  expect(replayed.identical).toBe(true);
}

function expectOneStory() {
  const trace = traceOf();
  expect(trace.map((l) => l.seq)).toEqual(trace.map((_, i) => i));
  expect(trace.filter((l) => l.state === "done")).toHaveLength(1);
  expect(trace.at(-1)!.state).toBe("done");
  return trace;
}

describe("a durable run whose process was killed is resumed from its last completed step", () => {
  it("killed in a model call: the call is made again, nothing ran twice", async () => {
    await killedIn("model");
    expect(counted("model")).toBe(1);
    const model = finishingModel();
    // The resumed run's model gives the tool calls this time, then the answer.
    let call = 0;
    const twoStep: Model = {
      name: "two-step",
      async *stream(request) {
        if (call++ === 0) {
          appendFileSync(join(cwd, "model.count"), "x");
          yield { type: "response", response: { text: "", finishReason: "tool_calls", toolCalls: [{ name: "look", arguments: "{}" }] } };
        } else yield* model.stream(request, {});
      },
    };
    const { events, result } = await collect(resume("crashy", { model: twoStep, tools: tools(), cwd }));
    expect(result).toMatchObject({ status: "completed", reason: "final_answer", text: "All done.", turns: 2, toolCalls: 1 });
    expect(events.filter((e) => e.type === "turn_end")).toHaveLength(1);
    expect(counted("model")).toBe(1 + 2);
    expect(counted("look")).toBe(1);
    const trace = expectOneStory();
    const resumed = trace.find((l) => l.kind === "resumed")!;
    expect(resumed).toMatchObject({ recovered: true, interrupted: [] });
    expect(trace[trace.indexOf(resumed) + 1].state).toBe("call_model");
    await expectReplayIdentical();
  }, 120_000);

  it("killed while the model streamed its answer: the streamed part is dropped, the call made again, replay identical", async () => {
    await killedIn("stream");
    expect(counted("model")).toBe(1);
    const before = traceOf();
    expect(before.filter((l) => l.state === "stream_text").length).toBeGreaterThan(0);
    const model = finishingModel();
    const { events, result } = await collect(resume("crashy", { model, tools: tools(), cwd }));
    expect(result).toMatchObject({ status: "completed", reason: "final_answer", text: "All done.", turns: 1, toolCalls: 0 });
    expect(events.filter((e) => e.type === "turn_end")).toHaveLength(1);
    // The model saw the conversation without the cut-off text: the streamed part had no effect.
    const sent = model.requests[0] as Array<{ role: string; content?: string }>;
    expect(sent.map((m) => m.role)).toEqual(["user"]);
    const trace = expectOneStory();
    const resumed = trace.find((l) => l.kind === "resumed") as Line & { checkpoint?: number };
    // The checkpoint came before the streamed lines: those are the dead process's, after it.
    const streamed = before.filter((l) => l.state === "stream_text").map((l) => l.seq);
    expect(resumed.checkpoint).toBeLessThanOrEqual(Math.min(...streamed));
    expect(resumed.seq).toBeGreaterThan(Math.max(...streamed));
    await expectReplayIdentical();
  }, 120_000);

  it("killed in a read tool: the read runs again, the write that finished keeps its result", async () => {
    await killedIn("read");
    expect(counted("write")).toBe(1);
    expect(counted("look")).toBe(1);
    const model = finishingModel();
    const { events, result } = await collect(resume("crashy", { model, tools: tools(), cwd }));
    expect(result).toMatchObject({ status: "completed", reason: "final_answer", turns: 2, toolCalls: 2 });
    expect(events.filter((e) => e.type === "turn_end")).toHaveLength(1);
    expect(counted("write")).toBe(1);
    expect(counted("look")).toBe(2);
    expect(counted("model")).toBe(2);
    const sent = model.requests[0] as Array<{ role: string; content?: string; isError?: boolean }>;
    expect(sent.filter((m) => m.role === "tool").map((m) => m.content)).toEqual(["written", "seen"]);
    const trace = expectOneStory();
    const resumed = trace.find((l) => l.kind === "resumed")!;
    expect(resumed.recovered).toBe(true);
    expect(resumed.interrupted).toHaveLength(1);
    await expectReplayIdentical();
  }, 120_000);

  it("killed in a write tool: it is not run again; the model gets INTERRUPTED for it, and the read runs", async () => {
    await killedIn("write");
    expect(counted("write")).toBe(1);
    expect(counted("look")).toBe(0);
    const model = finishingModel();
    const { events, result } = await collect(resume("crashy", { model, tools: tools(), cwd }));
    expect(result).toMatchObject({ status: "completed", reason: "final_answer" });
    expect(events.filter((e) => e.type === "turn_end")).toHaveLength(1);
    expect(counted("write")).toBe(1);
    expect(counted("look")).toBe(1);
    const results = events.filter((e): e is Extract<AgentEvent, { type: "tool_result" }> => e.type === "tool_result");
    const interrupted = results.find((e) => e.call.name === "write_note")!;
    expect(interrupted.result.isError).toBe(true);
    expect(interrupted.result.content).toMatch(/^INTERRUPTED: write_note had started .*outcome is unknown/);
    const sent = model.requests[0] as Array<{ role: string; content?: string }>;
    expect(sent.filter((m) => m.role === "tool").map((m) => m.content?.slice(0, 12))).toEqual(["INTERRUPTED:", "seen"]);
    const trace = expectOneStory();
    expect(trace.find((l) => l.kind === "resumed")).toMatchObject({ recovered: true, interrupted: [interrupted.call.id] });
    await expectReplayIdentical();
    // A finished run is not resumed again.
    await expect(resume("crashy", { model: finishingModel(), cwd }).next()).rejects.toMatchObject({ code: "RUN_NOT_FOUND" });
  }, 120_000);

  it("a run that is still running can't be resumed: RUN_BUSY", async () => {
    writeFileSync(join(cwd, "child.mjs"), CHILD);
    const child = spawn(process.execPath, [join(cwd, "child.mjs"), cwd, "write"], { stdio: "ignore" });
    try {
      const deadline = Date.now() + 60_000;
      while (!existsSync(join(cwd, "ready")) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      await expect(resume("crashy", { model: finishingModel(), tools: tools(), cwd }).next()).rejects.toMatchObject({ code: "RUN_BUSY" });
      expect(counted("write")).toBe(1);
    } finally {
      child.kill("SIGKILL");
    }
  }, 120_000);
});
