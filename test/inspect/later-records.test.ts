import { afterEach, describe, expect, it } from "vitest";
import { InspectorHub, type PageConnection } from "../../src/inspect/hub.js";
import { createInspectedRun, engineObserverOf } from "../../src/inspect/run.js";
import { tracedOptionsOf } from "../../src/run-settings.js";
import { scriptedModel, type QueryOptions, type ScriptStep } from "../../src/index.js";
import { observeEngine } from "../../src/observers/observe.js";
import { prepare } from "../../src/query.js";
import { removeDir, tempDir } from "../support/engine.js";
import { echo, note, runInspected } from "./support/engine-run.js";

const dirs: string[] = [];
const SECRET_VAR = "STATECRAFT_LATER_RECORDS_API_KEY";
const SECRET = "sk-laterRecords0123456789abcdefXYZ";
afterEach(() => {
  for (const dir of dirs.splice(0)) removeDir(dir);
  delete process.env[SECRET_VAR];
});

/** A page as the hub sees one: the texts of the records it is sent, in order. */
function page(): PageConnection & { texts: string[] } {
  const texts: string[] = [];
  return {
    texts,
    send(message) {
      const parsed = JSON.parse(message) as { type: string; record?: unknown; records?: unknown[] };
      if (parsed.type === "record") texts.push(JSON.stringify(parsed.record));
      if (parsed.type === "records") texts.push(...parsed.records!.map((r) => JSON.stringify(r)));
    },
  };
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe("records written later (addLater)", () => {
  it("are not written while no page is connected, and reach a page that connects in the order they came", () => {
    const hub = new InspectorHub(10_000);
    let writes = 0;
    const later = (n: number) => () => {
      writes++;
      return JSON.stringify({ kind: "agent", time: "2026-01-01T00:00:00.000Z", sessionId: "r", event: { type: "n", n } });
    };
    hub.addLater(later(1), 300, "r");
    hub.problem("between");
    hub.addLater(later(2), 300, "r");
    expect(writes).toBe(0);
    const p = page();
    hub.addPage(p, {});
    expect(writes).toBe(2);
    expect(p.texts.map((t) => JSON.parse(t) as { event?: { n: number }; message?: string }).map((r) => r.event?.n ?? r.message)).toEqual([1, "between", 2]);
    hub.close();
  });

  it("are written at once while a page is connected, and when the kept bytes are asked for", async () => {
    const hub = new InspectorHub(10_000);
    let writes = 0;
    const text = '{"kind":"problem","time":"2026-01-01T00:00:00.000Z","message":"x"}';
    const write = () => {
      writes++;
      return text;
    };
    hub.addLater(write, 300, "r");
    expect(hub.retainedBytes).toBe(Buffer.byteLength(text));
    expect(writes).toBe(1);
    const p = page();
    hub.addPage(p, {});
    hub.addLater(write, 300, "r");
    expect(writes).toBe(2);
    await nextTurn();
    expect(p.texts).toHaveLength(2);
    hub.close();
  });

  it("stay within maxBytes with no page: past the cap their estimate has them written and the cap applied", () => {
    const cap = 64 * 1024;
    const hub = new InspectorHub(10_000, cap);
    let writes = 0;
    const text = (i: number) => JSON.stringify({ kind: "agent", time: "2026-01-01T00:00:00.000Z", sessionId: "r", event: { type: "text_delta", text: `${i}:${"z".repeat(2000)}` } });
    for (let i = 0; i < 500; i++) {
      hub.addLater(() => {
        writes++;
        return text(i);
      }, 2100, "r");
    }
    // 500 records of about 2 KB are 1 MB: they could not all wait unwritten under a 64 KB cap.
    expect(writes).toBeGreaterThan(400);
    const p = page();
    hub.addPage(p, {});
    const bytes = p.texts.reduce((sum, t) => sum + Buffer.byteLength(t), 0);
    expect(bytes).toBeLessThanOrEqual(cap);
    expect(p.texts.at(-1)).toBe(text(499));
    expect(p.texts.some((t) => t.includes("keeps at most"))).toBe(true);
    hub.close();
  });

  it("are written when the records behind them pass maxBytes, so what waits stays bounded", () => {
    const cap = 64 * 1024;
    const hub = new InspectorHub(10_000, cap);
    let writes = 0;
    hub.addLater(() => {
      writes++;
      return '{"kind":"problem","time":"2026-01-01T00:00:00.000Z","message":"first"}';
    }, 300, "r");
    const snapshot = (i: number) => ({ kind: "snapshot" as const, time: "2026-01-01T00:00:00.000Z", sessionId: "x:0", event: { type: "TICK" }, snapshot: { status: "active", value: `v${i}`, context: { log: "y".repeat(4000) } } });
    for (let i = 0; i < 10; i++) hub.add(snapshot(i));
    expect(writes).toBe(0);
    for (let i = 10; i < 40; i++) hub.add(snapshot(i));
    expect(writes).toBe(1);
    hub.close();
  });

  it("tell a problem when one cannot be written, and the rest still come", () => {
    const hub = new InspectorHub(10_000);
    hub.addLater(() => {
      throw new Error("no text today");
    }, 300, "r");
    hub.addLater(() => '{"kind":"problem","time":"2026-01-01T00:00:00.000Z","message":"after"}', 300, "r");
    const p = page();
    hub.addPage(p, {});
    expect(p.texts.map((t) => (JSON.parse(t) as { message: string }).message)).toEqual([expect.stringContaining("could not write a record of run:r: no text today"), "after"]);
    hub.close();
  });
});


/**
 * One engine run seen by two inspected runs: one on a hub with a page connected from the start (every record written
 * as it comes), one on a hub whose page connects once the run is over (records written then). Returns both pages'
 * records; an agent record's time is the moment its observer saw the event, which may differ by a millisecond
 * between the two, so it is compared apart.
 */
async function twoPages(steps: ScriptStep[], options: Partial<QueryOptions> = {}): Promise<{ live: string[]; late: string[] }> {
  const cwd = tempDir();
  dirs.push(cwd);
  const prepared = prepare("go", { model: scriptedModel(steps), tools: [echo, note], cwd, traceFile: false, ...options });
  const liveHub = new InspectorHub(10_000);
  const lateHub = new InspectorHub(10_000);
  const livePage = page();
  liveHub.addPage(livePage, {});
  const info = { sessionId: prepared.input.sessionId, input: "go", runOptions: tracedOptionsOf(prepared) };
  const liveRun = createInspectedRun(liveHub, info, "c0");
  const lateRun = createInspectedRun(lateHub, info, "c0");
  await runInspected(prepared.input, observeEngine([engineObserverOf(liveRun), engineObserverOf(lateRun)]));
  for (const run of [liveRun, lateRun]) {
    run.publish({ type: "turn_end", reason: "final_answer", turns: 1, toolCalls: 1, usage: { input: 0, output: 0 } } as never);
    run.end();
  }
  await nextTurn();
  const latePage = page();
  lateHub.addPage(latePage, {});
  liveHub.close();
  lateHub.close();
  return { live: livePage.texts, late: latePage.texts };
}

const untimed = (texts: string[]) => texts.map((t) => t.replace(/"time":"[^"]*"/g, '"time":"T"'));

describe("a page that connects after the run", () => {
  it("is sent the very records a page connected all along got: every state's context as it was then, redacted", async () => {
    process.env[SECRET_VAR] = SECRET;
    const { live, late } = await twoPages(
      [
        { toolCalls: [{ name: "echo", input: { text: `key ${SECRET}` } }], usage: { input: 10, output: 2 } },
        { toolCalls: [{ name: "nope", input: {} }, { name: "echo", input: { wrong: 1 } }] },
        { toolCalls: [{ name: "echo", input: { text: "boom" } }] },
        { toolCalls: [{ name: "write_note", input: { note: "x" } }, { name: "echo", input: { text: "b" } }] },
        { error: { status: 500, message: "upstream" } },
        { text: `All done, ${SECRET}.`, usage: { input: 30, output: 5 } },
      ],
      { permissions: { onAsk: () => "allow" }, onModelError: (_e, attempt) => (attempt === 1 ? { action: "retry" } : { action: "abort" }) },
    );
    expect(late.length).toBeGreaterThan(40);
    expect(untimed(late)).toEqual(untimed(live));
    // The times that are the states' own are the same on both; an agent record's is a valid time on each.
    expect(late.filter((t) => t.startsWith('{"kind":"enter"'))).toEqual(live.filter((t) => t.startsWith('{"kind":"enter"')));
    for (const t of late) {
      const time = /"time":"([^"]*)"/.exec(t)?.[1];
      if (time !== undefined) expect(Number.isNaN(Date.parse(time)), t).toBe(false);
    }
    // The batch's call records changed in place as the run went on: each state shows them as they stood then.
    const statuses = late
      .filter((t) => t.startsWith('{"kind":"enter"'))
      .map((t) => JSON.parse(t) as { line: { state: string }; context: { batch: Array<{ status: string }> } })
      .filter((r) => r.line.state === "execute_tool" || r.line.state === "append_tool_result")
      .map((r) => `${r.line.state}:${r.context.batch.map((b) => b.status).join(",")}`);
    expect(statuses).toContain("execute_tool:allowed,allowed");
    expect(statuses).toContain("append_tool_result:finished,finished");
    const all = late.join("\n");
    expect(all).not.toContain(SECRET);
    expect(all).toContain("[REDACTED]");
  });
});
