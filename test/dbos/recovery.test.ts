import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { answer, closeClients, enqueueRun, listRuns, loadSessionFromDatabase, recoverRuns, watch } from "../../src/dbos/index.js";
import { replay, type AgentEvent } from "../../src/index.js";
import { describeWithDatabase, freshDatabase, plan, spawnWorker, sql, until, workspace, type SpawnedWorker } from "./support.js";

/** Replays the session from the database's trace lines: the run that moved between workers is one story. */
async function replaysIdentical(database: string, sessionId: string): Promise<void> {
  const result = await replay(await loadSessionFromDatabase({ database, sessionId }));
  expect(result.identical, `${result.divergence?.message}: ${result.divergence?.reason}\n${result.divergence?.context.join("\n")}`).toBe(true);
}

async function collect(database: string, ids: { sessionId: string; runId: string }): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  for await (const event of watch({ database, ...ids })) events.push(event);
  return events;
}

describeWithDatabase("statecraft/dbos: dead workers, suspended runs", () => {
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  let ws: ReturnType<typeof workspace>;
  let running: SpawnedWorker[] = [];
  const start = async (id: string, deadAfterMs = 60_000) => {
    const worker = await spawnWorker({ database: db.url, id, cwd: ws.cwd, counters: ws.counters, concurrency: 2, deadAfterMs });
    running.push(worker);
    return worker;
  };

  beforeAll(async () => {
    db = await freshDatabase();
  }, 60_000);
  afterEach(async () => {
    await Promise.all(running.map((w) => w.kill()));
    running = [];
    ws?.cleanup();
  });
  afterAll(async () => {
    await closeClients();
    await db?.drop();
  }, 60_000);

  it("a worker SIGKILLed in a model call: another finishes the run, no completed step repeated", async () => {
    ws = workspace();
    const a = await start("crash-a");
    const ids = await enqueueRun(plan("m", [["count"]], { hangModelAt: 1 }), { database: db.url });
    await until(() => existsSync(join(ws.counters, "m.model1.hung")), "the second model call to hang");
    await a.kill();
    await start("crash-b");
    expect(await recoverRuns({ database: db.url, fromWorker: "crash-a" })).toContain(ids.runId);
    const events = await collect(db.url, ids);
    expect(events.at(-1)).toMatchObject({ type: "turn_end", reason: "final_answer" });
    const models = ws.log("model.log").map((l) => l.split(" "));
    // The first model call and the tool ran once; the call in flight was made again, by the other worker.
    expect(models.map((m) => `${m[1]}@${m[3]}`)).toEqual(["0@crash-a", "1@crash-a", "1@crash-b"]);
    expect(ws.log("tool.log")).toHaveLength(1);
    expect(events.filter((e) => e.type === "turn_end")).toHaveLength(1);
    await replaysIdentical(db.url, ids.sessionId);
  }, 120_000);

  it("a worker SIGKILLed in a slow write tool: its call is INTERRUPTED, a read tool in flight runs again; recovered automatically", async () => {
    ws = workspace();
    const a = await start("slow-a", 2_000);
    const ids = await enqueueRun(plan("t", [["peek"], ["slow"]]), { database: db.url });
    await until(() => existsSync(join(ws.counters, "t.peek.hung")), "the read tool to hang");
    await a.kill();
    // No recoverRuns: the other worker sees a's heartbeat stop and takes its runs back on the queue.
    await start("slow-b", 2_000);
    await until(() => existsSync(join(ws.counters, "t.slow.hung")), "the write tool to hang", 60_000);
    const b = running.at(-1)!;
    await b.kill();
    const c = await start("slow-c", 2_000);
    const events = await collect(db.url, ids);
    expect(events.at(-1)).toMatchObject({ type: "turn_end", reason: "final_answer" });
    const tools = ws.log("tool.log").map((l) => l.split(" "));
    expect(tools.map((t) => `${t[1]}@${t[3]}`)).toEqual(["peek@slow-a", "peek@slow-b", "slow@slow-b"]);
    const results = events.filter((e) => e.type === "tool_result") as Array<Extract<AgentEvent, { type: "tool_result" }>>;
    expect(results.map((r) => r.result.isError)).toEqual([false, true]);
    expect(results[1].result.content).toMatch(/^INTERRUPTED: slow had started/);
    expect(c.id).toBe("slow-c");
  }, 150_000);

  it("counts only the time the run was active against timeoutMs: a recovered run goes on with the time it had left", async () => {
    ws = workspace();
    const a = await start("time-a");
    // Five model calls of 1.5 s against 6 s: two before the worker dies, three after.
    const calls: Array<[string]> = [["count"], ["count"], ["count"], ["count"]];
    const ids = await enqueueRun(plan("clock", calls, { modelMs: 1500, hangModelAt: 2 }), { database: db.url, timeoutMs: 6000 });
    await until(() => existsSync(join(ws.counters, "clock.model2.hung")), "the third model call to hang");
    await a.kill();
    // Dead time is not run time: a minute or a second dead, the run has what it had left (about 3 s).
    await new Promise((r) => setTimeout(r, 1000));
    await start("time-b");
    await recoverRuns({ database: db.url, fromWorker: "time-a" });
    const events = await collect(db.url, ids);
    // Started afresh it would have had 6 s for the last three calls (4.5 s) and finished; it had ~3 s: timeout.
    expect(events.at(-1)).toMatchObject({ type: "turn_end", reason: "timeout" });
    const turns = ws.log("model.log").map((l) => l.split(" ")).filter((m) => m[3] === "time-b").map((m) => m[1]);
    expect(turns[0]).toBe("2");
    expect(turns).not.toContain("4");
    await replaysIdentical(db.url, ids.sessionId);
  }, 120_000);

  it("a suspended run: the worker stops, the answer comes from another process, a new worker finishes it", async () => {
    ws = workspace();
    const a = await start("ask-a");
    const ids = await enqueueRun(plan("q", [["count"], ["edit"]]), { database: db.url });
    await until(async () => (await listRuns({ database: db.url, status: ["suspended"] })).some((r) => r.runId === ids.runId), "the run to suspend");
    await a.stop();
    const [suspended] = (await listRuns({ database: db.url, status: ["suspended"] })).filter((r) => r.runId === ids.runId);
    expect(suspended.pending).toHaveLength(1);
    expect(suspended.pending![0]).toMatchObject({ name: "edit" });
    expect(ws.log("tool.log").map((l) => l.split(" ")[1])).toEqual(["count"]);
    // Answered by a process of its own.
    const script = `import { answer, closeClients } from ${JSON.stringify(join(import.meta.dirname, "..", "..", "dist", "dbos", "index.js"))};
      await answer({ database: ${JSON.stringify(db.url)}, sessionId: ${JSON.stringify(ids.sessionId)}, runId: ${JSON.stringify(ids.runId)}, answers: { ${JSON.stringify(suspended.pending![0].callId)}: "allow" }, answeredBy: "ana" });
      await closeClients();`;
    const { execFileSync } = await import("node:child_process");
    execFileSync(process.execPath, ["--input-type=module", "-e", script], { stdio: "pipe" });
    await start("ask-b");
    const events = await collect(db.url, ids);
    const types = events.map((e) => e.type);
    expect(types.filter((t) => t === "suspended")).toHaveLength(1);
    expect(types.indexOf("suspended")).toBeLessThan(types.indexOf("turn_end"));
    expect(events.at(-1)).toMatchObject({ type: "turn_end", reason: "final_answer" });
    expect(ws.log("tool.log").map((l) => l.split(" ").slice(1, 2).join() + "@" + l.split(" ")[3])).toEqual(["count@ask-a", "edit@ask-b"]);
    // The model was not asked again for what it had answered before the suspension.
    expect(ws.log("model.log").map((l) => l.split(" ")[1])).toEqual(["0", "1", "2"]);
    // Trace: one story across the gap, seq going on, the answer recorded as a person's.
    const trace = (await sql<{ line: string }>(db.url, "SELECT line FROM statecraft.lines WHERE run_id = $1 AND stream = 'trace' ORDER BY part, idx", [ids.runId])).map((r) => JSON.parse(r.line));
    expect(trace.map((l) => l.seq)).toEqual(trace.map((_, i) => i));
    expect(trace.filter((l) => l.kind === "suspended")).toHaveLength(1);
    expect(trace.find((l) => l.kind === "resumed")).toMatchObject({ by: "human", answeredBy: "ana" });
    await replaysIdentical(db.url, ids.sessionId);
    // A second answer to a run that is not suspended any more is refused.
    await expect(answer({ database: db.url, ...ids, answers: {} })).rejects.toMatchObject({ code: "RUN_NOT_FOUND" });
  }, 150_000);
});
