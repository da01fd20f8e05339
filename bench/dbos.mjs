// statecraft/dbos on one PostgreSQL (docs/scale-out.md): not a timed test, a measurement for docs/performance.md.
//   throughput  N scripted runs of 5 instant steps (4 tool calls and a final answer) with 1, 2 and 4 worker processes
//               (concurrency 8 each), against the same runs through query() in one process (trace on)
//   writes      PostgreSQL rows inserted and bytes the database grew by, per step
//   recovery    a worker SIGKILLed with runs in a tool: time until another finishes them, automatic (heartbeat,
//               deadAfterMs 10 s) and with recoverRuns() called at once
// Usage: npm run build && eval "$(scripts/postgres.sh start)" && node bench/dbos.mjs [N=1000] [workers=1,2,4]
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { defineTool, query } from "../dist/index.js";
import { closeClients, enqueueRun, recoverRuns, turnScript } from "../dist/dbos/index.js";

const server = process.env.STATECRAFT_TEST_DATABASE_URL;
if (!server) {
  console.error('bench/dbos.mjs needs a PostgreSQL: eval "$(scripts/postgres.sh start)" first (STATECRAFT_TEST_DATABASE_URL)');
  process.exit(2);
}
const N = Number(process.argv[2] ?? 1000);
const WORKERS = (process.argv[3] ?? "1,2,4").split(",").map(Number);
const STEPS = 5;
const CONCURRENCY = 8;

async function sql(url, text, values = []) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(text, values)).rows;
  } finally {
    await c.end();
  }
}

async function freshDatabase() {
  const name = `bench_${Math.random().toString(36).slice(2, 10)}`;
  await sql(server, `CREATE DATABASE ${name}`);
  const url = new URL(server);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => sql(server, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

function startWorker(config) {
  const child = spawn(process.execPath, [join(import.meta.dirname, "dbos", "worker.mjs"), JSON.stringify(config)], { stdio: ["ignore", "ignore", "inherit"] });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  return {
    child,
    ready: async () => {
      while (!existsSync(join(config.cwd, `${config.id}.ready`))) {
        if (child.exitCode !== null) throw new Error(`worker ${config.id} exited`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    stop: async () => {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    },
    kill: async () => {
      if (child.exitCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}

async function until(check) {
  while (!(await check())) await new Promise((r) => setTimeout(r, 100));
}

const finished = async (url, n) => (await sql(url, "SELECT count(*)::int AS n FROM statecraft.runs WHERE status = 'finished'"))[0].n >= n;
const written = async (url) => {
  const [rows] = await sql(url, "SELECT coalesce(sum(n_tup_ins), 0)::bigint AS rows, pg_database_size(current_database())::bigint AS bytes FROM pg_stat_user_tables");
  return { rows: Number(rows.rows), bytes: Number(rows.bytes) };
};

async function enqueueAll(url, n) {
  const ids = [];
  for (let i = 0; i < n; i += 20) {
    ids.push(...(await Promise.all(Array.from({ length: Math.min(20, n - i) }, (_, j) => enqueueRun(`run ${i + j}`, { database: url })))));
  }
  return ids;
}

async function throughput(workers) {
  const db = await freshDatabase();
  const cwd = mkdtempSync(join(tmpdir(), "statecraft-bench-dbos-"));
  try {
    const started = Array.from({ length: workers }, (_, i) => startWorker({ database: db.url, id: `bench-${i}`, concurrency: CONCURRENCY, cwd }));
    await Promise.all(started.map((w) => w.ready()));
    // Tables made by the workers: what follows is what the runs write. Pause the statistics' collector by reading them.
    await new Promise((r) => setTimeout(r, 1000));
    const before = await written(db.url);
    const t0 = performance.now();
    await enqueueAll(db.url, N);
    const queuedMs = performance.now() - t0;
    await until(() => finished(db.url, N));
    const ms = performance.now() - t0;
    await Promise.all(started.map((w) => w.stop()));
    await closeClients();
    // The statistics reach pg_stat_user_tables within a second of the writes.
    await new Promise((r) => setTimeout(r, 1500));
    const after = await written(db.url);
    return { workers, runs: N, ms, queuedMs, runsPerSecond: N / (ms / 1000), msPerStep: ms / (N * STEPS), rowsPerStep: (after.rows - before.rows) / (N * STEPS), bytesPerStep: (after.bytes - before.bytes) / (N * STEPS) };
  } finally {
    await closeClients();
    await db.drop();
    rmSync(cwd, { recursive: true, force: true });
  }
}

async function inProcess() {
  const cwd = mkdtempSync(join(tmpdir(), "statecraft-bench-inproc-"));
  try {
    const tick = defineTool({ name: "tick", description: "Does nothing.", risk: "read", inputSchema: { type: "object" }, execute: () => "ok" });
    const steps = [...Array.from({ length: 4 }, () => ({ toolCalls: [{ name: "tick", input: {} }] })), { text: "done" }];
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: N }, async (_, i) => {
        for await (const _event of query(`run ${i}`, { model: turnScript(steps), tools: [tick], cwd })) {
          // drained
        }
      }),
    );
    const ms = performance.now() - t0;
    return { runs: N, ms, runsPerSecond: N / (ms / 1000), msPerStep: ms / (N * STEPS) };
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}

async function recovery(mode) {
  const db = await freshDatabase();
  const cwd = mkdtempSync(join(tmpdir(), "statecraft-bench-dbos-"));
  try {
    const a = startWorker({ database: db.url, id: "doomed", concurrency: CONCURRENCY, cwd, hang: true });
    await a.ready();
    const b = startWorker({ database: db.url, id: "survivor", concurrency: CONCURRENCY, cwd, hang: false });
    await b.ready();
    // The survivor's queue slots are taken by the doomed worker's runs only once they come back: give a's the work.
    await b.stop();
    await enqueueAll(db.url, CONCURRENCY);
    await until(async () => (await sql(db.url, "SELECT count(*)::int AS n FROM statecraft.lines WHERE stream = 'events' AND line LIKE '%\"tool_start\"%'"))[0].n >= CONCURRENCY);
    const c = startWorker({ database: db.url, id: "survivor-2", concurrency: CONCURRENCY, cwd, hang: false });
    await c.ready();
    const t0 = performance.now();
    await a.kill();
    if (mode === "recoverRuns") await recoverRuns({ database: db.url, fromWorker: "doomed" });
    await until(() => finished(db.url, CONCURRENCY));
    const ms = performance.now() - t0;
    await c.stop();
    return { mode, runs: CONCURRENCY, ms };
  } finally {
    await closeClients();
    await db.drop();
    rmSync(cwd, { recursive: true, force: true });
  }
}

const results = { throughput: [], inProcess: undefined, recovery: [] };
results.inProcess = await inProcess();
console.log("in-process", results.inProcess);
for (const w of WORKERS) {
  const r = await throughput(w);
  results.throughput.push(r);
  console.log("workers", r);
}
for (const mode of ["recoverRuns", "automatic"]) {
  const r = await recovery(mode);
  results.recovery.push(r);
  console.log("recovery", r);
}
console.log(JSON.stringify(results, null, 2));
