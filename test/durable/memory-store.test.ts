import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { agentTool, createSession, query, resume, scriptedModel, type AgentEvent, type RunStore, type StoredRun } from "../../src/index.js";
import { removeDir, tempDir, writeTool as write } from "../support/engine.js";
import { useTempHome } from "../support/home.js";
import { boundedMemoryStore } from "../../src/durable/memory-store.js";

const home = useTempHome("statecraft-memory-home-");
let cwd: string;
beforeEach(() => {
  cwd = tempDir("statecraft-memory-");
});
afterEach(() => removeDir(cwd));

const everything = (dir: string) => readdirSync(dir, { recursive: true });

async function drain(run: AsyncIterable<AgentEvent>): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  for await (const event of run) events.push(event);
  return events;
}

describe('store: "memory"', () => {
  it("writes nothing anywhere and keeps the trace, transcript and audit on the run", async () => {
    const model = scriptedModel([{ toolCalls: [{ name: "write", input: { text: "x" } }] }, { text: "Written." }]);
    const run = query("write x", { model, cwd, tools: [write], permissions: { mode: "acceptEdits" }, store: "memory" });
    await drain(run);
    expect((await run.result).text).toBe("Written.");
    expect(everything(cwd)).toEqual([]);
    expect(everything(home())).toEqual([]);

    const trace = run.trace();
    expect(trace[0]).toMatchObject({ sessionId: run.sessionId, seq: 0, kind: "state", state: "build_context" });
    expect(trace.at(-1)).toMatchObject({ kind: "state", state: "done", details: { reason: "final_answer", toolCalls: 1, text: "Written." } });
    expect(trace.map((l) => l.seq)).toEqual(trace.map((_, i) => i));
    expect(run.transcript().flatMap((e) => (e.type === "message" ? [e.message.role] : []))).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(run.audit()).toEqual([expect.objectContaining({ sessionId: run.sessionId, tool: "write", input: { text: "x" }, ok: true, permission: expect.objectContaining({ decision: "allow" }) })]);
  });

  it("continues a session within the process: createSession's runs and a later query() with its sessionId", async () => {
    const model = scriptedModel([{ text: "one" }, { text: "two" }, { text: "three" }]);
    const session = createSession({ model, cwd, store: "memory" });
    await drain(session.query("first"));
    await drain(session.query("second"));
    const third = query("third", { model, cwd, sessionId: session.sessionId, store: "memory" });
    await drain(third);
    const sent = model.requests.map((r) => r.messages.map((m) => `${m.role}:${typeof m.content === "string" ? m.content : ""}`));
    expect(sent[2]).toEqual(["user:first", "assistant:one", "user:second", "assistant:two", "user:third"]);
    expect(third.transcript().flatMap((e) => (e.type === "message" ? [e.message.content] : []))).toEqual(["first", "one", "second", "two", "third", "three"]);
    // Each run's own trace.
    expect(third.trace()[0]).toMatchObject({ details: { input: "third" } });
    expect(everything(cwd)).toEqual([]);
    expect(everything(home())).toEqual([]);
  });

  it("suspends and resumes within the process, writing nothing", async () => {
    const model = scriptedModel([{ toolCalls: [{ name: "write", input: { text: "x" } }] }, { text: "Written." }]);
    const run = query("write x", { model, cwd, tools: [write], permissions: { whenUnanswered: "suspend" }, store: "memory" });
    const events = await drain(run);
    const suspended = events.at(-1) as Extract<AgentEvent, { type: "suspended" }>;
    expect(suspended.type).toBe("suspended");
    // A new run of the session is refused while its run waits, as with files.
    await expect(drain(query("again", { model, cwd, sessionId: run.sessionId, store: "memory" }))).rejects.toMatchObject({ code: "SESSION_BUSY" });
    const resumed = resume(run.sessionId, { model, cwd, tools: [write], store: "memory", answers: { [suspended.pending[0].callId]: "allow" } });
    await drain(resumed);
    expect(await resumed.result).toMatchObject({ status: "completed", reason: "final_answer", text: "Written." });
    expect(resumed.trace()[0]).toMatchObject({ kind: "resumed", sessionId: run.sessionId, runId: suspended.runId });
    expect(resumed.audit()).toEqual([expect.objectContaining({ tool: "write", ok: true })]);
    // Resumed once; it is gone from memory after.
    await expect(drain(resume(run.sessionId, { model, cwd, store: "memory" }))).rejects.toMatchObject({ code: "RUN_NOT_FOUND" });
    expect(everything(cwd)).toEqual([]);
    expect(everything(home())).toEqual([]);
  });

  it("keeps a subagent's lines with its parent's, and writes nothing for it either", async () => {
    const helper = agentTool({ name: "helper", description: "Helps." });
    const model = scriptedModel([{ toolCalls: [{ name: "helper", input: { prompt: "help" } }] }, { text: "Helped." }, { text: "Done." }]);
    const run = query("go", { model, cwd, tools: [helper], store: "memory" });
    await drain(run);
    expect(await run.result).toMatchObject({ reason: "final_answer", text: "Done." });
    const child = run.trace().filter((l) => l.parentSession === run.sessionId);
    expect(child[0]).toMatchObject({ kind: "state", state: "build_context", details: { input: "help" } });
    expect(child.at(-1)).toMatchObject({ state: "done", details: { text: "Helped." } });
    expect(run.audit().map((l) => l.tool)).toEqual(["helper"]);
    expect(everything(cwd)).toEqual([]);
    expect(everything(home())).toEqual([]);
  });

  it("keeps traceFile: false (no trace at all) and refuses a trace file or a second run store", () => {
    const model = scriptedModel([{ text: "ok" }]);
    expect(() => query("x", { model, cwd, store: "memory", traceFile: "t.jsonl" })).toThrow(/traceFile "t\.jsonl" writes a file, and store: "memory" writes nothing/);
    expect(() => query("x", { model, cwd, store: "memory", runStore: {} as RunStore })).toThrow(/store and options\.runStore both/);
    expect(() => query("x", { model, cwd, store: "disk" as never })).toThrow(/options\.store must be "file", "memory" or a RunStore/);
    expect(() => query("x", { model, cwd, stores: "memory" } as never)).toThrow(/did you mean store\?/);
  });

  it("with traceFile: false keeps no trace lines", async () => {
    const run = query("x", { model: scriptedModel([{ text: "ok" }]), cwd, store: "memory", traceFile: false });
    await drain(run);
    expect(run.trace()).toEqual([]);
    expect(everything(cwd)).toEqual([]);
  });
});

describe("store: the file default and a RunStore", () => {
  it("run.trace() of a run that writes files says where its trace is instead", async () => {
    const run = query("x", { model: scriptedModel([{ text: "ok" }]), cwd });
    await drain(run);
    expect(() => run.trace()).toThrow(/run\.trace\(\) reads what a run keeps in memory/);
    expect(everything(cwd)).toContain(join(".agent", "trace.jsonl"));
  });

  it("keeps a suspended run in a RunStore given as store", async () => {
    const runs = new Map<string, StoredRun>();
    const store: RunStore = {
      save: async (run) => void runs.set(run.sessionId, JSON.parse(JSON.stringify(run)) as StoredRun),
      load: async (sessionId) => runs.get(sessionId),
      list: async () => [...runs.values()],
      delete: async (sessionId) => void runs.delete(sessionId),
    };
    const model = scriptedModel([{ toolCalls: [{ name: "write", input: { text: "x" } }] }, { text: "Written." }]);
    const run = query("write x", { model, cwd, tools: [write], permissions: { whenUnanswered: "suspend" }, store });
    await drain(run);
    expect(runs.get(run.sessionId)).toMatchObject({ status: "suspended" });
    expect(everything(join(cwd, ".agent"))).not.toContain("runs");
    const pending = runs.get(run.sessionId)!;
    const resumed = resume(run.sessionId, { model, cwd, tools: [write], store, answers: { [pending.status === "suspended" ? pending.pending[0].callId : ""]: "allow" } });
    await drain(resumed);
    expect(await resumed.result).toMatchObject({ status: "completed", text: "Written." });
    expect(runs.size).toBe(0);
  });
});

describe("the process's memory store is bounded", () => {
  const stored = (sessionId: string): StoredRun => ({ sessionId, status: "suspended", messages: [] }) as unknown as StoredRun;

  it("forgets the session used longest ago past its limit: its conversation and its stored run", async () => {
    const memory = boundedMemoryStore(2);
    memory.transcript("/w", "a").writeLine("a1");
    await memory.runs.save(stored("a"));
    memory.transcript("/w", "b").writeLine("b1");
    // a is used again, so b is now the one used longest ago.
    expect(memory.transcript("/w", "a").lines).toEqual(["a1"]);
    memory.transcript("/w", "c");
    expect(memory.hasTranscript("/w", "a")).toBe(true);
    expect(memory.hasTranscript("/w", "b")).toBe(false);
    expect(memory.hasTranscript("/w", "c")).toBe(true);
    memory.transcript("/w", "d");
    expect(memory.hasTranscript("/w", "a")).toBe(false);
    expect(await memory.runs.load("a")).toBeUndefined();
  });

  it("keeps a session whose run is going on (it holds the run's lock), and forgets it once the run ended and others came", async () => {
    const memory = boundedMemoryStore(1);
    memory.transcript("/w", "busy");
    const release = await memory.runs.lock!("busy");
    memory.transcript("/w", "other");
    expect(memory.hasTranscript("/w", "busy")).toBe(true);
    await release();
    memory.transcript("/w", "third");
    expect(memory.hasTranscript("/w", "busy")).toBe(false);
    await expect(memory.runs.lock!("busy").then((r) => r())).resolves.toBeUndefined();
  });
});
