// What one engine step asks of XState: N steps of one instant tool call through engineMachine alone (as steps.mjs's
// `machine` layer, no observer but this count), read from XState's inspection stream and from counting wrappers put
// around the machine's named actions and guards. Prints per step: macrosteps (events the engine actor processed),
// microsteps (eventless ones apart), actions by kind (`assign`, `enqueueActions`, `sendTo`, `emit`, `raise`, and what
// each `enqueueActions` enqueued), named guard evaluations and inspection events (the engine's own and its children's).
// A step is the difference between runs of N and 2N steps, so the run's start and end do not count.
// Usage: npm run build && node bench/microsteps.mjs [N=200] [--states] [--prepare]
//   --states   one step's microsteps, in order
//   --prepare  with a prepareNextTurn hook, so that every step asks build_context for work (buildContext.done)
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineTool } from "../dist/index.js";
import { engineMachine, engineStateOf } from "../dist/machine/engine.js";
import { prepare } from "../dist/query.js";
import { instantModel } from "./engines/statecraft.mjs";
import { runEngine } from "./lib/engine-run.mjs";
import { NOOP_SCHEMA, TOOL_DESCRIPTION, TOOL_NAME } from "./lib/common.mjs";


const N = Number(process.argv.find((a, i) => i >= 2 && /^\d+$/.test(a)) ?? 200);
const SHOW_STATES = process.argv.includes("--states");
const PREPARE = process.argv.includes("--prepare");
const tool = defineTool({ name: TOOL_NAME, description: TOOL_DESCRIPTION, inputSchema: NOOP_SCHEMA, risk: "read", execute: () => "ok" });

let counts = new Map();
const count = (key, by = 1) => counts.set(key, (counts.get(key) ?? 0) + by);

// Counting wrappers, in place: this process only runs this count. A named builtin action (assign, enqueueActions,
// sendTo, emit) is resolved through its `resolve`; what an enqueueActions enqueues comes back as its third element.
const kindOf = (type) => (type ?? "").replace(/^xstate\./, "");
for (const [name, action] of Object.entries(engineMachine.implementations.actions)) {
  if (typeof action.resolve !== "function") continue;
  const resolve = action.resolve;
  action.resolve = (...args) => {
    const resolved = resolve(...args);
    count(`action ${kindOf(action.type)}`);
    count(`named ${name} (${kindOf(action.type)})`);
    if (kindOf(action.type) === "enqueueActions") for (const inner of resolved[2] ?? []) count(`  enqueued ${kindOf(inner.type)}`);
    return resolved;
  };
}
for (const [name, guard] of Object.entries(engineMachine.implementations.guards)) {
  engineMachine.implementations.guards[name] = (...args) => {
    count(`guard ${name}`);
    return guard(...args);
  };
}

let log;
async function run(steps) {
  const cwd = mkdtempSync(join(tmpdir(), "statecraft-microsteps-"));
  counts = new Map();
  try {
    const { input } = prepare("bench", { model: instantModel(steps), tools: [tool], cwd, maxTurns: steps + 1, maxToolCalls: steps, timeoutMs: 3_600_000, traceFile: false, ...(PREPARE ? { prepareNextTurn: () => undefined } : {}) });
    let root;
    const inspect = (event) => {
      root ??= event.actorRef;
      const own = event.actorRef === root;
      count(`inspection ${event.type}${own ? "" : " (child)"}`);
      if (!own) return;
      if (event.type === "@xstate.event") count("macrostep");
      if (event.type === "@xstate.microstep") {
        const eventless = event._transitions.length > 0 && event._transitions.every((t) => t.eventType === "");
        count(eventless ? "microstep (eventless)" : "microstep (on an event)");
        log?.push(`${eventless ? "always" : event.event.type} → ${engineStateOf(event.snapshot.value)}`);
      }
      if (event.type === "@xstate.action") count(`executed ${kindOf(event.action.type)}`);
    };
    const { toolCallCount } = await runEngine(input, { inspect });
    if (toolCallCount !== steps) throw new Error(`ran ${toolCallCount} tool calls, not ${steps}`);
    return counts;
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}

const one = await run(N);
const two = await run(2 * N);
const keys = [...new Set([...one.keys(), ...two.keys()])].sort();
const perStep = (key) => ((two.get(key) ?? 0) - (one.get(key) ?? 0)) / N;
const total = (prefix) => keys.filter((k) => k.startsWith(prefix)).reduce((sum, k) => sum + perStep(k), 0);
console.log(`per step (runs of ${N} and ${2 * N} steps, one instant tool call each${PREPARE ? ", a prepareNextTurn hook" : ""}):`);
console.log(`  macrosteps ${perStep("macrostep")}, microsteps ${total("microstep")} (${perStep("microstep (eventless)")} eventless)`);
console.log(`  inspection events ${total("inspection")} (${keys.filter((k) => k.startsWith("inspection") && !k.endsWith("(child)")).reduce((s, k) => s + perStep(k), 0)} of the engine actor)`);
for (const key of keys) if (perStep(key) !== 0) console.log(`  ${key.padEnd(48)} ${perStep(key)}`);
if (SHOW_STATES) {
  log = [];
  await run(3);
  console.log("microsteps of a 3-step run:\n  " + log.join("\n  "));
}
