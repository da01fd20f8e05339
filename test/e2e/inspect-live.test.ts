import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createActor } from "xstate";
import { defineTool, scriptedModel } from "../../src/index.js";
import { engineMachine } from "../../src/machine/engine.js";
import { observeEngine } from "../../src/observers/observe.js";
import { prepare } from "../../src/query.js";
import { startInspector, type Inspector } from "../../src/inspect/server.js";
import { engineObserverOf, type InspectedRun } from "../../src/inspect/run.js";
import { tracedOptionsOf } from "../../src/run-settings.js";
import { removeDir, tempDir } from "../support/engine.js";
import { BROWSER_TEST_TIMEOUT, foreignRequests, openBrowser, screenshot, WAIT, type Browser, describeWithBrowser } from "../inspect/support/browser.js";

const writeNote = defineTool({
  name: "write_note",
  description: "Writes a note.",
  inputSchema: { type: "object", properties: { note: { type: "string" } }, required: ["note"], additionalProperties: false },
  risk: "write",
  execute: (input: { note: string }) => `wrote ${input.note}`,
});

let cwd: string;
let inspector: Inspector;
let browser: Browser;

beforeAll(async () => {
  cwd = tempDir("statecraft-inspect-live-");
  inspector = await startInspector();
  browser = await openBrowser();
}, BROWSER_TEST_TIMEOUT);

afterAll(async () => {
  await browser?.close();
  await inspector?.close();
  removeDir(cwd);
});

const currentStates = (b: Browser) => b.page.locator('#chart [aria-current="true"]').evaluateAll((els) => els.map((e) => e.getAttribute("data-state")));

describeWithBrowser("inspector: a live agent run", () => {
  it("lights the engine's states in order as the run moves, waits at a permission request until Allow is clicked, shows the text and the tool call", async () => {
    const { page } = browser;
    await page.goto(inspector.url);
    await inspector.waitForPage({ timeoutMs: 30_000 });
    // Every state the page makes current, in order, as it happens.
    await page.evaluate(() => {
      const seen: string[] = [];
      (window as unknown as { seenStates: string[] }).seenStates = seen;
      new MutationObserver(() => {
        const current = document.querySelector('#chart [data-state][aria-current="true"]')?.getAttribute("data-state");
        if (current && seen[seen.length - 1] !== current) seen.push(current);
      }).observe(document.getElementById("chart")!, { subtree: true, attributes: true, attributeFilter: ["aria-current"] });
    });

    // The model's first answer waits until the test lets it go, so the page can be seen at call_model.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const model = scriptedModel([
      async () => {
        await gate;
        return { text: "Writing a note.", toolCalls: [{ name: "write_note", input: { note: "hi" } }] };
      },
      { text: "Note written." },
    ]);
    let run: InspectedRun | undefined;
    const prepared = prepare("write a note saying hi", {
      model,
      cwd,
      tools: [writeNote],
      // A waiting run: the permission request is answered on the page.
      permissions: { onAsk: (request) => run!.requestPermission(request) },
    });
    run = inspector.attach({ sessionId: prepared.input.sessionId, input: "write a note saying hi", runOptions: tracedOptionsOf(prepared) });
    const states: string[] = [];
    const actor = createActor(engineMachine, {
      input: prepared.input,
      inspect: observeEngine([engineObserverOf(run), { state: (entered) => void states.push(entered.state) }]),
    });
    const finished = new Promise<void>((resolve) => actor.subscribe({ complete: () => resolve() }));
    actor.start();
    try {
      await expect.poll(() => currentStates(browser), WAIT).toEqual(["call_model"]);
      const turns = page.getByRole("meter", { name: "turns" });
      expect(await turns.getAttribute("aria-valuetext")).toBe("1 / 8");
      release();

      const allow = page.getByRole("button", { name: "Allow", exact: true });
      await expect.poll(() => allow.isVisible(), WAIT).toBe(true);
      expect(await currentStates(browser)).toEqual(["ask_permission"]);
      expect(await page.getByRole("region", { name: "permission request" }).textContent()).toContain("write_note wants to run");
      expect(await page.locator("#output").textContent()).toBe("Writing a note.");
      expect(states[states.length - 1]).toBe("ask_permission"); // the run really waits
      const shot = await screenshot(page, "live-waiting-for-permission");
      // docs/inspector.png is this view, refreshed on request only so a test run leaves the tree as it was.
      if (process.env.UPDATE_DOCS_SCREENSHOT === "1") copyFileSync(shot, join(process.cwd(), "docs", "inspector.png"));
      await allow.click();
      await finished;
      run.end();

      await expect.poll(() => currentStates(browser), WAIT).toEqual(["done"]);
      // The timeline is the run's states, in order, each lit by the scrubber.
      await expect.poll(() => page.locator('#timeline [role="option"] .name').allTextContents(), WAIT).toEqual(states);
      const seen = await page.evaluate(() => (window as unknown as { seenStates: string[] }).seenStates);
      // Live, the page lit states in the run's order (states passed within one frame may be drawn together).
      let at = 0;
      for (const state of seen) {
        const found = states.indexOf(state, at);
        expect(found, `${state} lit out of order in ${seen.join(" → ")}`).toBeGreaterThanOrEqual(0);
        at = found + 1;
      }
      expect(seen).toEqual(expect.arrayContaining(["call_model", "ask_permission", "done"]));
      const scrubber = page.getByRole("slider", { name: "scrubber" });
      expect(await scrubber.getAttribute("max")).toBe(String(states.length - 1));
      for (let i = 0; i < states.length; i++) {
        await scrubber.fill(String(i));
        // Polled too: two neighbours of one name (a state entered again) light the same node before the selection moves.
        await expect.poll(() => page.getByTestId("selected").getAttribute("data-seq"), WAIT).toBe(String(i));
        await expect.poll(() => currentStates(browser), WAIT).toEqual([states[i]]);
      }

      // The tool call with its input, the permission given on the page, and its result; the text streamed.
      const call = page.locator('#calls li[data-call="write_note"]');
      expect(await call.textContent()).toContain('"note": "hi"');
      expect(await call.textContent()).toContain("wrote hi");
      expect(await call.textContent()).toContain("allow by human");
      expect(await page.locator("#output").textContent()).toBe("Writing a note.Note written.");
      expect(await page.getByRole("meter", { name: "turns" }).getAttribute("aria-valuetext")).toBe("2 / 8");
      expect(await page.getByRole("meter", { name: "tool calls" }).getAttribute("aria-valuetext")).toBe("1 / 12");
      const inspect = page.getByRole("region", { name: "selected transition" });
      expect(await inspect.locator('.messages li[data-role="tool"]').textContent()).toContain("wrote hi");
      await screenshot(page, "live-done");
    } finally {
      release();
      actor.stop();
    }
  });

  it("made no request outside 127.0.0.1 and raised no page error", () => {
    expect(foreignRequests(browser.requests)).toEqual([]);
    expect(browser.errors).toEqual([]);
  });
});
