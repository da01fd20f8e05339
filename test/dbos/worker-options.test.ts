import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { closeClients, createWorker, enqueueRun, listRuns, recoverRuns, watch } from "../../src/dbos/index.js";
import type { AgentEvent } from "../../src/index.js";
import { describeWithDatabase, freshDatabase, plan, spawnWorker, sql, until, workspace, type SpawnedWorker } from "./support.js";

/** The most "start" lines without their "end" at once, in one worker's hold log. */
function mostAtOnce(lines: string[]): number {
  let now = 0;
  let most = 0;
  for (const line of lines) {
    now += line.startsWith("start ") ? 1 : -1;
    most = Math.max(most, now);
  }
  return most;
}

describeWithDatabase("statecraft/dbos: a worker's own options", () => {
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  let ws: ReturnType<typeof workspace>;
  let running: SpawnedWorker[] = [];
  const dropAfter: Array<{ drop(): Promise<void> }> = [];

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
    for (const other of dropAfter) await other.drop();
  }, 60_000);

  it("each worker honours its own concurrency: 1 and 3 on one database, never more at once, the second reaching 3", async () => {
    ws = workspace();
    const ids = [];
    for (let i = 0; i < 8; i++) ids.push(await enqueueRun(plan(`c${i}`, [["hold"]]), { database: db.url }));
    // The worker of 3 first and the worker of 1 last: under a queue-wide limit the last one's 1 would hold for both.
    running.push(await spawnWorker({ database: db.url, id: "conc-3", cwd: ws.cwd, counters: ws.counters, concurrency: 3 }));
    running.push(await spawnWorker({ database: db.url, id: "conc-1", cwd: ws.cwd, counters: ws.counters, concurrency: 1 }));
    // Both full: 4 runs held at once, the 4 others still queued.
    await until(() => ws.log("hold-conc-3.log").length + ws.log("hold-conc-1.log").length >= 4, "4 runs held");
    const claimed = await sql<{ executor_id: string; n: string }>(db.url, "SELECT executor_id, count(*) AS n FROM dbos.workflow_status WHERE status = 'PENDING' GROUP BY executor_id ORDER BY executor_id");
    expect(claimed.map((r) => [r.executor_id, Number(r.n)])).toEqual([["conc-1", 1], ["conc-3", 3]]);
    // The release is a file the held tools look for.
    writeFileSync(join(ws.counters, "release"), "");
    await until(async () => (await listRuns({ database: db.url, status: ["finished"] })).length === 8, "the 8 runs to finish");
    const one = ws.log("hold-conc-1.log");
    const three = ws.log("hold-conc-3.log");
    expect(one.length + three.length).toBe(16);
    expect(mostAtOnce(one)).toBe(1);
    expect(mostAtOnce(three)).toBe(3);
  }, 180_000);

  it("a worker's tools run without the database's URL, the run key or libpq's variables in their environment", async () => {
    ws = workspace();
    // A database of its own: its workers' key is the one in their environment, not this file's other workers'.
    const own = await freshDatabase();
    dropAfter.push(own);
    const url = new URL(own.url);
    url.password = "pw-of-the-database-9f8e7d";
    const env = {
      ...process.env,
      STATECRAFT_DATABASE_URL: own.url,
      STATECRAFT_RUN_KEY: "the-run-key-of-these-workers-0123456789abcdef",
      PGPASSWORD: "pg-password-5a4b3c",
      PGHOST: "127.0.0.1",
      PGSERVICEFILE: "/nowhere/pg_service.conf",
      APP_DB: url.toString(),
      DBOS_SYSTEM_DATABASE_URL: own.url,
      KEPT_FOR_TOOLS: "kept-value",
    };
    running.push(await spawnWorker({ database: own.url, id: "env-1", cwd: ws.cwd, counters: ws.counters, allow: ["bash"] }, env));
    // Written in the workspace: inside the sandbox the only place a tool's process writes.
    const out = join(ws.cwd, "env.txt");
    const ids = await enqueueRun(JSON.stringify({ tag: "env", calls: [["bash", { command: `env > ${out}` }]], text: "env done" }), { database: own.url });
    const events: AgentEvent[] = [];
    for await (const event of watch({ database: own.url, ...ids })) events.push(event);
    expect(events.at(-1)).toMatchObject({ type: "turn_end", reason: "final_answer" });
    const names = readFileSync(out, "utf8")
      .split("\n")
      .map((l) => l.split("=")[0]);
    expect(names).toContain("KEPT_FOR_TOOLS");
    expect(names).toContain("PATH");
    for (const hidden of ["STATECRAFT_DATABASE_URL", "STATECRAFT_RUN_KEY", "PGPASSWORD", "PGHOST", "PGSERVICEFILE", "APP_DB", "DBOS_SYSTEM_DATABASE_URL", "STATECRAFT_TEST_DATABASE_URL"]) {
      expect(names, hidden).not.toContain(hidden);
    }
    const text = readFileSync(out, "utf8");
    expect(text).not.toContain("pg-password-5a4b3c");
    expect(text).not.toContain("the-run-key-of-these-workers");
    expect(text).not.toMatch(/postgres(ql)?:\/\//);
  }, 120_000);

  it("hooks given to createWorker apply to every run: each call audited before and after, a blocked tool does not run", async () => {
    ws = workspace();
    running.push(await spawnWorker({ database: db.url, id: "hooks-1", cwd: ws.cwd, counters: ws.counters, hooks: true }));
    const ids = await enqueueRun(plan("hk", [["count"], ["edit"]]), { database: db.url });
    const events: AgentEvent[] = [];
    for await (const event of watch({ database: db.url, ...ids })) events.push(event);
    expect(events.at(-1)).toMatchObject({ type: "turn_end", reason: "final_answer" });
    expect(ws.log("hooks.log")).toEqual(["before count hk", "after count hk", "before edit hk"]);
    expect(ws.log("tool.log").map((l) => l.split(" ")[1])).toEqual(["count"]);
    const results = events.filter((e): e is Extract<AgentEvent, { type: "tool_result" }> => e.type === "tool_result");
    expect(results.map((r) => [r.call.name, r.result.content, r.result.isError ?? false])).toEqual([
      ["count", "counted (audited)", false],
      ["edit", expect.stringContaining("edit is blocked by the service"), true],
    ]);
    // A second run gets them too.
    const again = await enqueueRun(plan("hk2", [["count"]]), { database: db.url });
    for await (const event of watch({ database: db.url, ...again })) void event;
    expect(ws.log("hooks.log").slice(3)).toEqual(["before count hk2", "after count hk2"]);
  }, 120_000);

  it("a worker's hooks are not called again by the replay after it was SIGKILLed: each call audited once", async () => {
    ws = workspace();
    const a = await spawnWorker({ database: db.url, id: "hooks-a", cwd: ws.cwd, counters: ws.counters, hooks: true });
    running.push(a);
    const ids = await enqueueRun(plan("hr", [["count"], ["slow"]]), { database: db.url });
    await until(() => existsSync(join(ws.counters, "hr.slow.hung")), "the write tool to hang");
    expect(ws.log("hooks.log")).toEqual(["before count hr", "after count hr", "before slow hr"]);
    await a.kill();
    running.push(await spawnWorker({ database: db.url, id: "hooks-b", cwd: ws.cwd, counters: ws.counters, hooks: true }));
    expect(await recoverRuns({ database: db.url, fromWorker: "hooks-a" })).toContain(ids.runId);
    const events: AgentEvent[] = [];
    for await (const event of watch({ database: db.url, ...ids })) events.push(event);
    expect(events.at(-1)).toMatchObject({ type: "turn_end", reason: "final_answer" });
    // The replay got count's and slow's recorded hook answers back; only slow's result (INTERRUPTED) was new.
    expect(ws.log("hooks.log")).toEqual(["before count hr", "after count hr", "before slow hr", "after slow hr"]);
    const slow = events.filter((e): e is Extract<AgentEvent, { type: "tool_result" }> => e.type === "tool_result").at(-1)!;
    expect(slow.result.content).toMatch(/^INTERRUPTED: slow had started[\s\S]*\(audited\)$/);
  }, 150_000);

  it("refuses permissions.onAsk and unknown hooks, saying what to use instead", () => {
    const base = { database: db.url, model: { name: "m", async *stream() {} } };
    expect(() => createWorker({ ...base, permissions: { onAsk: () => "allow" } } as never)).toThrow(/permissions.onAsk can't be given: .*answer it from any process with answer\(\{ database, sessionId, runId, answers \}\)/);
    expect(() => createWorker({ ...base, hooks: { onAsk: () => "allow" } } as never)).toThrow(/hooks.onAsk is not a hook; the hooks are transformContext, beforeToolCall, .*answered with answer\(\)/);
    expect(() => createWorker({ ...base, hooks: { beforeToolCall: "audit" } } as never)).toThrow(/hooks.beforeToolCall must be a function/);
    expect(() => createWorker({ ...base, runKey: "too short" })).toThrow(/run key from createWorker\(\{ runKey \}\) has 9 characters; give at least 32/);
  });
});
