// What the inspector's unwritten records hold with no page connected, against their estimate (InspectorHub.addLater):
// N steps of one instant tool call through the engine machine with an inspected run observing it, the heap after a
// collection against the same run without it, then the same once the records are written as text.
// Usage: npm run build && node --expose-gc bench/inspector-memory.mjs [N=1000]
import { createRequire } from "node:module";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
const D = new URL("../dist", import.meta.url).pathname;
const { defineTool } = await import(D + "/index.js");
const { prepare } = await import(D + "/query.js");
const { engineMachine } = await import(D + "/machine/engine.js");
const { observeEngine } = await import(D + "/observers/observe.js");
const { InspectorHub } = await import(D + "/inspect/hub.js");
const { createInspectedRun, engineObserverOf } = await import(D + "/inspect/run.js");
const { tracedOptionsOf } = await import(D + "/run-settings.js");
const { instantModel } = await import("./engines/statecraft.mjs");
const { NOOP_SCHEMA, TOOL_DESCRIPTION, TOOL_NAME } = await import("./lib/common.mjs");
const { createActor } = createRequire(new URL("../package.json", import.meta.url))("xstate");
const N = Number(process.argv[2] ?? 1000);
const tool = defineTool({ name: TOOL_NAME, description: TOOL_DESCRIPTION, inputSchema: NOOP_SCHEMA, risk: "read", execute: () => "ok" });
async function once(withHub) {
  const cwd = mkdtempSync(join(tmpdir(), "h17a-mem-"));
  const settings = prepare("bench", { model: instantModel(N), tools: [tool], cwd, maxTurns: N + 1, maxToolCalls: N, timeoutMs: 3_600_000, traceFile: false, durable: false });
  const hub = new InspectorHub(10_000);
  const { input } = settings;
  const run = withHub ? createInspectedRun(hub, { sessionId: input.sessionId, runOptions: tracedOptionsOf(settings) }, "c0") : undefined;
  const actor = createActor(engineMachine, { input, inspect: observeEngine(run ? [engineObserverOf(run)] : [{ state() {}, emitted() {} }]) });
  await new Promise((r) => { actor.subscribe({ complete: r }); actor.start(); });
  gc(); gc();
  const heap = process.memoryUsage().heapUsed;
  const est = hub.waitingBytes, waiting = hub.waiting.length;
  const kept = hub.retainedBytes; // writes them
  gc(); gc();
  const heapText = process.memoryUsage().heapUsed;
  rmSync(cwd, { recursive: true, force: true });
  return { heap, est, waiting, kept, heapText, actor, hub };
}
const a = await once(false); const ha = a.heap; a.actor = a.hub = undefined;
const b = await once(true);
console.log(`N=${N}: records waiting ${b.waiting}, their estimate ${(b.est / 1e6).toFixed(1)} MB; heap held by them ${((b.heap - ha) / 1e6).toFixed(1)} MB; written: ${(b.kept / 1e6).toFixed(1)} MB of text, heap then ${((b.heapText - ha) / 1e6).toFixed(1)} MB`);
