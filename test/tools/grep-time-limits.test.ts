/**
 * Attacks on grep's time limits: patterns that backtrack catastrophically (each takes far longer than a minute on a
 * plain `regex.test`). The search runs on a worker thread, so the run's deadline and abort still hold, the event loop
 * stays free while it runs, and the worker is gone once the call is stopped.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { query, scriptedModel, type AgentEvent } from "../../src/index.js";
import { grepTool } from "../../src/tools/builtin/index.js";
import { matchLines } from "../../src/tools/builtin/grep-worker.js";
import { collect, outline } from "../support/engine.js";
import { contextFor, makeTempDir, removeDir, run, writeFiles } from "./workspace.js";

let ws: string;
beforeEach(() => {
  ws = makeTempDir();
});
afterEach(() => removeDir(ws));

/** Pattern and the text it backtracks on; every one of them runs for minutes on the thread that tests it. */
const PAYLOADS: Array<{ name: string; pattern: string; text: string }> = [
  { name: "nested plus (the issue's)", pattern: "^(a+)+$", text: `${"a".repeat(28)}!` },
  { name: "nested plus, case-insensitive", pattern: "(?i)^(A+)+$", text: `${"a".repeat(28)}!` },
  { name: "nested star", pattern: "(a*)*b", text: "a".repeat(30) },
  { name: "words with optional spaces", pattern: "^(\\w+\\s?)*$", text: `${"a".repeat(30)}!` },
  { name: "adjacent pluses", pattern: "(x+x+)+y", text: "x".repeat(30) },
  { name: "overlapping alternation", pattern: "(a|aa)+$", text: `${"a".repeat(40)}!` },
  // Each line alone is a fraction of a second; together minutes: the limit holds across lines, not only within one.
  { name: "many slow lines", pattern: "^(a+)+$", text: Array.from({ length: 2_000 }, () => `${"a".repeat(21)}!`).join("\n") },
];

/** The largest gap between ticks of a 20 ms interval while `work` runs: how long the event loop was held. */
async function longestStall<T>(work: () => Promise<T>): Promise<{ value: T; stallMs: number }> {
  let last = performance.now();
  let stallMs = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    stallMs = Math.max(stallMs, now - last);
    last = now;
  }, 20);
  try {
    const value = await work();
    stallMs = Math.max(stallMs, performance.now() - last);
    return { value, stallMs };
  } finally {
    clearInterval(ticker);
  }
}

const grepCall = (pattern: string) => ({ toolCalls: [{ name: "grep", input: { pattern, path: "slow.txt" } }] });

describe("grep under catastrophic backtracking", { timeout: 60_000 }, () => {
  it.each(PAYLOADS)("$name: an abort stops it at once and the event loop is never held", async ({ pattern, text }) => {
    writeFiles(ws, { "slow.txt": `first line\n${text}\nlast line\n` });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const started = performance.now();
    const { value, stallMs } = await longestStall(() => run(grepTool(), { pattern, path: "slow.txt" }, contextFor(ws, controller.signal)));
    expect(value).toEqual({ isError: true, text: "grep was aborted." });
    // Stated bound: stopped well within a second of the abort (300 ms in), with a wide margin for a loaded machine.
    expect(performance.now() - started).toBeLessThan(2_500);
    expect(stallMs).toBeLessThan(1_000);
  });

  it.each(PAYLOADS)("$name: a run with timeoutMs 1000 ends `timeout` in well under 2.5 s", async ({ pattern, text }) => {
    writeFiles(ws, { "slow.txt": text });
    const model = scriptedModel([grepCall(pattern), { text: "never reached" }]);
    const started = performance.now();
    const { events, result } = await collect(query("search", { model, tools: [grepTool()], cwd: ws, timeoutMs: 1_000, traceFile: false }));
    expect(result.reason).toBe("timeout");
    expect(performance.now() - started).toBeLessThan(2_500);
    expect(outline(events).slice(-3)).toEqual(["tool_start:grep", "tool_result:grep:error", "turn_end:timeout"]);
  });

  it("an abort of the run (options.signal) during the search ends `user_abort` at once", async () => {
    writeFiles(ws, { "slow.txt": `${"a".repeat(28)}!` });
    const controller = new AbortController();
    const model = scriptedModel([grepCall("^(a+)+$"), { text: "never reached" }]);
    const started = performance.now();
    const runner = query("search", { model, tools: [grepTool()], cwd: ws, signal: controller.signal, traceFile: false });
    const events: AgentEvent[] = [];
    for (;;) {
      const next = await runner.next();
      if (next.done) {
        expect(next.value.reason).toBe("user_abort");
        break;
      }
      events.push(next.value);
      // The search has started: stop the run a little later, mid-match.
      if (next.value.type === "tool_start") setTimeout(() => controller.abort(), 300);
    }
    expect(performance.now() - started).toBeLessThan(2_500);
    expect(outline(events).at(-1)).toBe("turn_end:user_abort");
  });

  it("the tool's own timeoutMs stops the search; the model is told and the run goes on", async () => {
    writeFiles(ws, { "slow.txt": `${"a".repeat(28)}!` });
    const grep = { ...grepTool(), timeoutMs: 400 };
    const model = scriptedModel([grepCall("^(a+)+$"), { text: "the pattern was too slow" }]);
    const started = performance.now();
    const { result } = await collect(query("search", { model, tools: [grep], cwd: ws, traceFile: false }));
    expect(result.reason).toBe("final_answer");
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(result.messages.find((m) => m.role === "tool")).toMatchObject({ isError: true, content: expect.stringContaining("timed out after 400 ms") });
  });

  it("a stopped search leaves no thread running: the process is idle right after", async () => {
    writeFiles(ws, { "slow.txt": `${"a".repeat(28)}!` });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    await run(grepTool(), { pattern: "^(a+)+$", path: "slow.txt" }, contextFor(ws, controller.signal));
    // A worker still matching would burn a whole core; terminated, the process uses next to nothing.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const before = process.cpuUsage();
    await new Promise((resolve) => setTimeout(resolve, 800));
    const used = process.cpuUsage(before);
    expect((used.user + used.system) / 1000).toBeLessThan(400);
    // And the next search works (a fresh worker replaces the terminated one).
    writeFiles(ws, { "fine.txt": "alpha\nbeta\n" });
    expect(await run(grepTool(), { pattern: "^b", path: "fine.txt" }, contextFor(ws))).toEqual({ isError: false, text: "fine.txt:2:beta" });
  });
});

describe("grep's matching thread", { timeout: 60_000 }, () => {
  it("gives the same lines as before: cut long lines, CRLF endings, a byte-order mark, the match cap across files", async () => {
    writeFiles(ws, {
      "a.txt": `\uFEFFhit first\r\nmiss\r\nhit ${"x".repeat(400)}\r\n`,
      "b.txt": Array.from({ length: 300 }, (_, i) => `hit ${i}`).join("\n"),
    });
    const out = await run(grepTool(), { pattern: "hit" }, contextFor(ws));
    const lines = out.text.split("\n");
    expect(lines[0]).toBe("a.txt:1:\uFEFFhit first");
    expect(lines[1]).toBe(`a.txt:3:hit ${"x".repeat(296)}… [line cut]`);
    expect(lines[2]).toBe("b.txt:1:hit 0");
    expect(lines.filter((l) => /^[ab]\.txt:\d+:/.test(l))).toHaveLength(250);
    expect(lines.at(-1)).toMatch(/stopped after 250 matches/);
  });

  it("copies a buffer that shares its memory, and leaves it intact", async () => {
    // Small Buffers come from a shared pool: moving the pool's memory to the worker would wipe its neighbours.
    const neighbour = Buffer.from("keep me");
    const bytes = Buffer.from("one\ntwo\n");
    expect(bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength).toBe(false);
    const found = await matchLines(bytes, /o/, 10, 300, new AbortController().signal);
    expect(found).toEqual({ found: [[1, "one", false], [2, "two", false]], more: false });
    expect(bytes.toString()).toBe("one\ntwo\n");
    expect(neighbour.toString()).toBe("keep me");
  });

  it("an idle worker never keeps the process alive", () => {
    writeFiles(ws, { "f.txt": "needle\n" });
    const built = path.resolve("dist/tools/builtin/grep.js");
    const script = `
      import { grepTool } from ${JSON.stringify(built)};
      const out = await grepTool().execute({ pattern: "needle" }, { cwd: ${JSON.stringify(ws)}, signal: new AbortController().signal, sessionId: "s", toolCallId: "c" });
      console.log(out);
    `;
    const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", timeout: 30_000 });
    expect(child.error).toBeUndefined();
    expect(child.status).toBe(0);
    expect(child.stdout.trim()).toBe("f.txt:1:needle");
  });
});
