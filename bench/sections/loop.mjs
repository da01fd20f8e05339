// 1. Loop overhead: N steps of one instant tool call, every engine in one process, alternated run by run.
import { memoryPeak, memoryStart, round, summarize } from "../lib/common.mjs";

const SETTLE_MS = 25;
const num = (n) => n.toLocaleString("en-US").replace(/,/g, " ");

/**
 * One timed run: make (untimed), run (timed: wall and CPU), verify and dispose (untimed). A memory run collects
 * garbage first, so its peak heap is what the run itself added; the other runs start on the heap their engine's
 * earlier runs left, as an engine in a long-lived process does. (A collection forced right before every timed run
 * leaves a small young generation that the run must grow again, which charged each loop for its allocation rate
 * several times over: statecraft's steps took about 1.7× as long, the bare graph's about 1.2×.)
 */
async function timedRun(engine, N, { memory }) {
  const instance = await engine.make(N);
  const base = memory ? memoryStart() : 0;
  // Let the collector's background work (sweeping, returning pages after a heavy engine) finish before the clock starts.
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await instance.run();
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const peakHeap = memory ? memoryPeak(base) : undefined;
  const checked = instance.verify();
  await instance.dispose();
  return { wallMs, cpuMs: (cpu.user + cpu.system) / 1000, peakHeap, checked };
}

/**
 * @param entries [{ id, label, engine }]
 * @param options { sizes, runs, minRuns, budgetMs, warmupMs, minWarmups, capMs, probeMs, probeSize, log }
 *   Every engine is warmed up at each size it is measured at (until warmupMs has passed and at least minWarmups runs),
 *   then measured in rounds that alternate engines and sizes, so a change of the machine's load between the start and
 *   the end touches every engine and size alike. runs: measured runs for an engine whose run is quick; a slow one gets
 *   as many as fit in budgetMs (at least minRuns at the first size, at least one at a larger one). An engine whose run
 *   at the first size took longer than probeMs runs once at probeSize: its growth from the first size projects a run at
 *   the larger size; projected over capMs, it is measured at probeSize instead, and the result says so.
 */
export async function loopOverhead(entries, options) {
  const { sizes, runs, minRuns, budgetMs, warmupMs, minWarmups, capMs, probeMs, probeSize, log } = options;
  const [first, ...larger] = sizes;
  const items = [];
  const newItem = (entry, wanted) => ({ entry, wanted, N: wanted, done: 0, warm: 0, wallMs: [], cpuMs: [], peak: undefined, checked: {} });
  // An item's first run (a warm-up when it has one) is its memory run.
  const run = async (item) => {
    const r = await timedRun(item.entry.engine, item.N, { memory: item.peak === undefined });
    if (r.peakHeap !== undefined) item.peak = r.peakHeap;
    return r;
  };
  const record = (item, r) => {
    item.done++;
    item.wallMs.push(r.wallMs);
    item.cpuMs.push(r.cpuMs);
    item.checked = { ...item.checked, ...r.checked };
  };
  const warm = async (item) => {
    const start = performance.now();
    do {
      const r = await run(item);
      item.warm++;
      item.lastMs = r.wallMs;
    } while ((performance.now() - start < warmupMs || item.warm < minWarmups) && item.warm < 30 && item.lastMs < capMs / 4);
    log(`  warm-up ${item.entry.label} N=${item.N}: ${item.warm} run(s), last ${((item.lastMs / item.N) * 1000).toFixed(1)} µs/step`);
  };

  for (const entry of entries) {
    const base = newItem(entry, first);
    items.push(base);
    await warm(base);
    for (const wanted of larger) {
      const item = newItem(entry, wanted);
      items.push(item);
      if (base.lastMs > probeMs && probeSize < wanted) {
        const probe = await timedRun(entry.engine, probeSize, { memory: true });
        const exponent = Math.max(1, Math.log(probe.wallMs / base.lastMs) / Math.log(probeSize / first));
        const projected = probe.wallMs * (wanted / probeSize) ** exponent;
        log(`  probe ${entry.label} N=${probeSize}: ${((probe.wallMs / probeSize) * 1000).toFixed(1)} µs/step, time ∝ N^${exponent.toFixed(2)}, one run at N=${wanted} projected at ${Math.round(projected / 1000)} s`);
        if (projected > capMs) {
          // Measured at probeSize, warmed by its runs at the first size; the probe is its first measured run.
          item.N = probeSize;
          item.peak = probe.peakHeap;
          item.lastMs = probe.wallMs;
          item.warmNote = `warmed by its N = ${num(first)} runs`;
          item.note = `measured at N = ${num(probeSize)}: from N = ${num(first)} to ${num(probeSize)} its run time grew as N^${exponent.toFixed(2)}, which puts one run at N = ${num(wanted)} at about ${num(Math.round(projected / 1000))} s, over the ${Math.round(capMs / 1000)} s cap (node bench/run.mjs --full measures it)`;
          record(item, probe);
          continue;
        }
        if (projected > capMs / 4) {
          item.lastMs = projected;
          item.warmNote = `warmed by its N = ${num(first)} runs and one at N = ${num(probeSize)}`;
          continue;
        }
      }
      await warm(item);
    }
  }

  // How many measured runs: all `runs` for quick engines, as many as fit the budget for slow ones.
  for (const item of items) {
    const floor = item.wanted === first ? minRuns : 1;
    item.target = Math.max(floor, Math.min(runs, Math.floor(budgetMs / Math.max(item.lastMs, 1))));
  }

  // Measured runs, alternated: each round runs every (size, engine) that still needs a run, in turn, starting one
  // further along each round, so no engine always follows the same (possibly heavy) one.
  for (let round = 1; items.some((item) => item.done < item.target); round++) {
    const offset = (round - 1) % items.length;
    for (const item of [...items.slice(offset), ...items.slice(0, offset)]) {
      if (item.done >= item.target) continue;
      record(item, await run(item));
    }
    log(`  round ${round} done`);
  }

  const results = {};
  for (const item of items) {
    const perStep = (ms) => (ms * 1000) / item.N;
    const wall = summarize(item.wallMs.map(perStep));
    const cpu = summarize(item.cpuMs.map(perStep));
    results[item.entry.id] ??= { label: item.entry.label, sizes: {} };
    results[item.entry.id].sizes[item.wanted] = {
      N: item.N,
      warmupRuns: item.warm,
      ...(item.warmNote ? { warmup: item.warmNote } : {}),
      wall,
      cpu,
      runMs: summarize(item.wallMs),
      peakHeapMB: (item.peak ?? 0) / 2 ** 20,
      ...(item.note ? { note: item.note } : {}),
      ...item.checked,
    };
    log(`  ${item.entry.label} N=${item.N}: ${wall.median.toFixed(1)} µs/step (min ${wall.min.toFixed(1)}, max ${wall.max.toFixed(1)}, ${wall.runs} runs), cpu ${cpu.median.toFixed(1)}, peak heap +${((item.peak ?? 0) / 2 ** 20).toFixed(1)} MB`);
  }
  return results;
}

/** Ratios and growth from the raw results: to the floor, to pi-agent-core, from the first size to the second. */
export function deriveLoop(results, sizes, floorId, piId) {
  const rows = [];
  for (const [id, r] of Object.entries(results)) {
    const row = { id, label: r.label, sizes: {} };
    for (const size of sizes) {
      const s = r.sizes[size];
      if (!s) continue;
      const floor = results[floorId]?.sizes[size];
      const pi = results[piId]?.sizes[size];
      const same = (other) => other && other.N === s.N;
      row.sizes[size] = {
        N: s.N,
        median: round(s.wall.median),
        q1: round(s.wall.q1),
        q3: round(s.wall.q3),
        min: round(s.wall.min),
        max: round(s.wall.max),
        runs: s.wall.runs,
        cpuMedian: round(s.cpu.median),
        xFloor: same(floor) ? round(s.wall.median / floor.wall.median, 2) : null,
        xPi: same(pi) ? round(s.wall.median / pi.wall.median, 2) : null,
        xFloorCpu: same(floor) ? round(s.cpu.median / floor.cpu.median, 2) : null,
        xPiCpu: same(pi) ? round(s.cpu.median / pi.cpu.median, 2) : null,
        peakHeapMB: round(s.peakHeapMB),
        ...(s.note ? { note: s.note } : {}),
        ...(s.warmup ? { warmup: s.warmup } : {}),
        ...(s.traceLines ? { traceLines: s.traceLines } : {}),
      };
    }
    const [a, b] = sizes;
    const sa = r.sizes[a];
    const sb = r.sizes[b];
    if (sa && sb) {
      row.growth = { from: sa.N, to: sb.N, perStep: round(sb.wall.median / sa.wall.median, 2), perStepCpu: round(sb.cpu.median / sa.cpu.median, 2) };
      // Exponent k of time ∝ N^k: 1 is linear, 2 quadratic (per step: N^(k-1)).
      row.growth.exponent = round(1 + Math.log(sb.cpu.median / sa.cpu.median) / Math.log(sb.N / sa.N), 2);
    }
    rows.push(row);
  }
  return rows;
}
