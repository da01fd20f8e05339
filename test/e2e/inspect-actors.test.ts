import { createWebSocketInspector } from "@statelyai/inspect";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createActor, createMachine, waitFor } from "xstate";
import type { Inspector } from "../../src/inspect/server.js";
import { boss, spawner, unchartable } from "../inspect/fixtures/actor-kinds.js";
import { BROWSER_TEST_TIMEOUT, foreignRequests, screenshot, WAIT, type Browser, openInspectorPage, closeInspectorPage, describeWithBrowser } from "../inspect/support/browser.js";

let inspector: Inspector;
let browser: Browser;

beforeAll(async () => {
  ({ inspector, browser } = await openInspectorPage());
}, BROWSER_TEST_TIMEOUT);

afterAll(() => closeInspectorPage({ inspector, browser }));

const options = (b: Browser) => b.page.getByRole("combobox", { name: "session" }).locator("option");

describeWithBrowser("inspector: every actor is in the picker", () => {
  it("lists a stateless spawner with its promise, callback and observable children nested under it, and follows them", async () => {
    const { page } = browser;
    const actor = createActor(spawner, { inspect: inspector.inspect, systemId: "root" }).start();
    actor.send({ type: "SPAWN" });
    actor.send({ type: "PING" });
    await waitFor(actor, (s) => s.context.pongs === 1);

    // The root first (with its app and system id), each child right under it, one level deeper.
    await expect.poll(() => options(browser).allTextContents(), WAIT).toEqual([
      expect.stringMatching(/^this process · spawner #root · x:\d+ \(live\)$/),
      expect.stringMatching(/^↳ user #userFetcher · x:\d+$/), // the promise resolved: not live
      expect.stringMatching(/^↳ pinger · x:\d+ \(live\)$/),
      expect.stringMatching(/^↳ ticks · x:\d+$/),
    ]);
    expect(await options(browser).evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.depth))).toEqual(["0", "1", "1", "1"]);

    // The spawner has no states: no chart, a note instead, and its context changes are steps of the timeline.
    await expect.poll(() => page.locator("#chart [data-no-chart]").getAttribute("data-no-chart"), WAIT).toBe("spawner");
    const rows = page.locator('#timeline [role="option"]');
    await expect.poll(() => rows.count(), WAIT).toBeGreaterThanOrEqual(2);
    await rows.last().click();
    await expect.poll(() => page.getByRole("region", { name: "selected transition" }).textContent(), WAIT).toContain('"pongs": 1');
    await rows.first().click();
    await expect.poll(() => page.getByRole("region", { name: "selected transition" }).textContent(), WAIT).toContain('"pongs": 0');

    // The promise actor: its result is shown at its last step.
    const picker = page.getByRole("combobox", { name: "session" });
    const userKey = await options(browser).evaluateAll((els) => (els.find((e) => e.textContent!.includes("user")) as HTMLOptionElement).value);
    await picker.selectOption(userKey);
    await expect.poll(() => page.locator("#chart [data-no-chart]").getAttribute("data-no-chart"), WAIT).toBe("user");
    await expect.poll(() => page.locator('#timeline [role="option"] .name').allTextContents(), WAIT).toContain("done");
    await expect.poll(() => page.getByRole("region", { name: "selected transition" }).textContent(), WAIT).toContain('"name": "user 7"');
    await screenshot(page, "actors-tree");
    actor.stop();
  });

  it("draws no chart for a machine whose chart cannot be built, says why, and still follows it", async () => {
    const { page } = browser;
    const actor = createActor(unchartable, { inspect: inspector.inspect }).start();
    actor.send({ type: "GO" });
    expect(actor.getSnapshot().value).toBe("b");
    const picker = page.getByRole("combobox", { name: "session" });
    await expect.poll(() => options(browser).allTextContents(), WAIT).toContainEqual(expect.stringMatching(/^this process · unchartable · x:\d+ \(live\)$/));
    const key = await options(browser).evaluateAll((els) => (els.find((e) => e.textContent!.includes("unchartable")) as HTMLOptionElement).value);
    await picker.selectOption(key);
    await expect.poll(() => page.locator('#timeline [role="option"] .name').allTextContents(), WAIT).toEqual(["a", "b"]);
    await expect.poll(() => page.locator("#problems").textContent(), WAIT).toContain("statechart of actor unchartable");
    actor.stop();
  });

  it("shows an app's actors as ended once its WebSocket connection closes, under the name the app gives", async () => {
    const { page } = browser;
    const client = createWebSocketInspector({ url: `ws://127.0.0.1:${inspector.port}/?app=checkout` });
    const machine = createMachine({ id: "cart", initial: "empty", states: { empty: { on: { ADD: "full" } }, full: {} } });
    const actor = createActor(machine, { inspect: client.inspect }).start();
    actor.send({ type: "ADD" });
    const cart = () => options(browser).allTextContents().then((all) => all.filter((t) => t.includes("cart")));
    await expect.poll(cart, WAIT).toEqual([expect.stringMatching(/^checkout \(client \d+\) · cart · x:\d+ \(live\)$/)]);
    client.stop();
    await expect.poll(cart, WAIT).toEqual([expect.stringMatching(/^checkout \(client \d+\) · cart · x:\d+$/)]);
    actor.stop();
  });

  it("lists actors reported through @statelyai/inspect's manual API, with their snapshots and events", async () => {
    const { page } = browser;
    const client = createWebSocketInspector({ url: `ws://127.0.0.1:${inspector.port}/?app=manual` });
    client.actor("checkout", { status: "active", context: { step: 1 } });
    client.event("checkout", { type: "NEXT" }, { source: "user" });
    client.snapshot("checkout", { status: "active", context: { step: 2 } }, { event: { type: "NEXT" } });
    const manual = () => options(browser).allTextContents().then((all) => all.filter((t) => t.startsWith("manual")));
    await expect.poll(manual, WAIT).toEqual([expect.stringMatching(/^manual \(client \d+\) · checkout · checkout \(live\)$/)]);
    const key = await options(browser).evaluateAll((els) => (els.find((e) => e.textContent!.startsWith("manual")) as HTMLOptionElement).value);
    await page.getByRole("combobox", { name: "session" }).selectOption(key);
    const rows = page.locator('#timeline [role="option"]');
    await expect.poll(() => rows.count(), WAIT).toBe(2);
    await rows.first().click();
    await expect.poll(() => page.getByRole("region", { name: "selected transition" }).textContent(), WAIT).toContain('"step": 1');
    await rows.last().click();
    await expect.poll(() => page.getByRole("region", { name: "selected transition" }).textContent(), WAIT).toContain('"step": 2');
    client.stop();
  });

  it("shows the events between a parent and its two children in order; selecting one shows its payload and its target before and after", async () => {
    const { page } = browser;
    const actor = createActor(boss, { inspect: inspector.inspect }).start();
    // Children by id, taken while both live.
    const names = new Map<string, string>([[actor.sessionId, "boss"], ...Object.entries(actor.getSnapshot().children).map(([id, child]) => [(child as { sessionId: string }).sessionId, id] as [string, string])]);
    actor.send({ type: "PING_ALL" });
    actor.send({ type: "DISMISS" });
    await waitFor(actor, (s) => s.matches("lonely"));
    const key = `actor:${actor.sessionId}`;
    await page.getByRole("combobox", { name: "session" }).selectOption(key);
    const events = page.getByRole("listbox", { name: "events" }).getByRole("option");
    const seen = async () =>
      (await events.evaluateAll((els) => els.map((e) => [(e as HTMLElement).dataset.from, (e as HTMLElement).dataset.to, (e as HTMLElement).dataset.type])))
        .map(([from, to, type]) => `${names.get(from!) ?? from}>${names.get(to!) ?? to}:${type}`)
        .filter((t) => !t.includes("xstate.init"));
    // In XState's order: a child handles an event as it is sent, so alice's PONG comes before bob is pinged.
    await expect.poll(seen, WAIT).toEqual([
      "(outside)>boss:PING_ALL",
      "boss>alice:PING",
      "alice>boss:PONG",
      "boss>bob:PING",
      "bob>boss:PONG",
      "(outside)>boss:DISMISS",
      "boss>alice:BYE",
      "alice>boss:xstate.done.actor.alice",
    ]);
    // The lifelines: outside, the parent, then its children.
    expect(await page.locator("#sequence [data-lifeline]").allTextContents()).toEqual(["outside", "boss", "alice", "bob"]);
    // bob's PONG: boss before has 1 pong, after 2.
    const pongs = page.locator('#sequence li[data-type="PONG"]');
    await pongs.nth(1).click();
    const detail = page.getByRole("region", { name: "selected event" });
    await expect.poll(() => detail.locator(".before").textContent(), WAIT).toContain('"pongs": 1');
    expect(await detail.locator(".after").textContent()).toContain('"pongs": 2');
    expect(await detail.textContent()).toContain('"type": "PONG"');
    await screenshot(page, "sequence");
    actor.stop();
  });

  it("made no request outside 127.0.0.1 and raised no page error", () => {
    expect(foreignRequests(browser.requests)).toEqual([]);
    expect(browser.errors).toEqual([]);
  });
});
