// 4. Concurrency: 1 000 runs at once in one process, each 5 tool steps whose model answers after 100 ms.
// Ideal: 5 × 100 ms = 0.5 s (the final answer comes at once). All runs share one workspace and its trace file.
import { setTimeout as delay } from "node:timers/promises";
import { join } from "node:path";
import { removeDir, tempDir } from "../lib/common.mjs";

const RUNS = 1_000;
const STEPS = 5;
const MODEL_MS = 100;

export async function concurrency(sc, { log, warmup = true }) {
  const tool = sc.defineTool({
    name: "noop",
    description: "Does nothing and answers ok.",
    inputSchema: { type: "object", properties: { i: { type: "integer" } }, required: ["i"] },
    risk: "read",
    execute: () => "ok",
  });
  const slowModel = () => {
    let call = 0;
    return {
      name: "slow",
      async *stream(_request, { signal }) {
        const i = call++;
        if (i < STEPS) {
          await delay(MODEL_MS, undefined, { signal });
          yield { type: "response", response: { text: "", toolCalls: [{ name: "noop", arguments: `{"i":${i}}` }], finishReason: "tool_calls" } };
        } else {
          yield { type: "response", response: { text: "done", toolCalls: [], finishReason: "stop" } };
        }
      },
    };
  };
  const batch = async (count, sample) => {
    const cwd = tempDir();
    const traceFile = join(cwd, "trace.jsonl");
    const models = Array.from({ length: count }, slowModel);
    const one = async (model) => {
      let end;
      for await (const event of sc.query("bench", { model, tools: [tool], cwd, traceFile, maxToolCalls: STEPS, maxTurns: STEPS + 1 })) if (event.type === "turn_end") end = event;
      return end;
    };
    globalThis.gc?.();
    const base = process.memoryUsage();
    let peakHeap = base.heapUsed + base.external + base.arrayBuffers;
    let peakRss = base.rss;
    const sampler = sample
      ? setInterval(() => {
          const m = process.memoryUsage();
          peakHeap = Math.max(peakHeap, m.heapUsed + m.external + m.arrayBuffers);
          peakRss = Math.max(peakRss, m.rss);
        }, 10)
      : undefined;
    const t0 = performance.now();
    const ends = await Promise.all(models.map(one));
    const ms = performance.now() - t0;
    if (sampler) clearInterval(sampler);
    removeDir(cwd);
    const bad = ends.filter((e) => e?.reason !== "final_answer" || e.toolCalls !== STEPS);
    if (bad.length > 0) throw new Error(`${bad.length} of ${count} concurrent runs did not end final_answer after ${STEPS} calls (first: ${bad[0]?.reason})`);
    return { ms, heapDelta: peakHeap - (base.heapUsed + base.external + base.arrayBuffers), rssDelta: peakRss - base.rss };
  };
  if (warmup) await batch(100, false);
  const r = await batch(RUNS, true);
  const idealMs = STEPS * MODEL_MS;
  const result = {
    runs: RUNS,
    steps: STEPS,
    modelMs: MODEL_MS,
    idealMs,
    wallMs: r.ms,
    ratio: r.ms / idealMs,
    goalRatio: 1.5,
    met: r.ms / idealMs <= 1.5,
    peakHeapPerRunKB: r.heapDelta / RUNS / 1024,
    peakRssPerRunKB: r.rssDelta / RUNS / 1024,
  };
  log(`  ${RUNS} runs × ${STEPS} steps: ${r.ms.toFixed(0)} ms (${result.ratio.toFixed(2)}× ideal), peak heap ${result.peakHeapPerRunKB.toFixed(1)} KB/run, rss ${result.peakRssPerRunKB.toFixed(1)} KB/run`);
  return result;
}
