import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { builtinTools, type AgentEvent } from "../../src/index.js";
import { turnScript } from "../../src/dbos/index.js";
import { serve, type StatecraftServer } from "../../src/server/index.js";
import { call, readUntil, sseOf, TOKEN } from "../server/helpers.js";
import { describeWithDatabase, freshDatabase, workspace } from "./support.js";

/** `serve({ database })`: runs on the DBOS queue, a worker in this process, approvals over HTTP. */
describeWithDatabase("statecraft/server on the DBOS queue", () => {
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  let ws: ReturnType<typeof workspace>;
  let server: StatecraftServer;
  let base: string;

  beforeAll(async () => {
    db = await freshDatabase();
    ws = workspace();
    const model = turnScript([{ text: "Writing the note.", toolCalls: [{ name: "write_file", input: { path: "note.txt", content: "approved over HTTP, run by a worker\n" } }] }, { text: "The note is written." }]);
    server = serve({ model, tools: builtinTools(), cwd: ws.cwd, token: TOKEN, database: db.url, permissions: { mode: "default" } });
    base = (await server.listen(0)).url;
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    await db?.drop();
    ws?.cleanup();
  }, 60_000);

  it("a run suspends in the database at its write; POST answers allow and a worker goes on; the stream resumes where it was", async () => {
    const started = await call(base, "/runs", { body: { input: "write the note", sessionId: "dbos-http-1" } });
    expect(started.status, await started.clone().text()).toBe(201);
    const { runId } = (await started.json()) as { runId: string };
    const first = await readUntil(await call(base, `/runs/${runId}/events`), (m) => (JSON.parse(m.data) as AgentEvent).type === "suspended");
    const suspended = JSON.parse(first.at(-1)!.data) as Extract<AgentEvent, { type: "suspended" }>;
    expect(suspended.pending.map((c) => c.name)).toEqual(["write_file"]);
    expect(existsSync(join(ws.cwd, "note.txt"))).toBe(false);
    const listed = (await (await call(base, "/runs?sessionId=dbos-http-1")).json()) as { runs: Array<{ runId: string; status: string }> };
    expect(listed.runs).toEqual([expect.objectContaining({ runId, status: "suspended" })]);
    const busy = await call(base, "/runs", { body: { input: "another", sessionId: "dbos-http-1" } });
    expect(busy.status).toBe(409);
    const wrong = await call(base, `/runs/${runId}/answers`, { body: { answers: { nope: "allow" } } });
    expect(wrong.status).toBe(400);
    const answered = await call(base, `/runs/${runId}/answers`, { body: { answers: { [suspended.pending[0]!.callId]: "allow" } } });
    expect(answered.status, await answered.clone().text()).toBe(202);
    const rest: Array<{ id: string; event: AgentEvent }> = [];
    for await (const m of sseOf(await call(base, `/runs/${runId}/events`, { headers: { "last-event-id": first.at(-1)!.id! } }))) rest.push({ id: m.id!, event: JSON.parse(m.data) as AgentEvent });
    expect(rest.map((r) => Number(r.id))).toEqual(rest.map((_, i) => first.length + i + 1));
    expect(rest.find((r) => r.event.type === "tool_result")!.event).toMatchObject({ result: { isError: false } });
    expect(rest.at(-1)!.event).toMatchObject({ type: "turn_end", reason: "final_answer" });
    expect(readFileSync(join(ws.cwd, "note.txt"), "utf8")).toBe("approved over HTTP, run by a worker\n");
    const session = (await (await call(base, "/sessions/dbos-http-1")).json()) as { messages: Array<{ role: string }> };
    expect(session.messages[0]).toMatchObject({ role: "user", content: "write the note" });
    expect(session.messages.at(-1)).toMatchObject({ role: "assistant" });
    // A finished run is not aborted, as on the file store.
    const abort = await call(base, `/runs/${runId}/abort`, { method: "POST" });
    expect(abort.status).toBe(409);
    expect(await abort.json()).toMatchObject({ error: { code: "RUN_ENDED" } });
  }, 120_000);
});
