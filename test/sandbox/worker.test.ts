import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { closeClients, enqueueRun, watch } from "../../src/dbos/index.js";
import type { AgentEvent } from "../../src/index.js";
import { describeWithDatabase, freshDatabase, spawnWorker, until, workspace, type SpawnedWorker } from "../dbos/support.js";

// Hole 5: a worker's tools reading its database URL and password. A real worker on a real PostgreSQL, whose URL (with
// a password: the test server trusts any) is in its environment, its command line and libpq's variables; the agent's
// bash, allowed outright, looks for it everywhere it could be.

const PASSWORD = "pw-LEAK-of-the-database-7c6b";
const cli = join(import.meta.dirname, "..", "..", "dist", "cli", "main.js");

const PAYLOADS = [
  "env",
  "cat /proc/$PPID/environ | tr '\\0' '\\n'",
  "cat /proc/$PPID/cmdline | tr '\\0' ' '",
  "for p in /proc/[0-9]*; do tr '\\0' '\\n' < $p/environ; tr '\\0' ' ' < $p/cmdline; done 2>/dev/null",
  "ps -eww -o pid,args",
  "node -e 'console.log(JSON.stringify(process.env))'",
];

const resultsOf = (events: AgentEvent[]) => events.flatMap((e) => (e.type === "tool_result" ? [{ command: (e.call.input as { command: string }).command, content: e.result.content }] : []));

describeWithDatabase("a DBOS worker's tools, sandboxed", () => {
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  let url: string;
  let ws: ReturnType<typeof workspace>;
  let running: SpawnedWorker[] = [];
  let cliWorker: ChildProcess | undefined;

  beforeAll(async () => {
    db = await freshDatabase();
    const withPassword = new URL(db.url);
    withPassword.password = PASSWORD;
    url = withPassword.toString();
  }, 60_000);
  afterEach(async () => {
    await Promise.all(running.map((w) => w.kill()));
    running = [];
    if (cliWorker && cliWorker.exitCode === null) cliWorker.kill("SIGKILL");
    ws?.cleanup();
  });
  afterAll(async () => {
    await closeClients();
    await db?.drop();
  }, 60_000);

  it("cannot see the database URL or password: not in its environment, not in the worker's /proc, not in ps", async () => {
    ws = workspace();
    const env = { ...process.env, STATECRAFT_DATABASE_URL: url, PGPASSWORD: PASSWORD, DATABASE_URL: url };
    const worker = await spawnWorker({ database: url, id: "sandboxed-1", cwd: ws.cwd, counters: ws.counters, allow: ["bash"] }, env);
    running.push(worker);
    // The worker's own /proc shows it, to a process outside the sandbox: what the sandbox keeps the tools from.
    expect(readFileSync(`/proc/${worker.child.pid}/cmdline`, "utf8")).toContain(PASSWORD);
    const payloads = [...PAYLOADS, `cat /proc/${worker.child.pid}/environ /proc/${worker.child.pid}/cmdline | tr '\\0' ' '`];
    const ids = await enqueueRun(JSON.stringify({ tag: "leak", calls: payloads.map((command) => ["bash", { command }]), text: "looked" }), { database: url, maxToolCalls: payloads.length, maxTurns: payloads.length + 1 });
    const events: AgentEvent[] = [];
    for await (const event of watch({ database: url, ...ids })) events.push(event);
    expect(events.at(-1)).toMatchObject({ type: "turn_end", reason: "final_answer" });
    const results = resultsOf(events);
    expect(results).toHaveLength(payloads.length);
    // The commands ran (the sandbox is no refusal to run): env printed the environment the tools get.
    expect(results[0].content).toContain("PATH=");
    expect(results.filter((r) => r.content.includes("LEAK") || /postgres(ql)?:\/\//.test(r.content)).map((r) => r.command)).toEqual([]);
  }, 180_000);

  it("statecraft worker --database-file: the URL is in no command line and no environment, and the file is hidden from the tools", async () => {
    ws = workspace();
    // In the workspace itself, where the tools may otherwise read and write: hidden all the same.
    const file = join(ws.cwd, "database-url");
    writeFileSync(file, `${url}\n`, { mode: 0o600 });
    const script = join(ws.counters, "script.json");
    const payloads = [...PAYLOADS, `cat ${file}`, "cat database-url", "grep -r LEAK ."];
    writeFileSync(script, JSON.stringify([{ toolCalls: payloads.map((command) => ({ name: "bash", input: { command } })) }, { text: "looked" }]));
    const env = { ...process.env };
    delete env.STATECRAFT_DATABASE_URL;
    cliWorker = spawn(process.execPath, [cli, "worker", "--database-file", file, "--id", "cli-file-1", "--tools", "builtin", "--permission-mode", "bypassPermissions", "--max-tool-calls", String(payloads.length), "--model", `script:${script}`, "-C", ws.cwd], { stdio: ["ignore", "pipe", "pipe"], env });
    let out = "";
    cliWorker.stdout!.on("data", (d: Buffer) => (out += d.toString()));
    cliWorker.stderr!.on("data", (d: Buffer) => (out += d.toString()));
    await until(() => /takes runs/.test(out), `the worker to take runs:\n${out}`);
    const pid = cliWorker.pid!;
    expect(readFileSync(`/proc/${pid}/cmdline`, "utf8")).not.toContain(PASSWORD);
    expect(readFileSync(`/proc/${pid}/environ`, "utf8")).not.toContain(PASSWORD);
    const ids = await enqueueRun("look", { database: url, maxToolCalls: payloads.length });
    const events: AgentEvent[] = [];
    for await (const event of watch({ database: url, ...ids })) events.push(event);
    expect(events.at(-1)).toMatchObject({ type: "turn_end", reason: "final_answer" });
    const results = resultsOf(events);
    expect(results).toHaveLength(payloads.length);
    // The commands ran (the sandbox is no refusal to run): env printed the environment the tools get.
    expect(results[0].content).toContain("PATH=");
    expect(results.filter((r) => r.content.includes("LEAK") || /postgres(ql)?:\/\//.test(r.content)).map((r) => r.command)).toEqual([]);
  }, 180_000);

  it("statecraft worker --database <url>: the URL is wiped from the worker's command line once read", async () => {
    ws = workspace();
    const script = join(ws.counters, "script.json");
    writeFileSync(script, JSON.stringify([{ text: "hi" }]));
    cliWorker = spawn(process.execPath, [cli, "worker", "--database", url, "--id", "cli-flag-1", "--model", `script:${script}`, "-C", ws.cwd], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    cliWorker.stderr!.on("data", (d: Buffer) => (out += d.toString()));
    await until(() => /takes runs/.test(out), `the worker to take runs:\n${out}`);
    expect(readFileSync(`/proc/${cliWorker.pid}/cmdline`, "utf8")).not.toContain(PASSWORD);
  }, 120_000);
});
