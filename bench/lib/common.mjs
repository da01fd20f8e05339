// What every loop benchmark shares: the one tool's schema, the step's model answers, a memory probe the tool calls,
// temp dirs, and the statistics.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The input schema of the single instant tool every engine gets (`noop({ i })`). */
export const NOOP_SCHEMA = {
  type: "object",
  properties: { i: { type: "integer" } },
  required: ["i"],
  additionalProperties: false,
};
export const TOOL_NAME = "noop";
export const TOOL_DESCRIPTION = "Does nothing and answers ok.";
export const FINAL_TEXT = "done";

/**
 * Heap sampling from inside a run: every engine's tool (and the bare graph's driver) calls `probe()` once per step.
 * Sampling every 256th step keeps its cost far below a microsecond per step on every engine alike.
 */
const SAMPLE_EVERY = 256;
let probeCount = 0;
let peak = 0;
const used = () => {
  const m = process.memoryUsage();
  return m.heapUsed + m.external + m.arrayBuffers;
};
export function probe() {
  if ((++probeCount & (SAMPLE_EVERY - 1)) === 0) {
    const now = used();
    if (now > peak) peak = now;
  }
}
/** Starts a memory window: collects garbage first (when exposed) so the baseline is what is live. */
export function memoryStart() {
  globalThis.gc?.();
  probeCount = 0;
  const base = used();
  peak = base;
  return base;
}
/** The peak seen since memoryStart (sampled in the run and once at its end), in bytes above the baseline. */
export function memoryPeak(base) {
  const now = used();
  if (now > peak) peak = now;
  return Math.max(0, peak - base);
}

export function tempDir(prefix = "statecraft-bench-") {
  return mkdtempSync(join(tmpdir(), prefix));
}
export function removeDir(dir) {
  rmSync(dir, { recursive: true, force: true });
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Quantile of sorted numbers by linear interpolation. */
function quantile(sorted, q) {
  if (sorted.length === 1) return sorted[0];
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

/** Median, quartiles, min and max of a sample. */
export function summarize(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    runs: sorted.length,
    median: quantile(sorted, 0.5),
    q1: quantile(sorted, 0.25),
    q3: quantile(sorted, 0.75),
    min: sorted[0],
    max: sorted[sorted.length - 1],
    values,
  };
}

export const round = (x, digits = 1) => (x === undefined || x === null || Number.isNaN(x) ? null : Number(x.toFixed(digits)));
