// `node bench/inspector/stream.mjs [N]`: streams N (default 5 000) events of one XState actor to an inspector page in
// headless Chromium (/usr/bin/chromium, through playwright-core) and reports the page's frame times while they
// arrive (p50, p95, max) and how many timeline rows are in the DOM at the end (the timeline is virtualised).
// Run `npm run build` first: it uses dist/.
import { chromium } from "playwright-core";
import { createActor, createMachine, assign } from "xstate";
import { startInspector } from "../../dist/index.js";

const N = Number(process.argv[2] ?? 5000);
const counter = createMachine({
  id: "counter",
  initial: "even",
  context: { n: 0 },
  states: {
    even: { on: { TICK: { target: "odd", actions: assign({ n: ({ context }) => context.n + 1 }) } } },
    odd: { on: { TICK: { target: "even", actions: assign({ n: ({ context }) => context.n + 1 }) } } },
  },
});

const inspector = await startInspector();
const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", headless: true, args: ["--no-sandbox", "--disable-gpu"] });
try {
  const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
  await page.goto(inspector.url);
  await page.locator('#connection[data-connection="connected"]').waitFor();
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
  const actor = createActor(counter, { inspect: inspector.inspect }).start();
  const started = performance.now();
  // In bursts, as a busy app sends them: 50 events, then a turn of the event loop.
  for (let i = 0; i < N; i += 50) {
    for (let j = i; j < Math.min(N, i + 50); j++) actor.send({ type: "TICK" });
    await new Promise((r) => setImmediate(r));
  }
  await page.waitForFunction((n) => document.querySelector("#scrubber")?.max === String(n), N, { timeout: 120_000 });
  const sentMs = performance.now() - started;
  const frames = await page.evaluate(() => {
    window.stopFrames = true;
    return window.frames;
  });
  const rows = await page.locator('#timeline [role="option"]').count();
  const nodes = await page.evaluate(() => document.getElementById("timeline").getElementsByTagName("*").length);
  const sorted = [...frames].sort((a, b) => a - b);
  const at = (q) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]);
  console.log(JSON.stringify({ events: N, steps: N + 1, untilShownMs: Math.round(sentMs), frames: frames.length, p50: at(0.5), p95: at(0.95), max: at(1), timelineRows: rows, timelineNodes: nodes }));
  actor.stop();
} finally {
  await browser.close();
  await inspector.close();
}
