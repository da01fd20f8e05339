import { existsSync, readFileSync } from "node:fs";
import http from "node:http";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { builtinTools, scriptedModel, type AgentEvent } from "../../src/index.js";
import { serve, type StatecraftServer } from "../../src/server/index.js";
import type { ScriptStep } from "../../src/models/scripted.js";
import { removeDir, tempDir } from "../support/engine.js";
import { call, gate, rawRequest, readUntil, sseOf, TOKEN } from "./helpers.js";

let cwd: string;
let server: StatecraftServer | undefined;
let base: string;
let port: number;

beforeEach(() => {
  cwd = tempDir();
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  removeDir(cwd);
});

async function start(steps: ScriptStep[], extra: Partial<Parameters<typeof serve>[0]> = {}): Promise<void> {
  server = serve({ model: scriptedModel(steps), tools: builtinTools(), cwd, token: TOKEN, ...extra });
  const listening = await server.listen(0);
  base = listening.url;
  port = listening.port;
}

async function startRun(body: unknown): Promise<{ sessionId: string; runId: string }> {
  const response = await call(base, "/runs", { body });
  expect(response.status, await response.clone().text()).toBe(201);
  return (await response.json()) as { sessionId: string; runId: string };
}

/** Every event of the run from its start, with ids, until its last event. */
async function allEvents(runId: string): Promise<Array<{ id: number; event: AgentEvent }>> {
  const response = await call(base, `/runs/${runId}/events`);
  expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
  const out: Array<{ id: number; event: AgentEvent }> = [];
  for await (const message of sseOf(response)) out.push({ id: Number(message.id), event: JSON.parse(message.data) as AgentEvent });
  return out;
}

/** The run's events after id `after`, to its last. */
async function allEventsAfter(runId: string, after: number): Promise<Array<{ id: number; event: AgentEvent }>> {
  const out: Array<{ id: number; event: AgentEvent }> = [];
  for await (const message of sseOf(await call(base, `/runs/${runId}/events`, { headers: { "last-event-id": String(after) } }))) out.push({ id: Number(message.id), event: JSON.parse(message.data) as AgentEvent });
  return out;
}

const errorOf = async (response: Response) => ((await response.json()) as { error: { code: string; message: string } }).error;

describe("auth, hosts, origins", () => {
  beforeEach(() => start([{ text: "hi" }], { allowOrigins: ["http://localhost:5173"] }));

  it("refuses a request without the token, with a wrong one, or with another scheme: 401 naming the fix", async () => {
    for (const token of [null, "wrong-token-0123456789", ""]) {
      const response = await call(base, "/runs?sessionId=s1", { token });
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toMatch(/^Bearer/);
      const error = await errorOf(response);
      expect(error.code).toBe("UNAUTHORIZED");
      expect(error.message).toMatch(/token/);
    }
    const basic = await call(base, "/runs?sessionId=s1", { token: null, headers: { authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString("base64")}` } });
    expect(basic.status).toBe(401);
    expect((await call(base, "/runs?sessionId=s1")).status).toBe(200);
  });

  it("answers only to loopback Host names (DNS rebinding): 403 for another", async () => {
    for (const host of ["evil.example", `evil.example:${port}`, `127.0.0.1.evil.example:${port}`]) {
      const response = await rawRequest(port, { path: "/runs?sessionId=s1", headers: { host, authorization: `Bearer ${TOKEN}` } });
      expect(response.status, host).toBe(403);
      expect(JSON.parse(response.body).error.code).toBe("HOST_NOT_ALLOWED");
    }
    const ok = await rawRequest(port, { path: "/runs?sessionId=s1", headers: { host: `localhost:${port}`, authorization: `Bearer ${TOKEN}` } });
    expect(ok.status).toBe(200);
  });

  it("refuses pages of other origins, lets an allowed app in with CORS headers and answers its preflight", async () => {
    for (const origin of ["http://evil.example", "http://localhost:5174", "null"]) {
      const response = await call(base, "/runs?sessionId=s1", { headers: { origin } });
      expect(response.status, origin).toBe(403);
      expect((await errorOf(response)).code).toBe("ORIGIN_NOT_ALLOWED");
    }
    const allowed = await call(base, "/runs?sessionId=s1", { headers: { origin: "http://localhost:5173" } });
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get("access-control-allow-origin")).toBe("http://localhost:5173");
    const preflight = await fetch(`${base}/runs`, { method: "OPTIONS", headers: { origin: "http://localhost:5173", "access-control-request-method": "POST", "access-control-request-headers": "authorization,content-type" } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-headers")).toMatch(/authorization/);
    const foreign = await fetch(`${base}/runs`, { method: "OPTIONS", headers: { origin: "http://evil.example" } });
    expect(foreign.status).toBe(403);
  });
});

describe("bad input is a 400 naming what is wrong", () => {
  beforeEach(() => start([{ text: "hi" }], { maxBodyBytes: 2048, runOptions: { maxTurns: 4 }, permissions: { mode: "default", allow: ["bash(npm test)"] } }));

  const cases: Array<[string, unknown, RegExp]> = [
    ["no input", {}, /input must be a non-empty string/],
    ["input not a string", { input: 42 }, /input must be a non-empty string/],
    ["an unknown field", { input: "x", sesionId: "a" }, /"sesionId" is not a field/],
    ["a bad session id", { input: "x", sessionId: "../etc" }, /sessionId/],
    ["an unknown option", { input: "x", options: { tools: [] } }, /options\.tools can't be queued/],
    ["a limit above the server's", { input: "x", options: { maxTurns: 10 } }, /maxTurns 10 is above this server's 4/],
    ["a wider mode", { input: "x", options: { permissions: { mode: "bypassPermissions" } } }, /lets more run than this server's "default"/],
    ["an allow rule the server lacks", { input: "x", options: { permissions: { allow: ["bash(rm *)"] } } }, /would allow what this server does not/],
    ["onAsk", { input: "x", options: { permissions: { onAsk: "allow" } } }, /permissions\.onAsk can't be queued/],
    ["a malformed rule", { input: "x", options: { permissions: { deny: ["bash("] } } }, /.+/],
    ["options not an object", { input: "x", options: [1] }, /options must be a JSON object/],
  ];
  for (const [name, body, message] of cases) {
    it(`POST /runs with ${name}`, async () => {
      const response = await call(base, "/runs", { body });
      expect(response.status).toBe(400);
      const error = await errorOf(response);
      expect(error.code).toBe("INVALID_REQUEST");
      expect(error.message).toMatch(message);
    });
  }

  it("bodies: not JSON, not declared JSON, empty, too large (declared or streamed)", async () => {
    const notJson = await call(base, "/runs", { body: "{input:" });
    expect(notJson.status).toBe(400);
    expect((await errorOf(notJson)).code).toBe("INVALID_JSON");
    const text = await call(base, "/runs", { body: JSON.stringify({ input: "x" }), headers: { "content-type": "text/plain" } });
    expect(text.status).toBe(415);
    const empty = await call(base, "/runs", { body: " " });
    expect(empty.status).toBe(400);
    const large = await call(base, "/runs", { body: { input: "x".repeat(5000) } });
    expect(large.status).toBe(413);
    expect((await errorOf(large)).message).toMatch(/limit of 2048 bytes/);
    // Sent in chunks without a length: counted as it is read.
    const chunked = await new Promise<number>((resolve, reject) => {
      const req = http.request({ host: "127.0.0.1", port, path: "/runs", method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}`, "transfer-encoding": "chunked" } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      req.write(`{"input":"`);
      for (let i = 0; i < 10; i++) req.write("y".repeat(500));
      req.end(`"}`);
    });
    expect(chunked).toBe(413);
  });

  it("routes, methods and ids", async () => {
    expect((await call(base, "/nowhere")).status).toBe(404);
    const method = await call(base, "/runs/abc/answers");
    expect(method.status).toBe(404);
    const { runId, sessionId } = await startRun({ input: "hello" });
    const get = await call(base, `/runs/${runId}/answers`);
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST");
    expect((await call(base, "/runs")).status).toBe(400);
    expect((await errorOf(await call(base, "/runs?session=1"))).message).toMatch(/takes \?sessionId=/);
    expect((await call(base, `/runs/${runId}/events`, { headers: { "last-event-id": "x1" } })).status).toBe(400);
    expect((await call(base, `/runs/${runId}/events`, { headers: { "last-event-id": "9999" } })).status).toBe(400);
    expect((await call(base, "/sessions/no-such-session")).status).toBe(404);
    expect((await call(base, `/runs/${runId}/answers`, { body: { answers: {} } })).status).toBe(400);
    expect((await call(base, `/runs/${runId}/answers`, { body: { answers: { c1: "yes" } } })).status).toBe(400);
    await allEvents(runId);
    expect((await call(base, `/runs/${runId}/answers`, { body: { answers: { c1: "allow" } } })).status).toBe(409);
    expect((await call(base, `/runs/${runId}/abort`, { method: "POST" })).status).toBe(409);
    expect(sessionId).toMatch(/^[\w-]+$/);
  });
});


describe("runs and their events", () => {
  it("a late client gets the run from its start, ids 1..N, ending at turn_end; runs and session are listed", async () => {
    await start([{ text: "Hello there, from the server." }]);
    const { sessionId, runId } = await startRun({ input: "say hello", sessionId: "chat-1" });
    expect(sessionId).toBe("chat-1");
    const events = await allEvents(runId);
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
    expect(events[0]!.event).toMatchObject({ type: "state", state: "build_context" });
    expect(events.at(-1)!.event).toMatchObject({ type: "turn_end", reason: "final_answer", sessionId: "chat-1" });
    const text = events.flatMap((e) => (e.event.type === "text_delta" ? [e.event.text] : [])).join("");
    expect(text).toBe("Hello there, from the server.");
    // A second late client gets exactly the same.
    expect(await allEvents(runId)).toEqual(events);
    const runs = (await (await call(base, "/runs?sessionId=chat-1")).json()) as { runs: Array<{ runId: string; status: string; reason: string; events: number }> };
    expect(runs.runs).toEqual([expect.objectContaining({ runId, status: "finished", reason: "final_answer", events: events.length })]);
    const session = (await (await call(base, "/sessions/chat-1")).json()) as { messages: Array<{ role: string; content: unknown }> };
    expect(session.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(session.messages[0]!.content).toBe("say hello");
  });

  it("a connection cut mid-stream resumes with Last-Event-ID: no event lost, none repeated", async () => {
    const held = gate();
    server = serve({ model: scriptedModel([{ text: "Before the gate.", toolCalls: [{ name: "wait_gate", input: {} }] }, { text: "After the gate, the end." }]), tools: [held.tool], cwd, token: TOKEN });
    base = (await server.listen(0)).url;
    const { runId } = await startRun({ input: "go" });
    const first = await readUntil(await call(base, `/runs/${runId}/events`), (m) => (JSON.parse(m.data) as AgentEvent).type === "tool_start");
    const lastId = first.at(-1)!.id!;
    // The run goes on while no client is connected.
    held.open();
    const rest: typeof first = [];
    for await (const message of sseOf(await call(base, `/runs/${runId}/events`, { headers: { "last-event-id": lastId } }))) rest.push(message);
    const joined = [...first, ...rest];
    expect(joined.map((m) => Number(m.id))).toEqual(joined.map((_, i) => i + 1));
    const whole = await allEvents(runId);
    expect(joined.map((m) => JSON.parse(m.data))).toEqual(whole.map((e) => e.event));
    expect(whole.at(-1)!.event).toMatchObject({ type: "turn_end", reason: "final_answer" });
    // A cut in the middle of the text, by ?after= too.
    const cut = await readUntil(await call(base, `/runs/${runId}/events`), (m) => (JSON.parse(m.data) as AgentEvent).type === "text_delta");
    const after: typeof cut = [];
    for await (const message of sseOf(await call(base, `/runs/${runId}/events?after=${cut.at(-1)!.id}`))) after.push(message);
    expect([...cut, ...after].map((m) => JSON.parse(m.data))).toEqual(whole.map((e) => e.event));
  });

  it("a busy session is a 409; abort ends a running run user_abort", async () => {
    const held = gate();
    server = serve({ model: scriptedModel([{ toolCalls: [{ name: "wait_gate", input: {} }] }, { text: "never" }]), tools: [held.tool], cwd, token: TOKEN });
    base = (await server.listen(0)).url;
    const { runId } = await startRun({ input: "go", sessionId: "busy-1" });
    await readUntil(await call(base, `/runs/${runId}/events`), (m) => (JSON.parse(m.data) as AgentEvent).type === "tool_start");
    const again = await call(base, "/runs", { body: { input: "again", sessionId: "busy-1" } });
    expect(again.status).toBe(409);
    expect((await errorOf(again)).code).toBe("SESSION_BUSY");
    const abort = await call(base, `/runs/${runId}/abort`, { method: "POST" });
    expect(abort.status).toBe(202);
    held.open();
    const events = await allEvents(runId);
    expect(events.at(-1)!.event).toMatchObject({ type: "turn_end", reason: "user_abort" });
  });

  it("the server's traceFile is where its runs' traces go", async () => {
    await start([{ text: "traced" }], { traceFile: join(cwd, "served-trace.jsonl") });
    const { runId } = await startRun({ input: "hi" });
    await allEvents(runId);
    expect(readFileSync(join(cwd, "served-trace.jsonl"), "utf8")).toMatch(/"kind":"state","state":"done"/);
    expect(existsSync(join(cwd, ".agent", "trace.jsonl"))).toBe(false);
  });

  it("the fetch handler serves the same routes without a Node server", async () => {
    server = serve({ model: scriptedModel([{ text: "fetched" }]), cwd, token: TOKEN, store: "memory" });
    const started = await server.fetch(new Request("http://127.0.0.1/runs", { method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }, body: JSON.stringify({ input: "hi" }) }));
    expect(started.status).toBe(201);
    const { runId } = (await started.json()) as { runId: string };
    const stream = await server.fetch(new Request(`http://127.0.0.1/runs/${runId}/events`, { headers: { authorization: `Bearer ${TOKEN}` } }));
    const events: AgentEvent[] = [];
    for await (const message of sseOf(stream)) events.push(JSON.parse(message.data) as AgentEvent);
    expect(events.at(-1)).toMatchObject({ type: "turn_end", reason: "final_answer" });
    expect(existsSync(join(cwd, ".agent"))).toBe(false);
    const unauthorised = await server.fetch(new Request("http://127.0.0.1/runs?sessionId=x"));
    expect(unauthorised.status).toBe(401);
  });
});

describe("approvals over HTTP (file store)", () => {
  const writeStep: ScriptStep = { toolCalls: [{ name: "write_file", input: { path: "notes.txt", content: "approved over HTTP\n" } }] };

  it("a permission question suspends the run; POST answers allow resumes it and the tool runs", async () => {
    await start([writeStep, { text: "Wrote notes.txt." }]);
    const { runId, sessionId } = await startRun({ input: "write a note" });
    const first = await readUntil(await call(base, `/runs/${runId}/events`), (m) => (JSON.parse(m.data) as AgentEvent).type === "suspended");
    const suspended = JSON.parse(first.at(-1)!.data) as Extract<AgentEvent, { type: "suspended" }>;
    // The run's id is the engine's own.
    expect(suspended.runId).toBe(runId);
    expect(suspended.pending.map((c) => c.name)).toEqual(["write_file"]);
    const callId = suspended.pending[0]!.callId;
    expect(existsSync(join(cwd, ".agent", "runs", `${sessionId}.json`))).toBe(true);
    const listed = (await (await call(base, `/runs?sessionId=${sessionId}`)).json()) as { runs: Array<{ status: string; pending: unknown[] }> };
    expect(listed.runs[0]).toMatchObject({ status: "suspended", pending: [expect.objectContaining({ callId, name: "write_file" })] });
    const wrong = await call(base, `/runs/${runId}/answers`, { body: { answers: { call_nope: "allow" } } });
    expect(wrong.status).toBe(400);
    expect((await errorOf(wrong)).message).toMatch(new RegExp(`"call_nope" is not a pending call.*${callId}`));
    const answered = await call(base, `/runs/${runId}/answers`, { body: { answers: { [callId]: "allow" } } });
    expect(answered.status).toBe(202);
    const rest: AgentEvent[] = [];
    for await (const message of sseOf(await call(base, `/runs/${runId}/events`, { headers: { "last-event-id": first.at(-1)!.id! } }))) rest.push(JSON.parse(message.data) as AgentEvent);
    expect(rest.find((e) => e.type === "tool_result")).toMatchObject({ call: { id: callId }, result: { isError: false } });
    expect(rest.at(-1)).toMatchObject({ type: "turn_end", reason: "final_answer" });
    expect(readFileSync(join(cwd, "notes.txt"), "utf8")).toBe("approved over HTTP\n");
    expect(existsSync(join(cwd, ".agent", "runs", `${sessionId}.json`))).toBe(false);
  });

  it("deny: the tool does not run; abort of a suspended run ends it user_abort", async () => {
    await start([writeStep, writeStep]);
    const one = await startRun({ input: "write", sessionId: "deny-1" });
    const asked = await readUntil(await call(base, `/runs/${one.runId}/events`), (m) => (JSON.parse(m.data) as AgentEvent).type === "suspended");
    const callId = (JSON.parse(asked.at(-1)!.data) as Extract<AgentEvent, { type: "suspended" }>).pending[0]!.callId;
    expect((await call(base, `/runs/${one.runId}/answers`, { body: { answers: { [callId]: "deny" } } })).status).toBe(202);
    const events = await allEvents(one.runId);
    expect(events.find((e) => e.event.type === "tool_result")!.event).toMatchObject({ result: { isError: true } });
    expect(events.at(-1)!.event).toMatchObject({ type: "turn_end", reason: "permission_denied" });
    expect(existsSync(join(cwd, "notes.txt"))).toBe(false);
    const two = await startRun({ input: "write again", sessionId: "deny-1" });
    await readUntil(await call(base, `/runs/${two.runId}/events`), (m) => (JSON.parse(m.data) as AgentEvent).type === "suspended");
    expect((await call(base, `/runs/${two.runId}/abort`, { method: "POST" })).status).toBe(202);
    expect((await allEvents(two.runId)).at(-1)!.event).toMatchObject({ type: "turn_end", reason: "user_abort" });
    expect(existsSync(join(cwd, "notes.txt"))).toBe(false);
  });

  it("a question outlives the server: a new server on the folder lists the suspended run and its answer resumes it", async () => {
    await start([writeStep]);
    const { runId, sessionId } = await startRun({ input: "write", sessionId: "restart-1" });
    const asked = await readUntil(await call(base, `/runs/${runId}/events`), (m) => (JSON.parse(m.data) as AgentEvent).type === "suspended");
    const callId = (JSON.parse(asked.at(-1)!.data) as Extract<AgentEvent, { type: "suspended" }>).pending[0]!.callId;
    await server!.close();
    await start([{ text: "Written after the restart." }]);
    const listed = (await (await call(base, `/runs?sessionId=${sessionId}`)).json()) as { runs: Array<{ runId: string; status: string; input: string }> };
    expect(listed.runs).toEqual([expect.objectContaining({ runId, status: "suspended", input: "write" })]);
    expect((await call(base, "/runs", { body: { input: "other", sessionId } })).status).toBe(409);
    expect((await call(base, `/runs/${runId}/answers`, { body: { answers: { [callId]: "allow" } } })).status).toBe(202);
    const events = await allEvents(runId);
    expect(events[0]!.event).toMatchObject({ type: "suspended", runId });
    expect(events.at(-1)!.event).toMatchObject({ type: "turn_end", reason: "final_answer" });
    expect(readFileSync(join(cwd, "notes.txt"), "utf8")).toBe("approved over HTTP\n");
  });

  it("event ids go on across a restart: the suspended event keeps its id, and a Last-Event-ID from before resumes after it", async () => {
    await start([{ text: "Writing the note.", toolCalls: writeStep.toolCalls }]);
    const { runId } = await startRun({ input: "write", sessionId: "restart-ids" });
    const asked = await readUntil(await call(base, `/runs/${runId}/events`), (m) => (JSON.parse(m.data) as AgentEvent).type === "suspended");
    const suspendedId = Number(asked.at(-1)!.id);
    expect(asked.map((m) => Number(m.id))).toEqual(asked.map((_, i) => i + 1));
    expect(suspendedId).toBeGreaterThan(2);
    const callId = (JSON.parse(asked.at(-1)!.data) as Extract<AgentEvent, { type: "suspended" }>).pending[0]!.callId;
    await server!.close();
    await start([{ text: "Written after the restart." }]);
    // A late client gets what the new server has: the suspended event, under the id it was sent with.
    const again = await readUntil(await call(base, `/runs/${runId}/events`), () => true);
    expect(again.map((m) => [Number(m.id), (JSON.parse(m.data) as AgentEvent).type])).toEqual([[suspendedId, "suspended"]]);
    const listed = (await (await call(base, "/runs?sessionId=restart-ids")).json()) as { runs: Array<{ events: number }> };
    expect(listed.runs).toEqual([expect.objectContaining({ events: suspendedId })]);
    expect((await call(base, `/runs/${runId}/events`, { headers: { "last-event-id": String(suspendedId + 1) } })).status).toBe(400);
    expect((await call(base, `/runs/${runId}/answers`, { body: { answers: { [callId]: "allow" } } })).status).toBe(202);
    // The client that had everything up to the suspended event goes on after it: nothing twice, ids increasing.
    const rest = await allEventsAfter(runId, suspendedId);
    expect(rest.map((r) => r.id)).toEqual(rest.map((_, i) => suspendedId + 1 + i));
    expect(rest.some((r) => r.event.type === "suspended")).toBe(false);
    expect(rest.at(-1)!.event).toMatchObject({ type: "turn_end", reason: "final_answer" });
    // One that had less gets what this server kept, from the suspended event, under the same ids.
    const behind = await allEventsAfter(runId, 1);
    expect(behind.map((r) => r.id)).toEqual([suspendedId, ...rest.map((r) => r.id)]);
  });

  it("a request's narrower mode applies: plan denies the write without asking", async () => {
    await start([writeStep, { text: "Could not write." }]);
    const { runId } = await startRun({ input: "write", options: { permissions: { mode: "plan" }, maxTurns: 3 } });
    const events = await allEvents(runId);
    expect(events.some((e) => e.event.type === "suspended")).toBe(false);
    expect(events.find((e) => e.event.type === "tool_result")!.event).toMatchObject({ result: { isError: true } });
    expect(existsSync(join(cwd, "notes.txt"))).toBe(false);
  });
});
