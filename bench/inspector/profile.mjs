// `node bench/inspector/profile.mjs [N]`: the stream of stream.mjs (N events, default 5 000) under Chromium's
// performance trace, summed per thread of the page and per kind of work: wall time and CPU time (ms). On a loaded
// machine frame times swing with the load; the page's CPU time is what its code decides, so compare that.
import { loadavg } from "node:os";
import { chromium } from "playwright-core";
import { createActor, createMachine, assign } from "xstate";
import { startInspector } from "../../dist/index.js";
import { startTrace, sumsByKind } from "./trace.mjs";

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
  await page.locator('#chart[data-layout-engine="ready"]').waitFor({ timeout: 60_000 });
  const trace = await startTrace(page);
  const load = loadavg()[0];
  const actor = createActor(counter, { inspect: inspector.inspect }).start();
  for (let i = 0; i < N; i += 50) {
    for (let j = i; j < Math.min(N, i + 50); j++) actor.send({ type: "TICK" });
    await new Promise((r) => setImmediate(r));
  }
  await page.waitForFunction((n) => document.querySelector("#scrubber")?.max === String(n), N, { timeout: 120_000 });
  const events = await trace.stop();
  console.log(JSON.stringify({ events: N, load: Number(load.toFixed(2)), ...sumsByKind(events) }, null, 1));
  actor.stop();
} finally {
  await browser.close();
  await inspector.close();
}
