import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { AgentEvent } from "../../src/index.js";
import { abortRun, answer, enqueueRun, listRuns, readLines, watch, closeClients } from "../../src/dbos/index.js";
import pg from "pg";
import { describeWithDatabase, freshDatabase, spawnWorker, sql, until, workspace, type SpawnedWorker } from "./support.js";

/** The run's events as watch() gives them, to its end. */
async function eventsOf(database: string, ids: { sessionId: string; runId: string }): Promise<AgentEvent[]> {
  const out: AgentEvent[] = [];
  for await (const event of watch({ database, ...ids, pollMs: 50 })) out.push(event);
  return out;
}

/** Waits for the run's first event of `type` (read from the database as a follower does). */
async function seen(database: string, ids: { sessionId: string; runId: string }, type: AgentEvent["type"]): Promise<void> {
  for await (const event of watch({ database, ...ids, pollMs: 50 })) if (event.type === type) return;
  throw new Error(`run ${ids.runId} ended without a ${type} event`);
}

/** Whether a process runs this exact command line (the bash tool's sleep, told apart by its odd duration). */
function running(command: string): boolean {
  const lines = execFileSync("ps", ["-eo", "args="], { encoding: "utf8" }).split("\n");
  return lines.some((line) => line.trim() === command);
}

const bashPlan = (tag: string, command: string) => JSON.stringify({ tag, calls: [["bash", { command }]], text: `${tag} done` });

/** abortRun(): a queued, a running and a suspended run on a worker of another process, all ended user_abort. */
describeWithDatabase("statecraft/dbos abortRun", () => {
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  let ws: ReturnType<typeof workspace>;
  let worker: SpawnedWorker;

  beforeAll(async () => {
    db = await freshDatabase();
    ws = workspace();
    // One run at a time: a second run stays queued while the first holds the worker.
    worker = await spawnWorker({ database: db.url, id: "abort-1", cwd: ws.cwd, counters: ws.counters, concurrency: 1, allow: ["bash"] });
  }, 120_000);
  afterAll(async () => {
    await worker?.kill();
    await closeClients();
    await db?.drop();
    ws?.cleanup();
  }, 60_000);

  it("a running run in a bash tool ends user_abort promptly: the sleep is killed, its trace and transcript written", async () => {
    const command = "sleep 29.417";
    const ids = await enqueueRun(bashPlan("sleeper", command), { database: db.url });
    await seen(db.url, ids, "tool_start");
    await until(() => running(command), "the bash tool's sleep to run");
    const asked = Date.now();
    expect(await abortRun({ database: db.url, ...ids, abortedBy: "the test" })).toEqual({ status: "running" });
    const events = await eventsOf(db.url, ids);
    const took = Date.now() - asked;
    expect(events.at(-1)).toMatchObject({ type: "turn_end", reason: "user_abort", error: { code: "USER_ABORT" } });
    // Far below the 29 s sleep (bounded generously: the machine is shared).
    expect(took).toBeLessThan(15_000);
    await until(() => !running(command), "the sleep to be killed", 15_000);
    await until(async () => (await listRuns({ database: db.url })).find((r) => r.runId === ids.runId)?.status === "finished", "the run's row to be finished");
    expect((await listRuns({ database: db.url })).find((r) => r.runId === ids.runId)).toMatchObject({ status: "finished", reason: "user_abort" });
    const trace = (await readLines({ database: db.url, sessionId: ids.sessionId, stream: "trace" })).map((l) => JSON.parse(l) as { kind: string; state?: string });
    expect(trace.filter((l) => l.state === "done")).toEqual([expect.objectContaining({ kind: "state", details: expect.objectContaining({ reason: "user_abort", toolCalls: 1 }) })]);
    // As a local abort records it: the call stopped, said to the conversation a later run goes on from.
    const transcript = (await readLines({ database: db.url, sessionId: ids.sessionId, stream: "transcript" })).map((l) => JSON.parse(l) as { type: string; message?: { role: string; content: string } });
    const messages = transcript.filter((e) => e.type === "message").map((e) => e.message!);
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
    expect(messages[2]).toMatchObject({ isError: true, content: expect.stringContaining("user_abort") });
    await expect(abortRun({ database: db.url, ...ids })).rejects.toMatchObject({ code: "RUN_ENDED" });
  }, 120_000);

  it("a queued run never starts: it ends user_abort at once, and the session's later run still runs after it", async () => {
    const release = join(ws.counters, "release");
    const holder = await enqueueRun(JSON.stringify({ tag: "holder", calls: [["hold", { tag: "holder" }]], text: "held" }), { database: db.url });
    await until(() => ws.log("hold-abort-1.log").includes("start holder"), "the holder to take the worker's one slot");
    const queued = await enqueueRun(JSON.stringify({ tag: "never", calls: [["count", { tag: "never" }]], text: "never ran" }), { database: db.url, sessionId: "queued-session" });
    const later = await enqueueRun(JSON.stringify({ tag: "later", calls: [], text: "later ran" }), { database: db.url, sessionId: "queued-session" });
    expect((await listRuns({ database: db.url })).find((r) => r.runId === queued.runId)?.status).toBe("queued");
    expect(await abortRun({ database: db.url, ...queued })).toEqual({ status: "finished" });
    // Its followers see it end now, while the worker is still busy with the holder.
    const events = await eventsOf(db.url, queued);
    expect(events).toEqual([expect.objectContaining({ type: "turn_end", reason: "user_abort", sessionId: "queued-session", turns: 0, toolCalls: 0, error: { code: "USER_ABORT", message: expect.stringContaining("before it started") } })]);
    expect(ws.log("hold-abort-1.log")).not.toContain("end holder");
    writeFileSync(release, "");
    const rest = await eventsOf(db.url, later);
    expect(rest.at(-1)).toMatchObject({ type: "turn_end", reason: "final_answer" });
    expect((await eventsOf(db.url, holder)).at(-1)).toMatchObject({ type: "turn_end", reason: "final_answer" });
    // The aborted run's workflow was taken by the worker (it is done) and ran nothing: no model call, no tool.
    await until(async () => (await sql<{ status: string }>(db.url, `SELECT status FROM dbos.workflow_status WHERE workflow_uuid = $1`, [queued.runId]))[0]?.status === "SUCCESS", "the aborted run's workflow to be done");
    expect(ws.log("model.log").filter((l) => l.startsWith("never "))).toEqual([]);
    expect(ws.log("tool.log").filter((l) => l.startsWith("never "))).toEqual([]);
    expect((await listRuns({ database: db.url })).find((r) => r.runId === queued.runId)).toMatchObject({ status: "finished", reason: "user_abort" });
    expect(await readLines({ database: db.url, sessionId: "queued-session", stream: "transcript" }).then((lines) => lines.some((l) => l.includes("never ran")))).toBe(false);
  }, 120_000);

  it("a suspended run is resumed and stopped before it asks again: user_abort, its write never run; then answers and aborts are refused", async () => {
    const ids = await enqueueRun(JSON.stringify({ tag: "asker", calls: [["edit", { tag: "asker" }]], text: "edited" }), { database: db.url });
    await seen(db.url, ids, "suspended");
    // Marked suspended just after its event is written (the abort of a run still being marked is the next test's).
    await until(async () => (await listRuns({ database: db.url, status: ["suspended"] })).some((r) => r.runId === ids.runId), "the run to be marked suspended");
    expect(await abortRun({ database: db.url, ...ids, abortedBy: "the test" })).toEqual({ status: "resuming" });
    const events = await eventsOf(db.url, ids);
    const suspendedAt = events.findIndex((e) => e.type === "suspended");
    expect(suspendedAt).toBeGreaterThan(0);
    expect(events.slice(suspendedAt + 1).some((e) => e.type === "permission_request" || e.type === "suspended")).toBe(false);
    expect(events.at(-1)).toMatchObject({ type: "turn_end", reason: "user_abort" });
    expect(ws.log("tool.log").filter((l) => l.startsWith("asker "))).toEqual([]);
    await until(async () => (await listRuns({ database: db.url })).find((r) => r.runId === ids.runId)?.status === "finished", "the run's row to be finished");
    expect((await listRuns({ database: db.url })).find((r) => r.runId === ids.runId)).toMatchObject({ reason: "user_abort" });
    const stored = await sql(db.url, "SELECT 1 FROM statecraft.stored_runs WHERE session_id = $1", [ids.sessionId]);
    expect(stored).toEqual([]);
    await expect(answer({ database: db.url, ...ids, answers: {} })).rejects.toMatchObject({ code: "RUN_NOT_FOUND" });
    await expect(abortRun({ database: db.url, ...ids })).rejects.toMatchObject({ code: "RUN_ENDED", message: expect.stringContaining("user_abort") });
  }, 120_000);

  it("an abort asked for as a run reaches its question, before it is marked suspended, still ends it user_abort", async () => {
    // The window: the piece wrote its suspended event (its worker no longer watching for aborts) and waits for the
    // session's lock to mark the run suspended. The test holds that lock, and records the request as abortRun does
    // for a run it finds running; the worker's end, let go, must act on it.
    // The model's answer waits at a gate the test opens once it holds the lock, so the piece can't reach its end first.
    const ids = await enqueueRun(JSON.stringify({ tag: "race", calls: [["edit", { tag: "race" }]], text: "edited", gateModelAt: 0 }), { database: db.url, sessionId: "race-session" });
    await until(async () => ws.log("model.log").some((l) => l.startsWith("race 0 ")), "the model to be asked");
    const lock = new pg.Client({ connectionString: db.url });
    await lock.connect();
    try {
      await lock.query("BEGIN");
      await lock.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 18))", ["race-session"]);
      writeFileSync(join(ws.counters, "race.gate"), "");
      await seen(db.url, ids, "suspended");
      expect((await lock.query<{ status: string }>("SELECT status FROM statecraft.runs WHERE run_id = $1", [ids.runId])).rows[0]!.status).toBe("running");
      await lock.query("INSERT INTO statecraft.aborts (run_id, session_id, requested_at) VALUES ($1, $2, $3)", [ids.runId, ids.sessionId, Date.now()]);
      await lock.query("COMMIT");
    } finally {
      await lock.end();
    }
    expect((await eventsOf(db.url, ids)).at(-1)).toMatchObject({ type: "turn_end", reason: "user_abort" });
    await until(async () => (await listRuns({ database: db.url })).find((r) => r.runId === ids.runId)?.status === "finished", "the run to be finished");
    expect((await listRuns({ database: db.url })).find((r) => r.runId === ids.runId)).toMatchObject({ reason: "user_abort" });
    expect(ws.log("tool.log").filter((l) => l.startsWith("race "))).toEqual([]);
  }, 120_000);

  it("a run waiting behind the session's suspended run ends at once and never runs; the suspended one is aborted after it", async () => {
    const first = await enqueueRun(JSON.stringify({ tag: "blocker", calls: [["edit", { tag: "blocker" }]], text: "edited" }), { database: db.url, sessionId: "waiting-session" });
    await until(async () => (await listRuns({ database: db.url, status: ["suspended"] })).some((r) => r.runId === first.runId), "the first run to be suspended");
    const behind = await enqueueRun(JSON.stringify({ tag: "behind", calls: [["count", { tag: "behind" }]], text: "counted" }), { database: db.url, sessionId: "waiting-session" });
    await until(async () => (await listRuns({ database: db.url })).find((r) => r.runId === behind.runId)?.status === "waiting", "the second run to wait its turn");
    expect(await abortRun({ database: db.url, ...behind })).toEqual({ status: "finished" });
    expect(await eventsOf(db.url, behind)).toEqual([expect.objectContaining({ type: "turn_end", reason: "user_abort", turns: 0 })]);
    expect(await abortRun({ database: db.url, ...first })).toEqual({ status: "resuming" });
    expect((await eventsOf(db.url, first)).at(-1)).toMatchObject({ type: "turn_end", reason: "user_abort" });
    await until(async () => (await listRuns({ database: db.url })).filter((r) => r.sessionId === "waiting-session").every((r) => r.status === "finished"), "both runs to be finished");
    expect(ws.log("model.log").filter((l) => l.startsWith("behind "))).toEqual([]);
    expect(ws.log("tool.log").filter((l) => l.startsWith("behind ") || l.startsWith("blocker "))).toEqual([]);
  }, 120_000);

  it("bad input is refused, naming what was wrong", async () => {
    await expect(abortRun(undefined as never)).rejects.toMatchObject({ code: "INVALID_OPTIONS", message: expect.stringContaining("{ database, sessionId, runId }") });
    await expect(abortRun({ database: db.url, sessionId: "s" } as never)).rejects.toMatchObject({ code: "INVALID_OPTIONS", message: expect.stringContaining("runId") });
    await expect(abortRun({ database: db.url, sessionId: "s", runId: "r", abortedBy: 3 as never })).rejects.toMatchObject({ code: "INVALID_OPTIONS", message: expect.stringContaining("abortedBy") });
    await expect(abortRun({ database: db.url, sessionId: "no-such-session", runId: "no-such-run" })).rejects.toMatchObject({ code: "RUN_NOT_FOUND" });
    await expect(abortRun({ database: "mysql://x", sessionId: "s", runId: "r" })).rejects.toMatchObject({ code: "INVALID_OPTIONS", message: expect.stringContaining("PostgreSQL URL") });
  });
});
