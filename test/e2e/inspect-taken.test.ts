import { createWebSocketInspector } from "@statelyai/inspect";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createActor, fromPromise, setup, waitFor } from "xstate";
import type { Inspector } from "../../src/inspect/server.js";
import { BROWSER_TEST_TIMEOUT, foreignRequests, WAIT, type Browser, openInspectorPage, closeInspectorPage, describeWithBrowser } from "../inspect/support/browser.js";

/*
 * "Arrows taken" for the transitions that are not plain events: a compound state's onDone (raised by XState when its
 * final child is reached), an invoked actor's onDone, and transitions into a shallow and a deep history state. In
 * this process every microstep is reported with the transitions it took (exact); over @statelyai/inspect's
 * WebSocket only the macrostep's snapshot arrives, and the page works out the arrows from the states and the event.
 */
let release: (() => void) | undefined;
const flow = setup({
  actors: {
    pay: fromPromise(
      () =>
        new Promise<string>((resolve) => {
          release = () => resolve("ok");
        }),
    ),
  },
}).createMachine({
  id: "flow",
  initial: "form",
  states: {
    form: {
      initial: "editing",
      states: {
        editing: { on: { SUBMIT: "sent" } },
        sent: { type: "final" },
      },
      onDone: "paying",
    },
    paying: { invoke: { id: "pay", src: "pay", onDone: "media" } },
    media: {
      initial: "a",
      states: {
        a: { on: { NEXT: "b" } },
        b: { initial: "b1", states: { b1: { on: { DEEPER: "b2" } }, b2: {} } },
        hist: { type: "history" },
        deepHist: { type: "history", history: "deep" },
      },
      on: { LEAVE: "away" },
    },
    away: { on: { BACK: "#flow.media.hist", DEEP_BACK: "#flow.media.deepHist" } },
  },
});

let inspector: Inspector;
let browser: Browser;

beforeAll(async () => {
  ({ inspector, browser } = await openInspectorPage());
}, BROWSER_TEST_TIMEOUT);

afterAll(() => closeInspectorPage({ inspector, browser }));

const rows = () => browser.page.locator('#timeline [role="option"]');

/** The arrows marked taken with step `index` selected, as `from>to:kind`. */
async function takenAt(index: number): Promise<string[]> {
  const page = browser.page;
  await rows().nth(index).click();
  await expect.poll(() => page.getByTestId("selected").getAttribute("data-seq"), WAIT).toBe(String(index));
  return page.locator("#chart path[data-edge][data-taken]").evaluateAll((els) => els.map((e) => `${e.getAttribute("data-from")}>${e.getAttribute("data-to")}:${e.getAttribute("data-kind")}`).sort());
}

/** The arrows step `index` took: marked at it and not at the step before. */
async function newlyTaken(index: number): Promise<string[]> {
  const before = new Set(await takenAt(index - 1));
  return (await takenAt(index)).filter((a) => !before.has(a));
}

/** Runs the flow through every kind of transition, waiting for the page to show each step; returns the steps' states. */
async function run(inspect: Parameters<typeof createActor>[1]["inspect"]): Promise<string[]> {
  const page = browser.page;
  const actor = createActor(flow, { inspect }).start();
  await expect.poll(() => page.locator("#chart-name").textContent(), WAIT).toBe("flow");
  await expect.poll(() => page.locator("#chart").getAttribute("data-layout"), WAIT).toBe("done");
  const current = () => page.locator('#chart [data-state][aria-current="true"]').evaluateAll((els) => els.map((e) => e.getAttribute("data-state")));
  const steps: Array<[string | undefined, string]> = [
    [undefined, "editing"],
    ["SUBMIT", "paying"],
    ["(resolve)", "a"],
    ["NEXT", "b1"],
    ["DEEPER", "b2"],
    ["LEAVE", "away"],
    ["BACK", "b1"], // shallow history: media remembers b, which starts over at b1
    ["DEEPER", "b2"],
    ["LEAVE", "away"],
    ["DEEP_BACK", "b2"], // deep history: media remembers b.b2
  ];
  for (const [event, state] of steps) {
    if (event === "(resolve)") release!();
    else if (event) actor.send({ type: event });
    if (event === "(resolve)") await waitFor(actor, (s) => s.matches("media"));
    await expect.poll(current, { ...WAIT, message: `after ${event ?? "start"}` }).toContain(state);
  }
  const states = await rows().evaluateAll((els) => els.map((e) => e.getAttribute("data-transition-state")!));
  actor.stop();
  return states;
}

/** The index of the n-th step (0-based) whose state is `state`. */
function stepOf(states: string[], state: string, nth = 0): number {
  const at = states.flatMap((s, i) => (s === state ? [i] : []))[nth];
  expect(at, `step ${nth} of ${state} in ${states.join(", ")}`).toBeDefined();
  return at!;
}

describeWithBrowser("inspector: arrows taken by onDone and history transitions", () => {
  it("in this process (every microstep, exact)", async () => {
    const states = await run(inspector.inspect);
    // Every microstep is a step: the final child `sent` is one before the compound state's onDone leaves it.
    expect(states).toEqual(["editing", "sent", "paying", "a", "b1", "b2", "away", "b1", "b2", "away", "b2"]);
    expect(await newlyTaken(stepOf(states, "sent"))).toEqual(["editing>sent:event"]);
    expect(await newlyTaken(stepOf(states, "paying"))).toEqual(["form>paying:done"]);
    expect(await newlyTaken(stepOf(states, "a"))).toEqual(expect.arrayContaining(["paying>media:done"]));
    const back = stepOf(states, "b1", 1);
    expect(await takenAt(back - 1)).not.toContain("away>hist:event");
    expect(await newlyTaken(back)).toEqual(expect.arrayContaining(["away>hist:event"]));
    const deepBack = stepOf(states, "b2", 2);
    expect(await takenAt(deepBack - 1)).not.toContain("away>deepHist:event");
    expect(await newlyTaken(deepBack)).toEqual(["away>deepHist:event"]);
  });

  it("over @statelyai/inspect's WebSocket (macrosteps; the arrows worked out from the states and the event)", async () => {
    const client = createWebSocketInspector({ url: `ws://127.0.0.1:${inspector.port}` });
    try {
      const states = await run(client.inspect);
      // One snapshot per macrostep: `sent` is passed through within SUBMIT's step.
      expect(states).toEqual(["editing", "paying", "a", "b1", "b2", "away", "b1", "b2", "away", "b2"]);
      // SUBMIT's step reached form's final child, so form's onDone was raised within it: both arrows.
      expect(await newlyTaken(stepOf(states, "paying"))).toEqual(["editing>sent:event", "form>paying:done"]);
      expect(await newlyTaken(stepOf(states, "a"))).toEqual(expect.arrayContaining(["paying>media:done"]));
      const back = stepOf(states, "b1", 1);
      expect(await takenAt(back - 1)).not.toContain("away>hist:event");
      expect(await newlyTaken(back)).toEqual(expect.arrayContaining(["away>hist:event"]));
      expect(await newlyTaken(back)).not.toContain("away>deepHist:event");
      const deepBack = stepOf(states, "b2", 2);
      expect(await takenAt(deepBack - 1)).not.toContain("away>deepHist:event");
      expect(await newlyTaken(deepBack)).toEqual(["away>deepHist:event"]);
    } finally {
      client.stop();
    }
  });

  it("raised no problem and no page error, and made no request outside 127.0.0.1", async () => {
    expect(await browser.page.getByRole("list", { name: "problems" }).locator("li").allTextContents()).toEqual([]);
    expect(foreignRequests(browser.requests)).toEqual([]);
    expect(browser.errors).toEqual([]);
  });
});
