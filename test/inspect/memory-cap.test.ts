import { afterEach, describe, expect, it } from "vitest";
import type WebSocket from "ws";
import { InspectorHub } from "../../src/inspect/hub.js";
import type { ActorSnapshot, InspectorRecord } from "../../src/inspect/protocol.js";
import { DEFAULT_MAX_BYTES } from "../../src/inspect/record-store.js";
import { startInspector, type Inspector } from "../../src/inspect/server.js";
import { connect, isProblem, pageClient, pageToken } from "./support/clients.js";

const MB = 1024 * 1024;
const time = "2026-01-01T00:00:00.000Z";
/** About 95 KB of context, like the snapshots that took the server to 1.5 GB (records from actors cut it to 20 KB). */
const bigContext = (n: number) => ({ n, log: "x".repeat(95 * 1024) });

/** What a page that connects now is sent: the records, and the bytes of their JSON as the hub counts them. */
function replay(hub: InspectorHub): { records: InspectorRecord[]; bytes: number } {
  const sent: string[] = [];
  hub.addPage({ send: (text) => sent.push(text) }, {});
  const prefix = '{"type":"records","records":[';
  const message = sent[1]!;
  const records = (JSON.parse(message) as { records: InspectorRecord[] }).records;
  // The records' JSON as sent, without the envelope and the commas between them.
  const bytes = Buffer.byteLength(message) - Buffer.byteLength(prefix) - 2 - Math.max(0, records.length - 1);
  return { records, bytes };
}

const actor = (sessionId: string, snapshot: ActorSnapshot = { status: "active", value: "a" }): InspectorRecord => ({ kind: "actor", time, sessionId, name: sessionId, chartId: "c0", origin: "socket", snapshot });
const snapshot = (sessionId: string, snap: ActorSnapshot): InspectorRecord => ({ kind: "snapshot", time, sessionId, event: { type: "TICK" }, snapshot: snap });

describe("the hub's memory cap", () => {
  it("keeps the retained bytes under the cap through many large snapshots, counting what a page is sent", () => {
    const cap = 4 * MB;
    const hub = new InspectorHub(10_000, cap);
    let most = 0;
    // 40 actors of 50 snapshots of 95 KB (190 MB in all); every other actor ends.
    for (let a = 0; a < 40; a++) {
      const id = `x:${a}`;
      hub.add(actor(id));
      for (let i = 0; i < 50; i++) {
        const ends = a % 2 === 0 && i === 49;
        hub.add(snapshot(id, { status: ends ? "done" : "active", value: `s${i}`, context: bigContext(i) }));
        most = Math.max(most, hub.retainedBytes);
      }
    }
    expect(most).toBeLessThanOrEqual(cap);
    const { records, bytes } = replay(hub);
    expect(bytes).toBe(hub.retainedBytes);
    // Each live actor is still known, with its latest snapshot.
    for (let a = 1; a < 40; a += 2) {
      expect(records.some((r) => r.kind === "actor" && r.sessionId === `x:${a}`), `x:${a}`).toBe(true);
      expect(records.some((r) => r.kind === "snapshot" && r.sessionId === `x:${a}` && r.snapshot.value === "s49"), `x:${a}`).toBe(true);
    }
  });

  it("drops the oldest records of ended actors first, and says so once", () => {
    const cap = 2 * MB;
    const hub = new InspectorHub(10_000, cap);
    hub.add(actor("live"));
    for (let i = 0; i < 5; i++) hub.add(snapshot("live", { status: "active", value: `l${i}`, context: bigContext(i) }));
    for (let a = 0; a < 10; a++) {
      hub.add(actor(`ended-${a}`));
      for (let i = 0; i < 4; i++) hub.add(snapshot(`ended-${a}`, { status: i === 3 ? "stopped" : "active", value: `e${i}`, context: bigContext(i) }));
    }
    expect(hub.retainedBytes).toBeLessThanOrEqual(cap);
    const { records } = replay(hub);
    // The live actor lost nothing: ended ones were enough.
    expect(records.filter((r) => r.kind === "snapshot" && r.sessionId === "live")).toHaveLength(5);
    // The oldest ended actors went first.
    expect(records.some((r) => r.kind === "actor" && r.sessionId === "ended-0")).toBe(false);
    expect(records.some((r) => r.kind === "snapshot" && r.sessionId === "ended-9")).toBe(true);
    const problems = records.filter(isProblem).map((p) => p.message);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/keeps at most 2 MB of records \(maxBytes\): it dropped the oldest \d+ records \([\d.]+ MB\) of \d+ ended actors or runs/);
  });

  it("drops a live actor's oldest snapshots when nothing has ended, keeping its first and latest", () => {
    const cap = 2 * MB;
    const hub = new InspectorHub(10_000, cap);
    hub.add(actor("forever"));
    let most = 0;
    for (let i = 0; i < 600; i++) {
      hub.add(snapshot("forever", { status: "active", value: `v${i}`, context: bigContext(i) }));
      most = Math.max(most, hub.retainedBytes);
    }
    expect(most).toBeLessThanOrEqual(cap);
    const { records } = replay(hub);
    expect(records.find((r) => r.kind === "actor")).toMatchObject({ sessionId: "forever" });
    const values = records.filter((r) => r.kind === "snapshot").map((r) => (r as { snapshot: ActorSnapshot }).snapshot.value);
    expect(values.at(-1)).toBe("v599");
    expect(values).not.toContain("v0");
    const problems = records.filter(isProblem).map((p) => p.message);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/ended actors and runs were not enough, so it dropped the oldest \d+ records \([\d.]+ MB\) of live ones, keeping each one's first and latest record/);
  });

  it("drops an ended run's records with it, and never a permission request that waits", async () => {
    const cap = 2 * MB;
    const hub = new InspectorHub(10_000, cap);
    const waiting = hub.requestPermission("run-live", { id: "c", name: "bash", input: { command: "make" } }, "exec", undefined);
    for (let r = 0; r < 8; r++) {
      hub.add({ kind: "run", time, sessionId: `run-${r}`, chartId: "c0" });
      for (let i = 0; i < 5; i++) hub.addText(JSON.stringify({ kind: "agent", time, sessionId: `run-${r}`, event: { type: "text_delta", text: "y".repeat(95 * 1024) } }), `run-${r}`);
      hub.add({ kind: "run_end", time, sessionId: `run-${r}` });
    }
    hub.add(actor("flood"));
    for (let i = 0; i < 100; i++) hub.add(snapshot("flood", { status: "active", value: `f${i}`, context: bigContext(i) }));
    expect(hub.retainedBytes).toBeLessThanOrEqual(cap);
    const { records } = replay(hub);
    expect(records.some((r) => r.kind === "run" && r.sessionId === "run-0")).toBe(false);
    const permission = records.find((r) => r.kind === "permission");
    expect(permission).toMatchObject({ sessionId: "run-live", call: { input: { command: "make" } } });
    expect(hub.answer((permission as { id: string }).id, "deny", "page")).toBeUndefined();
    await expect(waiting).resolves.toBe("deny");
  });

  it("defaults to 64 MB", () => {
    expect(DEFAULT_MAX_BYTES).toBe(64 * MB);
  });
});

describe("inspector server: maxBytes", () => {
  let inspector: Inspector | undefined;
  afterEach(async () => {
    await inspector?.close();
    inspector = undefined;
  });

  it("refuses a bad maxBytes, saying what it takes", async () => {
    for (const maxBytes of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, "64MB" as unknown as number]) {
      await expect(startInspector({ maxBytes }), String(maxBytes)).rejects.toMatchObject({ code: "INVALID_OPTIONS", message: expect.stringContaining("maxBytes must be a whole number of bytes") });
    }
  });

  it("keeps what @statelyai/inspect clients send within the cap: a page connecting later is sent at most that", async () => {
    const cap = 4 * MB;
    inspector = await startInspector({ maxBytes: cap });
    const client = await connect(inspector.port);
    const base = { createdAt: "1767225600000", id: null, _version: "0.7.2" };
    const definition = JSON.stringify({ id: "ticker", initial: "a", states: { a: {} } });
    const context = bigContext(0);
    for (let a = 0; a < 10; a++) {
      const sessionId = `x:${a}`;
      client.send(JSON.stringify({ type: "@xstate.actor", name: "ticker", sessionId, definition, snapshot: { status: "active", value: "a" }, ...base }));
      for (let i = 0; i < 50; i++) {
        client.send(JSON.stringify({ type: "@xstate.snapshot", sessionId, event: { type: "TICK" }, snapshot: { status: a < 9 && i === 49 ? "done" : "active", value: "a", context: { ...context, i } }, ...base }));
      }
    }
    client.send("last message");
    const page = await pageClient(inspector.port);
    await page.next((r) => isProblem(r) && r.message.includes("last message"));
    page.ws.close();
    const late = await pageClient(inspector.port);
    const replayed = late.raw.find((m) => m.startsWith('{"type":"records"'))!;
    expect(Buffer.byteLength(replayed)).toBeLessThanOrEqual(cap + 1024);
    expect(late.records.some((r) => r.kind === "snapshot" && r.sessionId === "ws1/x:9" && (r.snapshot.context as { i: number }).i === 49)).toBe(true);
    expect(late.records.some((r) => isProblem(r) && r.message.includes("keeps at most 4 MB of records"))).toBe(true);
    client.close();
    late.ws.close();
  });

  it("disconnects a page that stops reading rather than buffering for it without end; it gets the kept records again", async () => {
    const cap = 1 * MB;
    inspector = await startInspector({ maxBytes: cap });
    const stalled = await pageClient(inspector.port);
    const socket = (stalled.ws as unknown as { _socket: { pause(): void } })._socket;
    socket.pause();
    const closed = new Promise<void>((resolve) => stalled.ws.once("close", () => resolve()));
    const run = inspector.attach({ sessionId: "chatty" });
    let gone = false;
    void closed.then(() => (gone = true));
    // Each round writes 5 MB; the socket's buffers on loopback take a few MB at most before the server sees it lag.
    for (let round = 0; round < 100 && !gone; round++) {
      for (let i = 0; i < 50; i++) run.publish({ type: "text_delta", text: "z".repeat(100 * 1024) });
      await new Promise((resolve) => setTimeout(resolve, 20));
      if (inspector.pages === 0) break;
    }
    await expect.poll(() => inspector!.pages, { timeout: 30_000 }).toBe(0);
    const fresh = await pageClient(inspector.port);
    expect(fresh.records.some((r) => isProblem(r) && r.message.includes("fell more than 2097152 bytes behind"))).toBe(true);
    // The page token still answers for a page that came back.
    const answer = run.requestPermission({ call: { id: "c", name: "bash", input: { command: "ls" } }, reason: "exec" });
    const asked = (await fresh.next((r) => r.kind === "permission")) as { id: string };
    fresh.ws.send(JSON.stringify({ type: "@statecraft.answer", id: asked.id, answer: "allow", token: await pageToken(inspector.port) }));
    await expect(answer).resolves.toBe("allow");
    fresh.ws.close();
    (stalled.ws as WebSocket).terminate();
  });
});
