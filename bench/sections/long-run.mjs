// 5. A long run: 10 000 steps with tracing on. Memory growth, trace lines per second, and no listener, timer or
// handle left behind (process.getActiveResourcesInfo and process listener counts before and after).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { memoryPeak, memoryStart, removeDir, tempDir } from "../lib/common.mjs";
import { statecraftEngine } from "../engines/statecraft.mjs";

const STEPS = 10_000;

const resources = () => {
  const counts = {};
  for (const kind of process.getActiveResourcesInfo()) counts[kind] = (counts[kind] ?? 0) + 1;
  return counts;
};
const listeners = () => {
  const counts = {};
  for (const name of process.eventNames()) counts[String(name)] = process.listenerCount(name);
  return counts;
};
const diff = (before, after) => {
  const out = {};
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const d = (after[key] ?? 0) - (before[key] ?? 0);
    if (d !== 0) out[key] = d;
  }
  return out;
};

export async function longRun(sc, { log }) {
  const engine = statecraftEngine(sc, "on");
  // A short run first, so one-time setup (module state, the trace writer's exit hook) is not counted as a leak.
  const warm = await engine.make(200);
  await warm.run();
  warm.verify();
  warm.dispose();
  await new Promise((resolve) => setImmediate(resolve));

  const resourcesBefore = resources();
  const listenersBefore = listeners();
  const instance = await engine.make(STEPS);
  const base = memoryStart();
  const t0 = performance.now();
  await instance.run();
  const ms = performance.now() - t0;
  const peak = memoryPeak(base);
  const { traceLines } = instance.verify();
  instance.dispose();
  // Let what the run scheduled on its way out settle, then look again.
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setTimeout(resolve, 50));
  globalThis.gc?.();
  const m = process.memoryUsage();
  const retained = m.heapUsed + m.external + m.arrayBuffers - base;
  const leakedResources = diff(resourcesBefore, resources());
  const leakedListeners = diff(listenersBefore, listeners());
  const result = {
    steps: STEPS,
    wallMs: ms,
    usPerStep: (ms * 1000) / STEPS,
    traceLines,
    traceLinesPerSecond: traceLines / (ms / 1000),
    peakHeapMB: peak / 2 ** 20,
    retainedAfterMB: retained / 2 ** 20,
    leakedResources,
    leakedListeners,
    noLeaks: Object.keys(leakedResources).length === 0 && Object.keys(leakedListeners).length === 0,
  };
  log(
    `  ${STEPS} steps: ${(ms / 1000).toFixed(2)} s (${result.usPerStep.toFixed(1)} µs/step), ${traceLines} trace lines (${Math.round(result.traceLinesPerSecond)}/s), peak heap +${result.peakHeapMB.toFixed(1)} MB, retained after ${result.retainedAfterMB.toFixed(2)} MB, leaks: ${JSON.stringify({ ...leakedResources, ...leakedListeners })}`,
  );
  return result;
}
