import { createWebSocketInspector } from "@statelyai/inspect";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createActor, waitFor } from "xstate";
import { machineChart } from "../../src/inspect/chart.js";
import type { Inspector } from "../../src/inspect/server.js";
import { crossJumps, deep, deeper, guardsAndMore, parallelHistory, selfLoop, type Shape } from "../inspect/fixtures/shapes.js";
import { BROWSER_TEST_TIMEOUT, foreignRequests, screenshot, WAIT, type Browser, openInspectorPage, closeInspectorPage, describeWithBrowser } from "../inspect/support/browser.js";

let inspector: Inspector;
let browser: Browser;

beforeAll(async () => {
  ({ inspector, browser } = await openInspectorPage());
}, BROWSER_TEST_TIMEOUT);

afterAll(() => closeInspectorPage({ inspector, browser }));

const current = () =>
  browser.page.locator('#chart [data-state][aria-current="true"]').evaluateAll((els) => els.map((e) => e.getAttribute("data-state")!).sort());
const problems = () => browser.page.getByRole("list", { name: "problems" }).locator("li").allTextContents();
const chartOf = async (machineId: string) => {
  await expect.poll(() => browser.page.locator("#chart-name").textContent(), WAIT).toBe(machineId);
  await expect.poll(() => browser.page.locator("#chart").getAttribute("data-layout"), WAIT).toBe("done");
};

/** Runs a shape in this process (every microstep) and checks the drawing and the current states at each step. */
async function follow(shape: Shape, inspect: Parameters<typeof createActor>[1]["inspect"], options: { exact?: boolean } = {}) {
  const chart = machineChart(shape.machine);
  const actor = createActor(shape.machine, { inspect }).start();
  await chartOf(chart.machineId);
  // Every state node has its element, once; every arrow its path.
  for (const state of chart.states) expect(await browser.page.locator(`#chart [data-state="${state.name}"]`).count(), state.name).toBe(1);
  expect(await browser.page.locator("#chart path[data-edge]").count()).toBe(chart.arrows);
  for (const [event, states] of shape.steps) {
    if (event) actor.send(event);
    await expect.poll(current, { ...WAIT, message: `${chart.machineId} after ${event?.type ?? "start"}` }).toEqual([...states].sort());
  }
  if (options.exact !== false) expect(await problems()).toEqual([]);
  return actor;
}

/** Boxes of two states: whether `inner` lies inside `outer`. */
async function inside(inner: string, outer: string): Promise<boolean> {
  const box = async (name: string) => (await browser.page.locator(`#chart [data-state="${name}"] > rect, #chart [data-state="${name}"] > circle`).first().boundingBox())!;
  const a = await box(inner);
  const b = await box(outer);
  return a.x >= b.x - 0.5 && a.y >= b.y - 0.5 && a.x + a.width <= b.x + b.width + 0.5 && a.y + a.height <= b.y + b.height + 0.5;
}

describeWithBrowser("inspector: every statechart shape drawn right (ELK layout)", () => {
  it("a self re-entry is a loop on its state, marked taken when taken", async () => {
    const actor = await follow(selfLoop, inspector.inspect);
    const loop = browser.page.locator('#chart path[data-edge][data-from="idle"][data-to="idle"]');
    expect(await loop.count()).toBe(1);
    // Select the step after AGAIN: the loop is taken there.
    await browser.page.locator('#timeline [role="option"]').nth(1).click();
    await expect.poll(() => loop.getAttribute("data-taken"), WAIT).toBe("");
    actor.stop();
  });

  it("child → ancestor, #id jumps and cross-jumps between compound states; children drawn inside their parents", async () => {
    const actor = await follow(crossJumps, inspector.inspect);
    for (const [child, parent] of [["l1", "left"], ["l2", "left"], ["r1", "right"], ["r2", "right"]]) expect(await inside(child, parent), `${child} in ${parent}`).toBe(true);
    expect(await inside("left", "right")).toBe(false);
    expect(await inside("right", "left")).toBe(false);
    // At l2 (the last step), the events it accepts: UP and AWAY leave it; nothing else does.
    const enabled = await browser.page.locator("#chart path[data-edge][data-enabled]").evaluateAll((els) => els.map((e) => `${e.getAttribute("data-from")}>${e.getAttribute("data-to")}`).sort());
    expect(enabled).toEqual(["l2>left", "l2>right"]);
    for (const [from, to] of [["l1", "r2"], ["l2", "left"], ["l2", "right"], ["r1", "l2"], ["r2", "l1"]]) {
      expect(await browser.page.locator(`#chart path[data-edge][data-from="${from}"][data-to="${to}"]`).count(), `${from}>${to}`).toBe(1);
    }
    actor.stop();
  });

  it("four levels of nesting", async () => {
    const actor = await follow(deep, inspector.inspect);
    expect(await inside("d", "c")).toBe(true);
    expect(await inside("c", "b")).toBe(true);
    expect(await inside("b", "a")).toBe(true);
    expect(await inside("z", "a")).toBe(false);
    actor.stop();
  });

  it("parallel regions (dashed), shallow and deep history as H and H*, a final state", async () => {
    const actor = await follow(parallelHistory, inspector.inspect);
    const page = browser.page;
    expect(await page.locator('#chart [data-state="audio"]').getAttribute("data-region")).toBe("");
    expect(await page.locator('#chart [data-state="screen"]').getAttribute("data-region")).toBe("");
    expect(await page.locator('#chart [data-state="audio"] > rect').evaluate((r) => getComputedStyle(r).strokeDasharray)).not.toBe("none");
    expect(await page.locator('#chart [data-state="hist"]').textContent()).toBe("H");
    expect(await page.locator('#chart [data-state="deepHist"]').textContent()).toBe("H*");
    expect(await page.locator('#chart [data-state="saved"]').getAttribute("data-state-type")).toBe("final");
    expect(await page.locator('#chart [data-state="saved"] rect.final-inner').count()).toBe(1);
    // In paused + saved: PLAY (audio) and POWER (the parallel state's own) are accepted; nothing of screen's.
    const enabled = await page.locator("#chart path[data-edge][data-enabled]").evaluateAll((els) => els.map((e) => `${e.getAttribute("data-from")}>${e.getAttribute("data-to")}`).sort());
    expect(enabled).toEqual(["on>off", "paused>playing"]);
    await screenshot(page, "shape-parallel-history");
    actor.stop();
  });

  it("guards as expressions, inline guards as [guard], invoked actors, descriptions and targetless transitions", async () => {
    const actor = await follow(guardsAndMore, inspector.inspect);
    actor.send({ type: "GO" });
    await waitFor(actor, (s) => s.status === "done");
    await expect.poll(current, WAIT).toEqual(["done"]);
    const page = browser.page;
    const labels = (await page.locator("#chart [data-edge-label]").allTextContents()).join("\n");
    expect(labels).toContain("GO [isReady && !isBlocked]");
    expect(labels).toContain("GO [isSlow || isBlocked]");
    expect(labels).toContain("GO [guard]");
    expect(labels).not.toContain("[Object]");
    expect(await page.locator('#chart [data-state="start"]').textContent()).toContain("waits for GO");
    expect(await page.locator('#chart [data-state="start"]').textContent()).toContain("↺ TICK");
    expect(await page.locator('#chart [data-state="loading"]').textContent()).toContain("invoke: load");
    expect(await page.locator('#chart path[data-edge][data-kind~="always"]').count()).toBeGreaterThan(0);
    // Labels never print over each other.
    const boxes = await page.locator("#chart [data-edge-label] rect").evaluateAll((els) => els.map((e) => e.getBoundingClientRect()).map((r) => ({ x: r.x, y: r.y, w: r.width, h: r.height })));
    for (let i = 0; i < boxes.length; i++) {
      for (let j = i + 1; j < boxes.length; j++) {
        const [a, b] = [boxes[i], boxes[j]];
        const overlap = a.x < b.x + b.w - 1 && b.x < a.x + a.w - 1 && a.y < b.y + b.h - 1 && b.y < a.y + a.h - 1;
        expect(overlap, `labels ${i} and ${j} overlap`).toBe(false);
      }
    }
  });

  it("a machine sent over @statelyai/inspect's WebSocket, and one cut by its depth limit, drawn with a problem line saying how to fix it", async () => {
    const client = createWebSocketInspector({ url: `ws://127.0.0.1:${inspector.port}` });
    try {
      // Over the WebSocket only macrostep snapshots arrive; the shape's steps are all macrosteps.
      const actor = await follow(crossJumps, client.inspect);
      actor.stop();
      // The default depth (10) cuts `deeper`'s innermost transitions: drawn all the same, and said.
      const cut = createActor(deeper.machine, { inspect: client.inspect }).start();
      await chartOf("deeper");
      for (const state of ["a", "b", "c", "d", "e", "z"]) expect(await browser.page.locator(`#chart [data-state="${state}"]`).count()).toBe(1);
      for (const [event, states] of deeper.steps) {
        if (event) cut.send(event);
        await expect.poll(current, WAIT).toEqual(states);
      }
      await expect.poll(problems, WAIT).toContainEqual(expect.stringMatching(/definition of actor deeper arrived cut .*serializationDepthLimit/));
      await screenshot(browser.page, "shape-depth-cut");
      cut.stop();
    } finally {
      client.stop();
    }
  });

  it("made no request outside 127.0.0.1 and raised no page error", () => {
    expect(foreignRequests(browser.requests)).toEqual([]);
    expect(browser.errors).toEqual([]);
  });
});
