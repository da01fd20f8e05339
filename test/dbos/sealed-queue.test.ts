import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { answer, closeClients, enqueueRun, listRuns, watch } from "../../src/dbos/index.js";
import { describeWithDatabase, freshDatabase, plan, spawnWorker, sql, until, workspace, type SpawnedWorker } from "./support.js";

// Issue 28, secrets at rest: a queued run's prompt and options (statecraft.runs.input/options, DBOS's workflow inputs)
// and a suspended run's pending calls (statecraft.runs.pending, the workflow's output) keep their secrets only
// sealed. Attacked by putting secrets in a queued run and reading every table of the database as text; the worker
// still runs the run exactly, and whoever holds the run key is shown the pending call as it would run.

const ENV_NAME = "SEALQ_SERVICE_TOKEN";
const ENV_SECRET = "envtok-5f1c9a2b7d3e4f60a1b2c3d4";
const PROMPT_KEY = "sk-proj-QUEUEDabcdefghijklmnopqrstuvwxyz0123456789";
const CALL_TOKEN = "ghp_QUEUEDABCDEFGHIJKLMNOPQRSTUVWXYZ0123456";
const SYSTEM_PASSWORD = "pw-system-prompt-31337-secret";
// The worker fixture's own environment secret, which its `leak` tool returns (a token in a tool result).
const TOOL_SECRET = "sk-fixture-0123456789abcdef";
const SECRETS = [ENV_SECRET, PROMPT_KEY, CALL_TOKEN, SYSTEM_PASSWORD, TOOL_SECRET];

/** Every row of every table (DBOS's and statecraft's included) as text. */
async function everyTable(url: string): Promise<string> {
  const tables = await sql<{ s: string; t: string }>(
    url,
    "SELECT table_schema AS s, table_name AS t FROM information_schema.tables WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')",
  );
  expect(tables.map((t) => `${t.s}.${t.t}`)).toEqual(expect.arrayContaining(["statecraft.runs", "statecraft.stored_runs", "dbos.workflow_status", "dbos.operation_outputs"]));
  const texts: string[] = [];
  for (const { s, t } of tables) {
    const rows = await sql<{ row: string }>(url, `SELECT x::text AS row FROM "${s}"."${t}" x`);
    texts.push(...rows.map((r) => r.row));
  }
  return texts.join("\n");
}

describeWithDatabase("statecraft/dbos: a queued run keeps its secrets sealed at rest", () => {
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  const workers: SpawnedWorker[] = [];
  const spaces: Array<ReturnType<typeof workspace>> = [];

  beforeAll(async () => {
    db = await freshDatabase();
    process.env[ENV_NAME] = ENV_SECRET;
  }, 60_000);
  afterEach(async () => {
    for (const w of workers.splice(0)) await w.kill();
    for (const ws of spaces.splice(0)) ws.cleanup();
  });
  afterAll(async () => {
    delete process.env[ENV_NAME];
    await closeClients();
    await db?.drop();
  }, 60_000);

  it("no table holds a secret of the queued prompt, options, pending call or tool result; the run runs exactly", { timeout: 180_000 }, async () => {
    const ws = workspace();
    spaces.push(ws);
    // The tag is in every call's input and every tool's log line: the worker's model read the prompt unsealed.
    const tag = `q-${PROMPT_KEY}`;
    const prompt = plan(tag, [["leak"], ["edit", { content: `git push https://${CALL_TOKEN}@github.com/x` }]], { note: `OPENAI_API_KEY=${PROMPT_KEY} and $${ENV_NAME}=${ENV_SECRET}` });
    // Queued before any worker started: sealed to the public key of the caller's run key (the same session key).
    const ids = await enqueueRun(prompt, { database: db.url, systemPrompt: `You may use DB_PASSWORD='${SYSTEM_PASSWORD}' and ${ENV_SECRET}` });
    const queued = await everyTable(db.url);
    expect(queued).toContain("[SEALED:");
    expect(SECRETS.filter((s) => queued.includes(s))).toEqual([]);

    workers.push(await spawnWorker({ database: db.url, id: "sealq-1", cwd: ws.cwd, counters: ws.counters }, { ...process.env, [ENV_NAME]: ENV_SECRET }));
    await until(async () => (await listRuns({ database: db.url, status: ["suspended"] })).some((r) => r.runId === ids.runId), `run ${ids.runId} to suspend`);
    const suspended = await everyTable(db.url);
    expect(SECRETS.filter((s) => suspended.includes(s))).toEqual([]);
    const [row] = await sql<{ pending: string }>(db.url, "SELECT pending::text FROM statecraft.runs WHERE run_id = $1", [ids.runId]);
    expect(row!.pending).toContain("[SEALED:");

    // Whoever holds the run key sees what would run, exactly: the call's input and the prompt unsealed.
    const listed = (await listRuns({ database: db.url, status: ["suspended"] })).find((r) => r.runId === ids.runId)!;
    expect(listed.input).toBe(prompt);
    const call = listed.pending![0]!;
    expect(call).toMatchObject({ name: "edit", input: { tag, content: `git push https://${CALL_TOKEN}@github.com/x` } });

    await answer({ database: db.url, ...ids, answers: { [call.callId]: "allow" } });
    for await (const _event of watch({ database: db.url, ...ids })) void _event;
    expect(ws.log("tool.log").filter((l) => l.startsWith(`${tag} edit `))).toHaveLength(1);
    const finished = await everyTable(db.url);
    expect(SECRETS.filter((s) => finished.includes(s))).toEqual([]);
  });

  it("a queued input whose sealed secret was edited runs nothing: RUN_DAMAGED", { timeout: 180_000 }, async () => {
    const ws = workspace();
    spaces.push(ws);
    workers.push(await spawnWorker({ database: db.url, id: "sealq-2", cwd: ws.cwd, counters: ws.counters }));
    // Held by the worker's queue until its own run key opens it: edit the stored token first, with no worker polling.
    await workers.pop()!.kill();
    const ids = await enqueueRun(plan("edited", [["count"]], { note: `OPENAI_API_KEY=${PROMPT_KEY}` }), { database: db.url });
    const flipped = (text: string) => text.replace(/\[SEALED:([0-9a-f]{10})([0-9a-f])/, (_m, head: string, c: string) => `[SEALED:${head}${c === "0" ? "1" : "0"}`);
    const [before] = await sql<{ input: string }>(db.url, "SELECT input FROM statecraft.runs WHERE run_id = $1", [ids.runId]);
    expect(before!.input).toContain("[SEALED:");
    // DBOS keeps a queued workflow's inputs in dbos.workflow_input (its own table since DBOS 4).
    const [queued] = await sql<{ inputs: string }>(db.url, "SELECT inputs FROM dbos.workflow_input WHERE workflow_uuid LIKE $1", [`%${ids.runId}%`]);
    expect(queued!.inputs).toContain("[SEALED:");
    await sql(db.url, "UPDATE dbos.workflow_input SET inputs = $2 WHERE workflow_uuid LIKE $1", [`%${ids.runId}%`, flipped(queued!.inputs)]);
    workers.push(await spawnWorker({ database: db.url, id: "sealq-3", cwd: ws.cwd, counters: ws.counters }));
    let error: { code?: string; message?: string } | undefined;
    try {
      for await (const _event of watch({ database: db.url, ...ids })) void _event;
    } catch (e) {
      error = e as { code?: string };
    }
    expect(error).toMatchObject({ code: "RUN_DAMAGED" });
    expect(error!.message).toMatch(/queued input or options .* can't be opened/);
    expect(ws.log("tool.log").filter((l) => l.startsWith("edited "))).toEqual([]);
  });
});
