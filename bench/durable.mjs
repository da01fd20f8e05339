// What crash-recovery checkpoints cost: N steps of one instant tool call answered by an in-process model, trace on,
// with checkpoints (the default) and without (`durable: false`), for a `read` tool (checkpoints written as the event
// loop turns) and a `write` tool (each call's start written before it runs). Runs alternate in one process; prints
// the median µs per step of each and the ratio to the same tool without checkpoints.
// Usage: npm run build && node bench/durable.mjs [N=1000] [runs=7]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineTool, query } from "../dist/index.js";
import { instantModel } from "./engines/statecraft.mjs";
import { NOOP_SCHEMA, TOOL_DESCRIPTION, TOOL_NAME } from "./lib/common.mjs";

const N = Number(process.argv[2] ?? 1000);
const RUNS = Number(process.argv[3] ?? 7);

const tools = {
  read: defineTool({ name: TOOL_NAME, description: TOOL_DESCRIPTION, inputSchema: NOOP_SCHEMA, risk: "read", execute: () => "ok" }),
  write: defineTool({ name: TOOL_NAME, description: TOOL_DESCRIPTION, inputSchema: NOOP_SCHEMA, risk: "write", execute: () => "ok" }),
};

async function once(risk, durable) {
  const cwd = mkdtempSync(join(tmpdir(), "statecraft-durable-"));
  try {
    const options = {
      model: instantModel(N),
      tools: [tools[risk]],
      cwd,
      maxTurns: N + 1,
      maxToolCalls: N,
      timeoutMs: 3_600_000,
      durable,
      permissions: { mode: "bypassPermissions" },
      traceFile: join(cwd, "trace.jsonl"),
    };
    const started = performance.now();
    let toolCalls;
    for await (const event of query("bench", options)) if (event.type === "turn_end") toolCalls = event.toolCalls;
    const elapsed = performance.now() - started;
    if (toolCalls !== N) throw new Error(`${risk}: ${toolCalls} tool calls, expected ${N}`);
    return (elapsed * 1000) / N;
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const rows = { read: { off: [], on: [] }, write: { off: [], on: [] } };
await once("read", true); // warm-up
for (let run = 0; run < RUNS; run++) {
  for (const risk of ["read", "write"]) {
    rows[risk].off.push(await once(risk, false));
    rows[risk].on.push(await once(risk, true));
  }
}
console.log(`N = ${N}, ${RUNS} runs, µs per step (median)`);
for (const [risk, { off, on }] of Object.entries(rows)) {
  // Paired: each run's ratio, then their median (the machine's load moves both of a pair alike).
  const ratios = on.map((value, i) => value / off[i]);
  console.log(`${risk.padEnd(6)} durable: false ${median(off).toFixed(0).padStart(5)}   checkpoints ${median(on).toFixed(0).padStart(5)}   ×${median(ratios).toFixed(2)}`);
}
