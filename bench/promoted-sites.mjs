// Where the promoted garbage comes from: V8's sampling heap profiler, run twice over the same engine-machine runs
// (N steps of one instant tool call, nothing observing), once counting only what is still alive when sampling
// stops and once also counting what mark-compacts collected. The difference is, per allocation site, what outlived
// two scavenges (so was promoted) and then died: the promoted bytes of bench/promoted.mjs, by where they were made.
// Each site is printed with the share of its allocations that ended so (the third run counts every allocation).
//   npm run build && node bench/promoted-sites.mjs [N=2000] [runs=3] [sites=15] [layer=machine]
// layer `observed` adds observeEngine with empty observers, `on` runs query() with the trace on instead (what
// steps.mjs's layers of those names measure).
import { mkdtempSync, rmSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineTool } from "../dist/index.js";
import { instantModel } from "./engines/statecraft.mjs";
import { runLayer } from "./lib/engine-run.mjs";
import { NOOP_SCHEMA, TOOL_DESCRIPTION, TOOL_NAME } from "./lib/common.mjs";

const N = Number(process.argv[2] ?? 2000);
const RUNS = Number(process.argv[3] ?? 3);
const SITES = Number(process.argv[4] ?? 15);
const LAYER = process.argv[5] ?? "machine";
const tool = defineTool({ name: TOOL_NAME, description: TOOL_DESCRIPTION, inputSchema: NOOP_SCHEMA, risk: "read", execute: () => "ok" });
const cwd = mkdtempSync(join(tmpdir(), "statecraft-promoted-sites-"));

if (!["machine", "observed", "on"].includes(LAYER)) throw new Error(`layer ${LAYER}: expected machine, observed or on`);

async function run() {
  const traceFile = LAYER === "on" ? join(cwd, "trace.jsonl") : false;
  await runLayer(LAYER, { model: instantModel(N), tools: [tool], cwd, maxTurns: N + 1, maxToolCalls: N, timeoutMs: 3_600_000, traceFile });
}

/** Bytes sampled per allocation site (the allocating function and its two callers) over RUNS runs. */
async function sample(session, flags) {
  await session.post("HeapProfiler.startSampling", { samplingInterval: 256, ...flags });
  for (let i = 0; i < RUNS; i++) await run();
  const { profile } = await session.post("HeapProfiler.stopSampling");
  const sites = new Map();
  const walk = (node, stack) => {
    const f = node.callFrame;
    const here = [...stack, `${f.functionName || "(anonymous)"} ${f.url.replace(/.*\//, "")}:${f.lineNumber + 1}`];
    if (node.selfSize) {
      const site = here.slice(-3).reverse().join(" < ");
      sites.set(site, (sites.get(site) ?? 0) + node.selfSize);
    }
    for (const child of node.children) walk(child, here);
  };
  walk(profile.head, []);
  return sites;
}

try {
  await run();
  const session = new Session();
  session.connect();
  const alive = await sample(session, {});
  const promoted = await sample(session, { includeObjectsCollectedByMajorGC: true });
  const all = await sample(session, { includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  session.disconnect();
  const total = (m) => [...m.values()].reduce((a, b) => a + b, 0);
  const steps = N * RUNS;
  const died = [...promoted].map(([site, bytes]) => [site, bytes - (alive.get(site) ?? 0)]);
  const diedTotal = died.reduce((a, [, b]) => a + b, 0);
  console.log(
    `${steps} steps: ${(total(all) / steps / 1024).toFixed(1)} KB allocated a step, ${(diedTotal / steps / 1024).toFixed(2)} KB promoted and then collected ` +
      `(${((diedTotal / total(all)) * 100).toFixed(1)} %), ${(total(alive) / 1024).toFixed(0)} KB still alive (sampled, ${RUNS} runs)`,
  );
  for (const [site, bytes] of died.sort((a, b) => b[1] - a[1]).slice(0, SITES)) {
    const share = bytes / (all.get(site) ?? bytes);
    console.log(`${(bytes / steps).toFixed(0).padStart(6)} B/step  ${(share * 100).toFixed(1).padStart(5)} % of the site's  ${site}`);
  }
} finally {
  rmSync(cwd, { recursive: true, force: true });
}
