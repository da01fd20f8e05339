// Garbage that outlives the young generation: bytes V8 promotes to old space per step, read from --trace-gc-nvp,
// for each layer of bench/steps.mjs run alone in its own process (no V8 flag but the trace's). A step whose objects
// all die young promotes next to nothing; objects promoted and then dropped are what the mark-compacts collect.
// Usage: npm run build && node bench/promoted.mjs [N=2000] [runs=3] [layers=floor,machine,on] [processes=1]
// (PROMOTED_NODE_FLAGS="--no-allocation-site-pretenuring" compares with V8 flags set, for diagnosis only.)
// With processes > 1 each layer runs in that many fresh processes, one line each: V8 takes its pretenuring decisions
// early in a process, so the figure can differ from one process to the next (a site tenured or not).
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const N = Number(process.argv[2] ?? 2000);
const RUNS = Number(process.argv[3] ?? 3);
const LAYERS = (process.argv[4] ?? "floor,machine,on").split(",");
const PROCESSES = Number(process.argv[5] ?? 1);
const steps = fileURLToPath(new URL("./steps.mjs", import.meta.url));
const field = (line, name) => Number(new RegExp(`\\b${name}=(\\d+)`).exec(line)?.[1] ?? 0);

for (const layer of LAYERS) for (let p = 0; p < PROCESSES; p++) {
  const flags = (process.env.PROMOTED_NODE_FLAGS ?? "").split(" ").filter(Boolean);
  const child = spawnSync(process.execPath, [...flags, "--trace-gc-nvp", steps, String(N), String(RUNS), layer], { encoding: "utf8", maxBuffer: 1 << 28 });
  if (child.status !== 0) throw new Error(`${layer}: ${child.stderr}`);
  let promoted = 0;
  let scavenges = 0;
  let markCompacts = 0;
  let allocated = 0;
  for (const line of child.stdout.split("\n")) {
    const kind = /\bgc=(\w+)/.exec(line)?.[1];
    if (kind === undefined) continue;
    allocated += field(line, "allocated");
    if (kind === "s") {
      scavenges++;
      promoted += field(line, "promoted");
    } else if (kind === "mc" || kind === "ms") markCompacts++;
  }
  // steps.mjs runs each layer once to warm up, then RUNS times: every run's steps count.
  const total = N * (RUNS + 1);
  console.log(
    `${layer.padEnd(9)} promoted ${(promoted / total / 1024).toFixed(2).padStart(6)} KB/step, allocated ${(allocated / total / 1024).toFixed(1).padStart(6)} KB/step, ` +
      `${scavenges} scavenges, ${markCompacts} mark-compacts over ${total} steps`,
  );
}
