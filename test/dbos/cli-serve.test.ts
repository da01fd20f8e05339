import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { AgentEvent } from "../../src/index.js";
import { startCli, type CliProcess } from "../cli/helpers/cli-process.js";
import { readUntil, sseOf } from "../server/helpers.js";
import { describeWithDatabase, freshDatabase, workspace } from "./support.js";

/** `statecraft serve --database`: the CLI's server on the DBOS queue, an approval over HTTP. */
describeWithDatabase("statecraft serve --database", () => {
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  let ws: ReturnType<typeof workspace>;
  let proc: CliProcess | undefined;

  beforeAll(async () => {
    db = await freshDatabase();
    ws = workspace();
  }, 60_000);
  afterAll(async () => {
    if (proc && !proc.exited) {
      proc.child.kill("SIGKILL");
      await proc.done;
    }
    await db?.drop();
    ws?.cleanup();
  }, 60_000);

  it("a write suspends the queued run; POST answers allow; a worker of the serving process goes on; SIGTERM stops it", async () => {
    const script = join(ws.counters, "script.json");
    writeFileSync(script, JSON.stringify([{ text: "Writing.", toolCalls: [{ name: "write_file", input: { path: "queued.txt", content: "from the queue\n" } }] }, { text: "Written." }]));
    const token = "dbos-cli-token-0123456789abc";
    writeFileSync(join(ws.counters, "token"), token);
    proc = startCli(["serve", "--port", "0", "--database", db.url, "-C", ws.cwd, "--model", `script:${script}`, "--token-file", join(ws.counters, "token")], { cwd: ws.cwd, keepStdinOpen: true });
    await proc.waitFor(/statecraft serve: http:\/\/127\.0\.0\.1:\d+ .*DBOS queue/);
    const base = /statecraft serve: (http:\/\/127\.0\.0\.1:\d+)/.exec(proc.screen)![1]!;
    const headers = { authorization: `Bearer ${token}` };
    const started = await fetch(`${base}/runs`, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify({ input: "write queued.txt" }) });
    expect(started.status, await started.clone().text()).toBe(201);
    const { runId } = (await started.json()) as { runId: string };
    const first = await readUntil(await fetch(`${base}/runs/${runId}/events`, { headers }), (m) => (JSON.parse(m.data) as AgentEvent).type === "suspended");
    const callId = (JSON.parse(first.at(-1)!.data) as Extract<AgentEvent, { type: "suspended" }>).pending[0]!.callId;
    const answered = await fetch(`${base}/runs/${runId}/answers`, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify({ answers: { [callId]: "allow" } }) });
    expect(answered.status, await answered.clone().text()).toBe(202);
    const rest: AgentEvent[] = [];
    for await (const m of sseOf(await fetch(`${base}/runs/${runId}/events`, { headers: { ...headers, "last-event-id": first.at(-1)!.id! } }))) rest.push(JSON.parse(m.data) as AgentEvent);
    expect(rest.at(-1)).toMatchObject({ type: "turn_end", reason: "final_answer" });
    expect(readFileSync(join(ws.cwd, "queued.txt"), "utf8")).toBe("from the queue\n");
    proc.child.kill("SIGTERM");
    expect((await proc.done).code).toBe(0);
  }, 120_000);
});
