import { afterAll, beforeAll, expect, it } from "vitest";
import { assign, createActor, createMachine } from "xstate";
import type { Inspector } from "../../src/inspect/server.js";
import { BROWSER_TEST_TIMEOUT, WAIT, type Browser, openInspectorPage, closeInspectorPage, describeWithBrowser } from "../inspect/support/browser.js";

let inspector: Inspector;
let browser: Browser;

beforeAll(async () => {
  ({ inspector, browser } = await openInspectorPage());
}, BROWSER_TEST_TIMEOUT);

afterAll(() => closeInspectorPage({ inspector, browser }));

/** Alternates states on TICK; BUMP changes the context only (a step of its own). */
const counter = createMachine({
  id: "counter",
  initial: "even",
  context: { n: 0 },
  on: { BUMP: { actions: assign({ n: ({ context }) => context.n + 1 }) } },
  states: {
    even: { on: { TICK: { target: "odd", actions: assign({ n: ({ context }) => context.n + 1 }) } } },
    odd: { on: { TICK: { target: "even", actions: assign({ n: ({ context }) => context.n + 1 }) } } },
  },
});

describeWithBrowser("inspector: the timeline of a long-running actor", () => {
  it("is virtualised, and every step (context-only ones too) shows the context at that step", async () => {
    const { page } = browser;
    const N = 2000;
    const actor = createActor(counter, { inspect: inspector.inspect }).start();
    for (let i = 0; i < N; i++) actor.send({ type: i % 10 === 9 ? "BUMP" : "TICK" });
    const scrubber = page.getByRole("slider", { name: "scrubber" });
    await expect.poll(() => scrubber.getAttribute("max"), WAIT).toBe(String(N));
    // A few dozen rows in the DOM, not two thousand.
    const rows = page.locator('#timeline [role="option"]');
    expect(await rows.count()).toBeLessThan(200);
    expect(await rows.first().getAttribute("aria-setsize")).toBe(String(N + 1));
    // Step k has n = k: the first is the initial snapshot, each TICK and each BUMP one step.
    const selected = page.getByRole("region", { name: "selected transition" });
    for (const k of [0, 1, 9, 10, 11, 1234, N]) {
      await scrubber.fill(String(k));
      await expect.poll(() => page.getByTestId("selected").getAttribute("data-seq"), WAIT).toBe(String(k));
      await expect.poll(() => selected.locator(".context pre").textContent(), WAIT).toBe(JSON.stringify({ n: k }, null, 2));
      // The row of the selected step is in the DOM, selected.
      await expect.poll(() => page.locator(`#timeline [role="option"][data-index="${k}"]`).getAttribute("aria-selected"), WAIT).toBe("true");
    }
    // The initial step is the initial snapshot, not a transition.
    await scrubber.fill("0");
    await expect.poll(() => page.locator('#timeline [data-index="0"] .summary').textContent(), WAIT).toBe("on xstate.init");
    // Step 10 came from BUMP: same state as before, another context.
    expect(await page.locator('#timeline [data-index="10"] .summary').textContent()).toBe("on BUMP");
    actor.stop();
    expect(browser.errors).toEqual([]);
  });

  it("keeps its rows right while events stream in bursts and when scrolled: contiguous, in order, one selected", async () => {
    const { page } = browser;
    const N = 3000;
    const actor = createActor(counter, { inspect: inspector.inspect }).start();
    for (let i = 0; i < N; i += 100) {
      for (let j = i; j < i + 100; j++) actor.send({ type: "TICK" });
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await expect.poll(() => page.getByRole("slider", { name: "scrubber" }).getAttribute("max"), WAIT).toBe(String(N));
    type Row = { index: number; pos: number; seq: string; size: string | null; selected: string | null };
    const rowsOf = (list: string) =>
      page.evaluate(
        (selector) =>
          [...document.querySelectorAll(`${selector} [role="option"]`)].map((li) => ({
            index: Number((li as HTMLElement).dataset.index ?? (li as HTMLElement).dataset.order),
            pos: Number(li.getAttribute("aria-posinset")),
            seq: li.querySelector(".seq")?.textContent ?? "",
            size: li.getAttribute("aria-setsize"),
            selected: li.getAttribute("aria-selected"),
          })),
        list,
      ) as Promise<Row[]>;
    const check = (rows: Row[], selected: number[]) => {
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.length).toBeLessThan(200);
      rows.forEach((r, k) => {
        expect(r.index).toBe(rows[0]!.index + k);
        expect(r.pos).toBe(r.index + 1);
        expect(r.seq).toBe(`#${r.index}`);
        expect(r.size).toBe(String(N + 1));
      });
      expect(rows.filter((r) => r.selected === "true").map((r) => r.index)).toEqual(selected);
    };
    // Following: the newest row is in view and the only one selected.
    await expect.poll(async () => (await rowsOf("#timeline")).some((r) => r.index === N), WAIT).toBe(true);
    check(await rowsOf("#timeline"), [N]);
    // A row filled in place with a newer step while following selects the step it shows now.
    await page.locator(`#timeline [role="option"][data-index="${N - 2}"]`).click();
    await expect.poll(async () => (await rowsOf("#timeline")).filter((r) => r.selected === "true").map((r) => r.index), WAIT).toEqual([N - 2]);
    expect(await page.locator("#selected").getAttribute("data-seq")).toBe(String(N - 2));
    // Scrolled to the middle by hand: the rows there, the spacer above as tall as the rows it stands for.
    await page.locator("#timeline").evaluate((el) => (el.scrollTop = 1500 * 22));
    await expect.poll(async () => (await rowsOf("#timeline")).some((r) => r.index === 1500), WAIT).toBe(true);
    const middle = await rowsOf("#timeline");
    check(middle, []);
    const spacer = await page.locator('#timeline > li[role="presentation"]').first().evaluate((el) => el.style.height);
    expect(spacer).toBe(`${middle[0]!.index * 22}px`);
    // The sequence view: the events sent to the actor (its start, then the TICKs), the first ones in view, in order.
    const events = await page.locator('#sequence [role="option"]').evaluateAll((els) => els.map((li) => [li.getAttribute("aria-posinset"), li.getAttribute("aria-setsize"), (li as HTMLElement).dataset.type]));
    expect(events.length).toBeGreaterThan(0);
    expect(events.length).toBeLessThan(200);
    events.forEach(([pos, size, type], k) => expect([pos, size, type]).toEqual([String(k + 1), String(N + 1), k === 0 ? "xstate.init" : "TICK"]));
    actor.stop();
    expect(browser.errors).toEqual([]);
  });
});
