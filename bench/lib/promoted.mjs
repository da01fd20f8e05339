// Bytes V8 promotes to old space, read from --trace-gc-nvp in a fresh process: per step for one layer of
// bench/steps.mjs (bench/promoted.mjs and the bench's promoted section), or for any script (promoted-bisect.mjs,
// v8-promotes.mjs).
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const steps = fileURLToPath(new URL("../steps.mjs", import.meta.url));
/** The preload that loads XState with the three changes upstream needs (see xstate-changes.cjs). */
export const XSTATE_CHANGES = fileURLToPath(new URL("./xstate-changes.cjs", import.meta.url));
const field = (line, name) => Number(new RegExp(`\\b${name}=(\\d+)`).exec(line)?.[1] ?? 0);

/**
 * Runs `node [flags] --trace-gc-nvp [args]` and sums what its collections report.
 * @returns bytes promoted by its scavenges and allocated between collections, with the count of each kind
 */
export function traceGc(args, { flags = [], env = process.env } = {}) {
  const child = spawnSync(process.execPath, [...flags, "--trace-gc-nvp", ...args], { encoding: "utf8", maxBuffer: 1 << 28, env });
  if (child.status !== 0) throw new Error(`node ${[...flags, ...args].join(" ")}: ${child.stderr}`);
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
  return { promoted, allocated, scavenges, markCompacts };
}

/**
 * Runs `steps.mjs N runs layer` in a fresh process with `flags` and sums its scavenges' `promoted`.
 * @returns KB promoted and allocated per step, scavenges and mark-compacts, over every step the process ran
 */
export function measurePromoted(layer, { steps: N = 2000, runs = 3, flags = [] } = {}) {
  const { promoted, allocated, scavenges, markCompacts } = traceGc([steps, String(N), String(runs), layer], { flags });
  // steps.mjs runs each layer once to warm up, then `runs` times: every run's steps count.
  const total = N * (runs + 1);
  return { promotedKB: promoted / total / 1024, allocatedKB: allocated / total / 1024, scavenges, markCompacts, steps: total };
}
