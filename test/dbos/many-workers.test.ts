import { afterAll, beforeAll, expect, it } from "vitest";
import { closeClients, enqueueRun, listRuns, watch } from "../../src/dbos/index.js";
import type { AgentEvent } from "../../src/index.js";
import { AgentError } from "../../src/index.js";
import { describeWithDatabase, freshDatabase, plan, spawnWorker, sql, until, workspace, type SpawnedWorker } from "./support.js";

describeWithDatabase("statecraft/dbos: many workers on one database", () => {
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  let ws: ReturnType<typeof workspace>;
  const workers: SpawnedWorker[] = [];

  beforeAll(async () => {
    db = await freshDatabase();
    ws = workspace();
    // Started together on a fresh database: the migration is serialised, so none of them crashes.
    workers.push(
      ...(await Promise.all(["w1", "w2", "w3"].map((id) => spawnWorker({ database: db.url, id, cwd: ws.cwd, counters: ws.counters, concurrency: 8 })))),
    );
  }, 120_000);

  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await closeClients();
    await db?.drop();
    ws?.cleanup();
  }, 60_000);

  it("runs 200 queued runs exactly once each, spread over the workers", async () => {
    const runs = [];
    for (let i = 0; i < 200; i++) runs.push(await enqueueRun(plan(`r${i}`, [["count"]]), { database: db.url }));
    await until(async () => (await sql(db.url, "SELECT count(*)::int AS n FROM statecraft.runs WHERE status = 'finished'"))[0].n === 200, "200 finished runs", 120_000);
    const models = ws.log("model.log").map((l) => l.split(" "));
    const tools = ws.log("tool.log").map((l) => l.split(" "));
    for (let i = 0; i < 200; i++) {
      // Two model calls (the tool call, the answer) and one tool run per run: nothing repeated, nothing lost.
      expect(models.filter((m) => m[0] === `r${i}`).map((m) => m[1])).toEqual(["0", "1"]);
      expect(tools.filter((t) => t[0] === `r${i}`)).toHaveLength(1);
    }
    const byWorker = new Set(models.map((m) => m[3]));
    expect(byWorker.size).toBeGreaterThan(1);
    const listed = await listRuns({ database: db.url });
    expect(listed.filter((r) => r.status === "finished" && r.reason === "final_answer")).toHaveLength(200);
    // A late client gets a finished run's whole stream from the database.
    const events: AgentEvent[] = [];
    for await (const event of watch({ database: db.url, ...runs[17] })) events.push(event);
    expect(events[0]).toMatchObject({ type: "state", state: "build_context" });
    expect(events.filter((e) => e.type === "tool_result")).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ type: "turn_end", reason: "final_answer" });
  }, 150_000);

  it("redacts the worker's secrets in every line it writes to the database, as in files", async () => {
    const ids = await enqueueRun(plan("leaky", [["leak"]]), { database: db.url });
    const events: AgentEvent[] = [];
    for await (const event of watch({ database: db.url, ...ids })) events.push(event);
    const result = events.find((e) => e.type === "tool_result") as Extract<AgentEvent, { type: "tool_result" }>;
    expect(result.result.content).toBe("the key is [REDACTED]");
    const rows = await sql<{ stream: string; line: string }>(db.url, "SELECT stream, line FROM statecraft.lines WHERE run_id = $1", [ids.runId]);
    expect(new Set(rows.map((r) => r.stream))).toEqual(new Set(["trace", "transcript", "audit", "events"]));
    expect(rows.filter((r) => r.line.includes("[REDACTED]")).length).toBeGreaterThan(0);
    const messages = await sql<{ messages: unknown }>(db.url, "SELECT messages FROM statecraft.runs WHERE run_id = $1", [ids.runId]);
    for (const text of [...rows.map((r) => r.line), JSON.stringify(messages)]) expect(text).not.toContain("sk-fixture-0123456789abcdef");
  }, 60_000);

  it("runs one session's runs one at a time, in order; wait: false refuses a busy session", async () => {
    const sessionId = "serial-session";
    const ids = [];
    for (let i = 0; i < 4; i++) ids.push(await enqueueRun(plan(`s${i}`, [["count"]], { modelMs: 150 }), { database: db.url, sessionId }));
    const refused = await enqueueRun(plan("sx", []), { database: db.url, sessionId, wait: false }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(AgentError);
    expect((refused as AgentError).code).toBe("SESSION_BUSY");
    await until(async () => (await sql(db.url, "SELECT count(*)::int AS n FROM statecraft.runs WHERE session_id = $1 AND status = 'finished'", [sessionId]))[0].n === 4, "4 finished runs");
    const span = (tag: string) => {
      const times = [...ws.log("model.log"), ...ws.log("tool.log")].map((l) => l.split(" ")).filter((p) => p[0] === tag).map((p) => Number(p[p.length - 2]));
      return [Math.min(...times), Math.max(...times)];
    };
    for (let i = 1; i < 4; i++) expect(span(`s${i}`)[0]).toBeGreaterThan(span(`s${i - 1}`)[1]);
    // Each run went on from the session's conversation: the last one saw the earlier prompts.
    // The conversation is kept as its signed text (docs/scale-out.md).
    const rows = await sql<{ messages: { text: string; sig: string } }>(db.url, "SELECT messages FROM statecraft.runs WHERE run_id = $1", [ids[3].runId]);
    expect(rows[0].messages.sig).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
    const conversation = JSON.parse(rows[0].messages.text) as Array<{ role: string; content: string }>;
    expect(conversation.filter((m) => m.role === "user").map((m) => JSON.parse(m.content).tag)).toEqual(["s0", "s1", "s2", "s3"]);
    // Free again: wait: false is taken.
    await expect(enqueueRun(plan("s4", []), { database: db.url, sessionId, wait: false })).resolves.toMatchObject({ sessionId });
  }, 120_000);
});
