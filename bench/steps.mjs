// Where a step's cost sits: N steps of one instant tool call answered by an in-process model, through each layer of
// the engine in turn, alternated run by run in one process (no peers loaded). Prints µs per step, median of the runs.
//   floor     the bare ten-state XState graph, seven transitions per step, one subscriber
//   machine   engineMachine alone: its effects actor does the work, nobody observes it
//   observed  + observeEngine (XState inspection → ordered states and emitted events), with empty observers
//   off       query() with the trace off: + transcript, audit, the event bridge and the async generator
//   on        query() with the trace on (what the loop table's "trace on" row measures)
//   inspect   query() with the trace on and an inspector attached that no page connects to
//   memory    query() with store: "memory": the trace, transcript, audit and checkpoints kept in the process
//   otel-noop query() with the trace on and statecraft/otel's observer on a no-op tracer (no SDK registered)
//   otel      query() with the trace on and statecraft/otel's observer on a recording tracer (the SDK's, spans dropped)
//   window    query() with the trace on and contextWindow set, the model reporting no usage (the compaction estimate
//             runs on every step: it must stay linear in the run's length)
// Usage: npm run build && node bench/steps.mjs [N=1000] [runs=9] [layers=floor,machine,observed,off,on,memory,window,otel-noop,otel]
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineTool } from "../dist/index.js";
import { floorEngine } from "./engines/floor.mjs";
import { instantModel } from "./engines/statecraft.mjs";
import { runLayer } from "./lib/engine-run.mjs";
import { NOOP_SCHEMA, TOOL_DESCRIPTION, TOOL_NAME } from "./lib/common.mjs";
import { otelObserver } from "./lib/otel.mjs";


const N = Number(process.argv[2] ?? 1000);
const RUNS = Number(process.argv[3] ?? 9);
const LAYERS = (process.argv[4] ?? "floor,machine,observed,off,on").split(",");

const tool = defineTool({ name: TOOL_NAME, description: TOOL_DESCRIPTION, inputSchema: NOOP_SCHEMA, risk: "read", execute: () => "ok" });

const floor = floorEngine();

async function once(layer) {
  const cwd = mkdtempSync(join(tmpdir(), "statecraft-steps-"));
  try {
    const traceFile = ["on", "window", "inspect", "otel-noop", "otel"].includes(layer) ? join(cwd, "trace.jsonl") : false;
    const options = { model: instantModel(N), tools: [tool], cwd, maxTurns: N + 1, maxToolCalls: N, timeoutMs: 3_600_000, traceFile };
    // Far more than the run can fill: the estimate is checked every step and never asks for a compaction.
    if (layer === "window") options.contextWindow = 1_000_000_000;
    if (layer === "inspect") options.inspect = { port: 0 };
    const otel = layer.startsWith("otel") ? otelObserver(layer === "otel") : undefined;
    if (otel) options.observers = [otel.observer];
    if (layer === "memory") {
      options.store = "memory";
      delete options.traceFile;
    }
    const run = layer === "floor" ? await floor.make(N) : undefined;
    const cpu0 = process.cpuUsage();
    const started = performance.now();
    let toolCalls;
    if (run) {
      await run.run();
      run.verify();
      toolCalls = N;
    } else {
      toolCalls = await runLayer(layer, options);
    }
    const elapsed = performance.now() - started;
    const cpu = process.cpuUsage(cpu0);
    cpuPerStep[layer].push((cpu.user + cpu.system) / N);
    if (toolCalls !== N) throw new Error(`${layer}: ${toolCalls} tool calls, expected ${N}`);
    // A run of N steps: the run's span, N + 1 model calls, N tool calls.
    if (layer === "otel" && otel.ended() !== 2 * N + 2) throw new Error(`otel: ${otel.ended()} spans ended, expected ${2 * N + 2}`);
    if (traceFile && statSync(traceFile).size === 0) throw new Error("trace not written");
    return (elapsed * 1000) / N;
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const results = Object.fromEntries(LAYERS.map((layer) => [layer, []]));
// CPU time of the whole process per step (JIT and GC threads count): steadier than wall time on a shared machine.
const cpuPerStep = Object.fromEntries(LAYERS.map((layer) => [layer, []]));
for (const layer of LAYERS) await once(layer);
for (const layer of LAYERS) cpuPerStep[layer].length = 0;
for (let r = 0; r < RUNS; r++) for (const layer of LAYERS) results[layer].push(await once(layer));
const base = results.floor ? median(results.floor) : undefined;
for (const [layer, xs] of Object.entries(results)) {
  const m = median(xs);
  const cpu = median(cpuPerStep[layer]);
  const cpuBase = results.floor ? median(cpuPerStep.floor) : undefined;
  console.log(
    `${layer.padEnd(9)} ${m.toFixed(1).padStart(7)} µs/step  (min ${Math.min(...xs).toFixed(1)}, max ${Math.max(...xs).toFixed(1)}${base ? `, ${(m / base).toFixed(2)}× floor` : ""}) ` +
      `cpu ${cpu.toFixed(1)} µs/step${cpuBase ? ` (${(cpu / cpuBase).toFixed(2)}× floor)` : ""} at N=${N}`,
  );
}
