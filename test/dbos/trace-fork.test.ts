import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { expect, it } from "vitest";
import { enqueueRun, readLines, watch } from "../../src/dbos/index.js";
import { describeWithDatabase, plan, useDatabaseAndWorker } from "./support.js";

const cli = join(import.meta.dirname, "..", "..", "dist", "cli", "main.js");
const run = promisify(execFile);

interface Line {
  sessionId: string;
  seq: number;
  kind: string;
  state?: string;
  parentSession?: string;
  forkedAt?: { sessionId: string; seq: number };
}

describeWithDatabase("statecraft trace fork --database", () => {
  const t = useDatabaseAndWorker("fork-w");

  it("forks a run a worker did, at a chosen seq, from the database: the recorded prefix, then the fork's own continuation, recorded here", async () => {
    const ids = await enqueueRun(plan("fk", [["count"]]), { database: t.db.url });
    for await (const event of watch({ database: t.db.url, ...ids })) if (event.type === "turn_end") expect(event.reason).toBe("final_answer");
    const recorded = (await readLines({ database: t.db.url, sessionId: ids.sessionId, stream: "trace" })).map((l) => JSON.parse(l) as Line);
    // The second model call: the request, the count call and its result are the conversation there.
    const at = recorded.filter((l) => l.state === "call_model")[1].seq;

    const here = join(t.ws.counters, "client");
    mkdirSync(here);
    const script = join(here, "fork-model.json");
    writeFileSync(script, JSON.stringify([{ text: "A different ending, from the fork." }]));
    const forked = await run(process.execPath, [cli, "trace", "fork", "--database", t.db.url, "--session", ids.sessionId.slice(0, 8), "--at", String(at), "--model", `script:${script}`], { cwd: here });
    expect(forked.stdout).toContain(`fork of session ${ids.sessionId} at seq ${at}`);
    const forkId = /new session (\S+),/.exec(forked.stdout)![1];
    expect(forked.stdout).toContain(`trace: ${join(here, ".agent", "trace.jsonl")}`);

    // Recorded like any local run, in the .agent/ of the folder it ran in.
    const lines = readFileSync(join(here, ".agent", "trace.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as Line);
    expect(lines.every((l) => l.sessionId === forkId && l.parentSession === ids.sessionId)).toBe(true);
    expect(lines[0].forkedAt).toEqual({ sessionId: ids.sessionId, seq: at });
    expect(lines.at(-1)?.state).toBe("done");
    const transcript = readFileSync(join(here, ".agent", "sessions", `${forkId}.jsonl`), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    const messages = transcript.filter((e) => e.type === "message").map((e) => e.message as { role: string; content: unknown });
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(JSON.stringify(messages[2].content)).toContain("counted");
    expect(messages[3].content).toBe("A different ending, from the fork.");
    // Nothing of the fork went to the database: its session is not there.
    expect(await readLines({ database: t.db.url, sessionId: forkId, stream: "trace" })).toEqual([]);
    expect(t.ws.log("tool.log")).toHaveLength(1);
  }, 120_000);

  it("a session that is not in the database: exit 2, saying so", async () => {
    const failed = await run(process.execPath, [cli, "trace", "fork", "--session", "nosuchsession", "--at", "0", "--model", "script:/nonexistent.json"], {
      cwd: t.ws.counters,
      env: { ...process.env, STATECRAFT_DATABASE_URL: t.db.url },
    }).catch((e: { code: number; stderr: string }) => e);
    expect((failed as { code: number }).code).toBe(2);
    expect((failed as { stderr: string }).stderr).toMatch(/no session nosuchsession in the database's trace lines; `statecraft trace list --database URL` shows its sessions/);
  }, 60_000);
});
