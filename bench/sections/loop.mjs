// 1. Loop overhead: N steps of one instant tool call, every engine in one process, alternated run by run.
import { memoryPeak, memoryStart, round, summarize } from "../lib/common.mjs";

/** A run's projected wall time at n steps from its measured runs at a smaller size, assuming the worst (quadratic). */
function projectMs(measured, n) {
  return measured.runMs.median * (n / measured.N) ** 2;
}

/** One timed run: make (untimed), run (timed: wall and CPU), verify and dispose (untimed). */
async function timedRun(engine, N) {
  const instance = await engine.make(N);
  const base = memoryStart();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await instance.run();
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const peakHeap = memoryPeak(base);
  const checked = instance.verify();
  await instance.dispose();
  return { wallMs, cpuMs: (cpu.user + cpu.system) / 1000, peakHeap, checked };
}

/**
 * @param entries [{ id, label, engine }]
 * @param options { sizes, runs, minRuns, budgetMs, warmupMs, capMs, log }
 *   runs: measured runs for an engine whose run is quick; a slow one gets as many as fit in budgetMs (at least minRuns
 *   at the first size, at least one after). capMs: a run projected (quadratically, from the first size) to take longer
 *   is measured at the largest of `fallbackSizes` that fits instead, and says so.
 */
export async function loopOverhead(entries, options) {
  const { sizes, runs, minRuns, budgetMs, warmupMs, capMs, fallbackSizes, log } = options;
  const results = {};
  for (const entry of entries) results[entry.id] = { label: entry.label, sizes: {} };

  for (const [sizeIndex, wanted] of sizes.entries()) {
    // What each engine runs at this size, and how many times.
    const plan = [];
    for (const entry of entries) {
      let N = wanted;
      let note;
      const first = sizeIndex > 0 ? results[entry.id].sizes[sizes[0]] : undefined;
      if (first) {
        const perRunMs = projectMs(first, wanted);
        if (perRunMs > capMs) {
          const fit = fallbackSizes.filter((n) => n < wanted && projectMs(first, n) <= capMs).sort((a, b) => b - a)[0];
          N = fit ?? Math.min(...fallbackSizes);
          note = `measured at N = ${N}: one run at N = ${wanted} was projected (quadratic) at ${Math.round(perRunMs / 1000)} s, over the ${capMs / 1000} s cap; run with --full to measure it`;
        }
      }
      plan.push({ entry, N, note, done: 0, warm: 0, wallMs: [], cpuMs: [], peak: 0, checked: {} });
    }

    // Warm-up at the measured size: quick engines run until warmupMs has passed, slow ones once; an engine whose one
    // run takes longer than capMs/4 and was already warmed at the smaller size is not run again just to warm up.
    for (const item of plan) {
      const first = sizeIndex > 0 ? results[item.entry.id].sizes[sizes[0]] : undefined;
      const projected = first ? projectMs(first, item.N) : 0;
      if (projected > capMs / 4) {
        item.warmNote = `warmed by its N = ${sizes[0]} runs`;
        continue;
      }
      const start = performance.now();
      do {
        const r = await timedRun(item.entry.engine, item.N);
        item.warm++;
        item.lastMs = r.wallMs;
      } while (performance.now() - start < warmupMs && item.warm < 30);
      log(`  warm-up ${item.entry.label} N=${item.N}: ${item.warm} run(s), last ${(item.lastMs / item.N * 1000).toFixed(1)} µs/step`);
    }

    // How many measured runs: all `runs` for quick engines, as many as fit the budget for slow ones.
    for (const item of plan) {
      const first = sizeIndex > 0 ? results[item.entry.id].sizes[sizes[0]] : undefined;
      const estimate = item.lastMs ?? (first ? projectMs(first, item.N) : 1);
      const floor = sizeIndex === 0 ? minRuns : 1;
      item.target = Math.max(floor, Math.min(runs, Math.floor(budgetMs / Math.max(estimate, 1))));
    }

    // Measured runs, alternated: round r runs every engine that still needs a run, in turn.
    for (let round = 0; plan.some((item) => item.done < item.target); round++) {
      for (const item of plan) {
        if (item.done >= item.target) continue;
        const r = await timedRun(item.entry.engine, item.N);
        item.done++;
        item.wallMs.push(r.wallMs);
        item.cpuMs.push(r.cpuMs);
        item.peak = Math.max(item.peak, r.peakHeap);
        item.checked = { ...item.checked, ...r.checked };
      }
      log(`  N=${wanted} round ${round + 1} done`);
    }

    for (const item of plan) {
      const perStep = (ms) => (ms * 1000) / item.N;
      const wall = summarize(item.wallMs.map(perStep));
      const cpu = summarize(item.cpuMs.map(perStep));
      results[item.entry.id].sizes[wanted] = {
        N: item.N,
        warmupRuns: item.warm,
        ...(item.warmNote ? { warmup: item.warmNote } : {}),
        wall,
        cpu,
        runMs: summarize(item.wallMs),
        peakHeapMB: item.peak / 2 ** 20,
        ...(item.note ? { note: item.note } : {}),
        ...item.checked,
      };
      log(`  ${item.entry.label} N=${item.N}: ${wall.median.toFixed(1)} µs/step (min ${wall.min.toFixed(1)}, max ${wall.max.toFixed(1)}, ${wall.runs} runs), cpu ${cpu.median.toFixed(1)}, peak heap +${(item.peak / 2 ** 20).toFixed(1)} MB`);
    }
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
