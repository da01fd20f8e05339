import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { execFile } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { readJsonl, removeDir, tempDir } from "../support/engine.js";

const dist = pathToFileURL(join(import.meta.dirname, "..", "..", "dist", "index.js")).href;

let cwd: string;
beforeEach(() => {
  cwd = tempDir();
});
afterEach(() => removeDir(cwd));

/**
 * The program both processes run: a write tool that counts its runs in a file, a scripted model per process (what it
 * is asked is counted in a file too), and either query() with onAsk "suspend" or resume() with the answers it is given.
 */
const PROGRAM = `
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { defineTool, query, resume, scriptedModel } from ${JSON.stringify(dist)};
const [mode, cwd, arg] = process.argv.slice(2);
const count = (what) => appendFileSync(join(cwd, what + ".count"), "x");
const tool = defineTool({
  name: "write_note", description: "Writes a note.", risk: "write",
  inputSchema: { type: "object", properties: { note: { type: "string" } }, required: ["note"] },
  execute: (input) => (count("tool"), "wrote " + input.note),
});
const step = (s) => () => (count("model"), s);
let run;
if (mode === "start") {
  const model = scriptedModel([step({ text: "Writing.", toolCalls: [{ name: "write_note", input: { note: "a" } }] })]);
  run = query("note a", { model, tools: [tool], cwd, timeoutMs: 60_000, permissions: { onAsk: () => "suspend" } });
} else {
  const model = scriptedModel([step({ text: "Done." })]);
  run = resume(arg, { model, tools: [tool], cwd, answers: JSON.parse(process.argv[5]), answeredBy: "second process" });
}
const events = [];
for (;;) {
  const next = await run.next();
  if (next.done) { process.stdout.write(JSON.stringify({ events, result: next.value })); break; }
  events.push(next.value.type);
}
`;

function node(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [join(cwd, "program.mjs"), ...args], { timeout: 60_000, env: process.env }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}
const counted = (what: string) => (existsSync(join(cwd, `${what}.count`)) ? readFileSync(join(cwd, `${what}.count`), "utf8").length : 0);

describe("a run suspended in one process is resumed in another", () => {
  it("the first process exits suspended; the second applies the answer, runs the call once and ends with one turn_end", async () => {
    writeFileSync(join(cwd, "program.mjs"), PROGRAM);
    const first = await node(["start", cwd]);
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    const started = JSON.parse(first.stdout);
    expect(started.result.status).toBe("suspended");
    expect(started.events.at(-1)).toBe("suspended");
    expect(started.events).not.toContain("turn_end");
    expect(counted("tool")).toBe(0);
    expect(counted("model")).toBe(1);
    const callId = started.result.pending[0].callId;

    const second = await node(["resume", cwd, started.result.sessionId, JSON.stringify({ [callId]: "allow" })]);
    expect(second.stderr).toBe("");
    const resumed = JSON.parse(second.stdout);
    expect(resumed.result).toMatchObject({ status: "completed", reason: "final_answer", text: "Done.", turns: 2, toolCalls: 1 });
    expect(resumed.events.filter((e: string) => e === "turn_end")).toHaveLength(1);
    expect(counted("tool")).toBe(1);
    expect(counted("model")).toBe(2);
    const trace = readJsonl<{ seq: number; kind: string; state?: string; by?: string; answeredBy?: string }>(join(cwd, ".agent", "trace.jsonl"));
    expect(trace.map((l) => l.seq)).toEqual(trace.map((_, i) => i));
    expect(trace.filter((l) => l.kind === "suspended")).toHaveLength(1);
    expect(trace.find((l) => l.kind === "resumed")).toMatchObject({ by: "human", answeredBy: "second process" });
    expect(trace.filter((l) => l.state === "done")).toHaveLength(1);

    // A third process finds nothing to resume.
    const third = await node(["resume", cwd, started.result.sessionId, "{}"]);
    expect(third.stderr).toMatch(/RUN_NOT_FOUND|has no suspended run/);
    expect(counted("model")).toBe(2);
  }, 120_000);
});
