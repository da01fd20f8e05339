import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { answer, closeClients, enqueueRun, listRuns, readLines, watch } from "../../src/dbos/index.js";
import { BROWSER_TEST_TIMEOUT, browserAvailable, openBrowser, WAIT, type Browser } from "../inspect/support/browser.js";
import { describeWithDatabase, freshDatabase, plan, spawnWorker, until, workspace, type SpawnedWorker } from "./support.js";

const cli = join(import.meta.dirname, "..", "..", "dist", "cli", "main.js");

async function finish(database: string, ids: { sessionId: string; runId: string }): Promise<void> {
  for await (const event of watch({ database, ...ids })) if (event.type === "turn_end") expect(event.reason).toBe("final_answer");
}

async function stateLines(database: string, sessionId: string): Promise<Array<{ seq: number; state: string }>> {
  return (await readLines({ database, sessionId, stream: "trace" })).map((l) => JSON.parse(l)).filter((l) => l.kind === "state");
}

describeWithDatabase("statecraft inspect --database, live", () => {
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  let ws: ReturnType<typeof workspace>;
  let worker: SpawnedWorker | undefined;
  let inspector: ChildProcess | undefined;
  let browser: Browser | undefined;

  beforeAll(async () => {
    db = await freshDatabase();
    ws = workspace();
    worker = await spawnWorker({ database: db.url, id: "inspect-w", cwd: ws.cwd, counters: ws.counters });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    if (inspector && inspector.exitCode === null) inspector.kill("SIGKILL");
    await worker?.kill();
    await closeClients();
    await db?.drop();
    ws?.cleanup();
  }, 60_000);

  // Needs the browser as well as the database: without Chromium it skips (and so do the hooks above).
  it.runIf(browserAvailable())("shows the runs done before it started, then a run enqueued after: its lines as they come, suspended, resumed, ended", async () => {
    const before = await enqueueRun(plan("early", [["count"]]), { database: db.url });
    await finish(db.url, before);

    inspector = spawn(process.execPath, [cli, "inspect", "--database", db.url, "--port", "0"], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    inspector.stdout!.on("data", (d: Buffer) => (out += d.toString()));
    inspector.stderr!.on("data", (d: Buffer) => (out += d.toString()));
    const exited = new Promise((resolve) => inspector!.once("exit", resolve));
    await until(() => /inspector: http/.test(out), "the inspector's address");
    const url = /inspector: (\S+)/.exec(out)![1];

    browser = await openBrowser();
    const { page } = browser;
    await page.goto(url);
    const picker = page.getByRole("combobox", { name: "session" });
    const option = (sessionId: string) => picker.locator("option", { hasText: sessionId.slice(0, 8) });
    // The earlier run is there once (live records and the served copy are not both shown), and ended.
    await expect.poll(() => option(before.sessionId).count(), WAIT).toBe(1);
    expect(await option(before.sessionId).textContent()).not.toContain("(live)");

    // A run enqueued now: the worker's "edit" is not allowed, so the run suspends on its question.
    const later = await enqueueRun(plan("later", [["edit"]]), { database: db.url });
    await until(async () => (await listRuns({ database: db.url })).some((r) => r.runId === later.runId && r.status === "suspended"), "the later run to suspend");
    const pending = (await listRuns({ database: db.url })).find((r) => r.runId === later.runId)!.pending![0];
    await expect.poll(() => option(later.sessionId).textContent(), WAIT).toContain(`(suspended: waiting on edit ${pending.callId})`);

    await answer({ database: db.url, ...later, answers: { [pending.callId]: "allow" } });
    await finish(db.url, later);
    const lines = await stateLines(db.url, later.sessionId);
    expect(lines.at(-1)?.state).toBe("done");
    // Every state line arrived, in order, and the run is marked ended.
    await picker.selectOption((await option(later.sessionId).getAttribute("value"))!);
    await expect.poll(() => page.getByRole("slider", { name: "scrubber" }).getAttribute("max"), WAIT).toBe(String(lines.length - 1));
    await expect.poll(() => page.getByTestId("selected").textContent(), WAIT).toContain(`seq ${lines.at(-1)!.seq} · done`);
    await expect.poll(() => option(later.sessionId).textContent(), WAIT).not.toMatch(/\(live\)|suspended/);
    expect(await option(later.sessionId).textContent()).toContain(`run ${later.sessionId.slice(0, 8)}`);
    expect(browser.errors).toEqual([]);

    inspector.kill("SIGTERM");
    expect(await exited).toBe(0);
  }, BROWSER_TEST_TIMEOUT);
});
