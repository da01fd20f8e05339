// `node bench/inspector/stream.mjs [N] [RUNS] [--no-trace] [--trace-out=FILE] [--against=DIR]`: streams N (default
// 5 000) events of one XState actor to an inspector page in headless Chromium (/usr/bin/chromium, through
// playwright-core) and reports the page's frame times while they arrive (p50, p95, max), how long the app took to
// send them (sendMs) and until the page showed the last (untilShownMs), how many timeline rows are in the DOM at the
// end (the timeline is virtualised), the chart's layout time, the CPU time of this process (the app and the
// inspector's server, sharing the machine with the page) and the machine's load average. RUNS (default 1) runs it
// that many times, each with a fresh inspector and page, and ends with the median of the runs' p95 and how many runs
// were under 100 ms and at most 67 ms. Run `npm run build` first: it uses dist/.
//
// The page is opened and left to load its layout engine (`#chart[data-layout-engine="ready"]`) before the app
// starts, as a page is opened before the app it inspects; the events then come in bursts of 50 per turn of the
// event loop, as a busy app sends them.
//
// Each run is traced (Chromium's performance trace with V8's sampling profiler, see trace.mjs): it reports the main
// thread's CPU time per frame (frameCpuP95, frameCpuMax: what the page's code asks of a frame, whatever the load),
// the CPU of the main thread and the layout worker during the stream, and prints its long frames (over 50 ms) with
// what the trace says they were: the main thread's tasks in the frame and what each ran, the functions sampled most,
// and how much of the frame the main thread was busy and running (a frame much longer than its CPU time waited for a
// core). `--no-trace` runs without it (tracing costs the page some time of its own).
import { writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium } from "playwright-core";
import { createActor, createMachine, assign } from "xstate";
import { clockOffset, explainLongFrames, frameCpu, startTrace } from "./trace.mjs";

const args = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const TRACE = !process.argv.includes("--no-trace");
/** `--trace-out=FILE`: the trace of the last run is written there (open it in DevTools' Performance panel). */
/**
 * `--against=DIR`: another build's dist/ (a copy inside this repository, so that it finds node_modules) run in turn
 * with this one, run for run: two pages' figures measured under the same load, paired.
 */
const AGAINST = process.argv.find((a) => a.startsWith("--against="))?.slice("--against=".length);
const TRACE_OUT = process.argv.find((a) => a.startsWith("--trace-out="))?.slice("--trace-out=".length);
const LONG_FRAME_MS = 50;
const N = Number(args[0] ?? 5000);
const RUNS = Number(args[1] ?? 1);
const counter = createMachine({
  id: "counter",
  initial: "even",
  context: { n: 0 },
  states: {
    even: { on: { TICK: { target: "odd", actions: assign({ n: ({ context }) => context.n + 1 }) } } },
    odd: { on: { TICK: { target: "even", actions: assign({ n: ({ context }) => context.n + 1 }) } } },
  },
});

const builds = [{ name: "this", dist: new URL("../../dist/", import.meta.url) }];
if (AGAINST) builds.push({ name: "against", dist: pathToFileURL(`${resolve(AGAINST)}/`) });
for (const b of builds) b.startInspector = (await import(new URL("index.js", b.dist).href)).startInspector;

async function run(browser, startInspector) {
  const inspector = await startInspector();
  const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
  // A page that throws stops drawing: the figures would be of a broken page.
  const errors = [];
  page.on("pageerror", (error) => errors.push(error.message));
  page.on("console", (message) => message.type() === "error" && errors.push(message.text()));
  try {
    await page.goto(inspector.url);
    await page.locator('#connection[data-connection="connected"]').waitFor();
    await page.locator('#chart[data-layout-engine="ready"]').waitFor({ timeout: 60_000 });
    const trace = TRACE ? await startTrace(page) : undefined;
    // The times of the animation frames while the events arrive; the mark puts the page's clock on the trace's.
    const markedAt = await page.evaluate(() => {
      const w = window;
      w.frameTimes = [performance.now()];
      const tick = (now) => {
        w.frameTimes.push(now);
        if (!w.stopFrames) requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
      performance.mark("stream-bench-frames");
      return w.frameTimes[0];
    });
    const load = loadavg()[0];
    const actor = createActor(counter, { inspect: inspector.inspect }).start();
    const started = performance.now();
    const cpu = process.cpuUsage();
    for (let i = 0; i < N; i += 50) {
      for (let j = i; j < Math.min(N, i + 50); j++) actor.send({ type: "TICK" });
      await new Promise((r) => setImmediate(r));
    }
    // The app is done sending here; the rest of untilShownMs is the server and the page catching up.
    const sendMs = performance.now() - started;
    await page.waitForFunction((n) => document.querySelector("#scrubber")?.max === String(n), N, { timeout: 120_000 }).catch((error) => {
      throw new Error(`the page did not show step ${N}${errors.length ? `; it threw: ${errors.join("; ")}` : ""}`, { cause: error });
    });
    if (errors.length) throw new Error(`the page threw: ${errors.join("; ")}`);
    const sentMs = performance.now() - started;
    const used = process.cpuUsage(cpu);
    const times = await page.evaluate(() => {
      window.stopFrames = true;
      return window.frameTimes;
    });
    const frames = times.slice(1).map((t, i) => t - times[i]);
    const events = trace ? await trace.stop() : undefined;
    if (events && TRACE_OUT) writeFileSync(TRACE_OUT, JSON.stringify({ traceEvents: events }));
    const offset = events ? clockOffset(events, "stream-bench-frames", markedAt) : 0;
    const longFrames = events ? explainLongFrames(events, times, offset, LONG_FRAME_MS) : undefined;
    const pageCpu = events ? frameCpu(events, times, offset) : undefined;
    const rows = await page.locator('#timeline [role="option"]').count();
    const nodes = await page.evaluate(() => document.getElementById("timeline").getElementsByTagName("*").length);
    const layoutMs = Number(await page.locator("#chart").getAttribute("data-layout-ms"));
    const quantile = (values, q) => {
      const sorted = [...values].sort((a, b) => a - b);
      return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]);
    };
    const at = (q) => quantile(frames, q);
    // The main thread's CPU per frame: what the page's code asks of a frame, whatever the load.
    const cpuFigures = pageCpu ? { frameCpuP95: quantile(pageCpu.perFrame, 0.95), frameCpuMax: quantile(pageCpu.perFrame, 1), mainCpuMs: pageCpu.mainCpuMs, workerCpuMs: pageCpu.workerCpuMs } : {};
    actor.stop();
    return { events: N, steps: N + 1, sendMs: Math.round(sendMs), untilShownMs: Math.round(sentMs), frames: frames.length, p50: at(0.5), p95: at(0.95), max: at(1), timelineRows: rows, timelineNodes: nodes, layoutMs, appCpuMs: Math.round((used.user + used.system) / 1000), load: Number(load.toFixed(2)), ...cpuFigures, ...(longFrames ? { longFrames } : {}) };
  } finally {
    await page.close();
    await inspector.close();
  }
}

const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", headless: true, args: ["--no-sandbox", "--disable-gpu"] });
try {
  const p95s = new Map(builds.map((b) => [b.name, []]));
  for (let i = 0; i < RUNS; i++) {
    // Paired runs alternate which build goes first: neither always meets the machine warmer.
    const order = i % 2 === 0 ? builds : [...builds].reverse();
    for (const b of order) {
      const result = await run(browser, b.startInspector);
      p95s.get(b.name).push(result.p95);
      const { longFrames, ...figures } = result;
      console.log(JSON.stringify(AGAINST ? { build: b.name, ...figures } : figures));
      for (const f of longFrames ?? []) console.log(`  long frame ${JSON.stringify(f)}`);
    }
  }
  if (RUNS > 1 || AGAINST) {
    for (const [name, list] of p95s) {
      const sorted = [...list].sort((a, b) => a - b);
      console.log(JSON.stringify({ ...(AGAINST ? { build: name } : {}), runs: RUNS, p95: list, medianP95: sorted[Math.floor(sorted.length / 2)], under100: list.filter((p) => p < 100).length, atMost67: list.filter((p) => p <= 67).length }));
    }
  }
} finally {
  await browser.close();
}
