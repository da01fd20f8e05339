import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { expect, it } from "vitest";
import { enqueueRun, loadSessionFromDatabase, readLines, watch } from "../../src/dbos/index.js";
import { replay, type AgentEvent } from "../../src/index.js";
import { describeWithDatabase, sql, useDatabaseAndWorker } from "./support.js";

const cli = join(import.meta.dirname, "..", "..", "dist", "cli", "main.js");
const run = promisify(execFile);

/** A subagent (agentTool) on a worker: its lines go to the database like its parent's, linked as in files. */
describeWithDatabase("statecraft/dbos: subagents' lines", () => {
  const t = useDatabaseAndWorker("sub-w");

  it("the child's trace, transcript and audit lines are in PostgreSQL under its own session, naming its parent; none in files on the worker", async () => {
    const child = JSON.stringify({ tag: "child", calls: [["count", { tag: "child" }]], text: "child done" });
    const ids = await enqueueRun(JSON.stringify({ tag: "parent", calls: [["helper", { prompt: child }]], text: "parent done" }), { database: t.db.url });
    const events: AgentEvent[] = [];
    for await (const event of watch({ database: t.db.url, ...ids })) events.push(event);
    expect(events.at(-1)).toMatchObject({ type: "turn_end", reason: "final_answer" });
    const relayed = events.filter((e): e is Extract<AgentEvent, { type: "subagent_event" }> => e.type === "subagent_event");
    expect(relayed.length).toBeGreaterThan(0);
    const childId = relayed[0].sessionId;
    expect(childId).not.toBe(ids.sessionId);

    const sessions = (await sql<{ session_id: string; stream: string }>(t.db.url, "SELECT DISTINCT session_id, stream FROM statecraft.lines ORDER BY session_id, stream")).map((r) => `${r.session_id === ids.sessionId ? "parent" : r.session_id === childId ? "child" : r.session_id}:${r.stream}`);
    expect(sessions.filter((s) => s.startsWith("child:")).sort()).toEqual(["child:audit", "child:trace", "child:transcript"]);

    const trace = (await readLines({ database: t.db.url, sessionId: childId, stream: "trace" })).map((l) => JSON.parse(l) as { parentSession?: string; state?: string });
    expect(trace.every((l) => l.parentSession === ids.sessionId)).toBe(true);
    expect(trace.at(-1)?.state).toBe("done");
    const transcript = (await readLines({ database: t.db.url, sessionId: childId, stream: "transcript" })).map((l) => JSON.parse(l));
    const messages = transcript.filter((e) => e.type === "message").map((e) => e.message);
    expect(messages[0]).toMatchObject({ role: "user", content: child });
    expect(messages.at(-1)).toMatchObject({ role: "assistant", content: "child done" });
    // The parent's own trace holds none of the child's lines, as its file would not under its session.
    expect((await readLines({ database: t.db.url, sessionId: ids.sessionId, stream: "trace" })).some((l) => l.includes(`"sessionId":"${childId}"`))).toBe(false);

    // Nothing was written to files on the worker.
    expect(existsSync(join(t.ws.cwd, ".agent", "trace.jsonl"))).toBe(false);
    expect(existsSync(join(t.ws.cwd, ".agent", "sessions", `${childId}.jsonl`))).toBe(false);
    expect(existsSync(join(t.ws.cwd, ".agent", "audit.jsonl"))).toBe(false);

    // The trace commands see the link as in a file.
    const listed = (await run(process.execPath, [cli, "trace", "list", "--database", t.db.url])).stdout;
    expect(listed.split("\n").find((l) => l.startsWith(childId))).toContain(`(sub of ${ids.sessionId.slice(0, 8)})`);
    const replayed = await replay(await loadSessionFromDatabase({ database: t.db.url, sessionId: ids.sessionId }));
    expect(replayed.identical, replayed.divergence?.reason).toBe(true);
  }, 120_000);
});
