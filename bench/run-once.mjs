// One run of one layer of bench/steps.mjs and nothing else, for tools that count rather than time (the load moves
// counts far less than times): e.g. instructions per step as the difference of two sizes, start-up cancelling out,
//   valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null node bench/run-once.mjs off 1100
//   (the same with 100; per step: the difference of the two "I refs" over 1 000)
// Usage: npm run build && node bench/run-once.mjs [layer=off: floor|machine|observed|off|on|memory] [N=1000]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineTool } from "../dist/index.js";
import { floorEngine } from "./engines/floor.mjs";
import { instantModel } from "./engines/statecraft.mjs";
import { runLayer } from "./lib/engine-run.mjs";
import { NOOP_SCHEMA, TOOL_DESCRIPTION, TOOL_NAME } from "./lib/common.mjs";

const layer = process.argv[2] ?? "off";
const N = Number(process.argv[3] ?? 1000);
if (!["floor", "machine", "observed", "off", "on", "memory"].includes(layer)) throw new Error(`layer must be floor, machine, observed, off, on or memory, got ${layer}`);
const tool = defineTool({ name: TOOL_NAME, description: TOOL_DESCRIPTION, inputSchema: NOOP_SCHEMA, risk: "read", execute: () => "ok" });
const cwd = mkdtempSync(join(tmpdir(), "statecraft-run-once-"));
try {
  const options = { model: instantModel(N), tools: [tool], cwd, maxTurns: N + 1, maxToolCalls: N, timeoutMs: 3_600_000, traceFile: layer === "on" ? join(cwd, "trace.jsonl") : false };
  if (layer === "memory") {
    options.store = "memory";
    delete options.traceFile;
  }
  let toolCalls = N;
  if (layer === "floor") {
    const run = await floorEngine().make(N);
    await run.run();
    run.verify();
  } else toolCalls = await runLayer(layer, options);
  if (toolCalls !== N) throw new Error(`${layer}: ${toolCalls} tool calls, expected ${N}`);
} finally {
  rmSync(cwd, { recursive: true, force: true });
}
