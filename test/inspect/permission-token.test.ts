import { randomBytes } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type WebSocket from "ws";
import { startInspector, type Inspector } from "../../src/inspect/server.js";
import type { InspectorRecord } from "../../src/inspect/protocol.js";
import { connect, isProblem, pageClient, pageToken, type PageClient } from "./support/clients.js";

let inspector: Inspector;
let other: Inspector;

beforeEach(async () => {
  inspector = await startInspector();
  other = await startInspector();
});

afterEach(async () => {
  await inspector.close();
  await other.close();
});

const answerOf = (id: string, extra: Record<string, unknown> = {}) => JSON.stringify({ type: "@statecraft.answer", id, answer: "allow", ...extra });

/** Sends what `client` sends, then a marker, and waits until the server reported the marker: all before it was read. */
async function attack(watcher: PageClient, name: string, client: WebSocket, messages: Array<string | Buffer>): Promise<void> {
  for (const m of messages) client.send(m);
  client.send(`end of attack ${name}`);
  await watcher.next((r) => isProblem(r) && r.message.includes(`end of attack ${name}`));
  client.close();
}

describe("inspector: only its own page answers permission requests", () => {
  it("serves a fresh random token in each server's page, and never sends it over the WebSocket", async () => {
    const token = await pageToken(inspector.port);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/); // 32 random bytes
    expect(await pageToken(inspector.port)).toBe(token); // the same for every load of this server's page
    expect(await pageToken(other.port)).not.toBe(token);
    const restarted = await startInspector();
    try {
      expect(await pageToken(restarted.port)).not.toBe(token);
    } finally {
      await restarted.close();
    }
    // A client that says hello is sent the run, never the token.
    const watcher = await pageClient(inspector.port);
    inspector.attach({ sessionId: "run-t" }).requestPermission({ call: { id: "c", name: "bash", input: { command: "ls" } }, reason: "exec" });
    await watcher.next((r) => r.kind === "permission");
    expect(watcher.raw.join("\n")).not.toContain(token);
    watcher.ws.close();
  });

  it("refuses every answer that lacks the page token, wherever else the token is put; the page's answer still counts", async () => {
    const port = inspector.port;
    const watcher = await pageClient(port);
    const run = inspector.attach({ sessionId: "run-attack", input: "clean up" });
    const answer = run.requestPermission({ call: { id: "call-rm", name: "bash", input: { command: "rm -rf ~" } }, reason: "bash is an exec tool" });
    const { id } = (await watcher.next((r) => r.kind === "permission")) as Extract<InspectorRecord, { kind: "permission" }>;
    const token = await pageToken(port);
    const foreign = await pageToken(other.port);
    const origin = `http://127.0.0.1:${port}`;

    // Each sends "allow"; the request must still be waiting after all of them.
    const attempts: Array<{ name: string; open: () => Promise<WebSocket>; messages: Array<string | Buffer>; answers: number }> = [
      { name: "raw client, no token", open: () => connect(port), messages: [answerOf(id)], answers: 1 },
      { name: "forged Origin, no token", open: () => connect(port, { origin }), messages: [answerOf(id)], answers: 1 },
      { name: "forged localhost Origin, hello first", open: () => connect(port, { origin: `http://localhost:${port}` }), messages: [JSON.stringify({ type: "@statecraft.hello" }), answerOf(id)], answers: 1 },
      { name: "wrong token", open: () => connect(port), messages: [answerOf(id, { token: randomBytes(32).toString("base64url") })], answers: 1 },
      { name: "empty token", open: () => connect(port), messages: [answerOf(id, { token: "" })], answers: 1 },
      { name: "another inspector's token", open: () => connect(port, { origin }), messages: [answerOf(id, { token: foreign })], answers: 1 },
      {
        name: "near misses of the token",
        open: () => connect(port),
        messages: [
          answerOf(id, { token: token.slice(0, -1) }),
          answerOf(id, { token: `${token} ` }),
          answerOf(id, { token: `x${token}` }),
          answerOf(id, { token: token.toUpperCase() === token ? token.toLowerCase() : token.toUpperCase() }),
          answerOf(id, { token: token + token }),
        ],
        answers: 5,
      },
      {
        name: "the token as another type",
        open: () => connect(port),
        messages: [answerOf(id, { token: [token] }), answerOf(id, { token: { token } }), answerOf(id, { token: 0 }), answerOf(id, { token: null }), answerOf(id, { token: true })],
        answers: 5,
      },
      { name: "the token in the URL", open: () => connect(port, { path: `/?token=${token}` }), messages: [answerOf(id)], answers: 1 },
      { name: "the token as subprotocol", open: () => connect(port, { protocols: [token] }), messages: [answerOf(id)], answers: 1 },
      {
        name: "the token in headers",
        open: () => connect(port, { origin, headers: { Authorization: `Bearer ${token}`, Cookie: `statecraft-token=${token}`, "X-Statecraft-Token": token } }),
        messages: [answerOf(id)],
        answers: 1,
      },
      { name: "the token in the hello", open: () => connect(port, { origin }), messages: [JSON.stringify({ type: "@statecraft.hello", token }), answerOf(id)], answers: 1 },
      { name: "the token in a message of its own", open: () => connect(port), messages: [JSON.stringify({ type: "@statecraft.token", token }), answerOf(id)], answers: 1 },
      {
        name: "the token under other keys",
        open: () => connect(port),
        messages: [answerOf(id, { pageToken: token }), answerOf(id, { auth: token }), answerOf(id, { meta: { token } }), answerOf(id, { Token: token })],
        answers: 4,
      },
      {
        name: "an answer inside an inspection event",
        open: () => connect(port),
        messages: [JSON.stringify({ type: "@xstate.event", sessionId: "x:0", createdAt: "1767225600000", id: null, _version: "0.7.2", event: { type: "@statecraft.answer", id, answer: "allow", token } })],
        answers: 0,
      },
      { name: "the right answer as a binary frame", open: () => connect(port), messages: [Buffer.from(answerOf(id, { token }))], answers: 0 },
    ];
    for (const a of attempts) await attack(watcher, a.name, await a.open(), a.messages);

    expect(watcher.records.filter((r) => r.kind === "permission_answer")).toEqual([]);
    const refusals = watcher.records.filter((r) => isProblem(r) && r.message.includes(`may not answer permission request ${id}`)) as Array<{ message: string }>;
    expect(refusals).toHaveLength(attempts.reduce((n, a) => n + a.answers, 0));
    expect(refusals[0]!.message).toContain("the answer carries no page token");
    expect(refusals[0]!.message).toContain(`only the inspector's own page (http://127.0.0.1:${port}/) answers permission requests`);
    expect(refusals.some((r) => r.message.includes("is not this inspector's page token"))).toBe(true);
    expect(refusals.some((r) => r.message.includes("token is not a string"))).toBe(true);
    // No refusal repeats the token it was shown (a problem line is sent to every client that said hello).
    expect(watcher.raw.join("\n")).not.toContain(token);

    // The page, with its token, still answers: deny, so that an "allow" that got through above would show.
    const page = await pageClient(port);
    page.ws.send(JSON.stringify({ type: "@statecraft.answer", id, answer: "deny", token }));
    await expect(answer).resolves.toBe("deny");
    const answered = await watcher.next((r) => r.kind === "permission_answer");
    expect(answered).toMatchObject({ id, answer: "deny", by: "page" });
    page.ws.close();
    watcher.ws.close();
  });

  it("still takes inspection events from any client, without a token", async () => {
    const watcher = await pageClient(inspector.port);
    const client = await connect(inspector.port);
    const definition = JSON.stringify({ id: "door", initial: "shut", states: { shut: { on: { OPEN: "open" } }, open: {} } });
    client.send(JSON.stringify({ type: "@xstate.actor", name: "door", sessionId: "x:0", createdAt: "1767225600000", id: null, _version: "0.7.2", definition, snapshot: { status: "active", value: "shut" } }));
    client.send(JSON.stringify({ type: "@xstate.snapshot", sessionId: "x:0", createdAt: "1767225600100", id: null, _version: "0.7.2", event: { type: "OPEN" }, snapshot: { status: "active", value: "open" } }));
    await watcher.next((r) => r.kind === "actor" && r.name === "door");
    await watcher.next((r) => r.kind === "snapshot" && (r.snapshot.value as string) === "open");
    expect(watcher.records.filter(isProblem)).toEqual([]);
    client.close();
    watcher.ws.close();
  });
});
