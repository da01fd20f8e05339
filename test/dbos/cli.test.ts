import { execFile, spawn, type ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { closeClients } from "../../src/dbos/index.js";
import { describeWithDatabase, freshDatabase, until, workspace } from "./support.js";

const cli = join(import.meta.dirname, "..", "..", "dist", "cli", "main.js");
const run = promisify(execFile);

/** The walk of docs/scale-out.md, with a scripted model: two workers, a run that suspends, an answer from another shell. */
describeWithDatabase("statecraft worker | enqueue | answer | watch | runs --database | trace --database", () => {
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  let ws: ReturnType<typeof workspace>;
  const workers: Array<{ child: ChildProcess; out: () => string; exited: Promise<number | null> }> = [];
  const statecraft = (...args: string[]) => run(process.execPath, [cli, ...args], { env: { ...process.env, STATECRAFT_DATABASE_URL: db.url }, cwd: ws.cwd });

  beforeAll(async () => {
    db = await freshDatabase();
    ws = workspace();
    const script = join(ws.counters, "script.json");
    writeFileSync(script, JSON.stringify([{ text: "Writing the note.", toolCalls: [{ name: "write_file", input: { path: "note.txt", content: "hello from a worker\n" } }] }, { text: "The note is written." }]));
    for (const id of ["cli-1", "cli-2"]) {
      const child = spawn(process.execPath, [cli, "worker", "--database", db.url, "--id", id, "--tools", "builtin", "--model", `script:${script}`, "-C", ws.cwd], { stdio: ["ignore", "pipe", "pipe"] });
      let out = "";
      child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
      child.stderr!.on("data", (d: Buffer) => (out += d.toString()));
      workers.push({ child, out: () => out, exited: new Promise((resolve) => child.once("exit", (code) => resolve(code))) });
    }
    await until(() => workers.every((w) => /takes runs/.test(w.out())), "both workers to take runs");
  }, 120_000);

  afterAll(async () => {
    for (const w of workers) if (w.child.exitCode === null) w.child.kill("SIGKILL");
    await closeClients();
    await db?.drop();
    ws?.cleanup();
  }, 60_000);

  it("suspends at the write, is answered from another shell, finishes on a worker, and shows and replays from the database", async () => {
    const queued = JSON.parse((await statecraft("enqueue", "write a note", "--json")).stdout) as { sessionId: string; runId: string };
    let pending: { callId: string; name: string } | undefined;
    await until(async () => {
      const rows = (await statecraft("runs", "--database", db.url, "--json")).stdout.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
      pending = rows.find((r) => r.runId === queued.runId && r.status === "suspended")?.pending?.[0];
      return pending !== undefined;
    }, "the run to suspend");
    expect(pending!.name).toBe("write_file");
    const listed = (await statecraft("runs", "--database", db.url)).stdout;
    expect(listed).toContain(`statecraft answer ${queued.sessionId} --allow ${pending!.callId}`);

    const answered = await statecraft("answer", queued.sessionId, "--allow", pending!.callId, "--by", "ana at her desk");
    expect(answered.stdout).toMatch(/answered 1 of 1 pending calls/);
    const watched = await statecraft("watch", queued.sessionId, "--json");
    const events = watched.stdout.trim().split("\n").map((l) => JSON.parse(l));
    expect(events.filter((e) => e.type === "suspended")).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ type: "turn_end", reason: "final_answer" });
    expect(readFileSync(join(ws.cwd, "note.txt"), "utf8")).toBe("hello from a worker\n");

    const shown = (await statecraft("trace", "show", "--database", db.url, "--session", queued.sessionId)).stdout;
    expect(shown).toMatch(/suspended/);
    expect(shown).toMatch(/resumed .*allow by human \(ana at her desk\)/);
    const replayed = await statecraft("trace", "replay", "--session", queued.sessionId);
    expect(replayed.stdout).toMatch(/^identical: session/);

    // The inspector serves the database's trace (a copy, appended to as the lines arrive), and stops on SIGTERM.
    const inspector = spawn(process.execPath, [cli, "inspect", "--database", db.url, "--port", "0"], { stdio: ["ignore", "pipe", "pipe"] });
    let inspectorOut = "";
    inspector.stdout!.on("data", (d: Buffer) => (inspectorOut += d.toString()));
    const inspectorExit = new Promise((resolve) => inspector.once("exit", resolve));
    await until(() => /inspector: http/.test(inspectorOut), "the inspector's address");
    const served = await (await fetch(new URL("/trace", /inspector: (\S+)/.exec(inspectorOut)![1]))).text();
    expect(served).toContain(`"sessionId":"${queued.sessionId}"`);
    expect(served.trim().split("\n").map((l) => JSON.parse(l).kind)).toContain("resumed");
    inspector.kill("SIGTERM");
    expect(await inspectorExit).toBe(0);

    // A bad database is said plainly (exit 2), not a crash.
    const bad = await statecraft("enqueue", "x", "--database", "mysql://nope").catch((e: { code: number; stderr: string }) => e);
    expect((bad as { code: number }).code).toBe(2);
    expect((bad as { stderr: string }).stderr).toMatch(/not a PostgreSQL URL/);

    // SIGTERM stops a worker: it says so and exits 0.
    workers[0].child.kill("SIGTERM");
    expect(await workers[0].exited).toBe(0);
    expect(workers[0].out()).toMatch(/stopped; what it held is back on the queue/);
  }, 150_000);

  it("statecraft abort stops a session's suspended run from another shell: it ends user_abort; a second abort is refused", async () => {
    const queued = JSON.parse((await statecraft("enqueue", "write a note, then stop", "--json")).stdout) as { sessionId: string; runId: string };
    await until(async () => (await statecraft("runs", "--database", db.url, "--json")).stdout.split("\n").some((l) => l.includes(queued.runId) && l.includes('"suspended"')), "the run to suspend");
    const aborted = await statecraft("abort", queued.sessionId, "--by", "ana");
    expect(aborted.stdout).toContain(`aborting run ${queued.runId}`);
    const events = (await statecraft("watch", queued.sessionId, "--json").catch((e: { stdout: string }) => e)).stdout.trim().split("\n").map((l) => JSON.parse(l) as { type: string; reason?: string });
    expect(events.at(-1)).toMatchObject({ type: "turn_end", reason: "user_abort" });
    const again = await statecraft("abort", queued.sessionId).catch((e: { code: number; stderr: string }) => e);
    expect((again as { code: number }).code).toBe(2);
    expect((again as { stderr: string }).stderr).toMatch(/no run that has not finished/);
    const named = await statecraft("abort", queued.sessionId, "--run", queued.runId).catch((e: { code: number; stderr: string }) => e);
    expect((named as { code: number }).code).toBe(2);
    expect((named as { stderr: string }).stderr).toMatch(/has ended \(user_abort\); there is nothing to abort/);
  }, 120_000);
});
