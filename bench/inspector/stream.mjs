// `node bench/inspector/stream.mjs [N] [RUNS]`: streams N (default 5 000) events of one XState actor to an inspector
// page in headless Chromium (/usr/bin/chromium, through playwright-core) and reports the page's frame times while
// they arrive (p50, p95, max), how many timeline rows are in the DOM at the end (the timeline is virtualised), the
// chart's layout time, the CPU time of this process (the app and the inspector's server, sharing the machine with the
// page) and the machine's load average. RUNS (default 1) runs it that many times, each with a fresh
// inspector and page, and ends with the median of the runs' p95. Run `npm run build` first: it uses dist/.
//
// The page is opened and left to load its layout engine (`#chart[data-layout-engine="ready"]`) before the app
// starts, as a page is opened before the app it inspects; the events then come in bursts of 50 per turn of the
// event loop, as a busy app sends them.
import { loadavg } from "node:os";
import { chromium } from "playwright-core";
import { createActor, createMachine, assign } from "xstate";
import { startInspector } from "../../dist/index.js";

const N = Number(process.argv[2] ?? 5000);
const RUNS = Number(process.argv[3] ?? 1);
const counter = createMachine({
  id: "counter",
  initial: "even",
  context: { n: 0 },
  states: {
    even: { on: { TICK: { target: "odd", actions: assign({ n: ({ context }) => context.n + 1 }) } } },
    odd: { on: { TICK: { target: "even", actions: assign({ n: ({ context }) => context.n + 1 }) } } },
  },
});

async function run(browser) {
  const inspector = await startInspector();
  const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
  try {
    await page.goto(inspector.url);
    await page.locator('#connection[data-connection="connected"]').waitFor();
    await page.locator('#chart[data-layout-engine="ready"]').waitFor({ timeout: 60_000 });
    await page.evaluate(() => {
      const w = window;
      w.frames = [];
      let last = performance.now();
      const tick = (now) => {
        w.frames.push(now - last);
        last = now;
        if (!w.stopFrames) requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    });
    const load = loadavg()[0];
    const actor = createActor(counter, { inspect: inspector.inspect }).start();
    const started = performance.now();
    const cpu = process.cpuUsage();
    for (let i = 0; i < N; i += 50) {
      for (let j = i; j < Math.min(N, i + 50); j++) actor.send({ type: "TICK" });
      await new Promise((r) => setImmediate(r));
    }
    await page.waitForFunction((n) => document.querySelector("#scrubber")?.max === String(n), N, { timeout: 120_000 });
    const sentMs = performance.now() - started;
    const used = process.cpuUsage(cpu);
    const frames = await page.evaluate(() => {
      window.stopFrames = true;
      return window.frames;
    });
    const rows = await page.locator('#timeline [role="option"]').count();
    const nodes = await page.evaluate(() => document.getElementById("timeline").getElementsByTagName("*").length);
    const layoutMs = Number(await page.locator("#chart").getAttribute("data-layout-ms"));
    const sorted = [...frames].sort((a, b) => a - b);
    const at = (q) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]);
    actor.stop();
    return { events: N, steps: N + 1, untilShownMs: Math.round(sentMs), frames: frames.length, p50: at(0.5), p95: at(0.95), max: at(1), timelineRows: rows, timelineNodes: nodes, layoutMs, appCpuMs: Math.round((used.user + used.system) / 1000), load: Number(load.toFixed(2)) };
  } finally {
    await page.close();
    await inspector.close();
  }
}

const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", headless: true, args: ["--no-sandbox", "--disable-gpu"] });
try {
  const p95s = [];
  for (let i = 0; i < RUNS; i++) {
    const result = await run(browser);
    p95s.push(result.p95);
    console.log(JSON.stringify(result));
  }
  if (RUNS > 1) {
    const sorted = [...p95s].sort((a, b) => a - b);
    console.log(JSON.stringify({ runs: RUNS, p95: p95s, medianP95: sorted[Math.floor(sorted.length / 2)], under100: p95s.filter((p) => p < 100).length }));
  }
} finally {
  await browser.close();
}
