import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { existsSync, linkSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { AgentError, defineTool, fileRunStore, query, resume, scriptedModel, type AgentEvent, type RunResult } from "../../src/index.js";
import { collect, outline, readJsonl, removeDir, tempDir } from "../support/engine.js";

let cwd: string;
beforeEach(() => {
  cwd = tempDir();
});
afterEach(() => removeDir(cwd));

/** A write tool that counts its runs in a file, so runs in any process are counted. */
const counted = (dir: string) =>
  defineTool({
    name: "write_note",
    description: "Writes a note.",
    inputSchema: { type: "object", properties: { note: { type: "string" } }, required: ["note"] },
    risk: "write",
    execute: (input: { note: string }) => {
      const file = join(dir, "runs.txt");
      writeFileSync(file, (existsSync(file) ? readFileSync(file, "utf8") : "") + input.note + "\n");
      return `wrote ${input.note}`;
    },
  });
const runsOf = (dir: string) => (existsSync(join(dir, "runs.txt")) ? readFileSync(join(dir, "runs.txt"), "utf8").split("\n").filter(Boolean) : []);
type Line = { kind: string; seq: number; state?: string; sessionId: string; details?: Record<string, unknown>; [key: string]: unknown };
const traceOf = (dir: string) => readJsonl<Line>(join(dir, ".agent", "trace.jsonl"));
const auditOf = (dir: string) => readJsonl<Record<string, unknown>>(join(dir, ".agent", "audit.jsonl"));

const firstScript = () => scriptedModel([{ text: "Writing.", toolCalls: [{ name: "write_note", input: { note: "a" } }], usage: { input: 10, output: 2 } }]);
const secondScript = () => scriptedModel([{ text: "Done.", usage: { input: 20, output: 3 } }]);

async function suspendOne(options: { whenUnanswered?: boolean } = {}) {
  const permissions = options.whenUnanswered ? { whenUnanswered: "suspend" as const } : { onAsk: () => "suspend" as const };
  const model = firstScript();
  const { events, result } = await collect(query("note a", { model, tools: [counted(cwd)], cwd, permissions }));
  return { events, result, model };
}

describe("suspend instead of deny", () => {
  for (const how of ["onAsk answers suspend", "whenUnanswered: suspend"]) {
    it(`${how}: stops in ask_permission without running the call; suspended comes last, no turn_end`, async () => {
      const { events, result } = await suspendOne({ whenUnanswered: how.startsWith("when") });
      expect(outline(events).at(-1)).toBe("suspended");
      expect(events.some((e) => e.type === "turn_end")).toBe(false);
      const last = events.at(-1) as Extract<AgentEvent, { type: "suspended" }>;
      expect(last.pending).toHaveLength(1);
      expect(last.pending[0]).toMatchObject({ name: "write_note", input: { note: "a" } });
      expect(last.pending[0].reason).toMatch(/write/);
      expect(result.status).toBe("suspended");
      if (result.status !== "suspended") throw new Error("not suspended");
      expect(result.pending).toEqual(last.pending);
      expect(result.runId).toBe(last.runId);
      expect(runsOf(cwd)).toEqual([]);
      expect(existsSync(join(cwd, ".agent", "runs", `${result.sessionId}.json`))).toBe(true);
      const trace = traceOf(cwd);
      expect(trace.at(-1)).toMatchObject({ kind: "suspended", pending: last.pending });
      expect(trace.some((l) => l.state === "done")).toBe(false);
    });
  }

  it("whenUnanswered defaults to deny (today's behaviour) and rejects other values", async () => {
    const { result } = await collect(query("note a", { model: firstScript(), tools: [counted(cwd)], cwd }));
    expect(result.reason).toBe("permission_denied");
    expect(() => query("x", { model: firstScript(), cwd, permissions: { whenUnanswered: "wait" as never } })).toThrow(/whenUnanswered must be "deny" or "suspend"/);
  });

  it("every call of the batch that still needs an answer is pending; allowed calls are not", async () => {
    const read = defineTool({ name: "look", description: "Looks.", inputSchema: { type: "object" }, risk: "read", execute: () => "seen" });
    const model = scriptedModel([
      { toolCalls: [{ name: "look", input: {} }, { name: "write_note", input: { note: "a" } }, { name: "write_note", input: { note: "b" } }] },
    ]);
    let asked = 0;
    const { result } = await collect(query("go", { model, tools: [read, counted(cwd)], cwd, permissions: { onAsk: () => (asked++, "suspend") } }));
    if (result.status !== "suspended") throw new Error("not suspended");
    expect(result.pending.map((p) => p.input)).toEqual([{ note: "a" }, { note: "b" }]);
    expect(asked).toBe(1);
  });
});

describe("resume", () => {
  it("applies the answers by human, runs the call once, calls the model only for what is new, ends with one turn_end", async () => {
    const { result: suspended, model: first } = await suspendOne();
    if (suspended.status !== "suspended") throw new Error("not suspended");
    const callId = suspended.pending[0].callId;
    const model = secondScript();
    const { events, result } = await collect(resume(suspended.sessionId, { model, tools: [counted(cwd)], cwd, answers: { [callId]: "allow" }, answeredBy: "ana@laptop" }));
    expect(first.calls + model.calls).toBe(2);
    expect(model.calls).toBe(1);
    expect(runsOf(cwd)).toEqual(["a"]);
    expect(events.filter((e) => e.type === "turn_end")).toHaveLength(1);
    expect(outline(events)[0]).toBe("state:ask_permission");
    expect(result).toMatchObject({ status: "completed", reason: "final_answer", text: "Done.", turns: 2, toolCalls: 1, usage: { input: 30, output: 5 } });
    // The model's second request holds the whole conversation, the tool result included.
    const sent = model.requests[0].messages;
    expect(sent.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
    expect(sent[2]).toMatchObject({ content: "wrote a" });
    // One story in the trace: seq goes on, suspended and resumed mark the gap, one done.
    const trace = traceOf(cwd).filter((l) => l.sessionId === suspended.sessionId);
    expect(trace.map((l) => l.seq)).toEqual(trace.map((_, i) => i));
    const kinds = trace.map((l) => (l.kind === "state" ? l.state : l.kind));
    expect(kinds.filter((k) => k === "done")).toHaveLength(1);
    const at = kinds.indexOf("suspended");
    expect(kinds.slice(at, at + 3)).toEqual(["suspended", "resumed", "ask_permission"]);
    const resumedLine = trace[at + 1];
    expect(resumedLine).toMatchObject({ answers: { [callId]: "allow" }, by: "human", answeredBy: "ana@laptop" });
    expect(typeof resumedLine.afterMs).toBe("number");
    const decision = trace.flatMap((l) => (l.details?.permissions as Array<Record<string, unknown>> | undefined) ?? []).find((p) => p.toolCallId === callId);
    expect(decision).toMatchObject({ decision: "allow", by: "human", answeredBy: "ana@laptop" });
    const audit = auditOf(cwd).find((l) => l.toolCallId === callId || (l as { call?: { id?: string } }).call?.id === callId);
    expect(audit?.permission).toMatchObject({ decision: "allow", by: "human", answeredBy: "ana@laptop" });
    // Finished: no longer resumable.
    expect(existsSync(join(cwd, ".agent", "runs", `${suspended.sessionId}.json`))).toBe(false);
    await expect(resume(suspended.sessionId, { model: secondScript(), cwd }).next()).rejects.toMatchObject({ code: "RUN_NOT_FOUND" });
  });

  it("a deny answer ends the run permission_denied without running the call", async () => {
    const { result: suspended } = await suspendOne();
    if (suspended.status !== "suspended") throw new Error("not suspended");
    const model = secondScript();
    const { result } = await collect(resume(suspended.sessionId, { model, tools: [counted(cwd)], cwd, answers: { [suspended.pending[0].callId]: "deny" } }));
    expect(result).toMatchObject({ status: "completed", reason: "permission_denied" });
    expect(model.calls).toBe(0);
    expect(runsOf(cwd)).toEqual([]);
  });

  it("a missing answer suspends again (recorded settings apply), or is asked through onAsk", async () => {
    const { result: suspended } = await suspendOne({ whenUnanswered: true });
    if (suspended.status !== "suspended") throw new Error("not suspended");
    const again = await collect(resume(suspended.sessionId, { model: secondScript(), tools: [counted(cwd)], cwd }));
    expect(again.result.status).toBe("suspended");
    expect(runsOf(cwd)).toEqual([]);
    const asked: string[] = [];
    const { result } = await collect(
      resume(suspended.sessionId, { model: secondScript(), tools: [counted(cwd)], cwd, permissions: { onAsk: (r) => (asked.push(r.call.id), "allow") } }),
    );
    expect(asked).toEqual([suspended.pending[0].callId]);
    expect(result).toMatchObject({ status: "completed", reason: "final_answer" });
    expect(runsOf(cwd)).toEqual(["a"]);
    const trace = traceOf(cwd);
    expect(trace.map((l) => l.seq)).toEqual(trace.map((_, i) => i));
    expect(trace.filter((l) => l.kind === "resumed")).toHaveLength(2);
  });

  it("refuses what can't be resumed: RUN_NOT_FOUND, an answer for a call that is not pending, a damaged or forged store file", async () => {
    await expect(resume("no-such-session", { model: secondScript(), cwd }).next()).rejects.toMatchObject({ code: "RUN_NOT_FOUND" });
    const { result: suspended } = await suspendOne();
    if (suspended.status !== "suspended") throw new Error("not suspended");
    await expect(resume(suspended.sessionId, { model: secondScript(), cwd, answers: { nope: "allow" } }).next()).rejects.toThrow(/"nope" is not a pending call/);
    await expect(resume(suspended.sessionId, { model: secondScript(), cwd, answers: { [suspended.pending[0].callId]: "yes" as never } }).next()).rejects.toThrow(/must be "allow", "deny" or "allow_always"/);
    const file = join(cwd, ".agent", "runs", `${suspended.sessionId}.json`);
    const original = readFileSync(file, "utf8");
    const forged = JSON.parse(original);
    forged.settings.permissions.mode = "bypassPermissions";
    const damages = [original.slice(0, original.length / 2), "", "[]", JSON.stringify(forged), JSON.stringify({ ...forged, v: 99 })];
    for (const text of damages) {
      writeFileSync(file, text);
      const model = secondScript();
      const error = await resume(suspended.sessionId, { model, tools: [counted(cwd)], cwd }).next().then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(AgentError);
      expect(error).toMatchObject({ code: "RUN_DAMAGED" });
      expect((error as Error).message).toContain(file);
      expect(model.calls).toBe(0);
      expect(runsOf(cwd)).toEqual([]);
    }
  });

  it("timeoutMs counts active time only: a week-long suspension leaves the time the run had left", async () => {
    const { result: suspended } = await suspendOne();
    if (suspended.status !== "suspended") throw new Error("not suspended");
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 7 * 24 * 3600_000 });
    try {
      const { result } = await collect(resume(suspended.sessionId, { model: secondScript(), tools: [counted(cwd)], cwd, answers: { [suspended.pending[0].callId]: "allow" } }));
      expect(result).toMatchObject({ status: "completed", reason: "final_answer" });
    } finally {
      vi.useRealTimers();
    }
    const trace = traceOf(cwd);
    const resumedLine = trace.find((l) => l.kind === "resumed")!;
    expect(resumedLine.afterMs as number).toBeGreaterThanOrEqual(7 * 24 * 3600_000);
    const done = trace.find((l) => l.state === "done")!;
    // The run's recorded duration is its active time, not the week.
    expect(done.details!.durationMs as number).toBeLessThan(60_000);
  });

  it("two concurrent resumes of one run: the second fails RUN_BUSY; a dead owner's lock is taken over", async () => {
    const { result: suspended } = await suspendOne();
    if (suspended.status !== "suspended") throw new Error("not suspended");
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const slow = defineTool({ ...counted(cwd), name: "write_note", execute: async (input: { note: string }) => (await gate, `wrote ${input.note}`) } as never);
    const first = resume(suspended.sessionId, { model: secondScript(), tools: [slow], cwd, answers: { [suspended.pending[0].callId]: "allow" } });
    const events: AgentEvent[] = [];
    for (;;) {
      const next = await first.next();
      if (next.done) break;
      events.push(next.value);
      if (next.value.type === "tool_start") break;
    }
    await expect(resume(suspended.sessionId, { model: secondScript(), cwd }).next()).rejects.toMatchObject({ code: "RUN_BUSY" });
    release();
    let result: RunResult | undefined;
    for (;;) {
      const next = await first.next();
      if (next.done) {
        result = next.value;
        break;
      }
    }
    expect(result).toMatchObject({ status: "completed", reason: "final_answer" });
    // A lock left by a process that died is taken over.
    const again = await suspendOne();
    if (again.result.status !== "suspended") throw new Error("not suspended");
    const runs = join(cwd, ".agent", "runs");
    const sid = again.result.sessionId;
    writeFileSync(join(runs, `${sid}.lock`), "999999999\n");
    // The temp file that process made for a first checkpoint it never wrote goes with its lock; another session's,
    // or a live process's, stays.
    const leftovers = [`.${sid}.999999999.0123456789ab.tmp`, `.${sid}-other.999999999.0123456789ab.tmp`, `.${sid}.${process.pid}.0123456789ab.tmp`];
    for (const name of leftovers) writeFileSync(join(runs, name), "");
    const done = await collect(resume(sid, { model: secondScript(), tools: [counted(cwd)], cwd, answers: { [again.result.pending[0].callId]: "allow" } }));
    expect(done.result).toMatchObject({ status: "completed", reason: "final_answer" });
    expect(readdirSync(runs).filter((f) => f.endsWith(".tmp")).sort()).toEqual(leftovers.slice(1).sort());
  });

  it("the file store lists suspended runs and writes through no link", async () => {
    const { result: suspended } = await suspendOne();
    const store = fileRunStore(cwd);
    const runs = await store.list();
    expect(runs.map((r) => r.sessionId)).toEqual([suspended.sessionId]);
    expect(runs[0].pending).toHaveLength(1);
  });
});

describe("the run store in a workspace's .agent/ is written and read through no link", () => {
  const outsideDir = () => tempDir("statecraft-runs-outside-");
  it("refuses .agent/runs as a link, a stored run or lock as a link, and a hard-linked stored run", async () => {
    const payloads: Array<{ name: string; plant: (outside: string, sessionId: string) => void; onLoad?: boolean }> = [
      { name: "runs folder -> outside", plant: (outside) => symlinkSync(outside, join(cwd, ".agent", "runs")) },
      { name: "stored run -> victim", plant: (outside, id) => symlinkSync(join(outside, "victim"), join(cwd, ".agent", "runs", `${id}.json`)), onLoad: true },
      { name: "stored run hard-linked", plant: (outside, id) => linkSync(join(outside, "victim"), join(cwd, ".agent", "runs", `${id}.json`)), onLoad: true },
    ];
    for (const payload of payloads) {
      removeDir(join(cwd, ".agent"));
      const outside = outsideDir();
      try {
        writeFileSync(join(outside, "victim"), "keep me\n");
        if (payload.onLoad) {
          // A run suspended for real; then its file is swapped for the payload.
          const { result } = await suspendOne();
          rmSync(join(cwd, ".agent", "runs", `${result.sessionId}.json`));
          payload.plant(outside, result.sessionId);
          const model = secondScript();
          await expect(resume(result.sessionId, { model, tools: [counted(cwd)], cwd }).next()).rejects.toMatchObject({ code: "RUN_DAMAGED" });
          expect(model.calls).toBe(0);
        } else {
          mkdirSync(join(cwd, ".agent"), { recursive: true });
          payload.plant(outside, "");
          const failed = await collect(query("note a", { model: firstScript(), tools: [counted(cwd)], cwd, permissions: { onAsk: () => "suspend" } })).then(
            () => undefined,
            (e: unknown) => e as Error,
          );
          expect(failed?.message, payload.name).toMatch(/symbolic link/);
        }
        expect(readFileSync(join(outside, "victim"), "utf8"), payload.name).toBe("keep me\n");
        expect(readdirSync(outside).sort(), payload.name).toEqual(["victim"]);
      } finally {
        removeDir(outside);
      }
    }
  });
});
