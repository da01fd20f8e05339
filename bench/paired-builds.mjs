// Two builds of statecraft in one process, their query() runs alternated run by run: CPU µs per step of each, and
// the second's over the first's pair by pair. Both share the machine's load at every moment, which separate processes
// on a busy machine do not. Each folder is a copy of the repository's built tree (its dist/ and bench/engines/).
// Usage: node bench/paired-builds.mjs <base folder> <other folder> [N=1000] [runs=8] [layer=on|memory]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [baseDir, otherDir] = process.argv.slice(2, 4);
if (!baseDir || !otherDir) throw new Error("usage: node bench/paired-builds.mjs <base folder> <other folder> [N] [runs] [on|memory]");
const N = Number(process.argv[4] ?? 1000);
const RUNS = Number(process.argv[5] ?? 8);
const layer = process.argv[6] ?? "on";
if (layer !== "on" && layer !== "memory") throw new Error(`layer must be on or memory, got ${layer}`);

/** One run of N instant steps through a build's query(): its CPU µs per step. */
async function runnerOf(dir) {
  const at = (path) => pathToFileURL(join(resolve(dir), path)).href;
  const sc = await import(at("dist/index.js"));
  const { instantModel } = await import(at("bench/engines/statecraft.mjs"));
  const tool = sc.defineTool({ name: "noop", description: "Does nothing.", inputSchema: { type: "object", properties: {} }, risk: "read", execute: () => "ok" });
  return async () => {
    const cwd = mkdtempSync(join(tmpdir(), "statecraft-paired-"));
    const options = { model: instantModel(N), tools: [tool], cwd, maxTurns: N + 1, maxToolCalls: N, timeoutMs: 3_600_000 };
    if (layer === "memory") options.store = "memory";
    else options.traceFile = join(cwd, "trace.jsonl");
    try {
      const cpu = process.cpuUsage();
      let toolCalls;
      for await (const event of sc.query("bench", options)) if (event.type === "turn_end") toolCalls = event.toolCalls;
      const used = process.cpuUsage(cpu);
      if (toolCalls !== N) throw new Error(`${dir}: ${toolCalls} tool calls, expected ${N}`);
      return (used.user + used.system) / N;
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  };
}

const base = await runnerOf(baseDir);
const other = await runnerOf(otherDir);
for (const run of [base, other, base, other]) await run();
const times = { base: [], other: [] };
// The order within a pair alternates too: neither build always runs on the heap the other left.
for (let r = 0; r < RUNS; r++) {
  if (r % 2 === 0) {
    times.base.push(await base());
    times.other.push(await other());
  } else {
    times.other.push(await other());
    times.base.push(await base());
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const ratios = times.base.map((b, i) => times.other[i] / b);
console.log(
  `${layer} N=${N}: base ${median(times.base).toFixed(1)} µs/step, other ${median(times.other).toFixed(1)}; ` +
    `other/base pair by pair: median ${median(ratios).toFixed(3)} (${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)})`,
);
