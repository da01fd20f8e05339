import { describe, expect, it } from "vitest";
import { InspectorHub, type PageConnection } from "../../src/inspect/hub.js";
import type { InspectorRecord } from "../../src/inspect/protocol.js";

/** A page as the hub sees one: every message it is sent, parsed, with the records in them in order. */
function page(): PageConnection & { messages: Array<{ type: string; record?: InspectorRecord; records?: InspectorRecord[] }>; records(): InspectorRecord[] } {
  const messages: Array<{ type: string; record?: InspectorRecord; records?: InspectorRecord[] }> = [];
  return {
    messages,
    send: (text) => messages.push(JSON.parse(text)),
    records: () => messages.flatMap((m) => (m.type === "records" ? m.records! : m.type === "record" ? [m.record!] : [])),
  };
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
const messagesOf = (records: InspectorRecord[]) => records.map((r) => (r.kind === "problem" ? r.message : r.kind));

describe("records sent to the pages", () => {
  it("go out once per turn of the event loop: many as one records message in order, one alone as a record", async () => {
    const hub = new InspectorHub(10_000);
    const p = page();
    hub.addPage(p, {});
    p.messages.length = 0; // the hello and the (empty) replay
    for (let i = 0; i < 150; i++) hub.problem(`p${i}`);
    expect(p.messages).toHaveLength(0);
    await nextTurn();
    expect(p.messages.map((m) => m.type)).toEqual(["records"]);
    expect(messagesOf(p.records())).toEqual(Array.from({ length: 150 }, (_, i) => `p${i}`));
    hub.problem("alone");
    await nextTurn();
    expect(p.messages.map((m) => m.type)).toEqual(["records", "record"]);
    expect(p.messages[1]!.record).toMatchObject({ kind: "problem", message: "alone" });
    hub.close();
  });

  it("reach a page that connects while some wait exactly once (in its replay), and the pages already there too", async () => {
    const hub = new InspectorHub(10_000);
    const early = page();
    hub.addPage(early, {});
    hub.problem("a");
    hub.problem("b");
    const late = page();
    hub.addPage(late, {});
    hub.problem("c");
    await nextTurn();
    expect(messagesOf(early.records())).toEqual(["a", "b", "c"]);
    expect(messagesOf(late.records())).toEqual(["a", "b", "c"]);
    expect(late.messages[0]!.type).toBe("hello");
    expect(messagesOf(late.messages[1]!.records!)).toEqual(["a", "b"]);
    hub.close();
  });

  it("are cut into several messages when one turn adds a lot, none lost or reordered", async () => {
    const hub = new InspectorHub(10_000);
    const p = page();
    hub.addPage(p, {});
    p.messages.length = 0;
    const big = "x".repeat(60_000);
    for (let i = 0; i < 20; i++) hub.problem(`${i}:${big}`);
    await nextTurn();
    expect(p.messages.length).toBeGreaterThan(1);
    expect(p.records().map((r) => (r.kind === "problem" ? r.message.split(":")[0] : ""))).toEqual(Array.from({ length: 20 }, (_, i) => String(i)));
    hub.close();
  });

  it("still waiting when the hub closes are sent before it forgets the pages", () => {
    const hub = new InspectorHub(10_000);
    const p = page();
    hub.addPage(p, {});
    hub.problem("last words");
    hub.close();
    expect(messagesOf(p.records())).toContain("last words");
  });
});
