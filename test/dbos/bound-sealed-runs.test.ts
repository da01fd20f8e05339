import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { answer, closeClients, enqueueRun, listRuns, recoverRuns, watch } from "../../src/dbos/index.js";
import { describeWithDatabase, freshDatabase, plan, spawnWorker, sql, until, workspace, type SpawnedWorker } from "./support.js";

// Holes 3 and 4 on PostgreSQL: a stored run resumes only in the workspace it ran in (a worker of another folder gets
// RUN_DAMAGED, nothing runs), and no secret of a run is kept in the clear in statecraft.stored_runs or in DBOS's
// operation_outputs (the steps' outputs), while the run still resumes exactly.

const SECRETS = ["sk-proj-ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef0123456789", "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghij0123", "s3cr3t-db-password-77"];
const INPUT = { path: "notes.txt", content: `OPENAI_API_KEY=${SECRETS[0]} git push https://${SECRETS[1]}@github.com/x DB_PASSWORD='${SECRETS[2]}'` };

describeWithDatabase("statecraft/dbos: stored runs are bound to their workspace and keep secrets sealed", () => {
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  const workers: SpawnedWorker[] = [];
  const spaces: Array<ReturnType<typeof workspace>> = [];

  beforeAll(async () => {
    db = await freshDatabase();
  }, 60_000);
  afterEach(async () => {
    for (const w of workers.splice(0)) await w.kill();
    for (const ws of spaces.splice(0)) ws.cleanup();
  });
  afterAll(async () => {
    await closeClients();
    await db?.drop();
  }, 60_000);

  const suspended = async (ids: { runId: string }) => {
    await until(async () => (await listRuns({ database: db.url, status: ["suspended"] })).some((r) => r.runId === ids.runId), `run ${ids.runId} to suspend`);
    return (await listRuns({ database: db.url, status: ["suspended"] })).find((r) => r.runId === ids.runId)!;
  };
  const ended = async (ids: { sessionId: string; runId: string }) => {
    let error: { code?: string } | undefined;
    try {
      for await (const _event of watch({ database: db.url, ...ids })) void _event;
    } catch (e) {
      error = e as { code?: string };
    }
    return error;
  };

  it("no secret in the clear in stored_runs or operation_outputs; the run resumes exactly", { timeout: 180_000 }, async () => {
    const ws = workspace();
    spaces.push(ws);
    workers.push(await spawnWorker({ database: db.url, id: "sealed-1", cwd: ws.cwd, counters: ws.counters }));
    const ids = await enqueueRun(plan("sealed", [["edit", INPUT]]), { database: db.url });
    const call = (await suspended(ids)).pending![0];
    const rows = JSON.stringify(await sql(db.url, "SELECT record FROM statecraft.stored_runs"));
    const outputs = JSON.stringify(await sql(db.url, "SELECT output FROM dbos.operation_outputs"));
    expect(rows).toContain("[SEALED:");
    const through = SECRETS.filter((s) => rows.includes(s) || outputs.includes(s));
    expect(through).toEqual([]);
    await answer({ database: db.url, ...ids, answers: { [call.callId]: "allow" } });
    expect(await ended(ids)).toBeUndefined();
    expect(ws.log("tool.log").filter((l) => l.startsWith("sealed edit"))).toHaveLength(1);
    const afterwards = JSON.stringify(await sql(db.url, "SELECT output FROM dbos.operation_outputs"));
    expect(SECRETS.filter((s) => afterwards.includes(s))).toEqual([]);
  });

  it("a suspended run answered while only a worker of another workspace serves the queue is RUN_DAMAGED, nothing runs", { timeout: 180_000 }, async () => {
    const home = workspace();
    const other = workspace();
    spaces.push(home, other);
    const first = await spawnWorker({ database: db.url, id: "bound-1", cwd: home.cwd, counters: home.counters });
    const ids = await enqueueRun(plan("bound", [["edit", { path: "a.txt" }]]), { database: db.url });
    const call = (await suspended(ids)).pending![0];
    // The piece that suspended is over (DBOS has its end) before its worker goes: this test is about a stored run, not
    // a piece taken over (the next test).
    await until(async () => (await sql(db.url, "SELECT 1 FROM dbos.workflow_status WHERE status NOT IN ('SUCCESS', 'ERROR')")).length === 0, "the suspended piece's workflow to end");
    await first.kill();
    workers.push(await spawnWorker({ database: db.url, id: "bound-2", cwd: other.cwd, counters: other.counters }));
    await answer({ database: db.url, ...ids, answers: { [call.callId]: "allow" } });
    const error = await ended(ids);
    expect(error).toMatchObject({ code: "RUN_DAMAGED" });
    expect((error as { message?: string }).message).toMatch(/it is the run of workspace .*, found in workspace/);
    expect(other.log("tool.log").filter((l) => l.startsWith("bound edit"))).toEqual([]);
    expect(home.log("tool.log").filter((l) => l.startsWith("bound edit"))).toEqual([]);
  });

  it("a piece begun in one workspace and taken over by a worker of another is RUN_DAMAGED: it does not go on there", { timeout: 180_000 }, async () => {
    const home = workspace();
    const other = workspace();
    spaces.push(home, other);
    const first = await spawnWorker({ database: db.url, id: "moved-1", cwd: home.cwd, counters: home.counters });
    // The first worker dies in the model call that would ask for the edit; its piece is handed to the other worker.
    const ids = await enqueueRun(plan("moved", [["count"], ["edit", { path: "b.txt" }]], { hangModelAt: 1 }), { database: db.url });
    await until(() => home.log("model.log").some((l) => l.startsWith("moved 1 ")), "the first worker's second model call");
    await first.kill();
    workers.push(await spawnWorker({ database: db.url, id: "moved-2", cwd: other.cwd, counters: other.counters }));
    expect(await recoverRuns({ database: db.url, fromWorker: "moved-1" })).toHaveLength(1);
    const error = await ended(ids);
    expect(error).toMatchObject({ code: "RUN_DAMAGED" });
    expect((error as { message?: string }).message).toMatch(/was begun by a worker of workspace .* and can't go on in workspace/);
    expect(other.log("tool.log")).toEqual([]);
    expect(other.log("model.log")).toEqual([]);
    expect(home.log("tool.log").filter((l) => l.startsWith("moved edit"))).toEqual([]);
  });
});
