import { createWebSocketInspector } from "@statelyai/inspect";
import { afterAll, beforeAll, expect, it } from "vitest";
import { assign, createActor, createMachine } from "xstate";
import { startInspector, type Inspector } from "../../src/inspect/server.js";
import { machineChart } from "../../src/inspect/chart.js";
import { BROWSER_TEST_TIMEOUT, foreignRequests, openBrowser, screenshot, WAIT, type Browser, describeWithBrowser } from "../inspect/support/browser.js";

/** A plain XState machine, not an agent: eventless and delayed transitions, a guard, a final state. */
const door = createMachine({
  id: "door",
  initial: "closed",
  context: { opens: 0 },
  states: {
    closed: { on: { OPEN: { target: "opening", actions: assign({ opens: ({ context }) => context.opens + 1 }) } } },
    opening: { after: { 30: "open" } },
    open: { on: { CLOSE: "closing", LOCK: { target: "locked", guard: ({ context }) => context.opens >= 2 } } },
    closing: { always: "closed" },
    locked: { type: "final" },
  },
});

let inspector: Inspector;
let browser: Browser;

beforeAll(async () => {
  inspector = await startInspector();
  browser = await openBrowser();
}, BROWSER_TEST_TIMEOUT);

afterAll(async () => {
  await browser?.close();
  await inspector?.close();
});

const currentStates = (b: Browser) =>
  b.page.locator('#chart [aria-current="true"]').evaluateAll((els) => els.map((e) => e.getAttribute("data-state")));

describeWithBrowser("inspector: any XState v5 app through @statelyai/inspect", () => {
  it("draws a plain machine sent over @statelyai/inspect's WebSocket inspector and follows its transitions", async () => {
    const { page } = browser;
    await page.goto(inspector.url);
    await expect.poll(() => page.locator("#connection").getAttribute("data-connection"), WAIT).toBe("connected");

    const client = createWebSocketInspector({ url: `ws://127.0.0.1:${inspector.port}` });
    const actor = createActor(door, { inspect: client.inspect }).start();
    try {
      // The machine appears, drawn from the definition the client sent, at its initial state.
      const picker = page.getByRole("combobox", { name: "session" });
      await expect.poll(() => picker.locator("option").allTextContents(), WAIT).toEqual([expect.stringContaining("door")]);
      await expect.poll(() => currentStates(browser), WAIT).toEqual(["closed"]);
      for (const state of ["closed", "opening", "open", "closing", "locked"]) expect(await page.locator(`#chart [data-state="${state}"]`).count()).toBe(1);

      actor.send({ type: "OPEN" });
      await expect.poll(() => currentStates(browser), WAIT).toEqual(["open"]); // through `opening` after 30 ms
      actor.send({ type: "CLOSE" });
      await expect.poll(() => currentStates(browser), WAIT).toEqual(["closed"]); // through `closing`, eventless
      actor.send({ type: "OPEN" });
      await expect.poll(() => currentStates(browser), WAIT).toEqual(["open"]);
      await screenshot(page, "xstate-live");
      actor.send({ type: "LOCK" });
      await expect.poll(() => currentStates(browser), WAIT).toEqual(["locked"]);

      // Every state it went through is visited, the arrows it took are marked, the timeline has each transition.
      const visited = await page.locator("#chart [data-state][data-visited]").evaluateAll((els) => els.map((e) => e.getAttribute("data-state")).sort());
      expect(visited).toEqual(["closed", "locked", "open", "opening"]);
      const taken = await page.locator("#chart path[data-edge][data-taken]").evaluateAll((els) => els.map((e) => `${e.getAttribute("data-from")}>${e.getAttribute("data-to")}`).sort());
      expect(taken).toEqual(["[*]>closed", "closed>opening", "open>locked", "opening>open"]);
      const rows = await page.locator('#timeline [role="option"] .name').allTextContents();
      // `closing` is eventless: over the WebSocket only macrostep snapshots arrive, so it is passed through unseen.
      expect(rows).toEqual(["closed", "opening", "open", "closed", "opening", "open", "locked"]);
      // The context at the selected (last) transition.
      await expect.poll(() => page.getByRole("region", { name: "selected transition" }).textContent(), WAIT).toContain('"opens": 2');
      await screenshot(page, "xstate-final");
    } finally {
      actor.stop();
      client.stop();
    }
  });

  it("numbers Mermaid's arrows as the chart does: each arrow's label lists the chart edges it draws", async () => {
    const { page } = browser;
    // A fresh inspector shows its default chart, the engine's: many arrows, nested states, an "any state" node.
    const fresh = await startInspector();
    try {
    await page.goto(fresh.url);
    const chart = machineChart((await import("../../src/index.js")).engineMachine);
    await expect.poll(() => page.locator("#chart path[data-edge]").count(), WAIT).toBe(chart.arrows);
    for (let arrow = 0; arrow < chart.arrows; arrow++) {
      const edges = chart.edges.filter((e) => e.arrow === arrow);
      const path = page.locator(`#chart path[data-edge="${arrow}"]`);
      expect(await path.getAttribute("data-from")).toBe(edges[0].from);
      expect(await path.getAttribute("data-to")).toBe(edges[0].to);
      expect(await path.getAttribute("data-edges")).toBe(edges.map((e) => e.index).join(" "));
      const labels = edges.map((e) => e.label).filter(Boolean);
      if (labels.length === 0) continue;
      // One line per transition the arrow draws.
      const lines = await page.locator(`#chart [data-edge-label="${arrow}"]`).evaluate((el) => ((el.querySelector("foreignObject div") as HTMLElement | null)?.innerText ?? el.textContent ?? "").split("\n").map((l) => l.trim()).filter(Boolean));
      expect(lines.join(" ")).toBe(labels.join(" "));
    }
    for (const state of chart.states) expect(await page.locator(`#chart [data-state="${state.name}"]`).count()).toBe(1);
    } finally {
      await fresh.close();
    }
  });

  it("made no request outside 127.0.0.1 and raised no page error", () => {
    expect(foreignRequests(browser.requests)).toEqual([]);
    expect(browser.errors).toEqual([]);
  });
});
