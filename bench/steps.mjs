// Loop overhead of the engine: N steps, each one instant tool call answered by an in-process model.
// Prints µs per step (median of several runs after a warm-up), with the trace on and off.
// Usage: npm run build && node bench/steps.mjs [N=1000] [runs=7]
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineTool, query } from "../dist/index.js";

const N = Number(process.argv[2] ?? 1000);
const RUNS = Number(process.argv[3] ?? 7);

const tool = defineTool({
  name: "noop",
  description: "Does nothing.",
  inputSchema: { type: "object", properties: { i: { type: "integer" } }, required: ["i"] },
  risk: "read",
  execute: () => "ok",
});

/** A model that asks for one tool call per turn until the last, then answers. Built outside the timed region. */
function instantModel(steps) {
  let call = 0;
  const response = (i) =>
    i < steps
      ? { text: "", toolCalls: [{ name: "noop", arguments: `{"i":${i}}` }], finishReason: "tool_calls" }
      : { text: "done", toolCalls: [], finishReason: "stop" };
  return {
    name: "instant",
    async *stream() {
      yield { type: "response", response: response(call++) };
    },
  };
}

async function once(trace) {
  const cwd = mkdtempSync(join(tmpdir(), "statecraft-bench-"));
  const model = instantModel(N);
  const options = { model, tools: [tool], cwd, maxTurns: N + 1, maxToolCalls: N, traceFile: trace ? join(cwd, "trace.jsonl") : false };
  const started = performance.now();
  let end;
  for await (const event of query("bench", options)) if (event.type === "turn_end") end = event;
  const elapsed = performance.now() - started;
  if (end.reason !== "final_answer" || end.toolCalls !== N) throw new Error(`bench run ended ${end.reason} after ${end.toolCalls} tool calls`);
  if (trace && statSync(join(cwd, "trace.jsonl")).size === 0) throw new Error("trace not written");
  rmSync(cwd, { recursive: true, force: true });
  return (elapsed * 1000) / N;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const results = { "trace on": [], "trace off": [] };
await once(true);
await once(false);
for (let r = 0; r < RUNS; r++) {
  results["trace on"].push(await once(true));
  results["trace off"].push(await once(false));
}
for (const [name, xs] of Object.entries(results)) {
  console.log(`${name}: ${median(xs).toFixed(1)} µs/step (median of ${RUNS}, min ${Math.min(...xs).toFixed(1)}, max ${Math.max(...xs).toFixed(1)}) at N=${N}`);
}
