import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { builtinTools, type AgentEvent, type Model } from "../../src/index.js";
import { serve, type StatecraftServer } from "../../src/server/index.js";
import { call, readUntil, sseOf } from "../server/helpers.js";
import { describeWithDatabase, freshDatabase, until, workspace } from "./support.js";

/** A model that follows the plan in the run's prompt: one tool call per turn ({ calls: [[name, input], …] }), then `text`. */
const planModel: Model = {
  name: "plan",
  async *stream(request) {
    const first = request.messages.find((m) => m.role === "user");
    const plan = JSON.parse(String(first?.content)) as { calls: Array<[string, Record<string, unknown>]>; text: string };
    const turn = request.messages.filter((m) => m.role === "assistant").length;
    const next = plan.calls[turn];
    if (next) {
      yield { type: "response", response: { text: "", finishReason: "tool_calls", usage: { input: 10, output: 2 }, toolCalls: [{ name: next[0], arguments: JSON.stringify(next[1]) }] } };
    } else {
      yield { type: "text_delta", text: plan.text };
      yield { type: "response", response: { text: plan.text, finishReason: "stop", usage: { input: 10, output: 2 }, toolCalls: [] } };
    }
  },
};

const planOf = (calls: Array<[string, Record<string, unknown>]>, text = "done") => JSON.stringify({ calls, text });

/** Whether a process runs this exact command line (the bash tool's sleep, told apart by its odd duration). */
function running(command: string): boolean {
  return execFileSync("ps", ["-eo", "args="], { encoding: "utf8" }).split("\n").some((line) => line.trim() === command);
}

/** `POST /runs/:runId/abort` on a server of the DBOS queue: the same answers as on the file store. */
describeWithDatabase("statecraft/server on the DBOS queue: POST /runs/:runId/abort", () => {
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  let ws: ReturnType<typeof workspace>;
  let server: StatecraftServer;
  let base: string;

  beforeAll(async () => {
    db = await freshDatabase();
    ws = workspace();
    server = serve({ model: planModel, tools: builtinTools(), cwd: ws.cwd, token: "test-token-0123456789abcdef", database: db.url, permissions: { mode: "default", allow: ["bash(sleep *)"] } });
    base = (await server.listen(0)).url;
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    await db?.drop();
    ws?.cleanup();
  }, 60_000);

  const start = async (input: string, sessionId: string) => {
    const started = await call(base, "/runs", { body: { input, sessionId } });
    expect(started.status, await started.clone().text()).toBe(201);
    return ((await started.json()) as { runId: string }).runId;
  };
  const eventsAfter = async (runId: string, after: string | undefined) => {
    const out: Array<{ id: number; event: AgentEvent }> = [];
    for await (const m of sseOf(await call(base, `/runs/${runId}/events`, { headers: after !== undefined ? { "last-event-id": after } : {} }))) out.push({ id: Number(m.id), event: JSON.parse(m.data) as AgentEvent });
    return out;
  };

  it("a run in its bash tool ends user_abort promptly; its stream ends with that turn_end; a second abort is 409 RUN_ENDED", async () => {
    const command = "sleep 28.731";
    const runId = await start(planOf([["bash", { command }]]), "abort-running");
    const first = await readUntil(await call(base, `/runs/${runId}/events`), (m) => (JSON.parse(m.data) as AgentEvent).type === "tool_start");
    await until(() => running(command), "the bash tool's sleep to run");
    const asked = Date.now();
    const abort = await call(base, `/runs/${runId}/abort`, { method: "POST" });
    expect(abort.status, await abort.clone().text()).toBe(202);
    expect(await abort.json()).toEqual({ runId, status: "running" });
    const rest = await eventsAfter(runId, first.at(-1)!.id);
    // Far below the 28 s sleep (bounded generously: the machine is shared).
    expect(Date.now() - asked).toBeLessThan(15_000);
    expect(rest.map((r) => r.id)).toEqual(rest.map((_, i) => first.length + i + 1));
    expect(rest.at(-1)!.event).toMatchObject({ type: "turn_end", reason: "user_abort", error: { code: "USER_ABORT" } });
    await until(() => !running(command), "the sleep to be killed", 15_000);
    const again = await call(base, `/runs/${runId}/abort`, { method: "POST" });
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ error: { code: "RUN_ENDED", message: expect.stringContaining("user_abort") } });
    const listed = (await (await call(base, "/runs?sessionId=abort-running")).json()) as { runs: Array<{ runId: string; status: string; reason?: string }> };
    expect(listed.runs).toEqual([expect.objectContaining({ runId, status: "finished", reason: "user_abort" })]);
    // The session takes a new run at once.
    const next = await start(planOf([], "after the abort"), "abort-running");
    expect((await eventsAfter(next, undefined)).at(-1)!.event).toMatchObject({ type: "turn_end", reason: "final_answer" });
  }, 120_000);

  it("a run waiting for an answer ends user_abort without asking again; its write never happens", async () => {
    const runId = await start(planOf([["write_file", { path: "never.txt", content: "no\n" }]]), "abort-suspended");
    const first = await readUntil(await call(base, `/runs/${runId}/events`), (m) => (JSON.parse(m.data) as AgentEvent).type === "suspended");
    const abort = await call(base, `/runs/${runId}/abort`, { method: "POST" });
    expect(abort.status, await abort.clone().text()).toBe(202);
    const rest = await eventsAfter(runId, first.at(-1)!.id);
    expect(rest.map((r) => r.event.type)).not.toContain("suspended");
    expect(rest.map((r) => r.event.type)).not.toContain("permission_request");
    expect(rest.at(-1)!.event).toMatchObject({ type: "turn_end", reason: "user_abort" });
    expect(existsSync(join(ws.cwd, "never.txt"))).toBe(false);
    const answers = await call(base, `/runs/${runId}/answers`, { body: { answers: { [(JSON.parse(first.at(-1)!.data) as Extract<AgentEvent, { type: "suspended" }>).pending[0]!.callId]: "allow" } } });
    expect(answers.status).toBe(409);
    expect((await call(base, `/runs/${runId}/abort`, { method: "POST" })).status).toBe(409);
  }, 120_000);

  it("a queued run (every worker slot busy) never starts: its stream is its one turn_end user_abort; the busy runs are aborted too", async () => {
    // The server's worker runs four at once: four sleeping runs fill it.
    const sleepers: string[] = [];
    for (let i = 0; i < 4; i++) {
      const runId = await start(planOf([["bash", { command: `sleep 27.${i}1` }]]), `abort-busy-${i}`);
      await readUntil(await call(base, `/runs/${runId}/events`), (m) => (JSON.parse(m.data) as AgentEvent).type === "tool_start");
      sleepers.push(runId);
    }
    const queued = await start(planOf([["write_file", { path: "queued.txt", content: "no\n" }]]), "abort-queued");
    const abort = await call(base, `/runs/${queued}/abort`, { method: "POST" });
    expect(abort.status, await abort.clone().text()).toBe(202);
    const events = await eventsAfter(queued, undefined);
    expect(events).toEqual([{ id: 1, event: expect.objectContaining({ type: "turn_end", reason: "user_abort", turns: 0, toolCalls: 0 }) }]);
    const asked = Date.now();
    for (const runId of sleepers) expect((await call(base, `/runs/${runId}/abort`, { method: "POST" })).status).toBe(202);
    for (const runId of sleepers) expect((await eventsAfter(runId, undefined)).at(-1)!.event).toMatchObject({ type: "turn_end", reason: "user_abort" });
    expect(Date.now() - asked).toBeLessThan(20_000);
    for (let i = 0; i < 4; i++) await until(() => !running(`sleep 27.${i}1`), "the sleeps to be killed", 15_000);
    expect(existsSync(join(ws.cwd, "queued.txt"))).toBe(false);
    const listed = (await (await call(base, "/runs?sessionId=abort-queued")).json()) as { runs: Array<{ status: string; reason?: string }> };
    expect(listed.runs).toEqual([expect.objectContaining({ status: "finished", reason: "user_abort" })]);
  }, 180_000);

  it("event ids are the run's across a server restart: a new server numbers from the database, a Last-Event-ID from before resumes after it", async () => {
    const runId = await start(planOf([["write_file", { path: "after-restart.txt", content: "yes\n" }]], "written"), "restart-ids");
    const asked = await readUntil(await call(base, `/runs/${runId}/events`), (m) => (JSON.parse(m.data) as AgentEvent).type === "suspended");
    const suspendedId = Number(asked.at(-1)!.id);
    const callId = (JSON.parse(asked.at(-1)!.data) as Extract<AgentEvent, { type: "suspended" }>).pending[0]!.callId;
    await server.close();
    server = serve({ model: planModel, tools: builtinTools(), cwd: ws.cwd, token: "test-token-0123456789abcdef", database: db.url, permissions: { mode: "default", allow: ["bash(sleep *)"] } });
    base = (await server.listen(0)).url;
    // The new server follows the run from the database: the same events under the same ids.
    const again = await readUntil(await call(base, `/runs/${runId}/events`), (m) => Number(m.id) === suspendedId);
    expect(again.map((m) => [m.id, JSON.parse(m.data) as AgentEvent])).toEqual(asked.map((m) => [m.id, JSON.parse(m.data) as AgentEvent]));
    expect((await call(base, `/runs/${runId}/answers`, { body: { answers: { [callId]: "allow" } } })).status).toBe(202);
    const rest = await eventsAfter(runId, String(suspendedId));
    expect(rest.map((r) => r.id)).toEqual(rest.map((_, i) => suspendedId + 1 + i));
    expect(rest.some((r) => r.event.type === "suspended")).toBe(false);
    expect(rest.at(-1)!.event).toMatchObject({ type: "turn_end", reason: "final_answer" });
    expect(existsSync(join(ws.cwd, "after-restart.txt"))).toBe(true);
  }, 180_000);
});
