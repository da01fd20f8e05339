import { createWebSocketInspector } from "@statelyai/inspect";
import { afterEach, describe, expect, it } from "vitest";
import { createActor, createMachine, waitFor } from "xstate";
import { startInspector, type Inspector } from "../../src/inspect/server.js";
import type { InspectorRecord } from "../../src/inspect/protocol.js";
import { unchartable, spawner } from "./fixtures/actor-kinds.js";
import { isProblem, pageClient, type PageClient } from "./support/clients.js";

type ActorRecord = Extract<InspectorRecord, { kind: "actor" }>;
const isActor = (r: InspectorRecord): r is ActorRecord => r.kind === "actor";
const WAIT = { timeout: 10_000, interval: 20 };

let inspector: Inspector | undefined;
let page: PageClient | undefined;
afterEach(async () => {
  page?.ws.close();
  await inspector?.close();
  inspector = undefined;
  page = undefined;
});

async function open(): Promise<{ inspector: Inspector; page: PageClient }> {
  inspector = await startInspector();
  page = await pageClient(inspector.port);
  return { inspector, page };
}

describe("in-process inspection never throws into the app", () => {
  // Each payload would make recording throw; the app must run on as if not inspected, and a problem line says why.
  const payloads: Array<[string, () => ReturnType<typeof createMachine>, (actor: ReturnType<typeof createActor>) => void]> = [
    ["a machine whose chart cannot be built (a guard whose name throws)", () => unchartable as never, (actor) => actor.send({ type: "GO" })],
    [
      "a context whose getter throws",
      () => createMachine({ id: "getter", initial: "a", context: { get boom(): number { throw new Error("getter exploded"); } }, states: { a: { on: { GO: "b" } }, b: {} } }) as never,
      (actor) => actor.send({ type: "GO" }),
    ],
    [
      "a context that is a Proxy throwing on every look",
      () =>
        createMachine({
          id: "proxy",
          initial: "a",
          context: new Proxy({}, { ownKeys() { throw new Error("ownKeys trap"); }, getPrototypeOf() { throw new Error("prototype trap"); } }),
          states: { a: { on: { GO: "b" } }, b: {} },
        }) as never,
      (actor) => actor.send({ type: "GO" }),
    ],
    [
      "an event whose toJSON throws",
      () => createMachine({ id: "event", initial: "a", states: { a: { on: { GO: "b" } }, b: {} } }) as never,
      (actor) => actor.send({ type: "GO", toJSON() { throw new Error("toJSON exploded"); } } as never),
    ],
  ];
  for (const [what, make, drive] of payloads) {
    it(`survives ${what}`, async () => {
      const { inspector, page } = await open();
      const machine = make();
      let actor: ReturnType<typeof createActor> | undefined;
      expect(() => {
        actor = createActor(machine, { inspect: inspector.inspect }).start();
        drive(actor);
      }).not.toThrow();
      expect(actor!.getSnapshot().status).toBe("active");
      // The actor is listed all the same.
      await page.next((r) => isActor(r) && r.name === machine.id);
      actor!.stop();
      if (machine === (unchartable as never)) {
        const problem = await page.next((r) => isProblem(r) && r.message.includes("unchartable"));
        expect((problem as { message: string }).message).toMatch(/statechart of actor unchartable .* could not be drawn: .*guard's name cannot be read; its snapshots and events are still shown/);
      }
    });
  }

  it("says what went wrong, and stops saying it after a few times", async () => {
    const { inspector, page } = await open();
    const machine = createMachine({ id: "noisy", context: { get boom(): number { throw new Error("getter exploded"); } }, on: { TICK: {} } });
    const actor = createActor(machine, { inspect: inspector.inspect }).start();
    for (let i = 0; i < 50; i++) actor.send({ type: "TICK" });
    actor.stop();
    await expect.poll(() => page.records.filter(isProblem).length, WAIT).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 100));
    const problems = page.records.filter(isProblem).map((p) => p.message);
    expect(problems.length).toBeLessThanOrEqual(5);
    expect(problems[0]).toContain("getter exploded");
    expect(problems.at(-1)).toMatch(/later failures are not reported/);
  });
});

describe("every actor is recorded", () => {
  it("lists a machine without states and its promise, callback and observable children, with their snapshots and events", async () => {
    const { inspector, page } = await open();
    const actor = createActor(spawner, { inspect: inspector.inspect, systemId: "root" }).start();
    actor.send({ type: "SPAWN" });
    actor.send({ type: "PING" });
    await waitFor(actor, (s) => s.context.pongs === 1);
    await expect.poll(() => page.records.filter(isActor).map((r) => r.name).sort(), WAIT).toEqual(["pinger", "spawner", "ticks", "user"]);
    const actors = page.records.filter(isActor);
    const root = actors.find((r) => r.name === "spawner")!;
    expect(root).toMatchObject({ systemId: "root", app: "this process", origin: "process" });
    for (const name of ["pinger", "ticks", "user"]) {
      const child = actors.find((r) => r.name === name)!;
      expect(child.parentId, name).toBe(root.sessionId);
      expect(child.chartId, `${name} is not a machine: it has no chart`).toBeUndefined();
    }
    expect(actors.find((r) => r.name === "user")!.systemId).toBe("userFetcher");
    // The promise's result and the observable's values arrive as snapshots of those actors.
    const snapshotsOf = (name: string) => {
      const id = actors.find((r) => r.name === name)!.sessionId;
      return page.records.filter((r): r is Extract<InspectorRecord, { kind: "snapshot" }> => r.kind === "snapshot" && r.sessionId === id).map((r) => r.snapshot);
    };
    await expect.poll(() => snapshotsOf("user").at(-1), WAIT).toMatchObject({ status: "done", output: { id: 7, name: "user 7" } });
    await expect.poll(() => snapshotsOf("ticks").map((s) => s.context), WAIT).toEqual(expect.arrayContaining([1, 2]));
    // The events between them: PING to the callback actor (from the root), PONG back.
    const pinger = actors.find((r) => r.name === "pinger")!.sessionId;
    const events = page.records.filter((r): r is Extract<InspectorRecord, { kind: "event" }> => r.kind === "event");
    expect(events.some((e) => e.sessionId === pinger && (e.event as { type: string }).type === "PING" && e.sourceId === root.sessionId)).toBe(true);
    expect(events.some((e) => e.sessionId === root.sessionId && (e.event as { type: string }).type === "PONG" && e.sourceId === pinger)).toBe(true);
    // The root's context changes are steps of their own.
    const rootSnapshots = page.records.filter((r): r is Extract<InspectorRecord, { kind: "snapshot" }> => r.kind === "snapshot" && r.sessionId === root.sessionId);
    expect(rootSnapshots.map((r) => (r.snapshot.context as { pongs: number }).pongs)).toContain(1);
    actor.stop();
  });

  it("records a machine's macrostep snapshot once when its microsteps were recorded", async () => {
    const { inspector, page } = await open();
    const machine = createMachine({ id: "once", initial: "a", states: { a: { on: { GO: "b" } }, b: {} } });
    const actor = createActor(machine, { inspect: inspector.inspect }).start();
    actor.send({ type: "GO" });
    actor.stop();
    const id = actor.sessionId;
    await expect.poll(() => page.records.filter((r) => r.kind === "snapshot" && r.sessionId === id).length, WAIT).toBe(3);
    const snaps = page.records.filter((r): r is Extract<InspectorRecord, { kind: "snapshot" }> => r.kind === "snapshot" && r.sessionId === id);
    // The initial snapshot, GO's microstep (with its transition), the stop.
    expect(snaps.map((s) => [s.snapshot.value, s.snapshot.status, s.transitions?.length ?? 0])).toEqual([
      ["a", "active", 0],
      ["b", "active", 1],
      ["b", "stopped", 0],
    ]);
  });
});

describe("WebSocket clients", () => {
  it("names the app it gives, and marks its actors ended when its connection closes", async () => {
    const { inspector, page } = await open();
    const client = createWebSocketInspector({ url: `ws://127.0.0.1:${inspector.port}/?app=shop<script>` });
    const actor = createActor(spawner, { inspect: client.inspect }).start();
    actor.send({ type: "SPAWN" });
    await expect.poll(() => page.records.filter(isActor).length, WAIT).toBe(4);
    const actors = page.records.filter(isActor);
    // Kept to plain characters: the page shows it as text anyway.
    for (const r of actors) expect(r.app).toMatch(/^shopscript \(client \d+\)$/);
    client.stop();
    // The promise ended by itself; the root, the callback and the observable (if still running) are ended by the close.
    await expect.poll(() => page.records.filter((r) => r.kind === "actor_end").length, WAIT).toBeGreaterThanOrEqual(2);
    const ended = page.records.filter((r): r is Extract<InspectorRecord, { kind: "actor_end" }> => r.kind === "actor_end");
    const root = actors.find((r) => r.name === "spawner")!;
    const pinger = actors.find((r) => r.name === "pinger")!;
    expect(ended.map((r) => r.sessionId)).toEqual(expect.arrayContaining([root.sessionId, pinger.sessionId]));
    expect(ended[0].reason).toBe(`the connection of ${actors[0].app} closed`);
    expect(ended.map((r) => r.sessionId)).not.toContain(actors.find((r) => r.name === "user")!.sessionId);
    actor.stop();
  });

  it("calls a client without a name `client N`", async () => {
    const { inspector, page } = await open();
    const client = createWebSocketInspector({ url: `ws://127.0.0.1:${inspector.port}` });
    const actor = createActor(createMachine({ id: "plain", initial: "a", states: { a: {} } }), { inspect: client.inspect }).start();
    const r = (await page.next(isActor)) as ActorRecord;
    expect(r.app).toMatch(/^client \d+$/);
    actor.stop();
    client.stop();
  });
});
