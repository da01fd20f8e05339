// Garbage that outlives the young generation: bytes V8 promotes to old space per step, read from --trace-gc-nvp,
// for each layer of bench/steps.mjs run alone in its own process (no V8 flag but the trace's). A step whose objects
// all die young promotes next to nothing; objects promoted and then dropped are what the mark-compacts collect.
// Usage: npm run build && node bench/promoted.mjs [N=2000] [runs=3] [layers=floor,machine,on] [processes=1]
// (PROMOTED_NODE_FLAGS="--no-allocation-site-pretenuring" compares with V8 flags set, for diagnosis only;
// PROMOTED_NODE_FLAGS="--require ./bench/lib/xstate-changes.cjs" measures XState with the changes it needs.)
// With processes > 1 each layer runs in that many fresh processes, one line each: V8 takes its pretenuring decisions
// early in a process, so the figure can differ from one process to the next (a site tenured or not).
import { measurePromoted } from "./lib/promoted.mjs";

const N = Number(process.argv[2] ?? 2000);
const RUNS = Number(process.argv[3] ?? 3);
const LAYERS = (process.argv[4] ?? "floor,machine,on").split(",");
const PROCESSES = Number(process.argv[5] ?? 1);
const flags = (process.env.PROMOTED_NODE_FLAGS ?? "").split(" ").filter(Boolean);

for (const layer of LAYERS) for (let p = 0; p < PROCESSES; p++) {
  const m = measurePromoted(layer, { steps: N, runs: RUNS, flags });
  console.log(
    `${layer.padEnd(9)} promoted ${m.promotedKB.toFixed(2).padStart(6)} KB/step, allocated ${m.allocatedKB.toFixed(1).padStart(6)} KB/step, ` +
      `${m.scavenges} scavenges, ${m.markCompacts} mark-compacts over ${m.steps} steps`,
  );
}
