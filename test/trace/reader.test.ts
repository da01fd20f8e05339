import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { query, scriptedModel } from "../../src/index.js";
import type { TraceLine } from "../../src/record/format.js";
import { readTrace } from "../../src/record/reader.js";
import { lastSessionId, loadSession, summarizeSessions } from "../../src/debug/session.js";
import { replay } from "../../src/debug/replay.js";
import { collect, removeDir, tempDir } from "../support/engine.js";
import { echo, readLines, record, stateOf, writeLines } from "./helpers.js";

let cwd: string;
beforeEach(() => {
  cwd = tempDir();
});
afterEach(() => removeDir(cwd));

async function readAll(file: string, warnings: string[] = []): Promise<TraceLine[]> {
  const out: TraceLine[] = [];
  for await (const line of readTrace(file, { onWarning: (w) => warnings.push(w) })) out.push(line);
  return out;
}

const toolRun = (dir: string, prompt = "go") =>
  record(dir, prompt, { model: scriptedModel([{ toolCalls: [{ name: "echo", input: { text: prompt } }] }, { text: `said ${prompt}` }]), tools: [echo] });

describe("readTrace", () => {
  it("reads every line in file order", async () => {
    const { file } = await toolRun(cwd);
    const lines = await readAll(file);
    expect(lines).toEqual(readLines(file));
  });

  it("skips a torn last line (a crash mid-write) with a warning", async () => {
    const { file, sessionId } = await toolRun(cwd);
    const whole = readLines(file);
    appendFileSync(file, '{"v":1,"sessionId":"' + sessionId + '","seq":12,"time":"2026-');
    const warnings: string[] = [];
    expect(await readAll(file, warnings)).toEqual(whole);
    expect(warnings).toEqual([`${file}:${whole.length + 1}: the last line is torn (the writer stopped mid-line, e.g. a crash); skipped`]);
  });

  it("warns on stderr by default", async () => {
    const { file } = await toolRun(cwd);
    appendFileSync(file, '{"v":1,"sess');
    const written: string[] = [];
    const original = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    }) as typeof process.stderr.write;
    try {
      await readAll(file).catch(() => undefined);
      for await (const _line of readTrace(file)) void _line;
    } finally {
      process.stderr.write = original;
    }
    expect(written.some((w) => w.startsWith("statecraft: ") && w.includes("the last line is torn"))).toBe(true);
  });

  it("skips a damaged line in the middle, naming it, and reads on", async () => {
    const { file } = await toolRun(cwd);
    const lines = readLines(file);
    writeFileSync(file, [JSON.stringify(lines[0]), "{not json", ...lines.slice(1).map((l) => JSON.stringify(l))].join("\n") + "\n");
    const warnings: string[] = [];
    expect(await readAll(file, warnings)).toEqual(lines);
    expect(warnings).toEqual([`${file}:2: line is damaged (not valid JSON); skipped`]);
  });

  it("skips JSON that is not a trace line, naming it", async () => {
    const { file } = await toolRun(cwd);
    const lines = readLines(file);
    appendFileSync(file, '{"hello":"world"}\n\n');
    const warnings: string[] = [];
    expect(await readAll(file, warnings)).toEqual(lines);
    expect(warnings[0]).toContain(`${file}:${lines.length + 1}: not a trace line`);
  });

  it("reads older versions and ignores fields it does not know; a replay of such lines is identical", async () => {
    const { file, sessionId } = await toolRun(cwd);
    const old = readLines(file).map((line, i) => {
      const copy = { ...line, extra: { added: "by a later writer" }, details: { ...(line as { details?: object }).details, note: i } } as Record<string, unknown>;
      if (i % 2 === 0) delete copy.v;
      else copy.v = 0;
      return copy;
    });
    writeLines(file, old);
    const warnings: string[] = [];
    const lines = await readAll(file, warnings);
    expect(warnings).toEqual([]);
    expect(lines).toHaveLength(old.length);
    expect(lines.every((l) => l.v <= 1)).toBe(true);
    const result = await replay(await loadSession(file, sessionId));
    expect(result.divergence).toBeUndefined();
  });

  it("warns once about lines of a newer format version and still reads them", async () => {
    const { file } = await toolRun(cwd);
    writeLines(
      file,
      readLines(file).map((l) => ({ ...l, v: 2 })),
    );
    const warnings: string[] = [];
    const lines = await readAll(file, warnings);
    expect(lines.length).toBeGreaterThan(3);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("written by a newer statecraft (trace format v2");
  });

  it("a missing file is a clear error", async () => {
    await expect(readAll(join(cwd, "none.jsonl"))).rejects.toMatchObject({ code: "TRACE_NOT_FOUND", message: expect.stringContaining("does not exist") });
    await expect(readAll(cwd)).rejects.toMatchObject({ code: "TRACE_NOT_FOUND", message: expect.stringContaining("is not a file") });
  });

  it("stops reading when the consumer stops (a break ends the stream)", async () => {
    const { file } = await toolRun(cwd);
    let seen = 0;
    for await (const _line of readTrace(file)) {
      void _line;
      if (++seen === 2) break;
    }
    expect(seen).toBe(2);
  });
});

describe("sessions", () => {
  it("interleaved sessions of concurrent runs are read apart, each in its own order", async () => {
    const runs = ["one", "two", "three"].map((word) =>
      // Every model call waits a little, so the three runs are all under way at once and their lines interleave.
      query(word, { model: scriptedModel([{ toolCalls: [{ name: "echo", input: { text: word } }], delayMs: 30 }, { text: word, delayMs: 30 }]), tools: [echo], cwd }),
    );
    await Promise.all(runs.map((r) => collect(r)));
    const file = join(cwd, ".agent", "trace.jsonl");
    const all = readLines(file);
    // The file really interleaves them.
    const firstOfEach = runs.map((r) => all.findIndex((l) => l.sessionId === r.sessionId));
    const lastOfEach = runs.map((r) => all.map((l) => l.sessionId).lastIndexOf(r.sessionId));
    expect(Math.max(...firstOfEach)).toBeLessThan(Math.min(...lastOfEach));
    for (const run of runs) {
      const session = await loadSession(file, run.sessionId);
      expect(session.lines).toEqual(all.filter((l) => l.sessionId === run.sessionId));
      expect(session.lines.map((l) => l.seq)).toEqual(session.lines.map((_, i) => i));
      expect(session.file).toBe(file);
      expect((await replay(session)).identical).toBe(true);
    }
  });

  it("a session can be named by the start of its id; unknown and ambiguous ids are errors", async () => {
    const a = await record(cwd, "a", { model: scriptedModel([{ text: "a" }]), sessionId: "abc-1" });
    await record(cwd, "b", { model: scriptedModel([{ text: "b" }]), sessionId: "abc-2" });
    await record(cwd, "c", { model: scriptedModel([{ text: "c" }]), sessionId: "xyz-1" });
    expect((await loadSession(a.file, "xyz")).sessionId).toBe("xyz-1");
    expect((await loadSession(a.file, "abc-1")).lines.map(stateOf)).toEqual(["build_context", "call_model", "stream_text", "done"]);
    await expect(loadSession(a.file, "abc")).rejects.toThrow(/abc is the start of 2 sessions .*\(abc-1, abc-2\); give more of the id/);
    await expect(loadSession(a.file, "nope")).rejects.toMatchObject({ code: "TRACE_SESSION_NOT_FOUND", message: expect.stringContaining("trace list") });
  });

  it("summaries: one per session with stop reason, turns, tool calls, tokens, duration and the request", async () => {
    const first = await record(cwd, "please echo the word hello", {
      model: scriptedModel([{ toolCalls: [{ name: "echo", input: { text: "hello" } }], usage: { input: 10, output: 5 } }, { text: "hello", usage: { input: 20, output: 1 } }]),
      tools: [echo],
    });
    await record(cwd, "fail", { model: scriptedModel([{ error: { status: 500, message: "down" } }]) });
    // A session continued over two runs, and one that never finished (its done line is missing).
    await record(cwd, "first", { model: scriptedModel([{ text: "1", usage: { input: 1, output: 1 } }]), sessionId: "chat" });
    await record(cwd, "second", { model: scriptedModel([{ text: "2", usage: { input: 2, output: 2 } }]), sessionId: "chat" });
    appendFileSync(first.file, JSON.stringify({ v: 1, sessionId: "cut", seq: 0, time: new Date().toISOString(), kind: "state", state: "build_context", turn: 0, details: { input: "crashed", options: {} } }) + "\n");
    const summaries = await summarizeSessions(first.file);
    expect(summaries.map((s) => [s.request, s.reason, s.turns, s.toolCalls, s.tokens.input, s.tokens.output, s.runs])).toEqual([
      ["please echo the word hello", "final_answer", 2, 1, 30, 6, 1],
      ["fail", "model_error", 1, 0, 0, 0, 1],
      ["first", "final_answer", 2, 0, 3, 3, 2],
      ["crashed", undefined, 0, 0, 0, 0, 1],
    ]);
    expect(summaries[0]).toMatchObject({ sessionId: first.sessionId, model: "script", lines: readLines(first.file).filter((l) => l.sessionId === first.sessionId).length });
    expect(summaries[0].durationMs).toBeGreaterThanOrEqual(0);
    expect(Date.parse(summaries[0].startedAt)).not.toBeNaN();
    expect(await lastSessionId(first.file)).toBe("cut");
  });
});
