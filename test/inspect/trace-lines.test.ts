import { afterEach, describe, expect, it } from "vitest";
import { InspectorHub } from "../../src/inspect/hub.js";
import type { InspectorRecord } from "../../src/inspect/protocol.js";
import { startInspector, type Inspector } from "../../src/inspect/server.js";
import { TraceFeed } from "../../src/inspect/trace-feed.js";
import { pageClient } from "./support/clients.js";

const line = (sessionId: string, seq: number, state: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ v: 1, sessionId, seq, time: `2026-01-01T00:00:0${seq}.000Z`, kind: "state", state, turn: 0, details: {}, ...extra });

/** What a page connected to the hub is sent, record by record. */
function page(hub: InspectorHub): InspectorRecord[] {
  const got: InspectorRecord[] = [];
  hub.addPage(
    {
      send(text) {
        const message = JSON.parse(text) as { type: string; record?: InspectorRecord; records?: InspectorRecord[] };
        if (message.type === "record") got.push(message.record!);
        if (message.type === "records") got.push(...message.records!);
      },
    },
    {},
  );
  return got;
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("trace lines fed to the inspector as they arrive", () => {
  let inspector: Inspector | undefined;
  afterEach(async () => {
    await inspector?.close();
    inspector = undefined;
  });

  it("a session is a run from its first line (with its request), each line a record, in order", async () => {
    const hub = new InspectorHub(10_000);
    const got = page(hub);
    const feed = new TraceFeed(hub, "c0");
    feed.add([line("s1", 0, "build_context", { details: { input: "fix the bug" }, parentSession: "p0" }), line("s1", 1, "call_model")]);
    feed.add([line("s2", 0, "build_context"), line("s1", 2, "done")]);
    await settle();
    expect(got.map((r) => `${r.kind}:${"sessionId" in r ? r.sessionId : ""}`)).toEqual(["run:s1", "trace_line:s1", "trace_line:s1", "run:s2", "trace_line:s2", "trace_line:s1"]);
    expect(got[0]).toMatchObject({ kind: "run", sessionId: "s1", chartId: "c0", input: "fix the bug", parentSession: "p0", time: "2026-01-01T00:00:00.000Z" });
    expect(got.filter((r) => r.kind === "trace_line").map((r) => (r as { line: { seq: number } }).line.seq)).toEqual([0, 1, 0, 2]);
  });

  it("redacts the lines, and says which could not be read", async () => {
    const hub = new InspectorHub(10_000);
    const got = page(hub);
    new TraceFeed(hub, "c0").add([line("s1", 0, "build_context", { details: { input: "key sk-abcdefghijklmnopqrstuvwxyz0123456789" } }), "not json", JSON.stringify({ seq: 1 })]);
    await settle();
    const text = JSON.stringify(got);
    expect(text).not.toContain("sk-abcdefghijklmnopqrstuvwxyz0123456789");
    expect(got.filter((r) => r.kind === "trace_line")).toHaveLength(1);
    expect(got.find((r) => r.kind === "problem")).toMatchObject({ message: expect.stringContaining("2 trace lines could not be read") });
  });

  it("inspector.addTraceLines reaches a page that connects later, and refuses what is not lines", async () => {
    inspector = await startInspector();
    inspector.addTraceLines([line("late", 0, "build_context"), line("late", 1, "done")]);
    const client = await pageClient(inspector.port);
    await client.next((r) => r.kind === "trace_line" && (r.line as { seq: number }).seq === 1);
    expect(client.records.filter((r) => r.kind === "run" || r.kind === "trace_line").map((r) => r.kind)).toEqual(["run", "trace_line", "trace_line"]);
    client.ws.close();
    expect(() => inspector!.addTraceLines([{ seq: 1 } as unknown as string])).toThrow(/array of strings, each the JSON text of one trace line/);
  });
});
